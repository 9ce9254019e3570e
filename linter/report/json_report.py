"""`--format json`: exactly one JSON document on stdout.

`findings` holds the reported findings (confidence medium or high), each with `confidence` and
`confidence_reasons`; `stats.latent` always counts the low-confidence ones (latent drift), and
`stats.by_confidence` counts every level. With --show-latent, `latent` lists those findings and
`latent_groups` groups them per (wrapper, implementation): these two keys are present only then.
With --new-since REF --show-fixed, `fixed` lists the findings REF had that are gone (paths as at REF).
"""

from __future__ import annotations

import json

from . import latent as latent_report
from .view import Analysed

JSON_VERSION = 1


def render(result: Analysed, extra: dict | None = None, show_latent: bool = False) -> str:
    def entry(f) -> dict:
        data = f.to_json()
        if extra and f in extra:
            data.update(extra[f])
        return data

    doc = {
        "version": JSON_VERSION,
        "findings": [entry(f) for f in result.findings],
        "errors": [e.to_json() for e in result.errors],
        "stats": result.stats,
    }
    if result.fixed is not None:  # --new-since REF --show-fixed: REF's findings that are gone
        doc["fixed"] = [f.to_json() for f in result.fixed]
    if show_latent:
        doc["latent"] = [entry(f) for f in result.latent]
        doc["latent_groups"] = [g.to_json() for g in latent_report.groups(result.latent)]
    return json.dumps(doc, indent=2, sort_keys=False)
