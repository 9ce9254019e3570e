"""What attn-lint prints from a hostile tree: no terminal escape or bidirectional override runs,
no expression nested past the recursion limit ends `--diff` or `--fix` in an internal error.

Before: `--diff` and `--fix` died with "internal error: RecursionError" on `1+1+...` of 400 terms,
and escapes and bidi overrides in `--diff` file names and in the `--verify` table reached the
terminal as they were.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO, write_tree
from small_trees import TREES

from attn_lint.linter.report.printable import printable

RAW = ("\x1b", "\u202e", "\u2066", "\u200f")


def lint(cwd, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ATTN_LINT_CACHE_KEY"}
    env.update(NO_COLOR="1", CI="1", XDG_CACHE_HOME=str(cwd.parent / "cache"), PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "attn_lint", "--no-server", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180)


def test_bidi_overrides_are_escaped_like_control_characters():
    assert printable("if access\u202e \u2066# admin\u2069\u2066 :") == \
        "if access\\u202e \\u2066# admin\\u2069\\u2066 :"
    assert printable("\u200fx\u061c") == "\\u200fx\\u061c"


@pytest.mark.parametrize("mode", ["--diff", "--fix"])
def test_an_expression_past_the_recursion_limit_is_fixed_like_any_other(tmp_path, mode):
    tree = dict(TREES["AL001"])
    tree["serving/backends.py"] += "\nX = " + "+".join(["1"] * 400) + "\n"
    root = write_tree(tmp_path / "repo", tree)
    proc = lint(root, mode, ".")
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    if mode == "--diff":
        assert proc.returncode == 1 and "+    def plan_chunks(self" in proc.stdout
    else:
        assert "fixed 1 finding" in proc.stderr
        assert "def plan_chunks(self" in (root / "serving" / "backends.py").read_text()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_file_name_with_escapes_is_quoted_as_git_does_and_the_diff_still_applies(tmp_path):
    folder = "re\x1b[2J\u202epo"
    write_tree(tmp_path / folder, dict(TREES["AL001"]))
    proc = lint(tmp_path, "--diff", folder)
    assert proc.returncode == 1, proc.stderr
    assert not any(c in proc.stdout + proc.stderr for c in RAW), repr(proc.stdout[:400])
    assert '--- "a/re\\033[2J\\342\\200\\256po/serving/backends.py"' in proc.stdout
    patch = tmp_path / "fix.patch"
    patch.write_text(proc.stdout)
    applied = subprocess.run(["git", "apply", "--check", str(patch)], cwd=tmp_path, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="--verify needs os.fork")
def test_the_verify_table_escapes_what_the_checked_code_says(tmp_path):
    from test_verify_isolation import TREE, WRAPPER
    hostile = textwrap.dedent('''\
        raise RuntimeError("\\x1b[2J\\x1b]0;pwned\\x07 \\u202eeurt si siht")
        ''')
    root = write_tree(tmp_path / "src", dict(TREE, **{"pkg/bad.py": hostile + WRAPPER.format(name="BadWrapper")}))
    proc = lint(tmp_path, "--verify", "--no-cache", str(root / "pkg"))
    assert proc.returncode == 1, proc.stderr
    assert "Runtime verification" in proc.stdout
    assert not any(c in proc.stdout + proc.stderr for c in RAW), repr(proc.stdout[-800:])
    assert "\\x1b[2J" in proc.stdout
