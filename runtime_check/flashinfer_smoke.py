"""GPU smoke test behind ``attn-lint --verify-on-gpu``: replay a probe-site finding on real FlashInfer.

The static rules say things like "``HybridLinearAttnBackend`` hides ``init_mha_chunk_metadata``, which
``forward_mha.py`` probes with ``hasattr``" or "the wrapper forwards two arguments to a delegate
whose hook takes one". This module turns such a finding into an observed failure, the way the
serving engine would hit it:

* ``PrefillHarness`` owns a real ``flashinfer.BatchPrefillWithRaggedKVCacheWrapper`` with MLA
  chunked-prefill shapes (head_dim_qk 192, head_dim_vo 128) and an fp32 reference.
* ``make_standin_backend_class`` builds a stand-in full-attention backend whose hook has exactly the
  Python signature of the real implementation, so a bad call fails with Python's own TypeError.
* ``run_prefill_protocol`` plays the caller: ``if hasattr(front, hook): getattr(front, hook)(fb)``,
  then ``forward_extend``, batch after batch, and classifies what happens.

torch and flashinfer are imported inside functions only: the linter imports this module on
machines without a GPU, and ``gpu_environment_problem`` is how it finds out.
"""

from __future__ import annotations

import inspect
import itertools
import keyword
import math
import statistics
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

INSTALL_HINT = "pip install 'attn-lint[gpu]'"

WORKSPACE_BYTES = 128 * 1024 * 1024  # FlashInfer's documented recommendation for the float workspace

# Max-abs-error tolerance against the fp32 reference.
# The inputs are bf16 (8 significant bits, unit roundoff 2**-8 ~ 0.0039) and FlashInfer also rounds
# the softmax probabilities to bf16 before the P @ V product and writes a bf16 output. With
# randn inputs the outputs of the first rows of a causal sequence (which see only a few keys) are
# of order 1-4, so a correct kernel's largest error is a few bf16 ulps of such values: measured on
# an H200 at 0.0078-0.0093 for fa2 and fa3 (BRIEF.md, docs/gpu-harness.md). A stale plan makes rows
# attend the wrong keys and gives O(1) errors (measured 3.66-5.1). 2e-2 leaves ~2x headroom above
# correct runs and stays two orders of magnitude below the smallest stale-plan error.
DEFAULT_TOLERANCE = 2e-2

# The plan "left over from a previous batch" (the seed crash read "qo_indptr[-1] (800)"). Two
# sequences rather than one so that default_batches can include a batch with the same 800-token
# total but another split: the stale plan then raises nothing and only the output is wrong.
DEFAULT_WARMUP_SEQ_LENS: tuple[int, ...] = (300, 500)

# Outcomes, least to most severe; SmokeResult.verdict is the most severe one seen.
# The two crashes rank above silent wrong output because their evidence is exact exception text,
# while "wrong-output" rests on a tolerance; every failure kind seen is still named in `detail`.
# "error" ranks highest: something the protocol does not model broke, so nothing else can be
# trusted until a person looks.
OUTCOME_SEVERITY = {
    "pass": 0,
    "wrong-output": 1,
    "qo-indptr-mismatch": 2,
    "type-error": 3,
    "error": 4,
}


def gpu_environment_problem() -> str | None:
    """None when the smoke test can run here; otherwise one line saying what is missing."""
    try:
        import torch
    except ImportError:
        return f"GPU smoke test unavailable: torch is not installed; {INSTALL_HINT}"
    if not torch.cuda.is_available():
        if torch.version.cuda is None:
            return (
                f"GPU smoke test unavailable: torch {torch.__version__} is a CPU-only build; "
                f"install a CUDA build of torch ({INSTALL_HINT})"
            )
        return (
            f"GPU smoke test unavailable: torch {torch.__version__} (CUDA {torch.version.cuda}) "
            f"sees no usable GPU; {INSTALL_HINT} on a machine with an NVIDIA GPU"
        )
    try:
        import flashinfer  # noqa: F401
    except Exception as exc:  # a broken install raises more than ImportError (missing deps, ABI)
        reason = "is not installed" if isinstance(exc, ModuleNotFoundError) else f"failed to import ({exc})"
        return f"GPU smoke test unavailable: flashinfer {reason}; {INSTALL_HINT}"
    return None


