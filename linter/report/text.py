"""The terminal report: rich when stdout is a terminal, plain text otherwise (or with NO_COLOR)."""

from __future__ import annotations

import linecache
import os
import sys

from rich.console import Console
from rich.text import Text

from ..engine import Result
from ..findings import Finding

SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold blue"}


def make_console(stream=None) -> Console:
    stream = stream or sys.stdout
    plain = bool(os.environ.get("NO_COLOR")) or not stream.isatty()
    return Console(file=stream, no_color=plain, highlight=False, soft_wrap=True,
                   force_terminal=False if plain else None, emoji=False, markup=False,
                   color_system=None if plain else "auto")


def code_frame(path: str, line: int, roots: dict[str, str], context: int = 1) -> list[tuple[int, str]]:
    full = roots.get(path)
    if not full:
        return []
    out = []
    for n in range(max(1, line - context), line + context + 1):
        text = linecache.getline(full, n)
        if text:
            out.append((n, text.rstrip("\n")))
    return out


def render(result: Result, console: Console) -> None:
    roots = {f.display: f.path for f in result.files}
    for f in result.findings:
        _finding(console, f, roots)
    for e in result.errors:
        head = Text()
        head.append(f"{e.path}" + (f":{e.line}" if e.line else ""), style="bold")
        head.append(": ")
        head.append(f"{e.kind}", style="magenta")
        head.append(f": {e.message} (file skipped)")
        console.print(head)
    _summary(console, result)


def _finding(console: Console, f: Finding, roots: dict[str, str]) -> None:
    head = Text()
    head.append(f"{f.path}:{f.line}:{f.column}", style="bold")
    head.append(": ")
    head.append(f"{f.code}", style=SEVERITY_STYLE.get(f.severity, "bold"))
    head.append(f" [{f.severity}] ", style=SEVERITY_STYLE.get(f.severity, ""))
    head.append(f.message)
    console.print(head)
    for n, text in code_frame(f.path, f.line, roots):
        marker = ">" if n == f.line else " "
        console.print(Text(f"  {marker} {n:>5} | {text}", style="bold" if n == f.line else "dim"))
    if f.evidence:
        console.print(Text("    evidence:", style="dim"))
        for e in f.evidence:
            line = Text("      - ")
            line.append(f"{e.path}:{e.line}", style="cyan")
            line.append(f"  {e.note}")
            console.print(line)
    console.print()


def _summary(console: Console, result: Result) -> None:
    s = result.stats
    by_rule = s.get("by_rule", {})
    counts = ", ".join(f"{code}: {n}" for code, n in by_rule.items() if n) or "no findings"
    total = len(result.findings)
    line = Text()
    line.append(f"Found {total} finding{'s' if total != 1 else ''}", style="bold red" if total else "bold green")
    line.append(f" ({counts}) in {s.get('files', 0)} files, {s.get('lines', 0):,} lines, "
                f"{s.get('seconds', 0):.2f} s")
    if result.errors:
        line.append(f"; {len(result.errors)} file{'s' if len(result.errors) != 1 else ''} could not be analysed",
                    style="magenta")
    console.print(line)
