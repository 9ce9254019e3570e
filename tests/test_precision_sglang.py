"""Precision of the default report on real code, against the hand triage in tests/data/labels/.

sglang 0.5.23 `sglang/srt` (downloaded from PyPI like tests/test_real_sglang.py; skipped, with the
reason, when the registry cannot be reached) is linted and each finding matched to its label
(tests/precision_labels.py). Fails when a finding judged true leaves the default report (its
confidence is low, or it is gone), when a finding in the default report has no label (read the code,
add its label to the JSON, regenerate docs/precision.md with bench/precision_table.py), or when the
default report's precision is below PRECISION_TARGET (issue 9's target; ATTN_LINT_PRECISION_TARGET
overrides it for local runs). Until the target is met that last check is a strict xfail, and
PRECISION_FLOOR is a ratchet on what the signals reached.
"""

from __future__ import annotations

import json
import os

import precision_labels as pl
import pytest
from test_real_sglang import sglang_tree

PRECISION_TARGET = float(os.environ.get("ATTN_LINT_PRECISION_TARGET") or 0.80)
# measured: 7/29 (consumer half sound: a wrapper naming the lineage is meant to hold it); 10/40 = 25%
# once AL003 reports inherited NotImplementedError placeholders (docs/history-corpus.md, gap 1)
PRECISION_FLOOR = 0.35
LABELS = "sglang-0.5.23-srt"


@pytest.fixture(scope="module")
def srt_0_5_23() -> pl.Match:
    labels = pl.load(LABELS)
    tree = sglang_tree(labels["version"]) / labels["tree"]
    findings, _ = pl.findings_of(tree)
    m = pl.match(labels, findings)
    t, n = m.precision()
    rt, rn = m.recall()
    print(f"\n{LABELS}: default report {n} findings, {t} judged true: precision {t / n if n else 0:.0%} "
          f"(target {PRECISION_TARGET:.0%}); recall {rt}/{rn}; latent "
          f"{sum(r.confidence == 'low' for r in m.rows)}; untriaged {len(m.untriaged())}")
    return m


def _show(rows: list[pl.Row]) -> str:
    return "\n".join(f"  {r.key} [{r.confidence}, {r.verdict}]"
                     + (f" {r.finding['path']}:{r.finding['line']}" if r.finding else "") for r in rows)


@pytest.mark.network
def test_findings_judged_true_stay_in_the_default_report(srt_0_5_23):
    lost = srt_0_5_23.lost_true()
    assert not lost, "findings judged true left the default report (low confidence, or gone):\n" + _show(lost)


@pytest.mark.network
def test_every_finding_in_the_default_report_is_triaged(srt_0_5_23):
    untriaged = srt_0_5_23.untriaged()
    if untriaged:
        print("untriaged findings (read the code, add a label):\n" + _show(untriaged))
    shown = [r for r in untriaged if r.in_default_report]
    assert not shown, ("findings in the default report without a label: read the code, add each to "
                       f"tests/data/labels/{LABELS}.json and run bench/precision_table.py\n" + _show(shown))


@pytest.mark.network
def test_default_report_precision_never_falls(srt_0_5_23):
    """A ratchet: the precision the signals reached so far (raise PRECISION_FLOOR as they improve)."""
    t, n = srt_0_5_23.precision()
    assert n and t / n >= PRECISION_FLOOR, (
        f"default report precision {t}/{n} = {t / n if n else 0:.1%} fell below {PRECISION_FLOOR:.1%}:\n"
        + _show([r for r in srt_0_5_23.default_report() if r.verdict != "true"]))


@pytest.mark.network
@pytest.mark.xfail(strict=True, reason="issue 9 is open: the default report's precision on sglang 0.5.23 is below "
                                       "the 80% target (PRECISION_FLOOR is where it stands); strict, so reaching "
                                       "the target fails this marker until it is removed")
def test_default_report_precision_reaches_the_target(srt_0_5_23):
    t, n = srt_0_5_23.precision()
    rt, rn = srt_0_5_23.recall()
    assert n and t / n >= PRECISION_TARGET, (
        f"default report precision {t}/{n} = {t / n if n else 0:.0%} is below the target "
        f"{PRECISION_TARGET:.0%} (recall {rt}/{rn}); false or unclear findings in it:\n"
        + _show([r for r in srt_0_5_23.default_report() if r.verdict != "true"]))


