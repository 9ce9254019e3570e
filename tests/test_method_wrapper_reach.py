"""A method object wrapping another, reached by a loader that tests what it holds.

vLLM 0.32.0: `FusedMoEModularMethod(FusedMoEMethodBase, CustomOp)` holds `old_quant_method`, hands
on its flags as properties (`return self.old_quant_method.skip_forward_padding`) and inherits the
base's no-op `process_weights_after_loading`; the weight reloader calls that hook on
`quant_method = getattr(layer, "quant_method", None)` under `isinstance(quant_method,
QuantizeMethodBase)`. Four readings were missing, each tested here by the shape it needs:

* a property handing on the delegate's attribute of its own name is forwarding (the class is a
  wrapper);
* an external base (`CustomOp` derives from `torch.nn.Module`) that comes after the in-tree class
  defining the member in Python's MRO cannot answer for it;
* a function probing a layer annotated with an outside class (`layer: nn.Module`) for
  `quant_method` is not looking through a wrapper (another wrapper's delegate attribute is named
  `quant_method`);
* a local the index cannot type is what an `isinstance` test that holds where it is used names.

The wrapper keeps its own `apply` (it forwards none of the family's operations), so the finding is
latent (`wrapper-role`); before, there was no finding at all.
"""

from __future__ import annotations

from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse

METHODS = '''
from torch import nn


class MethodBase:
    def apply(self, layer, x):
        raise NotImplementedError

    def after_load(self, layer):
        return


class Op(nn.Module):
    pass


class Int4Method(MethodBase):
    packed = True

    def apply(self, layer, x):
        return x

    def after_load(self, layer):
        layer.repacked = True


class Transform(MethodBase):
    def __init__(self, quant_method: MethodBase):
        self.quant_method = quant_method

    def apply(self, layer, x):
        return self.quant_method.apply(layer, x)

    def after_load(self, layer):
        self.quant_method.after_load(layer)


class Modular(MethodBase, Op):
    def __init__(self, old: MethodBase, kernel):
        self.old = old
        self.kernel = kernel

    @property
    def packed(self):
        return self.old.packed

    def apply(self, layer, x):
        return self.kernel(x)


def with_lora(layer):
    layer.quant_method = Modular(Int4Method(), kernel=None)
    return Transform(Int4Method())
'''

LOADER = '''
from torch import nn

from .methods import MethodBase


def reload_layer(layer: nn.Module):
    quant_method = getattr(layer, "quant_method", None)
    if isinstance(quant_method, MethodBase):
        quant_method.after_load(layer)
'''


def findings(tmp_path, methods: str = METHODS, loader: str = LOADER):
    root = write_tree(tmp_path / "tree", {"serving/__init__.py": "", "serving/methods.py": methods,
                                           "serving/loader.py": loader}) / "serving"
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL003",)))
    return [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence) for f in result.findings + list(result.latent)]


def test_the_hook_the_method_wrapper_inherits_is_found(tmp_path):
    assert findings(tmp_path) == [("Modular", "after_load", "low")]


def test_an_external_base_before_the_definition_may_answer_for_it(tmp_path):
    methods = METHODS.replace("class Modular(MethodBase, Op):", "class Modular(Op, MethodBase):")
    assert findings(tmp_path, methods) == []


def test_without_the_property_it_holds_a_helper(tmp_path):
    methods = METHODS.replace("        return self.old.packed\n", "        return True\n")
    assert findings(tmp_path, methods) == []


def test_a_layer_of_unknown_kind_may_be_a_wrapper_being_looked_through(tmp_path):
    loader = LOADER.replace("def reload_layer(layer: nn.Module):", "def reload_layer(layer):")
    assert findings(tmp_path, loader=loader) == []


def test_without_the_kind_test_the_local_is_unknown(tmp_path):
    loader = LOADER.replace("    if isinstance(quant_method, MethodBase):\n        quant_method.after_load(layer)\n",
                            "    if quant_method is not None:\n        quant_method.after_load(layer)\n")
    assert findings(tmp_path, loader=loader) == []
