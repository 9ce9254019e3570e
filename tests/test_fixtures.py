"""The fixture code bases in fixtures/: the expected findings, and that the code really behaves so."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import fixture_index
import pytest
from conftest import FIXTURES, lint, pairs

HOOK = "init_mha_chunk_metadata"
# Serving-shaped fixtures (a `serving` package, importable with plain Python): checked for that too.
ALL_FIXTURES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and (p / "serving").is_dir())
EXPECTED = {name: fixture_index.read(name)[2] for name in fixture_index.fixtures()}


def _run(folder: str, code: str) -> str:
    """Run code with the fixture folder as the working directory (its `serving` package importable)."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=FIXTURES / folder,
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))  # keep fixtures/ clean
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_every_fixture_says_what_it_expects_and_the_readme_table_is_generated():
    folders = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert sorted(EXPECTED) == folders, "each fixture folder needs an EXPECTED file (tests/fixture_index.py)"
    assert (FIXTURES / "README.md").read_text() == fixture_index.readme(), "run: python tests/fixture_index.py"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings(name):
    result = lint(FIXTURES / name)
    assert result.errors == []
    got = sorted((f.code, f.class_name.rsplit(".", 1)[-1], f.member) for f in result.findings)
    assert got == sorted(EXPECTED[name])


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_a_serving_fixture_is_a_whole_tree(name):
    assert lint(FIXTURES / name).stats["files"] >= 13


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_fixture_findings_without_astroid(name):
    """The index alone types every receiver in the fixtures (annotations, returns, constructors)."""
    result = lint(FIXTURES / name, astroid=False)
    got = sorted((f.code, f.class_name.rsplit(".", 1)[-1], f.member) for f in result.findings)
    assert got == sorted(EXPECTED[name])


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_fixture_imports_with_plain_python(name):
    out = _run(name, """
        import importlib, pkgutil
        import serving
        for m in pkgutil.walk_packages(serving.__path__, "serving."):
            importlib.import_module(m.name)
        import serving.models.forward_mha
        print("ok")
    """)
    assert out.strip() == "ok"


def test_al001_finding_details():
    (f,) = lint(FIXTURES / "al001_hidden_hook").findings
    assert f.class_name == "serving.backends.hybrid_linear_attn_backend.HybridLinearAttnBackend"
    assert f.path == "serving/backends/hybrid_linear_attn_backend.py"
    assert f.severity == "error" and f.name == "unforwarded-hook"
    assert set(f.targets) == {"serving.backends.flashinfer_mla_backend.FlashInferMLAAttnBackend",
                              "serving.backends.trtllm_mla_backend.TRTLLMMLABackend"}
    src = (FIXTURES / "al001_hidden_hook" / f.path).read_text().splitlines()
    assert src[f.line - 1].startswith("class HybridLinearAttnBackend")
    # Both probe sites are evidence: through get_attn_backend() and through forward_batch.attn_backend.
    probe_lines = {(e.path, e.line) for e in f.evidence}
    for path, needle in (("serving/models/forward_mha.py", 'if hasattr(get_attn_backend(), "'),
                         ("serving/models/sarvam_moe.py", 'if hasattr(forward_batch.attn_backend, "')):
        lines = (FIXTURES / "al001_hidden_hook" / path).read_text().splitlines()
        line = next(i for i, text in enumerate(lines, 1) if needle in text)
        assert (path, line) in probe_lines, f"probe {path}:{line} missing from the evidence"
    notes = " ".join(e.note for e in f.evidence)
    assert "full_attn_backend" in notes and "get_attn_backend" in notes


