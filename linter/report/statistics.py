"""`--statistics`: how many findings each rule produced, per confidence, instead of the findings.

`count` is what the report shows and the exit status counts (confidence medium or high); latent
findings (low) are counted only with --show-latent, in a column of their own. The text ends with
what the analysis found to reason about (files, class families, wrappers, probe sites), so that
a tree with no findings says why: drift needs a wrapper and a probed hook.
"""

from __future__ import annotations

import json

from .view import Analysed


def counts(result: Analysed) -> list[tuple[str, str, int, str, dict[str, int]]]:
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


def render(result: Analysed, as_json: bool = False) -> str:
    show_latent = bool(result.latent)  # the CLI leaves latent findings in only with --show-latent
    rows = counts(result)
    if as_json:
        return json.dumps([{"code": c, "name": n, "count": k, "severity": s, "confidence": _levels(by, show_latent)}
                           for c, n, k, s, by in rows], indent=2)
    if not rows:
        return "No findings.\n" + _tree_line(result)
    width = max(len(str(k)) for _, _, k, _, _ in rows)
    lines = []
    for c, n, k, s, by in rows:
        levels = _levels(by, show_latent)
        shown = ", ".join(f"{'latent' if level == 'low' else level} {m}" for level, m in levels.items() if m)
        lines.append(f"{k:>{width}}  {c}  {n}  [{s}]  {shown}")
    total = sum(k for _, _, k, _, _ in rows)
    tail = f" and {len(result.latent)} latent" if result.latent else ""
    lines.append(f"Found {total} finding{'s' if total != 1 else ''}{tail}.")
    lines.append(_tree_line(result))
    return "\n".join(lines)


def _tree_line(result: Analysed) -> str:
    """What the analysis had to reason about, and, where one is missing, why nothing can be found."""
    st = result.stats
    if "wrappers" not in st:  # nothing was analysed (no files), or a result from an older build
        return f"Analysed {len(result.files):,} file{'' if len(result.files) == 1 else 's'}."
    families, wrappers = st.get("families", 0), st.get("wrappers", 0)
    sites, members = st.get("probe_sites", 0), st.get("probed_members", 0)
    n = len(result.files)
    line = (f"Analysed {n:,} file{'' if n == 1 else 's'}: {families:,} class "
            f"{'family' if families == 1 else 'families'}, {wrappers:,} wrapper{'' if wrappers == 1 else 's'}, "
            f"{sites:,} probe site{'' if sites == 1 else 's'} of {members:,} hook{'' if members == 1 else 's'}.")
    if not wrappers:
        line += (" No wrapper (a family member that holds others of its family and forwards to them): drift "
                 "is reported only between a wrapper and what it holds.")
    elif not sites:
        line += (" No hook is probed (hasattr, getattr with a default, try/except AttributeError): AL001 "
                 "and AL003 need a probe; AL002 checks the calls through delegates.")
    return line
