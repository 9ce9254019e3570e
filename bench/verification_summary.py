"""One line per verified finding of an `attn-lint --verify[-on-gpu] --format json` report, and its
GPU controls: the log bench/gpu_verify.sh keeps in docs/verification-log/.

    python bench/verification_summary.py REPORT.json
"""

from __future__ import annotations

import json
import sys


def main(path: str) -> int:
    with open(path) as fh:
        doc = json.load(fh)
    for f in [*doc["findings"], *doc.get("latent", [])]:
        v = f.get("verification")
        if v is None:
            continue
        g = v.get("gpu")
        gpu = g if isinstance(g, str) or g is None else \
            f"{g.get('verdict')}: {g.get('detail')} [{g.get('backend_hook')}]"
        print(f"{f['code']} {f['class'].rsplit('.', 1)[-1]}.{f['member']} ({f['confidence']}): {v['verdict']}"
              f"{' (confirmed)' if v.get('confirmed') else ''}\n    detail: {v['detail'][:600]}"
              + (f"\n    gpu: {gpu}" if gpu else ""))
    for c in doc["stats"].get("gpu_controls", []):
        wrapper = c["wrapper"].rsplit(".", 1)[-1]
        print(f"control {wrapper}.{c['member']} <- {c['signature']}: {c['verdict']}: {c['detail']}")
    print("counts:", json.dumps(doc["stats"].get("verification")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
