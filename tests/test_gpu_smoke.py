"""The FlashInfer smoke harness behind --verify-on-gpu.

GPU tests replay the seed's three situations on real FlashInfer (they skip, naming what is
missing, where there is no CUDA GPU, torch or flashinfer). The CPU tests check the stand-in class
factory, which must work without torch. Set ATTN_LINT_FLASHINFER_BACKEND=fa3 to test FlashInfer's
Hopper backend instead of fa2.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import types
from pathlib import Path

import pytest


def _load_runtime_check():
    """attn_lint.runtime_check when installed; else runtime_check/ loaded by path as a package.

    The project maps runtime_check/ to attn_lint.runtime_check only at install time, and the
    modules import each other relatively, so the fallback must load the folder as a package.
    """
    try:
        from attn_lint.runtime_check import flashinfer_smoke

        return flashinfer_smoke
    except ImportError:
        pass
    name = "_attn_lint_runtime_check"
    if name not in sys.modules:
        folder = Path(__file__).resolve().parent.parent / "runtime_check"
        spec = importlib.util.spec_from_file_location(
            name, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"{name}.flashinfer_smoke")


smoke = _load_runtime_check()

HOOK = "init_mha_chunk_metadata"


# Delegate signatures as in SGLang 0.5.13: FlashInfer MLA takes the extra flag, TRT-LLM MLA does not.
def _flashinfer_mla_hook(self, forward_batch, disable_flashinfer_ragged: bool = False) -> None: ...


def _trtllm_mla_hook(self, forward_batch): ...


FLASHINFER_MLA_SIG = inspect.signature(_flashinfer_mla_hook)
TRTLLM_MLA_SIG = inspect.signature(_trtllm_mla_hook)


class TRTLLMMLABackend:
    """Module level, so that its qualified name is the bare class name, as in SGLang."""

    def init_mha_chunk_metadata(self, forward_batch): ...


# Fronts: tiny wrappers shaped like SGLang's HybridLinearAttnBackend around its full_attn_backend.
class ForwardingWrapper:
    """Forwards the hook with the arguments it was given: the correct shape."""

    def __init__(self, full_attn_backend):
        self.full_attn_backend = full_attn_backend

    def init_mha_chunk_metadata(self, forward_batch):
        self.full_attn_backend.init_mha_chunk_metadata(forward_batch)


class WrapperWithoutHook:
    """SGLang 0.5.12.post1: no hook and no __getattr__, so the caller's hasattr probe is False."""

    def __init__(self, full_attn_backend):
        self.full_attn_backend = full_attn_backend


class WrapperForwardingFlag:
    """SGLang 0.5.13's fix: always passes the flag on, which a one-argument delegate cannot take."""

    def __init__(self, full_attn_backend):
        self.full_attn_backend = full_attn_backend

    def init_mha_chunk_metadata(self, forward_batch, disable_flashinfer_ragged: bool = False):
        init = getattr(self.full_attn_backend, "init_mha_chunk_metadata", None)
        if init is not None:
            init(forward_batch, disable_flashinfer_ragged)


# ---------------------------------------------------------------- CPU: no torch needed


class _RecordingHarness:
    """Takes the place of PrefillHarness where only plan() is exercised."""

    def __init__(self):
        self.planned = []

    def plan(self, seq_lens):
        self.planned.append(list(seq_lens))


def test_module_imports_without_gpu_stack_and_explains_what_is_missing():
    problem = smoke.gpu_environment_problem()
    if importlib.util.find_spec("torch") is None:
        assert problem is not None
        assert "torch is not installed" in problem
    if problem is not None:
        assert "pip install 'attn-lint[gpu]'" in problem
        assert "\n" not in problem


@pytest.mark.parametrize(
    "signature",
    [
        FLASHINFER_MLA_SIG,
        TRTLLM_MLA_SIG,
        inspect.signature(lambda self, forward_batch, /, *rest, flag=None, **kw: None),
        inspect.signature(lambda self, *args: None),
    ],
    ids=["flashinfer-mla", "trtllm-mla", "posonly-varargs-kwonly", "varargs-only"],
)
def test_standin_hook_has_the_requested_signature_and_plans(signature):
    cls = smoke.make_standin_backend_class(HOOK, signature)
    assert inspect.signature(getattr(cls, HOOK)) == signature
    harness = _RecordingHarness()
    backend = cls(harness)
    fb = types.SimpleNamespace(extend_seq_lens_cpu=[5, 37, 130])
    getattr(backend, HOOK)(fb)
    assert harness.planned == [[5, 37, 130]]
    assert backend.hook_calls == 1


def test_standin_default_signature_is_self_forward_batch():
    cls = smoke.make_standin_backend_class(HOOK)
    assert str(inspect.signature(getattr(cls, HOOK))) == "(self, forward_batch)"


