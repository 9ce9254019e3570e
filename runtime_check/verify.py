"""``attn-lint --verify`` / ``--verify-on-gpu``: check each finding against the user's real code.

Use::

    from attn_lint.linter.app.engine import Settings, analyse
    from attn_lint.runtime_check.verify import verify

    result = analyse(["src/"], Settings(), keep_context=True)   # the context is needed
    verdicts = verify(result, gpu=False)                        # {Finding: Verification}

Each AL001/AL002/AL003 finding gets a ``Verification`` whose verdict says what was tested
(decisions.py): ``consequence-reproduced`` (the GPU run failed as predicted) and
``pairing-reproduced`` (the code's own construction path built the wrapper around that
implementation, pairing.py) are the two **confirmed** verdicts; ``attribute-hidden``,
``call-rejected``, ``noop-reached`` and ``placeholder-reached`` say only that the static fact holds on the real classes
(scenarios.py); ``not-reproduced`` that the claim did not hold (the fact, or every construction
path explored); ``unverifiable`` why nothing could be decided. A finding the static analysis keeps
only as latent drift (every pairing ruled out, ``--show-latent``) has its fact checked, and its
pairing is not run: the signals already said why it cannot be built, and a construction path does
not see the probe site.

``load_mode`` says how the finding's class was loaded: ``import`` (ordinary import), ``isolated``
(its source run with failing imports replaced by stand-ins, see loader.py), ``isolated-partial``,
``isolated-strict`` (second attempt, made only when the class could not be loaded at all: every
package outside the standard library is a stand-in; the first attempt's reason is kept in
``facts["first_attempt"]``) or ``failed``.

The user's code never runs in this process: the checks run in forked children supervised by
isolate.py (a wall-clock limit per finding, ``task_time_limit``); a child that dies, hangs or
tampers with attn-lint makes its finding ``unverifiable`` with what happened
(``facts["isolation"]``), and only validated JSON comes back.

With ``gpu=True`` an AL001/AL002 finding whose static fact holds, whose pairing is not ruled out,
and whose implementation's hook **plans a FlashInfer prefill wrapper** (read from its code:
flashinfer_use.py) is also driven end to end on FlashInfer: the user's real wrapper is the front
the caller probes, and behind it the implementation's real hook runs where its class can be set up
(real_hook.py), else a stand-in backend with the hook's real signature (flashinfer_smoke.py);
batches of different lengths run and are compared with a torch reference. Other findings get
``gpu: "n/a: the hook does not plan FlashInfer"``. torch and flashinfer are imported only there.

GPU controls: with ``gpu=True`` the same protocol also runs on wrappers that *do* forward a probed
hook whose implementations plan FlashInfer, and have no finding on it, once per distinct signature
of that hook among the delegates' implementations (``Verdicts.controls``; the CLI prints them as a
second table and puts them in the JSON ``stats.gpu_controls``). A fixed wrapper passes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from ..linter.app.engine import Result
from ..linter.findings import Finding, RunFacts, short
from ..linter.report.printable import printable
from ..rules import RULES_BY_CODE
from ..rules.al001_unforwarded_hook import HiddenHookFacts
from ..rules.base import RuntimeCheck
from . import call_sites, scenarios
from .decisions import CONFIRMED, MEANING, VERDICTS, decide, is_confirmed
from .flashinfer_use import NOT_PLANNING, plans_flashinfer
from .isolate import DEFAULT_MEMORY_LIMIT, DEFAULT_TASK_TIME_LIMIT, Failure, can_isolate, run_in_process, run_tasks
from .loader import DEFAULT_MODULE_TIME_LIMIT, TreeLoader, one_line, precompile
from .pairing import PAIRING_TIME_LIMIT, PairingResult, check_pairing
from .scenarios import GpuPlan, Outcome


def _check_of(f: Finding) -> RuntimeCheck | None:
    """How the finding's rule is checked on the real code (Rule.runtime_check), if it is."""
    rule = RULES_BY_CODE.get(f.code)
    return rule.runtime_check if rule is not None else None


def _replays_on_gpu(f: Finding) -> bool:
    check = _check_of(f)
    return check is not None and check.gpu_replay


class Verdicts(dict):
    """``{Finding: Verification}``; ``controls`` holds the GPU control runs (see ``gpu_controls``)."""

    controls: list

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.controls = []


@dataclass(frozen=True)
class Control:
    """A GPU smoke run on a wrapper that *does* forward a probed prefill-metadata hook (no finding):
    the same protocol that fails on an unfixed wrapper must pass on a fixed one."""

    wrapper: str  # qualified class name
    member: str
    delegate: str  # the implementation whose hook signature the stand-in backend has
    signature: str
    verdict: str  # the SmokeResult verdict (pass | wrong-output | qo-indptr-mismatch | type-error | error)
    detail: str
    seconds: float

    def to_json(self) -> dict:
        return {"wrapper": self.wrapper, "member": self.member, "delegate": self.delegate,
                "signature": self.signature, "verdict": self.verdict, "detail": self.detail,
                "seconds": round(self.seconds, 4)}


