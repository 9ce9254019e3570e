"""An import is matched to a tree module by its end only where the tree is named from below or
above the import root, never with both ends cut. Before, a plug-in laid out like its host had
`from vllm.model_executor.layers.linear import LinearBase` resolved to its own
`vllm_rbln.model_executor.layers.linear` (57 imports of vllm-rbln 0.12.0 went to the plug-in's own
modules), so its classes took the plug-in's classes of the same name as their bases."""

from __future__ import annotations

from attn_lint.linter.app.engine import Settings, analyse


def plugin(tmp_path):
    pkg = tmp_path / "plugpkg"
    (pkg / "layers").mkdir(parents=True)
    (pkg / "models").mkdir()
    for folder in (pkg, pkg / "layers", pkg / "models"):
        (folder / "__init__.py").write_text("")
    (pkg / "layers" / "linear.py").write_text("class LinearBase:\n    def forward(self, x):\n        return x\n")
    (pkg / "models" / "model.py").write_text(
        "from hostpkg.layers.linear import LinearBase\n\n\nclass MyLayer(LinearBase):\n    pass\n")
    return pkg


def test_a_host_import_is_not_the_plugins_module_of_the_same_path(tmp_path):
    result = analyse([str(plugin(tmp_path))], Settings(cache_dir=None))
    assert result.stats["outside_bases"] == {"hostpkg": [1, 1]}  # MyLayer's base is the host's


def test_a_tree_named_from_below_its_import_root_still_resolves(tmp_path):
    """`layers.linear` analysed as its own root, imported as `plugpkg.layers.linear`: the module's
    whole name ends the import, so it is the one meant."""
    pkg = plugin(tmp_path)
    (pkg / "models" / "model.py").write_text(
        "from plugpkg.layers.linear import LinearBase\n\n\nclass MyLayer(LinearBase):\n    pass\n")
    (pkg / "__init__.py").unlink()
    result = analyse([str(pkg)], Settings(cache_dir=None))
    assert result.stats["outside_bases"] == {}


def test_a_project_named_from_below_keeps_its_label(tmp_path):
    """Two projects with the same module names are told apart by a label (`p1:serving.base`); an
    import of `corp.serving.base` inside one is that project's own module, matched by its end
    with the label kept (never another project's)."""
    for project in ("p1", "p2"):
        pkg = tmp_path / project / "serving"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "base.py").write_text("class Base:\n    def run(self):\n        return 1\n")
        (pkg / "impl.py").write_text("from corp.serving.base import Base\n\n\nclass Impl(Base):\n    pass\n")
    result = analyse([str(tmp_path / "p1"), str(tmp_path / "p2")], Settings(cache_dir=None), keep_context=True)
    index = result.context.index
    assert sorted(index.classes) == sorted(f"{p}:serving.{m}" for p in ("p1", "p2") for m in ("base.Base", "impl.Impl"))
    assert result.stats["outside_bases"] == {}
    assert index.bases("p1:serving.impl.Impl")[0] == ["p1:serving.base.Base"]
