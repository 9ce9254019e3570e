"""Each rule's own examples: VALID ones give no finding of that rule, INVALID ones exactly the expected ones."""

from __future__ import annotations

import re

import pytest
from conftest import lint, pairs, write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.rules import ALL_RULES, RULES_BY_CODE, SUPPRESSION_RULES, TREE_RULES, Example, Reach


def _cases(kind: str, rules=TREE_RULES):
    for rule in rules:
        for i, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.code}-{kind.lower()}-{i}")


def _as_package(files: dict[str, str]) -> dict[str, str]:
    """The same tree with an `__init__.py` in every folder that lacks one."""
    out = dict(files)
    for rel in files:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            out.setdefault("/".join(parts[:i]) + "/__init__.py", "")
    return out




@pytest.mark.parametrize("rule, example", list(_cases("VALID")))
@pytest.mark.parametrize("layout", ["as-written", "as-package"])
def test_valid_example_has_no_finding(rule, example: Example, layout, tmp_path):
    assert example.expect == ()
    files = example.files if layout == "as-written" else _as_package(example.files)
    result = lint(write_tree(tmp_path, files))
    assert result.errors == []
    assert [f for f in result.findings if f.code == rule.code] == []


def reached(rule, files: dict[str, str], reach: Reach, root) -> list[str]:
    """What the example fails to put in front of `rule` (empty: it reaches its case): the class,
    its being a wrapper, a site of the member the rule reads that can be the class."""
    ctx = analyse([str(write_tree(root, files))], Settings(cache_dir=None, jobs=1), keep_context=True).context
    quals = [q for q in ctx.index.classes if q.rsplit(".", 1)[-1] == reach.cls]
    if len(quals) != 1:
        return [f"class {reach.cls}: {len(quals)} in the tree"]
    (qual,) = quals
    missing = []
    if reach.wrapper and qual not in ctx.model.wrappers:
        missing.append(f"{reach.cls} is not a wrapper the model sees")
    if not rule.reaches(ctx, qual, reach.member):
        missing.append(f"no site of `{reach.member}` that {rule.code} reads can be {reach.cls}")
    return missing


@pytest.mark.parametrize("rule, example", list(_cases("VALID")))
def test_valid_example_still_reaches_its_case(rule, example: Example, tmp_path):
    """A VALID example must pass because the rule decides the case is fine, not because the
    rule never sees it (a wrapper no longer recognised, a site no longer resolved)."""
    assert example.reaches is not None, "a VALID example says what its rule must still look at"
    assert reached(rule, example.files, example.reaches, tmp_path) == []


@pytest.mark.parametrize("rule, example", list(_cases("INVALID")))
def test_what_an_invalid_example_reports_is_reached(rule, example: Example, tmp_path):
    """The same check says yes where the rule reports: it measures what the rule looks at."""
    for cls, member in example.expect:
        reach = Reach(cls, member, wrapper=rule.subject_is_wrapper)
        assert reached(rule, example.files, reach, tmp_path / f"{cls}.{member}") == []


@pytest.mark.parametrize("rule, example", list(_cases("VALID")))
def test_the_reach_check_says_no_without_the_site(rule, example: Example, tmp_path):
    """Every method of the member renamed away: no site of it is left, and the check must fail."""
    member = example.reaches.member
    files = {path: text.replace(member, member + "_gone") for path, text in example.files.items()}
    assert reached(rule, files, example.reaches, tmp_path) != []


@pytest.mark.parametrize("rule, example", list(_cases("INVALID")))
def test_invalid_example_as_package(rule, example: Example, tmp_path):
    """The example with an __init__.py in each folder (how real code bases look)."""
    result = lint(write_tree(tmp_path, _as_package(example.files)))
    assert result.errors == []
    assert pairs(result.findings, rule.code) == sorted(example.expect)


@pytest.mark.parametrize("rule, example", list(_cases("INVALID")))
def test_invalid_example_has_exactly_the_expected_findings(rule, example: Example, tmp_path):
    assert example.expect, "an INVALID example must say what it expects"
    result = lint(write_tree(tmp_path, example.files))
    assert result.errors == []
    got = pairs(result.findings, rule.code)
    assert got == sorted(example.expect)
    for f in result.findings:
        assert (f.code, f.name, f.severity) == (rule.code, rule.name, rule.severity) or f.code != rule.code
        assert f.path in example.files, f"paths are relative to the folder given: {f.path}"
        assert f.line >= 1 and f.column >= 1
        assert f.evidence, "every finding carries its evidence"