def test_al002_finding_details():
    (f,) = lint(FIXTURES / "al002_delegation_typeerror").findings
    assert f.class_name.endswith(".HybridLinearAttnBackend") and f.member == HOOK
    assert f.targets == ("serving.backends.trtllm_mla_backend.TRTLLMMLABackend",), \
        "only the rejecting implementation is a target; FlashInfer MLA accepts the call"
    src = (FIXTURES / "al002_delegation_typeerror" / f.path).read_text().splitlines()
    assert src[f.line - 1].strip() == "init(forward_batch, disable_flashinfer_ragged)"
    assert src[f.line - 1].index("init(") + 1 == f.column
    details = dict(f.details)
    assert details["error"] == ("TRTLLMMLABackend.init_mha_chunk_metadata() takes 2 positional arguments "
                                "but 3 were given")
    assert details["error"] in f.message


def test_al002_error_text_is_what_python_raises():
    """Run the fixture for real: the hybrid over TRT-LLM MLA raises the very TypeError the finding states."""
    (f,) = lint(FIXTURES / "al002_delegation_typeerror").findings
    out = _run("al002_delegation_typeerror", """
        from serving.backends.hybrid_linear_attn_backend import HybridLinearAttnBackend
        from serving.backends.mamba_backend import MambaAttnBackend
        from serving.backends.trtllm_mla_backend import TRTLLMMLABackend
        from serving.backends.flashinfer_mla_backend import FlashInferMLAAttnBackend
        from serving.model_executor.forward_batch_info import ForwardBatch, ForwardMode
        batch = ForwardBatch(ForwardMode.EXTEND, 2, [3, 4], extend_seq_lens=[3, 4])
        HybridLinearAttnBackend(FlashInferMLAAttnBackend(), MambaAttnBackend(), [0]).init_mha_chunk_metadata(batch)
        try:
            HybridLinearAttnBackend(TRTLLMMLABackend(), MambaAttnBackend(), [0]).init_mha_chunk_metadata(batch)
        except TypeError as exc:
            print(exc)
    """)
    assert out.strip() == dict(f.details)["error"]


def test_al001_fixture_really_skips_the_hook():
    out = _run("al001_hidden_hook", """
        from serving.model_executor.model_runner import ModelRunner
        from serving.model_executor.forward_batch_info import ForwardBatch, ForwardMode
        from serving.model_executor.forward_context import set_forward_context
        from serving.models.forward_mha import forward_normal_chunked_kv_prepare, forward_normal_chunked_kv_core
        batch = ForwardBatch(ForwardMode.EXTEND, 2, [3, 4], extend_seq_lens=[3, 4])
        for layers in (None, [0]):
            runner = ModelRunner(full_attn_layers=layers)
            layer = type("Layer", (), {"layer_id": 0})()
            with set_forward_context(runner.attn_backend):
                forward_normal_chunked_kv_prepare([0] * 7, None, None, batch)
                try:
                    forward_normal_chunked_kv_core([0] * 7, None, None, layer, batch)
                    print(type(runner.attn_backend).__name__, "ok")
                except ValueError as exc:
                    print(type(runner.attn_backend).__name__, exc)
    """)
    assert out.splitlines() == ["FlashInferMLAAttnBackend ok",
                                "HybridLinearAttnBackend q.shape[0] (7) does not match qo_indptr[-1] (None)"]


@pytest.mark.parametrize("name", ["fixed", "fixed_one_arg", "getattr_wrapper"])
def test_clean_fixtures_really_run_the_hook(name):
    out = _run(name, """
        from serving.model_executor.model_runner import ModelRunner
        from serving.model_executor.forward_batch_info import ForwardBatch, ForwardMode
        from serving.model_executor.forward_context import set_forward_context
        from serving.models.forward_mha import forward_normal_chunked_kv_prepare, forward_normal_chunked_kv_core
        batch = ForwardBatch(ForwardMode.EXTEND, 2, [3, 4], extend_seq_lens=[3, 4])
        layer = type("Layer", (), {"layer_id": 0})()
        for backend in ("flashinfer_mla", "trtllm_mla"):
            runner = ModelRunner(backend, full_attn_layers=[0])
            with set_forward_context(runner.attn_backend):
                forward_normal_chunked_kv_prepare([0] * 7, None, None, batch)
                forward_normal_chunked_kv_core([0] * 7, None, None, layer, batch)
        print("ok")
    """)
    assert out.strip() == "ok"


