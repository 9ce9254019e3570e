"""`--format json`: exactly one JSON document on stdout."""

from __future__ import annotations

import json

from ..engine import Result

JSON_VERSION = 1


def render(result: Result, extra: dict | None = None) -> str:
    findings = []
    for f in result.findings:
        data = f.to_json()
        if extra and f in extra:
            data.update(extra[f])
        findings.append(data)
    doc = {
        "version": JSON_VERSION,
        "findings": findings,
        "errors": [e.to_json() for e in result.errors],
        "stats": result.stats,
    }
    return json.dumps(doc, indent=2, sort_keys=False)
