"""State is not a hook.

`set_lora_context(ctx)` storing `self._lora_context = ctx` gives an object a field when the setter
runs on it; `getattr(layer, "_lora_context", None)` asks whether it ran on that object, not
whether the object's class has a hook a wrapper should forward. AL001 leaves alone a member every
implementation assigns only after construction (in methods other than `__init__` and what
`__init__` calls on `self`, never in a class body) when it is private, or when the wrapper has
those setters itself. A member set at construction, or a public one set by a setter the wrapper
lacks, is still a hidden hook.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import rename_tree

_LAYERS = """
class Layer:
    def forward(self, x):
        raise NotImplementedError

    def set_context(self, ctx):
        raise NotImplementedError


class DenseLayer(Layer):
    def forward(self, x):
        return x

    def set_context(self, ctx):
        {store} = ctx


class SparseLayer(Layer):
    def __init__(self):
        {init_store}

    def forward(self, x):
        return x

    def set_context(self, ctx):
        self.ctx = ctx

    def attach(self, ctx):
        {attach_store} = ctx


class LoraWrapper(Layer):
    def __init__(self, base: Layer):
        self.base = base

    def forward(self, x):
        return self.base.forward(x)

    def set_context(self, ctx):
        self.base.set_context(ctx)
"""

_USE = """
from serving.layers import Layer


def run(layer: Layer, x):
    ctx = getattr(layer, "{member}", None)
    if ctx is not None:
        x = x + ctx
    return layer.forward(x)
"""


def _tree(tmp_path, member: str, store: str = "_", init_store: str = "pass", attach_store: str = "_"):
    layers = _LAYERS.format(store=store, init_store=init_store, attach_store=attach_store)
    return write_tree(tmp_path, {"serving/__init__.py": "", "serving/layers.py": layers,
                                 "serving/use.py": _USE.format(member=member)})


def _al001(root) -> list[tuple[str, str]]:
    result = lint(root, astroid=False)
    assert result.errors == []
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member) for f in result.findings if f.code == "AL001")


def test_a_private_field_a_setter_stores_is_not_a_hook(tmp_path):
    """INVALID before: LoraWrapper 'hid' `_lora_context`, which the base's setter stores on
    whichever object it runs on (the wrapper forwards it to its base: the base has the field)."""
    root = _tree(tmp_path, "_lora_context", store="self._lora_context")
    assert _al001(root) == []


def test_a_public_field_the_wrapper_sets_the_same_way_is_not_a_hook(tmp_path):
    root = _tree(tmp_path, "lora_context", attach_store="self.lora_context")
    assert _al001(root) == [("LoraWrapper", "lora_context")]  # `attach` is not the wrapper's
    root2 = _tree(tmp_path / "b", "lora_context", store="self.lora_context")
    assert _al001(root2) == []  # `set_context` is the wrapper's too


@pytest.mark.parametrize("member,kw", [
    ("_lora_context", {"init_store": "self._lora_context = 0"}),   # set at construction
    ("lora_context", {"init_store": "self.lora_context = 0"}),
])
def test_a_field_set_at_construction_is_still_a_hook(tmp_path, member, kw):
    root = _tree(tmp_path, member, **kw)
    assert _al001(root) == [("LoraWrapper", member)]


def test_a_field_set_by_a_method_init_calls_is_set_at_construction(tmp_path):
    root = _tree(tmp_path, "_lora_context", init_store="self.attach(0)", attach_store="self._lora_context")
    assert _al001(root) == [("LoraWrapper", "_lora_context")]


def test_the_same_with_every_name_changed(tmp_path):
    src = _tree(tmp_path / "src", "_lora_context", store="self._lora_context")
    rename_tree(src, tmp_path / "renamed")
    assert _al001(tmp_path / "renamed") == []
    src = _tree(tmp_path / "src2", "_lora_context", init_store="self._lora_context = 0")
    rename_tree(src, tmp_path / "renamed2")
    assert len(_al001(tmp_path / "renamed2")) == 1
