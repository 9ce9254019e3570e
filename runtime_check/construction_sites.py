"""Where the code builds a wrapper around an implementation, read from the analysis' own facts.

A finding claims a pairing: wrapper ``W`` holding implementation ``I`` in its delegate attribute
``A`` (or, for a call on ``self``, an object of class ``I`` running the method). The static
analysis relied on the places that build ``W``: the constructions that pass the ``__init__``
parameter stored in ``A`` (``FamilyModel.delegate_sources``, the facts that narrowed the
delegate's types), and the other calls of ``W`` the source shows (through a variable bound to the
class, ``cls(...)`` in a classmethod factory; call_sites.py reads those). pairing.py runs those
places for real; this module only says which functions to run:

* a construction inside function ``F`` whose argument is built there (``W(create_x(runner))``,
  ``W(self._backend_from_str(name))``): run ``F``;
* an argument read from one of ``F``'s own parameters (``def wrap(runner, full): return W(full)``,
  ``cls(primary=creator())``): ``W`` wraps whatever ``F`` is given, so the functions that call
  ``F`` are run (up to ``MAX_CLIMB`` levels up), where the implementation is built;
* a construction whose arguments are not known (read from the source): ``F`` and its callers;
* a construction in a class's ``__init__`` (``super().__init__(...)``): the constructions of that
  class, the same way.

Nothing here knows any engine's names.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..linter.findings import short
from ..linter.model.resolve import Scope
from ..linter.refs import root_name
from .call_sites import SourceCall, calls_named, calls_named_in

MAX_ENTRIES = 8  # functions run per construction site: enough for the code's few builders
MAX_CLIMB = 2  # caller levels climbed when the delegate is a parameter of the building function


@dataclass(frozen=True)
class Entry:
    """A function pairing.py runs: module-level (``cls`` None) or a method of ``cls``."""

    module: str
    cls: str | None
    function: str
    path: str
    line: int
    why: str  # how it leads to the construction, for the report

    @property
    def label(self) -> str:
        return f"{short(self.cls)}.{self.function}" if self.cls else self.function


@dataclass(frozen=True)
class Site:
    """One construction of the wrapper the pairing is about, and the functions that reach it."""

    wrapper: str
    attr: str | None  # the delegate attribute; None: the object itself is the implementation
    path: str
    line: int
    label: str  # "`W(...)` in `F` (path:line)"
    entries: tuple[Entry, ...]
    problem: str | None = None  # why no function can be run for it


def sites_for(ctx, wrapper: str, attr: str | None) -> list[Site]:
    """The constructions of ``wrapper`` (each with the functions to run), those that decide what
    ``attr`` holds first."""
    index = ctx.index
    if wrapper not in index.classes:
        return []
    out: list[Site] = []
    seen: set[tuple[str, int]] = set()
    for scope, construction, params, used, label in (ctx.model.delegate_sources(wrapper, attr) or []) if attr else []:
        _, args, kwargs, _ = construction
        name = used[0]
        idx = params.index(name)
        arg = dict(kwargs).get(name) or (args[idx] if idx < len(args) else None)
        path = index.modules[scope.module].file.display
        line = _line_of(ctx, scope, label)
        seen.add((path, line))
        where = f"`{label}` in `{_where(scope)}` ({path}:{line})"
        root = root_name(arg) if arg else None
        own = {p.name for p in scope.fn.params[1 if scope.cls else 0:]}
        if root in own:
            entries = callers(ctx, scope, MAX_CLIMB, f"passes `{root}` on to {where}")
            problem = None if entries else (f"{where} wraps `{root}`, a parameter of `{_where(scope)}`, "
                                            f"and no caller of it is seen")
        else:
            entries = builders(ctx, scope, f"runs {where}")
            problem = None if entries else f"nothing that runs {where} is seen"
        out.append(Site(wrapper, attr, path, line, where, tuple(entries[:MAX_ENTRIES]), problem))
    # The other calls of the class the source shows: their arguments are not read, so the
    # function holding the call runs, and so do its callers.
    w = short(wrapper)
    for call in calls_named(ctx, w):
        if call.via == "attr" or not _names_class(ctx, call, wrapper):
            continue
        scope = _scope_of(ctx, call)
        if scope is None:
            continue
        path = index.modules[scope.module].file.display
        if (path, call.line) in seen:
            continue
        seen.add((path, call.line))
        callee = call.node.func.id if hasattr(call.node.func, "id") else w
        where = f"`{callee}(...)` in `{_where(scope)}` ({path}:{call.line})"
        entries = builders(ctx, scope, f"runs {where}") + callers(ctx, scope, MAX_CLIMB, f"reaches {where}")
        out.append(Site(wrapper, attr, path, call.line, where, tuple(_unique(entries)[:MAX_ENTRIES]),
                        None if entries else f"nothing that runs {where} is seen"))
    return out


def builders(ctx, scope: Scope, why: str) -> list[Entry]:
    """The function to run for code in ``scope``: itself, or, for an ``__init__``, the functions
    that construct its class."""
    fn = scope.fn
    if fn is None or fn.name == "<module>":
        return []
    if fn.name == "__init__" and scope.cls:
        return [e for call in calls_named(ctx, short(scope.cls)) if call.via != "attr"
                and _names_class(ctx, call, scope.cls)
                for e in builders(ctx, _scope_of(ctx, call) or scope, f"builds `{short(scope.cls)}`, whose "
                                                                       f"__init__ {why}")
                if _scope_of(ctx, call) is not None]
    return [_entry(ctx, scope, why)]


def callers(ctx, scope: Scope, levels: int, why: str) -> list[Entry]:
    """The functions that call the function of ``scope`` (and, ``levels`` deep, their callers)."""
    out: list[Entry] = []
    frontier = [(scope, why)]
    for _ in range(levels):
        nxt = []
        for sc, reason in frontier:
            if sc.fn.name == "__init__" and sc.cls:
                found = [c for c in calls_named(ctx, short(sc.cls)) if c.via != "attr" and _names_class(ctx, c, sc.cls)]
            else:
                found = [c for c in calls_named(ctx, sc.fn.name) if _calls_function(ctx, c, sc)]
            for call in found:
                caller = _scope_of(ctx, call)
                if caller is None or caller.fn is sc.fn:
                    continue
                text = f"calls `{_where(sc)}` at line {call.line}, which {reason}"
                out.extend(builders(ctx, caller, text))
                nxt.append((caller, text))
        frontier = nxt[:MAX_ENTRIES]
        if len(out) >= MAX_ENTRIES:
            break
    return _unique(out)


def mentioning(ctx, module: str, name: str, why: str) -> list[Entry]:
    """Functions of ``module`` that read the module-level name ``name`` (a registry mapping keys to
    classes: ``REGISTRY[key](...)``, ``REGISTRY.get(key)``), read from its source."""
    import ast

    mod = ctx.index.modules.get(module)
    if mod is None:
        return []
    try:
        with open(mod.file.path, encoding="utf-8", errors="replace") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return []
    out = []
    for node, cls in _functions(tree):
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
            qual = f"{module}.{cls}" if cls else None
            fn = (ctx.index.classes[qual].info.methods.get(node.name) if qual in ctx.index.classes
                  else mod.summary.functions.get(node.name)) if (qual is None or qual in ctx.index.classes) else None
            if fn is not None:
                out.extend(builders(ctx, Scope(module, qual, fn), why))
    return _unique(out)


def _functions(tree):
    import ast
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, None
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield item, node.name


# --------------------------------------------------------------------------------------------

def _scope_of(ctx, call: SourceCall) -> Scope | None:
    if call.cls:
        entry = ctx.index.classes.get(call.cls)
        fn = entry.info.methods.get(call.function) if entry else None
    else:
        mod = ctx.index.modules.get(call.module)
        fn = mod.summary.functions.get(call.function) if mod else None
    return Scope(call.module, call.cls, fn) if fn is not None else None


def _names_class(ctx, call: SourceCall, qual: str) -> bool:
    """Whether a call by name can build ``qual``: the name resolves to it, or is not resolvable
    at module level (a function-local import). A wrong guess only costs a run: what is built is
    checked on the real objects."""
    if call.via in ("cls", "local"):
        return call.via == "local" or (call.cls is not None and qual in ctx.index.mro(call.cls)) or call.cls == qual
    sym = ctx.index.resolve_name(call.module, short(qual))
    if sym is None or sym.qual == qual:
        return True
    # Function-local imports can bind the name to a platform's subclass (`import AscendX as X`):
    # a related class is the same construction as far as the path is concerned.
    return sym.kind == "class" and sym.qual in ctx.index.classes and (
        qual in ctx.index.mro(sym.qual) or sym.qual in ctx.index.mro(qual))


def _calls_function(ctx, call: SourceCall, scope: Scope) -> bool:
    """Whether a call by the function's name can be a call of it."""
    if scope.cls is None:
        if call.via == "attr":
            return True  # `module.fn(...)`: the module is not resolved here; the run decides
        sym = ctx.index.resolve_name(call.module, scope.fn.name)
        return sym is None or sym.qual == f"{scope.module}.{scope.fn.name}"
    if call.via != "attr":
        return False
    # `Cls.m(...)` with the name bound to the class, or `self.m(...)`/`cls.m(...)` in the class or
    # a relative: another object's `m` is some other method.
    base = call.node.func.value
    if not hasattr(base, "id"):
        return False
    if base.id in ("self", "cls"):
        return call.cls is not None and (scope.cls in ctx.index.mro(call.cls) or call.cls in ctx.index.mro(scope.cls))
    sym = ctx.index.resolve_name(call.module, base.id)
    return sym.qual == scope.cls if sym is not None else base.id == short(scope.cls)


def _entry(ctx, scope: Scope, why: str) -> Entry:
    mod = ctx.index.modules[scope.module]
    return Entry(scope.module, scope.cls, scope.fn.name, mod.file.display, scope.fn.line, why)


def _line_of(ctx, scope: Scope, label: str) -> int:
    """The line of a construction (the label names its class, or is `super().__init__(...)`)."""
    name = "__init__" if label.startswith("super()") else label.split("(", 1)[0]
    for call in calls_named_in(ctx, name, scope.module):
        if call.function == scope.fn.name:
            return call.line
    return scope.fn.line


def _where(scope: Scope) -> str:
    return f"{short(scope.cls)}.{scope.fn.name}" if scope.cls else scope.fn.name


def _unique(entries: list[Entry]) -> list[Entry]:
    seen, out = set(), []
    for e in entries:
        key = (e.module, e.cls, e.function)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out
