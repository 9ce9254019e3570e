"""Signal wrapper-role: what a wrapper is (it hands the family's own operations to its delegate),
and abstract classes, which are never the object at a site."""

from __future__ import annotations

import ast

from conftest import lint, write_tree

from attn_lint.linter.perfile.summary import is_unimplemented_body

_FAMILY = '''
from abc import ABC, abstractmethod

class Kernel(ABC):
    @abstractmethod
    def decode(self, x):
        ...

    @abstractmethod
    def extend(self, x):
        ...

class TritonKernel(Kernel):
    supports_packed = True

    def decode(self, x):
        return x + 1

    def extend(self, x):
        return x + 2

class CuteKernel(Kernel):
    def decode(self, x):
        return x * 2

    def extend(self, x):
        return x * 3
'''

_PROBE = '''
from pkg.kernels import Kernel

class Dispatcher:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.packed = getattr(self.kernel, "supports_packed", False)
'''


def _findings(tmp_path, kernels: str):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": _FAMILY + kernels, "pkg/dispatch.py": _PROBE})
    return {(f.class_name.rsplit(".", 1)[-1], f.member): f for f in lint(tmp_path).findings}


def _role_notes(finding) -> list[str]:
    return [r.note for r in finding.confidence_reasons if r.signal == "wrapper-role"]


def test_a_class_falling_back_on_a_helper_is_not_its_wrapper(tmp_path):
    """It does `extend` itself and hands the helper only `decode` (for misaligned inputs): the
    probe answers for the class, not for the helper."""
    found = _findings(tmp_path, '''
class FastKernel(Kernel):
    def __init__(self):
        self._fallback = TritonKernel()

    def decode(self, x):
        if x % 32:
            return self._fallback.decode(x)
        return x - 1

    def extend(self, x):
        return x - 2
''')
    f = found[("FastKernel", "supports_packed")]
    assert f.confidence == "low"
    (note,) = _role_notes(f)
    assert "does `extend` itself" in note and "`self._fallback`" in note and "`decode`" in note
    assert f.confidence_reasons[0].path.endswith("pkg/kernels.py")


_VERIFYING = '''
class VerifyingKernel(Kernel):
    supports_packed = True

    def decode(self, x):
        return x + 1

    def extend(self, x):
        return x + 2

    def verify(self, x):
        return x + 3
'''

_FALLING_BACK = '''
class FastKernel(Kernel):
    def __init__(self):
        self._fallback = VerifyingKernel()
        self._decode_fn = make_decode()

    def decode(self, x):
        if x % 32:
            return self._fallback.decode(x)
        out = self._decode_fn(x)
        return out.view(x)

    def extend(self, x):
        return x - 2

    def verify(self, x):
        if x % 32:
            return self._fallback.verify(x)
        return self._decode_fn(x)
'''

# Leaves elsewhere in the family doing only `decode` and `extend`: nothing to do with the pairing.
_PREFILL_ONLY = "".join(f'''
class Other{i}Kernel(Kernel):
    def decode(self, x):
        return x * {i}

    def extend(self, x):
        return x * {i + 1}
''' for i in range(3))


def test_the_role_is_read_from_the_pairings_own_classes_not_the_familys_majority(tmp_path):
    """`FastKernel` does `decode` and `verify` itself and falls back on its helper for
    misaligned inputs; it does `extend` itself. Which operations count is what the paired
    implementation does (`decode`, `extend`, `verify`), so classes joining the family elsewhere
    do not turn it from an implementation into a wrapper or back (they used to: a vote over every
    leaf put `verify` in or out)."""
    family = _FAMILY.replace("class TritonKernel", "    @abstractmethod\n    def verify(self, x):\n        ...\n\n"
                             "class TritonKernel", 1)
    tiers = []
    for extra in ("", _PREFILL_ONLY):
        root = tmp_path / f"tree{len(tiers)}"
        write_tree(root, {"pkg/__init__.py": "", "pkg/dispatch.py": _PROBE, "pkg/kernels.py":
                          "def make_decode():\n    return abs\n" + family + _VERIFYING + _FALLING_BACK + extra})
        found = {(f.class_name.rsplit(".", 1)[-1], f.member): f for f in lint(root).findings}
        f = found[("FastKernel", "supports_packed")]
        tiers.append(f.confidence)
        (note,) = _role_notes(f)
        assert "does `decode`, `extend`, `verify` itself" in note, note
    assert tiers == ["low", "low"]