@dataclass(frozen=True)
class Verification:
    verdict: str  # one of decisions.VERDICTS
    load_mode: str  # import | isolated | failed | n/a
    detail: str
    seconds: float
    gpu: dict | str | None = None  # the smoke test's result, or why it did not run; None: not asked
    facts: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def confirmed(self) -> bool:
        return is_confirmed(self.verdict)

    def to_json(self) -> dict:
        out = {"verdict": self.verdict, "confirmed": self.confirmed, "load_mode": self.load_mode,
               "detail": self.detail, "seconds": round(self.seconds, 6)}
        if self.facts:
            out["facts"] = _jsonable(self.facts)
        if self.gpu is not None:
            out["gpu"] = _jsonable(self.gpu)
        return out


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return str(v)


def _default_smoke_backend() -> str:
    """FlashInfer backend for the smoke test: fa2 (compiles in ~20-35 s on an H200), or what
    ATTN_LINT_FLASHINFER_BACKEND says (fa3 is FlashInfer's own choice on Hopper; ~85-105 s)."""
    import os
    return os.environ.get("ATTN_LINT_FLASHINFER_BACKEND", "fa2")


def verify(result: Result, gpu: bool = False, *, time_limit: float = DEFAULT_MODULE_TIME_LIMIT,
           task_time_limit: float = DEFAULT_TASK_TIME_LIMIT, smoke_backend: str | None = None,
           gpu_problem: str | None = None, latent: bool = False,
           memory_limit: int | None = DEFAULT_MEMORY_LIMIT) -> dict[Finding, Verification]:
    """Verdicts for every AL001/AL002/AL003 finding of ``result`` (analysed with keep_context=True).

    ``gpu``: also run the FlashInfer smoke test where the hook plans FlashInfer (flashinfer_use.py).
    ``latent``: verify the latent findings (``result.latent``, --show-latent) too.
    ``gpu_problem``: the caller already asked ``gpu_environment_problem()``; when it is set the
    GPU part is skipped with that reason (and the caller reports it).
    ``time_limit``: the loader's own limit per module load (SIGALRM, inside the child);
    ``task_time_limit``: the wall-clock limit per finding, kept from outside (isolate.py): the
    user's code runs in child processes, and a child's death is its finding's verdict.
    ``memory_limit``: bytes per child (isolate.py), None for none; a GPU step caps only its
    resident memory, never its address space (CUDA reserves far more than it uses).
    """
    smoke_backend = smoke_backend or _default_smoke_backend()
    out: Verdicts = Verdicts()
    todo = [f for f in [*result.findings, *(getattr(result, "latent", None) or [] if latent else [])]
            if _check_of(f) is not None]
    ctx = result.context
    if not todo and not (gpu and ctx is not None):
        return out
    if ctx is None:
        for f in todo:
            out[f] = Verification("unverifiable", "n/a", "the analysis kept no context "
                                  "(call analyse(..., keep_context=True))", 0.0)
        return out
    if gpu and gpu_problem is None:
        gpu_problem = isolated_gpu_problem(task_time_limit, memory_limit)
    run_gpu = gpu and gpu_problem is None
    wanted: set[Finding] = set()  # findings that call for the smoke test
    for f, (v, wants) in zip(todo, _batch(result, todo, False, time_limit, task_time_limit, run_gpu, smoke_backend,
                                          gpu, memory_limit)):
        out[f] = v
        if wants:
            wanted.add(f)
    retry = [f for f in todo if out[f].facts.get("load_problem")]
    if retry:
        # Second attempt for classes that would not load with the real packages present (an
        # installed torch or triton whose import-time work fails without the rest of the stack):
        # every package outside the standard library is a stand-in, as on a machine without them.
        for f, (v, wants) in zip(retry, _batch(result, retry, True, time_limit, task_time_limit, run_gpu,
                                              smoke_backend, gpu, memory_limit)):
            first = out[f]
            if v.facts.get("isolation"):
                out[f] = replace(first, facts=dict(first.facts, strict_attempt=v.detail))
            elif not v.facts.get("load_problem"):
                out[f] = replace(v, seconds=first.seconds + v.seconds, facts=dict(v.facts, first_attempt=first.detail))
                if wants:
                    wanted.add(f)
    if gpu:
        if gpu_problem:
            for f in wanted:
                out[f] = replace(out[f], gpu=f"not run: {gpu_problem}")
        else:
            out.controls = _isolated_controls(result, time_limit, task_time_limit, smoke_backend,
                                              {f.member for f in wanted}, memory_limit)
    return out


def _isolated(count: int, child_main, validate, task_time_limit: float,
              memory_limit: int | None = DEFAULT_MEMORY_LIMIT, cap_address_space: bool = True, answer=None) -> list:
    if can_isolate():
        return run_tasks(count, child_main, validate, task_time_limit, memory_limit, cap_address_space, answer)
    return run_in_process(count, child_main, validate, answer)


