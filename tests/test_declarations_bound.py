"""A declaration bounds; only values populate.

`self.full: Backend` (no value; or `= None`, a false literal, which is no class; in a method or at
class level) followed by stores of concrete classes bounds those values: it is not one more value,
which would add `Backend` itself and so every subclass of it to what the delegate holds (a store
typed wider than the declaration is narrowed to it). Where a store is something nothing can type,
or nothing stores a value at all (the attribute is filled from outside), the declaration says what
the attribute holds, as a parameter's annotation does.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import naming, rename_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.linter.perfile.codec import Parsed, decode_parsed, encode_parsed
from attn_lint.linter.perfile.summary import summarise_source

# Paged and Sliding implement the optional hook; the wrapper below never holds Sliding.
_BACKENDS = """
from typing import Optional


class Backend:
    def forward(self, batch):
        raise NotImplementedError


class FlashBackend(Backend):
    def forward(self, batch):
        return batch


class TritonBackend(Backend):
    def forward(self, batch):
        return batch


class PagedBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch


class SlidingBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch


def make_flash():
    return FlashBackend()


def make_triton():
    return TritonBackend()


def make_paged():
    return PagedBackend()
"""

_MODEL = """
from serving.backends import Backend


def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
"""

# Where the declaration is written: (class body, first lines of `__init__`).
SPELLINGS = {
    "method-bare": ("", "        self.full: Backend\n"),
    "method-none": ("", "        self.full: Optional[Backend] = None\n"),
    "class-bare": ("    full: Backend\n\n", ""),
    "class-none": ("    full: Optional[Backend] = None\n\n", ""),
}


def _hybrid(spelling: str, first: str, second: str) -> str:
    in_class, in_init = SPELLINGS[spelling]
    return f"""

class HybridBackend(Backend):
{in_class}    def __init__(self, use_first: bool):
{in_init}        if use_first:
            self.full = {first}
        else:
            self.full = {second}

    def forward(self, batch):
        return self.full.forward(batch)
"""


def _tree(tmp_path, hybrid: str):
    return write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py": _BACKENDS + hybrid,
                                 "serving/model.py": _MODEL})


def _al001(root) -> list[tuple[str, str, tuple[str, ...]]]:
    result = lint(root, astroid=False)
    assert result.errors == []
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member, tuple(t.rsplit(".", 1)[-1] for t in f.targets))
                  for f in result.findings if f.code == "AL001")


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_declaration_adds_no_subclass_to_what_the_branches_store(tmp_path, spelling):
    """INVALID before: `Backend` from the declaration made Paged and Sliding delegates."""
    root = _tree(tmp_path, _hybrid(spelling, "make_flash()", "make_triton()"))
    assert _al001(root) == []


def test_a_bare_declaration_beside_constructions_in_init(tmp_path):
    """The issue's shape: the branches build the classes themselves."""
    root = _tree(tmp_path, _hybrid("method-bare", "FlashBackend()", "TritonBackend()"))
    assert _al001(root) == []


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_stored_class_with_the_hook_is_still_found_and_only_it(tmp_path, spelling):
    """The drift the stores do build stays; Sliding, which no store builds, is not named."""
    root = _tree(tmp_path, _hybrid(spelling, "make_flash()", "make_paged()"))
    assert _al001(root) == [("HybridBackend", "plan_chunks", ("PagedBackend",))]


def test_a_declared_parameter_store_is_narrowed_by_the_constructions(tmp_path):
    """`self.full: Backend` then `self.full = full`: the constructions of the wrapper say what
    `full` is (a factory's result, which only the construction pass reads), as without the
    declaration."""
    root = _tree(tmp_path, """

class HybridBackend(Backend):
    def __init__(self, full: Backend):
        self.full: Backend
        self.full = full

    def forward(self, batch):
        return self.full.forward(batch)


def build():
    return HybridBackend(make_flash())
""")
    assert _al001(root) == []


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_store_nothing_can_type_is_what_the_declaration_says(tmp_path, spelling):
    """`make_any()` returns what nobody can tell: there the declaration answers, as a parameter's
    annotation does, and every implementation of the hook can be held."""
    root = _tree(tmp_path, _hybrid(spelling, "make_flash()", "make_any()") + """

def make_any():
    return REGISTRY[0]()
""")
    assert _al001(root) == [("HybridBackend", "plan_chunks", ("PagedBackend", "SlidingBackend"))]


