"""What classes an expression can be an instance of, with the chain of reasons.

A small, explainable type resolver over summaries: parameter and attribute annotations,
constructor calls, function return annotations and simple returns, sequences of instances, and
`for x in seq` loops. Where it cannot answer, the engine may ask astroid (see astroid_bridge).

Type elements:
    "pkg.mod.Cls"              an instance of an in-tree class
    ("seq", "pkg.mod.Cls")     a list/tuple/dict-values of such instances
    ("cls", "pkg.mod.Cls")     the class object itself
    ("fn", "pkg.mod.func")     a module-level function
    ("method", "pkg.Cls", m)   a method reached through an instance
    ("mod", "pkg.mod")         a module
"""

from __future__ import annotations

from dataclasses import dataclass

from ..findings import Evidence, shortened
from ..perfile.summary import FunctionInfo, declared_only
from ..refs import (
    annotation_of,
    class_element,
    class_type_item,
    class_value,
    defaulted_type,
    instance_or_class,
    is_attr,
    is_call,
    is_function_value,
    is_getattr,
    is_iter,
    is_method_value,
    is_name,
    is_seq,
    is_sub,
    is_union,
    module_value,
    seq_element,
    seq_of,
    seq_type_item,
    type_alternatives,
    type_name,
)
from .index import TreeIndex

EMPTY: frozenset = frozenset()
MAX_DEPTH = 10


@dataclass(frozen=True, slots=True)
class Scope:
    module: str
    cls: str | None = None
    fn: FunctionInfo | None = None


@dataclass(frozen=True, slots=True)
class Resolution:
    types: frozenset
    steps: tuple[Evidence, ...] = ()
    via: str = "index"

    def instances(self) -> set[str]:
        return {t for t in self.types if isinstance(t, str)}


NOTHING = Resolution(EMPTY)
_ABSENT = Resolution(EMPTY, via="absent")  # a class that says nothing about an attribute


def ordered(types) -> list:
    """Type elements in a fixed order: sets iterate in a per-process hash order, and the order in
    which alternatives are explored decides which evidence steps are kept."""
    return sorted(types, key=repr)


def describe_type(t) -> str:
    if isinstance(t, str):
        return t.rsplit(".", 1)[-1]
    if (item := seq_of(t)) is not None:
        return f"list[{item.rsplit('.', 1)[-1]}]"
    return f"{t[0]} {t[-1]}"


