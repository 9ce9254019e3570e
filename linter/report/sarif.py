"""`--format sarif`: SARIF 2.1.0, as GitHub code scanning accepts it.

One run; `tool.driver.rules` describes every rule (help text from the rule's doc); each result has
its ruleId/ruleIndex, level, message, a physical location, the evidence chain as relatedLocations
(also linked from the message), and a partial fingerprint: the finding's identity
(linter/model/identity.py), which a line shift, a module move or one more implementation named leaves as
it is, so code scanning keeps one alert.
Paths are URIs relative to `%SRCROOT%` (the project root). A result's `rank` follows its
confidence (high 90, medium 60, low 20) and its properties hold `confidence` and
`confidence_reasons`; latent findings (low confidence) are results only with --show-latent, at
level "note".
"""

from __future__ import annotations

import json
import os
from urllib.parse import quote

from ... import __version__
from ..model.identity import identity
from .view import Analysed

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
RANKS = {"high": 90.0, "medium": 60.0, "low": 20.0}


def _uri(path: str) -> str:
    # The name's own bytes: a file name that is not valid UTF-8 is still a file (RFC 3986 allows it).
    return quote(os.fsencode(path.replace(os.sep, "/")), safe="/:@-._~")


def _location(path: str, line: int, column: int | None = None) -> dict:
    region = {"startLine": max(1, line)}
    if column:
        region["startColumn"] = max(1, column)
    return {"physicalLocation": {"artifactLocation": {"uri": _uri(path), "uriBaseId": "%SRCROOT%"},
                                 "region": region}}


def _rule_descriptors(extra_codes: set[str]) -> list[dict]:
    from ...rules import ALL_RULES
    # An opt-in rule (AL900) is described where the run reports it.
    rules = [(r.code, r.name, r.summary, r.doc, r.severity) for r in ALL_RULES
             if not r.opt_in or r.code in extra_codes]
    out = []
    for code, name, summary, doc, severity in rules:
        out.append({
            "id": code,
            "name": name,
            "shortDescription": {"text": summary},
            "fullDescription": {"text": summary},
            "help": {"text": doc, "markdown": doc},
            "defaultConfiguration": {"level": LEVELS.get(severity, "warning")},
            "properties": {"tags": ["correctness", "interface-drift"], "precision": "high",
                           "problem.severity": {"error": "error", "warning": "warning"}.get(severity,
                                                                                            "recommendation")},
        })
    return out


def build(result: Analysed, path_of=None, root: str | None = None, extra: dict | None = None) -> dict:
    """`path_of(display) -> str` maps finding paths to paths relative to the project root; `extra`
    maps a finding to more result properties (the `verification` of --verify)."""
    path_of = path_of or (lambda p: p)
    descriptors = _rule_descriptors({f.code for f in result.findings + result.latent})
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    latent = {id(f) for f in result.latent}
    results = []
    for f in result.findings + result.latent:
        related = []
        for i, e in enumerate(f.evidence):
            loc = _location(path_of(e.path), e.line)
            loc["id"] = i
            loc["message"] = {"text": e.note}
            related.append(loc)
        message = f.message
        if related:
            message += " (evidence: " + ", ".join(f"[{path_of(e.path)}:{e.line}]({i})"
                                                  for i, e in enumerate(f.evidence[:8])) + ")"
        res = {
            "ruleId": f.code,
            "level": "note" if id(f) in latent else LEVELS.get(f.severity, "warning"),
            "rank": RANKS.get(f.confidence, RANKS["medium"]),
            "message": {"text": message},
            "locations": [_location(path_of(f.path), f.line, f.column)],
            "partialFingerprints": {"attnLintIdentity/v1": identity(f)},
            "properties": {"class": f.class_name, "member": f.member, "targets": list(f.targets),
                           "details": dict(f.details), "confidence": f.confidence,
                           "confidence_reasons": [r.to_json() for r in f.confidence_reasons],
                           **({"latent": True} if id(f) in latent else {}), **(extra or {}).get(f, {})},
        }
        if f.code in index:
            res["ruleIndex"] = index[f.code]
        if related:
            res["relatedLocations"] = related
        results.append(res)
    notifications = [{
        "level": "warning",
        "message": {"text": f"{e.kind}: {e.message} ({e.outcome})"},
        "locations": [_location(path_of(e.path), e.line or 1)],
        "descriptor": {"id": e.kind},
    } for e in result.errors]
    run = {
        "tool": {"driver": {"name": "attn-lint", "version": __version__, "semanticVersion": __version__,
                            "rules": descriptors}},
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    if root:
        base = root if root.endswith(os.sep) else root + os.sep
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": "file://" + _uri(base)}}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(result: Analysed, path_of=None, root: str | None = None, extra: dict | None = None) -> str:
    return json.dumps(build(result, path_of, root, extra), indent=2)
