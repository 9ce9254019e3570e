"""An abstract intermediate class's override, inherited by the concrete class a wrapper holds, is
the implementation the delegate has.

`Mid(Backend, ABC)` is never the object at a site (wrapper-role rules a pairing with it out), but
`Leaf(Mid)` is, and its hooks are Mid's. Issue 27 reports such overrides dropped on an unseen code
base; these shapes (the abstract method elsewhere in Mid, or a NotImplementedError placeholder Leaf
implements; the delegate built in the wrapper, passed to it, or a list) are found as they should
be at the commit this file was written against: they guard the lookup through the MRO, which must
keep abstract intermediates, and the pairing, which must be made with the held class, not Mid.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import naming, rename_tree

_BACKENDS = """
from abc import ABC, abstractmethod


class Backend:
    def forward(self, batch):
        raise NotImplementedError

    def on_warmup(self):
        pass

    def refresh(self, spec):
        raise NotImplementedError

    def plan(self, batch, ragged=None):
        pass
"""

_MID = {
    "abstractmethod": """

class MidBackend(Backend, ABC):
    @abstractmethod
    def kernel(self, batch):
        ...
""",
    "placeholder": """

class MidBackend(Backend):
    def kernel(self, batch):
        raise NotImplementedError
""",
}

# Mid's own hooks: a real `on_warmup` over the no-op, `refresh` over the placeholder, an optional
# `plan_chunks`, and a `plan` that dropped the family's `ragged` keyword.
_MID_HOOKS = """
    def on_warmup(self):
        self.warm = True

    def refresh(self, spec):
        self.spec = spec

    def plan_chunks(self, batch):
        self.planned = batch

    def plan(self, batch):
        self.planned = batch


class LeafBackend(MidBackend):
    def kernel(self, batch):
        return batch

    def forward(self, batch):
        return batch


class PlainBackend(Backend):
    def forward(self, batch):
        return batch
"""

_HOLDERS = {
    "built": ("self.full = LeafBackend()", "self.full"),
    "passed": ("self.full = full", "self.full"),
    "list": ("self.backends = [LeafBackend(), PlainBackend()]", "self.backends[0]"),
}


def _wrapper(holder: str, forwards: bool) -> str:
    store, read = _HOLDERS[holder]
    own = f"""
    def on_warmup(self):
        {read}.on_warmup()

    def refresh(self, spec):
        {read}.refresh(spec)

    def plan_chunks(self, batch):
        if hasattr({read}, "plan_chunks"):
            {read}.plan_chunks(batch)
""" if forwards else ""
    return f"""

class HybridBackend(Backend):
    def __init__(self, full: Backend):
        {store}

    def forward(self, batch):
        return {read}.forward(batch)

    def plan(self, batch, ragged=None):
        {read}.plan(batch, ragged=ragged)
{own}

def build():
    return HybridBackend(LeafBackend())


def prefill(backend: Backend, batch, spec):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    backend.on_warmup()
    backend.refresh(spec)
    return backend.forward(batch)
"""


def _tree(root, mid: str, holder: str, forwards: bool):
    return write_tree(root, {"serving/__init__.py": "",
                             "serving/backends.py": _BACKENDS + _MID[mid] + _MID_HOOKS + _wrapper(holder, forwards)})


def _found(root) -> list[tuple]:
    result = lint(root, astroid=False)
    assert result.errors == []
    return sorted((f.code, f.class_name.rsplit(".", 1)[-1], f.member, f.confidence,
                   tuple(t.rsplit(".", 1)[-1] for t in f.targets)) for f in result.findings)


@pytest.mark.parametrize("holder", sorted(_HOLDERS))
@pytest.mark.parametrize("mid", sorted(_MID))
def test_the_held_class_has_the_abstract_intermediates_overrides(tmp_path, mid, holder):
    got = _found(_tree(tmp_path, mid, holder, forwards=False))
    assert [f[:4] for f in got if f[0] != "AL002"] == [
        ("AL001", "HybridBackend", "plan_chunks", "medium"),
        ("AL003", "HybridBackend", "on_warmup", "medium"),
        ("AL003", "HybridBackend", "refresh", "medium"),
    ]
    assert all(f[4] == ("MidBackend",) for f in got if f[0] != "AL002")
    if holder == "passed":  # (a receiver typed as Leaf itself is a type checker's business)
        # `plan(batch, ragged=ragged)` reaches Leaf, whose `plan` is Mid's and takes no `ragged`.
        assert [f[:4] for f in got if f[0] == "AL002"] == [("AL002", "HybridBackend", "plan", "medium")]
        assert "LeafBackend" in next(f[4] for f in got if f[0] == "AL002")


@pytest.mark.parametrize("holder", sorted(_HOLDERS))
def test_a_wrapper_forwarding_the_hooks_has_no_gap(tmp_path, holder):
    got = _found(_tree(tmp_path, "abstractmethod", holder, forwards=True))
    assert [f[0] for f in got if f[0] != "AL002"] == []


def test_findings_survive_renaming(tmp_path):
    for n, (mid, holder) in enumerate((m, h) for m in sorted(_MID) for h in sorted(_HOLDERS)):
        src = _tree(tmp_path / f"src{n}", mid, holder, forwards=False)
        names = naming(src)
        dest = tmp_path / f"renamed{n}"
        rename_tree(src, dest, names)
        expected = sorted((code, names[c], names[m], conf, tuple(names[t] for t in ts))
                          for code, c, m, conf, ts in _found(src))
        assert _found(dest) == expected
