"""bench/replay.py tells a tier flip that follows the finding's own evidence from one that follows
a change elsewhere, by analysing the later release with the finding's own files put back."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import REPO, write_tree

sys.path.insert(0, str(REPO / "bench"))
import replay

_BACKENDS = """
class Backend:
    def forward(self, batch):
        raise NotImplementedError

class SparseBackend(Backend):
    def forward(self, batch):
        return batch

    def sparse_topk(self, batch):
        return batch

    def prepare_sparse(self, batch):
        self.prepared = batch

_INSTALLED: Backend = None

def get_backend() -> Backend:
    return _INSTALLED
"""
_HYBRID = """
from pkg.backends import Backend

class HybridBackend(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)
"""
_PROBE = """
from pkg.backends import get_backend

def index(batch):
    backend = get_backend()
    if hasattr(backend, "prepare_sparse"):
        backend.prepare_sparse(batch)
    return batch
"""
_CONSUMER = """
from pkg.backends import get_backend

def attend(batch):
    return get_backend().sparse_topk(batch)
"""
# An unrelated implementation with a member of that name: the consumer's lineage is gone.
_OTHER = """
from pkg.backends import Backend

class OtherBackend(Backend):
    def forward(self, batch):
        return batch

    def sparse_topk(self, batch):
        return batch
"""


def _release(root: Path, name: str, files: dict[str, str]) -> Path:
    write_tree(root / name, {"pkg/__init__.py": "", "pkg/backends.py": _BACKENDS, "pkg/hybrid.py": _HYBRID,
                             "pkg/indexer.py": _PROBE, **files})
    (root / name / ".complete").write_text("")
    return root / name / "pkg"


def _flip(before: Path, after: Path) -> bool:
    a, b = replay.report(before), replay.report(after)
    (k,) = [k for k, es in a.items() if es[0]["member"] == "prepare_sparse"]
    assert a[k][0]["tier"] == "latent" and b[k][0]["tier"] == "default"  # a flip
    assert "sparse_model.py" in a[k][0]["files"] and "other.py" not in a[k][0]["files"] + b[k][0]["files"]
    return replay.restores(k, a[k], b[k], before, after)


def test_a_flip_from_a_change_elsewhere_is_told(tmp_path):
    before = _release(tmp_path, "r1", {"pkg/sparse_model.py": _CONSUMER})
    after = _release(tmp_path, "r2", {"pkg/sparse_model.py": _CONSUMER, "pkg/other.py": _OTHER})
    assert _flip(before, after) is False


def test_a_flip_from_its_own_evidence_is_told(tmp_path):
    before = _release(tmp_path, "r1", {"pkg/sparse_model.py": _CONSUMER})
    after = _release(tmp_path, "r2", {"pkg/sparse_model.py": _CONSUMER.replace(
        "return get_backend().sparse_topk(batch)", "return batch")})
    assert _flip(before, after) is True


def test_the_copy_is_the_only_thing_written(tmp_path):
    # The later release links a folder out of its tree; the earlier one has real files there. The
    # copy takes the linked files as its own, so putting the earlier ones back writes only the copy.
    outside = tmp_path / "outside"
    write_tree(outside, {"x.py": "X = 1\n", "y.py": "Y = 1\n"})
    before = _release(tmp_path, "r1", {"pkg/sub/x.py": "X = 2\n"})
    after = _release(tmp_path, "r2", {})
    (after / "sub").symlink_to(outside, target_is_directory=True)
    entry = [{"tier": "latent", "files": ["sub/x.py", "sub/y.py"]}]
    assert replay.restores("no-such-identity", entry, entry, before, after) is False
    assert (outside / "x.py").read_text() == "X = 1\n" and (outside / "y.py").read_text() == "Y = 1\n"


def test_a_tree_outside_a_release_folder_is_refused(tmp_path):
    tree = write_tree(tmp_path / "loose", {"pkg/__init__.py": ""}) / "pkg"
    entry = [{"tier": "latent", "files": []}]
    try:
        replay.restores("x", entry, entry, tree, tree)
    except ValueError as e:
        assert "not inside a release folder" in str(e)
    else:
        raise AssertionError("restores ran on a tree outside a release folder")
