"""Rename every class, function, method, module and package a tree defines to a neutral name.

`rename_tree(src, dest)` rewrites each Python file of `src` into `dest` with `ast` and
`ast.unparse`: a class becomes `C<n>`, a function or method `f<n>`, a module or package folder
`m<n>`, the same name the same way in every file (definitions, uses, attributes, imports, keyword
arguments and string constants that spell the name, such as `hasattr(x, "hook")` or a dotted
module path). What the tree does not define keeps its name, and so do

* names the language gives a meaning (dunders, builtins, methods of builtin types: a registry's
  `.get` stays a dict's `.get`);
* names built from the platform vocabulary that signals may read as a general pattern (npu, hip,
  rocm, xpu, cuda, mps, cpu, tpu: `is_npu`, `forward_cuda`, a `hip/` folder).

The analysis must find the same findings in the renamed tree, with the same confidence: nothing in
it may depend on what a serving engine calls its classes.
"""

from __future__ import annotations

import ast
import builtins
import os
import re
from pathlib import Path

PLATFORM_WORDS = ("npu", "hip", "rocm", "xpu", "cuda", "mps", "cpu", "tpu")
_PLATFORM = re.compile(r"(?:^|_)(?:" + "|".join(PLATFORM_WORDS) + r")(?:_|$|\d)", re.I)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_LANGUAGE = set(dir(builtins)).union(*(dir(t) for t in (object, dict, list, set, str, tuple, int, type)))


def _keep(name: str) -> bool:
    return name.startswith("__") or name in _LANGUAGE or bool(_PLATFORM.search(name))


def _python_files(src: Path) -> list[Path]:
    return sorted(p for p in src.rglob("*.py") if p.is_file())


def naming(src: Path) -> dict[str, str]:
    """Old name -> new name for everything the tree defines, numbered in a stable order."""
    found: dict[str, str] = {}  # name -> kind prefix (the first kind seen wins: one name, one new name)
    for path in _python_files(src):
        for part in path.relative_to(src).with_suffix("").parts:
            if part != "__init__":
                found.setdefault(part, "m")
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, "C")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(node.name, "f")
    return {name: f"{kind}{i}" for i, (name, kind) in enumerate(sorted(found.items()), 1) if not _keep(name)}


class _Renamer(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def rn(self, name: str | None) -> str | None:
        return self.names.get(name, name) if name else name

    def dotted(self, text: str | None) -> str | None:
        return ".".join(self.names.get(p, p) for p in text.split(".")) if text else text

    def visit_Name(self, node):
        node.id = self.rn(node.id)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.attr = self.rn(node.attr)
        return node

    def _define(self, node):
        self.generic_visit(node)
        node.name = self.rn(node.name)
        return node

    visit_ClassDef = visit_FunctionDef = visit_AsyncFunctionDef = _define

    def visit_arg(self, node):
        self.generic_visit(node)
        node.arg = self.rn(node.arg)
        return node

    def visit_keyword(self, node):
        self.generic_visit(node)
        node.arg = self.rn(node.arg)
        return node

    def visit_alias(self, node):
        node.name = self.dotted(node.name)
        node.asname = self.rn(node.asname)
        return node

    def visit_ImportFrom(self, node):
        self.generic_visit(node)
        node.module = self.dotted(node.module)
        return node

    def visit_Global(self, node):
        node.names = [self.rn(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global

    def visit_Constant(self, node):
        # A string that spells a defined name (or a dotted path of identifiers) names it.
        if isinstance(node.value, str) and all(_IDENT.fullmatch(p) for p in node.value.split(".")):
            node.value = self.dotted(node.value)
        return node


def rename_tree(src: Path, dest: Path, names: dict[str, str] | None = None) -> dict[str, str]:
    """Write the renamed copy of `src` under `dest`; returns the names used."""
    names = naming(src) if names is None else names
    for path in _python_files(src):
        rel = path.relative_to(src)
        parts = [names.get(p, p) for p in rel.parent.parts]
        stem = names.get(rel.stem, rel.stem)
        out = dest.joinpath(*parts, stem + ".py")
        out.parent.mkdir(parents=True, exist_ok=True)
        tree = _Renamer(names).visit(ast.parse(path.read_bytes()))
        out.write_text(ast.unparse(ast.fix_missing_locations(tree)) + "\n")
    return names


def rename_path(path: str, names: dict[str, str]) -> str:
    """A relative file path as the renamed tree spells it."""
    parts = path.replace(os.sep, "/").split("/")
    stem, _, ext = parts[-1].rpartition(".")
    return "/".join([*(names.get(p, p) for p in parts[:-1]), names.get(stem, stem) + "." + ext])
