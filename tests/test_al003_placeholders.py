"""AL003 over `raise NotImplementedError` placeholders (docs/history-corpus.md, gap 1).

A wrapper that inherits the family base's placeholder for a hook an implementation its delegates
can be implements raises NotImplementedError where the delegate would run. The fixture pair
fixtures/al003_placeholder_default (sglang 0.5.16's hybrid wrapper and the EAGLE verify fix-up)
and fixtures/al003_placeholder_forwarded (0.5.17's fix) is run for real here, and each variant
below states whether the rule must say yes or no.
"""

from __future__ import annotations

import pytest
from conftest import FIXTURES, lint, pairs
from test_fixtures import HYBRID, _run, _variant

HOOK = "update_verify_buffers_to_fill_after_draft"
BEFORE, AFTER = "al003_placeholder_default", "al003_placeholder_forwarded"
BASE_FILE = "serving/backends/base_attn_backend.py"
TRITON = "serving/backends/triton_backend.py"
TRT = "serving/backends/trtllm_mla_backend.py"
VERIFY = "serving/speculative/eagle_verify.py"

_TRITON_IMPL = '''    def update_verify_buffers_to_fill_after_draft(self, spec_info, cuda_graph_bs=None):
        """Re-read the draft's positions: the custom mask was planned from stale ones."""
        self.verify_positions = list(spec_info.positions)
'''
_TRT_IMPL = '''    def update_verify_buffers_to_fill_after_draft(self, spec_info, cuda_graph_bs=None):
        pass  # TRT-LLM plans nothing that depends on the draft
'''
_WRAPPER_TAIL = "    def forward_decode("

_RUN = """
    from serving.model_executor.model_runner import ModelRunner
    from serving.speculative.eagle_verify import VerifyInput, run_eagle_verify
    for backend in ("triton", "trtllm_mla", "flashinfer_mla"):
        for layers in (None, [0]):
            runner = ModelRunner(backend, full_attn_layers=layers)
            try:
                run_eagle_verify(runner, VerifyInput([3, 5]), plan_stream=True)
                said = "ok"
            except NotImplementedError:
                said = "NotImplementedError"
            print(type(runner.attn_backend).__name__, backend, said)
"""


def test_the_placeholder_fixture_really_raises_only_behind_the_wrapper():
    """Triton and TRT-LLM run the fix-up alone; behind the hybrid wrapper the call raises."""
    assert _run(BEFORE, _RUN).splitlines() == [
        "TritonAttnBackend triton ok",
        "HybridLinearAttnBackend triton NotImplementedError",
        "TRTLLMMLABackend trtllm_mla ok",
        "HybridLinearAttnBackend trtllm_mla NotImplementedError",
        "FlashInferMLAAttnBackend flashinfer_mla NotImplementedError",   # keeps the placeholder itself
        "HybridLinearAttnBackend flashinfer_mla NotImplementedError",
    ]


def test_the_forwarded_fixture_runs_wherever_the_delegate_can():
    assert _run(AFTER, _RUN).splitlines() == [
        "TritonAttnBackend triton ok",
        "HybridLinearAttnBackend triton ok",
        "TRTLLMMLABackend trtllm_mla ok",
        "HybridLinearAttnBackend trtllm_mla ok",
        "FlashInferMLAAttnBackend flashinfer_mla NotImplementedError",
        "HybridLinearAttnBackend flashinfer_mla NotImplementedError",
    ]


def test_the_finding_says_the_wrapper_raises():
    (f,) = lint(FIXTURES / BEFORE).findings
    assert (f.code, f.class_name.rsplit(".", 1)[-1], f.member) == ("AL003", "HybridLinearAttnBackend", HOOK)
    assert f.confidence == "medium"
    # The implementations that do more than raise; FlashInfer MLA and Mamba keep the placeholder.
    assert [t.rsplit(".", 1)[-1] for t in f.targets] == ["TritonAttnBackend", "TRTLLMMLABackend"]
    assert "raises NotImplementedError" in f.message and "silently" not in f.message
    assert dict(f.details)["default"] == "placeholder"
    assert dict(f.details)["base"] == "serving.backends.base_attn_backend.AttentionBackend"
    notes = {(e.path, e.note) for e in f.evidence}
    assert (BASE_FILE, f"`AttentionBackend.{HOOK}` only raises NotImplementedError (a placeholder), "
                       "inherited by `HybridLinearAttnBackend`") in notes
    assert (TRT, f"`TRTLLMMLABackend` implements `{HOOK}` as a no-op: the call returns where the wrapper's "
                 "raises") in notes
    assert (TRITON, f"`TritonAttnBackend` implements `{HOOK}`") in notes
    assert any(e.path == VERIFY for e in f.evidence), "the call site is the first link"


def test_the_noop_finding_keeps_its_wording():
    (f,) = lint(FIXTURES / "al003_noop_default").findings
    assert "silently does nothing" in f.message and dict(f.details)["default"] == "noop"


_GETATTR = (_WRAPPER_TAIL,
            "    def __getattr__(self, name):\n"
            "        if name == \"full_attn_backend\":\n"
            "            raise AttributeError(name)\n"
            "        return getattr(self.full_attn_backend, name)\n\n" + _WRAPPER_TAIL)
