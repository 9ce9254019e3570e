"""A finding's facts are typed records (issue 39: "rule facts travel as strings"): its rule's own
(`Rule.facts`) and then the run's (`RunFacts`). Nothing else is on the wire, and each record reads
back exactly what was written: a rule cannot pass on a fact its record does not declare, and no
reader asks for one by key."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from conftest import FIXTURES, write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.linter.findings import Facts, Finding, RunFacts
from attn_lint.rules import RULES_BY_CODE, TREE_RULES


def _round_trip(f: Finding) -> tuple:
    """The details the finding's two records write back from what they read of it."""
    return RULES_BY_CODE[f.code].facts.of(f).pairs() + RunFacts.of(f).pairs()


def _findings(tmp_path) -> list[Finding]:
    out = list(analyse([str(FIXTURES)], Settings(cache_dir=None, jobs=1)).findings)
    for i, rule in enumerate(TREE_RULES):
        for j, example in enumerate(rule.INVALID):
            out += analyse([str(write_tree(tmp_path / f"{i}-{j}", example.files))],
                           Settings(cache_dir=None, jobs=1)).findings
    return out


def test_every_finding_carries_only_its_records(tmp_path):
    findings = _findings(tmp_path)
    assert {f.code for f in findings} == {r.code for r in TREE_RULES}
    assert all(f.details for f in findings)
    assert [(f.code, f.class_name, f.member, f.details) for f in findings if _round_trip(f) != f.details] == []


def test_every_rule_declares_its_record():
    for rule in TREE_RULES:
        assert issubclass(rule.facts, Facts) and rule.facts.__dataclass_params__.frozen, rule.code
        assert rule.facts.__dataclass_fields__, f"{rule.code} passes facts on without declaring them"


def test_an_undeclared_fact_is_caught():
    """A finding carrying a pair its rule's record does not declare fails the round trip; a rule
    handing `finding()` another rule's record is refused at once."""
    rule = RULES_BY_CODE["AL001"]
    f = rule.finding(path="p.py", line=1, column=1, message="m", class_name="W", member="h",
                     facts=rule.facts(probe="p.py:3", owners=("a.A", "b.B")))
    assert _round_trip(f) == f.details == (("probe", "p.py:3"), ("owners", "a.A,b.B"))
    stray = f.with_facts(RunFacts(identity="x"))
    assert _round_trip(stray) == stray.details
    odd = Finding(*[getattr(f, n) for n in ("code", "name", "severity", "path", "line", "column", "message",
                                            "class_name", "member")], details=(*f.details, ("note", "x")))
    assert _round_trip(odd) != odd.details
    with pytest.raises(TypeError):
        rule.finding(path="p.py", line=1, column=1, message="m", class_name="W", member="h",
                     facts=RULES_BY_CODE["AL003"].facts(base="B"))


def test_the_wire_forms():
    @dataclass(frozen=True)
    class Sample(Facts):
        text: str | None = None
        names: tuple[str, ...] | None = None
        flag: bool = False

    given = Sample(text="", names=("a", "b"), flag=True)
    assert given.pairs() == (("text", ""), ("names", "a,b"), ("flag", "yes"))
    f = Finding("AL001", "n", "error", "p", 1, 1, "m", "C", "h", details=given.pairs())
    assert Sample.of(f) == given
    assert Sample().pairs() == () and Sample.of(Finding("AL001", "n", "error", "p", 1, 1, "m", "C", "h")) == Sample()

    @dataclass(frozen=True)
    class Odd(Facts):
        count: int = 0

    with pytest.raises(TypeError):
        Odd().pairs()


def test_every_runtime_check_has_its_replay():
    """`--verify` finds a rule's replay by the rule's class (runtime_check/scenarios.py `@replays`),
    never by a function's name; a rule that says it is checked has one, and only such rules do."""
    from attn_lint.runtime_check import scenarios

    checked = {type(r) for r in TREE_RULES if r.runtime_check is not None}
    assert checked and set(scenarios.REPLAYS) == checked
    with pytest.raises(ValueError):
        scenarios.replays(next(iter(checked)))(lambda f, ctx, loader: None)