class _Answers:
    """The parent's answers to what the checks' processes ask: each pairing (wrapper, attribute,
    implementations) is checked once, in a process of its own that runs nothing but its
    construction paths, and its result is shared by every finding that asks for it (a finding's
    own process never computes what another finding reads); calls by name are read from the
    tree's source here, once (static reading: none of the code runs)."""

    def __init__(self, ctx, files, time_limit: float, strict: bool, task_time_limit: float,
                 memory_limit: int | None):
        self.ctx, self.files, self.time_limit, self.strict = ctx, files, time_limit, strict
        self.task_time_limit, self.memory_limit = task_time_limit, memory_limit
        self.memo: dict[tuple, dict] = {}

    def __call__(self, question: Any) -> Any:
        if "calls" in question:
            name = question["calls"]
            if not isinstance(name, str):
                raise ValueError("not a name")
            return call_sites.positions(call_sites.calls_named(self.ctx, name))
        wrapper, attr, impls = question["key"]
        seconds = question["seconds"]
        if not (isinstance(wrapper, str) and (attr is None or isinstance(attr, str)) and isinstance(impls, list)
                and all(isinstance(q, str) for q in impls) and isinstance(seconds, (int, float))):
            raise ValueError("not a pairing")
        key = (wrapper, attr, tuple(impls))
        if key not in self.memo:
            self.memo[key] = self._check(key, min(float(seconds), PAIRING_TIME_LIMIT))
        return self.memo[key]

    def _check(self, key: tuple, seconds: float) -> dict:
        ctx, files, time_limit, strict = self.ctx, self.files, self.time_limit, self.strict

        def child_main(first: int, ch) -> None:
            _ask_parent_for_calls(ch, 0)
            with TreeLoader(files, time_limit=time_limit, strict=strict) as loader:
                ch.start(0)
                r = check_pairing(ctx, loader, key[0], key[1], list(key[2]), time_limit=seconds)
                ch.result(0, {"status": r.status, "detail": r.detail, "facts": _jsonable(r.facts)})

        got = _isolated(1, child_main, _pairing_from_json, self.task_time_limit, self.memory_limit,
                        answer=self)[0]
        if isinstance(got, Failure):
            return {"status": "unverifiable", "detail": f"while the pairing was checked (in a process of its own), "
                                                       f"the code under verification {got.detail}", "facts": {}}
        return got


def _pairing_from_json(data: Any) -> dict:
    if not (isinstance(data, dict) and data.get("status") in ("reproduced", "not-reproduced", "unverifiable")
            and isinstance(data.get("detail"), str) and isinstance(data.get("facts"), dict)):
        raise ValueError("not a pairing result")
    return data


def _ask_parent_for_calls(ch, i: int) -> None:
    """In a check's process: calls by name come from the parent (call_sites.asked)."""
    def asked(name: str) -> list:
        reply = ch.ask(i, {"calls": name})
        got = reply.get("ok") if isinstance(reply, dict) else None
        return [c for c in got if isinstance(c, list) and len(c) == 6] if isinstance(got, list) else []
    call_sites.asked = asked
    if hasattr(ch, "settled"):
        ch.settled()


def _asked_pairing(ch, i: int, key: tuple, seconds: float) -> PairingResult:
    """In a finding's process: the pairing's result, from the parent."""
    reply = ch.ask(i, {"key": [key[0], key[1], list(key[2])], "seconds": seconds})
    got = reply.get("ok") if isinstance(reply, dict) else None
    if got is None:
        why = reply.get("error") if isinstance(reply, dict) else None
        return PairingResult("unverifiable", f"the pairing check could not be asked for ({why})")
    return PairingResult(got["status"], got["detail"], got["facts"])


def _batch(result: Result, findings: list[Finding], strict: bool, time_limit: float, task_time_limit: float,
           run_gpu: bool, backend: str, gpu_asked: bool = False,
           memory_limit: int | None = DEFAULT_MEMORY_LIMIT) -> list[tuple[Verification, bool]]:
    """(verification, wants the smoke test) per finding, each checked in a child process."""
    ctx = result.context
    # One loader per project: several projects in one run may share package names (fixtures/).
    labelled = _labelled_roots(ctx)
    by_root: dict[str | None, list[int]] = {}
    for i, f in enumerate(findings):
        entry = ctx.index.classes.get(f.class_name)
        by_root.setdefault(entry.file.root if entry is not None and entry.file.root in labelled else None,
                           []).append(i)
    out: list = [None] * len(findings)
    for root, where in by_root.items():
        files = [f for f in result.files if f.root == root or f.root not in labelled]

        def child_main(first: int, ch, where=where, files=files) -> None:
            _ask_parent_for_calls(ch, first)
            with TreeLoader(files, time_limit=time_limit, strict=strict) as loader:
                for i in range(first, len(where)):
                    ch.start(i)
                    ch.result(i, _verify_one(findings[where[i]], ctx, loader, run_gpu, backend,
                                             lambda i=i: ch.extend(i), gpu_asked,
                                             lambda key, left, i=i: _asked_pairing(ch, i, key, left)))

        if len(where) > 1 and can_isolate():
            precompile(files)  # once here, not in every finding's process
        answer = _Answers(ctx, files, time_limit, strict, task_time_limit, memory_limit)
        got = _isolated(len(where), child_main, _from_child, task_time_limit, memory_limit, not run_gpu, answer)
        for i, r in zip(where, got):
            out[i] = (_failed(r), False) if isinstance(r, Failure) else r
    return out


def _labelled_roots(ctx) -> set[str]:
    """The import roots whose modules the index labelled `root:module` (projects that share
    package names with another project in the same run). A loader holds one labelled project and
    every unlabelled one."""
    return {m.file.root for m in ctx.index.modules.values() if ":" in m.name}