def test_al003_finding_details_and_behaviour():
    (f,) = lint(FIXTURES / "al003_noop_default").findings
    assert f.severity == "warning" and f.name == "wrapper-inherits-noop-default"
    assert "serving.backends.flashinfer_mla_backend.FlashInferMLAAttnBackend" in f.targets
    assert any(e.path == "serving/model_executor/model_runner.py" for e in f.evidence)
    out = _run("al003_noop_default", """
        from serving.model_executor.model_runner import ModelRunner
        runner = ModelRunner(full_attn_layers=[0])
        full = runner.attn_backend.full_attn_backend
        full.forward_metadata = "stale"
        runner.capture_cuda_graphs()
        print(full.forward_metadata)
    """)
    assert out.strip() == "stale", "the wrapper's inherited no-op never reaches the delegate"


def test_runs_on_the_whole_fixtures_folder():
    """`attn-lint fixtures/` (the README's quick start): every fixture's finding, no errors."""
    result = lint(FIXTURES)
    assert result.errors == []
    got = sorted((f.path.split("/", 1)[0], f.code) for f in result.findings)
    assert got == sorted((name, code) for name, exp in EXPECTED.items() for code, _, _ in exp)


def test_each_fixture_root_in_one_process_is_independent():
    """Analysing the roots one after another in one process gives the same answers as fresh runs."""
    for name in ALL_FIXTURES + ALL_FIXTURES[::-1]:
        got = sorted((f.code, f.class_name.rsplit(".", 1)[-1], f.member) for f in lint(FIXTURES / name).findings)
        assert got == sorted(EXPECTED[name]), name


# --- variations of the fixtures ----------------------------------------------------------------
# Each variation copies a fixture, edits a few lines and states what must come out. Edits are
# {relative path: new text | None (delete) | [(old, new), ...]}; every `old` must occur.

HYBRID = "serving/backends/hybrid_linear_attn_backend.py"
TRT_FILE = "serving/backends/trtllm_mla_backend.py"
FI_FILE = "serving/backends/flashinfer_mla_backend.py"
BASE_FILE = "serving/backends/base_attn_backend.py"
MHA = "serving/models/forward_mha.py"
SARVAM = "serving/models/sarvam_moe.py"

MODEL_HEAD = '''\
from __future__ import annotations

from typing import Optional

from serving.backends.base_attn_backend import AttentionBackend
from serving.backends.flashinfer_mla_backend import FlashInferMLAAttnBackend
from serving.model_executor.forward_batch_info import ForwardBatch
from serving.model_executor.forward_context import get_attn_backend
from serving.model_executor.model_runner import ModelRunner


'''
TWO_ARG_CALL = "            init(forward_batch, disable_flashinfer_ragged)\n"
TRT_SIG = "    def init_mha_chunk_metadata(self, forward_batch: ForwardBatch):\n"


def _variant(tmp_path, base: str, edits: dict) -> Path:
    root = tmp_path / base
    shutil.copytree(FIXTURES / base, root)
    for rel, edit in edits.items():
        path = root / rel
        if edit is None:
            path.unlink()
        elif isinstance(edit, str):
            path.write_text(edit)
        else:
            text = path.read_text()
            for old, new in edit:
                assert old in text, f"test bug: {old!r} not in {rel}"
                text = text.replace(old, new, 1)
            path.write_text(text)
    return root


def _model(body: str) -> str:
    return MODEL_HEAD + body


