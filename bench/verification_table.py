"""Cross `attn-lint --verify` verdicts with the hand triage (tests/data/labels/*.json) and write the
table into docs/verification.md (between `<!-- generated: verification table -->` and
`<!-- end generated: verification table -->`).

    PYTHONPATH=$PWD python bench/verification_table.py                      # run, rewrite the doc
    PYTHONPATH=$PWD python bench/verification_table.py --print              # run, print only
    PYTHONPATH=$PWD python bench/verification_table.py --report R.json      # use a saved report

The run is `attn-lint --no-cache --verify --show-latent --format json TREE` on the labels file's
tree (default: sglang 0.5.23 `sglang/srt` from the test cache). A finding the run reports that has
no label is counted as `untriaged`. The question the table answers: how many findings judged
false get a confirmed verdict (the aim: none), and how many judged true do (the aim: most).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from attn_lint.runtime_check.decisions import CONFIRMED, VERDICTS  # noqa: E402

LABELS = os.path.join(REPO, "tests", "data", "labels", "sglang-0.5.23-srt.json")
TREE = os.path.expanduser("~/.cache/attn-lint-tests/sglang-0.5.23/sglang/srt")
DOC = os.path.join(REPO, "docs", "verification.md")
BEGIN, END = "<!-- generated: verification table -->", "<!-- end generated: verification table -->"
ORDER = ("true", "false", "unclear", "untriaged")


def run(tree: str) -> dict:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "--no-cache", "--verify", "--show-latent",
                           "--format", "json", tree], capture_output=True, text=True, env=env)
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr[-2000:])
    return json.loads(proc.stdout)


def rows(report: dict, labels: dict) -> list[tuple[str, str, str, dict]]:
    """(label, key, confidence, verification) per verified finding, reported and latent."""
    out = []
    for f in [*report["findings"], *report.get("latent", [])]:
        v = f.get("verification")
        if v is None:
            continue
        key = f"{f['code']}:{f['class']}:{f['member']}"
        out.append((labels.get(key, {}).get("verdict", "untriaged"), key, f["confidence"], v))
    return out


def table(data: list, labels_file: dict, seconds: float | None) -> str:
    verdicts = [v for v in VERDICTS if any(r[3]["verdict"] == v for r in data)] or list(VERDICTS)
    head = "| judged | findings | **confirmed** | " + " | ".join(f"`{v}`" for v in verdicts) + " |"
    lines = [head, "|---" * (len(verdicts) + 3) + "|"]
    for label in ORDER:
        sel = [r for r in data if r[0] == label]
        if not sel and label == "untriaged":
            continue
        c = Counter(r[3]["verdict"] for r in sel)
        conf = sum(c[v] for v in CONFIRMED)
        lines.append(f"| {label} | {len(sel)} | **{conf}** | " + " | ".join(str(c[v]) for v in verdicts) + " |")
    c = Counter(r[3]["verdict"] for r in data)
    lines.append(f"| all | {len(data)} | **{sum(c[v] for v in CONFIRMED)}** | "
                 + " | ".join(str(c[v]) for v in verdicts) + " |")
    false = [r for r in data if r[0] == "false"]
    true = [r for r in data if r[0] == "true"]
    nconf = lambda rs: sum(r[3]["verdict"] in CONFIRMED for r in rs)  # noqa: E731
    out = [f"`attn-lint --no-cache --verify --show-latent --format json {labels_file['tree']}` on "
           f"{labels_file['package']} {labels_file['version']}"
           + (f" ({seconds:.0f} s on this machine)" if seconds else "") + ", crossed with the triage labels "
           "(tests/data/labels/sglang-0.5.23-srt.json, the same as docs/precision.md):", "", *lines, "",
           f"**Confirmed: {nconf(false)} of the {len(false)} findings judged false, {nconf(true)} of the "
           f"{len(true)} judged true.**", ""]
    shown = [r for r in data if r[3]["verdict"] in CONFIRMED or r[3]["verdict"] == "not-reproduced"]
    if shown:
        out.append("Confirmed and not-reproduced findings:")
        out.append("")
        for label, key, conf, v in shown:
            short = key.replace("sglang.srt.", "")
            error = (v.get("facts") or {}).get("error")
            said = ((v.get("facts") or {}).get("pairing") or {}).get("detail") or v["detail"]
            out.append(f"- {label}, {conf}: `{short}`: **{v['verdict']}**: {said[:400]}"
                       + (f"; the real call: `{error}`" if error else ""))
        out.append("")
    why = Counter()
    for _, _, _, v in data:
        p = (v.get("facts") or {}).get("pairing") or {}
        if v["verdict"] not in CONFIRMED and p:
            why[_reason(p)] += 1
    if why:
        out.append("Why the other pairings were not shown (one reason per finding):")
        out.append("")
        out += [f"- {n} × {r}" for r, n in why.most_common()]
        out.append("")
    return "\n".join(out)


def _reason(pairing: dict) -> str:
    """The first thing that stopped a finding's pairing check, in a few words."""
    status = pairing.get("status")
    if status == "not run":
        return "not run: the static analysis keeps the finding only as latent drift"
    stopped = pairing.get("stopped_by") or [pairing.get("detail", "")]
    first = stopped[0]
    if first.startswith("the path depends on inputs a stand-in cannot model"):
        return "the path depends on a class test or other input a stand-in cannot model"
    if "no construction" in first or "no caller" in first or "nothing that runs" in first:
        return "no construction of the wrapper (or caller of it) is seen"
    if "raised" in first:
        return "the path stops on process-wide state or a refusal (a raise on every explored path)"
    if "cannot load" in pairing.get("detail", ""):
        return "a class of the pairing cannot be loaded"
    return first[:120]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", default=TREE)
    ap.add_argument("--labels", default=LABELS)
    ap.add_argument("--report", help="a saved JSON report of the same command (skips the run)")
    ap.add_argument("--print", action="store_true", help="print the table, leave the doc")
    args = ap.parse_args(argv)
    with open(args.labels) as fh:
        labels_file = json.load(fh)
    seconds = None
    if args.report:
        with open(args.report) as fh:
            report = json.load(fh)
    else:
        import time
        start = time.perf_counter()
        report = run(args.tree)
        seconds = time.perf_counter() - start
    text = table(rows(report, labels_file["labels"]), labels_file, seconds)
    if args.print:
        print(text)
        return 0
    with open(DOC) as fh:
        doc = fh.read()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{DOC} has no {BEGIN} ... {END} block")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(DOC, "w") as fh:
        fh.write(f"{head}{BEGIN}\n{text}\n{END}{tail}")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
