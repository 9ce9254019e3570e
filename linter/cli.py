"""The command line: parse options, run the engine, hand the result to a formatter."""

from __future__ import annotations

import sys
import traceback

import click

from .. import __version__
from .engine import Settings, analyse


def _codes(values: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for v in values:
        out.extend(c.strip().upper() for c in v.split(",") if c.strip())
    return tuple(out)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
@click.option("--select", multiple=True, help="Only these rule codes (comma-separated, prefixes allowed).")
@click.option("--ignore", multiple=True, help="Skip these rule codes.")
@click.option("--exclude", multiple=True, help="Glob of paths to skip (repeatable).")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
              help="Where summaries are cached [default: $XDG_CACHE_HOME/attn-lint].")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--jobs", "-j", type=int, default=0, help="Parallel workers for parsing [default: one per core].")
@click.option("--no-astroid", is_flag=True, help="Never ask astroid for receivers the index cannot type.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@click.version_option(__version__, prog_name="attn-lint")
def main(paths, fmt, select, ignore, exclude, cache_dir, no_cache, jobs, no_astroid, debug):
    """Find backend interface drift in PATHS (files or folders).

    Exit status: 0 no findings, 1 findings, 2 usage or internal error.
    """
    if not paths:
        raise click.UsageError("give at least one file or folder to analyse")
    settings = Settings(select=_codes(select), ignore=_codes(ignore), exclude=tuple(exclude), jobs=jobs,
                        astroid=not no_astroid)
    if no_cache:
        settings.cache_dir = None
    elif cache_dir:
        settings.cache_dir = cache_dir
    try:
        result = analyse(list(paths), settings)
        if fmt == "json":
            from .report.json_report import render
            click.echo(render(result))
        else:
            from .report.text import make_console, render
            render(result, make_console())
    except KeyboardInterrupt:
        click.echo("attn-lint: interrupted", err=True)
        sys.exit(2)
    except Exception as exc:  # one clear line; the traceback only on request
        if debug:
            traceback.print_exc()
        click.echo(f"attn-lint: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
                   err=True)
        sys.exit(2)
    sys.exit(1 if result.findings else 0)