PROBE_VARIANTS = {
    # probe forms
    "getattr-default": (_model('''\
def prepare(forward_batch: ForwardBatch):
    init = getattr(get_attn_backend(), "init_mha_chunk_metadata", None)
    if init is not None:
        init(forward_batch)
'''), True),
    "try-except-attributeerror": (_model('''\
def prepare(forward_batch: ForwardBatch):
    try:
        init = forward_batch.attn_backend.init_mha_chunk_metadata
    except AttributeError:
        return
    init(forward_batch)
'''), True),
    "optional-parameter": (_model('''\
def prepare(backend: Optional[AttentionBackend], forward_batch: ForwardBatch):
    if backend is not None and hasattr(backend, "init_mha_chunk_metadata"):
        backend.init_mha_chunk_metadata(forward_batch)
'''), True),
    "string-annotation": (_model('''\
def prepare(backend: "AttentionBackend", forward_batch: ForwardBatch):
    if hasattr(backend, "init_mha_chunk_metadata"):
        backend.init_mha_chunk_metadata(forward_batch)
'''), True),
    "runner-attribute": (_model('''\
def prepare(runner: ModelRunner, forward_batch: ForwardBatch):
    if hasattr(runner.attn_backend, "init_mha_chunk_metadata"):
        runner.attn_backend.init_mha_chunk_metadata(forward_batch)
'''), True),
    "local-from-context": (_model('''\
def prepare(forward_batch: ForwardBatch):
    backend = get_attn_backend()
    if hasattr(backend, "init_mha_chunk_metadata"):
        backend.init_mha_chunk_metadata(forward_batch)
'''), True),
    # receivers that cannot be the wrapper
    "leaf-typed-receiver": (_model('''\
def prepare(backend: FlashInferMLAAttnBackend, forward_batch: ForwardBatch):
    if hasattr(backend, "init_mha_chunk_metadata"):
        backend.init_mha_chunk_metadata(forward_batch)
'''), False),
    "unrelated-receiver": (_model('''\
def prepare(forward_batch: ForwardBatch):
    if hasattr(forward_batch, "init_mha_chunk_metadata"):
        forward_batch.init_mha_chunk_metadata()
'''), False),
    "no-probe-at-all": (_model('''\
def prepare(forward_batch: ForwardBatch):
    return get_attn_backend().forward_extend(None, None, None, None, forward_batch)
'''), False),
}


@pytest.mark.parametrize("variant", sorted(PROBE_VARIANTS))
def test_al001_probe_variants(variant, tmp_path):
    model, flagged = PROBE_VARIANTS[variant]
    root = _variant(tmp_path, "al001_hidden_hook", {MHA: model, SARVAM: None})
    result = lint(root)
    assert result.errors == []
    expected = [("HybridLinearAttnBackend", HOOK)] if flagged else []
    assert pairs(result.findings, "AL001") == expected
    if flagged:
        (f,) = result.findings
        assert any(e.path == MHA for e in f.evidence), "the probe site is evidence"


