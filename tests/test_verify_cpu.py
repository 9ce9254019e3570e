"""`--verify` on the CPU: verdicts on the fixtures, the isolated loading path, wrong claims, the CLI.

The GPU smoke test itself is tested in test_gpu_smoke.py; here its wiring (which wrapper is put
in front of which stand-in backend, with which signature) runs against a fake harness.
"""

from __future__ import annotations

import json
import pathlib
import sys
import types
from dataclasses import replace

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, run_in_pty, write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.linter.findings import Finding
from attn_lint.runtime_check import flashinfer_smoke
from attn_lint.runtime_check import verify as verify_mod
from attn_lint.runtime_check.loader import TreeLoader
from attn_lint.runtime_check.standins import Standin, delegate_log, make_delegate
from attn_lint.runtime_check.verify import Verification, json_extra, render_table, verify

HOOK = "init_mha_chunk_metadata"


def analysed(*paths):
    return analyse([str(p) for p in paths], Settings(cache_dir=None, jobs=1), keep_context=True)


def verdicts_of(path):
    result = analysed(path)
    return result, verify(result)


def only(v: dict) -> tuple[Finding, Verification]:
    assert len(v) == 1, v
    return next(iter(v.items()))


# --------------------------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------------------------

def test_al001_fixture_confirmed_by_import():
    _, v = verdicts_of(FIXTURES / "al001_hidden_hook")
    f, ver = only(v)
    assert (f.code, f.member) == ("AL001", HOOK)
    # The runner's own path builds the wrapper around FlashInfer MLA: the pairing is confirmed.
    assert ver.verdict == "pairing-reproduced" and ver.confirmed, ver.detail
    assert ver.load_mode == "import"
    assert "hasattr(w, 'init_mha_chunk_metadata')` is False" in ver.detail
    assert ver.facts["probe_result"] is False
    assert ver.facts["pairing"]["status"] == "reproduced"
    assert ver.facts["pairing"]["entry"] == "ModelRunner.init_attention_backend"
    assert "`self.attention_backend` = 'flashinfer_mla'" in ver.facts["pairing"]["path"]


def test_al002_fixture_confirmed_with_pythons_own_typeerror():
    _, v = verdicts_of(FIXTURES / "al002_delegation_typeerror")
    f, ver = only(v)
    assert f.code == "AL002"
    assert ver.verdict == "pairing-reproduced", ver.detail
    assert "`self.attention_backend` = 'trtllm_mla'" in ver.facts["pairing"]["path"]
    assert ver.facts["error"] == ("TypeError: TRTLLMMLABackend.init_mha_chunk_metadata() takes 2 positional "
                                  "arguments but 3 were given")
    assert ver.facts["stand_in_signature"] == "TRTLLMMLABackend.init_mha_chunk_metadata(self, forward_batch)"
    assert ver.facts["signature_from"].startswith("inspect.signature")


def test_al003_fixture_confirmed():
    _, v = verdicts_of(FIXTURES / "al003_noop_default")
    f, ver = only(v)
    assert (f.code, f.member) == ("AL003", "on_after_cuda_graph_warmup")
    assert ver.verdict == "pairing-reproduced", ver.detail
    assert ver.facts["resolved_from"] == "AttentionBackend"


def test_al003_placeholder_fixture_confirmed_with_the_notimplementederror():
    _, v = verdicts_of(FIXTURES / "al003_placeholder_default")
    f, ver = only(v)
    assert (f.code, f.member) == ("AL003", "update_verify_buffers_to_fill_after_draft")
    assert ver.verdict == "pairing-reproduced", ver.detail
    assert ver.facts["static_fact"] == "placeholder-reached"
    assert "calling it raised NotImplementedError" in ver.detail
    assert "holds a real `TritonAttnBackend`, `TRTLLMMLABackend`" in ver.detail


def test_al003_placeholder_fact_without_a_shown_pairing_says_placeholder_reached():
    """Without a construction path the verdict is the static fact, named for the crash it is."""
    from attn_lint.runtime_check.decisions import decide
    assert decide("AL003", "fact", "raised", "not run: no construction", None, fact="placeholder-reached")[0] \
        == "placeholder-reached"
    assert decide("AL003", "fact", "returned", "not run: no construction", None)[0] == "noop-reached"


