"""dominating-guard: a flag tested before the call decides which delegate the constructor built."""

from __future__ import annotations

from conftest import lint, write_tree

_POOLS = """
class Pool:
    def size(self):
        return 0

class DensePool(Pool):
    def set_scale(self, layer, loc):
        self.scale = loc

class SparsePool(Pool):
    def set_scale(self, layer, loc, k, scale):
        self.scale = scale

class HybridPool(Pool):
    inner: Pool

    def __init__(self, size, use_sparse: bool = False):
        self.use_sparse = use_sparse
        if use_sparse:
            self.inner = SparsePool(size)
        else:
            self.inner = DensePool(size)

    def size(self):
        return self.inner.size()

    def set_scale(self, layer, loc, k, scale):
        {guard}
        self.inner.set_scale(layer, loc, k, scale)
"""


def _finding(tmp_path, guard: str):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": _POOLS.replace("{guard}", guard)})
    found = [f for f in lint(root).findings if f.code == "AL002" and f.member == "set_scale"]
    assert len(found) == 1, found
    return found[0]


def test_assert_on_the_flag_rules_out_the_other_branch(tmp_path):
    f = _finding(tmp_path, 'assert self.use_sparse, "sparse only"')
    assert f.confidence == "low"
    (why,) = [r for r in f.confidence_reasons if r.signal == "dominating-guard"]
    assert why.effect == "lower" and why.path.endswith("pools.py")
    assert "DensePool" in why.note and "use_sparse" in why.note


def test_early_return_on_the_flag_rules_out_the_other_branch(tmp_path):
    f = _finding(tmp_path, "if not self.use_sparse:\n            return")
    assert f.confidence == "low"


def test_guard_of_the_opposite_polarity_keeps_the_pairing(tmp_path):
    # Under `not use_sparse` the dense pool is exactly what was built: the TypeError is real.
    f = _finding(tmp_path, "assert not self.use_sparse")
    assert f.confidence == "medium"
    assert not [r for r in f.confidence_reasons if r.signal == "dominating-guard"]


def test_no_guard_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, "pass")
    assert f.confidence == "medium"


def test_flag_not_stored_from_a_parameter_keeps_the_pairing(tmp_path):
    # `self.use_sparse` reset elsewhere from something else: the constructor's test no longer tells.
    src = _POOLS.replace("{guard}", "assert self.use_sparse") + """
    def reconfigure(self, options):
        self.use_sparse = options.sparse
"""
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": src})
    (f,) = [f for f in lint(root).findings if f.code == "AL002" and f.member == "set_scale"]
    assert f.confidence == "medium"


def test_an_unguarded_assignment_keeps_the_pairing(tmp_path):
    # A subclass that installs the dense pool without testing the flag.
    src = _POOLS.replace("{guard}", "assert self.use_sparse") + """
class PlainPool(HybridPool):
    def __init__(self, size):
        super().__init__(size, use_sparse=True)
        self.inner = DensePool(size)
"""
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": src})
    (f,) = [f for f in lint(root).findings if f.code == "AL002" and f.member == "set_scale"]
    assert f.confidence == "medium"


_PASSED_IN = """
class Pool:
    def size(self):
        return 0

class DensePool(Pool):
    def set_scale(self, layer, loc):
        self.scale = loc

class SparsePool(Pool):
    def set_scale(self, layer, loc, k, scale):
        self.scale = scale

class HybridPool(Pool):
    inner: Pool

    def __init__(self, size, use_sparse: bool = False, inner: Pool | None = None):
        self.use_sparse = use_sparse
        if inner is not None:
            self.inner = inner
        elif use_sparse:
            self.inner = SparsePool(size)
        else:
            self.inner = DensePool(size)

    def size(self):
        return self.inner.size()

    def set_scale(self, layer, loc, k, scale):
        assert self.use_sparse
        self.inner.set_scale(layer, loc, k, scale)

def build(size, sparse):
    if sparse:
        return HybridPool(size, use_sparse=True)
    return HybridPool(size, inner=DensePool(size))
"""


def test_a_passed_in_delegate_never_passed_with_the_flag(tmp_path):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": _PASSED_IN})
    (f,) = [f for f in lint(root).findings if f.code == "AL002" and f.member == "set_scale"]
    assert f.confidence == "low"
    (why,) = [r for r in f.confidence_reasons if r.signal == "dominating-guard"]
    assert "no call in the tree passes `inner` together with `use_sparse`" in why.note


def test_a_passed_in_delegate_passed_with_the_flag_keeps_the_pairing(tmp_path):
    src = _PASSED_IN + """
def build_odd(size):
    return HybridPool(size, use_sparse=True, inner=DensePool(size))
"""
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": src})
    (f,) = [f for f in lint(root).findings if f.code == "AL002" and f.member == "set_scale"]
    assert f.confidence == "medium"
