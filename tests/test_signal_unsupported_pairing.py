"""unsupported-pairing: the code that probes a hook reads, on the same object and path, what only
the implementation has; a wrapper holding it would crash there first."""

from __future__ import annotations

from conftest import lint, write_tree

# A kept pairing leaves the finding live: `medium`, or `high` where its chain is all built
# (built-chain); this signal only rules out.
LIVE = ("medium", "high")

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
    assert f.confidence in LIVE


def test_read_of_a_member_the_wrapper_has_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, "return backend.forward(batch)")
    assert f.confidence in LIVE


def test_read_behind_a_probe_of_it_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, "return getattr(backend, 'page_size', 1) if hasattr(backend, 'page_size') else 1")
    assert f.confidence in LIVE


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
    assert f.confidence in LIVE
    f = _finding(tmp_path, "return lambda: backend.page_size")
    assert f.confidence in LIVE
    f = _finding(tmp_path, "def later():\n        return backend.page_size\n    return later")
    assert f.confidence in LIVE


# -- tree-wide: the implementation's own consumers, anywhere ---------------------------------------

_CONSUMER_BACKENDS = _BACKENDS + """
class PagedBackend(Backend):
    def forward(self, batch):
        return batch

    def prepare_sparse(self, batch):
        self.prepared = batch
"""

_PROBE_ONLY = """
from pkg.backends import get_backend

def index(batch):
    backend = get_backend()
    if hasattr(backend, "prepare_sparse"):
        backend.prepare_sparse(batch)
    return batch
"""


def _split(backends: str) -> dict[str, str]:
    """The wrapper in a module of its own that names only the family's base (as wrappers are
    written), the implementations and the accessor where they were."""
    start = backends.index("class HybridBackend(Backend):")
    end = backends.index("_INSTALLED")
    wrapper = "from pkg.backends import Backend\n\n" + backends[start:end]
    return {"pkg/backends.py": backends[:start] + backends[end:], "pkg/hybrid.py": wrapper}


def _consumer_finding(tmp_path, consumer: str, backends: str = _BACKENDS):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", **_split(backends),
                                 "pkg/indexer.py": _PROBE_ONLY, "pkg/sparse_model.py": consumer})
    found = [f for f in lint(root).findings if f.code == "AL001" and f.member == "prepare_sparse"]
    assert len(found) == 1, found
    return found[0]


_SPARSE_MEMBER = _BACKENDS.replace("    def prepare_sparse(self, batch):", """    def sparse_topk(self, batch):
        return batch

    def prepare_sparse(self, batch):""")


def test_consumer_elsewhere_calls_a_lineage_member_through_the_accessor(tmp_path):
    f = _consumer_finding(tmp_path, """
from pkg.backends import get_backend

def attend(batch):
    return get_backend().sparse_topk(batch)
""", _SPARSE_MEMBER)
    assert f.confidence == "low"
    (why,) = [r for r in f.confidence_reasons if r.signal == "unsupported-pairing"]
    assert why.path.endswith("sparse_model.py") and why.line == 5
    assert "`HybridBackend` holding `SparseBackend`" in why.note and "get_backend().sparse_topk" in why.note


def test_consumer_through_a_local_bound_to_the_accessor(tmp_path):
    f = _consumer_finding(tmp_path, """
from pkg.backends import get_backend

def attend(batch):
    backend = get_backend()
    return backend.sparse_topk(batch)
""", _SPARSE_MEMBER)
    assert f.confidence == "low"


def test_consumer_call_behind_a_probe_keeps_the_pairing(tmp_path):
    f = _consumer_finding(tmp_path, """
from pkg.backends import get_backend

def attend(batch):
    backend = get_backend()
    if hasattr(backend, "sparse_topk"):
        return backend.sparse_topk(batch)
    return batch
""", _SPARSE_MEMBER)
    assert f.confidence in LIVE


def test_consumer_call_of_a_member_the_wrapper_forwards_keeps_the_pairing(tmp_path):
    backends = _SPARSE_MEMBER.replace("""        return self.inner.forward(batch)
""", """        return self.inner.forward(batch)

    def sparse_topk(self, batch):
        return self.inner.sparse_topk(batch)
""")
    f = _consumer_finding(tmp_path, """
from pkg.backends import get_backend

def attend(batch):
    return get_backend().sparse_topk(batch)
""", backends)
    assert f.confidence in LIVE


