"""The pairing check of `--verify`: the code's own construction path, run for real, builds the
wrapper around the implementation (confirmed), provably never does (not-reproduced), or cannot be
decided (the static fact's verdict stands, with the reason). And which hooks plan FlashInfer."""

from __future__ import annotations

import pathlib
from dataclasses import replace

from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.runtime_check import standins
from attn_lint.runtime_check.decisions import CONFIRMED, VERDICTS, decide
from attn_lint.runtime_check.flashinfer_use import plans_flashinfer
from attn_lint.runtime_check.pairing import ChoiceDict, Explorer, Search
from attn_lint.runtime_check.standins import Standin, set_explorer
from attn_lint.runtime_check.verify import verify

FI_TREE = pathlib.Path(__file__).parent / "data" / "flashinfer_tree" / "fitree"


def analysed(path):
    return analyse([str(path)], Settings(cache_dir=None, jobs=1), keep_context=True)


def by_key(v):
    return {(f.code, f.class_name.rsplit(".", 1)[-1], f.member): ver for f, ver in v.items()}


BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

class Flash(Backend):
    def forward(self, batch):
        return batch

class Triton(Backend):
    def forward(self, batch):
        return batch

    def tile_size(self):
        return 128

class Hybrid(Backend):
    def __init__(self, full: Backend):
        self.full = full

    def forward(self, batch):
        return self.full.forward(batch)
'''

SCHED = '''
from .runner import get

def tile():
    b = get()
    if hasattr(b, "tile_size"):
        return b.tile_size()
    return 64
'''


# The runner builds the wrapper when `wraps` holds: the two tests differ only there.
RUNNER = '''
from .backends import Backend, Flash, Hybrid, Triton

_current = None

def get() -> Backend:
    return _current

def build(name: str, hybrid: bool) -> Backend:
    full = Flash() if name == "flash" else Triton()
    if {wraps}:
        return Hybrid(full)
    return full
'''


def test_not_reproduced_when_every_path_wraps_only_another_implementation(tmp_path):
    """The runner wraps only FlashInfer-like backends: every choice of its inputs explored, no
    path builds `Hybrid` around `Triton`. The static claim was wrong, and the check says no."""
    root = write_tree(tmp_path, {"nbpkg/__init__.py": "", "nbpkg/backends.py": BACKENDS, "nbpkg/sched.py": SCHED,
                                 "nbpkg/runner.py": RUNNER.format(wraps="hybrid and isinstance(full, Flash)")})
    result = analysed(root / "nbpkg")
    ver = by_key(verify(result))[("AL001", "Hybrid", "tile_size")]
    assert ver.verdict == "not-reproduced" and not ver.confirmed, ver.detail
    assert ver.facts["pairing"]["status"] == "not-reproduced"
    assert "every choice explored" in ver.detail and "`Hybrid` around `Flash`" in ver.detail, ver.detail


def test_pairing_reproduced_when_the_path_builds_it(tmp_path):
    root = write_tree(tmp_path, {"okpkg/__init__.py": "", "okpkg/backends.py": BACKENDS, "okpkg/sched.py": SCHED,
                                 "okpkg/runner.py": RUNNER.format(wraps="hybrid")})
    ver = by_key(verify(analysed(root / "okpkg")))[("AL001", "Hybrid", "tile_size")]
    assert ver.verdict == "pairing-reproduced" and ver.confirmed, ver.detail
    assert ver.facts["pairing"]["entry"] == "build"
    assert "`name` != 'flash'" in ver.facts["pairing"]["path"] and "`hybrid` true" in ver.facts["pairing"]["path"]


def test_a_class_test_on_an_input_leaves_the_static_fact_unconfirmed(tmp_path):
    """`isinstance(config, HybridConfig)` on a stand-in can never be True: the check does not
    invent configs, so it neither confirms nor rules out the pairing."""
    root = write_tree(tmp_path, {"cfgpkg/__init__.py": "", "cfgpkg/backends.py": BACKENDS, "cfgpkg/sched.py": SCHED,
                                 "cfgpkg/runner.py": '''
from .backends import Backend, Flash, Hybrid, Triton

class HybridConfig:
    pass

_current = None

def get() -> Backend:
    return _current

def wrap(config, full: Backend) -> Backend:
    if isinstance(config, HybridConfig):
        return Hybrid(full)
    return full

def build(config, name: str) -> Backend:
    return wrap(config, Triton() if name == "triton" else Flash())
'''})
    ver = by_key(verify(analysed(root / "cfgpkg")))[("AL001", "Hybrid", "tile_size")]
    assert ver.verdict == "attribute-hidden" and not ver.confirmed, ver.detail
    assert ver.facts["pairing"]["status"] == "unverifiable"
    assert "a class test on `config`" in ver.detail, ver.detail


RECEIVERS = '''
class ReceiverBase:
    def run(self, rid):
        try:
            return self.encode(rid=rid, stats=None)
        except Exception as exc:
            return str(exc)

class HttpReceiver(ReceiverBase):
    def encode(self, rid, stats=None):
        return rid

class GrpcReceiver(ReceiverBase):
    def encode(self, rid):
        return rid

RECEIVERS = {"http": HttpReceiver, "grpc": GrpcReceiver}

def create_receiver(mode=None):
    cls = RECEIVERS.get(mode)
    if cls is None:
        raise ValueError(f"unsupported mode {mode}")
    return cls()
