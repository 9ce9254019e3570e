"""Each finding says what to do: one `help:` line from its rule's "How to fix", with "fixable with
--fix" where `--fix` does it; on a terminal it wraps to the width with its later lines under the
text's start, and a pipe keeps it whole. Before: no finding said how to fix it or that --fix would.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import FIXTURES, run_in_pty

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(extra)
    return env


def test_every_finding_has_its_rules_help_line():
    out = subprocess.run([sys.executable, "-m", "attn_lint", "--no-cache", "--no-server", FIXTURES],
                         capture_output=True, text=True, env=_env(), timeout=120)
    helps = [line for line in out.stdout.splitlines() if line.startswith("    help: ")]
    assert len(helps) == out.stdout.count(" [error] [") + out.stdout.count(" [warning] [")
    assert any("Forward the hook from the wrapper" in h and "(fixable with --fix)" in h for h in helps)
    assert any("`attn-lint rule AL002` shows how" in h and "--fix" not in h for h in helps)


def test_on_an_80_column_terminal_the_help_line_wraps_under_its_text():
    text = ANSI.sub("", run_in_pty(["--no-cache", "--no-server", FIXTURES / "al002_delegation_typeerror"],
                                   _env(COLUMNS="80", LINES="50")))
    lines = text.replace("\r\n", "\n").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("    help: "))
    assert len(lines[start]) <= 80 and lines[start + 1].startswith(" " * 10) and lines[start + 1].strip()


def test_the_confidence_head_counts_live_and_ruled_out_implementations():
    """`confidence medium:` over a list of `lowered:` lines read as a contradiction; the head now
    says how many of the finding's implementations are live and how many were ruled out."""
    from attn_lint.linter.findings import Finding, RunFacts
    from attn_lint.linter.report.text import _pairing_counts
    f = Finding("AL001", "unforwarded-hook", "error", "a.py", 1, 1, "m", "pkg.W", "hook",
                ("pkg.A", "pkg.B", "pkg.C"), (), RunFacts(latent_impls=("pkg.B",)).pairs(), confidence="medium")
    assert _pairing_counts(f) == " (2 of 3 implementations live, 1 ruled out)"
    assert _pairing_counts(Finding("AL001", "n", "error", "a.py", 1, 1, "m", "pkg.W", "hook", ("pkg.A",), (),
                                   RunFacts(latent_impls=("pkg.A",)).pairs(), confidence="low")) == \
        " (every one of 1 implementations ruled out)"


def test_long_class_lists_are_cut_to_a_few_and_a_count():
    from attn_lint.linter.report.text import shortened
    names = ", ".join(f"Backend{n}" for n in range(22))
    note = f"`self.decode_backend` holds exactly {names} (every assignment followed)"
    assert shortened(note) == ("`self.decode_backend` holds exactly Backend0, Backend1, Backend2, Backend3, … "
                               "(22 classes; -v lists them) (every assignment followed)")
    assert shortened("holds exactly A, B, C") == "holds exactly A, B, C"  # short lists stay whole


def test_a_note_on_a_terminal_wraps_at_words(tmp_path):
    """The `note:` lines (a configuration bounded on the way, say) wrap to the terminal's width at
    word boundaries, later lines indented; before, the terminal cut them mid-word."""
    import shutil
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "al001_hidden_hook", project)
    (project / "pyproject.toml").write_text("[tool.attn-lint]\nserver = true\n")
    text = ANSI.sub("", run_in_pty(["--no-cache", project], _env(COLUMNS="80"), stream="stderr"))
    lines = [line for line in text.replace("\r\n", "\n").split("\n") if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.startswith("attn-lint: note: `server = true`"))
    assert all(len(line) <= 80 for line in lines[start:start + 3])
    assert lines[start + 1].startswith("    ") and not lines[start + 1][4].isspace()


def test_on_a_narrow_terminal_the_summary_line_wraps_at_words():
    """Before: `Found 28 findings ... 1,090,547 line` then `s, 2.83 s` on sglang at 80 columns."""
    text = ANSI.sub("", run_in_pty(["--no-cache", "--no-server", FIXTURES / "al002_delegation_typeerror"],
                                   _env(COLUMNS="40", LINES="300")))
    lines = text.replace("\r\n", "\n").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Found "))
    assert len(lines[start]) <= 40 and lines[start + 1].startswith("    ")
    words = " ".join(line.strip() for line in lines[start:start + 3])
    assert re.search(r"\d+ files, [\d,]+ lines, [\d.]+ s", words), words