def test_a_wrapper_handing_on_the_delegates_result_in_every_return_stays(tmp_path):
    """Returning what the delegate gives (or a parameter, on an early exit) is forwarding; only
    a method that returns its own computed value on another path falls back on the delegate."""
    found = _findings(tmp_path, '''
class GuardedKernel(Kernel):
    def __init__(self, inner: Kernel):
        self.inner = inner

    def decode(self, x):
        if not x:
            return x
        return self.inner.decode(x)

    def extend(self, x):
        out = self.inner.extend(x)
        return out
''')
    f = found[("GuardedKernel", "supports_packed")]
    assert f.confidence == "medium"
    assert _role_notes(f) == []


def test_a_method_of_another_held_object_is_not_the_wrappers_own_work(tmp_path):
    """`self.spare.decode(x)`, on an object the code does not type: the work of what it holds,
    not a value the wrapper computed, so `decode` is still handed on."""
    found = _findings(tmp_path, '''
def make_spare():
    return object()

class SplitKernel(Kernel):
    def __init__(self, inner: Kernel):
        self.inner = inner
        self.spare = make_spare()

    def decode(self, x):
        if x:
            return self.inner.decode(x)
        return self.spare.decode(x)

    def extend(self, x):
        return self.inner.extend(x)
''')
    f = found[("SplitKernel", "supports_packed")]
    assert f.confidence == "medium"
    assert _role_notes(f) == []


def test_a_class_handing_its_helper_none_of_the_operations_is_not_its_wrapper(tmp_path):
    found = _findings(tmp_path, '''
class LoadingKernel(Kernel):
    def __init__(self):
        self._loader = TritonKernel()

    def load(self, weights):
        self._loader.prepare(weights)

    def decode(self, x):
        return x - 1

    def extend(self, x):
        return x - 2
''')
    f = found[("LoadingKernel", "supports_packed")]
    assert f.confidence == "low"
    (note,) = _role_notes(f)
    assert "forwards none of its family's operations (`decode`, `extend`)" in note


def test_a_wrapper_forwarding_the_operations_stays(tmp_path):
    found = _findings(tmp_path, '''
class HybridKernel(Kernel):
    def __init__(self, prefill: Kernel, decode: Kernel):
        self.prefill_kernel = prefill
        self.decode_kernel = decode

    def _select(self, mode):
        return self.prefill_kernel if mode else self.decode_kernel

    def decode(self, x):
        return self.decode_kernel.decode(x)

    def extend(self, x):
        return self._select(x).extend(x)
''')
    f = found[("HybridKernel", "supports_packed")]
    assert f.confidence == "medium"
    assert _role_notes(f) == []


def test_an_abstract_wrapper_without_a_concrete_subclass_is_ruled_out(tmp_path):
    found = _findings(tmp_path, '''
class BaseWrapper(Kernel):
    def __init__(self, inner: Kernel):
        self.inner = inner

    def decode(self, x):
        return self.inner.decode(x)

    def extend(self, x):
        return self.inner.extend(x)

    @abstractmethod
    def plan(self, x):
        ...
''')
    f = found[("BaseWrapper", "supports_packed")]
    assert f.confidence == "low"
    (note,) = _role_notes(f)
    assert "`BaseWrapper` is abstract (`BaseWrapper.plan` is not implemented)" in note


_ABSTRACT_WRAPPER = '''
class BaseWrapper(Kernel):
    def __init__(self, inner: Kernel):
        self.inner = inner

    def decode(self, x):
        return self.inner.decode(x)

    def extend(self, x):
        return self.inner.extend(x)

    def plan(self, x):
        raise NotImplementedError
'''