def test_wrong_al003_placeholder_claim_is_not_reproduced_when_the_default_returns():
    """The no-op fixture's base returns: a (wrong) claim that it raises NotImplementedError fails."""
    result = analysed(FIXTURES / "al003_noop_default")
    (real,) = result.findings
    f = replace(real, details=tuple((k, "placeholder" if k == "default" else v) for k, v in real.details))
    v = verify(replace(result, findings=[f]))
    assert v[f].verdict == "not-reproduced", v[f].detail
    assert "returned without raising NotImplementedError" in v[f].detail


def test_verifying_all_fixtures_at_once_gives_each_its_own_verdict():
    """Several projects in one run share package names (each fixture has `serving`): each finding
    is replayed on its own project's classes, as when its fixture is verified alone."""
    _, together = verdicts_of(FIXTURES)
    alone = {}
    for name in ("al001_hidden_hook", "al002_delegation_typeerror", "al003_noop_default", "al003_placeholder_default"):
        _, v = verdicts_of(FIXTURES / name)
        alone.update({(f.code, f.member): ver for f, ver in v.items()})
    assert sorted((f.code, ver.verdict) for f, ver in together.items()) == [
        ("AL001", "pairing-reproduced"), ("AL002", "pairing-reproduced"), ("AL003", "pairing-reproduced"),
        ("AL003", "pairing-reproduced")]
    for f, ver in together.items():
        assert ver.facts.get("error") == alone[(f.code, f.member)].facts.get("error")
        assert ver.load_mode == alone[(f.code, f.member)].load_mode


@pytest.mark.parametrize("name", ["fixed", "fixed_one_arg", "getattr_wrapper", "leaf_lacks_hook",
                                  "al003_placeholder_forwarded"])
def test_clean_fixtures_have_nothing_to_verify(name):
    result, v = verdicts_of(FIXTURES / name)
    assert result.findings == [] and v == {}


def _claim(result, code, cls_short, member, **details) -> Finding:
    """A hand-made finding (as a wrong rule would make it) on the class named cls_short."""
    qual = next(q for q in result.context.index.classes if q.endswith("." + cls_short))
    entry = result.context.index.classes[qual]
    return Finding(code=code, name="hand-made", severity="error", path=entry.file.display, line=entry.info.line,
                   column=1, message="claimed by the test", class_name=qual, member=member,
                   targets=tuple(details.pop("targets", ())), details=tuple(details.items()))


def test_wrong_al001_claim_is_not_reproduced():
    """The fixed wrapper defines the hook: a (wrong) AL001 on it must say so, plainly."""
    result = analysed(FIXTURES / "fixed")
    owner = next(q for q in result.context.index.classes if q.endswith(".FlashInferMLAAttnBackend"))
    f = _claim(result, "AL001", "HybridLinearAttnBackend", HOOK, probe="models/forward_mha.py:1",
               probe_kind="hasattr", delegates="full_attn_backend", owners=owner)
    v = verify(replace(result, findings=[f]))
    assert v[f].verdict == "not-reproduced", v[f].detail
    assert "defines `init_mha_chunk_metadata`" in v[f].detail


def test_wrong_al001_claim_on_getattr_wrapper_is_not_reproduced():
    result = analysed(FIXTURES / "getattr_wrapper")
    owner = next(q for q in result.context.index.classes if q.endswith(".FlashInferMLAAttnBackend"))
    f = _claim(result, "AL001", "TboAttnBackend", HOOK, probe_kind="hasattr", delegates="primary", owners=owner)
    v = verify(replace(result, findings=[f]))
    assert v[f].verdict == "not-reproduced", v[f].detail
    assert "__getattr__` forwards it" in v[f].detail


