"""Method objects as a family: a call on an object a factory of configurations builds for the caller.

`FusedMoE.__init__` stores `quant_config.get_quant_method(self, prefix)`; each configuration's
override returns the method class for the layer's kind (`isinstance(layer, FusedMoE)`), and
`FusedMoE.forward` calls `self.quant_method.apply(layer=self, ..., scoring_func=...)`. The member
is declared on the methods' base (`apply(self, layer, *args, **kwargs)`), so a type checker
accepts the call; one configuration's MoE method that did not gain `scoring_func` raises TypeError
on every MoE layer of every model quantised with it (vLLM 0.6.6: AWQ, GPTQ-Marlin, int8 experts,
two compressed-tensors methods; fixed in 0.6.6.post1).

Before this check no finding was made at all: the declared member kept AL002 away.
"""

from __future__ import annotations

from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse

LAYERS = '''
from .quant import QuantConfig


class LinearBase:
    pass


class Linear(LinearBase):
    def __init__(self, quant_config: QuantConfig, prefix: str = ""):
        self.quant_method = quant_config.get_quant_method(self, prefix)

    def forward(self, x):
        return self.quant_method.apply(self, x)


class FusedMoE:
    def __init__(self, quant_config: QuantConfig, prefix: str = ""):
        self.quant_method = quant_config.get_quant_method(self, prefix)

    def forward(self, x, logits):
        return self.quant_method.apply(layer=self, x=x, router_logits=logits, scoring_func="sigmoid")
'''

QUANT = '''
def skipped(prefix):
    return prefix.startswith("lm_head")


class QuantizeMethodBase:
    def apply(self, layer, *args, **kwargs):
        raise NotImplementedError


class LinearMethod(QuantizeMethodBase):
    def apply(self, layer, x, bias=None):
        return x


class MoEMethod(QuantizeMethodBase):
    def apply(self, layer, x, router_logits, scoring_func="softmax"):
        return x


class AwqMoEMethod(QuantizeMethodBase):
    def apply(self, layer, x, router_logits):          # FusedMoE passes scoring_func: TypeError
        return x


class QuantConfig:
    def get_quant_method(self, layer, prefix):
        raise NotImplementedError


class Fp8Config(QuantConfig):
    def get_quant_method(self, layer, prefix):
        from .layers import FusedMoE, LinearBase

        if isinstance(layer, LinearBase):
            return LinearMethod()
        if isinstance(layer, FusedMoE):
            return MoEMethod()
        return None


class AwqConfig(QuantConfig):
    def get_quant_method(self, layer, prefix):
        from .layers import FusedMoE, LinearBase

        if skipped(prefix):
            return LinearMethod()                       # any layer a checkpoint lists: not the kind's
        if isinstance(layer, LinearBase):
            return LinearMethod()
        elif isinstance(layer, FusedMoE):
            return AwqMoEMethod()
        return None


CONFIGS = {"fp8": Fp8Config, "awq": AwqConfig}


def get_config(name):
    return CONFIGS[name]()
'''

FP8_BODY = """        if isinstance(layer, LinearBase):
            return LinearMethod()
        if isinstance(layer, FusedMoE):
            return MoEMethod()
        return None"""

FIXED = QUANT.replace("    def apply(self, layer, x, router_logits):          # FusedMoE passes scoring_func: TypeError\n",
                      "    def apply(self, layer, x, router_logits, scoring_func=\"softmax\"):\n")


def findings(tmp_path, layers: str = LAYERS, quant: str = QUANT, name: str = "serving", show_latent=False):
    root = write_tree(tmp_path / "tree", {f"{name}/__init__.py": "", f"{name}/layers.py": layers,
                                           f"{name}/quant.py": quant}) / name
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL002",)))
    out = result.findings + (list(result.latent) if show_latent else [])
    return [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence, [t.rsplit(".", 1)[-1] for t in f.targets],
             f) for f in out]


def test_a_configurations_method_for_the_layers_kind_that_cannot_bind_the_call(tmp_path):
    ((cls, member, level, targets, f),) = findings(tmp_path)
    assert (cls, member, level, targets) == ("FusedMoE", "apply", "medium", ["AwqMoEMethod"])
    assert "unexpected keyword argument 'scoring_func'" in f.message
    notes = [e.note for e in f.evidence]
    assert any("`AwqConfig.get_quant_method()` returns `AwqMoEMethod` for the object `quant_config` is asked "
               "about" in n and "under a test its kind passes" in n for n in notes), notes


