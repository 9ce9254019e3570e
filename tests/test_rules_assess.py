"""Every finding a rule reports has been through its signals (`Rule.assessed`): a rule that yields a
finding straight away would report it `medium` whatever its pairings (issue 39: "a rule that
forgets `self.assessed(...)` silently makes every finding medium"). Checked on each rule's own
INVALID examples and on the fixtures, by the identity of the objects `assessed` returned."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.rules import TREE_RULES
from attn_lint.rules.base import Rule


@pytest.fixture
def watched(monkeypatch):
    returned: set[int] = set()
    kept = []  # the findings stay alive, so their ids are never reused meanwhile
    real = Rule.assessed

    def assessed(self, ctx, finding, pairings):
        out = real(self, ctx, finding, pairings)
        returned.add(id(out))
        kept.append(out)
        return out

    monkeypatch.setattr(Rule, "assessed", assessed)
    seen: list = []

    def watching(rule):
        real_check = type(rule).check

        def check(ctx):
            for f in real_check(rule, ctx):
                seen.append((rule.code, f))
                yield f
        return check

    for rule in TREE_RULES:
        monkeypatch.setattr(rule, "check", watching(rule))
    return returned, seen


def _unassessed(returned, seen):
    return [(code, f.class_name, f.member) for code, f in seen if id(f) not in returned]


def test_every_invalid_example_finding_is_assessed(watched, tmp_path):
    returned, seen = watched
    for i, rule in enumerate(TREE_RULES):
        for j, example in enumerate(rule.INVALID):
            analyse([str(write_tree(tmp_path / f"{i}-{j}", example.files))], Settings(cache_dir=None, jobs=1))
    assert seen, "the rules reported nothing: the check would pass vacuously"
    assert _unassessed(returned, seen) == []


def test_every_fixture_finding_is_assessed(watched):
    returned, seen = watched
    analyse([str(FIXTURES)], Settings(cache_dir=None, jobs=1))
    assert {code for code, _ in seen} == {r.code for r in TREE_RULES}
    assert _unassessed(returned, seen) == []


def test_a_finding_yielded_without_assessment_is_caught(watched, monkeypatch, tmp_path):
    """The check itself: a rule that skips `assessed` is seen."""
    returned, seen = watched
    rule = TREE_RULES[0]
    real = Rule.assessed
    monkeypatch.setattr(Rule, "assessed", lambda self, ctx, finding, pairings: finding)
    analyse([str(write_tree(tmp_path, rule.INVALID[0].files))], Settings(cache_dir=None, jobs=1))
    monkeypatch.setattr(Rule, "assessed", real)
    assert _unassessed(returned, seen)