WRAPPER_VARIANTS = {
    # the hook comes from a mixin of the wrapper: it is defined, nothing to report
    "mixin-defines-hook": ({HYBRID: [
        ("class HybridLinearAttnBackend(AttentionBackend):",
         "class ChunkedPrefillMixin:\n"
         "    def init_mha_chunk_metadata(self, forward_batch):\n"
         "        init = getattr(self.full_attn_backend, \"init_mha_chunk_metadata\", None)\n"
         "        if init is not None:\n"
         "            init(forward_batch)\n\n\n"
         "class HybridLinearAttnBackend(ChunkedPrefillMixin, AttentionBackend):")]}, []),
    # __getattr__ on an intermediate wrapper base forwards the hook
    "getattr-on-wrapper-base": ({HYBRID: [
        ("class HybridLinearAttnBackend(AttentionBackend):",
         "class ForwardingBackend(AttentionBackend):\n"
         "    def __getattr__(self, name):\n"
         "        if name == \"full_attn_backend\":\n"
         "            raise AttributeError(name)\n"
         "        return getattr(self.full_attn_backend, name)\n\n\n"
         "class HybridLinearAttnBackend(ForwardingBackend):")]}, []),
    # the wrapper probes only its own delegate: nothing probes the wrapper
    "probe-only-inside-the-wrapper": ({MHA: _model("X = 1\n"), SARVAM: None, HYBRID: [
        ("    def forward_decode(",
         "    def prepare_chunks(self, forward_batch: ForwardBatch):\n"
         "        if hasattr(self.full_attn_backend, \"init_mha_chunk_metadata\"):\n"
         "            self.full_attn_backend.init_mha_chunk_metadata(forward_batch)\n\n"
         "    def forward_decode(")]}, []),
    # the hook is a property on the delegate: still hidden by the wrapper
    "hook-is-a-property": ({TRT_FILE: [(TRT_SIG, "    @property\n    def supports_mha_chunks(self) -> bool:\n"
                                                 "        return True\n\n" + TRT_SIG)],
                            MHA: _model('''\
def prepare(forward_batch: ForwardBatch):
    if getattr(get_attn_backend(), "supports_mha_chunks", False):
        pass
'''), SARVAM: None}, [("HybridLinearAttnBackend", "supports_mha_chunks")]),
    # the hook is a class attribute on the delegate
    "hook-is-a-class-attribute": ({FI_FILE: [('    """Flashinfer attention kernels for MLA."""\n',
                                              '    """Flashinfer attention kernels for MLA."""\n\n'
                                              '    mha_chunk_block_size = 128\n')],
                                   MHA: _model('''\
def prepare(forward_batch: ForwardBatch):
    return getattr(forward_batch.attn_backend, "mha_chunk_block_size", None)
'''), SARVAM: None}, [("HybridLinearAttnBackend", "mha_chunk_block_size")]),
}


@pytest.mark.parametrize("variant", sorted(WRAPPER_VARIANTS))
def test_al001_wrapper_variants(variant, tmp_path):
    edits, expected = WRAPPER_VARIANTS[variant]
    result = lint(_variant(tmp_path, "al001_hidden_hook", edits))
    assert result.errors == []
    assert pairs(result.findings, "AL001") == expected


_HYBRID_INIT = '''    def __init__(self, full_attn_backend: AttentionBackend, linear_attn_backend: MambaAttnBackend,
                 full_attn_layers: List[int]):
        self.full_attn_layers = set(full_attn_layers)
        self.full_attn_backend = full_attn_backend
        self.linear_attn_backend = linear_attn_backend
        self.attn_backend_list = [full_attn_backend, linear_attn_backend]
'''
DELEGATE_SHAPES = {
    # the delegates only in a list
    "list-only": '''    def __init__(self, full_attn_backend: AttentionBackend, linear_attn_backend: MambaAttnBackend,
                 full_attn_layers: List[int]):
        self.full_attn_layers = set(full_attn_layers)
        self.attn_backend_list = [full_attn_backend, linear_attn_backend]
''',
    "list-annotated": '''    def __init__(self, backends: List[AttentionBackend], full_attn_layers: List[int]):
        self.full_attn_layers = set(full_attn_layers)
        self.attn_backend_list = backends
''',
    "optional": '''    def __init__(self, full_attn_backend: Optional[AttentionBackend], linear_attn_backend: MambaAttnBackend,
                 full_attn_layers: List[int]):
        self.full_attn_layers = set(full_attn_layers)
        self.full_attn_backend = full_attn_backend
        self.linear_attn_backend = linear_attn_backend
        self.attn_backend_list = [full_attn_backend, linear_attn_backend]
''',
    "constructed": '''    def __init__(self, model_runner, full_attn_layers: List[int]):
        self.full_attn_layers = set(full_attn_layers)
        self.full_attn_backend = FlashInferMLAAttnBackend(model_runner)
        self.linear_attn_backend = MambaAttnBackend(model_runner)
        self.attn_backend_list = [self.full_attn_backend, self.linear_attn_backend]
''',
    "class-annotation": '''    full_attn_backend: AttentionBackend

    def __init__(self, full_attn_backend, linear_attn_backend, full_attn_layers):
        self.full_attn_layers = set(full_attn_layers)
        self.full_attn_backend = full_attn_backend
        self.linear_attn_backend = linear_attn_backend
        self.attn_backend_list = [full_attn_backend, linear_attn_backend]
''',
}


