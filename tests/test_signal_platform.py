"""The platform signal: platform-only code never meets another platform's implementations."""

from __future__ import annotations

import pytest
from conftest import lint, write_tree

from attn_lint.linter.perfile.summary import summarise_source

_BASE = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError
'''
_WRAPPER = '''
from serving.backends.base import Backend

class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)
'''
_NPU_IMPL = '''
from serving.backends.base import Backend

class AscendBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch
'''
_CUDA_IMPL = _NPU_IMPL.replace("AscendBackend", "FlashBackend")


def _tree(tmp_path, site: str, impls: dict[str, str], wrapper: str = _WRAPPER, extra=None):
    files = {"serving/__init__.py": "", "serving/backends/__init__.py": "",
             "serving/backends/base.py": _BASE, "serving/backends/hybrid.py": wrapper,
             "serving/model.py": site, **impls, **(extra or {})}
    return write_tree(tmp_path, files)


def _finding(tmp_path, *args, **kwargs):
    result = lint(_tree(tmp_path, *args, **kwargs))
    found = [f for f in result.findings if f.code == "AL001"]
    assert [(f.class_name.rsplit(".", 1)[-1], f.member) for f in found] == [("HybridBackend", "plan_chunks")]
    return found[0]


NPU_FOLDER = {"serving/hardware/__init__.py": "", "serving/hardware/npu/__init__.py": "",
              "serving/hardware/npu/ascend.py": _NPU_IMPL}
CUDA_FOLDER = {"serving/hardware/__init__.py": "", "serving/hardware/cuda/__init__.py": "",
               "serving/hardware/cuda/flash.py": _CUDA_IMPL}

_NEUTRAL_SITE = '''
from serving.backends.base import Backend

def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
'''
_CUDA_SITE = '''
from serving.backends.base import Backend
from serving.utils import is_cuda

def prefill(backend: Backend, batch):
    if is_cuda():
        if hasattr(backend, "plan_chunks"):
            backend.plan_chunks(batch)
    return backend.forward(batch)
'''
_FORWARD_NPU_SITE = '''
from serving.backends.base import Backend

class Indexer:
    def forward_npu(self, backend: Backend, batch):
        if hasattr(backend, "plan_chunks"):
            backend.plan_chunks(batch)
        return backend.forward(batch)
'''
_UTILS = {"serving/utils.py": "def is_cuda():\n    return True\n\ndef is_npu():\n    return False\n"}


def test_cuda_only_site_never_meets_an_npu_folder_implementation(tmp_path):
    f = _finding(tmp_path, _CUDA_SITE, NPU_FOLDER, extra=_UTILS)
    assert f.confidence == "low"
    r = f.confidence_reasons[0]
    assert r.signal == "platform" and r.path.endswith("serving/model.py") and r.line == 7
    assert "only on cuda" in r.note and "only on npu" in r.note


def test_neutral_site_stays_live(tmp_path):
    assert _finding(tmp_path, _NEUTRAL_SITE, NPU_FOLDER).confidence == "medium"


def test_forward_npu_site_meets_an_npu_implementation(tmp_path):
    assert _finding(tmp_path, _FORWARD_NPU_SITE, NPU_FOLDER).confidence == "medium"


def test_forward_npu_site_never_meets_a_cuda_implementation(tmp_path):
    f = _finding(tmp_path, _FORWARD_NPU_SITE, CUDA_FOLDER)
    assert f.confidence == "low"
    assert "`Indexer.forward_npu` runs only on npu" in f.confidence_reasons[0].note


def test_dominating_is_npu_test(tmp_path):
    site = '''
from serving.backends.base import Backend
from serving.utils import is_npu

def prefill(backend: Backend, batch):
    if is_npu():
        if hasattr(backend, "plan_chunks"):
            backend.plan_chunks(batch)
    return backend.forward(batch)
'''
    assert _finding(tmp_path / "a", site, CUDA_FOLDER, extra=_UTILS).confidence == "low"
    assert _finding(tmp_path / "b", site, NPU_FOLDER, extra=_UTILS).confidence == "medium"


def test_early_exit_and_else_branch(tmp_path):
    # `if not _is_npu: return` leaves the rest of the function to NPU; the `else` of an
    # `if _is_npu:` is everything but NPU.
    early = '''