def test_wrong_al002_claim_is_not_reproduced_when_the_call_binds():
    """In `fixed` the TRT-LLM hook was widened: the wrapper's call binds."""
    result = analysed(FIXTURES / "fixed")
    index = result.context.index
    wq = next(q for q in index.classes if q.endswith(".HybridLinearAttnBackend"))
    trt = next(q for q in index.classes if q.endswith(".TRTLLMMLABackend"))
    fn = index.classes[wq].info.methods[HOOK]
    call = next(c for c in fn.calls if c.func[0] == "getattr" and c.func[2] == HOOK)  # `init(...)`
    f = replace(_claim(result, "AL002", "HybridLinearAttnBackend", HOOK, how="getattr", rejecting_owner=trt,
                       targets=(trt,)), details=(("call", f"x.py:{call.line}"), ("how", "getattr"),
                                                  ("rejecting_owner", trt)))
    v = verify(replace(result, findings=[f]))
    assert v[f].verdict == "not-reproduced", v[f].detail
    assert "the call bound" in v[f].detail


def test_wrong_al003_claim_is_not_reproduced():
    result = analysed(FIXTURES / "fixed")
    base = next(q for q in result.context.index.classes if q.endswith(".AttentionBackend"))
    f = _claim(result, "AL003", "HybridLinearAttnBackend", "init_forward_metadata", base=base,
               delegates="full_attn_backend")
    v = verify(replace(result, findings=[f]))
    assert v[f].verdict == "not-reproduced", v[f].detail


def test_module_level_call_is_unverifiable_with_a_reason():
    result = analysed(FIXTURES / "al002_delegation_typeerror")
    f = replace(result.findings[0], class_name="serving.models.forward_mha")
    v = verify(replace(result, findings=[f]))
    assert v[f].verdict == "unverifiable" and "module-level" in v[f].detail


# --------------------------------------------------------------------------------------------
# isolated loading: a tree whose modules import packages that are not installed
# --------------------------------------------------------------------------------------------

GPU_TREE = {
    "gpuserve/__init__.py": "",
    "gpuserve/base.py": '''
import not_installed_gpu_pkg
import not_installed_torch as torch
from not_installed_gpu_pkg.ops import kernel
from typing import Optional

if hasattr(torch, "npu"):          # a platform check: False for an absent package
    raise RuntimeError("NPU build on a machine without NPU")
if torch.__version__ >= "9":       # version checks see "0.0.0"
    raise RuntimeError("unexpected")

class RadixAttention(torch.nn.Module):
    """Subclasses a class of the absent package (the stand-in must work as a base class)."""

    def forward(self, q, k, v, forward_batch):
        return forward_batch.attn_backend.forward(q, k, v, self, forward_batch)

class AttentionBackend:

    def init_forward_metadata(self, forward_batch: "torch.Tensor[int]") -> Optional[torch.Tensor]:
        raise NotImplementedError

    def on_after_cuda_graph_warmup(self):
        pass
''',
    "gpuserve/flash.py": '''
from not_installed_torch import compile as torch_compile
from not_installed_gpu_pkg.ops import kernel
from .base import AttentionBackend

class FlashBackend(AttentionBackend):
    def init_forward_metadata(self, forward_batch):
        self.meta = kernel(forward_batch)

    @torch_compile(dynamic=True)
    def plan_chunks(self, forward_batch, disable_ragged: bool = False):
        self.planned = forward_batch

    def on_after_cuda_graph_warmup(self):
        self.ready = True

class TrtBackend(FlashBackend):
    def plan_chunks(self, forward_batch):
        self.planned = forward_batch
''',
    "gpuserve/hybrid.py": '''
import not_installed_torch as torch
from .base import AttentionBackend

class HybridBackend(AttentionBackend):
    def __init__(self, full_attn_backend: AttentionBackend):
        super().__init__()
        self.full_attn_backend = full_attn_backend
        self.device = torch.device("cuda")

    def init_forward_metadata(self, forward_batch):
        self.full_attn_backend.init_forward_metadata(forward_batch)

class ForwardingHybrid(AttentionBackend):
    def __init__(self, full_attn_backend: AttentionBackend):
        super().__init__()
        self.full_attn_backend = full_attn_backend

    def init_forward_metadata(self, forward_batch):
        self.full_attn_backend.init_forward_metadata(forward_batch)

    @torch.no_grad()
    def plan_chunks(self, forward_batch, disable_ragged: bool = False):
        fn = getattr(self.full_attn_backend, "plan_chunks", None)
        if fn is not None:
            fn(forward_batch, disable_ragged)
''',
    "gpuserve/model.py": '''
from .base import AttentionBackend

def prefill(backend: AttentionBackend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    backend.on_after_cuda_graph_warmup()
''',
}