# -- the labels files and the matching, offline ---------------------------------------------------

def test_labels_files_are_well_formed():
    docs = pl.all_labels()
    assert any(d["name"] == LABELS for d in docs)
    for doc in docs:
        assert {"package", "version", "tree", "labels"} <= doc.keys(), doc["name"]
        for key, label in doc["labels"].items():
            rule, cls, member = key.split("@", 1)[0].split(":")
            assert rule.startswith("AL") and "." in cls and member, key
            assert label["why"].strip() and ":" in label["location"], key
    sglang = pl.load(LABELS)
    verdicts = [v["verdict"] for v in sglang["labels"].values()]
    # 71 + the 9 latent override-drops-parameter findings + the 21 of AL003 over placeholders (3 true)
    # + the hisparse wrapper over the NPU DSV4 allocator that binding order showed (false)
    # + KTEPWrapperMethod.restore_weights_before_loading, found by issue 37's method-object reading (true)
    assert (len(verdicts), verdicts.count("true")) == (103, 11)


def _finding(code, cls, member, path="a/m.py", line=3, confidence=None, call=None):
    f = {"code": code, "class": cls, "member": member, "path": path, "line": line,
         "details": {"call": call} if call else {}}
    if confidence:
        f["confidence"] = confidence
    return f


def test_matching_counts_precision_recall_untriaged_and_lost():
    labels = {"package": "p", "version": "1", "tree": "p", "labels": {
        "AL001:p.a.W:hook": {"verdict": "true", "why": "w", "location": "a.py:1"},
        "AL003:p.a.W:other": {"verdict": "false", "why": "w", "location": "a.py:1"},
        "AL001:p.b.V:hook": {"verdict": "true", "why": "w", "location": "b.py:1"},
        "AL003:p.b.V:gone": {"verdict": "unclear", "why": "w", "location": "b.py:1"},
    }}
    m = pl.match(labels, [
        _finding("AL001", "p.a.W", "hook", confidence="high"),
        _finding("AL003", "p.a.W", "other"),  # no confidence: medium
        _finding("AL001", "p.b.V", "hook", confidence="low"),  # judged true, latent: lost
        _finding("AL001", "p.c.U", "new", confidence="medium"),
    ])
    assert m.precision() == (1, 3)
    assert m.recall() == (1, 2)
    assert [r.key for r in m.lost_true()] == ["AL001:p.b.V:hook"]
    assert [r.key for r in m.untriaged()] == ["AL001:p.c.U:new"]
    assert [(r.key, r.confidence) for r in m.gone()] == [("AL003:p.b.V:gone", "gone")]


def test_al002_findings_sharing_a_key_are_told_apart_by_call_site_under_any_display_root():
    labels = {"package": "p", "version": "1", "tree": "p/srt", "labels": {
        "AL002:p.srt.m.W:f@m.py:10": {"verdict": "true", "why": "w", "location": "m.py:10"},
        "AL002:p.srt.m.W:f@x/n.py:20": {"verdict": "false", "why": "w", "location": "x/n.py:20"},
    }}
    # linted from the parent folder: paths gain a `srt/` prefix, the class names do not change
    found = [_finding("AL002", "p.srt.m.W", "f", "srt/x/n.py", 20, call="srt/x/n.py:20"),
             _finding("AL002", "p.srt.m.W", "f", "srt/m.py", 10, call="srt/m.py:10")]
    assert pl.keys(found) == ["AL002:p.srt.m.W:f@srt/x/n.py:20", "AL002:p.srt.m.W:f@srt/m.py:10"]
    m = pl.match(labels, found)
    assert [r.verdict for r in m.rows] == ["false", "true"]
    assert not m.untriaged() and not m.gone()
    # one AL002 finding per key needs no call site
    assert pl.keys(found[:1]) == ["AL002:p.srt.m.W:f"]


def test_a_verdict_outside_true_false_unclear_is_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"package": "p", "version": "1", "tree": "p", "labels": {
        "AL001:p.W:h": {"verdict": "maybe", "why": "w", "location": "a.py:1"}}}))
    with pytest.raises(ValueError, match="maybe"):
        pl.load(path)
