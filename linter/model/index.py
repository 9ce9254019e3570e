"""The whole-tree model: modules, names, classes with their MRO, and class families."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from ..files.discover import SourceFile
from ..perfile.summary import ClassInfo, FunctionInfo, ModuleSummary
from ..refs import dotted_ref

# Levels of in-tree inheritance followed: real hierarchies are a dozen deep at most; a planted chain
# deeper than this would make the MROs it materialises (one list per class, each as long as its
# depth) grow with the square of its length.
MAX_DEPTH = 5_000
# Bases that add no members a hook could come from; anything else outside the tree is opaque.
INERT_EXTERNAL_BASES = {
    "object", "ABC", "abc.ABC", "Generic", "typing.Generic", "Protocol", "typing.Protocol",
    "ABCMeta", "abc.ABCMeta", "NamedTuple", "typing.NamedTuple",
}


def _c3(qual: str, seqs: list[list[str]]) -> list[str]:
    """C3's merge of the parents' linearisations and the parents' list (depth-first order where
    the hierarchy is inconsistent and C3 fails, as Python would refuse it)."""
    seqs = [s for s in seqs if s]
    result = [qual]
    placed = {qual}
    pos = [0] * len(seqs)
    in_tail: dict[str, int] = {}
    for s in seqs:
        for c in s[1:]:
            in_tail[c] = in_tail.get(c, 0) + 1
    while True:
        head = None
        for i, s in enumerate(seqs):
            if pos[i] < len(s) and not in_tail.get(s[pos[i]]):
                head = s[pos[i]]
                break
        if head is None:
            if any(pos[i] < len(s) for i, s in enumerate(seqs)):
                for i, s in enumerate(seqs):
                    for c in s[pos[i]:]:
                        if c not in placed:
                            placed.add(c)
                            result.append(c)
            return result
        if head not in placed:  # only a cycle repeats a class
            placed.add(head)
            result.append(head)
        for i, s in enumerate(seqs):
            if pos[i] < len(s) and s[pos[i]] == head:
                pos[i] += 1
                if pos[i] < len(s):
                    in_tail[s[pos[i]]] -= 1


MAX_FULL_MRO = 2_000  # classes one found_before_opaque linearisation may read


class Found(NamedTuple):
    """Where normal attribute lookup finds a member (TreeIndex.lookup)."""
    owner: str  # the class in the MRO that has it
    kind: str  # "method", "attr" (class-level) or "instance" (assigned on self in a method)


class FoundMethod(NamedTuple):
    """The method attribute lookup finds (TreeIndex.method)."""
    owner: str
    fn: FunctionInfo


# Built without NamedTuple's generated __new__ (a frame per record): member tables hold many.
_found = tuple.__new__


@dataclass(slots=True)
class Module:
    name: str
    file: SourceFile
    summary: ModuleSummary


@dataclass(slots=True)
class ClassEntry:
    qual: str
    module: str
    info: ClassInfo
    file: SourceFile


@dataclass(frozen=True, slots=True)
class Symbol:
    kind: str  # class | function | module | global
    qual: str  # dotted qualified name (for globals: module + "." + name)


class TreeIndex:
    """The tree's names and classes, from the per-file summaries alone: what a rule asks first.

    - Modules and names: `find_module` (a module by its dotted name, matching by its end where
      the tree is named from below or above its import root), `resolve_name` (what a dotted name
      written in a module is: class, function, module or global, through imports and aliases).
    - Classes: `classes` (qualified name -> its summary and module), `bases` (in-tree bases and
      the names of outside ones), `outside_bases` (where those come from), `mro`,
      `found_before_opaque` (Python's MRO with outside bases as opaque classes), `opaque_bases`,
      `subclasses`, `descendants`, `roots` (a class's family roots).
    - Members: `lookup` / `method` / `owner_of` (where an instance of a class finds a member),
      `has_getattr_hook`, `assignments` (the `self.<attr>` assignments of a class's methods).

    Every answer is remembered per run; walks over inheritance are bounded (MAX_DEPTH) so that
    a hostile tree cannot make them quadratic.
    """
    def __init__(self, modules: list[Module]):
        _separate_projects(modules)
        self.modules: dict[str, Module] = {}
        for m in modules:
            # Two files claiming one module within one project: keep the first.
            self.modules.setdefault(m.name, m)
        self.classes: dict[str, ClassEntry] = {}
        for m in self.modules.values():
            for cname, info in m.summary.classes.items():
                self.classes[f"{m.name}.{cname}"] = ClassEntry(f"{m.name}.{cname}", m.name, info, m.file)
        self._suffixes: dict[str, str | None] | None = None
        self._name_memo: dict[tuple[str, str], Symbol | None] = {}
        self._bases_memo: dict[str, tuple[list[str], list[str]]] = {}
        self._declared_memo: dict[str, tuple[list[str], list[str]]] = {}
        self._symbols_memo: dict[str, list[tuple[str, str | None]]] = {}
        self._mro_memo: dict[str, list[str]] = {}
        self._roots_memo: dict[str, frozenset[str]] = {}
        self._members_memo: dict[str, tuple[dict, dict]] = {}
        self._assign_memo: dict[str, dict[str, list]] = {}
        self._depth_memo: dict[str, int] = {}
        self._descendants_memo: dict[str, frozenset[str]] = {}
        self._opaque_memo: dict[str, tuple[str, ...]] = {}
        self._class_level_memo: dict[str, dict[str, Found | None]] = {}  # member -> class -> where
        self._instance_level_memo: dict[str, dict[str, Found | None]] = {}
        self._cut: set[str] = set()  # classes whose in-tree bases were cut so far (MAX_DEPTH)

    def assignments(self, qual: str) -> dict[str, list[tuple[FunctionInfo, tuple]]]:
        """`self.<attr>` assignments in the class's own methods: attr -> [(method, (value, annotation, line))]."""
        hit = self._assign_memo.get(qual)
        if hit is None:
            hit = {}
            for method in self.classes[qual].info.methods.values():
                for attr, entries in method.self_attrs.items():
                    bucket = hit.setdefault(attr, [])
                    bucket.extend((method, e) for e in entries)
            self._assign_memo[qual] = hit
        return hit

    # --- modules and names ------------------------------------------------------------------
    def find_module(self, name: str, near: str | None = None) -> str | None:
        """The module `name` refers to; from inside module `near`, its own project comes first."""
        if near and ":" in near:
            prefixed = near.split(":", 1)[0] + ":" + name
            if prefixed in self.modules:
                return prefixed
            hit = self._find_module(prefixed)
            if hit:
                return hit
        return self._find_module(name)

    def _find_module(self, name: str) -> str | None:
        if name in self.modules:
            return name
        # Trees are often analysed from inside a package or through namespace folders: accept a
        # module whose whole name is a suffix of the requested one (the tree named from below the
        # import root: `layers.x` for `sglang.srt.layers.x`), or a unique module the requested
        # name is the end of (named from above it: `python.sglang.x` for `sglang.x`); at least two
        # components either way. Never both ends cut: a plug-in laid out like its host
        # (`vllm_rbln.model_executor.x`) is not what `vllm.model_executor.x` names.
        if self._suffixes is None:
            self._suffixes = {}
            for mod in self.modules:
                parts = mod.split(".")
                for i in range(1, len(parts) - 1):
                    key = ".".join(parts[i:])
                    self._suffixes[key] = None if key in self._suffixes else mod
        label, colon, bare = name.rpartition(":")  # a project's label stays: its own modules only
        parts = bare.split(".")
        for i in range(1, len(parts) - 1):
            tail = f"{label}{colon}{'.'.join(parts[i:])}"
            if tail in self.modules:
                return tail
        return self._suffixes.get(name) if len(parts) >= 2 else None

    def _absolute(self, module: str, target: str, level: int) -> str:
        if level == 0:
            return target
        mod = self.modules.get(module)
        is_package = mod is not None and mod.file.path.endswith("__init__.py")
        parts = module.split(".")
        drop = level - 1 if is_package else level
        base = parts[: len(parts) - drop] if drop else parts
        return ".".join(base + ([target] if target else []))

    def resolve_name(self, module: str, dotted: str, _depth: int = 0) -> Symbol | None:
        """What `dotted` names when written in `module` (classes, functions, modules, globals)."""
        key = (module, dotted)
        if key in self._name_memo:
            return self._name_memo[key]
        self._name_memo[key] = None  # cycle guard
        result = self._resolve_name(module, dotted, _depth)
        self._name_memo[key] = result
        return result

    def _resolve_name(self, module: str, dotted: str, depth: int) -> Symbol | None:
        if depth > 12:
            return None
        mod = self.modules.get(module)
        if mod is None:
            return None
        head, _, rest = dotted.partition(".")
        summary = mod.summary
        sym: Symbol | None = None
        if head in summary.classes:
            sym = Symbol("class", f"{module}.{head}")
        elif head in summary.functions:
            sym = Symbol("function", f"{module}.{head}")
        else:
            # A dotted import (`import a.b`) binds `a.b` as a whole too.
            for imp in summary.imports:
                if imp.name is None and imp.local != imp.module and "." in imp.local and \
                        (dotted == imp.local or dotted.startswith(imp.local + ".")):
                    target = self.find_module(imp.module, module)
                    if target:
                        tail = dotted[len(imp.local) + 1:]
                        return self._member(Symbol("module", target), tail, depth) if tail else \
                            Symbol("module", target)
            for imp in reversed(summary.imports):
                if imp.local != head:
                    continue
                sym = self._import_target(module, imp, depth)
                if sym:
                    break
            if sym is None and head in summary.globals:
                sym = self._alias(module, summary.globals[head], depth)
            if sym is None and (head in summary.globals or any(n == head for n, _ in summary.name_literals)):
                # (a collection of string literals binds no value the walk records as a global)
                sym = Symbol("global", f"{module}.{head}")
            if sym is None:
                for imp in summary.imports:
                    if imp.local == "*":
                        target = self.find_module(self._absolute(module, imp.module, imp.level), module)
                        exported = self.modules[target].summary.dunder_all if target else None
                        if target and target != module and (exported is None or head in exported):
                            star = self.resolve_name(target, head, depth + 1)
                            if star:
                                sym = star
                                break
        if sym is None:
            return None
        return self._member(sym, rest, depth) if rest else sym

    def _alias(self, module: str, bindings: tuple, depth: int) -> Symbol | None:
        """A module-level name bound once to a class by name (`KVConnectorBaseType = KVConnectorBase_V1`,
        `Backend = backends.Flash`): that class, as Python sees it."""
        name = dotted_ref(bindings[0]) if len(bindings) == 1 else None
        if name is None:
            return None
        target = self.resolve_name(module, name, depth + 1)
        return target if target is not None and target.kind == "class" else None

    def _import_target(self, module: str, imp, depth: int) -> Symbol | None:
        if imp.name is None:
            target = self.find_module(imp.module, module)
            return Symbol("module", target) if target else None
        base = self._absolute(module, imp.module, imp.level)
        submodule = self.find_module(f"{base}.{imp.name}" if base else imp.name, module)
        if submodule and (submodule.endswith("." + imp.name) or submodule == imp.name):
            # `from pkg import mod` binds the submodule unless pkg defines that name itself.
            base_mod = self.find_module(base, module) if base else None
            if base_mod is None or not self._defines(base_mod, imp.name):
                return Symbol("module", submodule)
        base_mod = self.find_module(base, module) if base else None
        if base_mod is None:
            return None
        if base_mod == module:
            return None
        return self.resolve_name(base_mod, imp.name, depth + 1)

    def _defines(self, module: str, name: str) -> bool:
        s = self.modules[module].summary
        return name in s.classes or name in s.functions or name in s.globals or any(
            i.local == name for i in s.imports)

    def _member(self, sym: Symbol, rest: str, depth: int) -> Symbol | None:
        if sym.kind == "module":
            sub = self.find_module(f"{sym.qual}.{rest}", sym.qual)
            return self.resolve_name(sym.qual, rest, depth + 1) or (Symbol("module", sub) if sub else None)
        if sym.kind == "class":
            nested = f"{sym.qual}.{rest}"
            return Symbol("class", nested) if nested in self.classes else None
        return None

    # --- classes ------------------------------------------------------------------------------
    def bases(self, qual: str) -> tuple[list[str], list[str]]:
        """(in-tree base classes, external base names that the tree does not define). A class
        deeper than MAX_DEPTH below its roots has its in-tree bases taken as external: bounded
        walks, where real hierarchies are a dozen levels deep at most."""
        hit = self._bases_memo.get(qual)
        if hit is not None:
            return hit
        internal, external = self._declared_bases(qual)
        if internal and self._depth(qual) > MAX_DEPTH:
            self._cut.add(qual)
            external = external + [q.rsplit(".", 1)[-1] for q in internal]
            internal = []
        self._bases_memo[qual] = (internal, external)
        return internal, external

    def _depth(self, qual: str) -> int:
        """Levels from `qual` up to its farthest in-tree root (1 for a root), over the declared
        bases; a cycle counts as a root."""
        hit = self._depth_memo.get(qual)
        return hit if hit is not None else self.bottom_up(
            qual, self._depth_memo,
            lambda q: 1 + max((self._depth_memo.get(p, 0) for p in self._declared_bases(q)[0]), default=0),
            lambda q: self._declared_bases(q)[0])

    def _declared_bases(self, qual: str) -> tuple[list[str], list[str]]:
        hit = self._declared_memo.get(qual)
        if hit is not None:
            return hit
        internal: list[str] = []
        external: list[str] = []
        for name, q in self._base_symbols(qual):
            if q:
                internal.append(q)
            else:
                external.append(name)
        self._declared_memo[qual] = (internal, external)
        return internal, external

    def _base_symbols(self, qual: str) -> list[tuple[str, str | None]]:
        """(name as written, the in-tree class it resolves to or None) of each declared base, in
        order; resolved once per class (the declared bases, the MRO and the outside bases read it)."""
        hit = self._symbols_memo.get(qual)
        if hit is None:
            hit = self._symbols_memo[qual] = self._resolve_bases(qual)
        return hit

    def _resolve_bases(self, qual: str) -> list[tuple[str, str | None]]:
        entry = self.classes[qual]
        outer = entry.info.name.rsplit(".", 1)[0] if "." in entry.info.name else None
        out = []
        for ref in entry.info.bases:
            name = ref[1]
            sym = self.resolve_name(entry.module, name)
            if sym is None and outer:
                sym = self.resolve_name(entry.module, f"{outer}.{name}")
            found = sym is not None and sym.kind == "class" and sym.qual in self.classes and sym.qual != qual
            out.append((name, sym.qual if found else None))
        return out

    def outside_bases(self, qual: str) -> list[str]:
        """Where each declared base of `qual` that the tree does not define comes from, as the
        module's absolute imports say (`vllm.attention.Backend`); bases bound otherwise are left
        out (a local alias, a relative import of a module the tree lacks)."""
        entry = self.classes[qual]
        imports = self.modules[entry.module].summary.imports
        out = []
        for name, found in self._base_symbols(qual):
            if found is not None:
                continue
            head, _, rest = name.partition(".")
            imp = next((i for i in reversed(imports) if i.local == head), None)
            if imp is None or imp.level or not imp.module:
                continue
            origin = imp.module if imp.name is None else f"{imp.module}.{imp.name}"
            if imp.name is None and "." in imp.local:  # `import a.b` binds `a`
                origin = head
            out.append(f"{origin}.{rest}" if rest else origin)
        return out

    def mro(self, qual: str) -> list[str]:
        """In-tree MRO by C3 linearisation (depth-first order where C3 fails)."""
        hit = self._mro_memo.get(qual)
        return hit if hit is not None else self.bottom_up(qual, self._mro_memo, self._linearise)

    def bottom_up(self, qual: str, memo: dict, compute, parents=None) -> object:
        """`memo[qual]`, where `compute(c)` may read `memo` for each of c's in-tree parents: every
        ancestor is computed first, from an explicit stack, since a chain thousands of classes
        deep (written in any order) must not recurse once per class. A parent missing from
        `memo` when `compute` runs is a cycle in a broken hierarchy. `parents(c)`: c's in-tree
        bases (by default as `bases` gives them)."""
        parents = parents or (lambda c: self.bases(c)[0])
        started: set[str] = set()
        stack = [qual]
        while stack:
            q = stack[-1]
            if q in memo:
                stack.pop()
                continue
            if q not in started:
                started.add(q)
                waiting = [p for p in parents(q) if p not in memo and p not in started]
                if waiting:
                    stack.extend(reversed(waiting))
                    continue
            stack.pop()
            memo[q] = compute(q)
        return memo[qual]

    def _linearise(self, qual: str) -> list[str]:
        """C3 over the parents' MROs (known, or taken as the parent alone in a cycle), in time
        linear in their total length: a long chain of single inheritance must not be cubic."""
        parents = self.bases(qual)[0]
        seqs = [self._mro_memo.get(p) or [p] for p in parents] + [parents]
        if len(parents) == 1:
            return [qual] + seqs[0]  # what C3 gives for single inheritance
        return _c3(qual, seqs)

    def found_before_opaque(self, qual: str, owner: str) -> bool:
        """Whether Python's MRO of `qual` reaches the in-tree class `owner` before every external
        base that could contribute members (`class M(Base, ExternalOp)`: `Base`'s ancestors come
        before `ExternalOp`'s): a member `owner` defines is then found there, whatever the
        external bases hold. Read from a linearisation with each external base as a class of its
        own (what it inherits is outside the tree: after it, so it cannot come sooner). A chain of
        single in-tree inheritance is walked up in order; C3 runs from the first class with
        several bases or an external one, over at most MAX_FULL_MRO classes (past that: no)."""
        q = qual
        for _ in range(MAX_DEPTH + 1):
            if q == owner:
                return True
            parents = self._ordered_bases(q)
            if len(parents) != 1 or parents[0].startswith("?"):
                break
            q = parents[0]
        else:
            return False
        memo: dict[str, list[str]] = {}
        order = self._full_linearise(q, memo, [0])
        for c in order or ():
            if c == owner:
                return True
            if c.startswith("?") and c[1:] not in INERT_EXTERNAL_BASES:
                return False
        return False

    def _ordered_bases(self, qual: str) -> list[str]:
        """The declared bases in order: in-tree ones by qualified name, the others as "?Name"."""
        internal = set(self.bases(qual)[0])
        return [q if q in internal else f"?{name}" for name, q in self._base_symbols(qual)]

    def _full_linearise(self, qual: str, memo: dict, count: list) -> list[str] | None:
        if qual in memo:
            return memo[qual]
        count[0] += 1
        if count[0] > MAX_FULL_MRO:
            return None
        memo[qual] = [qual]  # a cycle in a broken hierarchy stops here
        parents = self._ordered_bases(qual) if not qual.startswith("?") else []
        seqs = []
        for p in parents:
            got = self._full_linearise(p, memo, count) if not p.startswith("?") else [p]
            if got is None:
                return None
            seqs.append(got)
        memo[qual] = _c3(qual, seqs + [parents]) if parents else [qual]
        return memo[qual]

    def opaque_bases(self, qual: str) -> tuple[str, ...]:
        """External bases anywhere in the MRO that could contribute unknown members."""
        return self._up_the_chain(qual, self._opaque_memo, self._own_opaque, self._opaque_of)

    def _own_opaque(self, qual: str) -> tuple[str, ...]:
        return tuple(b for b in self.bases(qual)[1] if b not in INERT_EXTERNAL_BASES)

    def _opaque_of(self, qual: str) -> tuple[str, ...]:
        return tuple(b for c in self.mro(qual) for b in self._own_opaque(c))

    def _up_the_chain(self, qual: str, memo: dict, own, whole, combine=None):
        """`memo[qual]` for a property of a class's MRO, found by walking up single inheritance:
        on a class with one in-tree parent it is `combine(own(class), the parent's)`, elsewhere
        `whole(class)` (over its MRO). Every class walked keeps its answer, so asking every class
        of a chain thousands deep costs the chain's length once, not its square."""
        hit = memo.get(qual)
        if hit is not None:
            return hit
        walked: list[str] = []
        seen: set[str] = set()
        q = qual
        while True:
            if q in memo:
                hit = memo[q]
                break
            parents = self.bases(q)[0]
            if len(parents) != 1 or parents[0] in seen or parents[0] == q:
                hit = memo[q] = whole(q)
                break
            seen.add(q)
            walked.append(q)
            q = parents[0]
        for q in reversed(walked):
            mine = own(q)
            hit = memo[q] = combine(mine, hit) if combine is not None else (mine + hit if mine else hit)
        return hit

    @cached_property
    def too_deep(self) -> frozenset[str]:
        """Every class whose in-tree bases were cut (MAX_DEPTH): each class's bases asked first."""
        for qual in self.classes:
            self.bases(qual)
        return frozenset(self._cut)

    @cached_property
    def subclasses(self) -> dict[str, set[str]]:
        """Direct subclasses of each in-tree class."""
        children: dict[str, set[str]] = {}
        for qual in self.classes:
            for base in self.bases(qual)[0]:
                children.setdefault(base, set()).add(qual)
        return children

    def descendants(self, qual: str) -> frozenset[str]:
        """Every in-tree subclass of `qual`, at any depth (remembered: rules ask per pairing)."""
        hit = self._descendants_memo.get(qual)
        if hit is None:
            out: set[str] = set()
            todo = [qual]
            while todo:
                for child in self.subclasses.get(todo.pop(), ()):
                    if child not in out:
                        out.add(child)
                        todo.append(child)
            hit = self._descendants_memo[qual] = frozenset(out)
        return hit

    def member_table(self, qual: str) -> tuple[dict[str, Found], dict[str, Found]]:
        table = self._members_memo.get(qual)
        if table is None:
            class_level: dict[str, Found] = {}
            instance_level: dict[str, Found] = {}
            for c in reversed(self.mro(qual)):  # nearer classes overwrite farther ones
                info = self.classes[c].info
                attr, method, instance = _found(Found, (c, "attr")), _found(Found, (c, "method")), \
                    _found(Found, (c, "instance"))
                for name in info.attrs:
                    class_level[name] = attr
                for name in info.methods:
                    class_level[name] = method
                for fn in info.methods.values():
                    for name in fn.self_attrs:
                        instance_level[name] = instance
            table = (class_level, instance_level)
            self._members_memo[qual] = table
        return table

    def lookup(self, qual: str, member: str) -> Found | None:
        """Where `member` is found by normal attribute lookup on an instance.

        kind is "method", "attr" (class-level), or "instance" (assigned on self in a method).
        Class-level definitions anywhere in the MRO win over instance assignments, as they do
        for methods and properties at run time.
        """
        table = self._members_memo.get(qual)
        if table is not None:
            return table[0].get(member) or table[1].get(member)
        return self._class_level(qual, member) or self._instance_level(qual, member)

    def method(self, qual: str, name: str) -> FoundMethod | None:
        hit = self._class_level(qual, name)
        if hit is None or hit.kind != "method":
            return None  # missing, or a class attribute shadows any method further up
        return _found(FoundMethod, (hit.owner, self.classes[hit.owner].info.methods[name]))

    # One member's lookup without the class's whole member table: rules ask it of every
    # implementation of a family for a few members, and a table per class of a chain thousands
    # deep, each naming every member above it, would be quadratic.
    def _class_level(self, qual: str, name: str) -> Found | None:
        memo = self._class_level_memo.setdefault(name, {})
        return self._up_the_chain(qual, memo, lambda c: self._own_class_level(c, name),
                                  lambda c: self.member_table(c)[0].get(name), _nearest)

    def _instance_level(self, qual: str, name: str) -> Found | None:
        memo = self._instance_level_memo.setdefault(name, {})
        return self._up_the_chain(qual, memo, lambda c: self._own_instance_level(c, name),
                                  lambda c: self.member_table(c)[1].get(name), _nearest)

    def _own_class_level(self, qual: str, name: str) -> Found | None:
        info = self.classes[qual].info
        if name in info.methods:
            return _found(Found, (qual, "method"))
        return _found(Found, (qual, "attr")) if name in info.attrs else None

    def _own_instance_level(self, qual: str, name: str) -> Found | None:
        return _found(Found, (qual, "instance")) if any(
            name in fn.self_attrs for fn in self.classes[qual].info.methods.values()) else None

    def owner_of(self, qual: str, member: str) -> str | None:
        """The class whose definition of `member` an instance of `qual` finds, if any."""
        hit = self.lookup(qual, member)
        return hit.owner if hit is not None else None

    def has_getattr_hook(self, qual: str) -> str | None:
        """The nearest class of the MRO that defines a `__getattr__` method, or None."""
        hit = self._class_level(qual, "__getattr__")  # remembered: asked for every class
        if hit is None:
            return None
        if hit.kind == "method":
            return hit.owner
        # The nearest `__getattr__` is no method (an assignment): a method further up still counts.
        return next((c for c in self.mro(qual) if "__getattr__" in self.classes[c].info.methods), None)

    def roots(self, qual: str) -> frozenset[str]:
        """The top-most in-tree ancestors of a class (the roots of its families)."""
        hit = self._roots_memo.get(qual)
        return hit if hit is not None else self.bottom_up(qual, self._roots_memo, self._roots)

    def _roots(self, qual: str) -> frozenset[str]:
        parents = self.bases(qual)[0]
        if not parents:
            return frozenset((qual,))
        found = [self._roots_memo.get(p, frozenset()) for p in parents]
        return found[0] if len(found) == 1 else frozenset().union(*found)


def _nearest(own, above):
    """The nearer of a class's own answer and its parent's (None: none)."""
    return own if own is not None else above


def _separate_projects(modules: list[Module]) -> None:
    """Give each project its own module namespace when several claim the same module names.

    Analysing `fixtures/` (or a monorepo of services) finds several import roots that each have
    a `serving` package. Their modules are renamed `<root>:<module>`, and imports made inside a
    project resolve within it first, so one project's classes never stand in for another's.
    """
    roots_by_name: dict[str, set[str]] = {}
    for m in modules:
        roots_by_name.setdefault(m.name, set()).add(m.file.root)
    clashing = {r for roots in roots_by_name.values() if len(roots) > 1 for r in roots}
    if not clashing:
        return
    labels: dict[str, str] = {}
    used: set[str] = set()
    for root in sorted(clashing):
        parts = root.rstrip("/").split("/")
        for depth in range(1, len(parts) + 1):
            label = "/".join(parts[-depth:])
            if label not in used:
                break
        used.add(label)
        labels[root] = label
    for m in modules:
        if m.file.root in labels:
            m.name = f"{labels[m.file.root]}:{m.name}"