'''


def test_al002_on_self_runs_the_method_on_the_real_subclass_and_its_registry_builds_it(tmp_path):
    """The call is `self.encode(...)` in the base; the subclass whose `encode` refuses it is built
    by the code's registry. The TypeError is Python's own, and the pairing is shown."""
    root = write_tree(tmp_path, {"rxpkg/__init__.py": "", "rxpkg/receiver.py": RECEIVERS})
    result = analysed(root / "rxpkg")
    ver = by_key(verify(result))[("AL002", "ReceiverBase", "encode")]
    assert ver.facts["error"] == "TypeError: GrpcReceiver.encode() got an unexpected keyword argument 'stats'"
    assert ver.facts["receiver"][0] == "self (a real `GrpcReceiver`)"
    assert ver.verdict == "pairing-reproduced", ver.detail
    assert "`mode` = 'grpc' (a key of `RECEIVERS`)" in ver.facts["pairing"]["path"]


def test_latent_findings_have_their_fact_checked_but_no_pairing_run(tmp_path):
    root = write_tree(tmp_path, {"rxpkg/__init__.py": "", "rxpkg/receiver.py": RECEIVERS})
    result = analysed(root / "rxpkg")
    (f,) = [f for f in result.findings if f.code == "AL002"]
    latent = replace(f, confidence="low")
    ver = verify(replace(result, findings=[latent]))[latent]
    assert ver.verdict == "call-rejected", ver.detail
    assert ver.facts["pairing"]["status"] == "not run"
    assert "rules out every pairing" in ver.facts["pairing"]["detail"]


# --------------------------------------------------------------------------------------------
# the explorer's choice points
# --------------------------------------------------------------------------------------------

def _explore(fn, *args):
    """Every run of `fn` over its choice points: (result, decisions) per run."""
    out, search = [], Search()
    schedule = search.next()
    while schedule is not None:
        ex = Explorer(schedule)
        previous = set_explorer(ex)
        try:
            result = fn(*args)
        finally:
            set_explorer(previous)
        out.append((result, list(ex.said)))
        search.ran(schedule, ex.trail)
        schedule = search.next()
    return out


def test_explorer_takes_both_branches_and_keeps_equalities_consistent():
    def f(name, flag):
        if name == "a":
            return "A" if name != "b" else "impossible"
        return "flag" if flag else "none"

    results = sorted(r for r, _ in _explore(f, Standin("name"), Standin("flag")))
    assert results == ["A", "flag", "none"]


def test_registry_lookup_tries_each_key_and_a_missing_one():
    reg = ChoiceDict({"x": 1, "y": 2})
    reg.label, reg._rank = "REG", lambda k: k

    def f(key):
        return reg.get(key, "missing")

    assert sorted(str(r) for r, _ in _explore(f, Standin("key"))) == ["1", "2", "missing"]


def test_stand_ins_behave_as_before_outside_an_exploration():
    s = Standin("x")
    assert standins.EXPLORER is None
    assert not s and s != "a" and s == s and "a" not in s


# --------------------------------------------------------------------------------------------
# which hooks plan FlashInfer (read from the code)
# --------------------------------------------------------------------------------------------

def test_flashinfer_planning_is_read_from_the_hook_and_the_objects_it_calls():
    ctx = analysed(FI_TREE).context
    use = plans_flashinfer(ctx, "fitree.backends.flashinfer_mla.FlashInferMLABackend", "init_mha_chunk_metadata")
    assert use is not None and use.wrapper_class == "flashinfer.BatchPrefillWithRaggedKVCacheWrapper"
    assert use.chain == ("FlashInferMLABackend.init_mha_chunk_metadata", "ChunkPlanner.update")
    trt = plans_flashinfer(ctx, "fitree.backends.flashinfer_mla.TrtllmMLABackend", "init_mha_chunk_metadata")
    assert trt is not None and trt.chain[1] == "FlashInferMLABackend.init_mha_chunk_metadata"  # via super()
    assert plans_flashinfer(ctx, "fitree.backends.npu.NpuBackend", "prepare_cp_metadata") is None


def test_a_plan_call_on_something_else_is_not_flashinfer(tmp_path):
    """The fixtures' toy wrapper has plan(); it is not imported from flashinfer."""
    ctx = analysed(pathlib.Path(__file__).parent.parent / "fixtures" / "al001_hidden_hook").context
    owner = next(q for q in ctx.index.classes if q.endswith(".FlashInferMLAAttnBackend"))
    assert plans_flashinfer(ctx, owner, "init_mha_chunk_metadata") is None


# --------------------------------------------------------------------------------------------
# the verdict words
# --------------------------------------------------------------------------------------------

def test_only_the_two_claims_that_matter_are_confirmed():
    assert CONFIRMED == {"consequence-reproduced", "pairing-reproduced"}
    assert set(VERDICTS) >= {"attribute-hidden", "call-rejected", "noop-reached", "not-reproduced", "unverifiable"}
    assert decide("AL001", "fact", "hidden", None, None) == ("attribute-hidden", "hidden")
    assert decide("AL003", "not-reproduced", "resolves elsewhere", None, None)[0] == "not-reproduced"
    gpu = {"verdict": "qo-indptr-mismatch", "detail": "FlashInfer: q.shape[0] (172) ..."}
    # A GPU failure without a live pairing confirms nothing.
    assert decide("AL001", "fact", "hidden", "not run: latent", gpu)[0] == "attribute-hidden"
