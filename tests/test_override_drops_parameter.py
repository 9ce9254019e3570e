"""AL002's declared-member half: a method forwards its own optional keyword to the same method of
an object it holds; the object's static type declares it; an override some implementation has
dropped it. Type checkers accept the call (they read the declaration); Python raises TypeError."""

from __future__ import annotations

from conftest import lint, write_tree

_POOLS = """
class Pool:
    def copy_out(self, indices, extra_indices=None):
        raise NotImplementedError

class PlainPool(Pool):
    def __init__(self, size):
        self.size = size

    def copy_out(self, indices, extra_indices=None):
        return indices

class SparsePool(Pool):
    def __init__(self, size):
        self.size = size

    def copy_out(self, indices):
        return indices

class Allocator:
    def __init__(self, pool: Pool):
        self._pool = pool

    def copy_out(self, indices, extra_indices=None):
        return self._pool.copy_out(indices, extra_indices=extra_indices)
"""

_BUILD = """
from pkg.pools import Allocator, PlainPool, SparsePool

def build(sparse: bool):
    return Allocator(SparsePool(8) if sparse else PlainPool(8))
"""


def _findings(tmp_path, pools: str = _POOLS, build: str = _BUILD):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": pools, "pkg/build.py": build})
    return [f for f in lint(root).findings if f.code == "AL002"]


def test_override_dropping_a_forwarded_parameter_is_a_type_error(tmp_path):
    (f,) = _findings(tmp_path)
    assert (f.class_name.rsplit(".", 1)[-1], f.member, f.confidence) == ("Allocator", "copy_out", "medium")
    assert "SparsePool.copy_out() got an unexpected keyword argument 'extra_indices'" in f.message
    assert dict(f.details)["variant"] == "override-drops-parameter"
    assert f.targets == ("pkg.pools.SparsePool",)
    notes = " ".join(e.note for e in f.evidence)
    assert "`Pool.copy_out(self, indices, extra_indices=…)` declares the call's keywords" in notes


def test_a_class_built_only_as_another_component_is_not_paired(tmp_path):
    # Built only as another class's component (through a class-valued parameter): the allocator
    # holds exactly the composite, so no configuration hands it the narrow pool.
    build = """
from pkg.pools import Allocator, PlainPool, SparsePool

class Composite(PlainPool):
    def __init__(self, size, part_cls=SparsePool):
        super().__init__(size)
        self.part = part_cls(size)

def build():
    return Allocator(Composite(8))
"""
    assert _findings(tmp_path, build=build) == []


def test_an_override_nothing_builds_is_latent(tmp_path):
    # The allocator is built from a parameter no code of the tree passes: what it holds is the
    # caller's choice; the narrow pool is never built, so the pairing is latent drift.
    build = """
from pkg.pools import Allocator, PlainPool

def build(pool):
    return Allocator(pool)

def plain():
    return PlainPool(8)
"""
    (f,) = _findings(tmp_path, build=build)
    assert f.confidence == "low"
    assert [r.signal for r in f.confidence_reasons][:1] == ["unbuilt-override"]


def test_built_without_arguments_counts_as_built(tmp_path):
    pools = _POOLS.replace("    def __init__(self, size):\n        self.size = size\n\n    def copy_out(self, indices):",
                           "    def copy_out(self, indices):")
    build = _BUILD.replace("SparsePool(8)", "SparsePool()")
    (f,) = _findings(tmp_path, pools=pools, build=build)
    assert f.confidence == "medium"


def test_says_no_when_every_override_takes_the_parameter(tmp_path):
    assert _findings(tmp_path, pools=_POOLS.replace("def copy_out(self, indices):",
                                                    "def copy_out(self, indices, extra_indices=None):")) == []


def test_says_no_when_the_override_takes_kwargs(tmp_path):
    assert _findings(tmp_path, pools=_POOLS.replace("def copy_out(self, indices):",
                                                    "def copy_out(self, indices, **kwargs):")) == []


def test_says_no_for_a_keyword_the_caller_does_not_forward(tmp_path):
    # A keyword that is not the forwarding method's own parameter is a call the declaration
    # decides; only the forwarding shape (the delegation) is this rule's.
    pools = _POOLS.replace("self._pool.copy_out(indices, extra_indices=extra_indices)",
                           "self._pool.copy_out(indices, extra_indices=None)").replace(
        "def copy_out(self, indices, extra_indices=None):\n        return self._pool",
        "def copy_out(self, indices):\n        return self._pool")
    assert _findings(tmp_path, pools=pools) == []


