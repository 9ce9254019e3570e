"""The options of `attn-lint check`, each declared once.

An option is one `Option` in CHECK_OPTIONS: click's declarations and settings (its type, default,
validation and help, which `--help` shows), and the `[tool.attn-lint]` key it replaces, if any
(config.CONFIG_KEYS declares those keys). The `check` command takes its options from this table, in
this order; its parameters arrive as cli.CheckRequest's fields, one per option (a test holds the
two to each other). docs/usage.md's tables of options and keys are generated from here:

    python -m attn_lint.linter.app.options docs/usage.md           # rewrite the generated blocks
    python -m attn_lint.linter.app.options --check docs/usage.md   # exit 1 where one is out of date
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

import click

from ...runtime_check.isolate import DEFAULT_MEMORY_LIMIT, DEFAULT_TASK_TIME_LIMIT, parse_size, size_text
from .config import CONFIG_KEYS, FAIL_ON, FORMATS


class Option:
    """One option of `attn-lint check`: click's declarations (`"--fail-on"`, a parameter name where
    it differs) and settings, and the configuration key it replaces."""

    def __init__(self, *decls: str, config: str | None = None, **settings):
        self.decls, self.config, self.settings = decls, config, settings
        made = click.Option(list(decls), **settings)
        self.name = made.name  # the parameter's name: CheckRequest's field
        self.flags = tuple(made.opts) + tuple(made.secondary_opts)
        self.help = settings.get("help", "")

    def apply(self, command: Callable) -> Callable:
        return click.option(*self.decls, **self.settings)(command)


CHECK_OPTIONS: tuple[Option, ...] = (
    Option("--format", "fmt", config="format", type=click.Choice(list(FORMATS)), default=None,
           help="Output format [default: text, or `format` in pyproject.toml]."),
    Option("--select", config="select", multiple=True,
           help="Only these rule codes (comma-separated, prefixes allowed)."),
    Option("--ignore", config="ignore", multiple=True, help="Skip these rule codes."),
    Option("--exclude", config="exclude", multiple=True,
           help="Glob of paths to skip (repeatable; replaces the file's)."),
    Option("--cache-dir", config="cache-dir", type=click.Path(file_okay=False), default=None,
           help="Where summaries are cached [default: $XDG_CACHE_HOME/attn-lint]."),
    Option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
    Option("--jobs", "-j", config="jobs", type=click.IntRange(min=0), default=None,
           help="Parallel workers for parsing (0: one per core) [default: one per core]."),
    Option("--no-astroid", config="astroid", is_flag=True,
           help="Never ask astroid for receivers the index cannot type."),
    Option("--server/--no-server", "server", config="server", default=None,
           help="Run through the resident server, starting it when none is running: it keeps the tree in "
                "memory, so a run after an edit takes under a second. --no-server: never use it "
                "[default: `server` in pyproject.toml; without it, a server already running is used]."),
    Option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
           help="Read [tool.attn-lint] from this pyproject.toml instead of searching for one."),
    Option("--isolated", is_flag=True, help="Ignore every configuration file."),
    Option("--show-settings", is_flag=True, help="Print the resolved settings and exit."),
    Option("--statistics", is_flag=True,
           help="Print the number of findings per rule and confidence instead of the findings."),
    Option("-v", "--verbose", is_flag=True,
           help="Show each finding's whole evidence, the supporting links too (other probe sites, how each "
                "delegate was found); by default the text and github formats show the chain that proves it."),
    Option("--show-latent", config="show-latent", is_flag=True,
           help="Also report low-confidence findings (latent drift: every pairing they rest on is ruled out), "
                "grouped per (wrapper, implementation); they never change the exit status "
                "[default: `show-latent` in pyproject.toml]."),
    Option("--fail-on", "fail_on", config="fail-on", type=click.Choice(list(FAIL_ON)), default=None,
           help="The lowest confidence of a finding that makes the exit status 1: `high` gates CI on the "
                "findings whose pairing the code builds and whose site it reaches; the others are still "
                "reported [default: medium, or `fail-on` in pyproject.toml]."),
    Option("--ignore-file-errors", "ignore_file_errors", is_flag=True,
           help="Files that cannot be analysed (syntax errors, unreadable...) are still reported but do "
                "not make the exit status 1."),
    Option("--report-unused-suppressions", "report_unused", is_flag=True,
           help="Report `# noqa: AL...` / `# attn-lint: ignore[...]` comments that silence nothing (AL900)."),
    Option("--baseline", type=click.Path(dir_okay=False), default=None,
           help="Report only findings that are not in this baseline file."),
    Option("--write-baseline", type=click.Path(dir_okay=False), default=None,
           help="Record the current findings in this baseline file and exit 0."),
    Option("--changed-files", is_flag=True,
           help="PATHS are changed files (pre-commit): analyse the whole project around them and report "
                "only findings whose location or evidence lies in them."),
    Option("--new-since", "new_since", default=None, metavar="REF",
           help="Report only findings that are not at git revision REF (a branch, tag or commit): REF's "
                "files are read from git's objects, never checked out or run. The exit status counts only "
                "the new findings."),
    Option("--show-fixed", is_flag=True,
           help="With --new-since: also list the findings REF had that are gone."),
    Option("--fix", is_flag=True, help="Add forwarding methods for AL001 findings, then report what is left."),
    Option("--diff", is_flag=True, help="With or without --fix: print the fixes as a unified diff, write nothing."),
    Option("--debug", is_flag=True, help="Show tracebacks for internal errors."),
    # --- runtime verification ---
    Option("--verify", "verify", is_flag=True,
           help="Check each AL001/AL002/AL003 finding on the real code (CPU): the static fact (attribute-hidden, "
                "call-rejected, noop-reached, placeholder-reached), then the pairing through the code's own "
                "construction path (pairing-reproduced: confirmed), or not-reproduced / unverifiable."),
    Option("--verify-on-gpu", "verify_gpu", is_flag=True,
           help="--verify, plus a FlashInfer prefill smoke test for findings whose hook plans FlashInfer "
                "(consequence-reproduced: confirmed) "
                "(needs a CUDA GPU, torch and flashinfer: pip install 'attn-lint[gpu]'; exit 2 without them)."),
    Option("--verify-time-limit", "verify_time_limit", type=click.FloatRange(min=0, min_open=True),
           default=DEFAULT_TASK_TIME_LIMIT, show_default=True, metavar="SECONDS",
           help="--verify runs your code in child processes: the wall-clock limit per finding, after which "
                "its process group is killed and the finding is unverifiable (a GPU step gets 300 s more)."),
    Option("--verify-memory-limit", "verify_memory_limit", default=size_text(DEFAULT_MEMORY_LIMIT).replace(" ", ""),
           show_default=True, metavar="SIZE",
           callback=lambda ctx, param, value: parse_size(value, click.BadParameter),
           help="--verify's memory limit per child process: its address space (not for --verify-on-gpu, as CUDA "
                "reserves far more than it uses) and, on Linux, the resident memory of all its processes; past "
                "it the finding is unverifiable. 4G, 512M, 8GiB, a number of bytes, or none."),
    # --- end runtime verification ---
    Option("--only", "only", multiple=True, metavar="IDENTITY",
           help="Report (and with --verify, verify) only the finding with this identity, as --format json "
                "or --verbose shows it; a prefix of at least 8 hex digits will do (repeatable)."),
    Option("--quiet", "-q", is_flag=True,
           help="Print the findings and nothing else: no notes, no summary line (errors still print)."),
    Option("--exit-zero", is_flag=True,
           help="Exit 0 even when there are findings (usage, configuration and internal errors still exit 2)."),
    Option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
           help="Colour the text report: auto colours a terminal unless NO_COLOR is set (FORCE_COLOR colours "
                "any output)."),
    Option("--no-context", is_flag=True,
           help="Analyse PATHS alone: not the package or configured `src` they belong to, nor a package they "
                "extend as a plug-in (faster; drift whose probe or builder lies outside them is not seen)."),
    Option("--host", multiple=True, type=click.Path(exists=True, file_okay=False), metavar="FOLDER",
           help="Source folder of a package the analysed code extends as a plug-in (vLLM for a vLLM plug-in), "
                "where the import path does not hold it: analysed as context, its own findings not reported."),
    Option("--output-file", "-o", type=click.Path(dir_okay=False), default=None,
           help="Write the report to this file instead of standard output."),
)


def check_options(command: Callable) -> Callable:
    """`command` with every option of CHECK_OPTIONS, shown by `--help` in the table's order."""
    for option in reversed(CHECK_OPTIONS):
        command = option.apply(command)
    return command


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def options_markdown() -> str:
    """docs/usage.md's table of `check` options, from CHECK_OPTIONS."""
    rows = ["| option | what it does | replaces |", "|---|---|---|"]
    rows += [f"| {', '.join(f'`{f}`' for f in o.flags)} | {_cell(o.help)} | "
             f"{f'`{o.config}`' if o.config else '—'} |" for o in CHECK_OPTIONS]
    return "\n".join(rows) + "\n"