def test_member_of_two_unrelated_implementations_is_no_lineage(tmp_path):
    # `prepare_sparse` belongs to two implementations sharing no base but the family's root: the
    # code calling it unguarded says only that one of them is installed, not which pairings exist.
    f = _consumer_finding(tmp_path, """
from pkg.backends import get_backend

def attend(batch):
    return get_backend().prepare_sparse(batch)
""", _CONSUMER_BACKENDS)
    assert f.confidence in LIVE


def test_members_of_one_mixin_are_one_lineage(tmp_path):
    backends = _CONSUMER_BACKENDS.replace("class SparseBackend(Backend):", """class SparseMixin:
    pass

class SparseBackend(Backend, SparseMixin):""").replace("class PagedBackend(Backend):", "class PagedBackend(Backend, SparseMixin):")
    f = _consumer_finding(tmp_path, """
from pkg.backends import get_backend

def attend(batch):
    return get_backend().prepare_sparse(batch)
""", backends)
    assert f.confidence == "low"


def test_call_on_an_object_built_or_passed_in_is_not_the_installed_one(tmp_path):
    for consumer in ("""
from pkg.backends import SparseBackend

def make():
    return SparseBackend()

def attend(batch):
    return make().sparse_topk(batch)
""", """
from pkg.backends import Backend

def attend(backend: Backend, batch):
    return backend.sparse_topk(batch)
"""):
        f = _consumer_finding(tmp_path, consumer, _SPARSE_MEMBER)
        assert f.confidence in LIVE, consumer


def test_consumer_call_behind_a_probe_through_a_second_accessor_call_keeps_the_pairing(tmp_path):
    # `hasattr(get_backend(), m)` then `get_backend().m()`: two calls, one object, probed first.
    f = _consumer_finding(tmp_path, """
from pkg.backends import get_backend

def attend(batch):
    if hasattr(get_backend(), "sparse_topk"):
        return get_backend().sparse_topk(batch)
    return batch
""", _SPARSE_MEMBER)
    assert f.confidence in LIVE


_CONTEXT = """
from pkg.backends import Backend

class Context:
    backend: Backend = None
"""


def test_consumer_through_a_slot_of_a_class_outside_the_family(tmp_path):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", **_split(_SPARSE_MEMBER),
                                 "pkg/indexer.py": _PROBE_ONLY, "pkg/context.py": _CONTEXT,
                                 "pkg/sparse_model.py": """
from pkg.context import Context

def attend(ctx: Context, batch):
    return ctx.backend.sparse_topk(batch)
"""})
    (f,) = [f for f in lint(root).findings if f.member == "prepare_sparse"]
    assert f.confidence == "low"
    (why,) = [r for r in f.confidence_reasons if r.signal == "unsupported-pairing"]
    assert "`Context.backend.sparse_topk(...)`" in why.note and why.path.endswith("sparse_model.py")


def test_slot_holding_one_concrete_class_is_not_the_installed_object(tmp_path):
    # `Holder.sparse` is typed as the implementation itself: a helper of the holder, not a slot.
    root = write_tree(tmp_path, {"pkg/__init__.py": "", **_split(_SPARSE_MEMBER),
                                 "pkg/indexer.py": _PROBE_ONLY, "pkg/sparse_model.py": """
from pkg.backends import SparseBackend

class Holder:
    sparse: SparseBackend = None

def attend(holder: Holder, batch):
    return holder.sparse.sparse_topk(batch)
"""})
    (f,) = [f for f in lint(root).findings if f.member == "prepare_sparse"]
    assert f.confidence in LIVE


def test_a_wrapper_naming_the_lineage_is_written_to_hold_it(tmp_path):
    # The wrapper's module imports the implementation: it is meant to hold that lineage, whatever
    # the lineage's other consumers assume.
    files = _split(_SPARSE_MEMBER)
    files["pkg/hybrid.py"] = files["pkg/hybrid.py"].replace(
        "from pkg.backends import Backend", "from pkg.backends import Backend, SparseBackend")
    root = write_tree(tmp_path, {"pkg/__init__.py": "", **files, "pkg/indexer.py": _PROBE_ONLY,
                                 "pkg/sparse_model.py": """
from pkg.backends import get_backend

def attend(batch):
    return get_backend().sparse_topk(batch)
"""})
    (f,) = [f for f in lint(root).findings if f.member == "prepare_sparse"]
    assert f.confidence in LIVE


