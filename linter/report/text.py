"""The terminal report: rich when stdout is a terminal, plain text otherwise (or with NO_COLOR).

Each finding: `path:line:col: CODE [severity] [confidence] message`, the code around it, its
evidence, and the reasons for its confidence (`raised`/`lowered: path:line: [signal] note`). With
--show-latent, a "latent drift" section follows: one line per (wrapper, implementation) pairing.
"""

from __future__ import annotations

import functools
import os
import re
import sys

from rich.console import Console
from rich.text import Text

from ..files.discover import decode_source, open_source
from ..findings import Finding, RunFacts, short, unlabelled
from ..model.identity import identity
from . import latent as latent_report
from .printable import printable
from .view import Analysed

SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold blue"}
CONFIDENCE_STYLE = {"high": "bold", "medium": "", "low": "dim"}


def colour_wanted(stream, choice: str = "auto") -> bool:
    """`--color`: always, never, or auto: not where NO_COLOR is set, always where FORCE_COLOR is,
    else on a terminal only (https://no-color.org, https://force-color.org)."""
    if choice in ("always", "never"):
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty()


def make_console(stream=None, color: str = "auto") -> Console:
    stream = stream or sys.stdout
    plain = not colour_wanted(stream, color)
    return Console(file=stream, no_color=plain, highlight=False, soft_wrap=True,
                   force_terminal=not plain, emoji=False, markup=False,
                   color_system=None if plain else "auto")


def code_frame(path: str, line: int, roots: dict[str, str], context: int = 1,
               sources: dict[str, list[str]] | None = None) -> list[tuple[int, str]]:
    """The lines around `line`, as read now (`sources` keeps each file's lines for one report)."""
    full = roots.get(path)
    if not full:
        return []
    sources = {} if sources is None else sources
    lines = sources.get(full)
    if lines is None:
        lines = sources[full] = _read_lines(full)
    return [(n, lines[n - 1]) for n in range(max(1, line - context), min(len(lines), line + context) + 1)]


def _read_lines(path: str) -> list[str]:
    try:
        with open_source(path) as fh:  # never blocks on a FIFO put where a source file was
            text = decode_source(fh.read())
    except OSError:
        return []
    # Python's own line ends, so that the numbers match the finding's.
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()  # what follows the last line end is not a line
    return lines


def render(result: Analysed, console: Console, verbose: bool = False, summary: bool = True) -> None:
    """`verbose`: also the supporting evidence (other probe sites, how delegates were found);
    `summary`: the closing line (`--quiet` leaves it out)."""
    roots = {f.display: f.path for f in result.files}
    sources: dict[str, list[str]] = {}
    for group in _by_class(result.findings):
        if len(group) > 1:  # one wrapper's findings under one head, its code shown once
            first = group[0]
            head = Text()
            head.append(printable(f"{first.path}:{first.line}"), style="bold")
            head.append(printable(f": `{short(unlabelled(first.class_name))}`: {len(group)} findings "
                                  f"({', '.join(sorted({f.member for f in group}))})"), style="bold")
            _hanging(console, head, Text(""), 4)
            _frame(console, first, roots, sources)
        said: set = set()  # evidence lines and help a finding of the group has shown already
        for f in group:
            _finding(console, f, roots, sources, verbose, frame=len(group) == 1, said=said)
    if result.latent:
        _latent(console, result)
    for e in result.errors:
        head = Text()
        head.append(printable(f"{e.path}" + (f":{e.line}" if e.line else "")), style="bold")
        head.append(": ")
        head.append(f"{e.kind}", style="magenta")
        head.append(printable(f": {e.message} ({e.outcome})"))
        console.print(head)
    if summary:
        _summary(console, result)


def _by_class(findings: list[Finding]) -> list[list[Finding]]:
    """Consecutive findings at one class's line (a wrapper's hooks), together; the order kept."""
    groups: list[list[Finding]] = []
    for f in findings:
        last = groups[-1][-1] if groups else None
        if last is not None and (last.path, last.line, last.class_name) == (f.path, f.line, f.class_name):
            groups[-1].append(f)
        else:
            groups.append([f])
    return groups


def _frame(console: Console, f: Finding, roots: dict[str, str], sources: dict[str, list[str]]) -> None:
    for n, text in code_frame(f.path, f.line, roots, sources=sources):
        marker = ">" if n == f.line else " "
        console.print(Text(f"  {marker} {n:>5} | {printable(text)}", style="bold" if n == f.line else "dim"))


