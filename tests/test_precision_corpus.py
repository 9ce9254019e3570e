"""The development code bases beyond SGLang and TokenSpeed: vLLM, diffusers, lmdeploy, xfuser.

Each is a release from PyPI (precision_labels.release_tree; skipped, with pip's reason, when the
registry cannot be reached), analysed whole and matched to tests/data/labels/<name>.json, as
tests/test_precision_tokenspeed.py does for TokenSpeed. A finding in the default report without a
label fails (read the code, label it, run bench/precision_table.py), as does a default report with
more findings judged false or unclear than the ceiling (a ratchet: lower it as the analysis
improves) or one that loses a finding judged true. The statistics pin what the analysis found to
reason about, so that a code base going silent is seen for what it is.
"""

from __future__ import annotations

import precision_labels as pl
import pytest

# name -> (ceiling of findings judged false or unclear in the default report, the least wrappers
# and probe sites the analysis must find: a tree it stops understanding would also be "silent")
CORPUS = {
    # measured 2026-12-05: 1 in the default report (unclear), 4 latent (was 4 in the default
    # report before classmethod `cls` binding and the unpassed-option signal)
    "diffusers-0.42.1": (1, 200, 2000),
    # measured 2026-12-05: 1 finding in the default report, judged true (UniExecutor.update_params,
    # found by AL003's facades); 12 wrappers, 769 probe sites
    "lmdeploy-0.18.0": (0, 10, 700),
    # measured 2026-12-05: no finding at any confidence; 12 wrappers, 280 probe sites
    "xfuser-0.7.0": (0, 10, 250),
    # measured 2026-12-06: 3 in the default report, 2 judged true (Ernie-4.5-VL's rotary override
    # drops the `offsets` its base's forward_cpu passes: high; MultiConnector hides its connectors'
    # KV cache events, found once `KVConnectorBaseType = KVConnectorBase_V1` is read as the class);
    # 4 with 1 true before; 108 wrappers, 4,886 probe sites
    "vllm-0.34.0": (1, 100, 4500),
}


@pytest.fixture(scope="module", params=sorted(CORPUS))
def corpus(request) -> tuple[str, pl.Match, dict]:
    labels = pl.load(request.param)
    try:
        root = pl.release_tree(labels["package"], labels["version"])
    except RuntimeError as exc:
        pytest.skip(str(exc))
    findings, stats = pl.findings_of(root / labels["tree"])
    return request.param, pl.match(labels, findings), stats


def _show(rows: list[pl.Row]) -> str:
    return "\n".join(f"  {r.key} [{r.confidence}, {r.verdict}]" for r in rows)


@pytest.mark.network
def test_every_finding_in_the_default_report_is_triaged(corpus):
    name, m, _ = corpus
    shown = [r for r in m.untriaged() if r.in_default_report]
    assert not shown, (f"{name}: findings in the default report without a label: read the code, add each "
                       f"to tests/data/labels/{name}.json and run bench/precision_table.py\n" + _show(shown))


@pytest.mark.network
def test_findings_judged_true_stay_and_misjudged_ones_do_not_grow(corpus):
    name, m, _ = corpus
    assert not m.lost_true(), _show(m.lost_true())
    wrong = [r for r in m.default_report() if r.verdict != "true"]
    assert len(wrong) <= CORPUS[name][0], (
        f"{name}: {len(wrong)} findings judged false or unclear in the default report (ceiling "
        f"{CORPUS[name][0]}):\n" + _show(wrong))


@pytest.mark.network
def test_the_analysis_still_sees_the_wrappers_and_probes(corpus):
    name, _, stats = corpus
    _, wrappers, sites = CORPUS[name]
    assert stats["wrappers"] >= wrappers and stats["probe_sites"] >= sites, (name, stats)
