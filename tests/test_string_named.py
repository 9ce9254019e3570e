"""A class a table names by two strings, its module and its name, is handed out (a lazy registry).

Model registries import their classes on demand: `MODELS = {"TeleChat2": ("telechat2",
"TeleChat2ForCausalLM")}`, then `import_module` and `getattr`. No call of the class and no use of
it as a value appears, so before this the tree showed no construction: vLLM 0.8.3's
`TeleChat2ForCausalLM` (whose `_init_model` override lacks the `layer_type` its base's `__init__`
passes: a TypeError on construction) was latent, and so was 0.28.0's Gemma 3
`encoder_eager_forward` without `path`. A pair counts only where a class of that name lives in a
module whose dotted name ends with the first string.
"""

from __future__ import annotations

from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse

LLAMA = '''
class LlamaForCausalLM:
    def __init__(self, config, prefix=""):
        self.model = self._init_model(config, prefix=prefix, layer_type="decoder")

    def _init_model(self, config, prefix="", layer_type="decoder"):
        return (config, prefix, layer_type)
'''

TELECHAT = '''
from .llama import LlamaForCausalLM


class TeleChat2ForCausalLM(LlamaForCausalLM):
    def _init_model(self, config, prefix=""):              # the base's `__init__` passes layer_type
        return (config, prefix)
'''

REGISTRY = '''
import importlib

MODELS = {
    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),
    "TeleChat2ForCausalLM": ("telechat2", "TeleChat2ForCausalLM"),
}


def load(arch):
    module, name = MODELS[arch]
    return getattr(importlib.import_module(f"serving.models.{module}"), name)
'''


def findings(tmp_path, registry: str = REGISTRY):
    files = {"serving/__init__.py": "", "serving/models/__init__.py": "", "serving/models/llama.py": LLAMA,
             "serving/models/telechat2.py": TELECHAT, "serving/models/registry.py": registry}
    root = write_tree(tmp_path / "tree", files) / "serving"
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL002",)))
    return [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence, [r.note for r in f.confidence_reasons])
            for f in result.findings + list(result.latent)]


def test_a_class_named_by_strings_in_a_table_is_built(tmp_path):
    ((cls, member, level, reasons),) = findings(tmp_path)
    assert (cls, member, level) == ("LlamaForCausalLM", "_init_model", "high")
    assert "`TeleChat2ForCausalLM` is named, with its module, in a table of classes imported by name" in reasons[0]


def test_without_the_table_it_is_latent(tmp_path):
    registry = REGISTRY.replace('    "TeleChat2ForCausalLM": ("telechat2", "TeleChat2ForCausalLM"),\n', "")
    ((_, _, level, _),) = findings(tmp_path, registry)
    assert level == "low"


def test_a_pair_whose_module_holds_no_such_class_names_nothing(tmp_path):
    registry = REGISTRY.replace('("telechat2", "TeleChat2ForCausalLM")', '("llama", "TeleChat2ForCausalLM")')
    ((_, _, level, _),) = findings(tmp_path, registry)
    assert level == "low"


def test_renamed_the_same(tmp_path):
    files = {"engine/__init__.py": "", "engine/models/__init__.py": ""}
    ren = {"LlamaForCausalLM": "BaseLM", "TeleChat2ForCausalLM": "OtherLM", "_init_model": "_build_body",
           "layer_type": "block_kind", "telechat2": "other", "llama": "base", "serving": "engine"}

    def rename(text):
        for a, b in ren.items():
            text = text.replace(a, b)
        return text

    files.update({"engine/models/base.py": rename(LLAMA), "engine/models/other.py": rename(TELECHAT),
                  "engine/models/registry.py": rename(REGISTRY)})
    root = write_tree(tmp_path / "tree", files) / "engine"
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL002",)))
    assert [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence) for f in result.findings] == \
        [("BaseLM", "_build_body", "high")]