@pytest.mark.parametrize("shape", sorted(DELEGATE_SHAPES))
def test_al001_delegate_shapes(shape, tmp_path):
    """However the wrapper comes to hold its delegates (typed parameters, Optional, a list, a class-level
    annotation, constructors), the hidden hook is found."""
    root = _variant(tmp_path, "al001_hidden_hook", {HYBRID: [
        (_HYBRID_INIT, DELEGATE_SHAPES[shape]),
        ("from typing import List\n", "from typing import List, Optional\n\n"
                                      "from serving.backends.flashinfer_mla_backend import FlashInferMLAAttnBackend\n")]})
    result = lint(root)
    assert result.errors == []
    assert pairs(result.findings) == [("HybridLinearAttnBackend", HOOK)]


def test_al001_reported_once_on_the_wrapper_base(tmp_path):
    """Two wrappers sharing a base that holds the delegate and lacks the hook: one finding, on the base."""
    root = _variant(tmp_path, "al001_hidden_hook", {HYBRID: [
        ("class HybridLinearAttnBackend(AttentionBackend):",
         "class HybridAttnBackendBase(AttentionBackend):\n"
         "    def __init__(self, full_attn_backend: AttentionBackend):\n"
         "        self.full_attn_backend = full_attn_backend\n\n"
         "    def init_forward_metadata(self, forward_batch: ForwardBatch):\n"
         "        self.full_attn_backend.init_forward_metadata(forward_batch)\n\n\n"
         "class HybridLinearAttnBackend(HybridAttnBackendBase):")]})
    result = lint(root)
    assert pairs(result.findings, "AL001") == [("HybridAttnBackendBase", HOOK)]