def _verify_one(f: Finding, ctx, loader: TreeLoader, run_gpu: bool, backend: str, extend,
                gpu_asked: bool = False, pairings=None) -> dict:
    """In the child: the static fact, the pairing, the GPU consequence where FlashInfer is planned;
    as JSON for the parent. `pairings(key, seconds)`: a pairing's check (PairingResult), run
    elsewhere and shared between findings (default: here)."""
    start = time.perf_counter()
    o = _run_scenario(f, ctx, loader)
    facts = dict(o.facts)
    pairing = None
    if o.verdict == "fact":
        pairing = _pairing_for(f, ctx, loader, o, pairings)
        facts["pairing"] = ({"status": pairing.status, "detail": pairing.detail, **pairing.facts}
                            if isinstance(pairing, PairingResult) else {"status": "not run", "detail": pairing})
    gpu_plan, why_not = _gpu_plan(f, ctx, loader, o, pairing)
    gpu = None
    if gpu_plan is not None and run_gpu:
        extend()
        gpu = _smoke(gpu_plan, backend, ctx, loader)
    elif gpu_plan is None and (run_gpu or gpu_asked):
        gpu = why_not
    verdict, detail = decide(f.code, o.verdict, o.detail, pairing, gpu, fact=o.facts.get("static_fact"))
    v = Verification(verdict, o.load_mode, detail, time.perf_counter() - start, gpu, facts)
    return {"v": v.to_json(), "wants_gpu": gpu_plan is not None, "why_not_gpu": why_not}


_PAIRING_MEMO: dict[tuple, PairingResult] = {}


def _pairing_for(f: Finding, ctx, loader: TreeLoader, o: Outcome, pairings=None) -> PairingResult | str:
    """The pairing check of a finding whose static fact holds, or why it is not run."""
    if f.confidence == "low":
        why = f.confidence_reasons[0].note if f.confidence_reasons else "every pairing is ruled out"
        return f"not run: the static analysis rules out every pairing (latent drift: {why})"
    wanted = RULES_BY_CODE[f.code].verification_pairings(ctx, f, o.facts)
    if isinstance(wanted, str):
        return wanted
    if not wanted:
        return "not run: no live pairing names a delegate attribute of the wrapper"
    results = []
    deadline = time.monotonic() + PAIRING_TIME_LIMIT  # one budget for the finding's pairings:
    for key in wanted:                               # it must stay inside --verify-time-limit
        memo_key = (id(ctx), key[0], key[1], tuple(key[2]))
        if memo_key not in _PAIRING_MEMO:
            left = deadline - time.monotonic()
            if left <= 0:
                results.append(PairingResult("unverifiable", "the time for this finding's pairing checks ran out"))
                continue
            _PAIRING_MEMO[memo_key] = pairings(key, left) if pairings is not None else \
                check_pairing(ctx, loader, *key, time_limit=left)
        results.append(_PAIRING_MEMO[memo_key])
    for r in results:
        if r.status == "reproduced":
            return r
    if all(r.status == "not-reproduced" for r in results):
        return results[0] if len(results) == 1 else PairingResult(
            "not-reproduced", "; ".join(r.detail for r in results), {"parts": [r.facts for r in results]})
    r = next(r for r in results if r.status == "unverifiable")
    return r


def _gpu_plan(f: Finding, ctx, loader: TreeLoader, o: Outcome, pairing) -> tuple[GpuPlan | None, str]:
    """The plan for the FlashInfer smoke test, or why there is none (said where --verify-on-gpu
    asked for it)."""
    if not _replays_on_gpu(f):
        return None, f"n/a: {f.code} findings have no plan to replay on a GPU"
    if o.verdict != "fact" or o.gpu_plan is None:
        return None, "n/a: no static fact to replay, or the hook is not a method"
    if not isinstance(pairing, PairingResult) or pairing.status == "not-reproduced":
        return None, "n/a: the pairing is ruled out" + (f" ({pairing})" if isinstance(pairing, str) else "")
    plan = o.gpu_plan
    owners = [plan.owner] if plan.owner else []
    named = HiddenHookFacts.of(f).owners
    if named is not None:
        # Any implementation the finding names whose hook plans FlashInfer, its pairing not latent.
        latent = set(RunFacts.of(f).latent_impls or ())
        owners += [q for q in named if q not in owners and q not in latent]
    for owner in owners:
        use = plans_flashinfer(ctx, owner, f.member)
        if use is not None:
            if owner != plan.owner:
                from .scenarios import owner_signature
                found = owner_signature(ctx, loader, owner, f.member)
                kind, sig = found.kind, found.signature
                plan = replace(plan, owner=owner, signature=sig if kind == "method" else plan.signature,
                               standin_class_name=short(owner))
            return replace(plan, flashinfer=use.describe()), ""
    names = ", ".join(f"`{short(q)}.{f.member}`" for q in owners[:3]) or f"`{f.member}`"
    return None, f"{NOT_PLANNING} ({names} make{'s' if len(owners) == 1 else ''} no FlashInfer prefill plan)"


def _from_child(data: Any) -> tuple[Verification, bool]:
    """The parent's check of what a child sent: plain JSON of the expected shape, or ValueError."""
    v, wants = data["v"], data["wants_gpu"]
    if not isinstance(wants, bool):
        raise ValueError("no such verdict")
    return verification_from_json(v), wants


