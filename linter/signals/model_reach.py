"""model-reach: a wrapper built only for one model cannot be seen from another model's code.

Two halves, both read from code structure:

* **Where the wrapper is built.** Each construction of the wrapper, and the model tests that guard
  it: an enclosing `if`, an early `if not ...: return` or an `assert` in the same function, or
  (where the function itself is unguarded) the same on each of its callers, a few levels up. A
  model test is `isinstance(<...config...>, C)` (admits the models whose code names C), a name
  compared with literals that name classes of the tree (`arch in ("FooForCausalLM",)`: admits
  those classes; a module-level collection of literals, `arch in FOO_ARCHS`, reads the same), a
  configuration's `model_type` compared with literals (admits the models whose code names a
  configuration class declaring that `model_type`), alternatives of such tests (`a or b`: what
  either admits), or a predicate called on a config whose every `return` is such a test.
* **Which models reach the site.** The site's class runs where an instance of it (or of a
  subclass: mixins) is built; those constructions run in other classes' methods, and so on up to
  the model classes: classes built nowhere in the tree and named in a plugin registration (a
  module-level name that several modules assign their classes to). A class bound to a class
  attribute (`model_cls = FooModel`) and called through the instances' own attribute
  (`self.model_cls(config)`) is built by that class and the subclasses that keep the binding. A
  class handed to a constructor (`Pool(index_cls=C)`, `super().__init__(part_cls=C)`) is built as
  a part of that class, so it comes from where that class does; a class parameter's default
  (`def make(cls=C)`) is built where that function runs.

A pairing is ruled out when every construction of the wrapper requires a model test that admits
none of the model classes reaching the site. Anything unknown keeps the pairing live: a
construction or a caller that is not seen, a function used through a decorator or as a value
(passed, stored, aliased: value_uses.py), a class handed to a function or a method, stored in a
table, an attribute or a collection that code uses as a value (`for c in POOLS: c()`; a collection
read only by `isinstance` hands nothing on), a site reached from module-level code or from a class
built in a way the tree does not show.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from ..findings import Reason, short, unlabelled
from ..model.confidence import Pairing, Signal
from ..model.facts import scopes_of
from ..perfile.summary import KEY_SEP, class_like
from ..refs import call_gate, defaulted_type, is_attr, is_name, is_self, is_seq, is_union, test_gate

if TYPE_CHECKING:
    from ..model.context import Context

MAX_CLIMB = 4  # caller levels climbed from an unguarded construction or a module-level site
MAX_CALLERS = 40  # a function called from more places than this is treated as called from anywhere
MIN_REGISTRY_MODULES = 3  # a module-level name is a plugin registration when this many modules assign it
_UNKNOWN = None


class ModelReach(Signal):
    name = "model-reach"
    doc = ("Rules out a wrapper paired at a site when every construction of the wrapper is guarded by "
           "a model test (isinstance on a config class, an architecture-name or model-type comparison, "
           "alternatives of those, a predicate made of them) that admits none of the model classes "
           "whose code reaches the site.")
    per_module = None  # set below, once _module_tables is defined

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        if p.wrapper is None or p.wrapper not in ctx.index.classes:
            return None
        state = reach_of(ctx)
        need = state.requirement(p.wrapper)
        if not need:
            return None
        roots = state.site_roots(p.site)
        if not roots:
            return None
        blocking = []
        for alternative in need:
            if any(all(_admits(key, r, ctx) for key, _, _, _ in alternative) for r in roots):
                return None
            blocking.append(next(g for g in alternative if not any(_admits(g[0], r, ctx) for r in roots)))
        _, path, line, label = blocking[0]
        names = ", ".join(sorted(short(r) for r in roots)[:3]) + (", ..." if len(roots) > 3 else "")
        more = f" (and {len(blocking) - 1} more construction(s) likewise)" if len(blocking) > 1 else ""
        return Reason(self.name, "lower", path, line,
                      f"`{short(p.wrapper)}` is built only under {label}{more}; `{p.site.where}` is "
                      f"reached only from model classes {names}, which that test never admits")


def reach_of(ctx: Context) -> _Reach:
    """The run's tree-wide reach tables (built once, on first use)."""
    return ctx.state(_Reach, lambda: _Reach(ctx))


def _admits(key: frozenset, root: str, ctx: Context) -> bool:
    return ("cls", root) in key or ("mod", ctx.index.classes[root].module) in key