def keys_markdown() -> str:
    """docs/usage.md's table of `[tool.attn-lint]` keys, from CONFIG_KEYS and the options that
    replace them."""
    flags = {o.config: " / ".join(f"`{f}`" for f in o.flags) for o in CHECK_OPTIONS if o.config}
    rows = ["| key | what it sets | overridden by |", "|---|---|---|"]
    rows += [f"| `{k.key}` | {_cell(k.means)} | {flags.get(k.key, '—')} |" for k in CONFIG_KEYS]
    return "\n".join(rows) + "\n"


GENERATED_BLOCKS: dict[str, Callable[[], str]] = {"check options": options_markdown, "config keys": keys_markdown}


def regenerated(text: str) -> str:
    """`text` (docs/usage.md) with each `<!-- generated: NAME -->` block made again from the
    declarations; the prose around the blocks is left as it is."""
    for name, make in GENERATED_BLOCKS.items():
        pattern = re.compile(rf"(<!-- generated: {name} -->\n)(.*?)(<!-- end generated: {name} -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"no `<!-- generated: {name} -->` block to fill")
        text = pattern.sub(lambda m, make=make: m.group(1) + make() + m.group(3), text)
    return text


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    if len(paths) != 1:
        print("usage: python -m attn_lint.linter.app.options [--check] docs/usage.md", file=sys.stderr)
        return 2
    with open(paths[0], encoding="utf-8") as fh:
        text = fh.read()
    try:
        new = regenerated(text)
    except ValueError as exc:
        print(f"{paths[0]}: {exc}", file=sys.stderr)
        return 2
    if new == text:
        return 0
    if check:
        print(f"out of date (python -m attn_lint.linter.app.options {paths[0]})", file=sys.stderr)
        return 1
    with open(paths[0], "w", encoding="utf-8") as fh:
        fh.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
