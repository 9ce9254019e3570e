"""Output formats (concise, github, sarif, json), --statistics, and the rules/rule subcommands."""

from __future__ import annotations

import json
import os
import pathlib

import jsonschema
import pytest
from click.testing import CliRunner

from attn_lint.linter.app.cli import main
from attn_lint.rules import ALL_RULES, RULES_BY_CODE

SCHEMA = pathlib.Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

from small_trees import TREES  # noqa: E402  (tests/ is on sys.path under pytest)


@pytest.fixture()
def tree(tmp_path):
    """AL001 and AL002 examples side by side, in one tree."""
    for code, pkg in (("AL001", "one"), ("AL002", "two")):
        for rel, src in TREES[code].items():
            rel = rel.replace("serving", pkg)
            src = src.replace("serving.", f"{pkg}.")
            p = tmp_path / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(src)
            (p.parent / "__init__.py").touch()
    return tmp_path


def run(cwd, *args):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        if args[0] not in ("rules", "rule"):
            args = ("--no-cache", *args)
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def test_concise_one_line_per_finding(tree):
    r = run(tree, "--format", "concise", ".")
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("one/backends.py:13:1: AL001 [error] [medium] `HybridBackend` hides method `plan_chunks`")
    assert lines[1].startswith("two/backends.py:") and " AL002 [error] " in lines[1]


def test_github_workflow_commands(tree):
    r = run(tree, "--format", "github", ".")
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("::error file=one/backends.py,line=13,col=1,title=AL001 unforwarded-hook::")
    assert "%0A" in lines[0] and "\r" not in lines[0]  # evidence on escaped new lines
    assert lines[1].startswith("::error file=two/backends.py,line=")


def test_github_escaping():
    from attn_lint.linter.report.github import _data, _prop
    assert _data("a%b\nc") == "a%25b%0Ac"
    assert _prop("x,y:z") == "x%2Cy%3Az"


def test_sarif_is_valid_2_1_0(tree):
    r = run(tree, "--format", "sarif", ".")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft4Validator(schema).validate(doc)
    assert doc["version"] == "2.1.0"
    run0 = doc["runs"][0]
    rules = run0["tool"]["driver"]["rules"]
    assert [d["id"] for d in rules] == [r.code for r in ALL_RULES if not r.opt_in]  # AL900: where reported
    assert rules[0]["help"]["markdown"] == RULES_BY_CODE["AL001"].doc
    assert rules[0]["shortDescription"]["text"] == RULES_BY_CODE["AL001"].summary
    results = run0["results"]
    assert [x["ruleId"] for x in results] == ["AL001", "AL002"]
    first = results[0]
    assert first["level"] == "error"
    assert first["ruleIndex"] == 0
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "one/backends.py"
    assert loc["region"] == {"startLine": 13, "startColumn": 1}
    related = first["relatedLocations"]
    assert any(x["physicalLocation"]["artifactLocation"]["uri"] == "one/model.py" for x in related)
    assert all(x["message"]["text"] for x in related)
    # The finding's identity, as the JSON report and the baseline carry it.
    assert first["partialFingerprints"]["attnLintIdentity/v1"] == json.loads(
        run(tree, "--format", "json", ".").stdout)["findings"][0]["identity"]
    assert run0["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file://")


def test_sarif_with_no_findings_and_with_file_errors_is_valid(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "bad.py").write_text("def (:\n")
    r = run(tmp_path, "--format", "sarif", ".")
    assert r.exit_code == 1  # the bad file fails the run
    doc = json.loads(r.stdout)
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(doc)
    assert doc["runs"][0]["results"] == []
    notes = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == 1 and "syntax-error" in notes[0]["message"]["text"]


def test_sarif_info_severity_is_note(tree):
    (tree / "pyproject.toml").write_text('[tool.attn-lint]\nseverity = {AL002 = "info"}\n')
    doc = json.loads(run(tree, "--format", "sarif", ".").stdout)
    assert [x["level"] for x in doc["runs"][0]["results"]] == ["error", "note"]


def test_json_still_one_document(tree):
    r = run(tree, "--format", "json", ".")
    doc = json.loads(r.stdout)
    assert {f["code"] for f in doc["findings"]} == {"AL001", "AL002"}


