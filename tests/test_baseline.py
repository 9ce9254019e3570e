"""Baselines: --write-baseline records findings, --baseline reports only new ones; identities survive
line shifts, module moves and implementations joining a finding; version 1 baselines still load."""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter

from click.testing import CliRunner
from small_trees import TREES

from attn_lint.linter.app.baseline import Known, filter_new, fingerprint
from attn_lint.linter.app.cli import main
from attn_lint.linter.findings import Finding
from attn_lint.linter.model.identity import identity, identity_of


def make_tree(root):
    for rel, src in TREES["AL001"].items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src)
        (p.parent / "__init__.py").touch()


def run(cwd, *args):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["--no-cache", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


def test_write_then_use(tmp_path):
    make_tree(tmp_path)
    r = run(tmp_path, "--write-baseline", "baseline.json", ".")
    assert r.exit_code == 0 and "wrote 1 finding" in r.stderr
    doc = json.loads((tmp_path / "baseline.json").read_text())
    assert doc["version"] == 2
    (entry,) = doc["findings"]
    assert len(entry["identity"]) == 32
    assert entry["code"] == "AL001" and entry["path"] == "serving/backends.py" and entry["count"] == 1
    assert entry["class"] == "serving.backends.HybridBackend" and entry["member"] == "plan_chunks"

    r = run(tmp_path, "--baseline", "baseline.json", "--format", "json", ".")
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert out["findings"] == [] and out["stats"]["baselined"] == 1


def test_fingerprints_survive_line_moves(tmp_path):
    make_tree(tmp_path)
    assert run(tmp_path, "--write-baseline", "b.json", ".").exit_code == 0
    backends = tmp_path / "serving" / "backends.py"
    backends.write_text('"""Moved down by a docstring."""\n\nimport os\n\n\n' + backends.read_text())
    r = run(tmp_path, "--baseline", "b.json", "--format", "json", ".")
    assert r.exit_code == 0, r.stdout
    # analysing from another folder (other display paths) keeps the fingerprints: paths are taken
    # relative to the project root (here the git root)
    (tmp_path / ".git").mkdir()
    r = run(tmp_path / "serving", "--baseline", str(tmp_path / "b.json"), "--format", "json", str(tmp_path))
    assert r.exit_code == 0, r.stdout


def test_new_findings_are_reported(tmp_path):
    make_tree(tmp_path)
    assert run(tmp_path, "--write-baseline", "b.json", ".").exit_code == 0
    backends = tmp_path / "serving" / "backends.py"
    backends.write_text(backends.read_text() + '''

class OtherHybrid(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)
''')
    r = run(tmp_path, "--baseline", "b.json", "--format", "json", ".")
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert [f["class"] for f in out["findings"]] == ["serving.backends.OtherHybrid"]
    assert out["stats"]["baselined"] == 1


def test_bad_baseline_is_a_one_line_error(tmp_path):
    make_tree(tmp_path)
    (tmp_path / "b.json").write_text("{not json")
    r = run(tmp_path, "--baseline", "b.json", ".")
    assert r.exit_code == 2 and "not JSON" in r.stderr and "Traceback" not in r.output
    (tmp_path / "b.json").write_text('{"version": 99, "findings": []}')
    r = run(tmp_path, "--baseline", "b.json", ".")
    assert r.exit_code == 2 and "has version 99, which this attn-lint cannot read" in r.stderr
    assert "--write-baseline" in r.stderr
    (tmp_path / "b.json").write_text('[]')
    r = run(tmp_path, "--baseline", "b.json", ".")
    assert r.exit_code == 2 and "not an attn-lint baseline" in r.stderr
    r = run(tmp_path, "--baseline", "missing.json", ".")
    assert r.exit_code == 2 and "cannot read baseline" in r.stderr


def _finding(**kw) -> Finding:
    base = {"code": "AL002", "name": "n", "severity": "error", "path": "a.py", "line": 10, "column": 5,
            "message": "m", "class_name": "pkg.a.W", "member": "plan", "targets": ("pkg.b.T",)}
    base.update(kw)
    return Finding(**base)


def test_fingerprint_ignores_position_and_text():
    f = _finding()
    assert fingerprint(f) == fingerprint(dataclasses.replace(f, line=99, column=1, message="other"))
    for change in ({"code": "AL001"}, {"class_name": "pkg.a.X"}, {"member": "other"}, {"path": "b.py"},
                   {"targets": ("pkg.b.U",)}):
        assert fingerprint(f) != fingerprint(dataclasses.replace(f, **change)), change
    assert fingerprint(_finding(targets=("x", "y"))) == fingerprint(_finding(targets=("y", "x")))


def test_counts_cover_duplicates():
    f1, f2, f3 = _finding(line=1), _finding(line=2), _finding(line=3)
    known = Known(identities=Counter({identity(f1): 2}))
    new, covered = filter_new([f1, f2, f3], known, {}, None)
    assert covered == 2 and new == [f3]


def _two_projects(root):
    """Two projects with the same package names, as fixtures/ has: the index labels their classes."""
    import shutil

    from conftest import FIXTURES
    for name in ("al001_hidden_hook", "al003_noop_default"):
        shutil.copytree(FIXTURES / name, root / "fixtures" / name)
    return root / "fixtures"


def test_baseline_written_over_several_projects_covers_one_linted_alone(tmp_path):
    """Issue 12: written from fixtures/, then linting one fixture from inside it, reported again."""
    (tmp_path / ".git").mkdir()  # the project root: the git root
    fixtures = _two_projects(tmp_path)
    assert run(fixtures, ".", "--write-baseline", str(tmp_path / "bl.json")).exit_code == 0
    r = run(fixtures / "al001_hidden_hook", ".", "--baseline", str(tmp_path / "bl.json"))
    assert r.exit_code == 0, r.output


def test_without_a_project_root_the_baseline_file_anchors_paths(tmp_path):
    fixtures = _two_projects(tmp_path)  # no git root, no pyproject: the root would be the cwd
    assert run(fixtures, ".", "--write-baseline", "../bl.json").exit_code == 0
    r = run(fixtures / "al001_hidden_hook", ".", "--baseline", "../../bl.json")
    assert r.exit_code == 0, r.output


def test_identity_is_what_the_finding_is_about():
    base = identity_of("AL001", "Hybrid", "plan", {"Backend"})
    assert base == identity_of("AL001", "Hybrid", "plan", ["Backend", "Backend"])
    for other in (identity_of("AL003", "Hybrid", "plan", {"Backend"}), identity_of("AL001", "Split", "plan", {"Backend"}),
                  identity_of("AL001", "Hybrid", "run", {"Backend"}), identity_of("AL001", "Hybrid", "plan", {"Pool"})):
        assert other != base
    # The engine's identity is in the details; neither the file, the line nor the targets are in it.
    f = _finding(details=(("identity", base),))
    assert identity(dataclasses.replace(f, path="moved/elsewhere.py", line=1, targets=("x", "y", "z"))) == base


def _findings(tmp_path, *args):
    r = run(tmp_path, "--format", "json", "--show-latent", *args, ".")
    return r, json.loads(r.stdout)


def test_identity_survives_a_module_move_and_a_joining_implementation(tmp_path):
    make_tree(tmp_path)
    (tmp_path / ".git").mkdir()
    _, before = _findings(tmp_path)
    assert run(tmp_path, "--write-baseline", "b.json", ".").exit_code == 0
    # The module moves to another package, and one more implementation of the hook joins.
    old = tmp_path / "serving" / "backends.py"
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "__init__.py").touch()
    text = old.read_text()
    old.unlink()
    (tmp_path / "engine" / "attention.py").write_text(text + """

class CuteBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch
""")
    (tmp_path / "serving" / "model.py").write_text(
        (tmp_path / "serving" / "model.py").read_text().replace("serving.backends", "engine.attention"))
    r, after = _findings(tmp_path)
    assert [f["identity"] for f in after["findings"]] == [f["identity"] for f in before["findings"]]
    assert after["findings"][0]["path"] != before["findings"][0]["path"]
    assert len(after["findings"][0]["targets"]) == len(before["findings"][0]["targets"]) + 1
    r = run(tmp_path, "--baseline", "b.json", "--format", "json", ".")
    assert r.exit_code == 0 and json.loads(r.stdout)["stats"]["baselined"] == 1