class _Reach:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.index = ctx.index
        self._class_memo: dict[str, frozenset | None] = {}
        self._need_memo: dict[str, list | None] = {}
        self._key_memo: dict[tuple, frozenset | None] = {}
        self._cons_memo: dict[str, list] = {}
        named: dict[str, list] = {}
        globals_by_name: dict[str, set[str]] = {}
        registered: dict[str, set[str]] = {}
        imported: dict[str, set[str]] = {}
        escaped: set[str] = set()  # names used as values: a class built through a variable
        via_local: dict[str, list] = {}  # class name -> functions that call a local bound to it
        class_attrs: dict[str, list] = {}  # name -> (class, attribute) class bodies binding it
        handed: dict[str, list] = {}  # name -> (module, callee) calls of names it is handed to
        held_by: dict[str, list] = {}  # name -> (module, global) module-level collections holding it
        self._mentions: dict[str, frozenset] = {}
        facts = ctx.tree.facts
        for mod in self.index.modules.values():
            derived = facts[mod.name].derived
            part = derived.get(_TABLES)
            if part is None:
                part = derived[_TABLES] = _module_tables(mod.name, mod.summary)
            m_named, m_escaped, m_via_local, m_globals, m_imported, m_class_attrs, m_handed, m_collections = part
            for name, entries in m_handed.items():
                handed.setdefault(name, []).extend(entries)
            for gname, names in m_collections.items():
                for n in names:
                    held_by.setdefault(n, []).append((mod.name, gname))
            for name, entries in m_class_attrs.items():
                class_attrs.setdefault(name, []).extend(entries)
            for name, entries in m_named.items():
                named.setdefault(name, []).extend(entries)
            escaped |= m_escaped
            for name, entries in m_via_local.items():
                via_local.setdefault(name, []).extend(entries)
            for gname, classes in m_globals.items():
                globals_by_name.setdefault(gname, set()).add(mod.name)
                registered.setdefault(gname, set()).update(classes)
            for local in m_imported:
                imported.setdefault(local, set()).add(mod.name)
        self.held_by = held_by
        self.named_callers = named
        self.escaped = escaped
        self.handed = handed
        self.via_local = via_local
        self.class_attrs = class_attrs
        self.imported = imported
        self.registered = {c for g, mods in globals_by_name.items() if len(mods) >= MIN_REGISTRY_MODULES
                           for c in registered[g]}
        self.by_short: dict[str, list[str]] = {}
        for qual in self.index.classes:
            self.by_short.setdefault(qual.rsplit(".", 1)[-1], []).append(qual)

    # --- where the wrapper is built ---------------------------------------------------------
    def requirement(self, wq: str) -> list | None:
        """Alternatives (one per construction path), each the model tests it requires:
        (key, path, line, label); None when some construction is unguarded or unseen."""
        if wq in self._need_memo:
            return self._need_memo[wq]
        self._need_memo[wq] = out = self._requirement(wq)
        return out

    def _requirement(self, wq: str) -> list | None:
        sites: list = []  # (module, class, function, lines where it builds `wq` or a subclass)
        # A subclass is the wrapper too wherever it inherits what the claim is about.
        refused: list = []  # a constructor that raises unless the model test holds, wherever it is called
        for holder in sorted({wq} | self.index.descendants(wq)):
            refusal = self._refusal(holder)
            if refusal:
                refused.append(refusal)
                continue
            if short(holder) in self.escaped or short(holder) in self.class_attrs or short(holder) in self.handed \
                    or self._in_used_collection(holder):
                return None  # also built through a variable the tree does not follow
            for scope, c in self.constructions(holder):
                callee = c[0]
                if not is_name(callee) or "." in callee[1]:
                    return None
                sites.append((scope.module, scope.cls, scope.fn,
                              [c.line for g in scope.fn.gates if (c := call_gate(g)) and c.name == callee[1]]))
            # `pool_cls = A; if x: pool_cls = B; pool_cls(...)` builds A where the local is called.
            for module, cls, fn in self.via_local.get(short(holder), ()):
                sym = self.index.resolve_name(module, short(holder))
                if sym is not None and sym.qual == holder:
                    sites.append((module, cls, fn, self._local_call_lines(fn, short(holder))))
        if not sites and not refused:
            return None  # no construction seen: built where the tree does not show
        alternatives: list = list(refused)
        for module, cls, fn, lines in sites:
            if not lines:
                return None
            for line in lines:
                found = self._guards(module, cls, fn, line, 0, frozenset())
                if found is None:
                    return None
                alternatives.extend(found)
        return alternatives

    def _refusal(self, qual: str) -> tuple | None:
        """The model tests the `__init__` that builds `qual` raises without (`if not
        isinstance(config, C): raise ...`, `assert is_x(config)`), as one alternative."""
        found = self.index.method(qual, "__init__")
        if found is None:
            return None
        owner, init = found
        module = self.index.classes[owner].module
        path = self.index.classes[owner].file.display
        keys = []
        for g in init.gates:
            t = test_gate(g)
            if t is not None and t.last == -2:
                key = self.key(module, t.key)
                if key:
                    keys.append((key, path, t.first, _label(t.key)))
        return tuple(keys) or None

    @staticmethod
    def _local_call_lines(fn, name: str) -> list[int]:
        """Lines where `fn` calls a local that may hold the class `name`."""
        holders = set()
        for local, values in fn.locals.items():
            names: set[str] = set()
            for v in values:
                _value_names(v, names)
            if name in names:
                holders.add(local)
        return sorted({c.line for c in fn.calls if is_name(c.func) and c.func[1] in holders})

    def _guards(self, module, cls, fn, line, depth, seen) -> list | None:
        path = self.index.modules[module].file.display
        keys = []
        for g in fn.gates:
            t = test_gate(g)
            if t is not None and t.first and t.first <= line <= (fn.end_line if t.last < 0 else t.last):
                key = self.key(module, t.key)
                if key:
                    keys.append((key, path, t.first - 1 if t.last >= 0 else t.first, _label(t.key)))
        if keys:
            return [tuple(keys)]
        if depth >= MAX_CLIMB:
            return None
        callers = self.callers(module, cls, fn)
        if not callers:
            return None
        out: list = []
        for m, c, f, line in callers:
            ident = (m, c, f.name)
            if ident in seen:
                continue
            found = self._guards(m, c, f, line, depth + 1, seen | {(module, cls, fn.name)})
            if found is None:
                return None
            out.extend(found)
        return out or None

    def callers(self, module, cls, fn) -> list:
        """Every call of this function the tree shows, as (module, class, function, line); empty
        when it may be called from where the tree does not show (decorated, dunder, too many)."""
        if fn.name == "<module>" or fn.name.startswith("__") or any(
                d not in ("staticmethod", "classmethod") for d in fn.decorators):
            return []
        if cls is not None:
            out = [(site.module, site.cls, site.fn, call.line)
                   for site, call, _ in self.ctx.member_calls.get(fn.name, ())]
        else:
            out = []
            for m, c, f, line in self.named_callers.get(fn.name, ()):
                sym = self.index.resolve_name(m, fn.name)
                if sym is not None and sym.kind == "function" and sym.qual == f"{module}.{fn.name}":
                    out.append((m, c, f, line))
        if not out or len(out) > MAX_CALLERS:
            return []
        # Passed, stored or aliased somewhere (`run(callback)`, `self.cb = obj.m`): called from
        # where the tree does not show too.
        uses = self.ctx.tree.value_uses
        used = uses.method(fn.name) if cls is not None else uses.function(module, fn.name)
        return [] if used else out

    def key(self, module: str, raw: tuple, depth: int = 0) -> frozenset | None:
        """What a model test admits: {("cls", class)} and {("mod", module)} items; None when the
        test is not a model test the tree can decide."""
        memo = (module, raw)
        if memo in self._key_memo:
            return self._key_memo[memo]
        self._key_memo[memo] = None  # cycle guard
        out = self._key(module, raw, depth)
        self._key_memo[memo] = out
        return out

    def _key(self, module: str, raw: tuple, depth: int) -> frozenset | None:
        kind, args = raw[0], raw[1:]
        if kind == "any":  # one of the alternatives holds: what any of them admits
            out: set = set()
            for part in args:
                k = self.key(module, tuple(part.split(KEY_SEP)), depth)
                if k is None:
                    return None
                out |= k
            return frozenset(out)
        if kind == "names" or kind == "mtype":
            literals = self._literals(module, args)
            if literals is None:
                return None
            if kind == "mtype":  # configurations of the classes that declare that model type
                configs = {q for lit in literals for q in self.model_types.get(lit, ())}
                return self._configured_by(configs) if configs else None
            found = {("cls", q) for a in literals for q in self.by_short.get(a, ())}
            return frozenset(found) or None
        if kind == "isa":
            classes = set()
            for name in args:
                sym = self.index.resolve_name(module, name)
                if sym is None or sym.kind != "class" or sym.qual not in self.index.classes:
                    return None
                classes.add(sym.qual)
            return self._configured_by(classes)
        if kind == "call" and depth < 3:
            sym = self.index.resolve_name(module, args[0])
            if sym is None or sym.kind != "function":
                return None
            fmod, _, fname = sym.qual.rpartition(".")
            fn = self.index.modules[fmod].summary.functions.get(fname) if fmod in self.index.modules else None
            returns = [t.key for g in fn.gates if (t := test_gate(g)) and t.first == 0] if fn else []
            if not returns or ("other",) in returns:
                return None
            out: set = set()
            for r in returns:
                k = self.key(fmod, r, depth + 1)
                if k is None:
                    return None
                out |= k
            return frozenset(out)
        return None

    def _configured_by(self, configs: set[str]) -> frozenset:
        """The models a test on configuration classes admits: the modules that define or import
        those classes or their subclasses."""
        mods: set = set()
        for qual in configs:
            for k in {qual} | self.index.descendants(qual):
                mods.add(self.index.classes[k].module)
                mods.update(m for m in self.imported.get(short(k), ())
                            if (s := self.index.resolve_name(m, short(k))) is not None and s.qual == k)
        return frozenset(("mod", m) for m in mods)

    def _literals(self, module: str, args: tuple) -> list[str] | None:
        """A test's literals, with "$NAME" replaced by what the module-level NAME holds (None when
        NAME is no module-level collection of literals, is rebound to something else, or has a
        method called on it anywhere: `ARCHS.add(...)`)."""
        out = []
        for a in args:
            if not a.startswith("$"):
                out.append(a)
                continue
            sym = self.index.resolve_name(module, a[1:])
            home = self.index.modules.get(sym.qual.rpartition(".")[0]) if sym and sym.kind == "global" else None
            name = sym.qual.rpartition(".")[2] if home else ""
            held = [lits for bound, lits in home.summary.name_literals if bound == name] if home else []
            if not held or not all(held) or name in self.mutated_names or a[1:] in self.mutated_names:
                return None
            out.extend(lit for lits in held for lit in lits)
        return out

    @cached_property
    def mutated_names(self) -> frozenset[str]:
        """Plain names a collection-changing method is called on anywhere (`ARCHS.add(x)`)."""
        calls = self.ctx.member_calls
        return frozenset(receiver[1] for member in _MUTATORS for _, _, (receiver, _, _) in calls.get(member, ())
                         if receiver and is_name(receiver))

    @cached_property
    def named_by_strings(self) -> frozenset[str]:
        """Classes a module-level table names by two strings, their module and their name, for a
        lazy import (`{"Arch": ("gemma3_mm", "Gemma3ForCausalLM")}`, then `import_module` and
        `getattr`), or by one string, its qualified name (`"pkg.backends.rocm.RocmBackend"`, for
        `resolve_obj_by_qualname`): handed out by name, as a class in a table of classes is. A pair
        counts only where an in-tree class of that name lives in a module whose dotted name ends
        with it; a qualified name only where it is the class's, or ends with it (a tree analysed
        from below its package's root)."""
        wanted: dict[str, set[str]] = {}
        spelled: dict[str, set[str]] = {}
        for mod in self.index.modules.values():
            for module_text, name in mod.summary.string_named:
                wanted.setdefault(name, set()).add(module_text)
            for text in mod.summary.qualname_strings:
                spelled.setdefault(text.rpartition(".")[2], set()).add(text)
        if not wanted and not spelled:
            return frozenset()
        out = set()
        for qual, entry in self.index.classes.items():
            name = entry.info.name
            texts = wanted.get(name)
            if texts and any(entry.module == t or entry.module.endswith("." + t) for t in texts):
                out.add(qual)
            elif name in spelled:
                plain = unlabelled(qual)  # a project's label is no part of the name code spells
                if any(t == plain or t.endswith("." + plain) for t in spelled[name]):
                    out.add(qual)
        return frozenset(out)

    @cached_property
    def model_types(self) -> dict[str, list[str]]:
        """Model type -> the configuration classes that declare it (`model_type = "foo"`)."""
        table: dict[str, list[str]] = {}
        for mod in self.index.modules.values():
            for name, lits in mod.summary.name_literals:
                cname, _, attr = name.rpartition(".")
                qual = f"{mod.name}.{cname}"
                # (a class body's; module-level names have no dot)
                if attr == "model_type" and qual in self.index.classes:
                    table.setdefault(lits[0], []).append(qual)
        return table

    # --- which model classes reach a site ----------------------------------------------------
    def site_roots(self, site) -> frozenset | None:
        return self._fn_roots(site.module, site.cls, site.fn, 0, frozenset())

    def _fn_roots(self, module, cls, fn, depth, seen) -> frozenset | None:
        if cls is not None:
            return self._class_roots(cls)
        if depth >= MAX_CLIMB:
            return None
        callers = self.callers(module, None, fn)
        if not callers:
            return None
        out: set = set()
        for m, c, f, _ in callers:
            if (m, c, f.name) in seen:
                continue
            r = self._fn_roots(m, c, f, depth + 1, seen | {(module, cls, fn.name)})
            if r is None:
                return None
            out |= r
        return frozenset(out)

    def _class_roots(self, qual: str) -> frozenset | None:
        """The model classes from which an instance of `qual` (or of a subclass) can come."""
        out: set = set()
        for holder in sorted({qual} | self.index.descendants(qual)):
            r = self._own_roots(holder)
            if r is None:
                return None
            out |= r
        return frozenset(out)

    def _own_roots(self, holder: str) -> frozenset | None:
        """The model classes from which an instance of exactly `holder` can come."""
        if holder in self._class_memo:
            return self._class_memo[holder]
        self._class_memo[holder] = frozenset()  # a cycle adds nothing
        result = self._own_roots_uncached(holder)
        self._class_memo[holder] = result
        return result

    def _own_roots_uncached(self, holder: str) -> frozenset | None:
        registered = short(holder) in self.registered
        out: set = {holder} if registered else set()
        if (short(holder) in self.escaped or self._in_used_collection(holder)) and not registered:
            return None  # also built through a variable the tree does not follow
        builders = self._class_attr_builders(holder)
        if builders is None and not registered:
            return None
        handed = self._handed_roots(holder)
        if handed is None:
            return None
        out |= handed
        constructions = list(self.constructions(holder))
        for module, cls, fn in self.via_local.get(short(holder), ()):
            sym = self.index.resolve_name(module, short(holder))
            if sym is not None and sym.qual == holder:
                constructions.append((_Where(module, cls, fn), None))
        if not constructions and not builders and not handed:
            if registered or self.index.subclasses.get(holder):
                return frozenset(out)  # a model class, or a base or mixin its subclasses stand for
            return None
        for scope, _ in constructions:
            r = self._fn_roots(scope.module, scope.cls, scope.fn, 0, frozenset())
            if r is None:
                return None
            out |= r
        for b in builders or ():  # each keeps the binding itself: its own instances only
            r = self._own_roots(b)
            if r is None:
                return None
            out |= r
        return frozenset(out)

    def _in_used_collection(self, holder: str) -> bool:
        """`holder` is held by a module-level collection or alias (`POOLS = (Holder, ...)`) that
        some code uses as a value (`for c in POOLS`, `make(POOLS)`, `POOLS[0](...)`): built where
        the tree shows no call of it. Used only in type tests (`isinstance(x, POOLS)`), or not at
        all, it hands nothing on. Read in the modules that can name the collection only."""
        for module, gname in self.held_by.get(short(holder), ()):
            sym = self.index.resolve_name(module, short(holder))
            if sym is None or sym.qual != holder:
                continue
            if gname in self.named_callers or gname in self.escaped or gname in self.handed:
                return True
            if not class_like(gname):
                return True  # handed on as an argument, it would not be noted (summary.name_values)
            for m, name in self._namers(module, gname):
                if name in self._mentioned_in(m):
                    return True
        return False

    def _namers(self, module: str, gname: str) -> list[tuple[str, str]]:
        """(module, name) pairs: where `module.gname` can be named, and as what: its own module,
        modules importing it (under their local name) or its module (`mod.gname`), `*` imports."""
        out = [(module, gname)]
        for key in (gname, module.rpartition(".")[2]):
            for m, imp in self.ctx.tree.value_uses.importers(key):
                out.append((m, imp.local if imp.name == gname else gname))
        return out

    def _mentioned_in(self, module: str) -> frozenset:
        """Every name the values of the module's code are made from (attribute names too)."""
        hit = self._mentions.get(module)
        if hit is None:
            out: set[str] = set()
            summary = self.index.modules[module].summary
            for _, fn in scopes_of(module, summary):
                for values in fn.locals.values():
                    for v in values:
                        _mentioned(v, out)
                for v in fn.return_values:
                    _mentioned(v, out)
                for assigns in fn.self_attrs.values():
                    for v, _, _ in assigns:
                        _mentioned(v, out)
            hit = self._mentions[module] = frozenset(out)
        return hit

    def _handed_roots(self, holder: str) -> frozenset | None:
        """Where `holder` is handed to a constructor (`Pool(index_cls=Holder)`): built as a part
        of that class, so it comes from where that class does. Handed to anything else (a
        function, which may keep it anywhere, a registry), or to what the tree cannot resolve:
        None, unknown."""
        out: set = set()
        for module, callee in self.handed.get(short(holder), ()):
            sym = self.index.resolve_name(module, short(holder))
            if sym is None or sym.qual != holder:
                continue  # another class of that name
            if callee in self.index.classes:  # `super().__init__(part_cls=Holder)` in that class
                target_qual = callee
            else:
                target = self.index.resolve_name(module, callee)
                if target is None or target.kind != "class" or target.qual not in self.index.classes:
                    return None
                target_qual = target.qual
            r = self._class_roots(target_qual)
            if r is None:
                return None
            out |= r
        return frozenset(out)

    def _class_attr_builders(self, qual: str) -> list[str] | None:
        """The classes whose instances may build `qual` through a class attribute bound to it
        (`model_cls = Qual` in a class body, called as `self.model_cls(...)`): that class and each
        subclass that keeps the binding. None when the tree does not show where it is called: the
        attribute is also set on instances, or called through anything but a method's own first
        parameter."""
        out: list[str] = []
        for owner, attr in self.class_attrs.get(short(qual), ()):
            if owner not in self.index.classes:
                continue
            sym = self.index.resolve_name(self.index.classes[owner].module, short(qual))
            if sym is None or sym.qual != qual:
                continue  # another class of that name
            calls = self.ctx.member_calls.get(attr, ())
            if not calls:
                return None  # bound but never called: used as a value
            for site, _, (receiver, _, _) in calls:
                params = site.fn.params
                if site.cls is None or not params or not is_self(receiver, params[0].name):
                    return None
            for holder in sorted({owner} | self.index.descendants(owner)):
                class_level, instance_level = self.index.member_table(holder)
                if attr in instance_level:
                    return None
                if class_level.get(attr, (None,))[0] == owner:
                    out.append(holder)
        return out

    def constructions(self, qual: str) -> list:
        hit = self._cons_memo.get(qual)
        if hit is None:
            hit = self._cons_memo[qual] = self.ctx.tree.calls.constructions_of(qual)
        return hit


