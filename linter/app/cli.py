"""The command line: resolve settings, run the engine, post-process the result, hand it to a formatter.

    attn-lint [check] PATH... [options]     analyse (the default command; `check` may be omitted)
    attn-lint rules                         list the rules
    attn-lint rule AL001                    print one rule's documentation

Exit status: 0 no findings, 1 findings, 2 usage, configuration or internal error. Only findings of
confidence medium or high count (only high with `--fail-on high`): low-confidence ones (latent drift)
are reported with --show-latent, in a section of their own, and never fail a run.

The flow of `check` is: `resolve` (defaults < pyproject.toml < flags) -> `analyse` (engine) ->
`postprocess` (severity overrides, suppressions, per-file-ignores, changed-files filter, baseline,
then the split into reported and latent findings; the one place the Result changes before output)
-> optional fix -> `emit` (formatters).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import traceback
from dataclasses import dataclass

import click

from ... import __version__
from ...runtime_check.isolate import DEFAULT_MEMORY_LIMIT, DEFAULT_TASK_TIME_LIMIT
from ..files.discover import path_within
from ..findings import CITED_KEY, RunFacts
from ..perfile.cache import Cache
from ..report.printable import printable
from .config import Config, ConfigError, Resolved, config_from_bytes, hides_differently, resolve
from .engine import Result, analyse
from .options import check_options
from .server_paths import may_be_listening


class CliError(Exception):
    """A usage-level problem found after parsing (bad baseline file, ...): one line, exit 2."""


# --------------------------------------------------------------------------------------------------
# The group: `attn-lint PATH...` runs `check`; `rules` / `rule CODE` are subcommands.
# --------------------------------------------------------------------------------------------------

class _DefaultGroup(click.Group):
    """A group whose first argument is a path unless it names a subcommand.

    `attn-lint rules` lists the rules even where a folder `rules/` exists (lint that folder with
    `attn-lint rules/` or `attn-lint check rules`); `attn-lint rules other/` lints both folders.
    """

    default_command = "check"

    def parse_args(self, ctx, args):
        if not self._names_subcommand(args):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def _names_subcommand(self, args) -> bool:
        if not args or args[0] not in self.commands:
            return False
        first = args[0]
        if first == self.default_command or not os.path.exists(first):
            return True
        rest = args[1:]
        if first == "rules":
            return not rest or all(a.startswith("-") for a in rest)
        if first == "rule":
            return bool(rest) and not os.path.exists(rest[0]) and rest[0][:2].upper() == "AL"
        if first == "server":
            return bool(rest) and rest[0] in ("start", "stop", "status", "run")
        return False


@click.group(cls=_DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
def main():
    """attn-lint: find backend interface drift in LLM serving code."""


def _codes(values: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for v in values:
        out.extend(c.strip().upper() for c in v.split(",") if c.strip())
    return tuple(out)


@dataclass(frozen=True)
class RunOptions:
    """What the command line asks of a run beyond the engine's Settings (a record never patched:
    what the resolution and the widening learn makes a new one)."""

    report_unused: bool = False
    ignore_file_errors: bool = False  # files that cannot be analysed leave the exit status alone
    only_unused: bool = False  # `--select AL900` alone: report the suppression rules' findings only
    baseline: str | None = None
    write_baseline: str | None = None
    changed_files: tuple[str, ...] | None = None  # pre-commit mode: report only findings touching these
    # The paths given, where the run analyses more around them (scope.py): report only findings
    # located in them or whose evidence cites them.
    report_within: tuple[str, ...] | None = None
    context: tuple[str, ...] = ()  # the folders analysed around the paths given
    no_context: bool = False  # --no-context: the paths alone, no package around them, no host
    host_folders: tuple[str, ...] = ()  # --host as given (Resolved.hosts: those a run added)
    new_since: str | None = None  # --new-since REF: report only findings whose identity REF lacks
    only: tuple[str, ...] = ()  # --only IDENTITY: report (and verify) only these findings
    show_fixed: bool = False  # --show-fixed: and list REF's findings that are gone
    statistics: bool = False
    verbose: bool = False  # the supporting evidence too (text and github formats)
    quiet: bool = False  # the findings only: no notes, no summary line
    exit_zero: bool = False  # findings leave the exit status 0 (errors still make it 2)
    color: str = "auto"  # auto | always | never (text format)
    output_file: str | None = None  # the report goes there instead of stdout
    fix: bool = False
    diff: bool = False
    # --- runtime verification ---
    verify: bool = False  # --verify: replay findings on the real classes (CPU)
    verify_gpu: bool = False  # --verify-on-gpu: and the FlashInfer smoke test
    verify_time_limit: float = DEFAULT_TASK_TIME_LIMIT  # --verify-time-limit: seconds per finding's child process
    verify_memory_limit: int | None = DEFAULT_MEMORY_LIMIT  # --verify-memory-limit in bytes (None: none)
    # --- end runtime verification ---


@dataclass(frozen=True)
class CheckRequest:
    """Everything `attn-lint check` was asked, one field per command-line parameter."""

    paths: tuple[str, ...]
    fmt: str | None
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    exclude: tuple[str, ...]
    cache_dir: str | None
    no_cache: bool
    jobs: int | None
    no_astroid: bool
    server: bool | None
    config_file: str | None
    isolated: bool
    show_settings: bool
    statistics: bool
    verbose: bool
    show_latent: bool | None
    fail_on: str | None
    report_unused: bool
    baseline: str | None
    write_baseline: str | None
    changed_files: bool
    fix: bool
    diff: bool
    debug: bool
    quiet: bool = False
    exit_zero: bool = False
    color: str = "auto"
    output_file: str | None = None
    new_since: str | None = None
    show_fixed: bool = False
    only: tuple[str, ...] = ()
    ignore_file_errors: bool = False
    verify: bool = False
    verify_gpu: bool = False
    verify_time_limit: float = DEFAULT_TASK_TIME_LIMIT
    verify_memory_limit: int | None = DEFAULT_MEMORY_LIMIT
    no_context: bool = False
    host: tuple[str, ...] = ()

    def options(self) -> RunOptions:
        """What the run asks beyond the engine's Settings (Resolved holds those)."""
        return RunOptions(report_unused=self.report_unused, baseline=self.baseline,
                          write_baseline=self.write_baseline, statistics=self.statistics, verbose=self.verbose,
                          fix=self.fix, diff=self.diff,
                          ignore_file_errors=self.ignore_file_errors, new_since=self.new_since,
                          show_fixed=self.show_fixed, verify=self.verify or self.verify_gpu,
                          verify_gpu=self.verify_gpu, verify_time_limit=self.verify_time_limit,
                          verify_memory_limit=self.verify_memory_limit, quiet=self.quiet,
                          exit_zero=self.exit_zero, color=self.color, output_file=self.output_file,
                          only=tuple(i.strip().lower() for i in self.only), no_context=self.no_context,
                          host_folders=tuple(self.host))


