"""Baselines: record today's findings, later report only new ones.

A fingerprint hashes what identifies a finding, not where it sits: the rule code, the class, the
member, the file (relative to the project root) and the set of implementations it names. Moving
code up or down a file, or rewording a message, keeps the fingerprint. Several findings may share
a fingerprint (two identical calls in one class): the baseline keeps a count, and only findings
beyond that count are new.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter

from .userfiles import Refused, output_target, read_regular, replace_file
from .discover import path_within
from .findings import Finding, unlabelled

BASELINE_VERSION = 1
MAX_BASELINE_BYTES = 64 * 2**20  # a baseline of 100,000 findings is about 30 MB
MAX_COUNT = 2**31  # far above any real count; a bigger one is not a count


def fingerprint(f: Finding, path: str | None = None) -> str:
    # Class names lose the project label the index gives projects that share package names
    # (`fixtures:serving.x.C`): it depends on which folders were linted together, and the path
    # (relative to the project root) already tells the projects apart.
    key = "\x1f".join([f.code, unlabelled(f.class_name), f.member, (path or f.path).replace(os.sep, "/"),
                       ",".join(sorted(map(unlabelled, f.targets)))])
    # A file name that is not UTF-8 hashes as its own bytes (the same key for UTF-8 names as before).
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def relative_path(f: Finding, display_to_abs: dict[str, str], root: str | None) -> str:
    full = display_to_abs.get(f.path)
    return path_within(full, root, f.path) if full and root else f.path


def build(findings: list[Finding], display_to_abs: dict[str, str], root: str | None) -> dict:
    counts: Counter[str] = Counter()
    info: dict[str, dict] = {}
    for f in findings:
        rel = relative_path(f, display_to_abs, root)
        fp = fingerprint(f, rel)
        counts[fp] += 1
        info.setdefault(fp, {"fingerprint": fp, "code": f.code, "path": rel, "class": f.class_name,
                             "member": f.member, "targets": sorted(f.targets)})
    entries = []
    for fp, data in sorted(info.items(), key=lambda kv: (kv[1]["path"], kv[1]["code"], kv[1]["class"],
                                                         kv[1]["member"], kv[0])):
        data["count"] = counts[fp]
        entries.append(data)
    return {"version": BASELINE_VERSION, "tool": "attn-lint", "findings": entries}


def write(path: str, findings: list[Finding], display_to_abs: dict[str, str], root: str | None,
          project_root: str) -> int:
    """Write the baseline; ValueError with a one-line message where `path` cannot or must not be
    written (a link the project planted that leads out of it, a device, a missing folder)."""
    doc = build(findings, display_to_abs, root)
    text = json.dumps(doc, indent=2, sort_keys=False) + "\n"
    try:
        replace_file(output_target(path, project_root, f"baseline {path}"), text.encode("utf-8"))
    except Refused as exc:
        raise ValueError(str(exc)) from None
    except OSError as exc:
        raise ValueError(f"cannot write baseline {path}: {exc.strerror or exc}") from None
    return sum(e["count"] for e in doc["findings"])


def load(path: str) -> Counter[str]:
    """Fingerprint -> count. Raises ValueError with a clear message for a bad file."""
    try:
        raw = read_regular(path, MAX_BASELINE_BYTES, f"baseline {path}")
    except Refused as exc:
        raise ValueError(str(exc)) from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"baseline {path} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"baseline {path} is not JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"baseline {path} is nested too deeply to be a baseline") from None
    if not isinstance(doc, dict) or doc.get("version") != BASELINE_VERSION or not isinstance(
            doc.get("findings"), list):
        raise ValueError(f"baseline {path} is not an attn-lint baseline (version {BASELINE_VERSION})")
    out: Counter[str] = Counter()
    for n, e in enumerate(doc["findings"], 1):
        if not isinstance(e, dict) or not isinstance(e.get("fingerprint"), str):
            raise ValueError(f"baseline {path}: entry {n} has no fingerprint")
        count = e.get("count", 1)
        # JSON numbers can be floats, 1e999 or true: only a whole count in range is one.
        if type(count) is not int or not 0 <= count <= MAX_COUNT:
            raise ValueError(f"baseline {path}: entry {n} has a `count` that is not a whole number "
                             f"from 0 to {MAX_COUNT}")
        out[e["fingerprint"]] += count
    return out


def filter_new(findings: list[Finding], known: Counter[str], display_to_abs: dict[str, str],
               root: str | None) -> tuple[list[Finding], int]:
    """(findings not covered by the baseline, how many were covered)."""
    left = Counter(known)
    new, covered = [], 0
    for f in findings:
        fp = fingerprint(f, relative_path(f, display_to_abs, root))
        if left[fp] > 0:
            left[fp] -= 1
            covered += 1
        else:
            new.append(f)
    return new, covered