class _Where(NamedTuple):
    module: str
    cls: str | None
    fn: object


_MUTATORS = ("add", "update", "extend", "append", "insert", "discard", "remove", "pop", "clear", "setdefault",
             "__setitem__", "__ior__", "difference_update", "intersection_update", "symmetric_difference_update")
_TABLES = "model-reach"  # the key of this pass's per-module tables in ModuleFacts.derived


def _module_tables(module: str, summary) -> tuple:
    """What one module adds to the reach tables, from its summary alone: calls of names by
    name, names used as values, locals called after being bound to names, module-level names
    bound to classes, and the names it imports."""
    named: dict[str, list] = {}
    escaped: set[str] = set()
    via_local: dict[str, list] = {}
    for cqual, fn in scopes_of(module, summary):
        for g in fn.gates:
            if (c := call_gate(g)) is not None:
                named.setdefault(c.name, []).append((module, cqual, fn, c.line))
        if fn.name != "<module>":
            called = {c.func[1] for c in fn.calls if is_name(c.func)}
            for local, values in fn.locals.items():
                names: set[str] = set()
                for v in values:
                    _value_names(v, names)
                # `layer_cls = A if x else B; layer_cls(...)` builds A or B right here.
                for n in names if local in called else ():
                    via_local.setdefault(n, []).append((module, cqual, fn))
                if local not in called:
                    escaped |= names
            for v in fn.return_values:
                _value_names(v, escaped)
            for assigns in fn.self_attrs.values():
                for v, _, _ in assigns:
                    _value_names(v, escaped)
            # `def f(layer_cls=DecoderLayer)`: built (or handed on) by f's own code.
            for p in fn.params:
                ann = p.annotation
                if (defaulted := defaulted_type(ann)) is not None:
                    if "." in defaulted[1]:  # `cls=layers.C`: the local entry resolves plain names only
                        escaped.add(defaulted[1].rpartition(".")[2])
                    else:
                        via_local.setdefault(ann[1][1], []).append((module, cqual, fn))

    # `model_cls = DeepseekModel` in a class body: built where that class (or a subclass that
    # keeps the attribute) calls it through its instances (`self.model_cls(...)`).
    class_attrs: dict[str, list] = {}
    for cname, cinfo in summary.classes.items():
        for attr_name, attr in cinfo.attrs.items():
            value = attr.value
            if value and (is_name(value) or is_union(value)):
                names: set[str] = set()
                _value_names(value, names)
                for n in names:
                    class_attrs.setdefault(n, []).append((f"{module}.{cname}", attr_name))
            else:  # a list of classes, say: used as values
                _value_names(value, escaped)
    # Handed on as values (`{"x": C}`, `TABLE[k](...)`, `obj.cls = C`): C may be built where the
    # tree shows no call of it. Handed to a call of a name (`Pool(index_cls=C)`): decided where
    # that name is resolved (_Reach._handed_roots).
    escaped.update(summary.name_values)
    handed: dict[str, list] = {}
    for callee, name in summary.handed:
        if callee.startswith("super():"):  # handed to the base's constructor: a part of this class
            line = int(callee[8:])
            owner = next((c for c, f in scopes_of(module, summary) if c and f.line <= line <= f.end_line), None)
            callee = owner or callee
        handed.setdefault(name, []).append((module, callee))
    # Module-level collections and aliases (`POOLS = (A, B)`): what they hold is handed on where
    # the collection is (a module using `POOLS` only in `isinstance(x, POOLS)` hands nothing).
    collections: dict[str, frozenset] = {}
    for gname, values in summary.globals.items():
        names = set()
        for v in values:
            _value_names(v, names)
        if names:
            collections[gname] = frozenset(names)
    globals_: dict[str, set[str]] = {}
    for gname, values in summary.globals.items():
        classes = {v[1] for value in values
                   for v in (value[1] if is_seq(value) else (value,))
                   if v and is_name(v)}
        if classes:
            globals_[gname] = classes
    return (named, frozenset(escaped), via_local, globals_, frozenset(imp.local for imp in summary.imports),
            class_attrs, handed, collections)