def environment_summary() -> dict[str, Any]:
    """Versions and device, for reports and docs. Needs torch with CUDA and flashinfer."""
    import subprocess

    import flashinfer
    import torch

    try:
        nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, timeout=30).stdout
        nvcc_release = next((line.strip() for line in nvcc.splitlines() if "release" in line), None)
    except (OSError, subprocess.SubprocessError):
        nvcc_release = None
    props = torch.cuda.get_device_properties(0)
    return {
        "gpu": props.name,
        "compute_capability": f"{props.major}.{props.minor}",
        "gpu_memory_gib": round(props.total_memory / 2**30, 1),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "flashinfer": flashinfer.__version__,
        "nvcc": nvcc_release,
    }


def flashinfer_jit_cache_entries() -> frozenset[str]:
    """Names of the modules in FlashInfer's JIT cache (one folder each under cached_ops/)."""
    from flashinfer.jit import env

    jit_dir = env.FLASHINFER_JIT_DIR
    return frozenset(p.name for p in jit_dir.iterdir()) if jit_dir.is_dir() else frozenset()


@dataclass(frozen=True)
class PrefillBatch:
    """One prefill batch: packed q/k/v on the GPU plus the engine-side view of it."""

    seq_lens: tuple[int, ...]
    seed: int
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    # Stand-in for the engine's ForwardBatch; holds the fields that attention backends' metadata
    # hooks read (SGLang names), so a real backend method could be pointed at it as well.
    forward_batch: types.SimpleNamespace

    @property
    def num_tokens(self) -> int:
        return sum(self.seq_lens)


