"""What a delegate built from its constructor's parameters holds, from every call that builds it.

`Pool.__init__(self, inner_cls=None)` storing `self.inner = (inner_cls or PlainInner)(...)` holds
what its callers pass for `inner_cls`: followed through the callers' own parameters (a builder
method handed the class by another), their locals, and the return statements of the methods they
call on `self` (`cls = self._pick(kind, default=PlainInner)`), a few steps up. A class the code
names and calls (`PlainInner(...)`, a class default, a class passed by name) builds exactly that
class, not one of its subclasses: the delegate then holds only those classes, which is what
narrows a base-typed annotation (`inner: Optional[Base]`) and stops a subclass that only some
other builder makes from being paired with the wrapper.

Sound where it answers: any step it cannot follow makes the whole answer unknown, and the
delegate keeps its annotation's classes and their subclasses. Unknown are a caller passing
`*args`, or `**kwargs` that may carry the parameter, a function no code in the tree calls (its
callers are outside) (a splatted local dict is read: every key it
can get must be a constant), a method called through a receiver the index cannot type or by
`getattr`, a plain function's parameter (its calls are not all recorded), a class value read off
an attribute, and more callers than MAX_CALLERS. A call of an in-tree method whose every
implementation returns a constant (`return None`: the default of a hook out-of-tree code may
override) gives no class: what out-of-tree code returns is not one of the tree's classes.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from ..findings import Evidence
from ..perfile.reaching import bind_arguments
from ..perfile.summary import EXPRESSIONS, KEYWORD_ONLY, VAR_KEYWORD, VAR_POSITIONAL
from ..refs import (
    class_values,
    defaulted_type,
    dotted_ref,
    is_attr,
    is_call,
    is_name,
    is_self,
    is_seq,
    is_sub,
    is_super_init,
    is_union,
    lambda_body,
    lambda_ref,
    module_value,
)
from .callgraph import CallGraph
from .function_text import FunctionText
from .index import TreeIndex
from .registries import Registries
from .resolve import Resolver, Scope, describe_type
from .value_uses import ValueUses

MAX_STEPS = 8  # parameter and return hops followed from the assignment
# An argument's ref for a parameter where what the function was given may reach the call:
# (_RECEIVED, name, values of the rebindings of it that reach the call too).
_RECEIVED = "received"
MAX_CALLERS = 8  # more callers than this: a utility, not a builder handing classes over
# (Lower-bound mode) a value handed in from outside the tree: a parameter of a function no code of
# the tree calls. Whatever an API's caller passes; not "unknown".
OUTSIDE = ("outside",)
# Values calling which says what is built: a class, a function (`("fn", qual)`), a callable made
# in place (`("ret", what it returns)`), a bound method (`("bound", class, name)`), OUTSIDE, and
# what a package outside the tree provides (`("external", dotted name)`: a module the code loads
# by a constant name that is no module of the tree, `importlib.import_module("pkg.mod")`, an
# attribute of one, what calling one gives). Never a class of the tree: an annotation that says
# otherwise (`-> Base`) stands in for the outside class.
_CALLABLE = ("cls", "fn", "ret", "bound", "outside", "external")
EXTERNAL = "external"


def external(value_keys) -> list[str]:
    """The outside names a value can only be (empty where any of it is something else)."""
    keys = list(value_keys)
    if not keys or not all(isinstance(k, tuple) and k[0] == EXTERNAL for k in keys):
        return []
    return sorted(k[1] for k in keys)



class Caller(NamedTuple):
    """One call the tree shows of a function, its arguments bound as `_bound_arguments` binds them."""
    scope: Scope  # the calling function, its text read again
    args: tuple  # positional refs (None: starred or unreadable)
    kwargs: dict  # keyword -> ref
    line: int  # where the evidence points
    label: str  # how the evidence names the call
    node: ast.Call | None  # the call itself, where its text was found


class Traced(NamedTuple):
    """What `attribute_values` and `passed_to` answer: the values, and the evidence of how they were followed."""

    values: dict  # element -> whether it is exactly that class (see Values)
    steps: list[Evidence]


# A traced value: element -> whether it is exactly that class. Elements as the resolver's:
# "pkg.Cls" an instance, ("cls", "pkg.Cls") the class object. None: unknown.
Values = dict


def _merge(out: dict, more: dict) -> None:
    for k, exact in more.items():
        out[k] = out.get(k, True) and exact


class PassedValues:
    def __init__(self, index: TreeIndex, resolver: Resolver, value_uses: ValueUses, text: FunctionText,
                 calls: CallGraph, registries: Registries, partial: bool = False):
        # `partial`: what the paths the tree shows build, ignoring those it cannot follow (a
        # lower bound: "the code builds at least these"), rather than an answer or None.
        self.partial = partial
        self._held_visiting: set = set()
        self.index = index
        self.resolver = resolver
        self.value_uses = value_uses
        self.text = text
        self.calls = calls
        self.registries = registries  # the tree's tables: what they hold is the same in either mode
        self._param_memo: dict[tuple, tuple[dict, list] | None] = {}
        self._return_memo: dict[tuple, tuple[dict, list] | None] = {}

    # --- the question ----------------------------------------------------------------------------
    def attribute_values(self, qual: str, attr: str) -> Traced | None:
        """What `self.<attr>` holds on an instance of `qual`, from every assignment of it in the
        classes of its MRO; None where one of them cannot be followed."""
        out: dict = {}
        steps: list[Evidence] = []
        found = False
        init = self.index.method(qual, "__init__")
        bases_init = init is None or self._calls_an_init(init)
        for c in self.index.mro(qual):
            entry = self.index.classes[c]
            ca = entry.info.attrs.get(attr)
            if ca is not None and ca.value is not None:
                return None  # a class-level value: the resolver's business
            for method, (value, _ann, _line) in self.index.assignments(c).get(attr, ()):
                runs = self.index.method(qual, method.name)
                if (runs is None or runs.owner != c) and not (method.name == "__init__" and bases_init):
                    continue  # overridden for `qual`: a base's `__init__` its own never calls
                found = True
                got = self.value(value, Scope(entry.module, c, method), 0, frozenset())
                if got is None:
                    return None
                _merge(out, got[0])
                steps.extend(got[1])
        return Traced(out, steps) if found else None

    def _calls_an_init(self, init: tuple) -> bool:
        """Whether the `__init__` an instance runs calls another (`super().__init__(...)`,
        `Base.__init__(self, ...)`): then every base's `__init__` may run. Unknown: it may."""
        owner, fn = init
        if any(is_super_init(c[0]) for c in fn.constructions):
            return True
        got = self.text.source(Scope(self.index.classes[owner].module, owner, fn))
        return got is None or any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                  and n.func.attr == "__init__" for n in ast.walk(got.node))

    # --- expressions -----------------------------------------------------------------------------
    def value(self, ref: tuple | None, scope: Scope, steps: int, visiting: frozenset):
        got = self._value(ref, scope, steps, visiting)
        return ({}, []) if got is None and self.partial else got

    def _value(self, ref: tuple | None, scope: Scope, steps: int, visiting: frozenset):
        if ref is None or steps > MAX_STEPS:
            return None
        if is_name(ref):
            return self._name(ref[1], scope, steps, visiting)
        if is_union(ref):
            out: dict = {}
            ev: list = []
            for item in ref[1]:
                got = self.value(item, scope, steps, visiting)
                if got is None:
                    return None
                _merge(out, got[0])
                ev.extend(got[1])
            return out, ev
        if is_call(ref):
            loaded = self._loaded_module(ref, scope)
            return loaded if loaded is not None else self._call(ref, scope, steps, visiting)
        if is_sub(ref):
            return self._table(ref[1], scope, steps)
        if is_attr(ref) and scope.cls and scope.fn is not None and scope.fn.params \
                and scope.fn.kind == "method" and is_self(ref[1], scope.fn.params[0].name) \
                and getattr(self.index.lookup(scope.cls, ref[2]), "kind", None) == "method":
            return {("bound", scope.cls, ref[2]): True}, []  # `self.make`, handed on uncalled
        if is_attr(ref) and self.partial and scope.cls and scope.fn is not None and scope.fn.params \
                and is_self(ref[1], scope.fn.params[0].name):
            # (Lower-bound mode) `self.x`: what the class ever stores there.
            key = (scope.cls, ref[2])
            if key in self._held_visiting:
                return None
            self._held_visiting.add(key)
            try:
                return self.attribute_values(scope.cls, ref[2])
            finally:
                self._held_visiting.discard(key)
        if is_seq(ref) and self.partial:  # (lower-bound mode) `[A(), B()]`: its elements
            out, ev = {}, []
            for item in ref[1]:
                got = self.value(item, scope, steps + 1, visiting)
                _merge(out, got[0])
                ev.extend(got[1])
            return out, ev
        if (body := lambda_body(ref)) is not None:  # a callable: what calling it gives, read where it was written
            got = self.value(body, scope, steps + 1, visiting)
            return None if got is None else ({("ret", k): e for k, e in got[0].items()}, got[1])
        if is_attr(ref) and is_name(ref[1]):
            base = self._value(ref[1], scope, steps + 1, visiting)
            names = external(base[0]) if base is not None else []
            if names:  # `module.Loader` of a module loaded from outside: outside too
                return {(EXTERNAL, f"{n}.{ref[2]}"): True for n in names}, base[1]
        return None

    _IMPORTERS = {"importlib.import_module", "import_module", "__import__"}

    def _loaded_module(self, ref: tuple, scope: Scope):
        """`importlib.import_module("pkg.mod")` (or `__import__`) of a constant name that is no
        module of the tree: an outside module, with the evidence that says so; None otherwise."""
        func = ref[1]
        if func is None or scope.fn is None or dotted_ref(func) not in self._IMPORTERS:
            return None
        if is_name(func) and func[1] == "import_module" and not any(
                i.local == "import_module" and i.module == "importlib"
                for i in self.index.modules[scope.module].summary.imports):
            return None
        node = self.text.call_node(scope, ref[2], ref[3])
        if node is None or len(node.args) != 1 or node.keywords:
            return None
        name = self._constant_text(node.args[0], scope)
        if not name or self.index.find_module(name, scope.module) is not None \
                or any(m == name or m.startswith(name + ".") for m in self.index.modules):
            return None
        path = self.text.path(scope.module)
        note = f"`{name}` is loaded with `importlib` and is no module of the tree: what it gives comes from outside"
        return {(EXTERNAL, name): True}, [Evidence(path, ref[2], note)]

    def _constant_text(self, node: ast.expr, scope: Scope) -> str | None:
        """A string constant, or a module-level name bound once to one."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id not in scope.fn.locals:
            return self.text.module_constant(scope.module, node.id)
        return None

    def _name(self, name: str, scope: Scope, steps: int, visiting: frozenset):
        fn = scope.fn
        if fn is None:
            return None
        params = fn.params
        if scope.cls and params and name == params[0].name and fn.kind != "staticmethod":
            return None  # `self`: not a value handed over
        param = next((p for p in params if p.name == name), None) if fn.name != "<module>" else None
        out: dict = {}
        ev: list = []
        if param is not None:
            got = self._param(scope, param, steps)
            if got is None:
                return None
            out, ev = dict(got[0]), list(got[1])
        key = ("local", scope.module, id(fn), name)
        if name in fn.locals and key not in visiting:
            # A local (a parameter rebound, `cls = cls or Plain`, holds both).
            for v in fn.locals[name]:
                got = self.value(v, scope, steps, visiting | {key})
                if got is None:
                    return None
                _merge(out, got[0])
                ev.extend(got[1])
            return out, ev
        if param is not None:
            return out, ev
        sym = self.index.resolve_name(scope.module, name)
        if sym is not None and sym.kind == "class" and sym.qual in self.index.classes:
            return {("cls", sym.qual): True}, []
        if sym is not None and sym.kind == "function" and self._function_info(sym.qual) is not None:
            return {("fn", sym.qual): True}, []
        return None

    # --- tables and functions --------------------------------------------------------------------
    def _table(self, base: tuple | None, scope: Scope, steps: int):
        """What `TABLE[k]` can be: every value the tree puts into the module-level `TABLE`
        (registries.py); None where that is unknown."""
        if base is None or not is_name(base) or scope.fn is None or any(p.name == base[1] for p in scope.fn.params) \
                or (scope.fn.name != "<module>" and base[1] in scope.fn.locals):
            return None
        qual = self.registries.qualify(scope.module, base[1])
        if qual is None:
            return None
        entries = self.registries.entries(qual)
        if entries is None:
            return None
        out: dict = {}
        ev: list = []
        for entry in entries:
            got = (entry.values, []) if entry.values is not None else \
                self.value(entry.ref, entry.scope, steps + 1, frozenset())
            if got is None:
                return None
            _merge(out, got[0])
            ev.extend(got[1])
        return out, ev[:4]

    def _called(self, got, steps: int):
        """What calling each of the values `got` gives: a class its instances, a function what
        it returns; None where one is anything else (an instance's `__call__`, unknown)."""
        if got is None:
            return None
        out: dict = {}
        ev = list(got[1])
        for k, exact in got[0].items():
            kind = k[0] if isinstance(k, tuple) else None
            if kind not in _CALLABLE:
                return None
            if kind in ("outside", EXTERNAL):
                _merge(out, {k: exact})  # what an API's caller hands in, or an outside class, called: theirs too
            elif kind in ("cls", "ret"):
                _merge(out, {k[1]: exact})
            else:
                more = self._self_method_returns(k[1], k[2], steps) if kind == "bound" else \
                    self._function_returns(k[1], steps)
                if more is None:
                    return None
                _merge(out, more[0])
                ev.extend(more[1])
        return out, ev

    def _function_info(self, qual: str):
        module, _, name = qual.rpartition(".")
        mod = self.index.modules.get(module)
        return mod.summary.functions.get(name) if mod is not None else None

    def _function_returns(self, qual: str, steps: int):
        """What the module-level function `qual` returns, from every `return` of its text (a bare
        one, or a constant, gives no class); None where one cannot be followed or it yields."""
        key = ("fn", qual)
        if key in self._return_memo:
            return self._return_memo[key]
        self._return_memo[key] = None  # recursion guard
        fn = self._function_info(qual)
        result = None
        if fn is not None and steps <= MAX_STEPS:
            result = self._text_returns(Scope(qual.rpartition(".")[0], None, fn), steps)
        self._return_memo[key] = result
        return result

    def _text_returns(self, scope: Scope, steps: int):
        """What the function `scope` is in returns, from every `return` of its text (a bare one,
        or a constant, gives no class); None where its text cannot be read, it yields, or a
        returned value cannot be followed."""
        got = self.text.source(scope)
        if got is None:
            return None
        info, node = got
        scope = Scope(scope.module, scope.cls, info)
        out: dict = {}
        ev: list = []
        for value in _returned(node):
            if value is None:
                return None
            if isinstance(value, ast.Constant):
                continue
            more = self.value(EXPRESSIONS.ref(value), scope, steps + 1, frozenset())
            if more is None:
                return None
            _merge(out, more[0])
            ev.extend(more[1])
        return out, ev

    def _call(self, ref: tuple, scope: Scope, steps: int, visiting: frozenset):
        func = ref[1]
        if func is None:
            return None
        fn = scope.fn
        if is_attr(func) and scope.cls and fn.params and is_self(func[1], fn.params[0].name) \
                and fn.kind == "method":
            return self._self_method_returns(scope.cls, func[2], steps)
        if is_name(func):
            got = self._name(func[1], scope, steps, visiting)
            if got is not None and got[0] and all(isinstance(k, tuple) and k[0] in _CALLABLE for k in got[0]):
                return self._called(got, steps)
            if got is not None and not got[0]:
                return {}, got[1]  # only `None` was handed over: nothing is built from it here
        if is_sub(func):
            return self._called(self._table(func[1], scope, steps), steps)
        if is_attr(func) and func[2] == "get" and func[1] is not None and is_name(func[1]):
            got = self._table(func[1], scope, steps)
            if got is not None:
                node = self.text.call_node(scope, ref[2], ref[3]) if scope.fn is not None else None
                if node is None or len(node.args) > 2 or node.keywords:
                    return None
                if len(node.args) == 2 and not isinstance(node.args[1], ast.Constant):
                    more = self.value(EXPRESSIONS.ref(node.args[1]), scope, steps + 1, visiting)
                    if more is None:
                        return None
                    _merge(got[0], more[0])
                return got
        if is_attr(func):
            base = self.resolver.resolve(func[1], scope)
            if base.types and all(module_value(t) for t in base.types):
                quals = {getattr(self.index.resolve_name(module_value(t), func[2]), "qual", None) for t in base.types}
                if all(q in self.index.classes for q in quals):
                    return dict.fromkeys(quals, True), []  # `module.Cls(...)`
                if all(q is not None and self._function_info(q) is not None for q in quals):
                    return self._called(({("fn", q): True for q in quals}, []), steps)  # `module.make(...)`
            if self._returns_constants(base, func[2]):
                return {}, []
            if self.partial:
                return self._receiver_returns(func[1], func[2], scope, steps)
        return None

    def _returns_constants(self, base, member: str) -> bool:
        """Every in-tree implementation of `member` on the receiver's classes returns a constant
        (`return None`), or what a member it fetches by a computed name returns
        (`hook = getattr(self, name, None)`, `return hook()`): a hook left to out-of-tree code,
        whose classes are not the tree's. Read from the source: a summary keeps no constant."""
        classes = {t for t in base.types if isinstance(t, str) and t in self.index.classes}
        if not classes or len(classes) != len(base.types):
            return False
        seen = False
        for c in classes:
            for k in {c} | self.index.descendants(c):
                found = self.index.method(k, member)
                if found is None:
                    continue
                seen = True
                owner, fn = found
                if fn.kind == "property":
                    return False
                got = self.text.source(Scope(self.index.classes[owner].module, owner, fn))
                if got is None or not _returns_only_constants_or_hooks(got.node):
                    return False
        return seen

    def _self_method_returns(self, cls: str, member: str, steps: int):
        """What `self.member(...)` returns, over every class that can be `self` there."""
        key = (cls, member)
        if key in self._return_memo:
            return self._return_memo[key]
        self._return_memo[key] = None  # recursion guard
        out: dict = {}
        ev: list = []
        found = [self.index.method(k, member) for k in {cls} | self.index.descendants(cls)]
        impls = {hit.owner: hit.fn for hit in found if hit is not None}
        result = None
        if self.partial:
            result = self._returns_of_each(impls, steps)
        elif None not in found and impls:
            result = (out, ev)
            for owner, m in sorted(impls.items()):
                if not m.return_values or m.kind not in ("method", "staticmethod"):
                    result = None
                    break
                mscope = Scope(self.index.classes[owner].module, owner, m)
                for v in m.return_values:
                    got = self.value(v, mscope, steps + 1, frozenset())
                    if got is None:
                        result = None
                        break
                    _merge(out, got[0])
                    ev.extend(got[1])
                if result is None:
                    break
        self._return_memo[key] = result
        return result

    def _returns_of_each(self, impls: dict, steps: int):
        """(Lower-bound mode) what the methods `impls` (owner -> method) return, read from every
        `return` of their text; one that cannot be read adds nothing."""
        out: dict = {}
        ev: list = []
        for owner, m in sorted(impls.items()):
            if m.kind == "property":
                continue
            got = self._text_returns(Scope(self.index.classes[owner].module, owner, m), steps)
            if got is not None:  # (a generator, or text that cannot be read, adds nothing)
                _merge(out, got[0])
                ev.extend(got[1])
        return out, ev

    def _receiver_returns(self, base: tuple, member: str, scope: Scope, steps: int):
        """(Lower-bound mode) what `<base>.member(...)` returns: its implementations on the classes
        the code builds into the receiver (not every class its declared type allows)."""
        got = self.value(base, scope, steps + 1, frozenset()) if scope.fn is not None else None
        types = {t for t in got[0] if isinstance(t, str)} if got else set()
        out: dict = {}
        ev: list = []
        for t in sorted(t for t in types if t in self.index.classes):
            got = self._self_method_returns(t, member, steps)
            if got is not None:
                _merge(out, got[0])
                ev.extend(got[1])
        return out, ev

    # --- parameters, from their callers ----------------------------------------------------------
    def passed_to(self, scope: Scope, param) -> Traced | None:
        """What every call the tree shows of the function `scope` is in passes as `param`
        (element -> exactly that class), with the evidence; None where a call cannot be read."""
        got = self._param(self.text.full_scope(scope) if scope.fn.name != "<module>" else scope, param, 0)
        return None if got is None else Traced(*got)

    def _param(self, scope: Scope, param, steps: int):
        if param.kind in (VAR_POSITIONAL, VAR_KEYWORD):
            return None
        fn = scope.fn
        key = (scope.module, scope.cls, fn.name, fn.line, param.name)
        if key in self._param_memo:
            return self._param_memo[key]
        self._param_memo[key] = None  # recursion guard: a cycle of hand-overs is not followed
        self._param_memo[key] = self._param_uncached(scope, param, steps)
        return self._param_memo[key]

    def _param_uncached(self, scope: Scope, param, steps: int):
        fn = scope.fn
        callers = self._callers(scope)
        if callers == [] and self.partial and self._called_from_outside(scope):
            return {OUTSIDE: True}, []
        if not callers:
            return None  # unknown, or none in the tree: called from outside it
        implicit = 1 if scope.cls and fn.kind in ("method", "classmethod") else 0
        position = None if param.kind == KEYWORD_ONLY else \
            next(i for i, p in enumerate(fn.params) if p.name == param.name) - implicit
        out: dict = {}
        ev: list = []
        for cscope, args, kwargs, line, label, call in callers:
            if param.name in kwargs:
                given = kwargs[param.name]
            elif position is not None and position < len(args):
                given = args[position]
                if any(a is None for a in args[:position + 1]):
                    return None  # a starred or unreadable argument before it
            else:
                if not self._splats_cannot_carry(cscope, param.name, position is not None, call):
                    return None
                if (defaulted := defaulted_type(param.annotation)) is not None:
                    sym = self.index.resolve_name(scope.module, defaulted[1])
                    if sym is None or sym.kind != "class" or sym.qual not in self.index.classes:
                        return None
                    _merge(out, {("cls", sym.qual): True})
                # other defaults are constants (`None`): no class
                continue
            got = self._given(given, cscope, steps + 1)
            if got is None:
                return None
            _merge(out, got[0])
            if got[0]:
                shown = ", ".join(sorted(describe_type(t) for t in got[0]))
                ev.append(Evidence(self.text.path(cscope.module), line,
                                   f"`{label}` in `{cscope.fn.name}` passes {shown} as `{param.name}`"))
            ev.extend(got[1])
        return out, ev[:6]

    def _given(self, ref: tuple | None, scope: Scope, steps: int):
        """What an argument of a call in `scope` passes (its refs bound as `_bound_arguments` binds them)."""
        if ref is None or ref[0] != _RECEIVED:
            return self.value(ref, scope, steps, frozenset())
        fn = scope.fn
        implicit = 1 if scope.cls and fn.kind != "staticmethod" else 0
        param = next((p for p in fn.params[implicit:] if p.name == ref[1]), None)
        got = self._param(scope, param, steps) if param is not None else None
        if got is None and self.partial:
            got = ({}, [])
        if got is None:
            return None
        out, ev = dict(got[0]), list(got[1])
        for value in ref[2]:
            more = self.value(value, scope, steps, frozenset())
            if more is None:
                return None
            _merge(out, more[0])
            ev.extend(more[1])
        return out, ev

    def _called_from_outside(self, scope: Scope) -> bool:
        """No code of the tree calls the function (nor uses it as a value): what it is given
        comes from outside the tree, an API's caller."""
        fn = scope.fn
        if fn.name == "__init__" or fn.name == "<module>":
            return False
        if not scope.cls:
            return not self.value_uses.function(scope.module, fn.name)
        return not self.calls.member_calls.get(fn.name) and not self.value_uses.method(fn.name)

    def _callers(self, scope: Scope) -> list[Caller] | None:
        """Every call the tree shows of the function `scope` is in; None where they cannot all be known."""
        fn = scope.fn
        if fn.name == "__init__" and scope.cls:
            calls = self.calls.init_calls(scope.cls)
            if len(calls) > MAX_CALLERS:
                return None
            out = []
            for cscope, construction, label in calls:
                full = self.text.full_scope(cscope)
                args, kwargs, node = self._construction_arguments(cscope, full, construction)
                line = node.lineno if node is not None else full.fn.line
                out.append(Caller(full, args, dict(kwargs), line, label, node))
            return out
        if not scope.cls and fn.name != "<module>":
            return self._function_callers(scope)
        if not scope.cls or fn.kind not in ("method", "classmethod", "staticmethod") \
                or self.value_uses.method(fn.name):
            return None  # (a bound method handed on is called where the tree does not show)
        entries = self.calls.member_calls.get(fn.name, ())
        out = []
        for csite, call, (recv, _, how) in entries:
            types = self.resolver.resolve(recv, csite.scope).types
            res = {t for t in types if isinstance(t, str)}
            if fn.kind != "method":  # `Cls.make(...)` calls it on the class itself too
                res |= set(class_values(types))
            if not res or how != "call":
                if self.partial:
                    continue  # a lower bound: only the calls known to run it
                return None  # some call of that name may be this method's
            runs = [self.index.lookup(t, fn.name) for t in res if t in self.index.classes]
            if not any(hit is not None and hit.owner == scope.cls for hit in runs):
                continue
            full = self.text.full_scope(csite.scope)
            node = self.text.call_node(full, call.line, call.col)
            if node is None:
                return None
            args = tuple(None if isinstance(a, ast.Starred) else _argument_ref(a) for a in node.args)
            kwargs = tuple((kw.arg, _argument_ref(kw.value)) for kw in node.keywords if kw.arg)
            args, kwargs = self._bound_arguments(full, node, args, kwargs)
            out.append(Caller(full, args, dict(kwargs), call.line, f"{fn.name}(...)", node))
            if len(out) > MAX_CALLERS:
                return None
        return out

    def _function_callers(self, scope: Scope) -> list[Caller] | None:
        """The calls of a module-level function, by its name or through its module
        (`helpers.prepare(...)`); None where some may be unseen: the function is used as a value
        (handed on, stored, aliased), a call is made from module level or spreads `*args` /
        `**kwargs`, or there are too many."""
        fn = scope.fn
        if self.value_uses.function(scope.module, fn.name):
            return None
        qual = f"{scope.module}.{fn.name}"
        out = []
        for cscope, base, line in self.calls.calls_by_name(fn.name, scope.module):
            sym = self.index.resolve_name(cscope.module, base or fn.name)
            if sym is None or (sym.qual != qual if base is None else sym.kind != "module" or sym.qual != scope.module):
                continue
            if cscope.fn.name == "<module>":
                return None
            full = self.text.full_scope(cscope)
            nodes = self.text.calls_at(full, line, base, fn.name)
            if not nodes:
                return None
            for node in nodes:
                if any(isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords):
                    return None
                args = tuple(EXPRESSIONS.ref(a) for a in node.args)
                kwargs = tuple((kw.arg, EXPRESSIONS.ref(kw.value)) for kw in node.keywords)
                args, kwargs = self._bound_arguments(full, node, args, kwargs)
                out.append(Caller(full, args, dict(kwargs), line, f"{fn.name}(...)", node))
            if len(out) > MAX_CALLERS:
                return None
        return out

    def _construction_arguments(self, scope: Scope, full: Scope,
                                construction: tuple) -> tuple[tuple, tuple, ast.Call | None]:
        """A construction's arguments as `_bound_arguments` binds them, and its call, found in the
        text read again by its place among the function's constructions."""
        _, args, kwargs, _ = construction
        walker = self.text.walker(full)
        index = next((i for i, c in enumerate(scope.fn.constructions) if c is construction), None)
        if walker is None or index is None or index >= len(walker.constructions) \
                or walker.constructions[index][0] != construction[0]:
            return args, kwargs, None  # (the file changed since it was summarised)
        node = walker.construction_calls[index]
        return (*self._bound_arguments(full, node, args, kwargs), node)

    def _bound_arguments(self, scope: Scope, node: ast.Call, args: tuple, kwargs: tuple) -> tuple[tuple, tuple]:
        """The refs of a call's arguments, each local bound to the bindings of it that reach the
        call (reaching.bind_arguments, as the summary binds a construction's), and a parameter
        where what the function was given may reach to (_RECEIVED, name, the rebindings that
        also reach): `b = Split(b)` then `b = Hybrid(b)` gives `Split` what the function was
        given, not also `Hybrid`."""
        fn = scope.fn
        params = frozenset(p.name for p in fn.params)
        names = {r[1] for r in (*args, *[v for _, v in kwargs]) if r is not None and is_name(r)
                 and r[1] in fn.locals and (len(fn.locals[r[1]]) > 1 or r[1] in params)}
        walker = self.text.walker(scope) if names else None
        if walker is None:
            return args, kwargs
        return bind_arguments(self.text.source(scope).node.body, [(node, args, kwargs)], names, params,
                              walker.bound, lambda name, values: (_RECEIVED, name, tuple(values)))[0]

    def _splats_cannot_carry(self, scope: Scope, name: str, positional: bool, call: ast.Call | None) -> bool:
        """No `*args` (for a parameter that can be passed by position) and no `**mapping` of the
        call can carry `name`: every mapping it splats is a local of the calling function built
        from dict displays, `.update(k=...)` and `m["k"] = ...` with constant keys, none of them
        `name`. Without the call itself, every call of the function is held to that."""
        got = self.text.source(scope)
        if got is None:
            return False
        node = got.node
        splatted: set[str] = set()
        for n in ast.walk(node) if call is None else (call,):
            if isinstance(n, ast.Call):
                if positional and any(isinstance(a, ast.Starred) for a in n.args):
                    return False
                for kw in n.keywords:
                    if kw.arg is not None:
                        continue
                    if isinstance(kw.value, ast.Dict):
                        if not _constant_keys(kw.value, name):
                            return False
                    elif isinstance(kw.value, ast.Name):
                        splatted.add(kw.value.id)
                    else:
                        return False
        if not splatted:
            return True
        params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        if splatted & params:
            return False
        return all(_local_dict_without(node, local, name) for local in splatted)


def _returns_only_constants_or_hooks(fn: ast.AST) -> bool:
    hooks = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name) \
                and n.value.func.id == "getattr" and len(n.value.args) >= 2 \
                and not isinstance(n.value.args[1], ast.Constant):
            hooks.add(n.targets[0].id)
    for n in ast.walk(fn):
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(n, ast.Return) and n.value is not None and not isinstance(n.value, ast.Constant):
            v = n.value
            if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in hooks):
                return False
    return True