ModelReach.per_module = (_TABLES, _module_tables)


def _value_names(ref, out: set[str], depth: int = 0) -> None:
    """Names an expression's value may be (`A if x else B`, `[A, B]`), not what it calls."""
    if not ref or depth > 6:
        return
    if is_name(ref):
        out.add(ref[1])
    elif is_union(ref) or is_seq(ref):
        for item in ref[1]:
            _value_names(item, out, depth + 1)


def _mentioned(ref, out: set[str], depth: int = 0) -> None:
    """Every name an expression's value is made from (`POOLS[i]`, `iter(POOLS)`, `mod.POOLS`, the
    callee of `f()`; a call's arguments are not in the ref: summary.name_values has those)."""
    if not ref or depth > 8 or type(ref) is not tuple:
        return
    if is_name(ref):
        out.add(ref[1])
        return
    if is_attr(ref) and type(ref[2]) is str:
        out.add(ref[2])  # `mod.POOLS`
    for part in ref[1:]:
        if type(part) is tuple:
            if part and type(part[0]) is tuple:
                for item in part:
                    _mentioned(item, out, depth + 1)
            else:
                _mentioned(part, out, depth + 1)


def _label(raw: tuple) -> str:
    kind, args = raw[0], raw[1:]
    if kind == "isa":
        return f"`isinstance(..., {' | '.join(args)})`"
    if kind == "call":
        return f"`{args[0]}(...)`"
    if kind == "any":
        return " or ".join(_label(tuple(part.split(KEY_SEP))) for part in args)
    shown = ", ".join(a[1:] if a.startswith("$") else repr(a) for a in args[:3])
    return f"a comparison of the model type with {shown}" if kind == "mtype" else f"a comparison with {shown}"