class PrefillHarness:
    """A real FlashInfer ragged-prefill wrapper with fixed head shapes, planned per batch.

    Defaults are those of MLA chunked prefill (as in SGLang's DeepSeek-style MHA path): 16 heads,
    head_dim_qk 192 (128 nope + 64 rope), head_dim_vo 128, bf16, causal. ``backend`` is passed
    to FlashInfer: "fa2" compiles in ~20 s on an H200, "fa3" (what "auto" picks on Hopper) in ~85 s.
    """

    def __init__(
        self,
        *,
        num_qo_heads: int = 16,
        num_kv_heads: int = 16,
        head_dim_qk: int = 192,
        head_dim_vo: int = 128,
        dtype: torch.dtype | None = None,
        causal: bool = True,
        sm_scale: float | None = None,
        backend: str = "fa2",
        device: str = "cuda",
    ) -> None:
        import flashinfer
        import torch

        if num_qo_heads % num_kv_heads:
            raise ValueError(f"num_qo_heads ({num_qo_heads}) must be a multiple of num_kv_heads ({num_kv_heads})")
        self.num_qo_heads = num_qo_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim_qk = head_dim_qk
        self.head_dim_vo = head_dim_vo
        self.dtype = dtype if dtype is not None else torch.bfloat16
        self.causal = causal
        # Passed to both FlashInfer and the reference so that they cannot disagree on a default.
        self.sm_scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(head_dim_qk)
        self.backend = backend
        self.device = torch.device(device)
        self.workspace = torch.empty(WORKSPACE_BYTES, dtype=torch.uint8, device=self.device)
        self.wrapper = flashinfer.BatchPrefillWithRaggedKVCacheWrapper(self.workspace, "NHD", backend=backend)
        self.planned_seq_lens: tuple[int, ...] | None = None
        self.plan_count = 0

    def plan(self, seq_lens: Sequence[int]) -> None:
        """Plan FlashInfer for one batch whose queries and keys are the same tokens (q_len == kv_len)."""
        import torch

        seq_lens = tuple(int(n) for n in seq_lens)
        if not seq_lens or min(seq_lens) <= 0:
            raise ValueError(f"sequence lengths must be positive, got {list(seq_lens)}")
        # int32 CPU indptr as FlashInfer documents: plan() reads them on the host to build its
        # schedule, so CPU tensors spare it a device-to-host sync.
        offsets = [0, *itertools.accumulate(seq_lens)]
        qo_indptr = torch.tensor(offsets, dtype=torch.int32)
        kv_indptr = torch.tensor(offsets, dtype=torch.int32)
        self.wrapper.plan(
            qo_indptr,
            kv_indptr,
            self.num_qo_heads,
            self.num_kv_heads,
            self.head_dim_qk,
            head_dim_vo=self.head_dim_vo,
            causal=self.causal,
            sm_scale=self.sm_scale,
            q_data_type=self.dtype,
            kv_data_type=self.dtype,
        )
        self.planned_seq_lens = seq_lens
        self.plan_count += 1

    def run(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """FlashInfer's run() on whatever plan is current; a stale plan is the point of the test."""
        return self.wrapper.run(q, k, v)

    def make_batch(self, seq_lens: Sequence[int], seed: int) -> PrefillBatch:
        import torch

        seq_lens = tuple(int(n) for n in seq_lens)
        n = sum(seq_lens)
        gen = torch.Generator(device=self.device).manual_seed(seed)

        def randn(heads: int, dim: int) -> torch.Tensor:
            return torch.randn((n, heads, dim), generator=gen, device=self.device, dtype=self.dtype)

        q = randn(self.num_qo_heads, self.head_dim_qk)
        k = randn(self.num_kv_heads, self.head_dim_qk)
        v = randn(self.num_kv_heads, self.head_dim_vo)
        lens_cpu = torch.tensor(seq_lens, dtype=torch.int64)
        forward_batch = types.SimpleNamespace(
            batch_size=len(seq_lens),
            extend_num_tokens=n,
            extend_seq_lens_cpu=list(seq_lens),
            extend_prefix_lens_cpu=[0] * len(seq_lens),
            seq_lens_cpu=lens_cpu,
            seq_lens=lens_cpu.to(self.device),
            extend_seq_lens=lens_cpu.to(self.device, torch.int32),
            extend_prefix_lens=torch.zeros(len(seq_lens), dtype=torch.int32, device=self.device),
            # Plain prefill of whole sequences: no prefix chunks, no one-shot MHA, no LSE.
            num_prefix_chunks=0,
            prefix_chunk_idx=None,
            mha_one_shot=False,
            mha_return_lse=False,
            attn_attend_prefix_cache=None,
        )
        return PrefillBatch(seq_lens=seq_lens, seed=seed, q=q, k=k, v=v, forward_batch=forward_batch)

    def reference(self, batch: PrefillBatch) -> torch.Tensor:
        from .reference import ragged_prefill_reference

        return ragged_prefill_reference(
            batch.q, batch.k, batch.v, batch.seq_lens, causal=self.causal, sm_scale=self.sm_scale
        )


def default_batches(harness: PrefillHarness, seed: int = 0) -> list[PrefillBatch]:
    """Batches that make each way a metadata hook can go missing show up.

    Against the warm-up plan (DEFAULT_WARMUP_SEQ_LENS, 800 tokens):
    * [5, 37, 130]: another token total, so an unplanned run raises FlashInfer's ValueError (the
      seed's crash).
    * [130, 37, 5]: the previous batch's total with another split; catches a front or backend that
      re-plans only when the token count changes (silent wrong output).
    * [1000, 1750]: long sequences, a larger total.
    * [500, 300]: the warm-up plan's total with another split: with the hook never reaching the
      backend, this is the silent wrong-output case.
    """
    seq_lens_list = [(5, 37, 130), (130, 37, 5), (1000, 1750), (500, 300)]
    return [harness.make_batch(lens, seed + i) for i, lens in enumerate(seq_lens_list)]


class StandinFullAttnBackendBase:
    """What a stand-in full-attention backend does, apart from its generated metadata hook.

    The hook is added by make_standin_backend_class with the real implementation's signature;
    its body calls ``_standin_hook_called``.
    """

    def __init__(self, harness: PrefillHarness) -> None:
        self.harness = harness
        self.hook_calls = 0
        self.last_hook_seq_lens: tuple[int, ...] | None = None

    def init_forward_metadata(self, forward_batch: Any) -> None:
        """Plans the ragged wrapper: what left the stale plan behind in the seed case."""
        self.harness.plan(forward_batch.extend_seq_lens_cpu)

    def forward_extend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, forward_batch: Any) -> torch.Tensor:
        return self.harness.run(q, k, v)

    def _standin_hook_called(self, forward_batch: Any) -> None:
        self.hook_calls += 1
        self.last_hook_seq_lens = tuple(forward_batch.extend_seq_lens_cpu)
        self.harness.plan(forward_batch.extend_seq_lens_cpu)


