"""`--format github`: GitHub Actions workflow commands, one annotation per finding.

`::error file=PATH,line=L,col=C,title=AL001 unforwarded-hook::MESSAGE` (`warning` and `notice` for
the other severities). The message says the finding's confidence; the evidence chain and the
reasons for the confidence follow, one line per link. With --show-latent, one `::notice` per
(wrapper, implementation) pairing of latent drift.
"""

from __future__ import annotations

from . import latent
from .printable import printable
from .view import Analysed

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def _data(text: str) -> str:
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(result: Analysed, path_of=None, verbose: bool = False) -> str:
    """`path_of(display) -> str` maps paths (for example to the repository root); identity by default.
    `verbose`: also the supporting evidence."""
    path_of = path_of or (lambda p: p)
    out = []
    for f in result.findings:
        body = f"{f.message} (confidence: {f.confidence})"
        shown = [e for e in f.evidence if verbose or not e.supporting]
        if shown:
            body += "\n" + "\n".join(f"  {path_of(e.path)}:{e.line}: {e.note}" for e in shown)
        if f.confidence_reasons:
            body += "\n" + "\n".join(f"  {path_of(r.path)}:{r.line}: [{r.signal}] {r.note}"
                                      for r in f.confidence_reasons)
        out.append(f"::{LEVELS.get(f.severity, 'error')} file={_prop(path_of(f.path))},line={f.line},"
                   f"col={f.column},title={_prop(f'{f.code} {f.name}')}::{_data(body)}")
    for g in latent.groups(result.latent):
        out.append(f"::notice file={_prop(path_of(g.first.path))},line={g.first.line},"
                   f"title={_prop('attn-lint latent drift')}::{_data(latent.summary(g))}")
    for e in result.errors:
        out.append(f"::warning file={_prop(path_of(e.path))},line={e.line or 1},"
                   f"title={_prop('attn-lint ' + e.kind)}::{_data(f'{e.message} ({e.outcome})')}")
    return "\n".join(out)