# AL002: (edits to al002_delegation_typeerror, expected targets (short names) or [] for clean)
CALL_VARIANTS = {
    "keyword-argument": ({HYBRID: [(TWO_ARG_CALL, "            init(forward_batch, "
                                                  "disable_flashinfer_ragged=disable_flashinfer_ragged)\n")]},
                         ["TRTLLMMLABackend"]),
    "direct-call-on-the-delegate": ({HYBRID: [(
        '        init = getattr(self.full_attn_backend, "init_mha_chunk_metadata", None)\n'
        '        if init is not None:\n' + TWO_ARG_CALL,
        "        self.full_attn_backend.init_mha_chunk_metadata(forward_batch, disable_flashinfer_ragged)\n")]},
        ["TRTLLMMLABackend"]),
    "trt-takes-kwargs": ({TRT_FILE: [(TRT_SIG, "    def init_mha_chunk_metadata(self, forward_batch: ForwardBatch, "
                                               "**kwargs):\n")],
                          HYBRID: [(TWO_ARG_CALL, "            init(forward_batch, disable_flashinfer_ragged="
                                                  "disable_flashinfer_ragged)\n")]}, []),
    "trt-takes-varargs": ({TRT_FILE: [(TRT_SIG, "    def init_mha_chunk_metadata(self, forward_batch: ForwardBatch, "
                                                "*args):\n")]}, []),
    "trt-keyword-only": ({TRT_FILE: [(TRT_SIG, "    def init_mha_chunk_metadata(self, forward_batch: ForwardBatch, *, "
                                               "disable_flashinfer_ragged: bool = False):\n")]},
                         ["TRTLLMMLABackend"]),
    "trt-staticmethod": ({TRT_FILE: [(TRT_SIG, "    @staticmethod\n    def init_mha_chunk_metadata(forward_batch):\n"),
                                     ("        self.chunk_plans = list(forward_batch.extend_prefix_lens or [])\n",
                                      "        return list(forward_batch.extend_prefix_lens or [])\n")]},
                         ["TRTLLMMLABackend"]),
    "trt-staticmethod-one-arg-call": ({
        TRT_FILE: [(TRT_SIG, "    @staticmethod\n    def init_mha_chunk_metadata(forward_batch):\n"),
                   ("        self.chunk_plans = list(forward_batch.extend_prefix_lens or [])\n",
                    "        return list(forward_batch.extend_prefix_lens or [])\n")],
        HYBRID: [(TWO_ARG_CALL, "            init(forward_batch)\n")]}, []),
    "flashinfer-positional-only-called-by-keyword": ({
        FI_FILE: [("    def init_mha_chunk_metadata(self, forward_batch: ForwardBatch, disable_flashinfer_ragged: "
                   "bool = False):\n",
                   "    def init_mha_chunk_metadata(self, forward_batch: ForwardBatch, /, disable_flashinfer_ragged: "
                   "bool = False):\n")],
        HYBRID: [(TWO_ARG_CALL, "            init(forward_batch=forward_batch)\n")]}, ["FlashInferMLAAttnBackend"]),
    # a subclass that inherits the one-argument method rejects the call too
    "subclass-inherits-the-narrow-method": ({"serving/backends/trtllm_mla_multistep.py": '''\
from serving.backends.trtllm_mla_backend import TRTLLMMLABackend


class TRTLLMMLAMultiStepBackend(TRTLLMMLABackend):
    def __init__(self, model_runner=None, speculative_num_steps: int = 2):
        super().__init__(model_runner)
        self.speculative_num_steps = speculative_num_steps
''',
        # The runner builds it (a class the tree never builds is no delegate: passed_values.py).
        "serving/model_executor/model_runner.py": [
            ("from serving.backends.trtllm_mla_backend import TRTLLMMLABackend\n",
             "from serving.backends.trtllm_mla_backend import TRTLLMMLABackend\n"
             "from serving.backends.trtllm_mla_multistep import TRTLLMMLAMultiStepBackend\n"),
            ("        if name == \"trtllm_mla\":\n",
             "        if name == \"trtllm_mla_multistep\":\n            return TRTLLMMLAMultiStepBackend(self)\n"
             "        if name == \"trtllm_mla\":\n")]},
        ["TRTLLMMLABackend", "TRTLLMMLAMultiStepBackend"]),
}

_RUNTIME = """
import importlib, sys
from serving.backends.hybrid_linear_attn_backend import HybridLinearAttnBackend
from serving.backends.mamba_backend import MambaAttnBackend
from serving.model_executor.forward_batch_info import ForwardBatch, ForwardMode
module, name = sys.argv[1].rsplit(".", 1)
cls = getattr(importlib.import_module(module), name)
batch = ForwardBatch(ForwardMode.EXTEND, 2, [3, 4], extend_seq_lens=[3, 4])
try:
    HybridLinearAttnBackend(cls(), MambaAttnBackend(), [0]).init_mha_chunk_metadata(batch)
    print("no error")
except TypeError as exc:
    print(exc)
"""