def _constant_keys(d: ast.Dict, name: str) -> bool:
    return all(isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value != name for k in d.keys)


def _local_dict_without(fn: ast.AST, local: str, name: str) -> bool:
    """Every use of `local` in `fn` is one of: bound to a dict display, `**local`, `local.update`
    with constant keywords or a dict display, `local["key"] = ...`; and `name` is never a key."""
    parents: dict[int, ast.AST] = {}
    for n in ast.walk(fn):
        for child in ast.iter_child_nodes(n):
            parents[id(child)] = n
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == local):
            continue
        parent = parents.get(id(n))
        if isinstance(n.ctx, ast.Store):
            if not (isinstance(parent, ast.Assign) and isinstance(parent.value, ast.Dict)
                    and _constant_keys(parent.value, name)):
                return False
        elif isinstance(parent, ast.keyword) and parent.arg is None:
            continue
        elif isinstance(parent, ast.Attribute) and parent.attr == "update":
            call = parents.get(id(parent))
            if not isinstance(call, ast.Call) or call.func is not parent:
                return False
            if any(kw.arg is None or kw.arg == name for kw in call.keywords):
                return False
            if not all(isinstance(a, ast.Dict) and _constant_keys(a, name) for a in call.args):
                return False
        elif isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store):
            key = parent.slice
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value != name):
                return False
        else:
            return False
    return True


def _returned(fn: ast.AST):
    """The value of each `return` of a function (not of the functions or lambdas in it): an
    expression, a Constant for a bare `return`, None for a `yield` (a generator returns no value)."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            yield None
        if isinstance(n, ast.Return):
            yield n.value if n.value is not None else ast.Constant(None)
        stack.extend(ast.iter_child_nodes(n))


def _argument_ref(node: ast.expr) -> tuple | None:
    """A call argument's ref; a lambda without parameters is a lambda ref of its body's."""
    if isinstance(node, ast.Lambda) and not node.args.args and not node.args.posonlyargs \
            and not node.args.kwonlyargs and not node.args.vararg and not node.args.kwarg:
        body = EXPRESSIONS.ref(node.body)
        return lambda_ref(body) if body is not None else None
    return EXPRESSIONS.ref(node)