class ForwardBatchTooThin(Exception):
    """A hook read a field of the forward batch that the harness's batch does not have: the
    protocol cannot judge that hook (said so, never reported as a failure of the code)."""


def make_standin_backend_class(
    hook_name: str,
    hook_signature: inspect.Signature | None = None,
    *,
    class_name: str = "StandinFullAttnBackend",
) -> type:
    """A stand-in backend class whose method ``hook_name`` has exactly ``hook_signature``.

    The method is standins.function_with_signature's (generated source, so binding is Python's
    own: a call the real implementation cannot bind raises the same TypeError, worded the same way
    when ``class_name`` is the real class's name). Annotations are attached afterwards, so
    ``inspect.signature`` of the method equals ``hook_signature``. The body takes the first
    argument after ``self`` as the forward batch and plans the harness with it. No torch needed.
    """
    from .standins import function_with_signature

    if hook_signature is None:
        hook_signature = inspect.Signature(
            [
                inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                inspect.Parameter("forward_batch", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            ]
        )
    for what, name in (("hook name", hook_name), ("class name", class_name)):
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"{what} {name!r} is not a Python identifier")
    if hook_name.startswith("__"):
        # A class body would mangle it to _Cls__name, and the probe would not find it.
        raise ValueError(f"hook name {hook_name!r} starts with '__'")
    if hasattr(StandinFullAttnBackendBase, hook_name):
        raise ValueError(f"hook name {hook_name!r} would replace the stand-in's own {hook_name}()")
    params = list(hook_signature.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if not params or params[0].kind not in positional:
        raise ValueError(f"hook signature {hook_signature} has no leading 'self' parameter")
    if any(p.name.startswith("__") for p in params):
        raise ValueError(f"could not reproduce signature {hook_signature}: a parameter name starts with '__'")
    self_name = params[0].name
    first = params[1] if len(params) > 1 else None

    def body(bound: dict) -> Any:
        # Where the forward batch is, given how the parameter after self is declared.
        if first is None:
            fb = None
        elif first.kind is inspect.Parameter.VAR_POSITIONAL:
            fb = bound[first.name][0] if bound[first.name] else None
        elif first.kind is inspect.Parameter.VAR_KEYWORD:
            fb = bound[first.name].get("forward_batch")
        else:
            fb = bound[first.name]
        return bound[self_name]._standin_hook_called(fb)

    method = function_with_signature(hook_name, hook_signature, body, f"{class_name}.{hook_name}")
    method.__annotations__ = {p.name: p.annotation for p in params if p.annotation is not inspect.Parameter.empty}
    if hook_signature.return_annotation is not inspect.Signature.empty:
        method.__annotations__["return"] = hook_signature.return_annotation
    cls = type(class_name, (StandinFullAttnBackendBase,), {hook_name: method, "__module__": __name__,
                                                           "__qualname__": class_name})
    built = inspect.signature(method)
    if built != hook_signature:
        raise ValueError(f"could not reproduce signature {hook_signature}; built {built}")
    return cls


@dataclass(frozen=True)
class BatchOutcome:
    seq_lens: tuple[int, ...]
    outcome: str  # a key of OUTCOME_SEVERITY
    message: str | None  # exception text for crashes, None otherwise
    max_abs_error: float | None  # None when the batch did not produce an output
    hook_found: bool  # the caller's hasattr(front, hook_name) probe
    hook_ran: bool  # the backend's own hook body executed during this batch
    planned_seq_lens: tuple[int, ...] | None  # the plan FlashInfer ran on (or would have)
    wall_s: float  # probe + hook + forward_extend, synchronised; the reference is not included


@dataclass(frozen=True)
class SmokeResult:
    hook_name: str
    backend: str  # FlashInfer backend, "fa2" or "fa3"
    tolerance: float
    batches: tuple[BatchOutcome, ...]
    verdict: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _short_message(exc: BaseException) -> str:
    """The exception's first sentence, without its full stop: FlashInfer's ValueError goes on to
    explain the ragged layout, which a one-line report does not need."""
    text = str(exc).strip()
    cut = text.find(". ")
    return text[:cut] if cut != -1 else text.rstrip(".")


def _describe(outcome: BatchOutcome, tolerance: float) -> str:
    lens = list(outcome.seq_lens)
    if outcome.outcome == "qo-indptr-mismatch":
        return f"FlashInfer: {outcome.message}"
    if outcome.outcome == "type-error":
        return f"TypeError: {outcome.message}"
    if outcome.outcome == "wrong-output":
        plan = list(outcome.planned_seq_lens) if outcome.planned_seq_lens else None
        return (
            f"silent wrong output on batch {lens} run with the plan for {plan}: "
            f"max abs error {outcome.max_abs_error:.3g} (tolerance {tolerance:g})"
        )
    if outcome.outcome == "error":
        return f"harness error on batch {lens}: {outcome.message}"
    return f"batch {lens} matches the fp32 reference"


def _summarise(hook_name: str, outcomes: Sequence[BatchOutcome], tolerance: float) -> tuple[str, str]:
    verdict = max((o.outcome for o in outcomes), key=OUTCOME_SEVERITY.__getitem__, default="pass")
    if verdict == "pass":
        worst = max((o.max_abs_error or 0.0) for o in outcomes) if outcomes else 0.0
        return verdict, (
            f"all {len(outcomes)} batches match the fp32 reference "
            f"(max abs error {worst:.3g} <= {tolerance:g})"
        )
    parts = []
    if not any(o.hook_found for o in outcomes):
        parts.append(f"probe hasattr(front, {hook_name!r}) was False")
    elif not any(o.hook_ran for o in outcomes):
        parts.append(f"front has {hook_name} but the backend's {hook_name} never ran")
    # The first batch of each failure kind, most severe kind first.
    firsts: dict[str, BatchOutcome] = {}
    for o in outcomes:
        if o.outcome != "pass":
            firsts.setdefault(o.outcome, o)
    for kind in sorted(firsts, key=OUTCOME_SEVERITY.__getitem__, reverse=True):
        parts.append(_describe(firsts[kind], tolerance))
    return verdict, "; ".join(parts)


def run_prefill_protocol(
    front: Any,
    hook_name: str,
    harness: PrefillHarness,
    backend: StandinFullAttnBackendBase,
    batches: Sequence[PrefillBatch] | None = None,
    call_args: Sequence[Any] | None = None,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    warmup_seq_lens: Sequence[int] = DEFAULT_WARMUP_SEQ_LENS,
) -> SmokeResult:
    """Play the serving engine's prefill caller against ``front`` and classify each batch.

    ``front`` is what the caller sees (``get_attn_backend()``): a user wrapper whose delegate is
    ``backend``, or ``backend`` itself. ``call_args`` are what the probe site passes after the
    forward batch (none, at SGLang's ``forward_mha.py``).

    A warm-up batch first runs through ``backend.init_forward_metadata`` and ``forward_extend``,
    leaving its plan behind as a previous batch would, and doubles as a self-check of the harness:
    if FlashInfer and the reference disagree on a correctly planned batch, this raises
    RuntimeError instead of reporting a finding. Errors of the warm-up (no nvcc, a compile
    failure) propagate for the same reason.
    """
    import torch

    call_args = tuple(call_args or ())
    if batches is None:
        batches = default_batches(harness)

    warmup = harness.make_batch(warmup_seq_lens, seed=12345)
    backend.init_forward_metadata(warmup.forward_batch)
    warm_out = backend.forward_extend(warmup.q, warmup.k, warmup.v, warmup.forward_batch)
    warm_err = _max_abs_error(warm_out, harness.reference(warmup))
    if not warm_err <= tolerance:
        raise RuntimeError(
            f"harness self-check failed: a correctly planned batch {list(warmup_seq_lens)} has max abs "
            f"error {warm_err:.3g} > {tolerance:g}; the smoke test cannot judge anything on this setup"
        )

    outcomes = []
    for batch in batches:
        fb = batch.forward_batch
        hook_calls_before = backend.hook_calls
        hook_found = hasattr(front, hook_name)
        out = None
        message = None
        outcome = None
        t0 = time.perf_counter()
        try:
            # The probe site, verbatim in shape: if the front hides the hook, nothing plans.
            if hook_found:
                getattr(front, hook_name)(fb, *call_args)
            out = backend.forward_extend(batch.q, batch.k, batch.v, fb)
            torch.cuda.synchronize()
        except AttributeError as exc:
            if getattr(exc, "obj", None) is fb:
                raise ForwardBatchTooThin(str(exc)) from exc
            outcome, message = "error", f"AttributeError: {exc}"
        except TypeError as exc:
            outcome, message = "type-error", str(exc)
        except ValueError as exc:
            # Classified by what the harness knows, not by the message: FlashInfer's run() refused
            # a batch whose token total is not the one its current plan was made for.
            planned = harness.planned_seq_lens
            if planned is not None and sum(planned) != batch.num_tokens and _raised_in_flashinfer(exc):
                outcome, message = "qo-indptr-mismatch", _short_message(exc)
            else:
                outcome, message = "error", f"ValueError: {exc}"
        except Exception as exc:  # anything else is outside the protocol: report it, never hide it
            outcome, message = "error", f"{type(exc).__name__}: {exc}"
        wall_s = time.perf_counter() - t0

        err = None
        if out is not None:
            expected = harness.reference(batch)
            if tuple(out.shape) != tuple(expected.shape):
                outcome, message = "error", f"output shape {tuple(out.shape)}, expected {tuple(expected.shape)}"
            else:
                err = _max_abs_error(out, expected)
                # NaN compares False both ways: test for "within", so NaN/inf count as wrong output.
                outcome = "pass" if err <= tolerance else "wrong-output"
        outcomes.append(
            BatchOutcome(
                seq_lens=batch.seq_lens,
                outcome=outcome,
                message=message,
                max_abs_error=err,
                hook_found=hook_found,
                hook_ran=backend.hook_calls > hook_calls_before,
                planned_seq_lens=harness.planned_seq_lens,
                wall_s=wall_s,
            )
        )

    verdict, detail = _summarise(hook_name, outcomes, tolerance)
    return SmokeResult(
        hook_name=hook_name,
        backend=harness.backend,
        tolerance=tolerance,
        batches=tuple(outcomes),
        verdict=verdict,
        detail=detail,
    )


def _raised_in_flashinfer(exc: BaseException) -> bool:
    """Whether FlashInfer's own code raised it (a frame of the flashinfer package on its way)."""
    import traceback

    return any("flashinfer" in f.filename.replace("\\", "/").split("/")
               for f in traceback.extract_tb(exc.__traceback__))


def _max_abs_error(out: torch.Tensor, expected: torch.Tensor) -> float:
    return (out.float() - expected).abs().max().item()


@dataclass(frozen=True)
class CompileTimings:
    backend: str
    seq_lens: tuple[int, ...]
    # Modules FlashInfer added to its JIT cache during the first plan+run. Empty means they were
    # built by an earlier process and first_plan_run_s is a load, not a compile.
    jit_modules_built: tuple[str, ...]
    first_plan_run_s: float  # includes FlashInfer's JIT compile (or load) of the prefill module
    first_max_abs_error: float
    warm_plan_run_ms_median: float  # plan + run + synchronize, host wall clock
    warm_plan_run_ms_min: float
    warm_run_ms_mean: float  # run() alone, CUDA events over warm_iters back-to-back launches
    warm_iters: int
    environment: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def first_compile_and_warm_timings(
    backend: str = "fa2",
    seq_lens: Sequence[int] = (1000, 1750),
    warm_iters: int = 50,
    **harness_kwargs: Any,
) -> CompileTimings:
    """Time the first plan+run in this process (JIT compile on a fresh machine) and warm ones.

    CUDA context creation and input generation happen before the clock starts, so the first
    figure is FlashInfer's module build/load plus one plan and one run.
    """
    import torch

    harness = PrefillHarness(backend=backend, **harness_kwargs)
    batch = harness.make_batch(seq_lens, seed=0)
    torch.cuda.synchronize()

    cached_before = flashinfer_jit_cache_entries()
    t0 = time.perf_counter()
    harness.plan(batch.seq_lens)
    out = harness.run(batch.q, batch.k, batch.v)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    built = tuple(sorted(flashinfer_jit_cache_entries() - cached_before))
    first_err = _max_abs_error(out, harness.reference(batch))

    plan_run_ms = []
    for _ in range(warm_iters):
        t = time.perf_counter()
        harness.plan(batch.seq_lens)
        harness.run(batch.q, batch.k, batch.v)
        torch.cuda.synchronize()
        plan_run_ms.append((time.perf_counter() - t) * 1e3)

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(warm_iters):
        harness.run(batch.q, batch.k, batch.v)
    end.record()
    end.synchronize()

    return CompileTimings(
        backend=backend,
        seq_lens=tuple(batch.seq_lens),
        jit_modules_built=built,
        first_plan_run_s=first_s,
        first_max_abs_error=first_err,
        warm_plan_run_ms_median=statistics.median(plan_run_ms),
        warm_plan_run_ms_min=min(plan_run_ms),
        warm_run_ms_mean=start.elapsed_time(end) / warm_iters,
        warm_iters=warm_iters,
        environment=environment_summary(),
    )


def main(argv: Sequence[str] | None = None, print_fn: Callable[[str], None] = print) -> int:
    """``python -m attn_lint.runtime_check.flashinfer_smoke``: timings and two self-checks, as JSON lines.

    The self-checks run the default batches with the backend itself as the front (hook found:
    expect "pass") and with a front that has no hook (expect crashes and wrong output).
    """
    import argparse
    import json

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--backend", default="fa2", help="FlashInfer backend: fa2 (default) or fa3")
    parser.add_argument("--warm-iters", type=int, default=50)
    parser.add_argument("--hook", default="init_mha_chunk_metadata")
    args = parser.parse_args(argv)

    problem = gpu_environment_problem()
    if problem:
        print_fn(problem)
        return 2
    timings = first_compile_and_warm_timings(args.backend, warm_iters=args.warm_iters)
    print_fn(json.dumps({"timings": timings.to_dict()}))

    harness = PrefillHarness(backend=args.backend)
    cls = make_standin_backend_class(args.hook)
    batches = default_batches(harness)
    for label, make_front in (("backend-as-front", lambda b: b), ("front-without-hook", lambda b: object())):
        backend = cls(harness)
        result = run_prefill_protocol(make_front(backend), args.hook, harness, backend, batches)
        print_fn(json.dumps({"scenario": label, "result": result.to_dict()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
