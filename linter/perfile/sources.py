"""The source of the files a fix touches, each read and parsed once.

Their bytes, their text in the declared encoding, their libcst tree and what their functions'
parameters default to (the forwarding methods a fix writes copy those)."""

from __future__ import annotations

import ast

import libcst as cst

from ..files.discover import decode_source, open_source
from .summary import is_type_checking


class SourceCache:
    """Each touched file read once, decoded in its declared encoding, parsed once by each parser."""

    def __init__(self):
        self._data: dict[str, bytes] = {}
        self._modules: dict[str, cst.Module | Exception] = {}
        self._trees: dict[str, ast.Module | None] = {}

    def data(self, path: str) -> bytes:
        if path not in self._data:
            with open_source(path) as fh:
                self._data[path] = fh.read()
        return self._data[path]

    def text(self, path: str) -> str:
        return decode_source(self.data(path))

    def module(self, path: str) -> cst.Module:
        """The file's libcst tree (raises libcst's error, remembered, when it has none)."""
        if path not in self._modules:
            try:
                self._modules[path] = cst.parse_module(self.data(path))
            except Exception as exc:  # libcst's parser error, or a decoding error of the bytes
                self._modules[path] = exc
        hit = self._modules[path]
        if isinstance(hit, Exception):
            raise hit
        return hit

    def indent(self, path: str) -> str:
        try:
            return self.module(path).default_indent
        except Exception:
            return "    "

    def runtime_names(self, path: str) -> set[str] | None:
        """Names a module binds at its top level when it runs (imports, defs, classes,
        assignments), leaving out `if TYPE_CHECKING:` blocks; None when annotations are never
        evaluated there (`from __future__ import annotations`)."""
        tree = ast.parse(self.data(path))
        names: set[str] = set()
        stack = list(tree.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.ImportFrom) and node.module == "__future__" and \
                    any(a.name == "annotations" for a in node.names):
                return None
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, ast.If):
                if not is_type_checking(node.test):
                    stack.extend(node.body)
                stack.extend(node.orelse)
            elif isinstance(node, ast.Try):
                stack.extend(node.body + node.orelse + node.finalbody)
                for h in node.handlers:
                    stack.extend(h.body)
        return names

    def defaults(self, path: str, fn) -> tuple[dict[str, str | None], dict[str, str | None]]:
        """Parameter name -> default source text, and -> annotation text, for the function at fn.line."""
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(self.text(path))
            except (SyntaxError, ValueError, UnicodeDecodeError):
                self._trees[path] = None
        tree = self._trees[path]
        if tree is None:
            return {}, {}
        node = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == fn.name and n.lineno == fn.line), None)
        if node is None:
            return {}, {}
        a = node.args
        positional = a.posonlyargs + a.args
        defaults: dict[str, str | None] = {}
        for arg, d in zip(positional[len(positional) - len(a.defaults):], a.defaults):
            defaults[arg.arg] = ast.unparse(d)
        for arg, d in zip(a.kwonlyargs, a.kw_defaults):
            if d is not None:
                defaults[arg.arg] = ast.unparse(d)
        annotations = {arg.arg: ast.unparse(arg.annotation) for arg in positional + a.kwonlyargs
                       if arg.annotation is not None}
        return defaults, annotations


# ------------------------------------------------------------------------------------------------
# Rewriting
# ------------------------------------------------------------------------------------------------
