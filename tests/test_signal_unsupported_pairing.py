"""unsupported-pairing: the code that probes a hook reads, on the same object and path, what only
the implementation has; a wrapper holding it would crash there first."""

from __future__ import annotations

from conftest import lint, write_tree

_BACKENDS = """
class Backend:
    metadata = None

    def forward(self, batch):
        raise NotImplementedError

class SparseBackend(Backend):
    def __init__(self):
        self.metadata = object()
        self.page_size = 64

    def forward(self, batch):
        return batch

    def prepare_sparse(self, batch):
        self.prepared = batch

class HybridBackend(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)

_INSTALLED: Backend = None

def get_backend() -> Backend:
    return _INSTALLED
"""

_INDEXER = """
from pkg.backends import get_backend

def index(batch):
    backend = get_backend()
    if hasattr(backend, "prepare_sparse"):
        backend.prepare_sparse(batch)
    {use}
"""


def _finding(tmp_path, use: str):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/backends.py": _BACKENDS,
                                 "pkg/indexer.py": _INDEXER.replace("{use}", use)})
    found = [f for f in lint(root).findings if f.code == "AL001" and f.member == "prepare_sparse"]
    assert len(found) == 1, found
    return found[0]


def test_member_the_wrapper_lacks_read_on_the_same_path(tmp_path):
    f = _finding(tmp_path, "return batch[: backend.page_size]")
    assert f.confidence == "low"
    (why,) = [r for r in f.confidence_reasons if r.signal == "unsupported-pairing"]
    assert why.path.endswith("indexer.py") and why.line == 8
    assert "`HybridBackend` holding `SparseBackend`" in why.note and "page_size" in why.note


def test_class_level_default_read_through_the_accessor(tmp_path):
    # The wrapper never sets `metadata`: the base's `None` is what `get_backend().metadata.x` reads.
    f = _finding(tmp_path, "return get_backend().metadata.lengths")
    assert f.confidence == "low"
    (why,) = [r for r in f.confidence_reasons if r.signal == "unsupported-pairing"]
    assert "class-level default" in why.note


def test_read_under_another_test_keeps_the_pairing(tmp_path):
    # Only on another path: the wrapper may well be installed where `batch` is empty.
    f = _finding(tmp_path, "if batch:\n        return backend.page_size")
    assert f.confidence == "medium"


def test_read_of_a_member_the_wrapper_has_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, "return backend.forward(batch)")
    assert f.confidence == "medium"


def test_read_behind_a_probe_of_it_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, "return getattr(backend, 'page_size', 1) if hasattr(backend, 'page_size') else 1")
    assert f.confidence == "medium"


def test_same_text_for_every_hook_of_one_pair(tmp_path):
    src = _BACKENDS.replace("    def prepare_sparse(self, batch):", """    def plan_sparse(self, batch):
        self.planned = batch

    def prepare_sparse(self, batch):""")
    indexer = _INDEXER.replace("{use}", "return batch[: backend.page_size]") + """
def plan(batch):
    backend = get_backend()
    if hasattr(backend, "plan_sparse"):
        backend.plan_sparse(batch)
    return backend.page_size
"""
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/backends.py": src, "pkg/indexer.py": indexer})
    found = [f for f in lint(root).findings if f.code == "AL001"]
    assert sorted(f.member for f in found) == ["plan_sparse", "prepare_sparse"]
    notes = {r.note for f in found for r in f.confidence_reasons if r.signal == "unsupported-pairing"}
    assert len(notes) == 1 and all(f.confidence == "low" for f in found)


def test_read_in_a_handler_or_a_closure_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, "try:\n        return batch\n    except ValueError:\n        return backend.page_size")
    assert f.confidence == "medium"
    f = _finding(tmp_path, "return lambda: backend.page_size")
    assert f.confidence == "medium"
    f = _finding(tmp_path, "def later():\n        return backend.page_size\n    return later")
    assert f.confidence == "medium"