@pytest.mark.parametrize("rule, example", list(_cases("INVALID")))
def test_invalid_example_with_only_its_rule_selected(rule, example: Example, tmp_path):
    result = lint(write_tree(tmp_path, _as_package(example.files)), select=(rule.code,))
    assert {f.code for f in result.findings} == {rule.code}
    assert list(result.stats["by_rule"]) == [rule.code]


@pytest.mark.parametrize("rule, example", list(_cases("INVALID")))
def test_ignoring_the_rule_silences_its_example(rule, example: Example, tmp_path):
    result = lint(write_tree(tmp_path, _as_package(example.files)), ignore=(rule.code,))
    assert [f for f in result.findings if f.code == rule.code] == []


def _report(root, *args) -> list[dict]:
    """The findings of `attn-lint --format json ARGS root` (no cache, no server): the command
    line's report, where the suppression rules run (after the tree rules' findings met the
    comments)."""
    import json

    from click.testing import CliRunner

    from attn_lint.linter.app.cli import main
    r = CliRunner().invoke(main, ["--format", "json", "--no-cache", "--no-server", *args, str(root)])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)["findings"]


@pytest.mark.parametrize("rule, example", list(_cases("INVALID", SUPPRESSION_RULES)))
def test_suppression_rule_invalid_example(rule, example: Example, tmp_path):
    """A suppression rule reports its INVALID example when it is selected, as its examples say,
    and nothing when it is not asked for (it is opt-in)."""
    root = write_tree(tmp_path, _as_package(example.files))
    got = [f for f in _report(root, "--select", rule.code) if f["code"] == rule.code]
    assert sorted((f["class"].rsplit(".", 1)[-1], f["member"]) for f in got) == sorted(example.expect)
    assert all(f["evidence"] and f["line"] >= 1 and f["column"] >= 1 for f in got)
    assert not [f for f in _report(root) if f["code"] == rule.code]


@pytest.mark.parametrize("rule, example", list(_cases("VALID", SUPPRESSION_RULES)))
def test_suppression_rule_valid_example(rule, example: Example, tmp_path):
    """A VALID example holds a suppression that silences a tree rule's finding: the suppression
    rule has nothing to say, and without the comment that finding is reported (the example
    passes for the right reason)."""
    root = write_tree(tmp_path / "with", _as_package(example.files))
    assert [f for f in _report(root, "--select", rule.code) if f["code"] == rule.code] == []
    bare = {p: "\n".join(line.split("  # ", 1)[0] for line in text.split("\n")) for p, text in example.files.items()}
    assert bare != example.files
    assert [f for f in _report(write_tree(tmp_path / "without", _as_package(bare))) if f["code"] != rule.code]


def test_rule_registry():
    codes = [r.code for r in ALL_RULES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert set(RULES_BY_CODE) == set(codes)
    names = [r.name for r in ALL_RULES]
    assert len(set(names)) == len(names)
    assert {"AL001", "AL002", "AL003", "AL900"} <= set(codes)
    assert [r.code for r in TREE_RULES] + [r.code for r in SUPPRESSION_RULES] == codes
    assert RULES_BY_CODE["AL900"].opt_in and RULES_BY_CODE["AL900"].phase == "suppressions"
    assert RULES_BY_CODE["AL001"].name == "unforwarded-hook"
    assert RULES_BY_CODE["AL002"].name == "delegation-signature-mismatch"
    assert RULES_BY_CODE["AL003"].name == "wrapper-inherits-noop-default"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rule_metadata_and_doc(rule):
    assert re.fullmatch(r"AL\d{3}", rule.code)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.name)
    assert rule.severity in ("error", "warning", "info")
    assert rule.summary and "\n" not in rule.summary
    for section in ("## What it finds", "## Why it is bad", "## Example", "## How to fix"):
        assert section in rule.doc, f"{rule.code} doc lacks {section!r}"
    assert rule.VALID and rule.INVALID, "every rule ships valid and invalid examples"
    if rule.phase == "tree":
        assert all(e.reaches is not None for e in rule.VALID)