def _finding(console: Console, f: Finding, roots: dict[str, str], sources: dict[str, list[str]],
             verbose: bool, frame: bool = True, said: set | None = None) -> None:
    head = Text()
    head.append(printable(f"{f.path}:{f.line}:{f.column}"), style="bold")
    head.append(": ")
    head.append(f"{f.code}", style=SEVERITY_STYLE.get(f.severity, "bold"))
    head.append(f" [{f.severity}]", style=SEVERITY_STYLE.get(f.severity, ""))
    head.append(f" [{f.confidence}] ", style=CONFIDENCE_STYLE.get(f.confidence, ""))
    _hanging(console, head, Text(printable(f.message)), 4)
    if frame:
        _frame(console, f, roots, sources)
    said = set() if said is None else said
    shown = [e for e in f.evidence if verbose or not e.supporting]
    again = [e for e in shown if (e.path, e.line, e.note) in said]
    if shown:
        console.print(Text("    evidence:", style="dim"))
        for e in shown:
            if (e.path, e.line, e.note) in said:
                continue
            said.add((e.path, e.line, e.note))
            line = Text()
            line.append(printable(f"{e.path}:{e.line}"), style="cyan")
            line.append(printable(f"  {e.note if verbose else shortened(e.note)}"))
            _hanging(console, Text("      - "), line, 8)
    if again:
        console.print(Text(f"      ({len(again)} line{'s' if len(again) != 1 else ''} as above)", style="dim"))
    if len(shown) < len(f.evidence):
        n = len(f.evidence) - len(shown)
        console.print(Text(f"      ({n} supporting line{'s' if n != 1 else ''}: --verbose shows them)", style="dim"))
    cited = RunFacts.of(f).cited_in_paths
    if cited:  # located outside the paths asked about: say which line of theirs it rests on
        line = Text("its evidence cites ")
        line.append(printable(cited), style="cyan")
        line.append(", in the paths given")
        _hanging(console, Text("    shown: "), line, 10)
    if f.confidence_reasons:
        console.print(Text(f"    confidence {f.confidence}{_pairing_counts(f)}:", style="dim"))
        for r in f.confidence_reasons:
            line = Text()
            line.append(printable(f"{r.path}:{r.line}"), style="cyan")
            line.append(printable(f": [{r.signal}] {r.note if verbose else shortened(r.note)}"))
            _hanging(console, Text(f"      {'raised' if r.effect == 'raise' else 'lowered'}: "), line, 8)
    held = _held_from_high(f)
    if held is not None:  # what a CI gating on `high` needs to know of a `medium` finding
        line = Text()
        line.append(printable(f"{held.path}:{held.line}"), style="cyan")
        # A link the evidence above shows is named by its place; a supporting one is not shown there.
        what = "" if held in shown else f" ({shortened(held.note)})"
        line.append(printable(f" is a declared type{what}, not what the code is shown building"))
        _hanging(console, Text("    not high: ", style="dim"), line, 8)
    advice = help_line(f.code)
    if advice and ("help", f.code) not in said:
        said.add(("help", f.code))
        _hanging(console, Text("    help: ", style="bold"), Text(advice), 10)
    if verbose:  # what a reviewer copies to set it aside: [tool.attn-lint.dismissed]
        console.print(Text(f"    identity: {identity(f)}", style="dim"))
    console.print()


def _held_from_high(f: Finding):
    """For a `medium` finding of a rule that asks the built-chain signal: the first declared link
    of its chain (shown or supporting), which is what kept it from `high` (a chain with none is
    `high`: linter/signals/built_chain.py)."""
    from ...rules import RULES_BY_CODE
    rule = RULES_BY_CODE.get(f.code)
    if f.confidence != "medium" or rule is None or rule.phase != "tree" or "built-chain" in rule.skipped_signals:
        return None
    return next((e for e in f.evidence if e.declared), None)


_CLASS_LIST = re.compile(r"(?:`?[A-Z][A-Za-z0-9_]*`?, ){6,}`?[A-Z][A-Za-z0-9_]*`?")
KEPT_NAMES = 4  # names of a long class list shown before "…"


