"""`--format concise`: one line per finding (`path:line:col: CODE [severity] [confidence] message`),
grep-friendly; with --show-latent, one `path:line:1: latent ...` line per (wrapper, implementation)."""

from __future__ import annotations

from . import latent
from .printable import printable
from .view import Analysed


def render(result: Analysed) -> str:
    lines = [printable(f"{f.path}:{f.line}:{f.column}: {f.code} [{f.severity}] [{f.confidence}] {f.message}")
             for f in result.findings]
    lines.extend(_latent_line(g) for g in latent.groups(result.latent))
    lines.extend(printable(f"{e.path}:{e.line or 1}:1: {e.kind}: {e.message} ({e.outcome})") for e in result.errors)
    return "\n".join(lines)


def _latent_line(g: latent.LatentGroup) -> str:
    return printable(f"{g.first.path}:{g.first.line}:1: latent ") + latent.summary(g)