def test_isolated_loading_confirms_findings_in_a_tree_that_needs_absent_packages(tmp_path):
    root = write_tree(tmp_path, GPU_TREE)
    result = analysed(root / "gpuserve")
    got = {(f.code, f.class_name.rsplit(".", 1)[-1], f.member) for f in result.findings}
    assert ("AL001", "HybridBackend", "plan_chunks") in got
    assert ("AL002", "ForwardingHybrid", "plan_chunks") in got
    v = verify(result)
    by = {(f.code, f.class_name.rsplit(".", 1)[-1], f.member): ver for f, ver in v.items()}
    # No code builds these wrappers: the static facts hold on the real classes, the pairing is not
    # shown, and nothing is confirmed.
    al001 = by[("AL001", "HybridBackend", "plan_chunks")]
    assert al001.verdict == "attribute-hidden" and not al001.confirmed, al001.detail
    assert al001.load_mode == "isolated"
    assert "no construction of `HybridBackend` is seen" in al001.detail
    al002 = by[("AL002", "ForwardingHybrid", "plan_chunks")]
    assert al002.verdict == "call-rejected", al002.detail
    assert al002.facts["error"] == "TypeError: TrtBackend.plan_chunks() takes 2 positional arguments but 3 were given"
    for key, ver in by.items():
        if key[0] == "AL003":
            assert ver.verdict == "noop-reached", (key, ver.detail)


def test_loader_reports_the_mode_and_the_stand_ins(tmp_path):
    root = write_tree(tmp_path, GPU_TREE)
    result = analysed(root / "gpuserve")
    with TreeLoader(result.files) as loader:
        lm = loader.load("gpuserve.base")
        assert lm.mode == "isolated"
        assert "not_installed_gpu_pkg" in (lm.error or "")
        assert "not_installed_gpu_pkg.ops" in lm.standins
        lc = loader.load_class("gpuserve.hybrid.ForwardingHybrid", "gpuserve.hybrid")
        assert isinstance(lc.cls, type) and lc.mode == "isolated"
        base = loader.load_class("gpuserve.base.AttentionBackend", "gpuserve.base").cls
        assert issubclass(lc.cls, base)  # the in-tree import gave the tree's real class
        assert "gpuserve.base" in sys.modules
    assert not any(n == "gpuserve" or n.startswith("gpuserve.") for n in sys.modules)
    assert str(root) not in sys.path


def test_ordinary_import_is_used_where_it_works(tmp_path):
    root = write_tree(tmp_path, {"okpkg/__init__.py": "", "okpkg/m.py": "import json\nclass A:\n    pass\n"})
    result = analysed(root / "okpkg")
    with TreeLoader(result.files) as loader:
        assert loader.load("okpkg.m").mode == "import"


def test_a_module_that_never_finishes_hits_the_time_limit(tmp_path):
    root = write_tree(tmp_path, {"slowpkg/__init__.py": "", "slowpkg/m.py": "while True:\n    pass\n"})
    result = analysed(root / "slowpkg")
    with TreeLoader(result.files, time_limit=0.3) as loader:
        lm = loader.load("slowpkg.m")
    assert lm.mode == "failed" and "time limit" in lm.error


def test_a_body_that_fails_midway_keeps_the_classes_above_the_failure(tmp_path):
    root = write_tree(tmp_path, {"halfpkg/__init__.py": "",
                                 "halfpkg/m.py": "import absent_pkg\nclass A:\n    pass\nraise RuntimeError('x')\n"})
    result = analysed(root / "halfpkg")
    with TreeLoader(result.files) as loader:
        lc = loader.load_class("halfpkg.m.A", "halfpkg.m")
    assert lc.cls is not None and lc.mode == "isolated-partial"


# --------------------------------------------------------------------------------------------
# stand-ins
# --------------------------------------------------------------------------------------------

