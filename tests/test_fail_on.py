"""`--fail-on high` (or `fail-on = "high"`): a CI gate on the findings the code is shown to reach.

Every finding is still reported; only the exit status changes, and the text report says on stderr
how many findings it showed without failing the run. AL900 has no confidence to gate: it always
counts. Before this option every finding of confidence medium or high failed the run.
"""

from __future__ import annotations

from click.testing import CliRunner
from conftest import write_tree
from test_signal_self_call import RECEIVER

from attn_lint.linter.app import cli as cli_module
from attn_lint.rules.al002_delegation_signature_mismatch import ROTARY

# The optional call under a test: possible, not shown to run (medium; test_signal_self_call).
GUARDED = RECEIVER.replace("            self.encode(req, stats=None)\n",
                           "            if req:\n                self.encode(req, stats=None)\n")


def tree(tmp_path, source: str, pyproject: str = "") -> str:
    files = {"serving/__init__.py": "", "serving/mod.py": source}
    if pyproject:
        files["pyproject.toml"] = pyproject
    return str(write_tree(tmp_path / "tree", files))


def check(root: str, *args: str):
    return CliRunner().invoke(cli_module.main, ["--no-cache", "--no-server", "--format", "concise",
                                                 *args, f"{root}/serving"])


def test_a_medium_finding_fails_by_default_and_not_under_fail_on_high(tmp_path):
    root = tree(tmp_path, GUARDED)
    plain = check(root)
    assert plain.exit_code == 1 and "[medium]" in plain.output
    assert "AL002" in plain.output
    gated = CliRunner().invoke(cli_module.main, ["--no-cache", "--no-server", "--fail-on", "high", f"{root}/serving"])
    assert gated.exit_code == 0, gated.output
    assert "AL002" in gated.output  # still reported
    assert "1 finding below confidence high shown, not failing the run (fail-on high)" in gated.output


def test_a_high_finding_fails_under_fail_on_high(tmp_path):
    root = tree(tmp_path, ROTARY)
    assert check(root, "--fail-on", "high").exit_code == 1


def test_the_configuration_sets_it_and_the_command_line_wins(tmp_path):
    root = tree(tmp_path, GUARDED, '[tool.attn-lint]\nfail-on = "high"\n')
    assert check(root).exit_code == 0
    assert check(root, "--fail-on", "medium").exit_code == 1
    shown = CliRunner().invoke(cli_module.main, ["--show-settings", f"{root}/serving"])
    assert "fail-on" in shown.output and "high" in shown.output


def test_a_bad_value_in_the_configuration_is_a_configuration_error(tmp_path):
    root = tree(tmp_path, GUARDED, '[tool.attn-lint]\nfail-on = "low"\n')
    out = check(root)
    assert out.exit_code == 2
    assert "`fail-on` must be one of 'medium', 'high', not 'low'" in out.output


def test_an_unused_suppression_still_fails_under_fail_on_high(tmp_path):
    root = tree(tmp_path, ROTARY.replace("class Rotary:", "class Rotary:  # noqa: AL001"))
    out = check(root, "--fail-on", "high", "--select", "AL900")
    assert out.exit_code == 1 and "AL900" in out.output