from serving.backends.base import Backend
from serving.utils import is_npu

_is_npu = is_npu()

def prefill(backend: Backend, batch):
    if not _is_npu:
        return None
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
'''
    other = '''
from serving.backends.base import Backend

class Runner:
    def prefill(self, backend: Backend, batch):
        if self.is_npu:
            return None
        else:
            if hasattr(backend, "plan_chunks"):
                backend.plan_chunks(batch)
'''
    assert _finding(tmp_path / "a", early, CUDA_FOLDER, extra=_UTILS).confidence == "low"
    assert _finding(tmp_path / "b", other, NPU_FOLDER).confidence == "low"
    assert _finding(tmp_path / "c", other, CUDA_FOLDER).confidence == "medium"


def test_wrapper_importing_cuda_kernels_never_holds_an_npu_implementation(tmp_path):
    cuda_wrapper = "import flash_attn_cuda\n" + _WRAPPER
    f = _finding(tmp_path / "a", _NEUTRAL_SITE, NPU_FOLDER, wrapper=cuda_wrapper)
    assert f.confidence == "low"
    r = f.confidence_reasons[0]
    assert r.path.endswith("serving/hardware/npu/ascend.py") and "HybridBackend" in r.note
    # An import under a platform test is not a requirement of the module.
    guarded = "from serving.utils import is_cuda\nif is_cuda():\n    import flash_attn_cuda\n" + _WRAPPER
    assert _finding(tmp_path / "b", _NEUTRAL_SITE, NPU_FOLDER, wrapper=guarded, extra=_UTILS).confidence == "medium"
    # A subclass of the wrapper built for NPU may be the object at the site.
    sub = {"serving/hardware/npu/hybrid_npu.py":
           "from serving.backends.hybrid import HybridBackend\n\nclass NpuHybrid(HybridBackend):\n    pass\n"}
    assert _finding(tmp_path / "c", _NEUTRAL_SITE, {**NPU_FOLDER, **sub},
                    wrapper=cuda_wrapper).confidence == "medium"


def test_platform_words_are_structure_not_names(tmp_path):
    # `cuda` in a module name (CUDA graphs run on ROCm too) says nothing; an acronym run names NPU.
    cuda_named = {"serving/cuda_graph_runner.py": _CUDA_IMPL}
    site = _FORWARD_NPU_SITE
    assert _finding(tmp_path / "a", site, cuda_named).confidence == "medium"
    npu_named = {"serving/pools.py": _NPU_IMPL.replace("AscendBackend", "NPUMLAPool")}
    assert _finding(tmp_path / "b", _CUDA_SITE, npu_named, extra=_UTILS).confidence == "low"


def test_summary_records_platform_gates_and_unguarded_imports():
    s = summarise_source('''
import torch_npu
try:
    import foo_hip
except ImportError:
    pass
if is_npu():
    import bar

def f(b):
    if current_platform.is_rocm() or device == "xpu":
        hasattr(b, "x")
    assert _is_hip
    hasattr(b, "y")
''')
    assert [s.imports[i].module for i in s.unguarded_imports] == ["torch_npu"]
    gates = s.functions["f"].platform_gates
    assert (12, 12, ("hip", "xpu"), False) in gates and (14, 14, ("hip",), False) in gates


_NESTED = '''
from utils import is_npu, is_hip

if is_npu():
    def npu_helper():
        if is_hip():
            return 1
        return 0
else:
    assert not is_hip()


def outer(x):
    if is_npu():
        x = 1
    def closure():
        if not is_hip():
            return 2
        assert is_npu()
        return 3
    class Local:
        def method(self):
            try:
                if is_hip():
                    pass
            except ValueError:
                if not is_npu():
                    raise
            finally:
                assert is_hip()
            return closure
    for _ in range(3):
        while is_npu():
            if is_hip():
                break
    return Local