def test_standin_is_permissive_subclassable_and_falsy():
    torch = Standin("torch")

    class Layer(torch.nn.Module):
        def forward(self, x):
            return x

    @torch.compile(dynamic=True)
    def f(x):
        return x + 1

    assert f(1) == 2  # the decorator kept the function
    assert Layer().forward(3) == 3
    assert not hasattr(Layer(), "anything")  # no __getattr__ on stand-in bases
    assert not torch.cuda.is_available()
    assert not isinstance(3, torch.Tensor)
    assert torch.Tensor[int] is not None
    assert list(torch.empty(3)) == []
    with torch.no_grad():
        pass


def test_recording_delegate_binds_like_the_real_signature():
    import inspect

    def real(self, forward_batch):
        ...

    d = make_delegate("hook", signature=inspect.signature(real), class_name="TrtBackend")
    d.hook(1)
    with pytest.raises(TypeError, match=r"TrtBackend.hook\(\) takes 2 positional arguments but 3 were given"):
        d.hook(1, True)
    log = delegate_log(d)
    assert len(log.attempts) == 2 and len(log.ran) == 1 and len(log.bind_errors) == 1


# --------------------------------------------------------------------------------------------
# reports and the CLI
# --------------------------------------------------------------------------------------------

def test_json_report_carries_a_verification_object():
    from attn_lint.linter.report.json_report import render

    result, v = verdicts_of(FIXTURES / "al001_hidden_hook")
    doc = json.loads(render(result, extra=json_extra(v)))
    ver = doc["findings"][0]["verification"]
    assert ver["verdict"] == "pairing-reproduced" and ver["confirmed"] is True and ver["load_mode"] == "import"
    assert set(ver) >= {"verdict", "confirmed", "load_mode", "detail", "seconds"}
    assert ver["facts"]["pairing"]["status"] == "reproduced"


def test_text_table_lists_each_finding(tmp_path):
    from rich.console import Console

    result, v = verdicts_of(FIXTURES / "al002_delegation_typeerror")
    out = tmp_path / "out.txt"
    with out.open("w") as fh:
        render_table(v, Console(file=fh, width=200, no_color=True, force_terminal=True))
    text = out.read_text()
    for word in ("finding", "load mode", "verdict", "detail", "time", "pairing-reproduced", "1 confirmed",
                 "import", "takes 2 positional arguments but 3 were given"):
        assert word in text


def _cli(*args):
    from attn_lint.linter.app.cli import main

    return CliRunner(mix_stderr=False).invoke(main, list(args)) if "mix_stderr" in \
        CliRunner.__init__.__code__.co_varnames else CliRunner().invoke(main, list(args))


def test_cli_verify_json():
    res = _cli("--verify", "--format", "json", str(FIXTURES / "al002_delegation_typeerror"))
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    assert doc["findings"][0]["verification"]["verdict"] == "pairing-reproduced"
    assert doc["stats"]["verification"]["confirmed"] == 1