_OWN_PLACEHOLDER = (_WRAPPER_TAIL,
                    "    def update_verify_buffers_to_fill_after_draft(self, spec_info, cuda_graph_bs=None):\n"
                    "        raise NotImplementedError()\n\n" + _WRAPPER_TAIL)
_DRIVEN_ELSEWHERE = ("    def init_forward_metadata(self, forward_batch: ForwardBatch):\n",
                     "    def init_forward_metadata(self, forward_batch: ForwardBatch):\n"
                     "        if forward_batch.forward_mode.is_extend():\n"
                     "            self.full_attn_backend.update_verify_buffers_to_fill_after_draft(None, None)\n")

# variant -> (edits, the targets AL003 names, or None for no finding at all)
VARIANTS = {
    # Says yes.
    "as-written": ({}, ["TritonAttnBackend", "TRTLLMMLABackend"]),
    "getattr-on-the-wrapper-is-shadowed-by-the-base": ({HYBRID: [_GETATTR]}, ["TritonAttnBackend", "TRTLLMMLABackend"]),
    "only-a-noop-implementation": ({TRITON: [(_TRITON_IMPL, "")]}, ["TRTLLMMLABackend"]),
    # Over a no-op, a hook the wrapper drives from another method is not lost; over a placeholder
    # the direct call on the wrapper still raises.
    "wrapper-drives-the-hook-elsewhere": ({HYBRID: [_DRIVEN_ELSEWHERE]}, ["TritonAttnBackend", "TRTLLMMLABackend"]),
    # Says no.
    "wrapper-forwards-the-hook": ({HYBRID: [(_WRAPPER_TAIL,
                                             "    def update_verify_buffers_to_fill_after_draft(self, spec_info, "
                                             "cuda_graph_bs=None):\n"
                                             "        self.full_attn_backend.update_verify_buffers_to_fill_after_draft("
                                             "spec_info, cuda_graph_bs)\n\n" + _WRAPPER_TAIL)]}, None),
    "no-implementation-overrides-the-placeholder": ({TRITON: [(_TRITON_IMPL, "")], TRT: [(_TRT_IMPL, "")]}, None),
    "implementations-override-with-placeholders-too": (
        {TRITON: [("        self.verify_positions = list(spec_info.positions)\n",
                   "        raise NotImplementedError(\"no fix-up on Triton\")\n")],
         TRT: [("        pass  # TRT-LLM plans nothing that depends on the draft\n",
                "        raise NotImplementedError\n")]}, None),
    "hook-never-called": ({VERIFY: [("        target.attn_backend.update_verify_buffers_to_fill_after_draft("
                                     "verify_input, None)\n", "        pass\n")]}, None),
    "placeholder-from-a-mixin-of-the-wrapper": ({HYBRID: [
        ("class HybridLinearAttnBackend(AttentionBackend):",
         "class NoDraftMixin:\n"
         "    def update_verify_buffers_to_fill_after_draft(self, spec_info, cuda_graph_bs=None):\n"
         "        raise NotImplementedError()\n\n\n"
         "class HybridLinearAttnBackend(NoDraftMixin, AttentionBackend):")]}, None),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_placeholder_variants(variant, tmp_path):
    edits, targets = VARIANTS[variant]
    result = lint(_variant(tmp_path, BEFORE, edits))
    assert result.errors == []
    found = [f for f in result.findings if f.code == "AL003"]
    if targets is None:
        assert found == []
        return
    (f,) = found
    assert (f.class_name.rsplit(".", 1)[-1], f.member) == ("HybridLinearAttnBackend", HOOK)
    assert [t.rsplit(".", 1)[-1] for t in f.targets] == targets
    assert f.confidence == "medium"
    if variant == "getattr-on-the-wrapper-is-shadowed-by-the-base":
        assert any("`__getattr__`, but it is never consulted" in e.note for e in f.evidence)


def test_the_same_driven_elsewhere_shape_over_a_noop_is_not_reported(tmp_path):
    root = _variant(tmp_path, "al003_noop_default", {HYBRID: [(
        "    def init_forward_metadata(self, forward_batch: ForwardBatch):\n",
        "    def init_forward_metadata(self, forward_batch: ForwardBatch):\n"
        "        self.full_attn_backend.on_after_cuda_graph_warmup()\n")]})
    assert pairs(lint(root).findings, "AL003") == []


def test_a_placeholder_of_the_wrappers_own_is_still_reported_as_latent(tmp_path):
    """The trap the history mining found: replacing an inherited placeholder with another one
    fixes nothing, so the release must not look fixed; the wrapper's author declared it, though."""
    result = lint(_variant(tmp_path, BEFORE, {HYBRID: [_OWN_PLACEHOLDER]}))
    (f,) = [f for f in result.findings if f.code == "AL003"]
    assert f.confidence == "low"
    assert f"overrides `{HOOK}` with a placeholder" in f.message
    assert dict(f.details)["base"].endswith(".HybridLinearAttnBackend")
    (why,) = {r.signal for r in f.confidence_reasons}
    assert why == "declared-refusal"


def test_a_noop_override_of_a_placeholder_in_the_wrapper_is_a_decision_not_a_finding(tmp_path):
    root = _variant(tmp_path, BEFORE, {HYBRID: [(_WRAPPER_TAIL,
                                                 "    def update_verify_buffers_to_fill_after_draft(self, *args):\n"
                                                 "        pass\n\n" + _WRAPPER_TAIL)]})
    assert pairs(lint(root).findings, "AL003") == []