def verification_from_json(v: Any) -> Verification:
    """A Verification from its JSON form (`to_json`), checked field by field; ValueError,
    TypeError or KeyError for anything else."""
    if not isinstance(v, dict) or v["verdict"] not in VERDICTS or v.get("confirmed") != is_confirmed(v["verdict"]):
        raise ValueError("no such verdict")
    load_mode, detail, seconds = v["load_mode"], v["detail"], v["seconds"]
    facts, gpu = v.get("facts", {}), v.get("gpu")
    if not (isinstance(load_mode, str) and isinstance(detail, str) and isinstance(facts, dict)
            and isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
            and (gpu is None or isinstance(gpu, (str, dict)))):
        raise ValueError("fields of the wrong type")
    return Verification(v["verdict"], load_mode, detail, float(seconds), gpu, facts)


def control_from_json(c: Any) -> Control:
    fields = [c[k] for k in ("wrapper", "member", "delegate", "signature", "verdict", "detail")]
    if not all(isinstance(x, str) for x in fields) or not isinstance(c["seconds"], (int, float)) \
            or isinstance(c["seconds"], bool):
        raise ValueError("fields of the wrong type")
    return Control(*fields, float(c["seconds"]))


def _failed(failure: Failure) -> Verification:
    return Verification("unverifiable", "n/a", "while this finding was checked (in a process of its own), "
                        f"the code under verification {failure.detail}", failure.seconds,
                        None, {"isolation": failure.kind})


def isolated_gpu_problem(task_time_limit: float = DEFAULT_TASK_TIME_LIMIT,
                         memory_limit: int | None = DEFAULT_MEMORY_LIMIT) -> str | None:
    """``gpu_environment_problem()`` asked in a child: CUDA initialised in this process would not
    survive the forks that run the smoke tests."""
    from . import flashinfer_smoke

    def child_main(first: int, ch) -> None:
        ch.start(0)
        ch.extend(0)
        ch.result(0, flashinfer_smoke.gpu_environment_problem())

    def validate(data: Any) -> str | None:
        if data is not None and not isinstance(data, str):
            raise ValueError("not a reason")
        return data

    got = _isolated(1, child_main, validate, task_time_limit, memory_limit, cap_address_space=False)[0]
    if isinstance(got, Failure):
        return f"GPU smoke test unavailable: checking the GPU stack {got.detail}"
    return got


def _isolated_controls(result: Result, time_limit: float, task_time_limit: float, backend: str,
                       hooks: set[str], memory_limit: int | None = DEFAULT_MEMORY_LIMIT) -> list[Control]:
    """``gpu_controls`` in a child process (it runs the wrappers' real hooks)."""
    def child_main(first: int, ch) -> None:
        with TreeLoader(result.files, time_limit=time_limit) as loader:  # the controls' own classes
            ch.start(0)
            ch.extend(0)
            ch.result(0, [c.to_json() for c in gpu_controls(result, loader, backend, hooks)])

    def validate(data: Any) -> list[Control]:
        return [control_from_json(c) for c in data]

    got = _isolated(1, child_main, validate, task_time_limit, memory_limit, cap_address_space=False)[0]
    if isinstance(got, Failure):
        return [Control("(GPU controls)", "", "", "", "error", f"the code under verification {got.detail}",
                        got.seconds)]
    return got


def _run_scenario(f: Finding, ctx, loader: TreeLoader) -> Outcome:
    try:
        return scenarios.REPLAYS[type(RULES_BY_CODE[f.code])](f, ctx, loader)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return Outcome("unverifiable", f"internal error while verifying: {one_line(exc)}", "n/a")


def _smoke(plan: GpuPlan, backend: str, ctx=None, loader: TreeLoader | None = None) -> dict:
    """The FlashInfer smoke test of one finding's plan (in the child that loaded its classes)."""
    start = time.perf_counter()
    first_use = backend not in _HARNESS  # this run includes FlashInfer's module build or load
    try:
        from .flashinfer_smoke import run_prefill_protocol

        harness, batches = _harness(backend)
        standin, hook_desc, setup = _backend_for(plan.owner, plan.member, plan.signature, harness, ctx, loader)
        front, call_args = plan.make_front(standin)
        res = run_prefill_protocol(front, plan.member, harness, standin, batches, call_args=call_args)
        return {"verdict": res.verdict, "detail": res.detail, "front": plan.front_desc,
                "backend_hook": hook_desc, "setup": setup,
                "flashinfer_plan": plan.flashinfer,
                "flashinfer_backend": res.backend, "tolerance": res.tolerance,
                "seconds": round(time.perf_counter() - start, 4), "first_use_in_process": first_use,
                "batches": [{"seq_lens": list(b.seq_lens), "outcome": b.outcome, "message": b.message,
                             "max_abs_error": b.max_abs_error, "hook_found": b.hook_found,
                             "hook_ran": b.hook_ran, "wall_s": b.wall_s} for b in res.batches]}
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return {"verdict": "error", "detail": one_line(exc), "front": plan.front_desc,
                "seconds": round(time.perf_counter() - start, 4)}