def test_cli_verify_sarif_carries_the_verdict():
    """Issue 12: the verdict was missing from SARIF; it is a result property, as in JSON."""
    import pathlib

    import jsonschema
    res = _cli("--verify", "--format", "sarif", str(FIXTURES / "al002_delegation_typeerror"))
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    schema = json.loads((pathlib.Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(doc)
    (result,) = doc["runs"][0]["results"]
    assert result["properties"]["verification"]["verdict"] == "pairing-reproduced"
    assert result["properties"]["verification"]["confirmed"] is True


def test_cli_verify_text_prints_the_table():
    res = _cli("--verify", str(FIXTURES / "al001_hidden_hook"))
    assert res.exit_code == 1
    assert "Runtime verification" in res.stdout and "pairing-reproduced" in res.stdout


def test_cli_verify_on_gpu_without_gpu_exits_2_with_cpu_verdicts(monkeypatch):
    monkeypatch.setattr(flashinfer_smoke, "gpu_environment_problem",
                        lambda: "GPU smoke test unavailable: torch is not installed; pip install 'attn-lint[gpu]'")
    res = _cli("--verify-on-gpu", "--format", "json", str(FIXTURES / "al001_hidden_hook"))
    assert res.exit_code == 2
    doc = json.loads(res.stdout)
    ver = doc["findings"][0]["verification"]
    assert ver["verdict"] == "pairing-reproduced"
    # The fixture's FlashInfer MLA backend plans its own toy wrapper, not FlashInfer: no GPU run.
    assert ver["gpu"].startswith("n/a: the hook does not plan FlashInfer"), ver["gpu"]
    assert "pip install 'attn-lint[gpu]'" in res.stderr


# --------------------------------------------------------------------------------------------
# the GPU wiring, against a fake harness (the real one is tested in test_gpu_smoke.py)
# --------------------------------------------------------------------------------------------

class _FakeHarness:
    backend = "fake"

    def __init__(self):
        self.planned = None

    def plan(self, seq_lens):
        self.planned = tuple(seq_lens)


def _fake_protocol(front, hook_name, harness, backend, batches=None, call_args=None, **_):
    kinds = []
    for lens in ((5, 37, 130), (130, 37, 5)):
        harness.planned = (300, 500)
        fb = types.SimpleNamespace(extend_seq_lens_cpu=list(lens))
        found = hasattr(front, hook_name)
        try:
            if found:
                getattr(front, hook_name)(fb, *(call_args or ()))
            kinds.append("pass" if harness.planned == lens else
                         ("qo-indptr-mismatch" if sum(lens) != 800 else "wrong-output"))
        except TypeError as exc:
            kinds.append(f"type-error: {exc}")
    worst = next((k for k in kinds if k.startswith("type-error")), None) or \
        next((k for k in kinds if k != "pass"), "pass")
    return types.SimpleNamespace(verdict=worst.split(":")[0], detail=worst, backend="fake", tolerance=0.0,
                                 batches=())


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr(flashinfer_smoke, "gpu_environment_problem", lambda: None)
    monkeypatch.setattr(flashinfer_smoke, "run_prefill_protocol", _fake_protocol)
    monkeypatch.setattr(verify_mod, "_harness", lambda backend: (_FakeHarness(), []))


FI_TREE = pathlib.Path(__file__).parent / "data" / "flashinfer_tree" / "fitree"


def _by_key(v):
    return {(f.code, f.class_name.rsplit(".", 1)[-1], f.member): ver for f, ver in v.items()}


def test_gpu_runs_only_for_a_hook_that_plans_flashinfer(fake_gpu):
    """The FlashInfer MLA hook plans a ragged prefill wrapper (through a helper it holds): it goes
    to the smoke test, and the failure there confirms the finding. The NPU hook plans nothing: no
    FlashInfer verdict is claimed for it, and the reason says so."""
    by = _by_key(verify(analysed(FI_TREE), gpu=True))
    mla = by[("AL001", "HybridBackend", HOOK)]
    assert mla.gpu["verdict"] == "qo-indptr-mismatch", mla.gpu
    assert mla.gpu["front"] == "real HybridBackend"
    assert "ChunkPlanner.update" in mla.gpu["flashinfer_plan"], mla.gpu
    assert mla.verdict == "consequence-reproduced" and mla.confirmed, mla.detail
    npu = by[("AL001", "HybridBackend", "prepare_cp_metadata")]
    assert npu.gpu.startswith("n/a: the hook does not plan FlashInfer"), npu.gpu
    assert "NpuBackend.prepare_cp_metadata" in npu.gpu
    assert npu.verdict == "pairing-reproduced", npu.detail  # its construction is still shown


def test_gpu_wiring_al002_typeerror_through_the_real_wrapper(fake_gpu):
    by = _by_key(verify(analysed(FI_TREE), gpu=True))
    ver = by[("AL002", "ForwardingHybrid", HOOK)]
    assert ver.gpu["verdict"] == "type-error", ver.gpu
    assert "TrtllmMLABackend.init_mha_chunk_metadata() takes 2 positional arguments but 3 were given" \
        in ver.gpu["detail"]
    assert ver.verdict == "consequence-reproduced", ver.detail
    # TRT-LLM's hook plans FlashInfer through `super()`.
    assert ver.gpu["flashinfer_plan"].startswith("TrtllmMLABackend.init_mha_chunk_metadata -> "
                                                 "FlashInferMLABackend.init_mha_chunk_metadata"), ver.gpu


def test_gpu_controls_pass_on_a_wrapper_that_forwards_the_flashinfer_hook(fake_gpu):
    v = verify(analysed(FI_TREE), gpu=True)
    one_arg = [c for c in v.controls if c.wrapper.endswith(".OneArgHybrid") and c.member == HOOK]
    assert {c.delegate.rsplit(".", 1)[-1] for c in one_arg} == {"FlashInferMLABackend", "TrtllmMLABackend"}
    assert all(c.verdict == "pass" for c in one_arg), one_arg
    # The NPU hook plans no FlashInfer: no control claims anything about it.
    assert not [c for c in v.controls if c.member == "prepare_cp_metadata"]


@pytest.mark.parametrize("name", ["fixed", "fixed_one_arg"])
def test_no_gpu_control_for_hooks_that_plan_no_flashinfer(fake_gpu, name):
    """The fixtures' MLA backend plans a toy wrapper of their own, not FlashInfer."""
    v = verify(analysed(FIXTURES / name), gpu=True)
    assert v == {} and v.controls == []


def test_gpu_is_not_run_for_an_al003_finding(fake_gpu):
    result = analysed(FIXTURES / "al003_noop_default")
    _, ver = only(verify(result, gpu=True))
    assert isinstance(ver.gpu, str) and ver.gpu.startswith("n/a"), ver.gpu


def test_getattr_that_needs_constructor_state_is_unverifiable(tmp_path):
    """A __getattr__ that reads state only __init__ sets cannot answer for a real instance."""
    root = write_tree(tmp_path, {"gapkg/__init__.py": "", "gapkg/b.py": '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

class Flash(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        pass

class Hybrid(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend
        self._routes = {"plan_chunks": full_attn_backend}

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_routes")[name], name)
'''})
    result = analysed(root / "gapkg")
    owner = "gapkg.b.Flash"
    f = _claim(result, "AL001", "Hybrid", "plan_chunks", probe_kind="hasattr", delegates="full_attn_backend",
               owners=owner)
    v = verify(replace(result, findings=[f]))
    assert v[f].verdict == "unverifiable", v[f].detail
    assert "__getattr__` failed on state the constructor sets" in v[f].detail


RUNNER_TREE = {"runpkg/__init__.py": "", "runpkg/backends.py": '''
try:
    from flashinfer import BatchPrefillWithRaggedKVCacheWrapper
except ImportError:
    BatchPrefillWithRaggedKVCacheWrapper = None

class Backend:
    def forward(self, batch):
        raise NotImplementedError

class FlashBackend(Backend):
    def __init__(self, workspace):
        self.ragged = BatchPrefillWithRaggedKVCacheWrapper(workspace, "NHD")

    def forward(self, batch):
        return batch

    def plan_chunks(self, batch, disable_ragged: bool = False):
        self.ragged.plan(batch.qo_indptr, batch.qo_indptr, 16, 16, 192)

class TrtBackend(FlashBackend):
    def plan_chunks(self, batch):
        super().plan_chunks(batch, disable_ragged=True)

class Runner:
    def __init__(self, backend: Backend):
        self.backend = backend

    def step(self, batch):
        self.backend.plan_chunks(batch, disable_ragged=True)
'''}


def test_al002_in_a_method_that_is_not_the_hook(tmp_path, fake_gpu):
    """The call sits in Runner.step on `self.backend`: the receiver is planted, and on the GPU path
    the protocol reaches Runner.step through an adapter front."""
    root = write_tree(tmp_path, RUNNER_TREE)
    result = analysed(root / "runpkg")
    # Built by hand so that this tests the replay, whatever the static rule reports today.
    step = result.context.index.classes["runpkg.backends.Runner"].info.methods["step"]
    line = next(c.line for c in step.calls if c.func[0] == "attr" and c.func[2] == "plan_chunks")
    f = replace(_claim(result, "AL002", "Runner", "plan_chunks", targets=("runpkg.backends.TrtBackend",)),
                details=(("call", f"runpkg/backends.py:{line}"), ("how", "call"),
                         ("rejecting_owner", "runpkg.backends.TrtBackend")))
    ver = verify(replace(result, findings=[f]), gpu=True)[f]
    assert ver.facts["error"] == "TypeError: TrtBackend.plan_chunks() got an unexpected keyword argument 'disable_ragged'"
    assert ver.facts["receiver"][0] == "self.backend"
    assert ver.gpu["verdict"] == "type-error", ver.gpu
    assert ver.gpu["front"] == "real Runner.step"
    # No code builds a Runner: the pairing is not shown. The GPU failure is the consequence of a
    # pairing the static analysis keeps live.
    assert ver.facts["pairing"]["status"] == "unverifiable"
    assert ver.verdict == "consequence-reproduced", ver.detail


def test_strict_retry_when_an_installed_package_breaks_the_module_body(tmp_path, monkeypatch):
    """An installed package whose import-time work fails (as torch/triton can without the rest of
    the GPU stack) stops the body before the class: the retry stands in every non-stdlib package."""
    site = write_tree(tmp_path / "site", {"fussy_gpu_lib/__init__.py":
                                          "def register_op(name):\n    raise RuntimeError('no CUDA driver')\n"})
    monkeypatch.syspath_prepend(str(site))
    tree = dict(RUNNER_TREE)
    tree["runpkg/backends.py"] = "import fussy_gpu_lib\nfussy_gpu_lib.register_op('x')\n" + tree["runpkg/backends.py"]
    root = write_tree(tmp_path / "src", tree)
    result = analysed(root / "runpkg")
    step = result.context.index.classes["runpkg.backends.Runner"].info.methods["step"]
    line = next(c.line for c in step.calls if c.func[0] == "attr" and c.func[2] == "plan_chunks")
    f = replace(_claim(result, "AL002", "Runner", "plan_chunks", targets=("runpkg.backends.TrtBackend",)),
                details=(("call", f"runpkg/backends.py:{line}"), ("how", "call"),
                         ("rejecting_owner", "runpkg.backends.TrtBackend")))
    ver = verify(replace(result, findings=[f]))[f]
    assert ver.verdict == "call-rejected", ver.detail
    assert ver.load_mode == "isolated-strict"
    assert "no CUDA driver" in ver.facts["first_attempt"]


def test_piped_verification_is_plain_lines_with_whole_names():
    """Issue 12: the verdicts were a box table even when piped, with names broken at 80 columns."""
    import subprocess
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "--verify", "--no-cache",
                           str(FIXTURES / "al001_hidden_hook")], capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in __import__("os").environ.items() if k != "FORCE_COLOR"})
    out = proc.stdout
    assert "Runtime verification" in out and "HybridLinearAttnBackend.init_mha_chunk_metadata" in out
    assert not any(ch in out for ch in "│┃─━┏┓└┘")


def _verify_on_a_terminal(columns: int) -> str:
    """`attn-lint --verify` with stdout on a pseudo-terminal of `columns` columns; escapes removed."""
    import os
    import re
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CI")}
    env.update(COLUMNS=str(columns), TERM="xterm-256color")
    out = run_in_pty(["--verify", "--no-cache", FIXTURES / "al001_hidden_hook"], env)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out)


def test_terminal_verification_never_breaks_names_mid_word():
    """Issue 12: on an 80-column terminal the box table broke names and paths mid-word. The box
    table is used where everything fits whole; on a narrower terminal, the plain lines."""
    import os
    name = "HybridLinearAttnBackend.init_mha_chunk_metadata"
    path = str(FIXTURES / "al001_hidden_hook" / "serving" / "backends" / "hybrid_linear_attn_backend.py")
    narrow = _verify_on_a_terminal(80)
    assert name in narrow and "│" not in narrow and "  verdict: " in narrow
    wide = _verify_on_a_terminal(max(250, len(path) + 120))
    assert "│" in wide and name in wide
    row = next(line for line in wide.splitlines() if "hybrid_linear_attn_backend.py:13" in line and "│" in line)
    assert f"{os.path.relpath(path)}:13" in row or f"{path}:13" in row, row