def test_the_fixed_method_is_clean(tmp_path):
    assert findings(tmp_path, quant=FIXED, show_latent=True) == []


def test_a_return_for_another_kind_is_never_paired(tmp_path):
    """`LinearMethod.apply` cannot take `router_logits` either, but its return sits under
    `isinstance(layer, LinearBase)`, which no `FusedMoE` passes, even inside a test that every
    layer passes: a `FusedMoE` is never handed one."""
    quant = QUANT.replace(FP8_BODY, "        if isinstance(layer, (LinearBase, FusedMoE)):\n"
                                    "            if isinstance(layer, LinearBase):\n"
                                    "                return LinearMethod()\n"
                                    "            return MoEMethod()\n"
                                    "        return None")
    assert quant != QUANT
    ((_, _, _, targets, _),) = findings(tmp_path, quant=quant)
    assert targets == ["AwqMoEMethod"]


def test_an_early_exit_for_other_kinds_names_the_kind_too(tmp_path):
    quant = QUANT.replace('''        if skipped(prefix):
            return LinearMethod()                       # any layer a checkpoint lists: not the kind's
        if isinstance(layer, LinearBase):
            return LinearMethod()
        elif isinstance(layer, FusedMoE):
            return AwqMoEMethod()
        return None''', '''        if not isinstance(layer, FusedMoE) or skipped(prefix):
            return Fp8Config().get_quant_method(layer, prefix)
        return AwqMoEMethod()''')
    assert quant != QUANT
    ((cls, _, level, targets, _),) = findings(tmp_path, quant=quant)
    assert (cls, level, targets) == ("FusedMoE", "medium", ["AwqMoEMethod"])


def test_a_method_built_only_on_a_test_that_says_nothing_of_the_layer_is_not_claimed(tmp_path):
    quant = QUANT.replace("        elif isinstance(layer, FusedMoE):\n            return AwqMoEMethod()\n",
                          "        if skipped(prefix):\n            return AwqMoEMethod()\n")
    assert quant != QUANT
    assert findings(tmp_path, quant=quant, show_latent=True) == []


def test_a_configuration_nothing_builds_serves_no_layer(tmp_path):
    quant = QUANT.replace('CONFIGS = {"fp8": Fp8Config, "awq": AwqConfig}', 'CONFIGS = {"fp8": Fp8Config}')
    assert findings(tmp_path, quant=quant, show_latent=True) == []


def test_a_call_under_a_test_is_latent(tmp_path):
    layers = LAYERS.replace(
        '        return self.quant_method.apply(layer=self, x=x, router_logits=logits, scoring_func="sigmoid")\n',
        '        if logits is None:\n            return x\n'
        '        return self.quant_method.apply(layer=self, x=x, router_logits=logits, scoring_func="sigmoid")\n')
    layers = layers.replace("        if logits is None:\n            return x\n        return self",
                            "        if logits is not None:\n            return self")
    assert "if logits is not None" in layers
    ((_, _, level, targets, f),) = findings(tmp_path, layers=layers, show_latent=True)
    assert (level, targets) == ("low", ["AwqMoEMethod"])
    assert f.confidence_reasons[0].signal == "factory-built"


def test_renamed_the_same(tmp_path):
    ren = {"FusedMoE": "Experts", "LinearBase": "DenseBase", "get_quant_method": "method_for",
           "quant_method": "qm", "apply": "run", "AwqMoEMethod": "Q4Experts", "AwqConfig": "Q4Cfg",
           "scoring_func": "gate_fn"}

    def rename(text):
        for a, b in ren.items():
            text = text.replace(a, b)
        return text

    ((cls, member, level, targets, _),) = findings(tmp_path, layers=rename(LAYERS), quant=rename(QUANT),
                                                   name="engine")
    assert (cls, member, level, targets) == ("Experts", "run", "medium", ["Q4Experts"])


def test_a_built_layer_whose_call_runs_whenever_its_method_does_is_high(tmp_path):
    """The layer is built (`FusedMoE(config)`), the factory names the method for its kind, and
    `forward` makes the call with no test before it: the pairing and the call are the code's own."""
    layers = LAYERS + '''

def build(config: QuantConfig):
    return [Linear(config), FusedMoE(config)]
'''
    ((cls, _, level, targets, f),) = findings(tmp_path, layers=layers)
    assert (cls, level, targets) == ("FusedMoE", "high", ["AwqMoEMethod"])
    assert f.confidence_reasons[0].signal == "factory-built"
    assert "its configurations' factory builds `AwqMoEMethod` for its kind" in f.confidence_reasons[0].note