def _backend_for(owner: str, member: str, signature, harness, ctx, loader) -> tuple[Any, str, dict]:
    """What stands behind the wrapper on the GPU: the owner's real hook (real_hook.py) where its
    class can be set up, else a stand-in with the hook's real signature; and which it is."""
    from .flashinfer_smoke import make_standin_backend_class
    from .real_hook import RealHookUnavailable, describe, real_backend
    from .scenarios import tree_class

    why = "no owner class"
    if owner and ctx is not None and loader is not None:
        lc, err = tree_class(ctx, loader, owner)
        if err:
            why = err
        else:
            try:
                real, setup = real_backend(lc.cls, member, harness, loader)
                return real, f"the real {short(owner)}.{member}", setup
            except RealHookUnavailable as exc:
                why = str(exc)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                why = describe(exc)
    cls = make_standin_backend_class(member, signature, class_name=short(owner) if owner else "Backend")
    return cls(harness), (f"a stand-in with the signature of {short(owner)}.{member} (the real hook could "
                          f"not be set up: {why})"), {}


@dataclass(frozen=True)
class Source:
    """What the analysis was run on, so that a clean process can run it again (clean_process.py);
    `protect`: folders the checked code must not write (the cache's)."""

    paths: tuple[str, ...]
    settings: Any  # linter.engine.Settings
    protect: tuple[str, ...] = ()


def run_for_cli(result: Result, gpu: bool = False, task_time_limit: float = DEFAULT_TASK_TIME_LIMIT,
                latent: bool = False, memory_limit: int | None = DEFAULT_MEMORY_LIMIT, source: Source | None = None,
                ) -> tuple[dict[Finding, Verification], str | None]:
    """What the CLI calls: the verdicts, and (``gpu`` only) the one-line reason the GPU smoke test
    could not run here, or None. The CLI prints that line and exits 2; the CPU verdicts stand.
    ``latent`` (--show-latent): the latent findings the report lists are verified too.
    ``source``: run everything in a clean process (clean_process.py), where fork is available;
    its notes (what the confinement could not do) go into ``result.stats["verification_notes"]``."""
    if source is not None and can_isolate():
        verdicts, problem = _clean(result, source, gpu, task_time_limit, latent, memory_limit)
    else:
        problem = isolated_gpu_problem(task_time_limit, memory_limit) if gpu else None
        verdicts = verify(result, gpu=gpu, gpu_problem=problem, task_time_limit=task_time_limit, latent=latent,
                          memory_limit=memory_limit)
    # Run-level facts go into the stats the JSON report already carries.
    if isinstance(result.stats, dict):
        counts = {k: sum(1 for v in verdicts.values() if v.verdict == k) for k in VERDICTS}
        counts["confirmed"] = sum(1 for v in verdicts.values() if v.confirmed)
        result.stats["verification"] = counts
        if gpu:
            result.stats["gpu_controls"] = [c.to_json() for c in verdicts.controls]
            if problem:
                result.stats["gpu_problem"] = problem
    return verdicts, problem


def _clean(result: Result, source: Source, gpu: bool, task_time_limit: float, latent: bool,
           memory_limit: int | None) -> tuple[Verdicts, str | None]:
    from .clean_process import key_of, run_clean
    todo = [f for f in [*result.findings, *(result.latent if latent else [])] if _check_of(f) is not None]
    out = Verdicts()
    if not todo and not gpu:
        return out, None
    run = run_clean(list(source.paths), source.settings, todo, gpu=gpu, task_time_limit=task_time_limit,
                    memory_limit=memory_limit, protect=source.protect)
    for f in todo:
        got = run.verdicts.get(key_of(f))
        if run.problem is not None:
            out[f] = Verification("unverifiable", "n/a", run.problem, 0.0)
        elif got is None:
            out[f] = Verification("unverifiable", "n/a", "the verification process did not find this finding again "
                                  "when it analysed the code (did a file change during the run?)", 0.0)
        else:
            try:
                out[f] = verification_from_json(got)
            except (ValueError, TypeError, KeyError):
                out[f] = Verification("unverifiable", "n/a", "the verification process sent a verdict that does "
                                      "not hold up", 0.0)
    for c in run.controls:
        try:
            out.controls.append(control_from_json(c))
        except (ValueError, TypeError, KeyError):
            continue
    if isinstance(result.stats, dict) and run.notes:
        result.stats["verification_notes"] = run.notes
    return out, run.gpu_problem


_HARNESS: dict[str, Any] = {}


def _harness(backend: str):
    """One FlashInfer harness (and its batches) per process: the JIT compile happens once."""
    if backend not in _HARNESS:
        from .flashinfer_smoke import PrefillHarness, default_batches
        h = PrefillHarness(backend=backend)
        _HARNESS[backend] = (h, default_batches(h))
    return _HARNESS[backend]