class Resolver:
    """What a reference can be, as types: the index's names followed through annotations,
    assignments, returns and properties (no inference engine; astroid is asked elsewhere, and only
    where this has no answer).

    - `resolve(ref, scope)`: the Resolution of an expression reference (`self.x`, `f().y`, a
      parameter, a local) inside a function: the types it can hold, with the steps (evidence)
      that led there and whether the index or astroid answered (`via`).
    - `attribute_of(cls, attr)`: what `instance.attr` can be for an instance of `cls`.
    - `annotation(tref, module)` / `annotation_text(tref)`: a type annotation as classes, and as
      text for messages.
    - `function_of(t)`: the function a function-typed element names.
    """
    def __init__(self, index: TreeIndex):
        self.index = index
        self._attr_memo: dict[tuple[str, str], Resolution] = {}
        self._own_attr_memo: dict[tuple[str, str], Resolution] = {}
        self._return_memo: dict[tuple[str, str | None, str], Resolution] = {}
        self._global_memo: dict[tuple[str, str], Resolution] = {}

    # --- helpers ------------------------------------------------------------------------------
    def _path(self, module: str) -> str:
        mod = self.index.modules.get(module)
        return mod.file.display if mod else module

    def annotation(self, tref: tuple | None, module: str) -> frozenset:
        if tref is None:
            return EMPTY
        if (name := type_name(tref)) is not None:
            sym = self.index.resolve_name(module, name)
            if sym is not None and sym.kind == "class" and sym.qual in self.index.classes:
                return frozenset((sym.qual,))
            return EMPTY
        if (item := seq_type_item(tref)) is not None:
            return frozenset(seq_element(t) for t in self.annotation(item, module) if isinstance(t, str))
        if (alternatives := type_alternatives(tref)) is not None:
            out: set = set()
            for alt in alternatives:
                out |= self.annotation(alt, module)
            return frozenset(out)
        if (item := class_type_item(tref)) is not None:  # type[X]: the class X or a subclass, called to build one
            return frozenset(class_element(t) for t in self.annotation(item, module) if isinstance(t, str))
        if (defaulted := defaulted_type(tref)) is not None:
            ann, default = defaulted
            sym = self.index.resolve_name(module, default)
            if sym is not None and sym.kind == "class" and sym.qual in self.index.classes:
                # A class default: the parameter holds a class (the annotation names its base).
                bases = [t for t in self.annotation(ann, module) if isinstance(t, str)]
                return frozenset(class_element(t) for t in (bases or [sym.qual]))
            return self.annotation(ann, module)
        return EMPTY

    @staticmethod
    def annotation_text(tref: tuple | None) -> str:
        if tref is None:
            return "?"
        if (name := type_name(tref)) is not None:
            return name
        if (item := seq_type_item(tref)) is not None:
            return f"list[{Resolver.annotation_text(item)}]"
        if (item := class_type_item(tref)) is not None:
            return f"type[{Resolver.annotation_text(item)}]"
        if (defaulted := defaulted_type(tref)) is not None:
            ann, default = defaulted
            return f"{Resolver.annotation_text(ann) if ann else '?'} = {default}"
        return " | ".join(Resolver.annotation_text(t) for t in type_alternatives(tref) or ())

    # --- the resolver -------------------------------------------------------------------------
    def resolve(self, ref: tuple | None, scope: Scope, depth: int = 0,
                visiting: frozenset = frozenset()) -> Resolution:
        if ref is None or depth > MAX_DEPTH:
            return NOTHING
        if is_name(ref):
            return self._name(ref[1], scope, depth, visiting)
        if is_attr(ref) or is_getattr(ref):
            base = self.resolve(ref[1], scope, depth + 1, visiting)
            return self._attribute(base, ref[2], depth, visiting)
        if is_call(ref):
            return self._call(ref, scope, depth, visiting)
        if is_sub(ref) or is_iter(ref):
            base = self.resolve(ref[1], scope, depth + 1, visiting)
            elems = frozenset(q for t in base.types if (q := seq_of(t)) is not None)
            return Resolution(elems, base.steps, base.via) if elems else NOTHING
        if is_seq(ref):
            out, steps = set(), []
            for item in ref[1]:
                r = self.resolve(item, scope, depth + 1, visiting)
                out |= {seq_element(t) for t in r.types if isinstance(t, str)}
                steps.extend(r.steps)
            return Resolution(frozenset(out), shortened(steps, 6))
        if is_union(ref):
            out, steps = set(), []
            for item in ref[1]:
                r = self.resolve(item, scope, depth + 1, visiting)
                out |= r.types
                steps.extend(r.steps)
            return Resolution(frozenset(out), shortened(steps, 6))
        if (tref := annotation_of(ref)) is not None:
            return self._declared(tref, scope, "a value")
        return NOTHING

    def _declared(self, tref: tuple, scope: Scope, what: str) -> Resolution:
        """A binding's or a cast's declared type (`x: T = ...`, `cast(T, x)`): its classes, with a
        link that says they are declared, not built."""
        types = self.annotation(tref, scope.module)
        if not types:
            return NOTHING
        fn = scope.fn
        where = f" in `{fn.name}`" if fn is not None and fn.name != "<module>" else " at module level"
        return Resolution(types, (Evidence(self._path(scope.module), fn.line if fn is not None else 0,
                                           f"{what} is declared `{self.annotation_text(tref)}`{where}",
                                           supporting=True, declared=True),))

    def _name(self, name: str, scope: Scope, depth: int, visiting: frozenset) -> Resolution:
        fn = scope.fn
        path = self._path(scope.module)
        if fn is not None and fn.name != "<module>":
            params = fn.params
            if scope.cls and params and name == params[0].name and fn.kind != "staticmethod":
                elem = class_element(scope.cls) if fn.kind == "classmethod" else scope.cls
                return Resolution(frozenset((elem,)))
            for p in params:
                if p.name == name:
                    types = self.annotation(p.annotation, scope.module)
                    if not types:
                        return NOTHING
                    note = f"`{name}` is a parameter annotated `{self.annotation_text(p.annotation)}`"
                    return Resolution(types, (Evidence(path, fn.line, note, declared=True),))
            if name in fn.locals:
                key = ("local", scope.module, id(fn), name)  # one summary may serve two modules
                if key in visiting:
                    return NOTHING
                out, steps, via = set(), [], "index"
                for value in fn.locals[name]:
                    tref = annotation_of(value)
                    r = self._declared(tref, scope, f"`{name}`") if tref is not None else \
                        self.resolve(value, scope, depth + 1, visiting | {key})
                    out |= r.types
                    steps.extend(r.steps)
                    via = r.via if r.via != "index" else via
                return Resolution(frozenset(out), shortened(steps, 6), via)
        sym = self.index.resolve_name(scope.module, name)
        return self._symbol(sym, depth, visiting) if sym is not None else NOTHING

    _SYMBOL_TYPES = {"class": "cls", "function": "fn", "module": "mod"}

    def _symbol(self, sym, depth: int, visiting: frozenset) -> Resolution:
        """What a named thing is: a class, function or module object, or a global's values."""
        kind = self._SYMBOL_TYPES.get(sym.kind)
        if kind is not None:
            return Resolution(frozenset(((kind, sym.qual),)))
        module, _, gname = sym.qual.rpartition(".")
        return self._global(module, gname, depth, visiting)

    def _global(self, module: str, name: str, depth: int, visiting: frozenset) -> Resolution:
        key = (module, name)
        if key in self._global_memo:
            return self._global_memo[key]
        self._global_memo[key] = NOTHING
        summary = self.index.modules[module].summary
        scope = Scope(module, None, summary.toplevel)
        out, steps = set(), []
        for value in summary.globals.get(name, ()):
            tref = annotation_of(value)
            r = self._declared(tref, scope, f"`{name}`") if tref is not None else \
                self.resolve(value, scope, depth + 1, visiting)
            out |= r.types
            steps.extend(r.steps)
        res = Resolution(frozenset(out), shortened(steps, 6))
        self._global_memo[key] = res
        return res

    def _attribute(self, base: Resolution, attr: str, depth: int, visiting: frozenset) -> Resolution:
        out, steps = set(), list(base.steps)
        for t in ordered(base.types):
            if (qual := instance_or_class(t)) is not None:
                r = self.attribute_of(qual, attr, depth + 1)
            elif (module := module_value(t)) is not None:
                sym = self.index.resolve_name(module, attr)
                if sym is None:
                    continue
                r = self._symbol(sym, depth + 1, visiting)
            else:
                continue
            out |= r.types
            steps.extend(r.steps)
        return Resolution(frozenset(out), shortened(steps, 8), base.via)

    def attribute_of(self, qual: str, attr: str, depth: int = 0) -> Resolution:
        """Types of `instance.attr` for an instance of `qual` (annotations, assignments, properties)."""
        key = (qual, attr)
        if key in self._attr_memo:
            return self._attr_memo[key]
        self._attr_memo[key] = NOTHING  # cycle guard
        res = self._attribute_of(qual, attr, depth)
        self._attr_memo[key] = res
        return res

    def _attribute_of(self, qual: str, attr: str, depth: int) -> Resolution:
        if qual not in self.index.classes:
            return NOTHING
        for c in self.index.mro(qual):
            # What one class says about `attr` depends on that class alone, so its answer is
            # shared by all its subclasses.
            key = (c, attr)
            own = self._own_attr_memo.get(key)
            if own is None:
                self._own_attr_memo[key] = NOTHING  # cycle guard
                own = self._own_attr_memo[key] = self._own_attribute(c, attr, depth)
            if own is not _ABSENT:
                return own
        return NOTHING

    def _own_attribute(self, c: str, attr: str, depth: int) -> Resolution:
        """`attr` as class `c` itself declares or assigns it; _ABSENT when `c` says nothing."""
        index = self.index
        entry = index.classes[c]
        info = entry.info
        path = entry.file.display
        fn = info.methods.get(attr)
        if fn is not None:
            if fn.kind == "property":
                return self._returns(c, fn, depth)
            return Resolution(frozenset((("method", c, attr),)))
        ca = info.attrs.get(attr)
        if ca is not None:
            if ca.annotation is not None:
                types = self.annotation(ca.annotation, entry.module)
                if types:
                    note = f"`{info.name}.{attr}` is annotated `{self.annotation_text(ca.annotation)}`"
                    return Resolution(types, (Evidence(path, ca.line, note, declared=True),))
            if ca.value is not None:
                r = self.resolve(ca.value, Scope(entry.module, c, None), depth + 1)
                if r.types:
                    return r
        out, steps, via = set(), [], "index"
        for method, (value, ann, line) in index.assignments(c).get(attr, ()):
            if ann is not None:
                types = self.annotation(ann, entry.module)
                if types:
                    out |= types
                    steps.append(Evidence(path, line, f"`self.{attr}` is annotated "
                                                      f"`{self.annotation_text(ann)}` in `{info.name}`", declared=True))
                    continue
            r = self.resolve(value, Scope(entry.module, c, method), depth + 1)
            if r.types:
                out |= r.types
                shown = ", ".join(sorted(describe_type(t) for t in r.types))
                steps.extend(r.steps)
                steps.append(Evidence(path, line, f"`{info.name}.{method.name}` assigns "
                                                  f"`self.{attr}` ({shown})"))
                via = r.via if r.via != "index" else via
        if out:
            return Resolution(frozenset(out), shortened(steps, 8), via)
        return _ABSENT

    def _call(self, ref: tuple, scope: Scope, depth: int, visiting: frozenset) -> Resolution:
        if ref[1] is not None and is_attr(ref[1]):
            bound = self._classmethod_call(ref[1], scope, depth, visiting)
            if bound is not None:
                return bound
        func = self.resolve(ref[1], scope, depth + 1, visiting)
        out, steps = set(), list(func.steps)
        for t in ordered(func.types):
            if isinstance(t, str):
                continue  # calling an instance: __call__, not followed
            if (cls := class_value(t)) is not None:
                out.add(cls)
                continue
            fn = self.function_of(t)
            if fn is not None:
                r = self._return_types(t[1].rpartition(".")[0], None, fn, depth) if is_function_value(t) else \
                    self._returns(t[1], fn, depth)
                out |= r.types
                steps.extend(r.steps)
        return Resolution(frozenset(out), shortened(steps, 8), func.via)

    def _classmethod_call(self, func_ref: tuple, scope: Scope, depth: int,
                          visiting: frozenset) -> Resolution | None:
        """`X.make(...)` or `x.make(...)` read per class that can run it, where the general path
        (the returns of the method the static type finds) says too little:

        * a classmethod X inherits: its `cls` is X, so what it builds with `cls(...)` is an X, not
          the class that defines `make` (and through it every subclass);
        * a placeholder on the static type (abstract, `...`, `raise NotImplementedError`): each
          subclass overrides it (a per-class factory, `get_impl_cls()`), so the call gives what
          those overrides return, when every one of them says.

        None where neither applies, or an override's return cannot be read: the general path
        answers (the declared return type)."""
        base = self.resolve(func_ref[1], scope, depth + 1, visiting)
        calls = []
        for t in ordered(base.types):
            qual = instance_or_class(t)
            if qual is None:
                return None
            for m in ordered(self.attribute_of(qual, func_ref[2], depth + 1).types):
                fn = self.function_of(m)
                if fn is None or not is_method_value(m):
                    return None
                calls.append((qual, m[1], fn))
        bound = any(fn.kind == "classmethod" and qual != owner for qual, owner, fn in calls)
        placeholders = [(qual, owner, fn) for qual, owner, fn in calls if _placeholder(fn)]
        if not bound and not placeholders:
            return None
        out, steps = set(), list(base.steps)
        for qual, owner, fn in calls:
            if _placeholder(fn):
                r = self._overrides_return(qual, owner, func_ref[2], depth)
                if r is None:
                    return None
            else:
                r = self._return_types(self.index.classes[owner].module,
                                       qual if fn.kind == "classmethod" else owner, fn, depth)
            out |= r.types
            steps.extend(r.steps)
        return Resolution(frozenset(out), shortened(steps, 8), base.via)

    def _overrides_return(self, qual: str, owner: str, name: str, depth: int) -> Resolution | None:
        """What the overrides of placeholder `owner.name` in `qual`'s subclasses return; None
        where there is none, or one's return says nothing."""
        out, steps, seen = set(), [], set()
        for sub in sorted(self.index.descendants(qual)):
            found = self.index.method(sub, name)
            if found is None or found.owner == owner or found.owner in seen:
                continue
            seen.add(found.owner)
            fn = found.fn
            if _placeholder(fn):
                continue  # an intermediate class's own placeholder: its subclasses answer
            r = self._return_types(self.index.classes[found.owner].module,
                                   sub if fn.kind == "classmethod" else found.owner, fn, depth)
            if not r.types:
                return None
            out |= r.types
            steps.extend(shortened(r.steps, 1))
        if not out:
            return None
        return Resolution(frozenset(out), shortened(steps, 8))

    def function_of(self, t) -> FunctionInfo | None:
        """The function a ("fn", qual) or ("method", class, name) type element names, if in the tree."""
        if not isinstance(t, tuple):
            return None
        if is_function_value(t):
            module, _, name = t[1].rpartition(".")
            mod = self.index.modules.get(module)
            return mod.summary.functions.get(name) if mod else None
        if is_method_value(t):
            entry = self.index.classes.get(t[1])
            return entry.info.methods.get(t[2]) if entry else None
        return None

    def _within(self, t, declared: frozenset) -> bool:
        """Whether type element `t` is one of, or a subclass of, the declared types."""
        if isinstance(t, str):
            return any(isinstance(d, str) and d in self.index.mro(t) for d in declared)
        for read in (seq_of, class_value):  # a collection within collections, a class within classes
            q = read(t)
            if q is not None:
                return any((b := read(d)) is not None and b in self.index.mro(q) for d in declared)
        return False

    def _returns(self, owner: str, fn: FunctionInfo, depth: int) -> Resolution:
        return self._return_types(self.index.classes[owner].module, owner, fn, depth)

    def _return_types(self, module: str, owner: str | None, fn: FunctionInfo, depth: int) -> Resolution:
        key = (module, owner, fn.name)
        if key in self._return_memo:
            return self._return_memo[key]
        self._return_memo[key] = NOTHING
        path = self._path(module)
        label = f"{owner.rsplit('.', 1)[-1]}.{fn.name}" if owner else fn.name
        types = self.annotation(fn.returns, module)
        out, steps, complete = set(), [], True
        for value in fn.return_values:
            r = self.resolve(value, Scope(module, owner, fn), depth + 1)
            out |= r.types
            steps.extend(r.steps)
            complete = complete and bool(r.types)
        # A factory annotated with the base but returning one concrete class is that class: the
        # return statements are the more precise fact whenever they agree with the annotation and
        # all of them are understood (`return table[key]` beside `return A` may give anything the
        # annotation allows).
        if out and (not types or complete and all(self._within(t, types) for t in out)):
            shown = ", ".join(sorted(describe_type(t) for t in out))
            steps.append(Evidence(path, fn.line, f"`{label}()` returns {shown} (from its return statements)"))
            res = Resolution(frozenset(out), shortened(steps, 8))
        elif types:
            res = Resolution(types, (Evidence(path, fn.line, f"`{label}()` returns "
                                                             f"`{self.annotation_text(fn.returns)}`", declared=True),))
        else:
            res = NOTHING
        self._return_memo[key] = res
        return res


def _placeholder(fn: FunctionInfo) -> bool:
    """A method that only declares what subclasses give: abstract, only raising
    NotImplementedError, or an annotated body that returns nothing (`-> type[Impl]: ...`)."""
    return declared_only(fn) or (fn.noop and not fn.return_values and fn.returns is not None)
