"""delegate-raises: a wrapper's gap breaks nothing where forwarding would raise the same error.

The allocator wrapper builds its two allocators around its own pool (`PagedAllocator(size, pool)`);
a paged allocator's `get_cpu_copy` only hands the call to its pool, and every pool the wrapper can
be given refuses it (`raise NotImplementedError`). The wrapper inheriting the base's placeholder
raises where forwarding would raise too: latent, not a broken configuration (sglang 0.5.23's
hisparse allocator over its DSA pool). A pool subclass that implements the hook keeps the finding:
there forwarding would work.
"""

from __future__ import annotations

from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse

POOLS = '''
class Pool:
    def get_cpu_copy(self, indices):
        raise NotImplementedError()


class DensePool(Pool):
    def get_cpu_copy(self, indices):
        return list(indices)


class SparsePool(Pool):
    def get_cpu_copy(self, indices):
        raise NotImplementedError("the sparse pool does not support get_cpu_copy")


class ShardedSparsePool(Pool):
    pass


class Allocator:
    def __init__(self, size: int, pool: Pool):
        self._pool = pool
        self.size = size

    def alloc(self, n):
        raise NotImplementedError()

    def free(self, pages):
        raise NotImplementedError()

    def get_cpu_copy(self, indices):
        raise NotImplementedError()


class PagedAllocator(Allocator):
    def __init__(self, size: int, pool: Pool):
        super().__init__(size, pool)

    def alloc(self, n):
        return list(range(0, n, 2))

    def free(self, pages):
        self.freed = pages

    def get_cpu_copy(self, indices):
        """Hand the copy to the pool."""
        return self._pool.get_cpu_copy(indices)


class TieredAllocator(Allocator):
    def __init__(self, size: int, pool: SparsePool | ShardedSparsePool):
        self._pool = pool
        self.fast = PagedAllocator(size, pool)
        self.slow = PagedAllocator(size * 2, pool)

    def alloc(self, n):
        return self.fast.alloc(n)

    def free(self, pages):
        self.fast.free(pages)
        self.slow.free(pages)


def build(size, pool, tiered):
    return TieredAllocator(size, pool) if tiered else PagedAllocator(size, DensePool())


def retract(allocator: Allocator, indices):
    return allocator.get_cpu_copy(indices)
'''


def findings(tmp_path, source: str = POOLS, name: str = "serving"):
    root = write_tree(tmp_path / "tree", {f"{name}/__init__.py": "", f"{name}/pools.py": source}) / name
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL003",)))
    return [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence, [r.signal for r in f.confidence_reasons],
             [r.note for r in f.confidence_reasons]) for f in result.findings + list(result.latent)]


def test_forwarding_to_pools_that_refuse_too_is_latent(tmp_path):
    ((cls, member, level, signals, notes),) = findings(tmp_path)
    assert (cls, member, level) == ("TieredAllocator", "get_cpu_copy", "low")
    assert signals[0] == "delegate-raises"
    assert "hands the call to `self._pool.get_cpu_copy`" in notes[0] and "refuse `get_cpu_copy`" in notes[0]


def test_a_pool_that_implements_it_keeps_the_finding(tmp_path):
    source = POOLS.replace("class ShardedSparsePool(Pool):\n    pass\n",
                           "class ShardedSparsePool(Pool):\n    def get_cpu_copy(self, indices):\n"
                           "        return list(indices)\n")
    assert source != POOLS
    ((_, _, level, signals, _),) = findings(tmp_path, source)
    assert level == "medium" and "delegate-raises" not in signals


def test_an_implementation_doing_more_than_handing_on_is_not_read(tmp_path):
    source = POOLS.replace('        """Hand the copy to the pool."""\n        return self._pool.get_cpu_copy(indices)\n',
                           "        self.copies = getattr(self, 'copies', 0) + 1\n"
                           "        return self._pool.get_cpu_copy(indices)\n")
    assert source != POOLS
    ((_, _, level, _, _),) = findings(tmp_path, source)
    assert level == "medium"


def test_renamed_the_same(tmp_path):
    ren = {"get_cpu_copy": "spill", "TieredAllocator": "TwoLevel", "PagedAllocator": "Pages", "_pool": "_store",
           "SparsePool": "Holey", "Pool": "Store"}
    source = POOLS
    for a, b in ren.items():
        source = source.replace(a, b)
    ((cls, member, level, signals, _),) = findings(tmp_path, source, name="engine")
    assert (cls, member, level, signals[0]) == ("TwoLevel", "spill", "low", "delegate-raises")
