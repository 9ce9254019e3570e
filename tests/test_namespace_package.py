"""A PEP 420 namespace package is a package: module names follow the tree's own absolute imports.

`sglang/srt` with `sglang/__init__.py` absent (a namespace package, or a partial copy) gave 3
findings instead of 31 on sglang 0.5.23: the modules were named from the folder given (`layers.x`)
while every import says `sglang.srt.layers.x`. Here the AL001 fixture's package is moved under a
namespace folder `corp` (no `__init__.py`) and its imports say `corp.serving...`; the run on
`corp/serving`, with or without `serving/__init__.py`, names the modules `corp.serving...` and
reports what the run with `corp/__init__.py` present reports.
"""

from __future__ import annotations

import shutil

from conftest import FIXTURES

from attn_lint.linter.app.engine import Settings, analyse


def tree(tmp_path, corp_init: bool, serving_init: bool = True):
    root = tmp_path / ("with" if corp_init else "without") / "corp"
    shutil.copytree(FIXTURES / "al001_hidden_hook" / "serving", root / "serving")
    for path in (root / "serving").rglob("*.py"):
        path.write_text(path.read_text().replace("from serving.", "from corp.serving.")
                        .replace("import serving.", "import corp.serving."))
    if corp_init:
        (root / "__init__.py").write_text("")
    if not serving_init:
        (root / "serving" / "__init__.py").unlink()
    return root / "serving"


def run(folder):
    result = analyse([str(folder)], Settings(cache_dir=None))
    return sorted((f.code, f.class_name, f.member) for f in result.findings), sorted({f.module for f in result.files})


def test_a_namespace_folder_above_is_read_from_the_imports(tmp_path):
    expected, modules = run(tree(tmp_path, corp_init=True))
    assert expected and all(m.startswith("corp.serving") for m in modules)
    got, modules = run(tree(tmp_path, corp_init=False))
    assert got == expected
    assert all(m.startswith("corp.serving") for m in modules), modules


def test_the_folder_given_as_a_namespace_package_too(tmp_path):
    expected, _ = run(tree(tmp_path, corp_init=True))
    got, modules = run(tree(tmp_path, corp_init=False, serving_init=False))
    assert got == expected and all(m.startswith("corp.serving") for m in modules), modules


def test_imports_that_name_nothing_above_leave_the_names_alone(tmp_path):
    folder = tree(tmp_path, corp_init=False, serving_init=False)
    for path in folder.rglob("*.py"):
        path.write_text(path.read_text().replace("from corp.serving.", "from elsewhere.serving."))
    _, modules = run(folder)
    assert not any(m.startswith("corp.") for m in modules), modules


def test_imports_never_place_the_tree_above_its_project(tmp_path):
    """A repository whose modules import themselves through the folders above it
    (`from outer.repo.serving...`) must not make a run that knows its project's folders (the
    command line passes the project root as `link_roots`) treat those folders, outside the
    project, as its own: the namespace root stays within the project."""
    repo = tmp_path / "outer" / "repo"
    shutil.copytree(FIXTURES / "al001_hidden_hook" / "serving", repo / "serving")
    (repo / "serving" / "__init__.py").unlink()
    for path in (repo / "serving").rglob("*.py"):
        path.write_text(path.read_text().replace("from serving.", "from outer.repo.serving."))
    bounded = analyse([str(repo / "serving")], Settings(cache_dir=None, link_roots=(str(repo),)))
    modules = {f.module for f in bounded.files}
    assert modules and not any(m.startswith("outer.") for m in modules), modules
    # Asked without the project's folders (an API call), the imports are read as they say.
    _, modules = run(repo / "serving")
    assert all(m.startswith("outer.repo.serving") for m in modules), modules
