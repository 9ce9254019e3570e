"""A per-class factory gives what its overrides return.

`backend.get_impl_cls()` on a receiver typed with the base, whose `get_impl_cls` is abstract
(`-> type[AttentionImpl]: ...`), runs some subclass's override: the call gives what those
overrides return (FlashImpl, SplitImpl), not every subclass of the annotation (which adds
TritonImpl, which no backend hands out). Where an override's return cannot be read, the
annotation still answers.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import rename_tree

_BACKENDS = """
import abc


class AttentionImpl:
    def forward(self, q):
        raise NotImplementedError


class FlashImpl(AttentionImpl):
    def forward(self, q):
        return q


class TritonImpl(AttentionImpl):
    def forward(self, q):
        return q

    def plan_chunks(self, q):
        self.planned = q


class SplitImpl(AttentionImpl):
    def __init__(self, inner: AttentionImpl):
        self.inner = inner

    def forward(self, q):
        return self.inner.forward(q)


class AttentionBackend(abc.ABC):
    @staticmethod
    {declaration}
    def get_impl_cls() -> type[AttentionImpl]:
        {body}


class FlashBackend(AttentionBackend):
    @staticmethod
    def get_impl_cls():
        return FlashImpl


class SplitBackend(AttentionBackend):
    @staticmethod
    def get_impl_cls():
        return {split_returns}


def build(backend: AttentionBackend):
    impl_cls = backend.get_impl_cls()
    return SplitImpl(impl_cls())
"""

_MODEL = """
from serving.backends import AttentionImpl


def prefill(impl: AttentionImpl, q):
    if hasattr(impl, "plan_chunks"):
        impl.plan_chunks(q)
    return impl.forward(q)
"""

DECLARATIONS = {
    "abstract": ("@abc.abstractmethod", "..."),
    "placeholder": ("", "raise NotImplementedError"),
    "annotated-ellipsis": ("", "..."),
}


def _tree(tmp_path, declaration: str = "abstract", split_returns: str = "SplitImpl"):
    deco, body = DECLARATIONS[declaration]
    backends = _BACKENDS.format(declaration=deco, body=body, split_returns=split_returns)
    return write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py": backends,
                                 "serving/model.py": _MODEL})


def _al001(root):
    result = lint(root, astroid=False)
    assert result.errors == []
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member) for f in result.findings if f.code == "AL001")


@pytest.mark.parametrize("declaration", sorted(DECLARATIONS))
def test_a_per_class_factory_gives_what_its_overrides_return(tmp_path, declaration):
    """INVALID before: `get_impl_cls()` was every AttentionImpl, TritonImpl among them."""
    assert _al001(_tree(tmp_path, declaration)) == []


def test_an_override_handing_out_the_hooked_class_is_reported(tmp_path):
    assert _al001(_tree(tmp_path, split_returns="TritonImpl")) == [("SplitImpl", "plan_chunks")]


def test_an_override_whose_return_says_nothing_leaves_the_annotation(tmp_path):
    assert _al001(_tree(tmp_path, split_returns="IMPLS[0]")) == [("SplitImpl", "plan_chunks")]


def test_the_same_with_every_name_changed(tmp_path):
    rename_tree(_tree(tmp_path / "src"), tmp_path / "renamed")
    assert _al001(tmp_path / "renamed") == []
    rename_tree(_tree(tmp_path / "src2", split_returns="TritonImpl"), tmp_path / "renamed2")
    assert len(_al001(tmp_path / "renamed2")) == 1
