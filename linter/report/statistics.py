"""`--statistics`: how many findings each rule produced, per confidence, instead of the findings.

`count` is what the report shows and the exit status counts (confidence medium or high); latent
findings (low) are counted only with --show-latent, in a column of their own.
"""

from __future__ import annotations

import json

from ..engine import Result


def counts(result: Result) -> list[tuple[str, str, int, str, dict[str, int]]]:
    """(code, name, count, severity, {confidence: count}) per rule and severity with findings, most
    frequent first: a rule reports some findings one level lower (AL001 on a hidden data attribute
    is a warning); the count is of the default report, latent findings only in the confidences."""
    seen: dict[tuple[str, str], list] = {}
    for f in result.findings + result.latent:
        row = seen.setdefault((f.code, f.severity), [f.code, f.name, 0, f.severity, {}])
        if f.confidence != "low":
            row[2] += 1
        row[4][f.confidence] = row[4].get(f.confidence, 0) + 1
    return sorted((tuple(r) for r in seen.values()), key=lambda r: (-r[2], r[0]))


def _levels(by: dict[str, int], show_latent: bool) -> dict[str, int]:
    out = {"high": by.get("high", 0), "medium": by.get("medium", 0)}
    if show_latent:
        out["low"] = by.get("low", 0)
    return out


def render(result: Result, as_json: bool = False) -> str:
    show_latent = bool(result.latent)  # the CLI leaves latent findings in only with --show-latent
    rows = counts(result)
    if as_json:
        return json.dumps([{"code": c, "name": n, "count": k, "severity": s, "confidence": _levels(by, show_latent)}
                           for c, n, k, s, by in rows], indent=2)
    if not rows:
        return "No findings."
    width = max(len(str(k)) for _, _, k, _, _ in rows)
    lines = []
    for c, n, k, s, by in rows:
        levels = _levels(by, show_latent)
        shown = ", ".join(f"{'latent' if level == 'low' else level} {m}" for level, m in levels.items() if m)
        lines.append(f"{k:>{width}}  {c}  {n}  [{s}]  {shown}")
    total = sum(k for _, _, k, _, _ in rows)
    tail = f" and {len(result.latent)} latent" if result.latent else ""
    lines.append(f"Found {total} finding{'s' if total != 1 else ''}{tail}.")
    return "\n".join(lines)
