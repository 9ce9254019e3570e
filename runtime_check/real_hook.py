"""The implementation's real hook behind the real wrapper, planning the harness's FlashInfer wrapper.

The smoke test is evidence for a finding only if the plan FlashInfer executes is the one the
serving code would make. So where the implementation that owns the hook can be set up, its class
is built with its **real** ``__init__`` and its **real** hook runs:

* the model runner it is given is a stand-in (``ShapeRunner``) that answers the model's shape
  with the harness's: head counts, head dims (MLA: ``qk_nope_head_dim + qk_rope_head_dim`` is the
  harness's ``head_dim_qk``), dtype, device, a pool size; anything else is a permissive stand-in;
* process-wide state that the launcher would have set and the code reads through an accessor that
  refuses before launch (a module-level ``None`` the failing function reads: parallel groups,
  global server arguments) is given a stand-in of the same kind, only where a construction stopped
  on it, one at a time, and put back afterwards;
* every FlashInfer prefill wrapper the built backend holds (itself or in an object it holds) of
  the harness's wrapper class is replaced by the harness's own, so the real hook plans the wrapper
  the harness runs (with the harness's FlashInfer backend: fa2 compiles in seconds).

``RealHookBackend`` then stands behind the user's wrapper: the harness's ``forward_extend`` and
warm-up, and the real bound hook under the hook's name. When the class cannot be set up (a
constructor that needs more than the runner's shape), ``RealHookUnavailable`` says why and the
smoke test uses a stand-in with the hook's real signature instead (flashinfer_smoke.py).
"""

from __future__ import annotations

import inspect
import traceback
from typing import Any

from .flashinfer_smoke import StandinFullAttnBackendBase
from .loader import one_line, silenced
from .standins import Standin

MAX_LAUNCH_STATE = 8  # process-wide values given a stand-in, at most, per construction
CONSTRUCT_TIME_LIMIT = 120.0  # seconds for the owner's real __init__ (CUDA context, allocations)


class RealHookUnavailable(Exception):
    """The owner's real class could not be set up behind the wrapper (the reason is the text)."""


class Shape(Standin):
    """A permissive stand-in that answers the model's shape by attribute name."""

    __slots__ = ()

    def __init__(self, name: str, table: dict[str, Any]) -> None:
        super().__init__(name)
        object.__getattribute__(self, "_attn_lint_children")["__table__"] = table

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            return Standin.__getattr__(self, name)
        children = object.__getattribute__(self, "_attn_lint_children")
        if name in children:
            return children[name]
        table = children["__table__"]
        value = _shape_value(name, table)
        child = children[name] = value if value is not _NONE else Shape(
            f"{object.__getattribute__(self, '_attn_lint_name')}.{name}", table)
        return child


_NONE = object()


def _shape_value(name: str, t: dict[str, Any]) -> Any:
    """The harness's value for a model-runner attribute name, or _NONE (then a nested stand-in)."""
    n = name.lower()
    if n in ("dtype", "kv_cache_dtype", "model_dtype", "q_data_type", "data_type"):
        return t["dtype"]
    if n == "device":
        return "cuda"
    if "nope" in n and "dim" in n:
        return t["head_dim_qk"] - t["rope_dim"]
    if "rope" in n and "dim" in n:
        return t["rope_dim"]
    if n.startswith("v_head_dim"):
        return t["head_dim_vo"]
    if n in ("head_dim", "qk_head_dim"):
        return t["head_dim_qk"]
    if "kv_lora_rank" in n:
        return 512
    if "heads" in n:
        return t["heads"]
    if "world_size" in n or n.endswith(("tp_size", "cp_size", "dp_size")):
        return 1
    if "context_len" in n:
        return 8192
    if n == "page_size":
        return 1
    if n in ("size", "max_bs", "max_running_requests", "max_batch_size"):
        return 64
    return _NONE


