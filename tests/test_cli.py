"""The command line: exit codes, the JSON document, the text report, colour, and internal errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, REPO, run_in_pty

from attn_lint.linter.app import cli as cli_module
from attn_lint.rules import RULES_BY_CODE, TREE_RULES

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
FINDING_KEYS = {"code", "name", "severity", "path", "line", "column", "message", "class", "member", "targets",
                "evidence"}
AL001 = FIXTURES / "al001_hidden_hook"
CLEAN = FIXTURES / "fixed"


def _clean_env() -> dict:
    """The environment without the variables that force or forbid colour (the tests set them)."""
    return {k: v for k, v in os.environ.items()
            if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CLICOLOR_FORCE")}


def attn_lint(*args, env=None, cwd=None):
    """The installed program, as a user runs it (stdout is a pipe, not a terminal)."""
    full_env = _clean_env()
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "attn_lint", *map(str, args)], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=120)


def invoke(*args):
    return CliRunner().invoke(cli_module.main, [str(a) for a in args])


# --- exit codes ---------------------------------------------------------------------------------

def test_exit_0_without_findings():
    proc = attn_lint(CLEAN, "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert "No findings in " in proc.stdout


def test_exit_1_with_findings():
    proc = attn_lint(AL001, "--no-cache")
    assert proc.returncode == 1, proc.stderr


def test_exit_2_on_unknown_option_or_format():
    assert attn_lint(CLEAN, "--no-such-option").returncode == 2
    assert attn_lint(CLEAN, "--format", "xml").returncode == 2


def test_select_and_ignore_decide_the_exit_code():
    assert invoke(AL001, "--no-cache", "--select", "AL002").exit_code == 0
    assert invoke(AL001, "--no-cache", "--ignore", "AL001").exit_code == 0
    assert invoke(AL001, "--no-cache", "--select", "al001,AL002").exit_code == 1  # case and commas
    assert invoke(AL001, "--no-cache", "--select", "AL").exit_code == 1  # prefixes


def test_version_and_help():
    proc = attn_lint("--version")
    assert proc.returncode == 0 and "attn-lint" in proc.stdout
    proc = attn_lint("--help")
    assert proc.returncode == 0
    for option in ("--format", "--select", "--ignore", "--no-cache", "--cache-dir", "--jobs", "--debug"):
        assert option in proc.stdout


# --- JSON ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("fixture, codes", [("al001_hidden_hook", ["AL001"]), ("al002_delegation_typeerror", ["AL002"]),
                                            ("al003_noop_default", ["AL003"]), ("fixed", [])])
def test_json_is_exactly_one_document(fixture, codes):
    proc = attn_lint(FIXTURES / fixture, "--format", "json", "--no-cache")
    assert proc.returncode == (1 if codes else 0), proc.stderr
    doc = json.loads(proc.stdout)  # the whole of stdout: one document and nothing else
    assert isinstance(doc, dict)
    assert doc["version"] == 1
    assert set(doc) >= {"version", "findings", "errors", "stats"}
    assert doc["errors"] == []
    assert {"files", "lines", "seconds"} <= set(doc["stats"])
    assert doc["stats"]["files"] >= 13 and doc["stats"]["lines"] > 200
    assert [f["code"] for f in doc["findings"]] == codes
    for f in doc["findings"]:
        assert FINDING_KEYS <= set(f)
        rule = RULES_BY_CODE[f["code"]]
        assert (f["name"], f["severity"]) == (rule.name, rule.severity)
        # Relative to where attn-lint was started (here the repository root), not to the argument.
        assert not os.path.isabs(f["path"]) and f["path"].startswith(f"fixtures/{fixture}/serving/")
        assert (REPO / f["path"]).is_file()
        assert isinstance(f["line"], int) and isinstance(f["column"], int) and f["line"] >= 1 and f["column"] >= 1
        assert f["class"].endswith(".HybridLinearAttnBackend")
        assert isinstance(f["targets"], list) and f["targets"]
        assert f["evidence"] and all(set(e) == {"path", "line", "note", "supporting", "declared"} for e in f["evidence"])
        assert all((REPO / e["path"]).is_file() for e in f["evidence"])


@pytest.mark.parametrize("options", [["--jobs", "1"], ["-j", "2"], ["--no-astroid"]])
def test_options_keep_the_findings(options):
    base = json.loads(attn_lint(AL001, "--format", "json", "--no-cache").stdout)["findings"]
    other = attn_lint(AL001, "--format", "json", "--no-cache", *options)
    assert other.returncode == 1, other.stderr
    assert json.loads(other.stdout)["findings"] == base


def test_several_paths_and_a_single_file():
    proc = attn_lint(AL001, CLEAN, "--format", "json", "--no-cache")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and [f["code"] for f in doc["findings"]] == ["AL001"]
    assert doc["stats"]["files"] == 30
    one = AL001 / "serving" / "models" / "forward_mha.py"
    proc = attn_lint(one, "--format", "json", "--no-cache", "--no-context")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["stats"]["files"] == 1 and doc["errors"] == []
    # Within its package (the default), the file holds the probe of the package's one finding.
    proc = attn_lint(one, "--format", "json", "--no-cache")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["stats"]["files"] == 15
    assert [f["details"]["cited_in_paths"] for f in doc["findings"]] == \
        ["fixtures/al001_hidden_hook/serving/models/forward_mha.py:10"]


def test_json_from_inside_the_folder_uses_relative_paths():
    proc = attn_lint(".", "--format", "json", "--no-cache", cwd=AL001)
    (f,) = json.loads(proc.stdout)["findings"]
    assert f["path"] == "serving/backends/hybrid_linear_attn_backend.py"


def test_json_reports_bad_files_in_errors(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "broken.py").write_text("def f(:\n")
    proc = attn_lint(tmp_path, "--format", "json", "--no-cache")
    doc = json.loads(proc.stdout)
    # Outside the current directory, paths are absolute (they open from where attn-lint ran).
    assert [(e["path"], e["kind"]) for e in doc["errors"]] == [(str(tmp_path / "pkg" / "broken.py"), "syntax-error")]
    assert set(doc["errors"][0]) >= {"path", "kind", "message", "line"}


# --- text ---------------------------------------------------------------------------------------

def test_text_report():
    proc = attn_lint(AL001, "--no-cache")
    out = proc.stdout
    assert "AL001" in out and "error" in out
    assert "serving/backends/hybrid_linear_attn_backend.py:13:1" in out
    assert "init_mha_chunk_metadata" in out
    # the evidence chain names the probe site with its line; the other probe site supports it
    assert re.search(r"serving/models/forward_mha\.py:\d+", out)
    assert not re.search(r"serving/models/sarvam_moe\.py:\d+", out)
    assert re.search(r"serving/models/sarvam_moe\.py:\d+", attn_lint(AL001, "--no-cache", "--verbose").stdout)
    # a code frame shows the line
    assert "class HybridLinearAttnBackend(AttentionBackend):" in out
    summary = out.strip().splitlines()[-1]
    assert re.fullmatch(r"Found 1 finding \(AL001: 1\) in 15 files, [\d,]+ lines, [\d.]+ s", summary), summary


def _evidence_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.startswith("      - ")]


def test_evidence_is_the_chain_and_the_rest_with_verbose():
    """Issue 12: the fixture's AL001 printed 17 evidence lines (the README shows 7), one of them
    twice. By default: the probe site and how its receiver resolves, the wrapper, the delegate
    that holds the implementations, their definitions; --verbose adds the rest; none repeats."""
    out = attn_lint(AL001, "--no-cache").stdout
    chain = _evidence_lines(out)
    assert len(chain) == 8 and len(set(chain)) == len(chain), chain
    assert [line.split("  ", 1)[0].split("al001_hidden_hook/", 1)[1] for line in chain] == [
        "serving/models/forward_mha.py:10", "serving/model_executor/forward_context.py:20",
        "serving/model_executor/forward_context.py:14", "serving/model_executor/forward_context.py:25",
        "serving/backends/hybrid_linear_attn_backend.py:13", "serving/backends/hybrid_linear_attn_backend.py:13",
        "serving/backends/flashinfer_mla_backend.py:39", "serving/backends/trtllm_mla_backend.py:19"]
    assert "`self.full_attn_backend` holds" in chain[5]  # the single attribute, not the list holding all
    # The supporting links include the module global's declared type (`_forward_context: ForwardContext`).
    assert "(10 supporting lines: --verbose shows them)" in out
    everything = _evidence_lines(attn_lint(AL001, "--no-cache", "-v").stdout)
    assert len(everything) == 18 and len(set(everything)) == 18 and set(chain) < set(everything)
    assert any("`_forward_context` is declared `ForwardContext` at module level" in line for line in everything)
    doc = json.loads(attn_lint(AL001, "--no-cache", "--format", "json").stdout)
    flags = [e["supporting"] for e in doc["findings"][0]["evidence"]]
    assert len(flags) == 18 and flags.count(False) == 8  # JSON keeps every link, marked
    github = attn_lint(AL001, "--no-cache", "--format", "github").stdout
    assert "sarvam_moe.py" not in github and "sarvam_moe.py" in attn_lint(
        AL001, "--no-cache", "--format", "github", "--verbose").stdout
    # AL003: one call site, the no-op, the delegate holding the overriding class, the override.
    al003 = _evidence_lines(attn_lint(FIXTURES / "al003_noop_default", "--no-cache").stdout)
    assert len(al003) == 5 and sum("holds" in line for line in al003) == 1, al003


def test_text_report_lists_bad_files(tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "ok.py").write_text("x = 1\n")
    proc = attn_lint(tmp_path, "--no-cache")
    assert proc.returncode == 1  # a file that cannot be analysed fails the run
    assert "broken.py:1: syntax-error" in proc.stdout
    assert "1 file could not be analysed" in proc.stdout


def test_no_ansi_when_not_a_terminal():
    proc = attn_lint(AL001, "--no-cache")
    assert not ANSI.search(proc.stdout) and not ANSI.search(proc.stderr)


def _run_in_pty(args, env, stream: str = "stdout") -> str:
    """Run attn-lint with stdout (or stderr) on a pseudo-terminal; return what it wrote there."""
    full_env = _clean_env()
    full_env.update(COLUMNS="160", TERM="xterm-256color", **env)
    return run_in_pty(args, full_env, stream)


def test_colour_on_a_terminal_and_none_with_no_color():
    coloured = _run_in_pty([AL001, "--no-cache"], {})
    assert "AL001" in coloured
    assert ANSI.search(coloured), "a terminal gets the rich report"
    plain = _run_in_pty([AL001, "--no-cache"], {"NO_COLOR": "1"})
    assert "AL001" in plain
    assert not ANSI.search(plain), "NO_COLOR means no escapes, even on a terminal"


def test_progress_with_counts_on_a_terminal_and_nothing_when_piped(tmp_path):
    """Issue 12: the spinner said only "analysing". On a terminal, stderr shows the phase and its
    counts (the last count of each phase always shows); piped, stderr stays empty."""
    tree = tmp_path / "pkg"
    tree.mkdir()
    for n in range(30):
        (tree / f"m{n}.py").write_text(f"class C{n}:\n    def f(self):\n        return {n}\n")
    env = dict.fromkeys(("CI",), "")  # CI turns the display off; the tests may run under it
    shown = _run_in_pty([tree, "--no-cache", "-j", "1"], env, stream="stderr")
    assert "parsing 30 of 30 files" in shown, shown
    from attn_lint.rules import TREE_RULES
    assert f"checking AL001 (rule 1 of {len(TREE_RULES)})" in shown, shown
    proc = attn_lint(tree, "--no-cache", "-j", "1", env={"CI": ""})
    assert proc.returncode == 0 and proc.stderr == ""


def test_the_engine_reports_progress_and_prints_nothing(tmp_path, capsys):
    from attn_lint.linter.app.engine import Settings, analyse
    for n in range(5):
        (tmp_path / f"m{n}.py").write_text(f"X = {n}\n")
    calls = []
    analyse([str(tmp_path)], Settings(cache_dir=None, jobs=1), progress=lambda *a: calls.append(a))
    assert calls[0] == ("discover", 0, 0)
    assert [c for c in calls if c[0] == "parse"] == [("parse", n, 5) for n in range(6)]
    from attn_lint.rules import TREE_RULES
    assert ("index", 0, 5) in calls and [c for c in calls if c[0].startswith("AL")] == [
        (r.code, n, len(TREE_RULES)) for n, r in enumerate(TREE_RULES)]
    assert capsys.readouterr() == ("", "")


# --- internal errors ----------------------------------------------------------------------------

@pytest.fixture
def broken_rule(monkeypatch):
    def boom(self, ctx):
        raise RuntimeError("rule exploded")
    monkeypatch.setattr(type(TREE_RULES[0]), "check", boom)


def test_internal_error_is_one_line_without_traceback(broken_rule):
    result = invoke(AL001, "--no-cache")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "internal error" in lines[0] and "RuntimeError" in lines[0] and "rule exploded" in lines[0]
    assert "Traceback" not in result.output
    assert "Found" not in result.stdout


def test_internal_error_with_debug_shows_the_traceback(broken_rule):
    result = invoke(AL001, "--no-cache", "--debug")
    assert result.exit_code == 2
    assert "Traceback" in result.stderr and "rule exploded" in result.stderr


def test_internal_error_in_json_mode_prints_no_partial_document(broken_rule):
    result = invoke(AL001, "--no-cache", "--format", "json")
    assert result.exit_code == 2
    assert result.stdout == ""


def test_changed_files_that_do_not_exist_are_an_error():
    proc = attn_lint("--changed-files", "no/such/file.py", "--no-cache", cwd=AL001)
    assert proc.returncode == 2
    assert "no such file: no/such/file.py" in proc.stderr


def test_changed_files_with_none_says_so():
    proc = attn_lint("--changed-files", "--no-cache", cwd=AL001)
    assert proc.returncode == 0
    assert "given no files" in proc.stderr


def test_negative_jobs_are_refused():
    proc = attn_lint("-j", "-3", AL001, "--no-cache")
    assert proc.returncode == 2 and "--jobs" in proc.stderr


def test_help_names_the_server_subcommand():
    proc = attn_lint("--help")
    assert proc.returncode == 0 and "attn-lint server start|stop|status|run" in proc.stdout


def test_every_printed_path_opens_from_the_current_directory(tmp_path):
    """Paths in the finding, its message and its evidence are relative to where attn-lint runs,
    with one folder or several (they were once relative to each argument)."""
    import re
    import shutil
    for name in ("al001_hidden_hook", "al003_noop_default"):
        shutil.copytree(FIXTURES / name, tmp_path / "work" / name)
    proc = attn_lint("work/al001_hidden_hook", "work/al003_noop_default", "--format", "json", "--no-cache",
                     cwd=tmp_path)
    doc = json.loads(proc.stdout)
    # Each folder's finding in its own folder: both hold `serving/backends/...`, and one folder's
    # file once stood in for the other's.
    assert sorted((f["code"], f["path"]) for f in doc["findings"]) == [
        ("AL001", "work/al001_hidden_hook/serving/backends/hybrid_linear_attn_backend.py"),
        ("AL003", "work/al003_noop_default/serving/backends/hybrid_linear_attn_backend.py")]
    for f in doc["findings"]:
        paths = [f["path"]] + [e["path"] for e in f["evidence"]] + re.findall(r"([\w/.-]+\.py):\d+", f["message"])
        for p in paths:
            assert p.startswith("work/" + f["path"].split("/")[1]) and (tmp_path / p).is_file(), p
    # From inside one folder, the other's files are not taken for this one's: outside the current
    # directory a path is absolute.
    proc = attn_lint("../al003_noop_default", "--format", "json", "--no-cache", cwd=tmp_path / "work" / "al001_hidden_hook")
    (f,) = json.loads(proc.stdout)["findings"]
    assert f["path"] == str(tmp_path / "work/al003_noop_default/serving/backends/hybrid_linear_attn_backend.py")
    assert all(os.path.isabs(e["path"]) and os.path.isfile(e["path"]) for e in f["evidence"])


def test_a_file_that_cannot_be_analysed_fails_the_run_unless_told_otherwise(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "ok.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "broken.py").write_text("def f(:\n")
    proc = attn_lint("pkg", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1 and "broken.py" in proc.stdout + proc.stderr
    assert attn_lint("pkg", "--no-cache", "--ignore-file-errors", cwd=tmp_path).returncode == 0


def test_folders_without_python_files_and_non_python_files_are_named(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("# not python: def f(:\n")
    proc = attn_lint("docs", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 0 and "no Python files found in docs" in proc.stderr
    proc = attn_lint("docs/notes.md", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 0 and "docs/notes.md is not a Python file" in proc.stderr
    assert "syntax-error" not in proc.stdout


def test_paths_within_agrees_with_path_within(tmp_path):
    """paths_within's once-per-folder relpath (the paths discovery shows from `display_base`) gives
    what path_within gives for each file."""
    from attn_lint.linter.files.discover import path_within, paths_within
    base = str(tmp_path / "proj" / "sub")
    paths = [base + "/a.py", base + "/pkg/b.py", base + "/pkg/deep/c.py", str(tmp_path / "proj" / "x.py"),
             str(tmp_path / "proj" / "subway" / "d.py"), str(tmp_path / "other.py"), "/e.py",
             base + "/../sub/f.py", base + "/pkg/../g.py", base + "/..h.py", base + "/..", base + "/",
             "rel.py", "rel/dir/i.py", "../up.py", base + "/pkg/./j.py"]
    within = paths_within(base)
    for path in paths + paths:  # twice: the second time from its memo
        assert within(path, "FALLBACK") == path_within(path, base, "FALLBACK"), path


def test_paths_within_remembers_folders_outside_the_base(tmp_path, monkeypatch):
    """A tree analysed from outside it (the usual CI layout: attn-lint run from a checkout's
    parent, or on an absolute path) asks relpath once per folder too, not once per file."""
    import os

    from attn_lint.linter.files.discover import paths_within
    calls = []
    real = os.path.relpath
    monkeypatch.setattr(os.path, "relpath", lambda *a: calls.append(a) or real(*a))
    within = paths_within(str(tmp_path / "elsewhere"))
    tree = tmp_path / "tree"
    paths = [str(tree / "pkg" / f"m{i}.py") for i in range(50)] + [str(tree / f"t{i}.py") for i in range(50)]
    assert [within(p, p) for p in paths] == paths
    assert len(calls) == 2
