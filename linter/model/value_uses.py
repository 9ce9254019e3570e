"""Whether a function or a method is used as a value somewhere: passed to another call
(`run(callback)`, `partial(f, ...)`, `wrap(True)(f)`), stored (`table[k] = f`, `self.cb = obj.m`),
returned, aliased (`g = f`), applied as a decorator, or fetched by name (`getattr(x, "m")`). Then
something the tree does not show may call it, and the calls the tree shows are not all of its
callers.

Methods: the per-file walk notes every attribute loaded as a value (neither called nor read from)
and every `getattr` by a literal name (ModuleSummary.attr_values); a method is used as a value when
any module notes its name, whatever the object.

Functions: recording every name loaded as a value would cost the walk a good part of its time
(names are the commonest node, and it skips them), so this reads the source again, only for the
few functions a pass asks about, and only in the modules that can name them: their own, the ones
importing them or their module, and `*` imports. A text test finds the mentions that are not a
call, a `def`, an import, a comment or a one-line string; only a module with such a mention is
parsed and decides on its syntax tree. A file that cannot be read or parsed counts as a use: the
answer errs towards "used", which keeps a pass's wider answer. A name computed at run time
(`getattr(module, name)`) is seen by no pass.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from ..files.source_lines import read_source
from ..perfile.summary import dotted

if TYPE_CHECKING:
    from .index import TreeIndex


class ValueUses:
    def __init__(self, index: TreeIndex):
        self.index = index
        self._text: dict[str, bytes | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._memo: dict[tuple, bool] = {}
        self._imports: dict[str, list] | None = None
        self._attr_values: set[str] | None = None

    # --- the questions ---------------------------------------------------------------------------
    def function(self, module: str, name: str) -> bool:
        """Whether the module-level function `module.name` is used other than called by name."""
        key = ("f", module, name)
        if key not in self._memo:
            self._memo[key] = self._function(module, name)
        return self._memo[key]

    def method(self, name: str) -> bool:
        """Whether some module loads an attribute `name` other than to call it (`obj.name` as a
        value) or fetches it by `getattr(x, "name")`: a method of that name may be called from
        anywhere."""
        key = ("m", name)
        if key not in self._memo:
            self._memo[key] = self._method(name)
        return self._memo[key]

    # --- functions -------------------------------------------------------------------------------
    def _function(self, module: str, name: str) -> bool:
        qual = f"{module}.{name}"
        names: dict[str, set[str]] = {module: {name}}  # module -> the locals naming the function
        dotted: dict[str, set[str]] = {}  # module -> the dotted names of its module (`pkg.mod`)
        for key in {name, *module.split(".")}:
            for m, imp in self.importers(key):
                if imp.name == "*":
                    names.setdefault(m, set()).add(name)  # taken from whichever module: assume this one
                    continue
                sym = self.index.resolve_name(m, imp.local)
                if sym is None:
                    continue
                if sym.qual == qual:
                    names.setdefault(m, set()).add(imp.local)
                elif sym.kind == "module" and (sym.qual == module or module.startswith(sym.qual + ".")):
                    dotted.setdefault(m, set()).add(imp.local + module[len(sym.qual):])
        for m in sorted(set(names) | set(dotted)):
            local, via = names.get(m, set()), dotted.get(m, set())
            path = self.index.modules[m].file.path
            text = self._source(path)
            if text is None:
                return True
            quoted = (b'"%s"' % name.encode(), b"'%s'" % name.encode())
            if not any(_suspicious(text, n.encode()) for n in (*local, *(f"{v}.{name}" for v in via))) \
                    and not (via and (quoted[0] in text or quoted[1] in text)):
                continue  # every mention is a call, a `def`, an import, a comment or a one-line string
            tree = self._tree(path)
            if tree is None or _uses_as_value(tree, local, via, name):
                return True
        return False

    def importers(self, key: str) -> list:
        """(module, import) for every import of the tree that may bind a function or module under
        `key`: importing that name, or for `import a.b`, a module whose last part it is; and every
        `*` import, which may take anything."""
        if self._imports is None:
            table: dict[str, list] = {}
            for m, mod in self.index.modules.items():
                for imp in mod.summary.imports:
                    name = imp.module.rpartition(".")[2] if imp.name is None else imp.name
                    table.setdefault(name, []).append((m, imp))
            self._imports = table
        return [*self._imports.get(key, ()), *self._imports.get("*", ())]

    def keyword_passed(self, name: str) -> bool:
        """Whether some call in the tree passes a keyword `name` (`f(..., name=x)`). The summaries
        keep the keywords of calls of locals and of constructions only, so the modules' text is
        read: a module mentioning `name =` at all is parsed (once) and its calls looked at."""
        key = ("k", name)
        if key not in self._memo:
            self._memo[key] = self._keyword_passed(name)
        return self._memo[key]

    def _keyword_passed(self, name: str) -> bool:
        mention = re.compile(rb"\b" + re.escape(name.encode()) + rb"\s*=(?!=)")
        for mod in self.index.modules.values():
            text = self._source(mod.file.path)
            if text is None:
                return True  # unreadable: it may pass it
            if not mention.search(text):
                continue
            tree = self._tree(mod.file.path)
            if tree is None or any(isinstance(n, ast.Call) and any(kw.arg == name for kw in n.keywords)
                                   for n in ast.walk(tree)):
                return True
        return False

    # --- methods ---------------------------------------------------------------------------------
    def _method(self, name: str) -> bool:
        if self._attr_values is None:
            self._attr_values = {a for mod in self.index.modules.values() for a in mod.summary.attr_values}
        return name in self._attr_values

    # --- reading ---------------------------------------------------------------------------------
    def _source(self, path: str) -> bytes | None:
        if path not in self._text:
            self._text[path] = read_source(path)
        return self._text[path]

    def _tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            text = self._source(path)
            try:
                self._trees[path] = ast.parse(text) if text is not None else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._trees[path] = None
        return self._trees[path]


_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]")
_IMPORT_LIST = re.compile(rb"\bimport[ \t]*\(([^)]*)\)")


def _suspicious(text: bytes, name: bytes) -> bool:
    """Whether the text mentions `name` (a plain or dotted name) other than as a callee (`name(`),
    a definition (`def name`), an imported name, or in a comment or a one-line string: the cheap
    test before the syntax tree."""
    if name not in text:
        return False
    pattern = re.compile(re.escape(name) + rb"\b")  # led by a literal: `re` scans for it first
    lists = None
    for hit in pattern.finditer(text):
        at, end = hit.start(), hit.end()
        if at and (text[at - 1:at].isalnum() or text[at - 1:at] in b"_."):
            continue  # part of a longer name, or an attribute of something else
        if text[end:end + 80].lstrip(b" \t")[:1] == b"(":
            continue
        head = text[text.rfind(b"\n", 0, at) + 1:at]
        if head.rstrip().endswith(b"def") or _IMPORT_LINE.match(head):
            continue
        if _in_comment_or_string(head):
            continue
        if lists is None:
            lists = [m.span(1) for m in _IMPORT_LIST.finditer(text)]
        if any(a <= at < b for a, b in lists):
            continue
        return True
    return False


def _in_comment_or_string(head: bytes) -> bool:
    """Whether the end of this line's start lies in a comment or a string begun on the line (a
    string begun on an earlier line is not seen: then the syntax tree decides)."""
    quote = None
    i, n = 0, len(head)
    while i < n:
        c = head[i:i + 1]
        if quote is None:
            if c == b"#":
                return True
            if c in (b'"', b"'"):
                quote = head[i:i + 3] if head[i:i + 3] in (b'"""', b"\'\'\'") else c
                i += len(quote)
                continue
        elif c == b"\\":
            i += 2
            continue
        elif head.startswith(quote, i):
            i += len(quote)
            quote = None
            continue
        i += 1
    return quote is not None


def _uses_as_value(tree: ast.Module, names: set[str], modules: set[str], attr: str) -> bool:
    """A load of one of `names`, or of `<one of modules>.attr`, that is not the callee of a call;
    a decorator (`@name`) counts: the tree shows no call of what it returns."""
    callees: set[int] = set()  # a call is walked before its callee (breadth first)
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Call:
            callees.add(id(node.func))
        elif kind is ast.Name:
            if node.id in names and type(node.ctx) is ast.Load and id(node) not in callees:
                return True
        elif kind is ast.Attribute:
            if modules and node.attr == attr and id(node) not in callees and dotted(node.value) in modules:
                return True
        elif kind is ast.Constant and modules and node.value == attr:
            return True  # `getattr(module, "name")`
    return False