def test_an_abstract_wrapper_whose_concrete_subclass_inherits_the_gap_stays(tmp_path):
    """The rule reports the gap once, on the base; the concrete subclass that inherits it is the
    object at the probe, so the finding stands."""
    found = _findings(tmp_path, _ABSTRACT_WRAPPER + '''
class PlanningWrapper(BaseWrapper):
    def plan(self, x):
        return x
''')
    f = found[("BaseWrapper", "supports_packed")]
    assert f.confidence == "medium"
    assert _role_notes(f) == []


def test_an_abstract_wrapper_whose_concrete_subclasses_define_the_member_is_ruled_out(tmp_path):
    found = _findings(tmp_path, _ABSTRACT_WRAPPER + '''
class PlanningWrapper(BaseWrapper):
    supports_packed = False

    def plan(self, x):
        return x
''')
    f = found[("BaseWrapper", "supports_packed")]
    assert f.confidence == "low"
    (note,) = _role_notes(f)
    assert "is abstract (`BaseWrapper.plan` is not implemented)" in note
    assert ("PlanningWrapper", "supports_packed") not in found


_WRAPPER = '''
class HybridKernel(Kernel):
    def __init__(self, inner: Kernel):
        self.inner = inner

    def decode(self, x):
        return self.inner.decode(x)

    def extend(self, x):
        return self.inner.extend(x)
'''


def test_an_abstract_implementation_is_never_the_delegate(tmp_path):
    """The only class defining the hook leaves `extend` abstract: nothing can hold it."""
    found = _findings(tmp_path, _WRAPPER + '''
class PagedKernel(Kernel):
    plans_pages = True

    def decode(self, x):
        return x
''' + '''
def use(kernel: Kernel):
    return hasattr(kernel, "plans_pages")
''')
    f = found[("HybridKernel", "plans_pages")]
    assert f.confidence == "low"
    (note,) = _role_notes(f)
    assert "`PagedKernel` is abstract (`Kernel.extend` is not implemented)" in note


def test_a_concrete_subclass_of_an_abstract_implementation_stays_paired(tmp_path):
    found = _findings(tmp_path, _WRAPPER + '''
class PagedKernel(Kernel):
    plans_pages = True

    def decode(self, x):
        return x

class PagedTritonKernel(PagedKernel):
    def extend(self, x):
        return x
''' + '''
def use(kernel: Kernel):
    return hasattr(kernel, "plans_pages")
''')
    f = found[("HybridKernel", "plans_pages")]
    assert f.confidence == "medium"
    assert any("`PagedKernel` is abstract" in n for n in _role_notes(f))  # its own pairing is dead


def test_a_leaf_raising_not_implemented_for_a_mode_is_concrete(tmp_path):
    """A prefill-only implementation raises NotImplementedError for decode: it is still built and
    held, so the pairing stays."""
    found = _findings(tmp_path, _WRAPPER + '''
class PrefillOnlyKernel(Kernel):
    plans_pages = True

    def decode(self, x):
        raise NotImplementedError("prefill only")

    def extend(self, x):
        return x
''' + '''
def use(kernel: Kernel):
    return hasattr(kernel, "plans_pages")
''')
    f = found[("HybridKernel", "plans_pages")]
    assert f.confidence == "medium"
    assert _role_notes(f) == []


def test_not_implemented_only_bodies_are_recorded():
    def body(src):
        return ast.parse(src).body[0].body

    assert is_unimplemented_body(body('def f(self):\n    """doc"""\n    raise NotImplementedError\n'))
    assert is_unimplemented_body(body('def f(self):\n    raise NotImplementedError(f"{self} has none")\n'))
    assert not is_unimplemented_body(body('def f(self):\n    log()\n    raise NotImplementedError\n'))
    assert not is_unimplemented_body(body('def f(self):\n    raise ValueError("x")\n'))
    assert not is_unimplemented_body(body('def f(self):\n    pass\n'))