def shortened(note: str) -> str:
    """A note with each list of seven or more class names cut to its first few and a count
    (`--verbose` shows it whole): one 22-class list repeated under seven findings fills screens."""
    def cut(m: re.Match) -> str:
        names = m.group(0).split(", ")
        return ", ".join(names[:KEPT_NAMES]) + f", … ({len(names)} classes; -v lists them)"
    return _CLASS_LIST.sub(cut, note)


def _pairing_counts(f: Finding) -> str:
    """How many of the implementations the finding names are still live and how many were ruled
    out ("lowered ... cannot run" under `medium` reads as a contradiction without it)."""
    dead = set(RunFacts.of(f).latent_impls or ())
    if not f.targets or not dead:
        return ""
    live = [t for t in f.targets if t not in dead]
    if f.confidence == "low" or not live:
        return f" (every one of {len(f.targets)} implementations ruled out)"
    return f" ({len(live)} of {len(f.targets)} implementations live, {len(f.targets) - len(live)} ruled out)"


@functools.cache
def help_line(code: str) -> str:
    """The first sentence of the rule's "How to fix" (what its page says to do), and whether
    `--fix` does it."""
    from ...rules import RULES_BY_CODE
    rule = RULES_BY_CODE.get(code)
    if rule is None or "## How to fix" not in rule.doc:
        return ""
    text = rule.doc.split("## How to fix", 1)[1].strip().split("\n\n", 1)[0]
    text = " ".join(line.strip() for line in text.split("```", 1)[0].splitlines() if line.strip())
    first = text.split(". ", 1)[0].rstrip(":.") + "."
    more = f"; `attn-lint rule {code}` shows how"
    return first[:-1] + more + (" (fixable with --fix)" if getattr(rule, "fixable", False) else "") + "."


def _hanging(console: Console, prefix: Text, body: Text, indent: int) -> None:
    """`prefix` then `body`, wrapped to a terminal's width with later lines under the body's start;
    one line where the output is no terminal (a pipe or a file keeps each line whole for grep)."""
    if not console.is_terminal or console.width <= indent + 20:
        console.print(Text.assemble(prefix, body))
        return
    whole = Text.assemble(prefix, body)
    first = whole.wrap(console, console.width)[0]
    if len(first.plain.rstrip()) <= len(prefix.plain.rstrip()) and len(prefix.plain) <= indent:
        # The body's first word (a long path) did not fit beside the prefix: fold it there instead.
        for n, line in enumerate(body.wrap(console, console.width - indent, overflow="fold")):
            console.print(Text.assemble(prefix if n == 0 else Text(" " * indent), line))
        return
    console.print(first)
    tail = whole[len(first.plain):]  # what did not fit, wrapped again under the indent
    tail = tail[len(tail.plain) - len(tail.plain.lstrip()):]
    if tail.plain:
        for line in tail.wrap(console, console.width - indent):
            console.print(Text.assemble(Text(" " * indent), line))


def _latent(console: Console, result: Analysed) -> None:
    grouped = latent_report.groups(result.latent)
    console.print(Text(latent_report.heading(result.latent, len(grouped)), style="bold"))
    for g in grouped:
        console.print(Text("  " + latent_report.line(g), style=CONFIDENCE_STYLE["low"]))
    console.print()


def _summary(console: Console, result: Analysed) -> None:
    s = result.stats
    by_rule = s.get("by_rule", {})
    counts = ", ".join(f"{code}: {n}" for code, n in by_rule.items() if n)
    total = len(result.findings)
    n_files = s.get("files", 0)
    line = Text()
    if total:
        line.append(f"Found {total} finding{'s' if total != 1 else ''}", style="bold red")
        line.append(f" ({counts})")
    else:
        line.append("No findings", style="bold green")
    line.append(f" in {n_files} file{'s' if n_files != 1 else ''}, {s.get('lines', 0):,} lines, "
                f"{s.get('seconds', 0):.2f} s")
    if result.latent:
        line.append(f"; {len(result.latent)} latent")
    skipped = sum(1 for e in result.errors if e.skipped)
    if skipped:
        line.append(f"; {skipped} file{'s' if skipped != 1 else ''} could not be analysed", style="magenta")
    if len(result.errors) > skipped:
        n = len(result.errors) - skipped
        line.append(f"; {n} file{'s' if n != 1 else ''} analysed in part", style="magenta")
    _hanging(console, Text(), line, 4)  # wrapped at words on a terminal, whole in a pipe
