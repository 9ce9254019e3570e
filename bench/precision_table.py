"""Regenerate the tables of docs/precision.md from the hand triage (tests/data/labels/*.json) and a
fresh run of this checkout's attn-lint on each labelled tree.

    PYTHONPATH=$PWD python bench/precision_table.py                  # every labels file, rewrite the doc
    PYTHONPATH=$PWD python bench/precision_table.py --print          # print the tables, leave the doc
    PYTHONPATH=$PWD python bench/precision_table.py --labels sglang-0.5.23-srt --tree sglang-0.5.23-srt=DIR

Each labelled tree is the labels file's release from PyPI (downloaded into the test cache on first
use, see tests/precision_labels.py) unless --tree names a folder. The doc holds, per labels file,
two generated blocks between `<!-- generated: NAME summary -->` / `<!-- end generated: NAME summary -->`
and the same with `findings`; the prose around them is left as it is. A finding the run reports
that has no label is counted as `untriaged`: read the code and add its label.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import precision_labels as pl  # noqa: E402

COLUMNS = (*pl.VERDICTS, pl.UNTRIAGED)


def _pct(a: int, b: int) -> str:
    return f"{a / b:.0%}" if b else "n/a"


def _count_table(title: str, groups: list[tuple[str, list[pl.Row]]]) -> list[str]:
    lines = [f"| {title} | findings | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 2) + "|"]
    for name, rows in groups:
        c = Counter(r.verdict for r in rows)
        lines.append(f"| {name} | {len(rows)} | " + " | ".join(str(c[v]) for v in COLUMNS) + " |")
    return lines


def summary(m: pl.Match, stats: dict) -> str:
    reported = m.reported()
    rules = sorted({r.rule for r in reported})
    by_rule = [(rule, [r for r in reported if r.rule == rule]) for rule in rules] + [("all", reported)]
    level = {lv: [r for r in reported if r.confidence == lv] for lv in pl.LEVELS}
    by_level = [("high", level["high"]), ("medium", level["medium"]),
                ("**default report** (high + medium)", m.default_report()),
                ("low (latent: `--show-latent`)", level["low"]), ("all", reported)]
    t, n = m.precision()
    unclear = sum(r.verdict == "unclear" for r in m.default_report())
    rt, rn = m.recall()
    out = [f"`attn-lint --format json {m.labels['tree']}` on {m.labels['package']} {m.labels['version']}: "
           f"{stats.get('files', '?'):,} files, {stats.get('lines', '?'):,} lines.", ""]
    out += _count_table("rule", by_rule) + [""] + _count_table("confidence", by_level) + [""]
    out.append(f"**Default report: {t}/{n} judged true, precision {_pct(t, n)} "
               f"({_pct(t + unclear, n)} counting the unclear ones); recall {rt}/{rn} "
               f"({_pct(rt, rn)}) of the findings judged true.**")
    gone = m.gone()
    if gone:
        c = Counter(r.verdict for r in gone)
        out += ["", f"Labelled findings no longer reported at all: {len(gone)} ("
                + ", ".join(f"{c[v]} {v}" for v in pl.VERDICTS if c[v]) + ")."]
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def findings_table(m: pl.Match) -> str:
    out = ["| # | rule | location | class | member | confidence | verdict | why |", "|---" * 8 + "|"]
    # Labelled order first (the triage's order), then untriaged findings, then labels no longer reported.
    order = {k: i for i, k in enumerate(m.labels["labels"])}
    rows = sorted(m.rows, key=lambda r: (r.finding is None, order.get(r.key, len(order))))
    for i, r in enumerate(rows, 1):
        loc = (f"{r.finding['path']}:{r.finding['line']}" if r.finding else (r.label or {}).get("location", ""))
        _, cls, member = r.key.split("@", 1)[0].split(":", 2)
        why = (r.label or {}).get("why", "not triaged yet: read the code and add a label")
        out.append(f"| {i} | {r.rule} | `{loc}` | `{cls.rsplit('.', 1)[-1]}` | `{member}` | {r.confidence} "
                   f"| {r.verdict} | {_cell(why)} |")
    return "\n".join(out)


def replace_block(doc: str, name: str, part: str, body: str) -> str:
    begin, end = f"<!-- generated: {name} {part} -->", f"<!-- end generated: {name} {part} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(doc):
        raise SystemExit(f"docs: no `{begin}` ... `{end}` block for {name}; add one where the table goes")
    return pattern.sub(lambda _: f"{begin}\n{body}\n{end}", doc, count=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--doc", default=os.path.join(os.path.dirname(HERE), "docs", "precision.md"))
    ap.add_argument("--labels", action="append", help="labels file name (default: every one)")
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=DIR",
                    help="lint DIR for labels NAME instead of its release from PyPI")
    ap.add_argument("--print", action="store_true", help="print the tables instead of rewriting the doc")
    a = ap.parse_args(argv)
    trees = dict(t.split("=", 1) for t in a.tree)
    docs = [pl.load(n) for n in a.labels] if a.labels else pl.all_labels()
    with open(a.doc, encoding="utf-8") as fh:
        text = fh.read()
    pooled: dict[str, list[pl.Row]] = {lv: [] for lv in pl.LEVELS}
    for labels in docs:
        tree = trees.get(labels["name"]) or pl.labelled_tree(labels)
        findings, stats = pl.findings_of(tree)
        m = pl.match(labels, findings)
        for r in m.reported():
            pooled[r.confidence].append(r)
        blocks = {"summary": summary(m, stats), "findings": findings_table(m)}
        if a.print:
            print(f"## {labels['name']}\n\n{blocks['summary']}\n\n{blocks['findings']}\n")
        for part, body in blocks.items():
            text = replace_block(text, labels["name"], part, body)
        t, n = m.precision()
        print(f"{labels['name']}: {len(m.reported())} findings, default report {n}, {t} true "
              f"({_pct(t, n)}); untriaged {len(m.untriaged())}; true not in default report {len(m.lost_true())}",
              file=sys.stderr)
    if not a.labels:  # the tiers pool every code base: only a run over all of them writes them
        body = tiers(pooled, [labels["name"] for labels in docs])
        if a.print:
            print(f"## tiers\n\n{body}\n")
        text = replace_block(text, "tiers", "summary", body)
    if not a.print:
        with open(a.doc, "w", encoding="utf-8") as fh:
            fh.write(text)
    return 0


def tiers(pooled: dict[str, list[pl.Row]], names: list[str]) -> str:
    """Per confidence level, pooled over the labelled code bases: counts by verdict and precision
    (true over judged; untriaged findings count against it)."""
    out = [f"Pooled over {', '.join(names)}.", "",
           "| confidence | findings | " + " | ".join(COLUMNS) + " | precision |",
           "|---" * (len(COLUMNS) + 3) + "|"]
    all_true = sum(1 for rows in pooled.values() for r in rows if r.verdict == "true")
    for level in pl.LEVELS:
        rows = pooled[level]
        c = Counter(r.verdict for r in rows)
        out.append(f"| {level} | {len(rows)} | " + " | ".join(str(c[v]) for v in COLUMNS)
                   + f" | {_pct(c['true'], len(rows))} |")
    high_true = sum(1 for r in pooled["high"] if r.verdict == "true")
    out += ["", f"`high` holds {high_true} of the {all_true} findings judged true ({_pct(high_true, all_true)})."]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