def gpu_controls(result: Result, loader: TreeLoader, backend: str = "fa2",
                 hooks: set[str] | frozenset[str] = frozenset()) -> list[Control]:
    """Smoke-test wrappers that forward a probed hook planning FlashInfer and have no finding on it.

    Hooks covered: every probed hook that some implementation plans FlashInfer in
    (flashinfer_use.py), and ``hooks`` (those findings of this run put through the smoke test). For
    each wrapper that defines such a hook ``H`` and each distinct signature of ``H`` among the
    implementations its delegates can hold, the real wrapper is put in front of a stand-in
    FlashInfer backend with that signature and the prefill protocol runs: a correct forward passes
    (the fixed fixture, SGLang 0.5.23), a forward the implementation cannot bind fails with its
    TypeError.
    """
    from .flashinfer_smoke import ForwardBatchTooThin, make_standin_backend_class, run_prefill_protocol
    from .scenarios import delegate_attrs, fmt_sig, new_instance, owner_signature, plant_delegates, tree_class

    ctx = result.context
    if ctx is None:
        return []
    flagged = {(f.class_name, f.member) for f in result.findings if _replays_on_gpu(f)}
    index, model = ctx.index, ctx.model
    planning = set(hooks)
    for member in ctx.probes:
        if member not in planning and any(plans_flashinfer(ctx, q, member) is not None
                                          for q, e in index.classes.items() if member in e.info.methods):
            planning.add(member)
    wanted = sorted(planning & ctx.probes.keys())
    out: list[Control] = []
    for wq, wrapper in sorted(model.wrappers.items()):
        impls = model.implementations(wrapper.delegate_types(), exclude=wq)
        for member in wanted:
            if (wq, member) in flagged:
                continue
            hit = index.method(wq, member)
            if hit is None or hit.fn.noop or not _callable_as_hook(hit.fn.params):
                continue
            owners = sorted({found.owner for found in (index.method(i, member) for i in impls)
                             if found and not found.fn.noop and _callable_as_hook(found.fn.params)})
            if not owners:
                continue
            lc, err = tree_class(ctx, loader, wq)
            if err:
                out.append(Control(wq, member, "", "", "n/a", f"cannot load the wrapper: {err}", 0.0))
                continue
            seen: set[str] = set()
            for owner in owners:
                found = owner_signature(ctx, loader, owner, member)
                kind, sig = found.kind, found.signature
                if kind != "method" or sig is None:
                    continue
                label = fmt_sig(member, sig)
                if label in seen:
                    continue
                seen.add(label)
                start = time.perf_counter()
                hook_desc = ""
                try:
                    harness, batches = _harness(backend)
                    # A stand-in with the implementation's signature, planning in its hook: the
                    # control asks whether the wrapper's forward binds and reaches the backend.
                    # (A real hook may rightly plan nothing on this path, as TRT-LLM MLA's does
                    # when it runs its own kernels, which the harness's ragged prefill is not.)
                    standin = make_standin_backend_class(member, sig, class_name=short(owner))(harness)
                    hook_desc = f"a stand-in with the signature of {short(owner)}.{member}"
                    front = new_instance(lc.cls)
                    plant_delegates(front, delegate_attrs(ctx, wq), standin)
                    res = run_prefill_protocol(front, member, harness, standin, batches)
                    verdict, detail = res.verdict, res.detail
                except ForwardBatchTooThin as exc:
                    # The wrapper's hook reads forward-batch fields the harness does not model.
                    verdict, detail = "n/a", ("not applicable: the hook needs more of the forward batch than "
                                              f"the harness has ({exc})")
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:
                    verdict, detail = "error", one_line(exc)
                if hook_desc:
                    detail = f"{detail} (behind it: {hook_desc})"
                out.append(Control(wq, member, owner, label, verdict, detail,
                                   time.perf_counter() - start))
    return out


