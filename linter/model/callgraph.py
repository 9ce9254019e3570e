"""Who calls and builds what: the tree's calls of each member, its constructions by class, the
calls of a plain function by name, and the calls that run a class's `__init__`.

Made from the modules' facts and summaries (and a function's own text where a `cls(...)` call is
not summarised), before anything reads families or wrappers: passed_values.py, registries.py,
param_callers.py and the family model all ask it, and it asks none of them.
"""

from __future__ import annotations

import ast
from functools import cached_property

from ..perfile.summary import EXPRESSIONS
from ..refs import call_gate, is_attr, is_name, is_super_init
from .facts import ModuleFacts, function_ref, scopes_of
from .function_text import FunctionText
from .index import TreeIndex
from .resolve import Resolver, Scope
from .value_uses import ValueUses

_NAME_CALLS = "call-graph-name-calls"  # the key of a module's calls by called name (_name_calls)


class CallGraph:
    def __init__(self, index: TreeIndex, resolver: Resolver, facts: dict[str, ModuleFacts],
                 value_uses: ValueUses, text: FunctionText):
        self.index = index
        self.resolver = resolver
        self.facts = facts
        self.value_uses = value_uses
        self.text = text
        self._calls_memo: dict[tuple, list] = {}

    @cached_property
    def member_calls(self) -> dict[str, list]:
        """Member -> (site, call, (receiver, member, how)) of every call of it in the tree, from
        the modules' facts (the Context's `member_calls` is this one dict)."""
        out: dict[str, list] = {}
        for facts in self.facts.values():
            for member, entries in facts.member_calls.items():
                out.setdefault(member, []).extend(entries)
        return out

    @cached_property
    def constructions_by_name(self) -> dict[str, list[tuple[Scope, tuple]]]:
        out: dict[str, list[tuple[Scope, tuple]]] = {}
        for facts in self.facts.values():
            for last, scope, construction in facts.constructions:
                out.setdefault(last, []).append((scope, construction))
        return out

    def calls_of(self, scope: Scope) -> list[tuple[Scope, tuple, str]]:
        """The calls the tree shows of the function `scope` is in, with their arguments: the
        constructions of its class for an `__init__`, else the recorded calls (those passing a
        constructed object: see summary's `constructions`) whose callee resolves to it."""
        fn = scope.fn
        if fn is None or fn.name == "<module>":
            return []
        if fn.name == "__init__" and scope.cls:
            return self.init_calls(scope.cls)
        ref = function_ref(scope.module, scope.cls, fn)
        hit = self._calls_memo.get(ref)
        if hit is None:
            hit = self._calls_memo[ref] = [
                (cscope, construction, f"{fn.name}(...)")
                for cscope, construction in self.constructions_by_name.get(fn.name, ())
                if not is_super_init(construction[0]) and ref in self.resolver.resolve(construction[0], cscope).types]
        return hit

    def built_by_name(self, qual: str, called: dict[str, list]) -> bool:
        """Whether some call in the tree builds `qual` by its name (`Impl(...)`, `mod.Impl(x)`,
        `cls = Impl; cls(...)`); `called` maps a name to the (module, ...) places calling it
        directly, also without arguments (the model-reach tables keep one)."""
        if self.constructions_of(qual, True):
            return True
        short = qual.rsplit(".", 1)[-1]
        return any(getattr(self.index.resolve_name(module, short), "qual", None) == qual
                   for module in {c[0] for c in called.get(short, ())})

    def init_calls(self, qual: str, own_init: bool = True) -> list[tuple[Scope, tuple, str]]:
        """The calls that run `qual`'s `__init__` for an instance of `qual`: its constructions, and
        where `qual` defines that `__init__` (`own_init`), those of its subclasses that inherit it
        and the `super().__init__(...)` of those that do not. Each with a label for evidence."""
        short = qual.rsplit(".", 1)[-1]
        out = [(scope, c, f"{short}(...)") for scope, c in self.constructions_of(qual, True)]
        # `cls(...)` in a classmethod of the class builds it (or the subclass it is called on).
        entry = self.index.classes[qual]
        for m in entry.info.methods.values():
            if m.kind == "classmethod" and m.params:
                scope = Scope(entry.module, qual, m)
                out.extend((scope, c, f"{short}.{m.name}: cls(...)") for c in self.cls_calls(scope))
        if own_init:
            for sub in sorted(self.index.subclasses.get(qual, ())):
                sub_init = self.index.classes[sub].info.methods.get("__init__")
                if sub_init is None:
                    out.extend((scope, c, f"{sub.rsplit('.', 1)[-1]}(...)")
                               for scope, c in self.constructions_of(sub, True))
                    continue
                entry = self.index.classes[sub]
                out.extend((Scope(entry.module, sub, sub_init), c, "super().__init__(...)")
                           for c in sub_init.constructions if is_super_init(c[0]))
        return out

    def cls_calls(self, scope: Scope) -> list[tuple]:
        """The `cls(...)` calls of a classmethod, as constructions (callee, args, kwargs, star),
        read from its text (the summary keeps calls of class names only)."""
        node = self.text.function_node(scope) if scope.fn.params else None
        if node is None:
            return []
        cls_name = scope.fn.params[0].name
        out = []
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == cls_name:
                star = any(isinstance(a, ast.Starred) for a in n.args) or any(k.arg is None for k in n.keywords)
                out.append((("name", cls_name),
                            tuple(None if isinstance(a, ast.Starred) else EXPRESSIONS.ref(a) for a in n.args),
                            tuple((k.arg, EXPRESSIONS.ref(k.value)) for k in n.keywords if k.arg), star))
        return out

    def constructions_of(self, qual: str, through_locals: bool = False) -> list[tuple[Scope, tuple]]:
        """The calls that build `qual` by name (`Split(...)`), and with `through_locals` also
        through a local bound to the class (`cls = Split` then `cls(...)`; model-reach follows
        those itself, by the lines the local is called on)."""
        short = qual.rsplit(".", 1)[-1]
        out = []
        for scope, construction in self.constructions_by_name.get(short, ()):
            callee = construction[0]
            if is_super_init(callee) or (not through_locals and is_name(callee) and callee[1] != short
                                        and callee[1] in scope.fn.locals):
                continue
            res = self.resolver.resolve(construction[0], scope)
            if ("cls", qual) in res.types or self._imported_as(scope.module, callee, qual):
                out.append((scope, construction))
        return out

    def _imported_as(self, module: str, callee: tuple, qual: str) -> bool:
        """Whether some import of `module` binds the called name to `qual`: imports under
        branches (`if npu: from a import X` / `else: from b import Y as X`) bind it to either,
        while name resolution takes the last one."""
        if not is_name(callee):
            return False
        mod = self.index.modules.get(module)
        imports = [imp for imp in mod.summary.imports if imp.local == callee[1]] if mod else []
        return len(imports) > 1 and any(getattr(self.index._import_target(module, imp, 0), "qual", None) == qual
                                        for imp in imports)

    def calls_by_name(self, name: str, module: str) -> list:
        """Calls of a bare name (`f(...)`, kept among a function's gates) or of a name read off
        a module the caller imports (`m.f(...)`), over the whole tree: (caller scope, the bare
        name before the dot or None, line). Each module's table is built once, with its facts
        (so a resident server rebuilds only edited modules'), and only when a question needs it."""
        out: list = []
        # A call of `name` sits in its own module or in one importing it (or its module, whose
        # last part it is): `from m import f`, `import m`, `from pkg import m`; `*` imports too.
        uses = self.value_uses
        candidates = {module} | {m for m, _ in uses.importers(name)} \
            | {m for m, _ in uses.importers(module.rpartition(".")[2])}
        for m in sorted(candidates):
            mod = self.index.modules.get(m)
            if mod is None:
                continue
            derived = self.facts[mod.name].derived
            table = derived.get(_NAME_CALLS)
            if table is None:
                table = derived[_NAME_CALLS] = _name_calls(mod.name, mod.summary)
            out.extend(table.get(name, ()))
        return out


def _name_calls(module: str, summary) -> dict[str, list]:
    """One module's calls by called name, for CallGraph.calls_by_name: each function's
    calls of a plain name (its 2-tuple gates) and of an attribute of an imported module (once per
    line)."""
    modules = {i.local for i in summary.imports}
    out: dict[str, list] = {}
    for cls, fn in scopes_of(module, summary):
        scope = None
        seen: set = set()
        for g in fn.gates:
            c = call_gate(g)
            if c is not None and c not in seen:
                seen.add(c)
                scope = scope or Scope(module, cls, fn)
                out.setdefault(c.name, []).append((scope, None, c.line))
        if not modules:
            continue
        for call in fn.calls:
            f = call.func
            if is_attr(f) and f[1] is not None and is_name(f[1]) and f[1][1] in modules \
                    and (f[1][1], f[2], call.line) not in seen:
                seen.add((f[1][1], f[2], call.line))
                scope = scope or Scope(module, cls, fn)
                out.setdefault(f[2], []).append((scope, f[1][1], call.line))
    return out