def test_a_version_1_baseline_still_covers_its_findings_with_a_note(tmp_path):
    make_tree(tmp_path)
    (tmp_path / ".git").mkdir()
    _, out = _findings(tmp_path)
    (f,) = out["findings"]
    legacy = fingerprint(Finding(f["code"], f["name"], f["severity"], f["path"], f["line"], f["column"], f["message"],
                                 f["class"], f["member"], tuple(f["targets"])))
    (tmp_path / "b.json").write_text(json.dumps({"version": 1, "tool": "attn-lint", "findings": [
        {"fingerprint": legacy, "code": f["code"], "path": f["path"], "count": 1}]}))
    r = run(tmp_path, "--baseline", "b.json", "--format", "json", ".")
    assert r.exit_code == 0 and json.loads(r.stdout)["stats"]["baselined"] == 1
    assert "is version 1" in r.stderr and "--write-baseline" in r.stderr
    (tmp_path / "b.json").write_text(json.dumps({"version": 1, "findings": [{"fingerprint": "0" * 32}]}))
    r = run(tmp_path, "--baseline", "b.json", "--format", "json", ".")
    assert r.exit_code == 1


def test_a_finding_dismissed_by_identity_stays_dismissed_when_it_moves(tmp_path):
    make_tree(tmp_path)
    (tmp_path / ".git").mkdir()
    _, out = _findings(tmp_path)
    (f,) = out["findings"]
    r = run(tmp_path, "--verbose", ".")
    assert f"identity: {f['identity']}" in r.stdout
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.attn-lint.dismissed]\n"{f["identity"]}" = "reviewed: no model builds this pairing"\n')
    r, out = _findings(tmp_path)
    assert r.exit_code == 0 and out["findings"] == [] and out["stats"]["dismissed"] == 1
    # The module moves and its lines shift: still the same finding, still dismissed.
    (tmp_path / "serving" / "backends.py").write_text("\n\n" + (tmp_path / "serving" / "backends.py").read_text())
    os.rename(tmp_path / "serving" / "backends.py", tmp_path / "serving" / "attention.py")
    (tmp_path / "serving" / "model.py").write_text(
        (tmp_path / "serving" / "model.py").read_text().replace("serving.backends", "serving.attention"))
    r, out = _findings(tmp_path)
    assert r.exit_code == 0 and out["findings"] == [] and out["stats"]["dismissed"] == 1
    assert "1 dismissed in the configuration" in run(tmp_path, ".").stderr


def test_dismissed_entries_are_checked(tmp_path):
    make_tree(tmp_path)
    for table, message in (('"AL001" = "x"', "is not a finding's identity"),
                           (f'"{"a" * 32}" = ""', "must say why it is dismissed")):
        (tmp_path / "pyproject.toml").write_text(f"[tool.attn-lint.dismissed]\n{table}\n")
        r = run(tmp_path, ".")
        assert r.exit_code == 2 and message in r.stderr, r.stderr