def _callable_as_hook(params) -> bool:
    """Whether ``hook(forward_batch)`` binds (the protocol's call): one positional after ``self``,
    everything else optional."""
    from ..linter.perfile.summary import KEYWORD_ONLY, POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL
    rest = list(params[1:])
    required = [p for p in rest if not p.has_default and p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    if any(p.kind == KEYWORD_ONLY and not p.has_default for p in rest):
        return False
    return len(required) == 1 or (not required and any(p.kind == VAR_POSITIONAL for p in rest))


# --------------------------------------------------------------------------------------------
# reports
# --------------------------------------------------------------------------------------------

def json_extra(verdicts: dict[Finding, Verification]) -> dict[Finding, dict]:
    """For ``json_report.render(result, extra=...)``: a ``verification`` object per finding."""
    return {f: {"verification": v.to_json()} for f, v in verdicts.items()}


_STYLE = {"consequence-reproduced": "bold red", "pairing-reproduced": "bold red",
          "not-reproduced": "bold green", "unverifiable": "yellow", "attribute-hidden": "magenta",
          "call-rejected": "magenta", "noop-reached": "magenta", "placeholder-reached": "magenta"}


def render_table(verdicts: dict[Finding, Verification], console, gpu_problem: str | None = None) -> None:
    """The terminal table: finding, load mode, verdict, detail, time (and the GPU verdict)."""
    if not verdicts and not getattr(verdicts, "controls", None):
        return
    # Piped output would wrap the table at 80 columns; give the detail column room.
    width = console.width if console.is_terminal else max(console.width, 200)
    saved = console.width
    console.width = width
    try:
        _render(verdicts, console, width, gpu_problem)
    finally:
        console.width = saved


def _render(verdicts, console, width: int, gpu_problem: str | None) -> None:
    from rich.table import Table
    from rich.text import Text

    ordered = sorted(verdicts.items(), key=lambda kv: kv[0].sort_key)
    if verdicts:
        _findings_table(verdicts, ordered, console, width)
    controls = getattr(verdicts, "controls", None) or []
    if controls:
        ct = Table(title="GPU smoke test on wrappers that forward the hook (controls: no finding)",
                   show_lines=True, expand=False)
        for col in ("wrapper hook", "delegate signature", "verdict", "detail", "time"):
            ct.add_column(col, overflow="fold", justify="right" if col == "time" else "left")
        for c in controls:
            ct.add_row(printable(f"{c.wrapper.rsplit('.', 1)[-1]}.{c.member}"),
                       printable(f"{c.delegate.rsplit('.', 1)[-1]}.{c.signature}"),
                       Text(printable(c.verdict), style="bold green" if c.verdict == "pass" else "bold red"),
                       printable(c.detail), f"{c.seconds:.3f} s")
        console.print(ct, width=width)
    if gpu_problem:
        console.print(Text(printable(gpu_problem), style="magenta"))


def _plain_findings(ordered, console) -> None:
    """Piped or NO_COLOR: one block per finding, whole names and lines, no box drawing."""
    from rich.text import Text

    console.print(Text("Runtime verification"))
    for f, v in ordered:
        console.print(Text(printable(f"{f.code} {f.class_name.rsplit('.', 1)[-1]}.{f.member} at {f.path}:{f.line}")))
        console.print(Text(printable(f"  verdict: {v.verdict} ({v.load_mode}, {v.seconds:.3f} s)")), soft_wrap=True)
        console.print(Text(printable(f"  detail: {v.detail}")), soft_wrap=True)
        if isinstance(v.gpu, dict):
            console.print(Text(printable(f"  GPU smoke test: {v.gpu.get('verdict')}: {v.gpu.get('detail')}")),
                          soft_wrap=True)
        elif v.gpu:
            console.print(Text(printable(f"  GPU smoke test: {v.gpu}")), soft_wrap=True)


def _table_widths(ordered, show_gpu: bool) -> list[int]:
    """The narrowest each column of the box table can be with nothing broken mid-word: whole
    lines for the finding, load mode, verdict and time; the longest word (at least 24 columns)
    for the detail and GPU columns, which wrap between words."""
    def words(text: str) -> int:
        return max((len(w) for w in text.split()), default=0)

    name = max(max(len(f"{f.code} {f.class_name.rsplit('.', 1)[-1]}.{f.member}"), len(f"{f.path}:{f.line}"))
               for f, _ in ordered)
    out = [max(name, 7), max(9, *(len(v.load_mode) for _, v in ordered)),
           max(7, *(len(v.verdict) for _, v in ordered)), max(24, *(words(v.detail) for _, v in ordered)),
           max(4, *(len(f"{v.seconds:.3f} s") for _, v in ordered))]
    if show_gpu:
        out.append(max(24, *(words(str(v.gpu.get("detail") if isinstance(v.gpu, dict) else v.gpu or ""))
                             for _, v in ordered)))
    return out


def _findings_table(verdicts, ordered, console, width) -> None:
    import os

    from rich.table import Table
    from rich.text import Text

    show_gpu = any(v.gpu is not None for v in verdicts.values())
    widths = _table_widths(ordered, show_gpu)
    # The box table only where it fits with every name, path and word whole (a narrow terminal
    # would break `hybrid_linear_attn_backend.py` mid-word); else the plain lines.
    if not console.is_terminal or os.environ.get("NO_COLOR") or sum(widths) + 3 * len(widths) + 1 > width:
        _plain_findings(ordered, console)
    else:
        table = Table(title="Runtime verification", show_lines=True, expand=False)
        table.add_column("finding", min_width=widths[0], no_wrap=True)
        table.add_column("load mode", min_width=widths[1], no_wrap=True)
        table.add_column("verdict", min_width=widths[2], no_wrap=True)
        table.add_column("detail", min_width=widths[3])
        table.add_column("time", justify="right", min_width=widths[4], no_wrap=True)
        if show_gpu:
            table.add_column("GPU smoke test", min_width=widths[5])
        for f, v in ordered:
            name = Text(printable(f"{f.code} {f.class_name.rsplit('.', 1)[-1]}.{f.member}") + "\n"
                        + printable(f"{f.path}:{f.line}"))
            row = [name, printable(v.load_mode), Text(v.verdict, style=_STYLE.get(v.verdict, "")), printable(v.detail),
                   f"{v.seconds:.3f} s"]
            if show_gpu:
                if isinstance(v.gpu, dict):
                    row.append(Text(printable(f"{v.gpu.get('verdict')}: {v.gpu.get('detail')}")))
                else:
                    row.append(printable(str(v.gpu or "")))
            table.add_row(*row)
        console.print(table, width=width)
    counts = {k: sum(1 for v in verdicts.values() if v.verdict == k) for k in VERDICTS}
    confirmed = sum(n for k, n in counts.items() if k in CONFIRMED)
    line = Text("Verified ")
    line.append(f"{len(verdicts)} finding{'s' if len(verdicts) != 1 else ''}: {confirmed} confirmed; ")
    line.append(", ".join(f"{n} {k}" for k, n in counts.items() if n))
    console.print(line)
    for k, n in counts.items():
        if n:
            console.print(Text(f"  {k}: {MEANING[k]}"), soft_wrap=True)
    wrong = [f for f, v in ordered if v.verdict == "not-reproduced"]
    for f in wrong:
        console.print(Text(printable(f"note: the static claim {f.code} at {f.path}:{f.line} was NOT reproduced on the "
                                     f"real code: treat it as a likely false positive ({verdicts[f].detail})"),
                           style="green"))