class Backend:
    def forward(self):
        if is_npu():
            return self.npu()
        elif is_hip():
            return None
        with open("x") as fh:
            assert not is_npu()
            return fh
'''


def test_one_walk_gives_each_function_the_gates_of_its_own_scan():
    """add_platform_gates walks the statements once; each summarised function (closures' tests
    included) and the module get what platform_gates gives for their own bodies."""
    import ast

    from attn_lint.linter.perfile.platforms import platform_gates

    summary = summarise_source(_NESTED)
    tree = ast.parse(_NESTED)
    assert summary.toplevel.platform_gates == platform_gates(tree.body, summary.lines, True)
    functions = {(f.name, f.line): f for f in summary.functions.values()}
    for c in summary.classes.values():
        functions.update(((f.name, f.line), f) for f in c.methods.values())
    checked = 0
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        fn = functions.get((node.name, node.lineno))
        if fn is not None:
            assert fn.platform_gates == platform_gates(node.body, node.end_lineno), node.name
            checked += 1
    assert checked == 4  # npu_helper, outer, Local.method, Backend.forward
    assert summary.toplevel.platform_gates and all(f.platform_gates for f in functions.values())
    # Read off the source: the module's if/else (its function and its assert left out), the
    # closure's tests in `outer` (Local's left to Local.method), `while` tests not being `if`s.
    assert summary.toplevel.platform_gates == ((5, 8, ("npu",), False), (10, 10, ("npu",), True))
    assert summary.functions["outer"].platform_gates == (
        (15, 15, ("npu",), False), (18, 18, ("hip",), True), (19, 20, ("hip",), False),
        (20, 20, ("npu",), False), (35, 35, ("hip",), False))
    assert summary.classes["Backend"].methods["forward"].platform_gates == (
        (42, 42, ("npu",), False), (43, 44, ("npu",), True), (44, 44, ("hip",), False), (47, 47, ("npu",), True))


@pytest.mark.parametrize("source", [
    # one platform test, in each place the statement walk records gates from
    "def f(device):\n    if device == 'npu':\n        return 1\n    return 2\n",
    "def f():\n    assert not is_hip()\n    return 2\n",
    "if _is_npu:\n    X = 1\n",
    "class A:\n    def m(self):\n        def inner():\n            if self.is_xpu:\n                return 1\n        return inner\n",
    "def outer():\n    class Local:\n        def m(self):\n            if is_npu() and flag:\n                return 1\n    return Local\n",
])
def test_the_summary_walk_finds_every_platform_test_it_records_gates_for(source):
    """The per-file pass walks a module's statements for platform gates only where its summary
    walk met a platform test (no byte scan of every file first): what it gives equals the
    statement walk run unconditionally."""
    import ast

    from attn_lint.linter.perfile.platforms import add_platform_gates
    from attn_lint.linter.perfile.summary import ModuleWalk, summarise_tree

    module = ModuleWalk()
    summary = summarise_source(source)
    assert summarise_tree(ast.parse(source), summary.lines, module) is not None and module.platform_tested
    forced = summarise_tree(ast.parse(source), summary.lines)
    add_platform_gates(ast.parse(source), forced)
    gates = [summary.toplevel.platform_gates] + [f.platform_gates for f in summary.functions.values()] + [
        m.platform_gates for c in summary.classes.values() for m in c.methods.values()]
    assert any(gates)
    assert gates == [forced.toplevel.platform_gates] + [f.platform_gates for f in forced.functions.values()] + [
        m.platform_gates for c in forced.classes.values() for m in c.methods.values()]


def test_a_module_that_names_a_platform_without_testing_it_has_no_gates_and_no_second_walk():
    import ast

    from attn_lint.linter.perfile.summary import ModuleWalk, summarise_tree

    source = ("from x import is_npu\nDEVICE = 'npu'\n\ndef f(d):\n    use = is_npu()\n"
              "    return [d == 'npu' for _ in range(2)]\n")
    module = ModuleWalk()
    summarise_tree(ast.parse(source), 6, module)
    assert not module.platform_tested
    assert not summarise_source(source).functions["f"].platform_gates
