"""Baselines: record today's findings, later report only new ones.

A baseline (version 2) keys each finding by its identity (identity.py): the rule, the class or
calling function it is about, the member and the family, never its file, line or the
implementations it names. A module move, a line shift or one more implementation joining a
finding keeps it covered. Several findings may share an identity (two identical calls in one
function): the baseline keeps a count, and only findings beyond that count are new.

Version 1 baselines (a hash of the file and the implementations named) still load and cover
what they covered; a note says to rewrite them, since a move or a new implementation makes
their findings new.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field

from ..files.discover import path_within
from ..findings import Finding, unlabelled
from ..model.identity import identity
from ..userfiles import Refused, output_target, read_regular, replace_file

BASELINE_VERSION = 2
READABLE_VERSIONS = (1, 2)
MAX_BASELINE_BYTES = 64 * 2**20  # a baseline of 100,000 findings is about 30 MB
MAX_COUNT = 2**31  # far above any real count; a bigger one is not a count


@dataclass
class Known:
    """What a baseline covers: identities (version 2) or version 1 fingerprints, each with a count."""

    identities: Counter = field(default_factory=Counter)
    fingerprints: Counter = field(default_factory=Counter)
    version: int = BASELINE_VERSION


def fingerprint(f: Finding, path: str | None = None) -> str:
    """The version 1 key (file and implementations named), read only to match old baselines."""
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
        key = identity(f)
        counts[key] += 1
        # Where it was seen first, for a reader of the file: not part of the key.
        info.setdefault(key, {"identity": key, "code": f.code, "class": f.class_name, "member": f.member,
                              "path": relative_path(f, display_to_abs, root)})
    entries = []
    for key, data in sorted(info.items(), key=lambda kv: (kv[1]["path"], kv[1]["code"], kv[1]["class"],
                                                          kv[1]["member"], kv[0])):
        data["count"] = counts[key]
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


def load(path: str) -> Known:
    """What the baseline covers. Raises ValueError with a clear message for a bad file."""
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
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise ValueError(f"baseline {path} is not an attn-lint baseline (version {BASELINE_VERSION})")
    version = doc.get("version")
    if version not in READABLE_VERSIONS or type(version) is not int:
        raise ValueError(f"baseline {path} has version {json.dumps(version)[:20]}, which this attn-lint "
                         f"cannot read (it reads versions {', '.join(map(str, READABLE_VERSIONS))}): "
                         f"write it again with --write-baseline")
    known = Known(version=version)
    field_name, out = ("identity", known.identities) if version >= 2 else ("fingerprint", known.fingerprints)
    for n, e in enumerate(doc["findings"], 1):
        if not isinstance(e, dict) or not isinstance(e.get(field_name), str):
            raise ValueError(f"baseline {path}: entry {n} has no {field_name}")
        count = e.get("count", 1)
        # JSON numbers can be floats, 1e999 or true: only a whole count in range is one.
        if type(count) is not int or not 0 <= count <= MAX_COUNT:
            raise ValueError(f"baseline {path}: entry {n} has a `count` that is not a whole number "
                             f"from 0 to {MAX_COUNT}")
        out[e[field_name]] += count
    return known


def filter_new(findings: list[Finding], known: Known | Counter, display_to_abs: dict[str, str],
               root: str | None) -> tuple[list[Finding], int]:
    """(findings not covered by the baseline, how many were covered)."""
    if isinstance(known, Counter):  # identities alone (--new-since's findings at the revision)
        known = Known(identities=known)
    by_id, by_fp = Counter(known.identities), Counter(known.fingerprints)
    new, covered = [], 0
    for f in findings:
        key = identity(f)
        if by_id[key] > 0:
            by_id[key] -= 1
            covered += 1
            continue
        if by_fp:
            fp = fingerprint(f, relative_path(f, display_to_abs, root))
            if by_fp[fp] > 0:
                by_fp[fp] -= 1
                covered += 1
                continue
        new.append(f)
    return new, covered