def test_statistics(tree):
    r = run(tree, "--statistics", ".")
    assert r.exit_code == 1
    assert r.stdout.splitlines() == ["1  AL001  unforwarded-hook  [error]  medium 1",
                                     "1  AL002  delegation-signature-mismatch  [error]  medium 1",
                                     "Found 2 findings.",
                                     "Analysed 5 files: 2 class families, 2 wrappers, 2 probe sites of 1 hook."]
    r = run(tree, "--statistics", "--format", "json", ".")
    assert json.loads(r.stdout) == [
        {"code": "AL001", "name": "unforwarded-hook", "count": 1, "severity": "error",
         "confidence": {"high": 0, "medium": 1}},
        {"code": "AL002", "name": "delegation-signature-mismatch", "count": 1, "severity": "error",
         "confidence": {"high": 0, "medium": 1}}]


@pytest.mark.parametrize("drop, why", [
    ("full_attn_backend.forward", "No wrapper (a family member that holds others of its family and forwards"),
    ('hasattr(backend, "plan_chunks")', "No hook is probed"),
])
def test_statistics_say_why_a_tree_gives_no_findings(tmp_path, drop, why):
    files = dict(TREES["AL001"])
    if drop.startswith("hasattr"):
        files["serving/model.py"] = files["serving/model.py"].replace(drop, "True")
    else:  # the wrapper neither calls nor probes through what it holds: it is no wrapper
        files["serving/backends.py"] = files["serving/backends.py"].replace(
            "return self.full_attn_backend.forward(batch)", "return batch")
    for rel, src in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(src)
    r = run(tmp_path, "--statistics", ".")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "No findings." and lines[1].startswith("Analysed 2 files: 1 class family, ")
    assert why in lines[1], lines[1]


def test_text_format_unchanged(tree):
    r = run(tree, "one")
    assert r.exit_code == 1
    assert "AL001 [error]" in r.stdout and "evidence:" in r.stdout and "Found 1 finding" in r.stdout


def test_rules_subcommand(tmp_path):
    r = run(tmp_path, "rules")
    assert r.exit_code == 0
    for rule in ALL_RULES:
        assert f"{rule.code}  {rule.name}" in r.stdout and rule.summary in r.stdout
    r = run(tmp_path, "rules", "--format", "json")
    assert [x["code"] for x in json.loads(r.stdout)][:3] == ["AL001", "AL002", "AL003"]


def test_rule_subcommand(tmp_path):
    r = run(tmp_path, "rule", "AL002")
    assert r.exit_code == 0
    assert r.stdout.startswith("# AL002 delegation-signature-mismatch (error)")
    assert "## How to fix" in r.stdout
    assert run(tmp_path, "rule", "unforwarded-hook").exit_code == 0
    r = run(tmp_path, "rule", "AL999")
    assert r.exit_code == 2 and "unknown rule" in r.stderr


def test_subcommand_names_versus_paths(tmp_path):
    """A folder called `rules` is still lintable; `attn-lint rules` alone lists the rules."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "a.py").write_text("x = 1\n")
    r = run(tmp_path, "rules")
    assert r.exit_code == 0 and "AL001" in r.stdout
    r = run(tmp_path, "--format", "json", "rules/")
    assert r.exit_code == 0 and json.loads(r.stdout)["stats"]["files"] == 1
    r = run(tmp_path, "check", "--format", "json", "rules")
    assert json.loads(r.stdout)["stats"]["files"] == 1
    r = run(tmp_path, "--version")
    assert r.exit_code == 0 and "attn-lint" in r.stdout


def test_sarif_describes_unused_suppressions(tree):
    (tree / "one" / "model.py").write_text((tree / "one" / "model.py").read_text() + "X = 1  # noqa: AL003\n")
    r = run(tree, "--format", "sarif", "--report-unused-suppressions", ".")
    doc = json.loads(r.stdout)
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(doc)
    run0 = doc["runs"][0]
    ids = [d["id"] for d in run0["tool"]["driver"]["rules"]]
    assert "AL900" in ids
    unused = [x for x in run0["results"] if x["ruleId"] == "AL900"]
    assert len(unused) == 1 and unused[0]["ruleIndex"] == ids.index("AL900")
    assert unused[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "one/model.py"
