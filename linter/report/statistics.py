"""`--statistics`: how many findings each rule produced, instead of the findings themselves."""

from __future__ import annotations

import json

from ..engine import Result


def counts(result: Result) -> list[tuple[str, str, int, str]]:
    """(code, name, count, severity) per rule and severity with findings, most frequent first: a
    rule reports some findings one level lower (AL001 on a hidden data attribute is a warning)."""
    seen: dict[tuple[str, str], list] = {}
    for f in result.findings:
        row = seen.setdefault((f.code, f.severity), [f.code, f.name, 0, f.severity])
        row[2] += 1
    return sorted((tuple(r) for r in seen.values()), key=lambda r: (-r[2], r[0]))


def render(result: Result, as_json: bool = False) -> str:
    rows = counts(result)
    if as_json:
        return json.dumps([{"code": c, "name": n, "count": k, "severity": s} for c, n, k, s in rows], indent=2)
    if not rows:
        return "No findings."
    width = max(len(str(k)) for _, _, k, _ in rows)
    lines = [f"{k:>{width}}  {c}  {n}  [{s}]" for c, n, k, s in rows]
    total = sum(k for _, _, k, _ in rows)
    lines.append(f"Found {total} finding{'s' if total != 1 else ''}.")
    return "\n".join(lines)