@main.command("check", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@check_options
@click.version_option(__version__, "-V", "--version", prog_name="attn-lint")
def check(**params):
    """Find backend interface drift in PATHS (files or folders; default: `src` from pyproject.toml, or the
    project root). Each path is analysed within its top-level package (or the configured `src` holding
    it), and a plug-in with the package it extends; the report keeps the findings located in PATHS or
    whose evidence cites them (--no-context: PATHS alone).

    Subcommands: `attn-lint rules` lists the rules, `attn-lint rule AL001` explains one,
    `attn-lint server start|stop|status|run` manages the resident server.

    Exit status: 0 no findings, 1 findings of confidence medium or high (only high with --fail-on
    high), a file that could not be analysed (unless --ignore-file-errors) or, with --fix, a file left
    unwritten; 2 usage, configuration or internal error.
    """
    request = CheckRequest(**params)
    opts = request.options()
    paths = request.paths
    bad = [i for i in request.only if not (8 <= len(i.strip()) <= 32 and all(c in "0123456789abcdef"
                                                                             for c in i.strip().lower()))]
    if bad:
        raise click.UsageError(f"--only takes a finding's identity (8 to 32 hex digits), not {bad[0]!r}")
    if request.show_fixed and not request.new_since:
        raise click.UsageError("--show-fixed needs --new-since REF")
    if request.new_since is not None and (request.write_baseline or request.fix or request.diff):
        raise click.UsageError("--new-since reports findings; it does not go with --write-baseline, --fix or --diff")
    changed_files, show_settings = request.changed_files, request.show_settings
    try:
        if changed_files:
            opts = dataclasses.replace(opts, changed_files=tuple(paths))
            missing = [p for p in paths if not os.path.lexists(p)]
            if missing:
                for p in missing:
                    click.echo(f"attn-lint: --changed-files: no such file: {printable(p)}", err=True)
                sys.exit(2)
            if not paths and not show_settings:
                click.echo("attn-lint: --changed-files was given no files: nothing to check", err=True)
                sys.exit(0)
        resolved = resolve(() if changed_files else tuple(paths), select=_codes(request.select),
                           ignore=_codes(request.ignore), exclude=request.exclude, fmt=request.fmt,
                           cache_dir=request.cache_dir, no_cache=request.no_cache, jobs=request.jobs,
                           no_astroid=request.no_astroid, server=request.server, config_file=request.config_file,
                           isolated=request.isolated, start=paths[0] if (changed_files and paths) else None,
                           whole_project=changed_files, show_latent=request.show_latent,
                           fail_on=request.fail_on)
    except ConfigError as exc:
        click.echo(f"attn-lint: configuration error: {exc}", err=True)
        sys.exit(2)
    if paths and not changed_files and not request.no_context and not show_settings:
        resolved, opts = _widened(resolved, request, opts)
    for note in resolved.notes if not opts.quiet else ():
        _tell(f"attn-lint: note: {note}")
    # `select` naming AL900 (on the command line or in pyproject.toml) asks for the unused-
    # suppression report, as --report-unused-suppressions does; `ignore` covering it wins over both.
    opts = dataclasses.replace(
        opts, report_unused=resolved.report_unused or (opts.report_unused and not resolved.unused_ignored),
        only_unused=resolved.only_unused)
    if show_settings:
        _show_settings(resolved)
        sys.exit(0)
    if not resolved.paths:
        raise click.UsageError("give at least one file or folder to analyse")
    resolved = dataclasses.replace(resolved, paths=_python_only(resolved.paths))
    if not resolved.paths:
        sys.exit(0)
    try:
        code = run(resolved, opts)
    except CliError as exc:
        click.echo(f"attn-lint: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("attn-lint: interrupted", err=True)
        sys.exit(2)
    except Exception as exc:  # one clear line; the traceback only on request
        if request.debug:
            traceback.print_exc()
        click.echo(f"attn-lint: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
                   err=True)
        sys.exit(2)
    sys.exit(code)


# A tree whose module names disagree with most of its own imports (own_imports.py): correct trees
# measure 0-10% (sglang 0.3%, vLLM 1%, vllm-rbln 10%); a folder named from below its package, 100%.
MIN_OWN_IMPORTS = 20
MISNAMED_SHARE = 0.5


def run(resolved: Resolved, opts: RunOptions) -> int:
    """One analysis run; returns the exit status."""
    if opts.write_baseline:  # refused before the analysis, not after minutes of it
        from ..userfiles import Refused, output_target
        try:
            output_target(opts.write_baseline, resolved.config.root, f"baseline {opts.write_baseline}")
        except Refused as exc:
            raise CliError(str(exc)) from None
    want_context = opts.fix or opts.diff or opts.verify  # runtime verification needs the context too
    raw = _analyse(resolved, keep_context=want_context)
    misnamed, own = raw.stats.get("own_imports_misnamed") or 0, raw.stats.get("own_imports") or 0
    if own >= MIN_OWN_IMPORTS and misnamed >= MISNAMED_SHARE * own and not opts.quiet:
        _tell(f"attn-lint: warning: {misnamed} of the tree's {own} imports of its own modules name them from "
              f"a folder above the one analysed (`pkg.sub.mod` where the run named it `sub.mod`): they are "
              f"found by their tail only where it is unique, and drift between those files can go unseen. "
              f"Analyse from the folder that holds the top-level package, or give each package folder its "
              f"`__init__.py`")
    if not opts.no_context:
        widened, opts, notes = _with_hosts(resolved, opts, raw)
        for note in notes if not opts.quiet else ():
            _tell(f"attn-lint: note: {note}")
        if widened is not resolved:
            resolved = widened
            raw = _analyse(resolved, keep_context=want_context)
    started = time.perf_counter()
    # The contents analysed now, by git blob id: read once, for REF's lookup and for keeping this run.
    parts = _reuse_key_parts(resolved, raw.files, raw.digests) \
        if opts.new_since is not None and resolved.settings.cache_dir is not None and not resolved.hosts else None
    at = _findings_at_revision(resolved, opts.new_since, parts) if opts.new_since is not None else None
    at_revision = at.findings if at is not None else None
    if parts is not None:
        _keep_for_a_later_revision(resolved, raw, parts)
    result = postprocess(raw, resolved, opts, at_revision)
    if at is not None and at.resolved is not None:
        result.stats["hidden_by_configuration"] = _hidden_by_configuration(at, opts, result)
    if at is not None:
        result.stats["revision_served_from_cache"] = at.served_from_cache
        # The time line counts REF's analysis too (reading it from git, analysing it, or serving it).
        result.stats["revision_seconds"] = round(time.perf_counter() - started, 3)
        result.stats["seconds"] = round(result.stats.get("seconds", 0) + result.stats["revision_seconds"], 3)
    if not result.files and not result.errors:
        click.echo(f"attn-lint: warning: no Python files found in {', '.join(map(printable, resolved.paths))}",
                   err=True)

    if opts.write_baseline:
        from . import baseline
        # Every finding, latent ones too: one that changes confidence later is not new.
        try:
            n = baseline.write(opts.write_baseline, result.findings + result.latent, _abs_map(result),
                               _baseline_root(resolved, opts.write_baseline), resolved.config.root)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        click.echo(f"attn-lint: wrote {n} finding{'s' if n != 1 else ''} to baseline {opts.write_baseline}",
                   err=True)
        return 0

    left_unwritten = False  # --fix left a file as it is (changed meanwhile, read-only, write failed)
    refused_writes = False  # --fix refused a file whose real path lies outside the project
    if opts.fix or opts.diff:
        from . import fix as fixer
        fixable = result.findings + (result.latent if resolved.show_latent else [])
        # Only the files asked about are written: a finding shown because its evidence cites them
        # lies elsewhere (as ruff writes only the files it is given).
        elsewhere = [f for f in fixable if RunFacts.of(f).cited_in_paths]
        if elsewhere and not opts.quiet:
            _tell(f"attn-lint: note: --fix{'/--diff' if opts.diff else ''} leaves {len(elsewhere)} finding"
                  f"{'s' if len(elsewhere) != 1 else ''} located outside the paths given as they are "
                  f"(run it on {', '.join(sorted({printable(f.path) for f in elsewhere}))} to fix them)")
        fixable = [f for f in fixable if not RunFacts.of(f).cited_in_paths]
        plans = fixer.plan(result, fixable)
        if opts.diff:
            for note in fixer.notes(plans):
                click.echo(f"attn-lint: {printable(note)}", err=True)
            text = fixer.diff(plans)
            if text:
                click.echo(text, nl=False)
            return 1 if text or any(fp.unwritten for fp in plans) else 0
        n_fixed, n_files = fixer.apply(plans, (resolved.config.root, *resolved.paths))
        refused_writes = any(fp.refused for fp in plans)
        for note in fixer.notes(plans):  # after writing, so that the files left as they are are named too
            click.echo(f"attn-lint: {printable(note)}", err=True)
        left_unwritten = any(fp.unwritten for fp in plans)
        if n_fixed:
            click.echo(f"attn-lint: fixed {n_fixed} finding{'s' if n_fixed != 1 else ''} in {n_files} "
                       f"file{'s' if n_files != 1 else ''}", err=True)
            result = postprocess(_analyse(resolved), resolved, opts, at_revision)

    # --- runtime verification plugs in here: it receives the post-processed Result. ---
    verification, gpu_problem = None, None  # {Finding: Verification}; why the GPU step could not run
    if opts.verify:
        from ...runtime_check.verify import Source, run_for_cli
        if result.context is None:  # re-analysed after --fix without the context
            result = postprocess(_analyse(resolved, keep_context=True), resolved, opts, at_revision)
        source = Source(tuple(resolved.paths), resolved.settings,
                        tuple(p for p in (resolved.settings.cache_dir,) if p))
        verification, gpu_problem = run_for_cli(result, gpu=opts.verify_gpu, task_time_limit=opts.verify_time_limit,
                                                memory_limit=opts.verify_memory_limit, latent=resolved.show_latent,
                                                source=source)
        for note in result.stats.get("verification_notes", ()):
            click.echo(f"attn-lint: note: --verify: {printable(note)}", err=True)
        if gpu_problem:
            click.echo(f"attn-lint: {gpu_problem}", err=True)
    # --- end runtime verification ---

    _emit_to(opts, resolved, lambda: emit(result, resolved, opts, verification))
    if refused_writes:
        return 2  # a link aimed a write outside the project: not a finding, a refusal
    if gpu_problem:
        return 2  # --verify-on-gpu could not run its GPU part (the CPU verdicts were printed)
    if any(e.kind == "missing-path" for e in result.errors):
        # A mistyped path must not pass CI as "no findings": the rest was analysed, but the
        # command line was wrong.
        return 2
    if opts.exit_zero:
        return 0  # asked for: findings, unwritten fixes and unanalysable files leave it 0
    if result.errors and not opts.ignore_file_errors:
        return 1  # a commit with a syntax error must not pass the hook as "no findings" (ruff agrees)
    return 1 if failing(result.findings, resolved.fail_on) or left_unwritten else 0


def _emit_to(opts: RunOptions, resolved: Resolved, write) -> None:
    """Run `write` with standard output going to `--output-file` where one is given (the command
    line's own path: it may name anything, but never a link, which could aim the write elsewhere)."""
    if not opts.output_file:
        write()
        return
    import contextlib

    from ..userfiles import Refused, output_target
    try:
        output_target(opts.output_file, resolved.config.root, f"--output-file {opts.output_file}")
    except Refused as exc:
        raise CliError(str(exc)) from None
    try:
        with open(opts.output_file, "w", encoding="utf-8") as fh, contextlib.redirect_stdout(fh):
            write()
    except OSError as exc:
        raise CliError(f"--output-file {printable(opts.output_file)}: {exc.strerror or exc}") from None


def _tell(text: str) -> None:
    """One line for the user on standard error: wrapped at words to a terminal's width, its later
    lines indented (a pipe or a log gets it whole)."""
    if sys.stderr.isatty():
        import shutil
        import textwrap
        text = textwrap.fill(text, width=max(shutil.get_terminal_size().columns, 40), subsequent_indent="    ",
                             break_on_hyphens=False, break_long_words=False)
    click.echo(text, err=True)


def failing(findings, fail_on: str) -> list:
    """The findings that make the exit status 1 under `--fail-on`: those at that confidence or above.
    A finding of a rule outside the tree phase (AL900, an unused suppression) is no claim of drift
    and has no confidence to gate: it always counts."""
    from ...rules import RULES_BY_CODE
    from ..findings import LEVELS
    floor = LEVELS.index(fail_on)
    return [f for f in findings if (f.code in RULES_BY_CODE and RULES_BY_CODE[f.code].phase != "tree")
            or LEVELS.index(f.confidence) >= floor]


@dataclasses.dataclass
class _AtRevision:
    findings: list  # REF's findings under the run's settings
    config: Config | None = None  # REF's configuration, where the run's is the repository's own
    resolved: Resolved | None = None  # the run resolved with REF's configuration, where that differs
    shown: list | None = None  # REF's findings under REF's configuration, where that differs
    served_from_cache: bool = False  # a run analysed REF's very contents before (revision_reuse.py)


def _own_config(resolved: Resolved) -> tuple[bool, str]:
    """Whether the run's configuration is the repository's own file, and that file's path."""
    own = not resolved.args.get("config_file") and not resolved.args.get("isolated")
    return own, resolved.config.path or os.path.join(resolved.config.root, "pyproject.toml")


def _reuse_key_parts(resolved: Resolved, files: list, raw_digests: dict[str, str]):
    """(repository root, repository path -> blob id of the files analysed now, the configuration's
    blob id: "" where the run's configuration is not the repository's own file, None where that
    file is missing); None where the analysed files are not all in one repository."""
    from ..files.revision import RevisionError, repository_root
    from . import revision_reuse as reuse
    try:
        root = repository_root(resolved.config.root)
    except RevisionError:
        return None
    cache = Cache(resolved.settings.cache_dir)
    known = cache.load(reuse.blobs_entry(root)) or {}
    size = len(known)
    digests = {f.path: d for f in files if (d := raw_digests.get(f.path))}
    analysed = reuse.work_files([f.path for f in files], root, digests, known)
    if analysed is None:
        return None
    if len(known) != size:  # keep the pairs of the contents analysed now: old ones would only grow it
        wanted = set(digests.values())
        cache.store(reuse.blobs_entry(root), {d: b for d, b in known.items() if d in wanted})
    own, config_path = _own_config(resolved)
    config = ""
    if own:
        got = reuse.work_files([config_path], root) if os.path.lexists(config_path) else {}
        if got is None:
            return None
        config = next(iter(got.values()), None)
    return root, analysed, config


def _keep_for_a_later_revision(resolved: Resolved, raw: Result, parts: tuple) -> None:
    """Keep this run's findings, as a revision's are compared (every confidence, before the
    changed-files filter, paths relative to the repository), under the contents it analysed
    (`parts`: _reuse_key_parts): the next commit's `--new-since HEAD` is this very content
    (linter/app/revision_reuse.py)."""
    from . import revision_reuse as reuse
    if raw.reads is None:
        return
    root, analysed, config = parts
    cache = Cache(resolved.settings.cache_dir)
    if reuse.served(cache, resolved.settings.key(), analysed, config) is not None:
        return  # these very contents were kept by an earlier run (a hook run again, say)
    shown = postprocess(raw, resolved, RunOptions())
    abs_of = _abs_map(shown)
    findings = [dataclasses.replace(f, path=path_within(abs_of.get(f.path, f.path), root, f.path))
                for f in shown.findings + shown.latent]
    from ..files.discover import import_root
    roots = sorted({import_root(f) for f in raw.files})
    base = os.path.commonpath(roots) if roots else root
    reuse.keep(cache, resolved.settings.key(), analysed, config, findings, raw.reads, base, root)


def _served_at_revision(resolved: Resolved, ref: str, parts: tuple) -> list | None:
    """REF's findings without reading REF's files, where a run analysed its very contents."""
    from ..files.revision import RevisionError, listing
    from . import revision_reuse as reuse
    root, analysed, _config = parts
    own, config_path = _own_config(resolved)
    try:
        _commit, listed, extra = listing(ref, resolved.paths, resolved.config.root,
                                         extra=(config_path,) if own else ())
    except RevisionError:
        return None  # said by the snapshot that follows
    at_config = (next(iter(extra.values()), None) if own else "")
    return reuse.served(Cache(resolved.settings.cache_dir), resolved.settings.key(),
                        reuse.at_revision_files(listed, set(analysed), root), at_config)


def _findings_at_revision(resolved: Resolved, ref: str, parts: tuple | None = None) -> _AtRevision:
    """Every finding (latent ones too: one changing confidence is not new) of the analysed paths
    as they are at git revision `ref`, with the same settings; paths relative to the repository.
    Where the run's configuration is the repository's own and `ref`'s hides other findings, the
    same under `ref`'s configuration too (the `not shown:` line counts what the change hides).
    Served without reading REF where a run already analysed its contents (`parts`: this run's,
    _reuse_key_parts)."""
    from ..files.revision import RevisionError, snapshot
    if parts is not None:
        served = _served_at_revision(resolved, ref, parts)
        if served is not None:
            return _AtRevision(served, served_from_cache=True)
    own, config_path = _own_config(resolved)
    try:
        snap = snapshot(ref, [p for p in resolved.paths if p not in resolved.hosts], resolved.config.root,
                        extra=(config_path,) if own else ())
    except RevisionError as exc:
        raise CliError(f"--new-since: {exc}") from None
    out = _AtRevision([])
    if own:
        raw = next(iter(snap.extra.values()), None)
        try:
            out.config = config_from_bytes(raw, config_path, resolved.config.root,
                                           f"{printable(ref)}:{os.path.basename(config_path)}") \
                if raw is not None else Config(root=resolved.config.root)
            if hides_differently(resolved.config, out.config):
                out.resolved = resolve(**{**resolved.args, "config": out.config})
        except (ConfigError, ValueError):
            out.config = out.resolved = None  # REF's own file is broken: nothing to compare with
    try:
        for entry in snap.left_out:
            click.echo(f"attn-lint: note: --new-since: left out {printable(entry)}", err=True)
        if not snap.paths:
            out.shown = [] if out.resolved is not None else None
            return out
        # Summaries are kept (by content: most files did not change), the run's own entries not.
        scratch_cache = Cache(resolved.settings.cache_dir, keeps_runs=False)

        def found(res: Resolved) -> list:
            paths = list(snap.paths) + list(resolved.hosts)  # a host outside the repository: as it is
            # Shown from REF's copy: the paths in the repository, messages included.
            settings = dataclasses.replace(res.settings, display_base=snap.folder)
            result = postprocess(analyse(paths, settings, cache=scratch_cache),
                                 dataclasses.replace(res, paths=paths), RunOptions())
            abs_of = _abs_map(result)

            def at_ref(path: str) -> str:  # the path in the repository (REF's scratch copy is gone after)
                return path_within(abs_of.get(path, path), snap.folder, path)

            return [dataclasses.replace(f, path=at_ref(f.path),
                                        evidence=tuple(dataclasses.replace(e, path=at_ref(e.path))
                                                       for e in f.evidence))
                    for f in result.findings + result.latent]

        out.findings = found(resolved)
        if out.resolved is not None:
            out.shown = found(out.resolved)
        return out
    finally:
        snap.remove()


def _hidden_by_configuration(at: _AtRevision, opts: RunOptions, result: Result) -> int:
    """How many findings the run shows under REF's configuration and not under the work tree's:
    a change that edits `[tool.attn-lint]` to hide its own drift says so in the report."""
    from ..model.identity import identity
    shown = postprocess(_analyse(at.resolved), at.resolved, opts, at.shown)
    now = {identity(f) for f in result.findings}
    return sum(1 for f in shown.findings if identity(f) not in now)


def _analyse(resolved: Resolved, keep_context: bool = False) -> Result:
    """The engine, with a progress line on stderr when stderr is a terminal (never in pipes or CI
    logs): the phase and its counts (files parsed of those that changed, summaries loaded, rules
    run). It is transient: nothing of it is left once the report prints."""
    stream = sys.stderr
    if stream is not None and stream.isatty() and not os.environ.get("CI"):
        from rich.console import Console
        from rich.live import Live
        from rich.spinner import Spinner
        console = Console(file=stream, no_color=bool(os.environ.get("NO_COLOR")))
        spinner = Spinner("dots", text=f"attn-lint: analysing {', '.join(map(printable, resolved.paths))}",
                          style="status.spinner")
        with Live(spinner, console=console, transient=True, refresh_per_second=12.5) as live:
            def show(text: str) -> None:
                spinner.update(text=text)
                live.refresh()  # each change shows (the _Progress throttle keeps them few)
            return _analyse_here_or_served(resolved, keep_context, _Progress(show))
    return _analyse_here_or_served(resolved, keep_context)


class _Progress:
    """The engine's progress callback, shown as one line: at most ten changes a second (a large
    tree parses thousands of files a second), every change of phase at once."""

    WORDS = {"discover": "finding files", "parse": "parsing {done:,} of {total:,} files",
             "load": "loading {done:,} of {total:,} cached summaries", "index": "indexing {total:,} modules"}

    def __init__(self, show):
        self.show = show
        self.phase = None
        self.shown_at = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        import time
        now = time.monotonic()
        if phase == self.phase and now - self.shown_at < 0.1 and done < total:
            return
        self.phase, self.shown_at = phase, now
        words = self.WORDS.get(phase, "checking {phase} (rule {n} of {total})")
        self.show(f"attn-lint: {words.format(phase=phase, done=done, total=total, n=done + 1)}")


def _analyse_here_or_served(resolved: Resolved, keep_context: bool, progress=None) -> Result:
    # The server cannot hand back the in-memory context that --fix and --verify work on, and a CI
    # job runs once: a background process would only outlive it.
    asked = resolved.server == "start"
    if not keep_context and not os.environ.get("CI"):
        problem = None
        if resolved.server != "off" and (asked or may_be_listening(resolved.settings.cache_dir, resolved.config.root)):
            from . import server
            result, problem = server.analyse(resolved.paths, resolved.settings, resolved.config.root, spawn=asked)
            if result is not None:
                return result
            if not asked and problem == server.NOT_RUNNING:
                problem = None  # none to use, none asked for: nothing to say
        elif resolved.settings.cache_dir is None and resolved.server_asked:
            # --no-cache turns the server off, but it was asked for: that fallback gets its note too.
            problem = "the server needs the cache (--no-cache was given)"
        if problem:  # one line for every fallback from a server asked for or found
            click.echo(f"attn-lint: running without the server: {printable(problem)}", err=True)
    return analyse(resolved.paths, resolved.settings, keep_context=keep_context, progress=progress)


def _widened(resolved: Resolved, request: CheckRequest, opts: RunOptions) -> tuple[Resolved, RunOptions]:
    """The run on the project the paths belong to (scope.py), reporting on the paths given."""
    from ..files.scope import widened
    cfg = resolved.config
    src = [os.path.join(cfg.root, s) for s in cfg.src] if "src" in cfg.sources else []
    scope = widened(list(request.paths), src, cfg.root)
    if scope.report is None:
        return resolved, opts
    return (resolve(**{**resolved.args, "paths": scope.analyse, "start": request.paths[0]}),
            dataclasses.replace(opts, report_within=scope.report, context=scope.context))


def _with_hosts(resolved: Resolved, opts: RunOptions, raw: Result) -> tuple[Resolved, RunOptions, list[str]]:
    """The run again with the source of each package the tree extends as a plug-in (scope.py),
    reporting on the tree alone, with the options it asks; and what to say of the hosts found or
    missing."""
    from ..files.scope import find_host, hosts
    notes: list[str] = []
    found = hosts(raw.stats.get("outside_bases") or {}, raw.stats.get("classes") or 0)
    added: list[str] = []
    tree = ", ".join(map(printable, opts.report_within or resolved.paths))
    for host in found:
        name = host.name
        folder = find_host(name, opts.host_folders, tuple(resolved.paths))
        how = (f"{tree} extends {host.distinct} classes of `{printable(name)}` ({host.derived} of its "
               f"{raw.stats.get('classes')} classes derive from them)")
        if folder is None:
            notes.append(f"{how}, whose source is not on the import path: families are cut off at those bases "
                         f"and drift across them is not seen (--host FOLDER names its source)")
            continue
        added.append(folder)
        notes.append(f"{how}: analysed with its source at {printable(folder)} as context; findings of "
                     f"`{printable(name)}` alone are not reported")
    if not added:
        return resolved, opts, notes
    if opts.report_within is None and opts.changed_files is None:
        opts = dataclasses.replace(opts, report_within=tuple(resolved.paths))
    again = resolve(**{**resolved.args, "paths": tuple(resolved.paths) + tuple(added),
                       "start": resolved.args.get("start") or (resolved.paths[0] if resolved.paths else None)})
    again = dataclasses.replace(
        again, settings=dataclasses.replace(again.settings, link_roots=tuple(again.settings.link_roots) + tuple(added)),
        paths=list(resolved.paths) + added,  # (whole_project runs name no paths: keep those found)
        hosts=tuple(added))
    return again, opts, notes


def _python_only(paths: list[str]) -> list[str]:
    """The paths without files given by name that are not Python source (`notes.md`): each is
    skipped with a warning rather than parsed as Python."""
    kept = []
    for p in paths:
        if os.path.isfile(p) and not p.endswith((".py", ".pyi")):
            click.echo(f"attn-lint: warning: {printable(p)} is not a Python file (.py, .pyi); skipped", err=True)
        else:
            kept.append(p)
    return kept


def _baseline_root(resolved: Resolved, baseline_file: str) -> str:
    """What baseline paths are relative to: the project root (the folder of the pyproject.toml
    with the table, or the git root); with neither, the baseline file's own folder, so that the
    same finding has the same key whichever folder the run starts in."""
    root = resolved.config.root
    if resolved.config.path or os.path.exists(os.path.join(root, ".git")):
        return root
    return os.path.dirname(os.path.abspath(baseline_file))


def _abs_map(result: Result) -> dict[str, str]:
    return {f.display: f.path for f in result.files}


def postprocess(result: Result, resolved: Resolved, opts: RunOptions, at_revision: list | None = None) -> Result:
    """The single place where findings are changed or dropped after the engine."""
    findings = list(result.findings)
    stats = dict(result.stats)
    abs_of = _abs_map(result)

    if resolved.severity:
        findings = [dataclasses.replace(f, severity=resolved.severity[f.code]) if f.code in resolved.severity
                    else f for f in findings]

    from ...rules import SUPPRESSION_RULES
    from ..files.suppress import apply_suppressions
    outcome = apply_suppressions(findings, result.files, report_unused=opts.report_unused,
                                 active_codes=tuple(r.code for r in resolved.settings.rules()))
    unused = [f for rule in SUPPRESSION_RULES for f in rule.check_suppressions(outcome.stale)] \
        if opts.report_unused else []
    findings = unused if opts.only_unused else outcome.kept + unused
    stats["suppressed"] = len(outcome.suppressed)

    if resolved.per_file_ignores:
        before = len(findings)
        findings = [f for f in findings if not (f.path in abs_of and
                                                resolved.per_file_ignored(abs_of[f.path], f.code))]
        stats["per_file_ignored"] = before - len(findings)

    if resolved.dismissed:
        from ..model.identity import identity
        before = len(findings)
        findings = [f for f in findings if identity(f) not in resolved.dismissed]
        stats["dismissed"] = before - len(findings)

    within = opts.changed_files if opts.changed_files is not None else opts.report_within
    if within is not None:
        findings, stats[CITED_KEY], stats["outside_paths"] = about(findings, within, abs_of)

    if opts.baseline and not opts.write_baseline:
        from . import baseline
        try:
            known = baseline.load(opts.baseline)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        if known.version < baseline.BASELINE_VERSION:
            click.echo(f"attn-lint: note: baseline {printable(opts.baseline)} is version {known.version}, keyed by "
                       f"file and implementations: a finding whose module moved or that names one more "
                       f"implementation shows as new. Write it again with --write-baseline to key it by "
                       f"identity.", err=True)
        findings, covered = baseline.filter_new(findings, known, abs_of, _baseline_root(resolved, opts.baseline))
        stats["baselined"] = covered

    fixed = None
    if at_revision is not None:  # REF's findings, every confidence (--new-since)
        from collections import Counter

        from ..model.identity import identity
        from . import baseline
        if opts.show_fixed:  # REF's findings not covered by today's: the other direction
            fixed, _ = baseline.filter_new(at_revision, Counter(identity(f) for f in findings), {}, None)
        findings, covered = baseline.filter_new(findings, Counter(identity(f) for f in at_revision),
                                                abs_of, None)
        stats["at_revision"] = covered

    if opts.only:
        from ..model.identity import identity
        findings = [f for f in findings if any(identity(f).startswith(p) for p in opts.only)]
    findings.sort(key=lambda f: f.sort_key)
    # Everything above applies to latent findings too (a suppression that silences one is used);
    # only now are they set apart, so that the report and the exit status count the others.
    from ..findings import LOW
    latent = [f for f in findings if f.confidence == LOW]
    findings = [f for f in findings if f.confidence != LOW]
    if fixed is not None:  # the same split: a latent finding gone is shown where latent ones are
        stats["fixed_since_revision"] = sum(1 for f in fixed if f.confidence != LOW)
        stats["fixed_latent_since_revision"] = len(fixed) - stats["fixed_since_revision"]
        fixed = [f for f in fixed if f.confidence != LOW or resolved.show_latent]
    stats["latent"] = len(latent)
    stats["by_confidence"] = {level: sum(1 for f in findings + latent if f.confidence == level)
                              for level in ("high", "medium", "low")}
    by_rule = {r.code: sum(1 for f in findings if f.code == r.code) for r in resolved.settings.rules()}
    if opts.report_unused:
        by_rule.update((r.code, sum(1 for f in findings if f.code == r.code)) for r in SUPPRESSION_RULES)
    stats["by_rule"] = by_rule
    return dataclasses.replace(result, findings=findings, latent=latent, stats=stats, fixed=fixed)


def about(findings: list, paths: tuple[str, ...], abs_of: dict[str, str]) -> tuple[list, int, int]:
    """The findings located in `paths` (files, or folders standing for every file under them), or
    whose evidence cites a line in them: those get CITED_KEY, the first such line, so the report
    can say why they are shown. Also how many were kept that way and how many lie outside
    (latent ones aside: counted where they are shown)."""
    wanted = {os.path.realpath(p) for p in paths}
    folders = tuple(p.rstrip(os.sep) + os.sep for p in wanted if os.path.isdir(p))

    memo: dict[str, bool] = {}  # a path cited by many findings is resolved once

    def inside(path: str) -> bool:
        hit = memo.get(path)
        if hit is None:
            real = os.path.realpath(abs_of[path]) if path in abs_of else None
            hit = memo[path] = real is not None and (real in wanted or (bool(folders) and real.startswith(folders)))
        return hit

    kept, cited, outside = [], 0, 0
    for f in findings:
        if inside(f.path):
            kept.append(f)
            continue
        link = next((e for e in f.evidence if inside(e.path)), None)
        if link is None:
            outside += f.confidence != "low"
            continue
        cited += f.confidence != "low"
        kept.append(f.with_facts(RunFacts(cited_in_paths=f"{link.path}:{link.line}")))
    return kept, cited, outside


def emit(result: Result, resolved: Resolved, opts: RunOptions, verification: dict | None = None) -> None:
    fmt = resolved.fmt
    n_latent = len(result.latent)
    if not resolved.show_latent:
        result = dataclasses.replace(result, latent=[])  # the formatters render whatever latent is left
    if opts.statistics:
        from ..report.statistics import render
        click.echo(render(result, as_json=fmt in ("json", "sarif")))
        return
    abs_of = _abs_map(result)
    root = resolved.config.root

    def path_of(display: str) -> str:
        full = abs_of.get(display)
        return path_within(full, root, display) if full else display

    if fmt == "json":
        from ..report.json_report import render
        if verification is not None:  # runtime verification: a `verification` per finding
            from ...runtime_check.verify import json_extra
            click.echo(render(result, extra=json_extra(verification), show_latent=resolved.show_latent))
        else:
            click.echo(render(result, show_latent=resolved.show_latent))
    elif fmt == "concise":
        from ..report.concise import render
        text = render(result)
        if text:
            click.echo(text)
    elif fmt == "github":
        from ..report.github import render
        text = render(result, path_of, verbose=opts.verbose)
        if text:
            click.echo(text)
    elif fmt == "sarif":
        from ..report.sarif import render
        extra = None
        if verification is not None:  # the verdicts travel as result properties
            from ...runtime_check.verify import json_extra
            extra = json_extra(verification)
        click.echo(render(result, path_of, root, extra))
    else:
        from ..report.text import make_console, render
        render(result, make_console(color=opts.color), verbose=opts.verbose, summary=not opts.quiet)
        if opts.quiet:
            return
        # (REF is the user's text, `HEAD@{1}` say: never a format string)
        words = {"outside_paths": "elsewhere in the code analysed" if opts.changed_files is None
                 else "not touching the changed files",
                 "suppressed": "suppressed by comments", "dismissed": "dismissed in the configuration",
                 "baselined": "in the baseline", "at_revision": f"already at {printable(opts.new_since or '')}",
                 "hidden_by_configuration": f"hidden by configuration changed since {printable(opts.new_since or '')} "
                                            "(its configuration shows them)"}
        hidden = [f"{n} {words[k]}" for k in words if (n := result.stats.get(k))]
        if n_latent and not resolved.show_latent:
            hidden.append(f"{n_latent} latent (low confidence; --show-latent lists them)")
        if opts.context:
            n_cited = result.stats.get(CITED_KEY) or 0
            _tell(f"attn-lint: note: analysed {', '.join(map(printable, opts.context))} around "
                  f"{', '.join(map(printable, opts.report_within or ()))} (the probes, builders and families there "
                  f"decide what is drift); shown: the findings located in the paths given"
                  + (f", and {n_cited} whose evidence cites them" if n_cited else "")
                  + " (--no-context analyses the paths alone)")
        if hidden:
            _tell(f"attn-lint: not shown: {', '.join(hidden)}")
        below = len(result.findings) - len(failing(result.findings, resolved.fail_on))
        if below:
            _tell(f"attn-lint: {below} finding{'s' if below != 1 else ''} below confidence {resolved.fail_on} "
                  f"shown, not failing the run (fail-on {resolved.fail_on})")
    if result.fixed is not None and fmt in ("text", "concise"):
        ref = printable(opts.new_since or "")
        n = result.stats.get("fixed_since_revision", 0)
        n_latent_fixed = result.stats.get("fixed_latent_since_revision", 0)
        latent_words = "" if not n_latent_fixed else f" (and {n_latent_fixed} latent" + \
            ("" if resolved.show_latent else ": --show-latent lists them") + ")"
        click.echo(f"Fixed since {ref}: {n}{latent_words}")
        for f in result.fixed:  # where it was: REF's path and line (the work tree's lines have moved)
            click.echo(printable(f"  {opts.new_since}:{f.path}:{f.line}: {f.code} [{f.confidence}] {f.message}"))
    elif result.fixed is not None and fmt != "json":
        click.echo(f"attn-lint: {result.stats.get('fixed_since_revision', 0)} finding(s) of "
                   f"{printable(opts.new_since)} fixed since", err=True)
    # --- runtime verification: the verdict table after the report (stderr for machine formats) ---
    if verification is not None and fmt != "json":
        from ...runtime_check.verify import render_table
        from ..report.text import make_console
        render_table(verification, make_console(None if fmt == "text" else sys.stderr))
    # --- end runtime verification ---


def _show_settings(resolved: Resolved) -> None:
    import json
    width = max(len(k) for k, _, _ in resolved.describe())
    for key, value, source in resolved.describe():
        shown = value if isinstance(value, str) else json.dumps(value)
        click.echo(f"{key:<{width}} = {shown}" + (f"    # {source}" if source else ""))


# --------------------------------------------------------------------------------------------------
# Rule documentation
# --------------------------------------------------------------------------------------------------

def _all_rule_docs():
    from ...rules import ALL_RULES
    return [(r.code, r.name, r.severity, r.summary, r.doc) for r in ALL_RULES]


@main.command("rules", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(fmt):
    """List the rules: code, name, severity and a one-line summary."""
    rows = _all_rule_docs()
    if fmt == "json":
        import json
        click.echo(json.dumps([{"code": c, "name": n, "severity": s, "summary": m} for c, n, s, m, _ in rows],
                              indent=2))
        return
    w = max(len(n) for _, n, _, _, _ in rows)
    for code, name, severity, summary, _ in rows:
        click.echo(f"{code}  {name:<{w}}  {severity:<7}  {summary}")


@main.command("rule", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("code")
def rule_command(code):
    """Print the documentation of rule CODE (for example AL001), or of the rule named CODE."""
    wanted = code.strip()
    for c, name, severity, summary, doc in _all_rule_docs():
        if wanted.upper() == c or wanted.lower() == name:
            text = f"# {c} {name} ({severity})\n\n{summary}\n\n{doc}"
            if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
                from rich.console import Console
                from rich.markdown import Markdown
                Console().print(Markdown(text))
            else:
                click.echo(text.rstrip("\n"))
            return
    click.echo(f"attn-lint: unknown rule {code!r}; `attn-lint rules` lists them", err=True)
    sys.exit(2)


@main.group("server", context_settings={"help_option_names": ["-h", "--help"]})
def server_group():
    """The resident server that `--server` runs through: start, stop, status, run.

    One server per project (its root as `check` finds it: the nearest pyproject.toml with a
    [tool.attn-lint] table, else the git root) and cache folder, whichever environment started it:
    the `attn-lint-server` pre-commit hook's is found here too."""


def _server_target(cache_dir: str | None, project: str | None) -> tuple[str, str]:
    """(cache folder, project root) as `check` resolves them from the current directory. A server
    command that cannot go on says why in one line and exits 2, as `check` does."""
    try:
        resolved = resolve((), whole_project=True, start=project)
    except ConfigError as exc:
        click.echo(f"attn-lint: configuration error: {exc}", err=True)
        sys.exit(2)
    root = os.path.abspath(project) if project else resolved.config.root
    if cache_dir:
        return os.path.abspath(cache_dir), root
    if resolved.settings.cache_dir is None:
        click.echo("attn-lint: the cache is off, so there is no server", err=True)
        sys.exit(2)
    return os.path.abspath(resolved.settings.cache_dir), root


_CACHE_OPTION = click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
                             help="The cache folder the server serves [default: as `check` resolves it].")
_PROJECT_OPTION = click.option("--project", type=click.Path(file_okay=False, exists=True), default=None,
                               help="The project root the server serves [default: the current directory's "
                                    "project, as `check` finds it].")


@server_group.command("start")
@_CACHE_OPTION
@_PROJECT_OPTION
@click.option("--idle", type=float, default=None, help="Seconds without a run before it exits [default: 1800].")
def server_start(cache_dir, project, idle):
    """Start this project's server in the background (nothing happens if one is running)."""
    from . import server
    directory, root = _server_target(cache_dir, project)
    try:
        server.socket_path(directory, root, create=True)
        sock = server.start_once(directory, root, idle or server.DEFAULT_IDLE)  # one, however many start at once
    except OSError as exc:  # its folder, lock or log is refused (a link, a FIFO, another user's)
        click.echo(f"attn-lint: {printable(str(exc))}", err=True)
        sys.exit(2)
    if sock is not None:
        sock.close()
    elif server.holder(directory, root) is None:
        click.echo(f"attn-lint: the server did not start; see {server.log_path(directory, root)}", err=True)
        sys.exit(2)
    click.echo(f"attn-lint: server running for {root} (cache {directory})")


@server_group.command("stop")
@_CACHE_OPTION
@_PROJECT_OPTION
@click.option("--all", "every", is_flag=True, help="Stop the servers of every project on this cache folder.")
def server_stop(cache_dir, project, every):
    """Stop this project's server (with --all, every project's)."""
    from . import server
    directory, root = _server_target(cache_dir, project)
    if every:
        stopped = server.stop_all(directory)
        for p in stopped:
            click.echo(f"attn-lint: server for {p} stopped")
        if not stopped:
            click.echo(f"attn-lint: no server is running on the cache {directory}")
        return
    stopped = server.stop(directory, root)
    click.echo(f"attn-lint: server for {root} stopped" if stopped else f"attn-lint: no server is running for {root}")


@server_group.command("status")
@_CACHE_OPTION
@_PROJECT_OPTION
def server_status(cache_dir, project):
    """Say whether this project's server is running (and which others are); exit 1 when it is not."""
    from . import server
    directory, root = _server_target(cache_dir, project)
    pid = server.holder(directory, root)
    others = [(p, proj) for p, proj in server.running(directory) if proj != os.path.realpath(root)]
    if pid is None:
        click.echo(f"attn-lint: no server is running for {root} (cache {directory})")
    else:
        try:
            server.socket_path(directory, root)
        except OSError as exc:  # its folder is refused: the paths printed below would raise
            click.echo(f"attn-lint: {printable(str(exc))}", err=True)
            sys.exit(2)
        reply = server.control(directory, root, "ping", timeout=3.0)
        if not reply or "ok" not in reply:
            click.echo(f"attn-lint: server pid {pid} for {root} does not answer on its socket "
                       f"{server.socket_path(directory, root)} (`attn-lint server stop` ends it); "
                       f"log {server.log_path(directory, root)}")
        else:
            info = reply["ok"]
            build = "" if info.get("key") == server.SERVER_KEY else \
                " (another build of attn-lint: a `--server` run from here replaces it)"
            click.echo(f"attn-lint: server pid {info['pid']} for {info.get('project', root)}, cache {directory}, "
                       f"{info['summaries']} summaries in memory, attn-lint {info.get('version', '?')} on "
                       f"{info.get('python', '?')}{build}, socket {server.socket_path(directory, root)}, "
                       f"log {server.log_path(directory, root)}")
    for other_pid, other in others:
        click.echo(f"attn-lint: also running on this cache: server pid {other_pid} for {other}")
    if pid is None:
        sys.exit(1)


@server_group.command("run")
@_CACHE_OPTION
@_PROJECT_OPTION
@click.option("--idle", type=float, default=None, help="Seconds without a run before it exits [default: 1800].")
def server_run(cache_dir, project, idle):
    """Serve in the foreground (what `start` runs detached)."""
    from . import server
    directory, root = _server_target(cache_dir, project)
    try:
        code = server.serve(directory, root, idle or server.DEFAULT_IDLE)
    except OSError as exc:  # its folder, lock or socket folder is refused (a link, a FIFO, another user's)
        click.echo(f"attn-lint: {printable(str(exc))}", err=True)
        sys.exit(2)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
