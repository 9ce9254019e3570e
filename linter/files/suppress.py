"""Inline suppressions: `# noqa`, `# noqa: AL001`, `# attn-lint: ignore[AL001]`.

A comment suppresses a finding when it sits on the finding's line or on the header of the class
the finding belongs to (for AL001/AL003 that is the finding's line; for AL002 the enclosing class of
the call). Only files that have findings are read (with `tokenize`, so strings that look like
comments do not count), and only those with a suppression comment are parsed for class headers.
With `report_unused`, every analysed file that mentions `noqa`/`attn-lint` is read, and the
suppressions that silenced nothing come back as StaleSuppression records (the rule that reports
them is rules/al900_unused_suppression.py).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field

from ..findings import Finding, unlabelled
from .discover import decode_source, open_source

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*[,\s]\s*[A-Za-z]+[0-9]+)*))?", re.I)
_MENTION = re.compile(r"noqa|attn-lint", re.I)
_MENTION_B = re.compile(rb"noqa|attn-lint", re.I)
_OURS = re.compile(r"#\s*attn-lint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.I)


@dataclass
class Suppression:
    line: int
    col: int
    codes: frozenset[str] | None  # None: every code
    ours: bool  # attn-lint's own syntax (always reportable when unused)
    text: str
    used: set[str] = field(default_factory=set)

    def matches(self, code: str) -> bool:
        return self.codes is None or code in self.codes or any(code.startswith(c) for c in self.codes)

    def relevant_codes(self) -> set[str]:
        return {c for c in (self.codes or ()) if c.startswith("AL")}


def parse_comment(text: str, line: int, col: int) -> list[Suppression]:
    out = []
    for m in _OURS.finditer(text):
        codes = m.group("codes")
        parsed = None if codes is None or not codes.strip() else frozenset(
            c.strip().upper() for c in re.split(r"[,\s]+", codes) if c.strip())
        out.append(Suppression(line, col, parsed, True, m.group(0)))
    for m in _NOQA.finditer(text):
        codes = m.group("codes")
        parsed = None if codes is None else frozenset(c.upper() for c in re.split(r"[,\s]+", codes) if c)
        out.append(Suppression(line, col, parsed, False, m.group(0)))
    return out


def scan_source(text: str) -> dict[int, list[Suppression]]:
    by_line: dict[int, list[Suppression]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                for s in parse_comment(tok.string, tok.start[0], tok.start[1]):
                    by_line.setdefault(s.line, []).append(s)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # Fall back to a line scan (the engine parsed the file, so this is rare).
        by_line.clear()
        for n, line in enumerate(text.splitlines(), 1):
            i = line.find("#")
            if i >= 0:
                for s in parse_comment(line[i:], n, i):
                    by_line.setdefault(n, []).append(s)
    return by_line


def local_class_name(class_name: str, module: str) -> str | None:
    """`Outer.Inner` for `pkg.mod.Outer.Inner` in module `pkg.mod` (also when the index labelled the
    module with its project, `proj:pkg.mod.Outer.Inner`); None for a class of another module."""
    q = unlabelled(class_name)
    if module and q.startswith(module + "."):
        return q[len(module) + 1:]
    return None


def class_headers(text: str) -> dict[str, range]:
    """Class name within its module (`Outer.Inner`) -> the lines of its header (possibly several)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, range] = {}

    def visit(body, prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = f"{prefix}.{node.name}" if prefix else node.name
                end = node.body[0].lineno - 1 if node.body else node.lineno
                out[name] = range(node.lineno, max(node.lineno, end) + 1)
                visit(node.body, name)
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body, prefix)
                visit(getattr(node, "orelse", []), prefix)

    visit(tree.body, "")
    return out


HEADER_WINDOW = 50  # lines after a class's `class` line that its header (bases, keywords) may span


