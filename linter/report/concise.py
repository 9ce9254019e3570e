"""`--format concise`: one line per finding (`path:line:col: CODE [severity] message`), grep-friendly."""

from __future__ import annotations

from ..engine import Result
from .printable import printable


def render(result: Result) -> str:
    lines = [printable(f"{f.path}:{f.line}:{f.column}: {f.code} [{f.severity}] {f.message}") for f in result.findings]
    lines.extend(printable(f"{e.path}:{e.line or 1}:1: {e.kind}: {e.message} (file skipped)") for e in result.errors)
    return "\n".join(lines)