def test_a_slot_refilled_with_the_wrappers_delegate_keeps_the_pairing(tmp_path):
    # A splitter takes the wrapper's delegate out of the slot and builds a context around it: the
    # slot's consumers may then hold the delegate itself, and do not say the wrapper is installed.
    consumer = """
from pkg.context import Context

def attend(ctx: Context, batch):
    return ctx.backend.sparse_topk(batch)
"""
    splitter = """
from pkg.context import Context

def split(ctx: Context):
    inner = ctx.backend.inner
    return make_context(backend=inner)
"""
    files = {"pkg/__init__.py": "", **_split(_SPARSE_MEMBER), "pkg/indexer.py": _PROBE_ONLY,
             "pkg/context.py": _CONTEXT, "pkg/sparse_model.py": consumer}
    (f,) = [f for f in lint(write_tree(tmp_path / "a", files)).findings if f.member == "prepare_sparse"]
    assert f.confidence == "low"  # without the splitter the slot holds only the installed wrapper
    files["pkg/split.py"] = splitter
    (f,) = [f for f in lint(write_tree(tmp_path / "b", files)).findings if f.member == "prepare_sparse"]
    assert f.confidence in LIVE
    assert not [r for r in f.confidence_reasons if r.signal == "unsupported-pairing"]
    # Reading the delegate without refilling a slot of that name hands nothing to the consumers.
    files["pkg/split.py"] = splitter.replace("make_context(backend=inner)", "inner.forward(None)")
    (f,) = [f for f in lint(write_tree(tmp_path / "c", files)).findings if f.member == "prepare_sparse"]
    assert f.confidence == "low"


# A member of the implementation's lineage that an unrelated implementation has too (no lineage of
# the family has it alone): code that names the implementation was still written for it.
_TWO_LINEAGES = _SPARSE_MEMBER + """
class OtherSparseBackend(Backend):
    def forward(self, batch):
        return batch

    def sparse_topk(self, batch):
        return batch
"""


def test_consumer_naming_the_implementation_calls_a_member_another_lineage_has_too(tmp_path):
    f = _consumer_finding(tmp_path, """
from pkg.backends import SparseBackend, get_backend

def attend(batch):
    assert SparseBackend is not None
    return get_backend().sparse_topk(batch)
""", _TWO_LINEAGES)
    assert f.confidence == "low"
    (why,) = [r for r in f.confidence_reasons if r.signal == "unsupported-pairing"]
    assert why.path.endswith("sparse_model.py") and why.line == 6
    assert "a member `SparseBackend` has, which that code names" in why.note


def test_consumer_naming_no_implementation_of_a_member_two_lineages_have_keeps_the_pairing(tmp_path):
    f = _consumer_finding(tmp_path, """
from pkg.backends import OtherSparseBackend, get_backend

def attend(batch):
    assert OtherSparseBackend is not None
    return get_backend().sparse_topk(batch)
""", _TWO_LINEAGES)
    assert f.confidence in LIVE  # it names the other lineage, not the one paired with the wrapper


def test_a_lineage_member_stays_one_when_another_lineage_gains_it(tmp_path):
    # The same pairing, before and after an unrelated implementation gains the member: the
    # consumer names the paired implementation, so the tier does not move.
    consumer = """
from pkg.backends import SparseBackend, get_backend

def attend(batch):
    assert SparseBackend is not None
    return get_backend().sparse_topk(batch)
"""
    before = _consumer_finding(tmp_path / "before", consumer, _SPARSE_MEMBER)
    after = _consumer_finding(tmp_path / "after", consumer, _TWO_LINEAGES)
    assert before.confidence == after.confidence == "low"


# -- the implementation's consumers declare the installed object one of its classes -----------------

def test_consumer_asserting_the_installed_object_is_the_implementation(tmp_path):
    f = _consumer_finding(tmp_path, """
from typing import TYPE_CHECKING
from pkg.backends import SparseBackend, get_backend

def attend(batch):
    backend = get_backend()
    if TYPE_CHECKING:
        assert isinstance(backend, (SparseBackend,))
    return backend.forward(batch)
""")
    assert f.confidence == "low"
    (why,) = [r for r in f.confidence_reasons if r.signal == "unsupported-pairing"]
    assert why.path.endswith("sparse_model.py") and why.line == 8
    assert "declare `get_backend()` a `SparseBackend`" in why.note and "which `HybridBackend` is not" in why.note


def test_an_assertion_the_wrapper_also_meets_keeps_the_pairing(tmp_path):
    for asserted in ("Backend", "(SparseBackend, HybridBackend)"):
        f = _consumer_finding(tmp_path / asserted[:4], f"""
from pkg.backends import Backend, SparseBackend, get_backend
from pkg.hybrid import HybridBackend

def attend(batch):
    backend = get_backend()
    assert isinstance(backend, {asserted})
    return backend.forward(batch)
""")
        assert f.confidence in LIVE, asserted