def shape_runner(harness) -> Shape:
    table = {"dtype": harness.dtype, "heads": harness.num_qo_heads, "head_dim_qk": harness.head_dim_qk,
             "head_dim_vo": harness.head_dim_vo, "rope_dim": min(64, harness.head_dim_qk // 3)}
    return Shape("model_runner", table)


def build_owner(owner_cls: type, harness, loader) -> tuple[Any, list[str]]:
    """An instance of the real owner class, its real ``__init__`` run with a ``ShapeRunner``; the
    launch-state values given a stand-in are listed. Raises RealHookUnavailable."""
    runner = shape_runner(harness)
    table = object.__getattribute__(runner, "_attn_lint_children")["__table__"]
    given: list[tuple[dict, str]] = []
    last = None
    try:
        for _ in range(MAX_LAUNCH_STATE + 1):
            try:
                with silenced(), loader._deadlines.limit(CONSTRUCT_TIME_LIMIT):
                    return owner_cls(runner), [name for _, name in given]
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                last = exc
                missing = _launch_state(exc, loader)
                if missing is None:
                    break
                g, name = missing
                g[name] = Shape(name, table)
                given.append((g, name))
        raise RealHookUnavailable(f"`{owner_cls.__name__}(model_runner)` raised {one_line(last)}")
    finally:
        for g, name in given:
            if isinstance(g.get(name), Shape):
                g[name] = None


def _launch_state(exc: BaseException, loader) -> tuple[dict, str] | None:
    """(module globals, name) of a module-level ``None`` that the innermost tree frame of the
    error reads: state the launcher sets before any backend is built."""
    tb = exc.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        module = frame.f_globals.get("__name__", "")
        if not loader.in_tree(module):
            continue
        for name in frame.f_code.co_names:
            if name in frame.f_globals and frame.f_globals[name] is None and not name.startswith("__"):
                return frame.f_globals, name
        return None
    return None


def wire_harness(owner: Any, harness) -> list[str]:
    """Replace every FlashInfer prefill wrapper of the harness's class that the owner (or an object
    it holds) keeps by the harness's own; returns where."""
    cls = type(harness.wrapper)
    out = []
    for holder, label in [(owner, "self"), *_held(owner)]:
        for name, value in list(getattr(holder, "__dict__", {}).items()):
            if isinstance(value, cls) and value is not harness.wrapper:
                holder.__dict__[name] = harness.wrapper
                out.append(f"{label}.{name}")
    return out


def _held(owner: Any) -> list[tuple[Any, str]]:
    """Objects of the user's code the owner holds in its attributes (one level)."""
    out = []
    for name, value in getattr(owner, "__dict__", {}).items():
        mod = getattr(type(value), "__module__", "") or ""
        if hasattr(value, "__dict__") and not isinstance(value, type) and mod.split(".")[0] not in (
                "torch", "flashinfer", "builtins", "attn_lint", "numpy"):
            out.append((value, f"self.{name}"))
    return out


class RealHookBackend(StandinFullAttnBackendBase):
    """The harness's backend, with the owner's real hook under the hook's name."""

    def __init__(self, harness, owner: Any, member: str) -> None:
        super().__init__(harness)
        real = getattr(owner, member)
        sig = inspect.signature(real)
        backend = self

        def hook(*args: Any, **kwargs: Any) -> Any:
            if not _binds(sig, args, kwargs):
                return real(*args, **kwargs)  # Python's own TypeError; the body never runs
            backend.hook_calls += 1
            result = real(*args, **kwargs)
            fb = args[0] if args else next(iter(kwargs.values()), None)
            lens = getattr(fb, "extend_seq_lens_cpu", None)
            if lens is not None:
                backend.last_hook_seq_lens = tuple(lens)
                backend.harness.planned_seq_lens = tuple(lens)  # what the real hook planned for
            return result

        hook.__name__ = member
        self.__dict__[member] = hook
        self.owner = owner


def _binds(sig: inspect.Signature, args, kwargs) -> bool:
    try:
        sig.bind(*args, **kwargs)
        return True
    except TypeError:
        return False


def real_backend(owner_cls: type, member: str, harness, loader) -> tuple[RealHookBackend, dict]:
    """The RealHookBackend for ``owner_cls.member``, and what was done to set it up."""
    owner, given = build_owner(owner_cls, harness, loader)
    wired = wire_harness(owner, harness)
    if not wired:
        raise RealHookUnavailable(f"the built `{owner_cls.__name__}` holds no FlashInfer prefill wrapper of "
                                  f"the harness's class ({type(harness.wrapper).__name__})")
    return RealHookBackend(harness, owner, member), {"launch_state_stand_ins": given, "wired": wired}


def describe(exc: BaseException) -> str:
    """One line for an unexpected failure while setting up the real hook."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{one_line(exc)}{where}"


__all__ = ["RealHookBackend", "RealHookUnavailable", "real_backend", "shape_runner"]