def _mentions_near(text: str, findings: list[Finding], module: str) -> bool:
    """Whether a mention of noqa/attn-lint lies on a line where it could silence one of these
    findings: the finding's line, or the header of its class (`class` line and the lines after it
    that its bases may span). Tokenizing and parsing a large file costs far more than these
    searches, and most files that mention `noqa` do so for other tools."""
    mentions, line, pos = [], 1, 0
    for m in _MENTION.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        mentions.append(line)
    starts = set()
    for f in findings:
        starts.add(f.line)
        local = local_class_name(f.class_name, module)
        if local:
            name = re.escape(local.rsplit(".", 1)[-1])
            for m in re.finditer(rf"^[ \t]*class[ \t]+{name}\b", text, re.M):
                starts.add(text.count("\n", 0, m.start()) + 1)
    return any(s <= n <= s + HEADER_WINDOW for s in starts for n in mentions)


@dataclass(frozen=True)
class StaleSuppression:
    """A suppression comment that silenced nothing in this run, with the codes in it that did not."""

    path: str  # the file as the report shows it
    line: int
    col: int  # 0-based, where the comment starts
    text: str  # the comment's suppression, as written (`# noqa: AL001`)
    stale: tuple[str, ...]  # the codes that silenced nothing, or ("(all)",) for a bare attn-lint ignore


@dataclass
class SuppressOutcome:
    kept: list[Finding]
    suppressed: list[Finding]
    stale: list[StaleSuppression]


def apply_suppressions(findings: list[Finding], files, report_unused: bool = False,
                       active_codes: tuple[str, ...] = ()) -> SuppressOutcome:
    """Drop suppressed findings. `files` are the run's SourceFiles (display -> absolute path, module)."""
    by_display = {f.display: f for f in files}
    per_file: dict[str, list[Finding]] = {}
    for f in findings:
        per_file.setdefault(f.path, []).append(f)
    to_scan = set(per_file)
    if report_unused:
        to_scan |= set(by_display)

    kept: list[Finding] = []
    suppressed: list[Finding] = []
    stale: list[StaleSuppression] = []
    for display in sorted(to_scan):
        sf = by_display.get(display)
        file_findings = per_file.get(display, [])
        if sf is None:
            kept.extend(file_findings)
            continue
        try:
            with open_source(sf.path) as fh:
                raw = fh.read()
        except OSError:
            kept.extend(file_findings)
            continue
        if not _MENTION_B.search(raw):
            kept.extend(file_findings)  # no noqa / attn-lint comment anywhere: nothing to decode
            continue
        text = decode_source(raw)
        if not report_unused and not _mentions_near(text, file_findings, sf.module):
            kept.extend(file_findings)  # no suppression comment can sit on these findings' lines
            continue
        comments = scan_source(text)
        if not comments:
            kept.extend(file_findings)
            continue
        headers = None
        for f in file_findings:
            lines = {f.line}
            if headers is None and any(n != f.line for n in comments):
                headers = class_headers(text)
            local = local_class_name(f.class_name, sf.module) if headers else None
            if local is not None and local in headers:
                lines.update(headers[local])
            hit = None
            for n in sorted(lines):
                for s in comments.get(n, ()):
                    if s.matches(f.code):
                        hit = s
                        break
                if hit:
                    break
            if hit:
                hit.used.add(f.code)
                suppressed.append(f)
            else:
                kept.append(f)
        if report_unused:
            for _n, sups in sorted(comments.items()):
                for s in sups:
                    found = _stale(s, display, active_codes)
                    if found is not None:
                        stale.append(found)
    kept.sort(key=lambda f: f.sort_key)
    return SuppressOutcome(kept, suppressed, stale)


def _stale(s: Suppression, display: str, active: tuple[str, ...]) -> StaleSuppression | None:
    if s.codes is None:
        if not s.ours or s.used:
            return None  # a bare noqa comment may belong to another tool
        stale = ["(all)"]
    else:
        stale = sorted(c for c in s.relevant_codes() if c not in s.used and
                       (not active or any(a.startswith(c) or c.startswith(a) for a in active)) and
                       not any(u.startswith(c) for u in s.used))
        if not stale:
            return None
    return StaleSuppression(display, s.line, s.col, s.text.strip(), tuple(stale))