def test_an_assertion_on_an_object_handed_in_keeps_the_pairing(tmp_path):
    f = _consumer_finding(tmp_path, """
from pkg.backends import Backend, SparseBackend

def attend(backend: Backend, batch):
    assert isinstance(backend, SparseBackend)
    return backend.forward(batch)
""")
    assert f.confidence in LIVE  # not the installed object: the caller's, whatever it is


# A wrapper asserted installed (`assert isinstance(backend, HybridLinear)` in one model's code) is a
# composition point many configurations share: that model's assertion says which wrapper it
# installs, not that another wrapper never holds that one.
_NESTED = {
    'pkg/__init__.py': '',
    'pkg/backends.py': 'class Backend:\n    def forward(self, batch):\n        raise NotImplementedError\n\nclass LinearBackend(Backend):\n    def forward(self, batch):\n        return batch\n\n    def prepare_sparse(self, batch):\n        self.prepared = batch\n\nclass FullBackend(Backend):\n    def forward(self, batch):\n        return batch\n\nclass HybridLinear(Backend):\n    def __init__(self, full: Backend, linear: LinearBackend):\n        self.full = full\n        self.linear = linear\n\n    def forward(self, batch):\n        return self.full.forward(batch)\n\n    def prepare_sparse(self, batch):\n        self.linear.prepare_sparse(batch)\n\nclass NpuHybridLinear(HybridLinear):\n    pass\n\n_INSTALLED: Backend = None\n\ndef get_backend() -> Backend:\n    return _INSTALLED\n',
    'pkg/indexer.py': 'from pkg.backends import get_backend\n\ndef index(batch):\n    backend = get_backend()\n    if hasattr(backend, "prepare_sparse"):\n        backend.prepare_sparse(batch)\n    return batch\n',
    'pkg/model.py': 'from pkg.backends import HybridLinear, get_backend\n\ndef attend(batch):\n    backend = get_backend()\n    assert isinstance(backend, HybridLinear)\n    return backend.linear.forward(batch)\n',
    'pkg/split.py': 'from pkg.backends import Backend\n\n\nclass Split(Backend):\n    def __init__(self, prefill: Backend, decode: Backend):\n        self.prefill = prefill\n        self.decode = decode\n\n    def forward(self, batch):\n        return self.decode.forward(batch)\n',
    'pkg/build.py': 'from pkg.backends import FullBackend, HybridLinear, LinearBackend, NpuHybridLinear\nfrom pkg.split import Split\n\n\ndef build(npu):\n    inner = NpuHybridLinear(FullBackend(), LinearBackend()) if npu else HybridLinear(FullBackend(), LinearBackend())\n    return Split(inner, inner)\n',
}


def test_an_assertion_naming_a_wrapper_keeps_the_pairing(tmp_path):
    root = write_tree(tmp_path, _NESTED)
    (f,) = [f for f in lint(root).findings if f.code == "AL001" and f.member == "prepare_sparse"]
    assert f.class_name == "pkg.split.Split" and f.targets == ("pkg.backends.HybridLinear",)
    assert f.confidence in LIVE


def test_a_module_naming_holders_of_two_lineages_keeps_the_pairing(tmp_path):
    # A registry naming every backend says only that one of them is installed, not which.
    f = _consumer_finding(tmp_path, """
from pkg.backends import OtherSparseBackend, SparseBackend, get_backend

REGISTRY = {"sparse": SparseBackend, "other": OtherSparseBackend}

def attend(batch):
    return get_backend().sparse_topk(batch)
""", _TWO_LINEAGES)
    assert f.confidence in LIVE


def test_an_assertion_only_on_some_path_keeps_the_pairing(tmp_path):
    for body in ("    if isinstance(backend, HybridBackend):\n        return backend.inner.forward(batch)\n"
                 "    assert isinstance(backend, SparseBackend)\n",
                 "    if sparse_only:\n        assert isinstance(backend, SparseBackend)\n"):
        f = _consumer_finding(tmp_path / str(len(body)), f"""
from pkg.backends import SparseBackend, get_backend
from pkg.hybrid import HybridBackend

def attend(batch, sparse_only=False):
    backend = get_backend()
{body}    return backend.forward(batch)
""")
        assert f.confidence in LIVE, body


def test_an_assertion_on_a_local_handed_only_to_a_function(tmp_path):
    f = _consumer_finding(tmp_path, """
from typing import TYPE_CHECKING
from pkg.backends import SparseBackend, get_backend

def attend(batch):
    backend = get_backend()
    if TYPE_CHECKING:
        assert isinstance(backend, SparseBackend)
    return run(backend, batch)
""")
    assert f.confidence == "low"  # the local the assertion reads is kept in the summary