_SPLIT_BASE = """

class HybridBase(Backend):
    def __init__(self, full: Backend):
        self.full: Backend
        self.full = full

    def forward(self, batch):
        return self.full.forward(batch)
"""


def _held(root, wrapper: str) -> list[str]:
    """What the wrapper's delegates hold (the class names), from the family model itself: a gap
    that a subclass shares with its base is reported once, on the base."""
    model = analyse([str(root)], Settings(cache_dir=None, jobs=1, astroid=False), keep_context=True).context.model
    w = model.wrappers[f"serving.backends.{wrapper}"]
    return sorted(t.rsplit(".", 1)[-1] for t in model.implementations(w.delegate_types(), exclude=w.qual,
                                                                        exact=w.exact_types()))


def test_a_narrower_declaration_bounds_a_wider_store(tmp_path):
    """The subclass declares `full: FlashBackend`; the base stores a parameter typed `Backend`:
    the declaration narrows the store, it is not widened by it."""
    root = _tree(tmp_path, _SPLIT_BASE + """

class FlashHybrid(HybridBase):
    full: FlashBackend
""")
    assert _held(root, "FlashHybrid") == ["FlashBackend"]
    assert _held(root, "HybridBase") == ["Backend", "FlashBackend", "PagedBackend", "SlidingBackend", "TritonBackend"]


def test_a_subclass_storing_its_own_value_is_read_alone(tmp_path):
    """The resolver reads the first class of the MRO that stores the attribute: the base's
    declaration and store say nothing of `FlashHybrid`, whose own `__init__` stores Flash."""
    root = _tree(tmp_path, _SPLIT_BASE + """

class FlashHybrid(HybridBase):
    def __init__(self):
        self.full = make_flash()
""")
    assert _held(root, "FlashHybrid") == ["FlashBackend"]


def test_a_declaration_alone_says_what_the_outside_puts_there(tmp_path):
    """Nothing in the class stores a value: the declaration is what the attribute holds (as a
    parameter's annotation is), every implementation included."""
    root = _tree(tmp_path, """

class HybridBackend(Backend):
    def __init__(self):
        self.full: Backend

    def forward(self, batch):
        return self.full.forward(batch)


def build(inner: Backend):
    hybrid = HybridBackend()
    hybrid.full = inner
    return hybrid
""")
    assert _al001(root) == [("HybridBackend", "plan_chunks", ("PagedBackend", "SlidingBackend"))]


def test_the_summary_records_bare_declarations_and_the_cache_keeps_them():
    summary = summarise_source("""
class W:
    def __init__(self):
        self.a: int
        self.b: int = None
        self.c = 1
""")
    fn = summary.classes["W"].methods["__init__"]
    assert fn.declarations == (("a", 4),)
    again = decode_parsed(encode_parsed(Parsed("0" * 40, summary, None)), "0" * 40)
    assert again.summary.classes["W"].methods["__init__"].declarations == (("a", 4),)


def test_findings_survive_renaming(tmp_path):
    trees = [_hybrid(s, "make_flash()", second) for s in sorted(SPELLINGS)
             for second in ("make_triton()", "make_paged()")]
    for n, hybrid in enumerate(trees):
        src = _tree(tmp_path / f"src{n}", hybrid)
        names = naming(src)
        dest = tmp_path / f"renamed{n}"
        rename_tree(src, dest, names)
        expected = [(names[c], names[m], tuple(names[t] for t in ts)) for c, m, ts in _al001(src)]
        assert _al001(dest) == sorted(expected)