def test_says_no_for_calls_on_self(tmp_path):
    pools = _POOLS + """
class Tiered(PlainPool):
    def copy_out(self, indices, extra_indices=None):
        return super().copy_out(indices, extra_indices=extra_indices)
"""
    assert [f for f in _findings(tmp_path, pools=pools) if "Tiered" in f.class_name] == []


def test_a_class_a_registry_hands_out_counts_as_built(tmp_path):
    # `return SparsePool` from a registered factory: the class is handed out to be built.
    build = """
from pkg.pools import Allocator, PlainPool, SparsePool

REGISTRY = {}

def register(name):
    def deco(fn):
        REGISTRY[name] = fn
        return fn
    return deco

@register("sparse")
def sparse_pool_class():
    return SparsePool

def build(name):
    return Allocator(REGISTRY[name]()(8))
"""
    (f,) = _findings(tmp_path, build=build)
    assert f.confidence == "medium"


def test_a_renamed_parameter_forwarded_by_keyword_is_found(tmp_path):
    # The base's required parameter, passed by keyword, renamed by one override.
    pools = _POOLS.replace("def copy_out(self, indices):", "def copy_out(self, idx, extra_indices=None):").replace(
        "self._pool.copy_out(indices, extra_indices=extra_indices)",
        "self._pool.copy_out(indices=indices, extra_indices=extra_indices)")
    (f,) = _findings(tmp_path, pools=pools)
    assert "unexpected keyword argument 'indices'" in f.message


def test_a_method_calling_itself_on_self_is_not_forwarding(tmp_path):
    """A chunked copy calling `self.copy_out(...)` on its own halves hands nothing to a held
    object: the call reaches the class's own override, whichever subclass it is."""
    pools = _POOLS.replace('''class Allocator:''', '''class ChunkedPool(Pool):
    def __init__(self, size):
        self.size = size

    def copy_out(self, indices, extra_indices=None):
        if len(indices) > 8:
            return self.copy_out(indices[:8], extra_indices=extra_indices) + \\
                self.copy_out(indices[8:], extra_indices=extra_indices)
        return indices

class ShortChunks(ChunkedPool):
    def copy_out(self, indices):
        return indices

class Allocator:''')
    build = _BUILD.replace("SparsePool(8) if sparse else PlainPool(8)", "PlainPool(8)") + \
        "\n\ndef chunked(short):\n    return ShortChunks(8) if short else ChunkedPool(8)\n"
    build = build.replace("import Allocator, PlainPool, SparsePool", "import Allocator, ChunkedPool, PlainPool, ShortChunks")
    found = [(f.class_name.rsplit(".", 1)[-1], f.member) for f in _findings(tmp_path, pools, build)]
    assert ("ChunkedPool", "copy_out") not in found, found


def test_an_override_the_holder_is_never_built_with_is_not_paired(tmp_path):
    """`Allocator` is built with `PlainPool` only; `ShortPool` drops the parameter and is built,
    but never handed to an Allocator: no configuration pairs them (what the code builds into
    `self._pool` bounds it, whatever the annotation allows)."""
    pools = _POOLS.replace("class Allocator:", '''class ShortPool(Pool):
    def __init__(self, size):
        self.size = size

    def copy_out(self, indices):
        return indices

class Allocator:''')
    build = ("from pkg.pools import Allocator, PlainPool, ShortPool\n\n"
             "def build():\n    return Allocator(PlainPool(8))\n\n"
             "def spare():\n    return ShortPool(8)\n")
    assert _findings(tmp_path, pools, build) == []
    # handed to it on one path, the pairing is back
    build = build.replace("return Allocator(PlainPool(8))", "return Allocator(PlainPool(8) if spare else ShortPool(8))")
    assert [f.targets for f in _findings(tmp_path / "handed", pools, build)] == [("pkg.pools.ShortPool",)]


def test_a_class_built_under_a_branch_import_counts_as_built(tmp_path):
    """`SparsePool(8)` where the name is imported under both branches (`from pkg.pools import
    SparsePool` / `from pkg.pools import PlainPool as SparsePool`): name resolution takes the last
    import, but either class can be what is built, so the narrow override is not unbuilt."""
    build = """
from pkg.pools import Allocator

USE_SPARSE = True
if USE_SPARSE:
    from pkg.pools import SparsePool
else:
    from pkg.pools import PlainPool as SparsePool

def build(pool):
    return Allocator(pool)

def make():
    return SparsePool(8)
"""
    (f,) = _findings(tmp_path, build=build)
    assert f.confidence == "medium"
    # with one import, the name is only the plain pool: the narrow one is never built
    one = build.replace("if USE_SPARSE:\n    from pkg.pools import SparsePool\nelse:\n    ", "")
    (f,) = _findings(tmp_path / "one", build=one)
    assert f.confidence == "low"
