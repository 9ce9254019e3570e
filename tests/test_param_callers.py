"""An unannotated parameter is typed from the calls that pass it (linter/model/param_callers.py)."""

from __future__ import annotations

from conftest import lint, write_tree

_TREE = """
class Pool:
    def forward(self, x):
        raise NotImplementedError

    def snapshot(self, indices):
        return None

class DensePool(Pool):
    def forward(self, x):
        return x

    def snapshot(self, indices):
        return list(indices)

class TieredPool(Pool):
    def __init__(self, inner: Pool):
        self.inner = inner

    def forward(self, x):
        return self.inner.forward(x)

class Request:
    def offload(self, indices, pool):
        self.saved = pool.snapshot(indices)

class Batch:
    pool: Pool = None

    def release(self, req: Request):
        req.offload([1, 2], self.pool)
"""


def _al003(tmp_path, src):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": src})
    return [(f.class_name.rsplit(".", 1)[-1], f.member) for f in lint(root).findings if f.code == "AL003"]


def test_a_parameter_is_typed_from_the_call_that_passes_it(tmp_path):
    # `pool` is unannotated; `Batch.release` passes `self.pool` (a `Pool`): the wrapper that
    # inherits the no-op `snapshot` can be there.
    assert _al003(tmp_path, _TREE) == [("TieredPool", "snapshot")]


def test_by_keyword_too(tmp_path):
    assert _al003(tmp_path, _TREE.replace("req.offload([1, 2], self.pool)",
                                          "req.offload(pool=self.pool, indices=[1, 2])")) == [("TieredPool", "snapshot")]


def test_says_no_when_no_caller_is_seen(tmp_path):
    assert _al003(tmp_path, _TREE.replace("        req.offload([1, 2], self.pool)", "        pass")) == []


def test_a_call_of_another_class_s_method_of_that_name_does_not_count(tmp_path):
    src = _TREE.replace("    def release(self, req: Request):\n        req.offload([1, 2], self.pool)", """    def release(self, other: "Mover"):
        other.offload([1, 2], self.pool)

class Mover:
    def offload(self, indices, pool):
        return pool""")
    assert _al003(tmp_path, src) == []


def test_a_constructor_parameter_is_typed_from_its_constructions(tmp_path):
    src = _TREE.replace("        req.offload([1, 2], self.pool)", "        pass") + """
class Saver:
    def __init__(self, pool):
        self.snap = pool.snapshot([0])

def make(batch: Batch):
    return Saver(batch.pool)
"""
    assert _al003(tmp_path, src) == [("TieredPool", "snapshot")]
    assert _al003(tmp_path / "none", src.replace("return Saver(batch.pool)", "return None")) == []