def test_standin_hook_raises_pythons_own_type_error():
    cls = smoke.make_standin_backend_class(HOOK, TRTLLM_MLA_SIG, class_name="TRTLLMMLABackend")
    backend = cls(_RecordingHarness())
    fb = types.SimpleNamespace(extend_seq_lens_cpu=[4])

    # The message the real class's method gives on this interpreter (3.10+ names the class).
    with pytest.raises(TypeError) as real:
        TRTLLMMLABackend().init_mha_chunk_metadata(fb, False)
    with pytest.raises(TypeError) as standin:
        backend.init_mha_chunk_metadata(fb, False)
    assert str(standin.value) == str(real.value)
    assert "takes 2 positional arguments but 3 were given" in str(standin.value)
    assert backend.hook_calls == 0


def test_standin_rejects_names_it_cannot_build():
    with pytest.raises(ValueError):
        smoke.make_standin_backend_class("not an identifier")
    with pytest.raises(ValueError):
        smoke.make_standin_backend_class("forward_extend")


# ---------------------------------------------------------------- GPU


@pytest.fixture(scope="module")
def harness():
    problem = smoke.gpu_environment_problem()
    if problem is not None:
        pytest.skip(problem)
    return smoke.PrefillHarness(backend=os.environ.get("ATTN_LINT_FLASHINFER_BACKEND", "fa2"))


@pytest.fixture(scope="module")
def batches(harness):
    return smoke.default_batches(harness)


def _report(result):
    # Printed so that `pytest -s` logs double as the measurements in docs/gpu-harness.md.
    print(f"\n[{result.backend}] verdict={result.verdict} detail={result.detail}")
    for b in result.batches:
        err = "-" if b.max_abs_error is None else f"{b.max_abs_error:.4g}"
        print(
            f"  {list(b.seq_lens)!s:<16} {b.outcome:<19} err={err:<8} found={b.hook_found!s:<5} "
            f"ran={b.hook_ran!s:<5} plan={list(b.planned_seq_lens or ())} wall={b.wall_s * 1e3:.2f}ms"
            + (f" msg={b.message}" if b.message else "")
        )


@pytest.mark.gpu
def test_forwarding_front_passes_every_batch(harness, batches):
    backend = smoke.make_standin_backend_class(HOOK, FLASHINFER_MLA_SIG)(harness)
    result = smoke.run_prefill_protocol(ForwardingWrapper(backend), HOOK, harness, backend, batches)
    _report(result)
    assert result.verdict == "pass", result.detail
    assert all(b.hook_found and b.hook_ran for b in result.batches)
    assert all(b.max_abs_error <= smoke.DEFAULT_TOLERANCE for b in result.batches)


@pytest.mark.gpu
def test_front_without_hook_crashes_or_silently_corrupts(harness, batches):
    backend = smoke.make_standin_backend_class(HOOK, FLASHINFER_MLA_SIG)(harness)
    result = smoke.run_prefill_protocol(WrapperWithoutHook(backend), HOOK, harness, backend, batches)
    _report(result)
    warmup_total = sum(smoke.DEFAULT_WARMUP_SEQ_LENS)
    assert not any(b.hook_found or b.hook_ran for b in result.batches)
    for b in result.batches:
        if sum(b.seq_lens) != warmup_total:
            # The seed's crash: the plan left behind covers another token total.
            assert b.outcome == "qo-indptr-mismatch"
            assert f"q.shape[0] ({sum(b.seq_lens)}) does not match qo_indptr[-1] ({warmup_total})" in b.message
        else:
            # Same total, other split: FlashInfer cannot tell, only the numbers are wrong.
            assert b.outcome == "wrong-output"
            assert b.max_abs_error > 10 * smoke.DEFAULT_TOLERANCE
    assert {b.outcome for b in result.batches} == {"qo-indptr-mismatch", "wrong-output"}
    assert result.verdict == "qo-indptr-mismatch"
    assert "does not match qo_indptr" in result.detail and "silent wrong output" in result.detail


@pytest.mark.gpu
def test_front_forwarding_extra_arg_to_one_argument_hook_is_a_type_error(harness, batches):
    backend = smoke.make_standin_backend_class(HOOK, TRTLLM_MLA_SIG)(harness)
    result = smoke.run_prefill_protocol(WrapperForwardingFlag(backend), HOOK, harness, backend, batches)
    _report(result)
    assert result.verdict == "type-error"
    for b in result.batches:
        assert b.outcome == "type-error"
        assert b.hook_found and not b.hook_ran
        assert "init_mha_chunk_metadata() takes 2 positional arguments but 3 were given" in b.message


@pytest.mark.gpu
def test_backend_as_front_without_wrapper_passes(harness, batches):
    # The backend itself is what get_attn_backend() returns for non-hybrid models.
    backend = smoke.make_standin_backend_class(HOOK, TRTLLM_MLA_SIG)(harness)
    result = smoke.run_prefill_protocol(backend, HOOK, harness, backend, batches)
    _report(result)
    assert result.verdict == "pass", result.detail