@pytest.mark.parametrize("variant", sorted(CALL_VARIANTS))
def test_al002_call_variants_agree_with_python(variant, tmp_path):
    """Whatever AL002 says, running the code says too: every target raises a TypeError, every other
    implementation binds, and the error text in the finding is the one Python raises."""
    edits, expected = CALL_VARIANTS[variant]
    root = _variant(tmp_path, "al002_delegation_typeerror", edits)
    result = lint(root)
    assert result.errors == []
    findings = [f for f in result.findings if f.code == "AL002"]
    assert sorted(t.rsplit(".", 1)[-1] for f in findings for t in f.targets) == sorted(expected)
    assert all(f.class_name.endswith(".HybridLinearAttnBackend") and f.member == HOOK for f in findings)
    implementations = ["serving.backends.flashinfer_mla_backend.FlashInferMLAAttnBackend",
                       "serving.backends.trtllm_mla_backend.TRTLLMMLABackend"]
    if (root / "serving/backends/trtllm_mla_multistep.py").exists():
        implementations.append("serving.backends.trtllm_mla_multistep.TRTLLMMLAMultiStepBackend")
    targets = {t for f in findings for t in f.targets}
    for impl in implementations:
        proc = subprocess.run([sys.executable, "-c", _RUNTIME, impl], cwd=root, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        said = proc.stdout.strip()
        if impl in targets:
            assert said != "no error", f"{impl} is a target but binds the call"
        else:
            assert said == "no error", f"{impl} rejects the call ({said}) but is not a target"
    for f in findings:
        owner = dict(f.details)["rejecting_owner"]
        proc = subprocess.run([sys.executable, "-c", _RUNTIME, owner], cwd=root, capture_output=True, text=True,
                              timeout=60)
        assert dict(f.details)["error"] == proc.stdout.strip(), "the stated TypeError is Python's, exactly"


NOOP_VARIANTS = {
    "getattr-on-the-wrapper-does-not-help": ({HYBRID: [
        ("    def forward_decode(",
         "    def __getattr__(self, name):\n"
         "        if name == \"full_attn_backend\":\n"
         "            raise AttributeError(name)\n"
         "        return getattr(self.full_attn_backend, name)\n\n"
         "    def forward_decode(")]}, True),
    "wrapper-forwards-the-hook": ({HYBRID: [
        ("    def forward_decode(",
         "    def on_after_cuda_graph_warmup(self):\n"
         "        for attn_backend in self.attn_backend_list:\n"
         "            attn_backend.on_after_cuda_graph_warmup()\n\n"
         "    def forward_decode(")]}, False),
    "noop-is-ellipsis": ({BASE_FILE: [("        pass\n", "        ...\n")]}, True),
    "noop-is-return-none": ({BASE_FILE: [("        pass\n", "        return None\n")]}, True),
    "noop-is-docstring-only": ({BASE_FILE: [("        pass\n", "")]}, True),
    "noop-returns-a-constant": ({BASE_FILE: [("        pass\n", "        return False\n")]}, True),
    # A placeholder instead of a no-op: on the wrapper the call now raises (AL003 says so; the
    # placeholder variants below and tests/test_al003_placeholders.py check the rest).
    "base-raises-instead": ({BASE_FILE: [("        pass\n", "        raise NotImplementedError()\n")]}, True),
    "noop-from-a-mixin-of-the-wrapper": ({HYBRID: [
        ("class HybridLinearAttnBackend(AttentionBackend):",
         "class QuietWarmupMixin:\n"
         "    def on_after_cuda_graph_warmup(self):\n"
         "        pass\n\n\n"
         "class HybridLinearAttnBackend(QuietWarmupMixin, AttentionBackend):")]}, False),
    "hook-never-used": ({"serving/model_executor/model_runner.py": [
        ("        self.attn_backend.on_after_cuda_graph_warmup()\n", "")]}, False),
}


@pytest.mark.parametrize("variant", sorted(NOOP_VARIANTS))
def test_al003_variants(variant, tmp_path):
    edits, flagged = NOOP_VARIANTS[variant]
    result = lint(_variant(tmp_path, "al003_noop_default", edits))
    assert result.errors == []
    expected = [("HybridLinearAttnBackend", "on_after_cuda_graph_warmup")] if flagged else []
    assert pairs(result.findings, "AL003") == expected
    if variant == "getattr-on-the-wrapper-does-not-help":
        assert any("__getattr__" in e.note for e in result.findings[0].evidence)
