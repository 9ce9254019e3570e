"""The second serving code base of docs/precision.md: TokenSpeed 0.1.1, triaged like sglang.

Downloaded from PyPI on first use (precision_labels.release_tree; skipped, with pip's reason, when
the registry cannot be reached) and matched to tests/data/labels/tokenspeed-0.1.1.json. Fails when
a finding in the default report has no label, or when the default report holds more findings judged
false or unclear than it did (MISJUDGED_CEILING, a ratchet: lower it as signals improve).
"""

from __future__ import annotations

import precision_labels as pl
import pytest

LABELS = "tokenspeed-0.1.1"
# measured 2026-12-04: 9 in the default report, all judged false or unclear (11 before model-reach
# read model-type tests and classes built through a class attribute)
MISJUDGED_CEILING = 4


@pytest.fixture(scope="module")
def tokenspeed() -> pl.Match:
    labels = pl.load(LABELS)
    try:
        root = pl.release_tree(labels["package"], labels["version"])
    except RuntimeError as exc:
        pytest.skip(str(exc))
    findings, _ = pl.findings_of(root / labels["tree"])
    m = pl.match(labels, findings)
    t, n = m.precision()
    print(f"\n{LABELS}: default report {n} findings, {t} judged true; latent "
          f"{sum(r.confidence == 'low' for r in m.rows)}; untriaged {len(m.untriaged())}")
    return m


def _show(rows: list[pl.Row]) -> str:
    return "\n".join(f"  {r.key} [{r.confidence}, {r.verdict}]" for r in rows)


@pytest.mark.network
def test_every_finding_in_the_default_report_is_triaged(tokenspeed):
    shown = [r for r in tokenspeed.untriaged() if r.in_default_report]
    assert not shown, ("findings in the default report without a label: read the code, add each to "
                       f"tests/data/labels/{LABELS}.json and run bench/precision_table.py\n" + _show(shown))


@pytest.mark.network
def test_findings_judged_true_stay_in_the_default_report(tokenspeed):
    assert not tokenspeed.lost_true(), _show(tokenspeed.lost_true())


@pytest.mark.network
def test_the_default_report_gains_no_misjudged_finding(tokenspeed):
    wrong = [r for r in tokenspeed.default_report() if r.verdict != "true"]
    assert len(wrong) <= MISJUDGED_CEILING, (
        f"{len(wrong)} findings judged false or unclear in the default report (ceiling "
        f"{MISJUDGED_CEILING}):\n" + _show(wrong))
