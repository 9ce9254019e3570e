"""The conventions a ruff or mypy user reaches for: -V, --quiet, --exit-zero, --color, --output-file.

Before: `-V` was an unknown option, `FORCE_COLOR` was ignored, and the report could only go to
standard output; there was no quiet mode and no way to keep the exit status 0 with findings.
"""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import FIXTURES

from attn_lint import __version__

AL001 = FIXTURES / "al001_hidden_hook"
ESC = "\x1b["


def attn_lint(*args, env=None, cwd=None):
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "attn_lint", "--no-cache", "--no-server", *map(str, args)],
                          capture_output=True, text=True, env=full, cwd=cwd, timeout=120)


def test_dash_capital_v_prints_the_version():
    out = subprocess.run([sys.executable, "-m", "attn_lint", "-V"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and __version__ in out.stdout


def test_quiet_prints_the_findings_and_nothing_else():
    plain = attn_lint(AL001)
    quiet = attn_lint("--quiet", AL001)
    assert plain.returncode == quiet.returncode == 1
    assert "Found 1 finding" in plain.stdout
    assert "AL001" in quiet.stdout and "Found 1 finding" not in quiet.stdout and quiet.stderr == ""
    clean = attn_lint("--quiet", FIXTURES / "fixed")
    assert clean.returncode == 0 and clean.stdout == "" and clean.stderr == ""


def test_exit_zero_keeps_the_status_0_with_findings():
    out = attn_lint("--exit-zero", AL001)
    assert out.returncode == 0 and "AL001" in out.stdout


def test_color_always_never_and_the_environment():
    assert ESC in attn_lint("--color", "always", AL001).stdout  # a pipe, coloured on request
    assert ESC not in attn_lint(AL001).stdout  # auto: a pipe is plain
    assert ESC in attn_lint(AL001, env={"FORCE_COLOR": "1"}).stdout
    assert ESC not in attn_lint(AL001, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert ESC not in attn_lint("--color", "never", AL001, env={"FORCE_COLOR": "1"}).stdout


def test_output_file_gets_the_report(tmp_path):
    target = tmp_path / "report.json"
    out = attn_lint("--format", "json", "--output-file", target, AL001)
    assert out.returncode == 1 and out.stdout == ""
    assert '"AL001"' in target.read_text()


def test_output_file_through_a_link_out_of_the_project_is_refused(tmp_path):
    """As for a baseline: a link planted in the project that leads out of it is not written through."""
    import shutil
    project = tmp_path / "project"
    shutil.copytree(AL001, project)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep\n")
    (project / "report.txt").symlink_to(elsewhere)
    out = attn_lint("--output-file", "report.txt", ".", cwd=project)
    assert out.returncode == 2 and "symbolic link out of the project" in out.stderr, out.stderr
    assert elsewhere.read_text() == "keep\n"


def test_only_reports_one_finding_by_its_identity():
    import json
    doc = json.loads(attn_lint("--format", "json", FIXTURES).stdout)
    assert len(doc["findings"]) > 1
    first = doc["findings"][0]
    one = attn_lint("--format", "json", "--only", first["identity"][:10], FIXTURES)
    got = json.loads(one.stdout)["findings"]
    assert one.returncode == 1 and [f["identity"] for f in got] == [first["identity"]]
    assert attn_lint("--only", "0" * 32, FIXTURES).returncode == 0  # no finding has it
    bad = attn_lint("--only", "not-an-id", FIXTURES)
    assert bad.returncode == 2 and "8 to 32 hex digits" in bad.stderr


def test_changed_files_takes_folders(tmp_path):
    """`--changed-files serving/backends/` stands for every file under it (before: a folder matched
    no finding, and the run silently reported nothing)."""
    import shutil
    project = tmp_path / "project"
    shutil.copytree(AL001, project)
    (project / "serving" / "quiet").mkdir()
    (project / "serving" / "quiet" / "util.py").write_text("VALUE = 1\n")
    hit = attn_lint("--changed-files", "--format", "concise", "serving/backends", cwd=project)
    assert hit.returncode == 1 and "AL001" in hit.stdout, hit.stdout + hit.stderr
    miss = attn_lint("--changed-files", "--format", "concise", "serving/quiet", cwd=project)
    assert miss.returncode == 0 and "AL001" not in miss.stdout, miss.stdout + miss.stderr
