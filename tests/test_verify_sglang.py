"""`--verify` on real SGLang 0.5.23 `sglang/srt` (downloaded like tests/test_real_sglang.py; skipped,
with the reason, when the registry cannot be reached), against the hand triage: the one true AL002
is checked on the CPU with Python's own TypeError and its pairing is built by the code's own
registry, and no finding judged false is confirmed."""

from __future__ import annotations

import precision_labels as pl
import pytest
from test_real_sglang import sglang_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.runtime_check.verify import verify

LABELS = "sglang-0.5.23-srt"
AL002 = "AL002:sglang.srt.disaggregation.encoder.receiver.MMReceiverBase:encode"


@pytest.fixture(scope="module")
def verified():
    labels = pl.load(LABELS)
    tree = sglang_tree(labels["version"]) / labels["tree"]
    cache = pl.summary_cache()
    result = analyse([str(tree)], Settings(cache_dir=cache.dir), keep_context=True, cache=cache)
    # The default report's findings that the tests below ask about: the true AL002 and every one
    # judged false (latent ones never run a pairing, so none can be confirmed; each finding's check
    # is a process of its own, so the others, true or unclear, are left out: they cost half the time).
    judged = labels["labels"]
    result.findings = [f for f in result.findings if f.confidence != "low" and (
        f"{f.code}:{f.class_name}:{f.member}" == AL002
        or judged.get(f"{f.code}:{f.class_name}:{f.member}", {}).get("verdict") == "false")]
    return judged, verify(result)


@pytest.mark.network
def test_the_true_al002_is_call_rejected_with_pythons_typeerror_and_its_pairing_built(verified):
    labels, v = verified
    (ver,) = [ver for f, ver in v.items() if f"{f.code}:{f.class_name}:{f.member}" == AL002]
    assert ver.facts["error"] == "TypeError: MMReceiverGrpc.encode() got an unexpected keyword argument 'time_stats_json'"
    assert ver.facts["receiver"][0] == "self (a real `MMReceiverGrpc`)"
    assert ver.verdict == "pairing-reproduced", ver.detail
    assert "`transport_mode` = 'grpc'" in ver.facts["pairing"]["path"]


@pytest.mark.network
def test_no_finding_judged_false_is_confirmed(verified):
    labels, v = verified
    assert len(v) >= 10  # the false ones were verified (16 on 0.5.23), not left out
    confirmed_false = [f"{f.code}:{f.class_name}:{f.member}" for f, ver in v.items()
                       if ver.confirmed and labels.get(f"{f.code}:{f.class_name}:{f.member}", {}).get("verdict") == "false"]
    assert not confirmed_false, confirmed_false
