"""`linter/` reads as its phases (issue 39): one folder per phase, and a folder imports only from the
folders below it. Every import counts, also one inside a function (a lazy import only hides the
dependency) and one under `if TYPE_CHECKING:` (what a type checker reads is a dependency of the
text). The modules at the top of `linter/` are the vocabulary every phase speaks; they import no
folder."""

from __future__ import annotations

from pathlib import Path

from test_import_cycles import PACKAGES, imports_of, modules_of_project

# From the bottom up. The rules are a package of their own (attn_lint.rules), read by the report
# (their names and docs) and run by the engine; runtime_check sits beside the application.
PHASES = ("attn_lint.linter", "attn_lint.linter.files", "attn_lint.linter.perfile", "attn_lint.linter.model",
          "attn_lint.linter.inference", "attn_lint.linter.signals", "attn_lint.rules", "attn_lint.linter.report",
          "attn_lint.linter.app")


def phase_of(module: str, packages) -> str | None:
    """The phase package holding `module` (a package is its own phase), None outside `linter/`."""
    owner = max((p for p in packages if module == p or module.startswith(p + ".")), key=len, default=None)
    return owner if owner in PHASES else None


def upward_imports(modules: dict[str, Path], packages) -> list[str]:
    rank = {p: i for i, p in enumerate(PHASES)}
    out = []
    for name, path in sorted(modules.items()):
        mine = phase_of(name, packages)
        if mine is None:
            continue
        for target in sorted(imports_of(name, path, modules, typing=True)):
            theirs = phase_of(target, packages)
            if theirs is not None and rank[theirs] > rank[mine]:
                out.append(f"{name} ({mine}) imports {target} ({theirs})")
    return out


def test_every_phase_folder_is_a_package_of_the_table():
    folders = {p for p in PACKAGES if p.startswith("attn_lint.linter")}
    assert folders <= set(PHASES), folders - set(PHASES)
    assert set(PHASES) - {"attn_lint.rules"} <= folders


def test_folders_import_only_downward():
    modules = modules_of_project()
    assert sum(phase_of(m, PACKAGES) == "attn_lint.linter.model" for m in modules) > 10
    assert upward_imports(modules, PACKAGES) == []


def test_the_check_finds_an_upward_import(tmp_path):
    """A model module that imports the engine (even lazily, even for a type) is reported."""
    for rel, text in {"linter/__init__.py": "",
                      "linter/model/__init__.py": "",
                      "linter/model/ctx.py": "from typing import TYPE_CHECKING\n"
                                             "if TYPE_CHECKING:\n    from ..app.engine import Result\n",
                      "linter/model/idx.py": "def f():\n    from ..app import engine\n",
                      "linter/model/ok.py": "from ..refs import x\nfrom . import idx\n",
                      "linter/refs.py": "x = 1\n",
                      "linter/app/__init__.py": "",
                      "linter/app/engine.py": "from ..model import ctx\n"}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    packages = {"attn_lint.linter": "linter", "attn_lint.linter.model": "linter/model",
                "attn_lint.linter.app": "linter/app"}
    modules = {}
    for pkg, folder in packages.items():
        for p in (tmp_path / folder).glob("*.py"):
            modules[pkg if p.name == "__init__.py" else f"{pkg}.{p.stem}"] = p
    assert upward_imports(modules, packages) == [
        "attn_lint.linter.model.ctx (attn_lint.linter.model) imports attn_lint.linter.app.engine (attn_lint.linter.app)",
        "attn_lint.linter.model.idx (attn_lint.linter.model) imports attn_lint.linter.app (attn_lint.linter.app)",
        "attn_lint.linter.model.idx (attn_lint.linter.model) imports attn_lint.linter.app.engine (attn_lint.linter.app)",
    ]
