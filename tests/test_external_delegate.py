"""A delegate the code loads from outside the tree holds no class of the tree.

`self._loader = make(...)`, where `make` returns an instance of a class fetched from a module the
code loads with `importlib` by a constant name that is no module of the tree: the delegate's
annotation (`-> BaseLoader`) stands in for that outside class. Whoever builds the wrapper, none of
the tree's implementations is ever in the delegate, so the wrapper's pairings with them are
latent (`unknown-delegate`). Before this, vLLM 0.34.0's `ModelExpressModelLoader` was reported
twice in the default report (judged false: tests/data/labels/vllm-0.34.0.json).
"""

from __future__ import annotations

import pytest
from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.linter.model import confidence

BASE = '''
class BaseLoader:
    def load(self, model):
        raise NotImplementedError

    def all_weights(self, model):
        raise NotImplementedError


class DiskLoader(BaseLoader):
    def load(self, model):
        return model

    def all_weights(self, model):
        return [model]
'''

WRAPPER = '''
import importlib

from {pkg}.base import BaseLoader

OUTSIDE_PREFIX = "{module}"


class {wrapper}(BaseLoader):
    def __init__(self, config):
        self._loader = self._make(config)

    @staticmethod
    def _make(config) -> BaseLoader:
        module = {importer}
        cls = module.Loader
        return cls(config)

    def load(self, model):
        return self._loader.load(model)
'''

USE = '''
from {pkg}.base import BaseLoader


def reload(loader: BaseLoader, model):
    return loader.all_weights(model)
'''


def tree(tmp_path, *, module="outside_pkg.loaders", importer="importlib.import_module(OUTSIDE_PREFIX)",
         pkg="serving", wrapper="ExternalLoader"):
    files = {f"{pkg}/__init__.py": "", f"{pkg}/base.py": BASE,
             f"{pkg}/external.py": WRAPPER.format(pkg=pkg, module=module, importer=importer, wrapper=wrapper),
             f"{pkg}/use.py": USE.format(pkg=pkg), f"{pkg}/loaders.py": "class Loader:\n    pass\n"}
    return write_tree(tmp_path / "tree", files) / pkg


def al003(root) -> list[tuple[str, str, str]]:
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL003",)))
    return [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence) for f in result.findings]


@pytest.mark.parametrize("importer", ["importlib.import_module(OUTSIDE_PREFIX)",
                                      'importlib.import_module("outside_pkg.loaders")'])
def test_a_delegate_loaded_from_outside_is_latent(tmp_path, importer):
    root = tree(tmp_path, importer=importer)
    assert al003(root) == [("ExternalLoader", "all_weights", "low")]
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL003",)))
    (reason,) = {r.note for r in result.findings[0].confidence_reasons}
    assert reason == ("`self._loader` of `ExternalLoader` holds only `outside_pkg.loaders.Loader`, from outside "
                      "the tree: never `DiskLoader`")


def test_import_module_imported_by_name_counts_too(tmp_path):
    root = tree(tmp_path, importer="import_module(OUTSIDE_PREFIX)")
    (root / "external.py").write_text((root / "external.py").read_text().replace(
        "import importlib\n", "from importlib import import_module\n"))
    assert al003(root) == [("ExternalLoader", "all_weights", "low")]


def test_a_module_of_the_tree_loaded_by_name_is_not_outside(tmp_path):
    """`importlib.import_module("serving.loaders")` names the tree's own module: what it holds is
    not known to be outside, and the pairing stays."""
    root = tree(tmp_path, module="serving.loaders")
    assert al003(root) == [("ExternalLoader", "all_weights", "medium")]


def test_an_outside_class_in_one_branch_and_the_trees_in_another_keeps_the_pairing(tmp_path):
    root = tree(tmp_path)
    text = (root / "external.py").read_text().replace(
        "        return cls(config)\n",
        "        if config:\n            return cls(config)\n        from serving.base import DiskLoader\n"
        "        return DiskLoader()\n")
    (root / "external.py").write_text(text)
    assert al003(root) == [("ExternalLoader", "all_weights", "medium")]


def test_the_same_tree_renamed_gives_the_same_finding(tmp_path):
    root = tree(tmp_path, pkg="engine", wrapper="ThinShim", module="vendor.thing")
    assert al003(root) == [("ThinShim", "all_weights", "low")]


def test_a_spent_pairing_budget_still_assesses_a_small_finding_whole(tmp_path, monkeypatch):
    """Past the run's pairing budget a finding is assessed on its first CUT_PAIRINGS pairings; one
    with fewer than that is assessed whole, and its dead pairings still make it latent."""
    monkeypatch.setattr(confidence, "MAX_PAIRINGS", 0)
    root = tree(tmp_path)
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL003",)))
    assert [(f.member, f.confidence) for f in result.findings] == [("all_weights", "low")]
    assert result.stats["partly_assessed"] == 0
