"""The per-file pass: one parse, one walk, a small picklable summary.

The summary knows nothing of rules. It records what the whole-tree passes need: classes with their
bases, members and signatures; instance attributes with the expressions assigned to them; imports;
and, per function, local bindings, attribute probes and call sites. Expressions are kept as small
tuples ("refs") that the resolver later turns into classes.

This pass uses the standard library's `ast`: it is about ten times faster than a concrete syntax
tree and the summary needs no comments or whitespace. libcst is used where source fidelity matters
(suppression comments, code frames, the --fix codemod), and only on the files that need it.

Expression refs and type refs (annotations; a parameter whose default is a capitalised name keeps
it: a class default makes it class-valued, the resolver decides) are tuples whose first item is
the kind, documented and read in linter/refs.py.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from ..refs import (
    is_attr,
    is_call,
    is_getattr,
    is_name,
    is_seq,
    is_super_init,
    names_in,
    root_name,
    type_alternatives,
    type_union,
)
from .deepstack import call_deep
from .guards import OPAQUE, Guard, exits, falsy_defaults, guards_in_use, split_both, split_test
from .platforms import add_platform_gates, test_platform
from .reaching import bind_arguments, bind_local_calls

# Increment when the summary's shape or meaning changes: it keys the on-disk cache.
SUMMARY_VERSION = 36

POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL, KEYWORD_ONLY, VAR_KEYWORD = range(5)

# Methods that put their (last) argument into a collection: `append`, `add`, `insert`,
# `appendleft`; `extend` puts in the elements of its argument.
_FILLS = frozenset({"append", "add", "insert", "appendleft", "extend"})

# `_new(CallSite, (...))` builds a NamedTuple without its generated Python `__new__` (a frame per
# record): the walk makes hundreds of thousands of them.
_new = tuple.__new__


# The small records are NamedTuples: they rebuild several times faster than frozen dataclasses,
# and a warm run loads hundreds of thousands of them.
class Param(NamedTuple):
    name: str
    kind: int
    has_default: bool
    annotation: tuple | None = None


class Probe(NamedTuple):
    """`hasattr(recv, "member")`, `getattr(recv, "member", default)` or a try/except AttributeError."""

    line: int
    col: int
    receiver: tuple | None
    member: str
    kind: str  # hasattr | getattr-default | try-except


class Read(NamedTuple):
    """An unguarded `recv.attr` load on an object the same function probes (`b.meta` after
    `hasattr(b, "hook")`, also `get()`.meta where `get()`, an accessor without arguments, gave the
    probed object): what the code takes for granted of the object whose optional hooks it probes."""

    line: int
    receiver: tuple
    attr: str
    chained: bool  # the loaded value is itself read from (`recv.attr.x`)


class CallSite(NamedTuple):
    line: int
    col: int
    # ("attr", recv, name) | ("name", id) | ("getattr", recv, name); a call of a local bound by
    # `getattr` is recorded as one ("getattr", ...) call per such binding that reaches it.
    func: tuple
    n_positional: int
    keywords: tuple[str, ...]
    star: bool  # a *args of unknown length
    double_star: bool  # a **kwargs of unknown content


_ABSTRACT = frozenset({"abstractmethod", "abc.abstractmethod", "abstractproperty", "abc.abstractproperty"})


def is_abstract(fn: FunctionInfo) -> bool:
    return any(d in _ABSTRACT for d in fn.decorators)


def declared_only(fn: FunctionInfo) -> bool:
    """Declared, not implemented: an abstract method, or a body that only raises NotImplementedError."""
    return fn.unimplemented or is_abstract(fn)


@dataclass(slots=True)
class FunctionInfo:
    name: str
    line: int
    col: int
    end_line: int
    params: tuple[Param, ...]
    decorators: tuple[str, ...]
    returns: tuple | None  # type ref from the return annotation
    return_values: tuple[tuple, ...]  # refs of `return <expr>` statements (a few)
    noop: bool  # body is a docstring, pass, ..., return, or return <constant>
    is_async: bool = False
    locals: dict[str, tuple[tuple, ...]] = field(default_factory=dict)
    self_attrs: dict[str, tuple[tuple[tuple | None, tuple | None, int], ...]] = field(default_factory=dict)
    calls: tuple[CallSite, ...] = ()
    probes: tuple[Probe, ...] = ()
    # Calls of CamelCase names (constructors, by convention), of locals bound to one
    # (`cls = Split` then `cls(...)`), and calls passing one as an argument
    # (`wrap(runner, Split(...))`), with their argument expressions:
    # (callee ref, positional refs, ((keyword, ref), ...), has *args or **kwargs).
    constructions: tuple[tuple, ...] = ()
    unimplemented: bool = False  # body is only `raise NotImplementedError`: a placeholder, not a behaviour
    # What decides which model runs this code (linter/signals/model_reach.py): calls of names the
    # module imports or defines and model tests over the lines they guard, read with
    # refs.call_gate and refs.test_gate.
    gates: tuple[tuple, ...] = ()
    guards: tuple[Guard, ...] = ()  # the flag tests that decide which lines run (linter/perfile/guards.py)
    # `__init__` only: parameters defaulting to None/False/0/"", so that a test of them fails
    falsy_defaults: tuple[str, ...] = ()
    reads: tuple[Read, ...] = ()
    # Where a platform test holds (linter/perfile/platforms.py): ((first, last line, platforms, negated), ...).
    platform_gates: tuple[tuple, ...] = ()
    # The body only refuses: `if <test>: raise ...`, `assert ...` (with at least one of them), and
    # nothing else that acts: a validation hook, whose absence loses no working behaviour.
    checks_only: bool = False
    # (attr, line) where `self.<attr>` is assigned a false literal (False, None, 0, ""): the
    # self_attrs entry's value is None there, as for any expression the summary does not read.
    falsy_stores: tuple[tuple[str, int], ...] = ()
    # `self.<attr>` stored other than by `=`: `self.x += ...`, `setattr(self, "x", ...)`; "*" for a
    # `setattr(self, <not a literal>, ...)`, which may store any attribute.
    other_stores: tuple[str, ...] = ()
    # (attr, line) of a bare declaration `self.<attr>: T` (no value): its self_attrs entry stores
    # nothing, it only bounds what the attribute's stores hold (families.FamilyModel._stored).
    declarations: tuple[tuple[str, int], ...] = ()
    # (expression ref, line, class refs) of each `assert isinstance(<expr>, C)` (or `(C, D)`) in
    # the body itself or its `if TYPE_CHECKING:` block, on an expression no other `isinstance` of
    # the function tests: what the code declares the object to be wherever it runs.
    asserted: tuple[tuple[tuple, int, tuple[tuple, ...]], ...] = ()

    @property
    def kind(self) -> str:
        if "staticmethod" in self.decorators:
            return "staticmethod"
        if "classmethod" in self.decorators:
            return "classmethod"
        if any(d in ("property", "cached_property", "functools.cached_property") or d.endswith(".setter")
               for d in self.decorators):
            return "property"
        return "method"


@dataclass(slots=True)
class ClassAttr:
    line: int
    annotation: tuple | None
    value: tuple | None


@dataclass(slots=True)
class ClassInfo:
    name: str  # dotted within the module for nested classes: "Outer.Inner"
    line: int
    col: int
    end_line: int
    bases: tuple[tuple, ...]
    decorators: tuple[str, ...]
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    attrs: dict[str, ClassAttr] = field(default_factory=dict)
    falsy_attrs: tuple[str, ...] = ()  # class attributes assigned a false literal (False, None, 0, "")


class Import(NamedTuple):
    local: str  # the name bound in this module
    module: str  # absolute or relative module text ("" for `from . import x`)
    name: str | None  # None for `import a.b` / `import a.b as c`
    level: int


@dataclass(slots=True)
class ModuleSummary:
    lines: int
    imports: tuple[Import, ...]
    classes: dict[str, ClassInfo]
    functions: dict[str, FunctionInfo]
    toplevel: FunctionInfo  # module-level code, as a pseudo-function
    dunder_all: tuple[str, ...] | None = None  # what `from module import *` takes, when declared
    unguarded_imports: tuple[int, ...] = ()  # indices in `imports` of module-level imports under no if/try
    # (slot, attr) where the module reads `<expr>.slot.attr` and also fills slots of that name
    # (`f(slot=v)`, `self.slot = v`): a module that takes a held object apart and refills the slot.
    slot_reads: tuple[tuple[str, str], ...] = ()
    # Names bound to identifier string literals, for model tests (signals/model_reach.py): a
    # module-level collection of them (`ARCHS = frozenset({"FooForCausalLM"})`) by its name, a
    # configuration class's `model_type = "foo"` as "Class.model_type".
    name_literals: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Attribute names loaded as values (`f(obj.m)`, `cb = obj.m`: neither called nor read from)
    # or fetched by `getattr(x, "m")`: a method of that name may be called where the tree does not
    # show (value_uses.py).
    attr_values: tuple[str, ...] = ()
    # Class-like names (capitalised; not the function's own locals or parameters) handed on as
    # values: arguments of calls of anything but a plain or dotted name (those are `handed`; type
    # tests, `isinstance(x, C)`, hand nothing), container elements, stores into subscripts and
    # other objects' attributes, lambda bodies, yields, decorator arguments; and any name of a
    # collection called into (`table[k](...)`) or extended at module level (`ALL = POOLS + ...`).
    # A class named here may be built where the tree shows no call of it (signals/model_reach.py).
    name_values: tuple[str, ...] = ()
    # (callee, name): a name handed as an argument to a call of a plain or dotted name
    # (`Pool(index_cls=C)`, `make(C)`), which decides what the name is given to.
    handed: tuple[tuple[str, str], ...] = ()
    # (module text, class name) pairs of a module-level table that names classes by strings for a
    # lazy import (`MODELS = {"Arch": ("gemma3_mm", "Gemma3ForCausalLM")}`): each such class is
    # handed out by name (signals/model_reach.py: `named_by_strings`).
    string_named: tuple[tuple[str, str], ...] = ()
    # String constants that spell a dotted path ending in a capitalised name
    # (`"pkg.backends.rocm.RocmBackend"`, implicit concatenation included): a class loaded by its
    # qualified name (`resolve_obj_by_qualname(...)`, `import_string(...)`) is handed out by name
    # (signals/model_reach.py: `named_by_strings`).
    qualname_strings: tuple[str, ...] = ()

    @property
    def globals(self) -> dict[str, tuple[tuple, ...]]:
        """Module-level bindings (the pseudo-function's locals)."""
        return self.toplevel.locals


def dotted(node: ast.AST) -> str | None:
    kind = type(node)
    if kind is ast.Name:
        return node.id
    parts = []
    while kind is ast.Attribute:
        parts.append(node.attr)
        node = node.value
        kind = type(node)
    if kind is ast.Name:
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    return dotted(node) or ""


_TRANSPARENT_GENERICS = {"Optional", "Final", "ClassVar", "Annotated", "ReadOnly", "Required", "NotRequired"}
_SEQUENCE_GENERICS = {
    "List", "list", "Sequence", "MutableSequence", "Iterable", "Iterator", "Tuple", "tuple",
    "Set", "set", "FrozenSet", "frozenset", "Collection", "Deque", "deque", "ModuleList", "nn.ModuleList",
}
_MAPPING_GENERICS = {"Dict", "dict", "Mapping", "MutableMapping", "DefaultDict", "defaultdict", "OrderedDict"}


def type_ref(node: ast.expr | None, depth: int = 0) -> tuple | None:
    """An annotation as a type ref; None where it names nothing the resolver could use."""
    if node is None or depth > 6:
        return None
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
            return type_ref(parsed, depth + 1)
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union(type_ref(node.left, depth + 1), type_ref(node.right, depth + 1))
    if isinstance(node, ast.Subscript):
        head = dotted(node.value) or ""
        short = head.rsplit(".", 1)[-1]
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if short == "Union":
            result = None
            for arg in args:
                result = _union(result, type_ref(arg, depth + 1))
            return result
        if short in _TRANSPARENT_GENERICS:
            return type_ref(args[0], depth + 1)
        if short in ("Type", "type"):  # the class itself: calling it gives an instance
            inner = type_ref(args[0], depth + 1)
            return ("ttype", inner) if inner else None
        if short in _SEQUENCE_GENERICS or head in _SEQUENCE_GENERICS:
            elems = [a for a in args if not (isinstance(a, ast.Constant) and a.value is Ellipsis)]
            inner = None
            for arg in elems:
                inner = _union(inner, type_ref(arg, depth + 1))
            return ("tseq", inner) if inner else None
        if short in _MAPPING_GENERICS:
            return ("tseq", type_ref(args[-1], depth + 1)) if len(args) >= 2 else None
        return type_ref(node.value, depth + 1)
    name = dotted(node)
    if name and name not in ("None", "Any", "object", "typing.Any"):
        return ("t", name)
    return None


def _union(a: tuple | None, b: tuple | None) -> tuple | None:
    if a is None:
        return b
    if b is None:
        return a
    items = (type_alternatives(a) or (a,)) + (type_alternatives(b) or (b,))
    return type_union(items)


def _str_arg(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def is_noop_body(body: list[ast.stmt]) -> bool:
    stmts = body
    if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) \
            and isinstance(stmts[0].value.value, str):
        stmts = stmts[1:]
    for stmt in stmts:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # `...` or a stray string
        if isinstance(stmt, ast.Return) and (stmt.value is None or isinstance(stmt.value, ast.Constant)):
            continue
        return False
    return True


def is_unimplemented_body(body: list[ast.stmt]) -> bool:
    """A body (after its docstring) that only raises NotImplementedError."""
    stmts = body[1:] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else body
    if len(stmts) != 1 or not isinstance(stmts[0], ast.Raise) or stmts[0].exc is None:
        return False
    exc = stmts[0].exc.func if isinstance(stmts[0].exc, ast.Call) else stmts[0].exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def is_checks_only_body(body: list[ast.stmt]) -> bool:
    """A body (after its docstring) that only tests and refuses: `if`s whose branches only raise,
    assert or pass, `raise`, `assert`, with at least one refusal."""
    stmts = body[1:] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else body
    return _refuses(stmts, 0) is True


def _refuses(stmts: list[ast.stmt], depth: int) -> bool | None:
    """True: only refusals (and at least one); None: nothing at all; False: something acts."""
    found = None
    for stmt in stmts:
        if isinstance(stmt, (ast.Raise, ast.Assert)):
            found = True
        elif isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            continue
        elif isinstance(stmt, ast.If) and depth < 4:
            for branch in (stmt.body, stmt.orelse):
                inner = _refuses(branch, depth + 1)
                if inner is False:
                    return False
                found = found or inner
        else:
            return False
    return found


# Nodes with nothing inside that a summary uses: the walk skips them without a call.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal,
                     ast.alias, ast.arguments, ast.arg}) | frozenset(
    sub for base in (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
    for sub in base.__subclasses__())
# Fields that never hold a node the walk enters (names, flags, operators, constants).
_NOT_CHILDREN = frozenset({"ctx", "type_comment", "id", "attr", "arg", "name", "names", "module", "level", "n",
                           "s", "kind", "conversion", "is_async", "simple", "op", "ops", "value_constant",
                           "kwd_attrs", "rest", "tag", "type_ignores"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
# What the walk does with a node of each class: a visit_ method, the generic walk, or None (skip).
# Filled on first sight of a class; anything that is not an AST node (a str in a list field) is skipped.
_HANDLERS: dict[type, object] = {}
_UNSEEN = object()
_SEQUENCES = (ast.Tuple, ast.List)


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = tuple(f for f in getattr(cls, "_fields", ()) if f not in _NOT_CHILDREN)
        _CHILD_FIELDS[cls] = fields
    return fields


def _handler(cls: type):
    if cls in _LEAVES or not issubclass(cls, ast.AST):
        handler = None
    else:
        handler = _DISPATCH.get(cls) or _FunctionWalker.generic_visit
        _child_fields(cls)
    _HANDLERS[cls] = handler
    return handler


def _visit_each(walker: _FunctionWalker, nodes: list) -> None:
    """Visit each of `nodes`: one table lookup per node picks its handler, and leaves (names,
    constants, operators) cost no call at all."""
    handlers = _HANDLERS
    for node in nodes:
        handler = handlers.get(type(node), _UNSEEN)
        if handler is None:
            continue
        if handler is _UNSEEN:
            handler = _handler(type(node))
            if handler is None:
                continue
        handler(walker, node)


class ModuleWalk:
    """What the walks of one module's functions gather for the whole module."""

    __slots__ = ("chains", "platform_tested", "keywords", "literals", "attr_values", "name_values", "handed",
                 "qualnames")

    def __init__(self) -> None:
        self.chains: list[tuple[str, str]] = []  # (a, b) of every `<expr>.a.b` load
        self.keywords: set[str] = set()  # every keyword any call passes (slots filled: slot_reads)
        # Some `if` or `assert` in a function or at module level tests the platform
        # (platforms.test_platform): only then has the module platform gates to record.
        self.platform_tested = False
        self.literals: list[tuple[str, tuple[str, ...]]] = []  # ModuleSummary.name_literals
        self.attr_values: set[str] = set()  # ModuleSummary.attr_values
        self.name_values: set[str] = set()  # ModuleSummary.name_values
        self.handed: set[tuple[str, str]] = set()  # ModuleSummary.handed
        self.qualnames: set[str] = set()  # ModuleSummary.qualname_strings


class _FunctionWalker(ast.NodeVisitor):
    """Walks one function body (not nested defs or classes) collecting bindings, probes and calls."""

    def __init__(self, self_name: str | None, imports: list[Import] | None = None,
                 module: ModuleWalk | None = None):
        self.self_name = self_name
        self.imports = imports if imports is not None else []
        self.module = module if module is not None else ModuleWalk()
        self.params: frozenset[str] = frozenset()  # the function's parameters (summarise_function)
        self.module_level = False  # walking module-level code: its locals are the module's names
        self._type_test = 0  # inside the arguments of `isinstance(...)` and the like
        self.locals: dict[str, list[tuple]] = {}
        self.hooks: set[str] = set()  # locals bound by `getattr(obj, "name", ...)`
        # Every binding of a local by its target: what `locals` holds for it (None: nothing it can read).
        self.bound: dict[ast.Name, tuple | None] = {}
        self.self_attrs: dict[str, list[tuple]] = {}
        self.falsy_stores: list[tuple[str, int]] = []
        self.other_stores: set[str] = set()
        self.declarations: list[tuple[str, int]] = []
        self.asserted: list[tuple[tuple, int, tuple[tuple, ...]]] = []
        self.calls: list[CallSite | ast.Call] = []  # a plain call of a non-local: its node (_call_sites)
        self.probes: list[Probe] = []
        self.constructions: list[tuple] = []
        self.construction_calls: list[ast.Call] = []  # the call of each construction
        self.return_values: list[tuple] = []
        self.gates: list[tuple] = []
        self.nested: list[ast.AST] = []
        self._attr_guard_depth = 0  # inside `try: ... except AttributeError`
        self.guards: list[Guard] = []
        self.reads: list[ast.Attribute] = []  # `x.a` / `f().a` loads outside any AttributeError guard
        self.chained: set[int] = set()  # ids of loads whose value is read further (`x.a.b`)
        self._conditional = 0  # inside an expression part that may not be evaluated
        # Last line of the statement list being walked, where an `assert` or an early `return`
        # stops deciding; 0 where that list is not known (then neither is recorded).
        self.block_end = 0

    # The per-file pass walks a million lines, and the walk is most of its time: one table lookup
    # per child node picks its visit_ method or the generic walk or nothing, with no per-node
    # method-name lookup (NodeVisitor) and no call at all for leaves.
    def visit(self, node: ast.AST) -> None:
        handler = _HANDLERS.get(type(node), _UNSEEN)
        if handler is _UNSEEN:
            handler = _handler(type(node))
        if handler is not None:
            handler(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        fields = _CHILD_FIELDS.get(type(node))
        if fields is None:
            fields = _child_fields(type(node))
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                _visit_each(self, value)
            elif value is not None:
                self.visit(value)

    # --- expressions -> refs -------------------------------------------------------------
    def ref(self, node: ast.expr | None, depth: int = 0) -> tuple | None:
        if node is None or depth > 12:
            return None
        kind = type(node)
        if kind is ast.Name:
            return ("name", node.id)
        if kind is ast.Attribute:
            base = self.ref(node.value, depth + 1)
            return ("attr", base, node.attr) if base else None
        if kind is ast.Call:
            func = node.func
            args = node.args
            if type(func) is ast.Name:
                if func.id == "getattr" and len(args) >= 2:
                    name = _str_arg(args[1])
                    base = self.ref(args[0], depth + 1)
                    if name and base:
                        return ("getattr", base, name)
                elif func.id == "cast" and len(args) == 2:
                    t = type_ref(args[0])
                    return ("type", t) if t else None
            elif type(func) is ast.Attribute and func.attr == "cast" and len(args) == 2 \
                    and dotted(func) == "typing.cast":
                t = type_ref(args[0])
                return ("type", t) if t else None
            return ("call", self.ref(func, depth + 1), node.lineno, node.col_offset)
        if kind is ast.Subscript:
            base = self.ref(node.value, depth + 1)
            return ("sub", base) if base else None
        if kind is ast.List or kind is ast.Tuple or kind is ast.Set:
            items = tuple(r for r in (self.ref(e, depth + 1) for e in node.elts) if r)
            return ("seq", items) if items else None
        if kind is ast.IfExp:
            items = tuple(r for r in (self.ref(node.body, depth + 1), self.ref(node.orelse, depth + 1)) if r)
            return ("union", items) if items else None
        if kind is ast.BoolOp:
            items = tuple(r for r in (self.ref(v, depth + 1) for v in node.values) if r)
            return ("union", items) if items else None
        if kind is ast.NamedExpr or kind is ast.Await:
            return self.ref(node.value, depth + 1)
        return None

    # --- bindings --------------------------------------------------------------------------
    def bind(self, target: ast.expr, value: tuple | None, annotation: tuple | None = None,
             line: int = 0) -> None:
        if type(target) is ast.Name:
            bound = self.bound[target] = ("type", annotation) if annotation else value
            if bound is not None:
                self.locals.setdefault(target.id, []).append(bound)
                if value is not None and is_getattr(value) and not annotation:
                    self.hooks.add(target.id)
        elif (attr := self._own_attr(target)) is not None:
            self.self_attrs.setdefault(attr, []).append((value, annotation, line))
        elif type(target) is ast.Tuple or type(target) is ast.List:
            for elt in target.elts:
                inner = elt.value if type(elt) is ast.Starred else elt
                # Unpacking a sequence of one element type gives that type to every name.
                self.bind(inner, ("iter", value) if value else None, None, line)
        elif type(target) is ast.Starred:
            self.bind(target.value, value, annotation, line)
        elif type(target) is ast.Subscript and value is not None \
                and (attr := self._own_attr(target.value)) is not None:
            self.self_attrs.setdefault(attr, []).append((("seq", (value,)), None, line))  # `self.table[k] = v`

    def note_value(self, node: ast.expr, to: str | None = None, any_name: bool = False) -> None:
        """`node` is handed on as a value (to a call of `to`, a plain or dotted name, if given):
        note the class-like names it may be (not the function's own), or any name (`any_name`: a
        collection called into or extended, whatever its name)."""
        kind = type(node)
        if kind is ast.Name:
            name = node.id
            if not any_name and not class_like(name):
                return
            if self.module_level or (name not in self.locals and name not in self.params and name != self.self_name):
                if to:
                    self.module.handed.add((to, name))
                else:
                    self.module.name_values.add(name)
        elif kind is ast.IfExp:
            self.note_value(node.body, to)
            self.note_value(node.orelse, to)
        elif kind is ast.BoolOp:
            for v in node.values:
                self.note_value(v, to)
        elif kind is ast.Starred or kind is ast.NamedExpr:
            self.note_value(node.value, to)

    def _fill(self, func: ast.Attribute, args: list, line: int) -> None:
        """`self.backends.append(make(name))` (in a loop, say): the collection holds what is
        put in it, recorded as a store of a sequence of that value."""
        attr = self._own_attr(func.value)
        if attr is None:
            return
        arg = args[-1]
        if func.attr == "extend" and type(arg) in (ast.ListComp, ast.GeneratorExp, ast.SetComp):
            value = self.ref(arg.elt)  # `extend(make(n) for n in names)`: what each element is
            value = ("seq", (value,)) if value is not None else None
        else:
            value = self.ref(arg)
            if value is not None and func.attr == "extend":
                value = value if is_seq(value) else ("seq", (("iter", value),))
            elif value is not None:
                value = ("seq", (value,))
        if value is None:
            return
        self.self_attrs.setdefault(attr, []).append((value, None, line))

    def _own_attr(self, target: ast.expr) -> str | None:
        """`x` of an assignment target `self.x`."""
        if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == self.self_name:
            return target.attr
        return None

    def _note_falsy(self, target: ast.expr, value: ast.expr | None, line: int) -> None:
        if _falsy_literal(value):
            attr = self._own_attr(target)
            if attr is not None:
                self.falsy_stores.append((attr, line))

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.ref(node.value)
        for target in node.targets:
            if type(node.value) is ast.Constant:
                self._note_falsy(target, node.value, node.lineno)
            if type(target) in _SEQUENCES and type(node.value) in _SEQUENCES \
                    and len(target.elts) == len(node.value.elts):
                for t, v in zip(target.elts, node.value.elts):
                    self.bind(t, self.ref(v), None, node.lineno)
            else:
                self.bind(target, value, None, node.lineno)
        # The fields the generic walk would visit (`targets`, `value`), without its field loop.
        vt = type(node.value)
        for target in node.targets:
            if type(target) is not ast.Name:
                if (vt is ast.Name or vt is ast.IfExp or vt is ast.BoolOp) and (
                        type(target) is ast.Subscript
                        or (type(target) is ast.Attribute and self._own_attr(target) is None)):
                    self.note_value(node.value)  # `table[k] = C`, `obj.cls = C`
                self.visit(target)
        value = node.value
        if type(value) is ast.Call:
            self.visit_Call(value)
        elif (type(value) in _SEQUENCES or type(value) is ast.Set) and all(type(t) is ast.Name for t in node.targets):
            _visit_each(self, value.elts)  # `POOLS = (A, B)`: the name's binding holds them (model_reach)
            for e in value.elts:
                if type(e) is ast.Constant and type(e.value) is str and "." in e.value:  # (inline: most are not)
                    _note_qualname(self.module, e)
        elif type(value) is ast.Constant:
            if type(value.value) is str:
                _note_qualname(self.module, value)
        elif type(value) is not ast.Name:
            self.visit(value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        attr = self._own_attr(node.target)
        if attr is not None:
            self.other_stores.add(attr)
        if type(node.target) is not ast.Name:
            self.visit(node.target)
        value = node.value
        if type(value) is not ast.Name and type(value) is not ast.Constant:
            self.visit(value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._note_falsy(node.target, node.value, node.lineno)
        if node.value is None and (attr := self._own_attr(node.target)) is not None:
            self.declarations.append((attr, node.lineno))
        self.bind(node.target, self.ref(node.value), type_ref(node.annotation), node.lineno)
        value = node.value
        if (type(value) in _SEQUENCES or type(value) is ast.Set) and type(node.target) is ast.Name:
            _visit_each(self, value.elts)  # as in visit_Assign
        elif type(value) is ast.Constant:
            if type(value.value) is str:
                _note_qualname(self.module, value)
        elif value is not None:
            self.visit(value)

    def _bind_loop(self, target: ast.expr, iter_node: ast.expr) -> None:
        if isinstance(iter_node, ast.Call) and isinstance(iter_node.func, ast.Name) \
                and iter_node.func.id == "enumerate" and iter_node.args \
                and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            src = self.ref(iter_node.args[0])
            self.bind(target.elts[1], ("iter", src) if src else None)
            return
        if isinstance(iter_node, ast.Call) and isinstance(iter_node.func, ast.Name) \
                and iter_node.func.id in ("reversed", "list", "tuple", "sorted") and iter_node.args:
            iter_node = iter_node.args[0]
        src = self.ref(iter_node)
        self.bind(target, ("iter", src) if src else None)

    def visit_For(self, node: ast.For) -> None:
        self._bind_loop(node.target, node.iter)
        self._in_block(node)

    visit_AsyncFor = visit_For

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._bind_loop(node.target, node.iter)
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self.bind(item.optional_vars, None)
        self._in_block(node)

    visit_AsyncWith = visit_With

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.bind(node.target, self.ref(node.value), None, node.lineno)
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            for key in model_tests(node.value) or [("other",)]:
                if (0, 0, key) not in self.gates:
                    self.gates.append((0, 0, key))
        if node.value is not None and len(self.return_values) < 4:
            r = self.ref(node.value)
            if r:
                self.return_values.append(r)
        if type(node.value) is ast.Constant:
            if type(node.value.value) is str:
                _note_qualname(self.module, node.value)
        elif node.value is not None:
            self.visit(node.value)

    # Model tests (gates, for linter/signals/model_reach.py) are recorded by visit_If and
    # visit_Assert below, which also record the flag tests (guards).
    def _if_gates(self, node: ast.If) -> None:
        keys = model_tests(node.test)
        if keys and node.body:
            self.gates.extend((node.body[0].lineno, node.body[-1].end_lineno or 0, k) for k in keys)
        test = node.test
        if node.body and isinstance(node.body[-1], (ast.Return, ast.Raise)) and not node.orelse:
            # `if not is_x(config): return` (or `if not a or not b: raise`): what follows runs only
            # for that model. A `raise` refuses (last line -2): in a constructor, no object is built.
            last = -2 if isinstance(node.body[-1], ast.Raise) else -1
            negated = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
            for part in negated:
                if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Not):
                    self.gates.extend(((node.end_lineno or 0) + 1, last, k) for k in model_tests(part.operand))

    # --- imports anywhere (module level, under TYPE_CHECKING, lazy imports in functions) ---------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.imports.append(Import(alias.asname, alias.name, None, 0))
            else:
                top = alias.name.split(".", 1)[0]
                self.imports.append(Import(top, top, None, 0))
                if "." in alias.name:
                    self.imports.append(Import(alias.name, alias.name, None, 0))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.imports.append(Import(alias.asname or alias.name, node.module or "", alias.name, node.level))

    # --- nested scopes are summarised separately --------------------------------------------
    def visit_FunctionDef(self, node: ast.AST) -> None:
        self.nested.append(node)

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._conditional += 1
        self.note_value(node.body)
        self.visit(node.body)
        self._conditional -= 1

    def _sometimes(self, node: ast.expr) -> None:
        """`a if c else b`, `a and b`, a comprehension's element: a read there may not happen."""
        self._conditional += 1
        self.generic_visit(node)
        self._conditional -= 1

    visit_IfExp = visit_BoolOp = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _sometimes

    # --- dominating flag tests (linter/perfile/guards.py) ---------------------------------------------
    def visit_If(self, node: ast.If) -> None:
        self._if_gates(node)
        if not self.module.platform_tested and test_platform(node.test):
            self.module.platform_tested = True
        self.visit(node.test)
        outer = self.block_end
        holds, fails = split_both(node.test, self.ref)
        if not holds:
            holds = [(OPAQUE, True)]
        if not fails:
            fails = [(OPAQUE, False)]
        for part, facts in ((node.body, holds), (node.orelse, fails)):
            if not part:
                continue
            self.block_end = part[-1].end_lineno or part[-1].lineno
            first = part[0].lineno
            self.guards.extend([_new(Guard, (r, p, first, self.block_end)) for r, p in facts])
            _visit_each(self, part)
        self.block_end = outer
        end = node.end_lineno or node.lineno
        if outer > end and exits(node.body):
            self.guards.extend([_new(Guard, (r, p, end + 1, outer)) for r, p in fails])

    def visit_Assert(self, node: ast.Assert) -> None:
        if not self.module.platform_tested and test_platform(node.test):
            self.module.platform_tested = True
        test = node.test
        if type(test) is ast.Call and type(test.func) is ast.Name and test.func.id == "isinstance" \
                and len(test.args) == 2 and not test.keywords:
            what = self.ref(test.args[0])
            kinds = test.args[1].elts if type(test.args[1]) is ast.Tuple else [test.args[1]]
            refs = tuple(self.ref(k) for k in kinds)
            if what is not None and refs and all(is_name(r) or is_attr(r) for r in refs):
                self.asserted.append((what, node.lineno, refs))
        self.gates.extend((node.lineno + 1, -2, k) for k in model_tests(node.test))
        end = node.end_lineno or node.lineno
        if self.block_end > end:
            holds: list = []
            split_test(node.test, True, self.ref, holds)
            self.guards.extend([_new(Guard, (r, p, end + 1, self.block_end)) for r, p in holds])
        self.generic_visit(node)

    def _in_block(self, node: ast.stmt) -> None:
        """A loop or `with`: an assert in its body decides up to the statement's end."""
        outer = self.block_end
        self.block_end = node.end_lineno or node.lineno
        if type(node) is not ast.With and type(node) is not ast.AsyncWith and node.body:
            self.guards.append(_new(Guard, (OPAQUE, True, node.body[0].lineno, self.block_end)))  # may run 0 times
        self.generic_visit(node)
        self.block_end = outer

    visit_While = _in_block

    def visit_Match(self, node: ast.stmt) -> None:
        outer = self.block_end
        self.block_end = 0  # one case's assert says nothing of the next case
        self.guards.append(_new(Guard, (OPAQUE, True, node.lineno, node.end_lineno or node.lineno)))
        self.generic_visit(node)
        self.block_end = outer

    # --- probes and calls -------------------------------------------------------------------
    def visit_Try(self, node: ast.Try) -> None:
        catches = any(_catches_attribute_error(h.type) for h in node.handlers)
        outer = self.block_end
        if catches:
            self._attr_guard_depth += 1
        # A failed assert in the body can land in a handler: the body's asserts decide the body only.
        self.block_end = node.body[-1].end_lineno or 0
        if node.handlers:  # an error in the body may be caught: what runs there is not certain
            self.guards.append(_new(Guard, (OPAQUE, True, node.body[0].lineno, self.block_end)))
        _visit_each(self, node.body)
        if catches:
            self._attr_guard_depth -= 1
        for part in (node.handlers, node.orelse, node.finalbody):
            for stmt in part:
                self.block_end = 0
                if isinstance(stmt, ast.ExceptHandler):  # runs only when the body fails
                    self.block_end = stmt.end_lineno or stmt.lineno
                    self.guards.append(_new(Guard, (OPAQUE, True, stmt.lineno, self.block_end)))
                self.visit(stmt)
        self.block_end = outer

    visit_TryStar = visit_Try

    def visit_Attribute(self, node: ast.Attribute, used: bool = True) -> None:
        # `used`: loaded as a value, not called (`f(obj.m)`, `cb = obj.m`) nor read from (`obj.m.x`).
        if type(node.ctx) is ast.Load:
            if used:
                self.module.attr_values.add(node.attr)
            if self._attr_guard_depth:
                recv = self.ref(node.value)
                if recv is not None:
                    self.probes.append(Probe(node.lineno, node.col_offset, recv, node.attr, "try-except"))
            else:
                value = node.value
                kind = type(value)
                if self._conditional:
                    pass
                elif kind is ast.Name or (kind is ast.Call and type(value.func) is ast.Name
                                          and not value.args and not value.keywords):
                    self.reads.append(node)  # kept only if a probe examines the same object
                elif kind is ast.Attribute:
                    self.chained.add(id(value))
                    self.module.chains.append((value.attr, node.attr))
        value = node.value
        kind = type(value)
        if kind is ast.Attribute:  # most receivers are names (no handler, no call), then chains
            self.visit_Attribute(value, False)
        elif kind is not ast.Name:
            self.visit(value)

    # The commonest containers, their child fields named (the generic walk loops over field names).
    def visit_BinOp(self, node: ast.BinOp) -> None:
        left, right = node.left, node.right
        if type(left) is ast.Name:
            if self.module_level:
                self.note_value(left, any_name=True)  # `ALL_POOLS = POOLS + (C,)`: POOLS's classes go on
        elif type(left) is not ast.Constant:
            self.visit(left)
        if type(right) is ast.Name:
            if self.module_level:
                self.note_value(right, any_name=True)
        elif type(right) is not ast.Constant:
            self.visit(right)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        value, index = node.value, node.slice
        if type(value) is not ast.Name:
            self.visit(value)
        if type(index) is not ast.Name and type(index) is not ast.Constant:
            self.visit(index)

    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        if type(left) is not ast.Name and type(left) is not ast.Constant:
            self.visit(left)
        _visit_each(self, node.comparators)

    def visit_Tuple(self, node: ast.Tuple | ast.List) -> None:
        if not self._type_test and (type(node) is ast.Set or type(node.ctx) is ast.Load):
            self._note_names(node.elts)
        _visit_each(self, node.elts)

    def _note_names(self, nodes: list) -> None:
        """The plain names among `nodes` that are not the function's own: handed on."""
        for e in nodes:
            if type(e) is ast.Name:
                c = e.id[0]
                if "A" <= c <= "Z" or c == "_":
                    self.note_value(e)

    visit_List = visit_Set = visit_Tuple

    def visit_Dict(self, node: ast.Dict) -> None:
        self._note_names(node.values)
        _visit_each(self, node.keys)  # a `**mapping` entry's key is None, which the walk skips
        _visit_each(self, node.values)
        for v in node.values:
            if type(v) is ast.Constant and type(v.value) is str and "." in v.value:  # (inline: most are not)
                _note_qualname(self.module, v)

    def visit_Yield(self, node: ast.Yield | ast.YieldFrom) -> None:
        if node.value is not None:
            self.note_value(node.value)
            self.visit(node.value)

    visit_YieldFrom = visit_Yield

    def visit_Raise(self, node: ast.Raise) -> None:
        if node.exc is not None:
            self.visit(node.exc)
        if node.cause is not None:
            self.visit(node.cause)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        operand = node.operand
        if type(operand) is not ast.Name and type(operand) is not ast.Constant:
            self.visit(operand)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        _visit_each(self, node.values)

    def visit_FormattedValue(self, node: ast.FormattedValue) -> None:
        value = node.value
        if type(value) is not ast.Name:
            self.visit(value)
        if node.format_spec is not None:
            self.visit(node.format_spec)

    def visit_keyword(self, node: ast.keyword) -> None:
        self.visit(node.value)

    def visit_Expr(self, node: ast.Expr) -> None:
        value = node.value
        if type(value) is ast.Call:  # most expression statements are calls: straight to their handler
            self.visit_Call(value)
        else:
            self.visit(value)

    def visit_Call(self, node: ast.Call) -> None:
        # The hottest handler (one call in six nodes): exact type tests, no isinstance chains.
        func = node.func
        args = node.args
        keywords = node.keywords
        ftype = type(func)
        callee: tuple | None = None
        if ftype is ast.Name:
            fid = func.id
            if (fid == "hasattr" or fid == "getattr") and len(args) >= 2:
                member = _str_arg(args[1])
                if member is not None:
                    kind = None
                    if fid == "hasattr":
                        kind = "hasattr"
                    elif len(args) >= 3 or keywords:
                        kind = "getattr-default"
                    elif self._attr_guard_depth:
                        kind = "try-except"
                    if kind:
                        self.probes.append(Probe(node.lineno, node.col_offset, self.ref(args[0]), member, kind))
                    if fid == "getattr":  # what it returns may be called anywhere
                        self.module.attr_values.add(member)
            elif fid == "setattr" and len(args) >= 2 and type(args[0]) is ast.Name \
                    and args[0].id == self.self_name:
                self.other_stores.add(_str_arg(args[1]) or "*")
            callee = ("name", fid)
            self.gates.append((fid, node.lineno))
            last = fid
        elif ftype is ast.Attribute:
            recv = self.ref(func.value)
            if recv is not None:
                callee = ("attr", recv, func.attr)
                if args and func.attr in _FILLS:
                    self._fill(func, args, node.lineno)
            last = func.attr
        else:
            if ftype is ast.Call:
                inner = self.ref(func)
                if inner and is_getattr(inner):
                    callee = inner
            elif ftype is ast.Subscript and type(func.value) is ast.Name:
                self.note_value(func.value, any_name=True)  # `TABLE[k](...)`: what it holds is built
            last = ""
        if callee is not None:
            kws, dstar = _keywords(keywords) if keywords else (_NO_KEYWORDS, False)
            if kws:
                self.module.keywords.update(kws)
            if ftype is ast.Name and fid not in self.locals:
                # Most calls of a plain name (`len(x)`, `Batch(...)`) are of no local, and the
                # summary keeps only calls of locals: the record is made at the end, if the name
                # became a local after all (`_call_sites`).
                self.calls.append(node)
                star = None
            else:
                n_pos, star = _positional(args) if args else (0, False)
                self.calls.append(_new(CallSite, (node.lineno, node.col_offset, callee, n_pos, kws, star, dstar)))
            constructed = None
            if last == "__init__" and type(func.value) is ast.Call and type(func.value.func) is ast.Name \
                    and func.value.func.id == "super":
                constructed = ("super",)  # how a subclass constructs its base, recorded like a call
            elif (last.lstrip("_")[:1].isupper() and (args or keywords)) \
                    or ((args or keywords) and _passes_construction(args, keywords)) \
                    or (ftype is ast.Name and last in self.locals and _names_a_class(self.locals[last])):
                name = dotted(func)
                constructed = ("name", name) if name else callee
            if constructed is not None:
                if star is None:
                    star = _positional(args)[1]
                self.constructions.append((
                    constructed,
                    tuple(None if type(a) is ast.Starred else self.ref(a) for a in args),
                    tuple((kw.arg, self.ref(kw.value)) for kw in keywords if kw.arg),
                    star or dstar))
                self.construction_calls.append(node)
        # Most children are names and constants: no handler, no call.
        if ftype is ast.Attribute:
            self.visit_Attribute(func, False)
        elif ftype is not ast.Name:
            self.visit(func)
        if last in _TYPE_TESTS:  # `isinstance(x, C)`, `cast(C, x)`: C is not handed on
            self._type_test += 1
            _visit_each(self, args)
            if keywords:
                _visit_each(self, [kw.value for kw in keywords])
            self._type_test -= 1
            return
        # Names handed on (summary.name_values, .handed): most arguments are the function's own
        # locals, tested here before any call is made.
        # Only class-like names (capitalised, as constructions are recognised): what model_reach
        # follows; a function handed on is found from the source (value_uses.py).
        handed = None
        handlers = _HANDLERS
        for a in (args if not keywords else [*args, *[kw.value for kw in keywords]]):
            t = type(a)
            if t is ast.Name:
                c = a.id[0]
                if "A" <= c <= "Z" or c == "_":
                    handed = [a] if handed is None else [*handed, a]
                continue
            if t is ast.Constant:
                if type(a.value) is str and "." in a.value and " " not in a.value:  # (inline: the hottest loop)
                    _note_qualname(self.module, a)
                continue
            if t is ast.IfExp or t is ast.BoolOp or t is ast.Starred:
                handed = [a] if handed is None else [*handed, a]
            handler = handlers.get(t, _UNSEEN)
            if handler is _UNSEEN:
                handler = _handler(t)
            if handler is not None:
                handler(self, a)
        if handed is not None:
            to = None
            if callee is not None and not is_getattr(callee):
                to = dotted(func)
                if to is None and is_super_init(constructed):
                    to = f"super():{node.lineno}"  # a part of this very class (model_reach reads the line)
            for a in handed:
                self.note_value(a, to)


_NO_KEYWORDS: tuple = ()
# Calls whose class arguments are tested or named, not built: no hand-over (summary.name_values).
_TYPE_TESTS = frozenset({"isinstance", "issubclass", "cast", "super", "type", "hasattr", "getattr", "setattr",
                         "id", "len", "str", "repr", "print", "TypeVar", "NewType"})


def _positional(args: list) -> tuple[int, bool]:
    """(how many positional arguments a call passes, whether a `*iterable` leaves it open)."""
    n_pos, star = 0, False
    for arg in args:
        if type(arg) is ast.Starred:
            value = arg.value
            if type(value) in _SEQUENCES and not any(type(e) is ast.Starred for e in value.elts):
                n_pos += len(value.elts)
            else:
                star = True
        else:
            n_pos += 1
    return n_pos, star


def _keywords(keywords: list) -> tuple[tuple[str, ...], bool]:
    """(the keywords a call passes, `**{"k": ...}` displays included; whether a `**mapping`
    leaves them open)."""
    kws, dstar = [], False
    for kw in keywords:
        if kw.arg is None:
            value = kw.value
            if type(value) is ast.Dict and all(k is not None and _str_arg(k) is not None for k in value.keys):
                kws.extend(_str_arg(k) for k in value.keys)
            else:
                dstar = True
        else:
            kws.append(kw.arg)
    return tuple(kws), dstar


def _call_sites(walker: _FunctionWalker) -> list[CallSite]:
    """The walker's calls as records, in order: a call of a plain name that is no local of the
    function (visit_Call left its node) is dropped, as _prune would drop its record."""
    local = walker.locals
    out = []
    for call in walker.calls:
        if type(call) is ast.Call:
            if call.func.id not in local:
                continue
            n_pos, star = _positional(call.args)
            kws, dstar = _keywords(call.keywords) if call.keywords else (_NO_KEYWORDS, False)
            call = _new(CallSite, (call.lineno, call.col_offset, ("name", call.func.id), n_pos, kws, star, dstar))
        out.append(call)
    return out


def class_like(name: str) -> bool:
    """A class name by convention: capitalised, after any leading underscores (`_Stage`). (The
    hottest places spell the test out: a call per call site costs.)"""
    return name.lstrip("_")[:1].isupper()


def _passes_construction(args: list, keywords: list) -> bool:
    """A call handing a freshly built object (`wrap(runner, Split(...))`) to a function: recorded
    like a construction, so that what a function's parameter is given can be followed to the
    objects built for it (families.FamilyModel._given)."""
    for value in args:
        if type(value) is ast.Call and _callee_name(value.func).lstrip("_")[:1].isupper():
            return True
    for kw in keywords:
        if type(kw.value) is ast.Call and _callee_name(kw.value.func).lstrip("_")[:1].isupper():
            return True
    return False


def _names_a_class(values: list | None) -> bool:
    """A local bound to a CamelCase name (`cls = HybridBackend`): calling it constructs."""
    return bool(values) and any(v and is_name(v) and class_like(v[1]) for v in values)


def _callee_name(func: ast.expr) -> str:
    ftype = type(func)
    if ftype is ast.Name:
        return func.id
    if ftype is ast.Attribute:
        return func.attr
    return ""


_DISPATCH = {getattr(ast, name[6:]): fn for name, fn in vars(_FunctionWalker).items()
             if name.startswith("visit_") and hasattr(ast, name[6:])}
# `ref` keeps no state, so class-level assignments share one walker instead of making one each.
EXPRESSIONS = _FunctionWalker(None, [])


def _bound_value(value: ast.expr | None, annotation: ast.expr | None) -> tuple | None:
    """The value `bind` records for `name = value` or `name: annotation = value`."""
    annotated = type_ref(annotation) if annotation is not None else None
    return ("type", annotated) if annotated else EXPRESSIONS.ref(value)


def _local_calls_bound(walker: _FunctionWalker, body: list[ast.stmt]) -> list[CallSite]:
    """The walker's calls, a call of a `getattr`-bound local bound to the bindings that reach it."""
    calls = _call_sites(walker)
    return bind_local_calls(calls, body, walker.hooks, _bound_value) if walker.hooks else calls


def _constructions_bound(walker: _FunctionWalker, body: list[ast.stmt]) -> tuple:
    """The walker's constructions, each argument that is a local bound more than once (or a
    parameter rebound) replaced by the bindings that reach it (reaching.bind_arguments):
    `b = Split(b)` then `b = Hybrid(b)` never builds `Split` around `Hybrid`."""
    local, params = walker.locals, walker.params
    names = {r[1] for _, args, kwargs, _ in walker.constructions for r in (*args, *[v for _, v in kwargs])
             if r is not None and is_name(r) and r[1] in local and (len(local[r[1]]) > 1 or r[1] in params)}
    if not names:
        return tuple(walker.constructions)
    calls = [(node, c[1], c[2]) for node, c in zip(walker.construction_calls, walker.constructions)]
    bound = bind_arguments(body, calls, names, params, walker.bound)
    return tuple([(c[0], args, kwargs, c[3]) for c, (args, kwargs) in zip(walker.constructions, bound)])


def model_tests(test: ast.expr, depth: int = 0) -> list[tuple]:
    """The model tests a condition requires, as keys (all must hold where the condition holds):
    ("isa", class, ...) `isinstance(<...config...>, C)`; ("call", f) `f(<...config...>)`; ("names",
    literal, ...) a name compared with identifier literals (`arch in ("FooForCausalLM", ...)`), a
    literal "$NAME" standing for those a module-level NAME holds; ("mtype", literal, ...) the same
    comparison of a `model_type`; ("any", part, ...) where one of several tests holds (`a or b`),
    each part a key's strings joined by KEY_SEP. Which of them are model tests is decided
    tree-wide (literals naming classes or configuration classes' model types, predicates whose
    returns are such tests)."""
    if depth > 4:
        return []
    kind = type(test)
    if kind is ast.Name or kind is ast.Attribute or kind is ast.UnaryOp:
        return []  # (the commonest tests: flags)
    if kind is ast.BoolOp:
        if type(test.op) is ast.And:
            return [k for v in test.values for k in model_tests(v, depth + 1)]
        parts = []
        for v in test.values:  # each alternative one test: one of them holds
            part = model_tests(v, depth + 1)
            if len(part) != 1:
                return []
            # `(a or b) or c` is one set of alternatives (a key's parts are flat strings)
            parts.extend(part[0][1:] if part[0][0] == "any" else [KEY_SEP.join(part[0])])
        return [("any", *parts)]
    if kind is ast.NamedExpr:
        return model_tests(test.value, depth + 1)
    if kind is ast.Call and type(test.func) is ast.Name and test.args:
        if test.func.id == "isinstance" and len(test.args) == 2:
            kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
            names = [dotted(k) for k in kinds]
            if _mentions_config(test.args[0]) and names and all(names):
                return [("isa", *names)]
        elif any(_mentions_config(a) for a in test.args):
            return [("call", test.func.id)]
    if kind is ast.Compare and all(type(op) is ast.Eq or type(op) is ast.In for op in test.ops):
        lits = []
        sides = (test.left, *test.comparators)
        for side in sides:
            for e in (side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]):
                value = _str_arg(e)
                if value is not None and value.isidentifier():
                    lits.append(value)
        if lits:
            model_type = _reads_model_type(test.left) or _reads_model_type(test.comparators[0])
            return [("mtype" if model_type else "names", *lits)]
        if len(sides) == 2 and type(sides[1]) is ast.Name and type(sides[0]) is not ast.Name \
                and _config_valued(sides[0]):
            # `arch in FOO_ARCHS`: a module-level collection of literals, compared with a value read
            # off the model's configuration.
            return [("mtype" if _reads_model_type(sides[0]) else "names", "$" + sides[1].id)]
    return []


KEY_SEP = "\x1f"  # joins a key's strings inside an ("any", ...) key (keys are flat tuples of strings)


def _config_valued(node: ast.expr) -> bool:
    """A value read off a model configuration: `config.x`, `f(config)`, its `model_type`."""
    if type(node) is ast.Call:
        return any(_mentions_config(a) for a in node.args) or _reads_model_type(node)
    return _mentions_config(node)


def _reads_model_type(node: ast.expr) -> bool:
    """`<...>.model_type` or `getattr(<...>, "model_type"...)`: the model type a configuration
    declares (a configuration class's `model_type`)."""
    if type(node) is ast.Attribute:
        return node.attr == "model_type"
    return (type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "getattr"
            and len(node.args) >= 2 and _str_arg(node.args[1]) == "model_type")


def _mentions_config(node: ast.expr) -> bool:
    """An expression read from something named like a model configuration (`runner.model_config.
    hf_config`, `config`, not `quant_config`): the general vocabulary of model code, not one
    engine's names."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            return _model_config_name(node.attr) or _mentions_config(node.value)
        node = node.value
    return isinstance(node, ast.Name) and _model_config_name(node.id)


def _model_config_name(name: str) -> bool:
    # A quantization config applies to every model: testing it says nothing about which one runs.
    name = name.lower()
    return "config" in name and "quant" not in name


def _catches_attribute_error(node: ast.expr | None) -> bool:
    """An `except` naming AttributeError: the try body probes attributes on purpose.

    A bare `except:` or `except Exception:` also catches it, but around a whole block it says
    nothing about any one attribute; counting every attribute read there as a probe would be
    noise (and most of the probes in a large tree)."""
    if isinstance(node, ast.Tuple):
        return any(_catches_attribute_error(e) for e in node.elts)
    name = (dotted(node) or "") if node is not None else ""
    return name.rsplit(".", 1)[-1] == "AttributeError"


def _param_type(annotation: ast.expr | None, default: ast.expr | None) -> tuple | None:
    """A parameter's type ref. A default that names a class (`pool_cls: Pool = PlainPool`) makes
    the parameter class-valued whatever the annotation says (it means `type[Pool]`): kept as
    ("tdefault", (annotation, name)) for the resolver to decide once it knows what the name is.
    Only capitalised names are kept (class names by convention; constants are filtered there)."""
    ref = type_ref(annotation)
    if default is not None and type(default) in (ast.Name, ast.Attribute):
        name = dotted(default)
        if name and class_like(name.rsplit(".", 1)[-1]):
            return ("tdefault", (ref, name))
    return ref


def _params(args: ast.arguments) -> tuple[Param, ...]:
    out: list[Param] = []
    n_only = len(args.posonlyargs)
    positional = args.posonlyargs + args.args if n_only else args.args
    defaults = args.defaults
    first_default = len(positional) - len(defaults)
    for i, a in enumerate(positional):
        kind = POSITIONAL_ONLY if i < n_only else POSITIONAL_OR_KEYWORD
        default = defaults[i - first_default] if i >= first_default else None
        annotation = a.annotation
        typed = _param_type(annotation, default) if annotation is not None or default is not None else None
        out.append(_new(Param, (a.arg, kind, i >= first_default, typed)))
    if args.vararg:
        out.append(Param(args.vararg.arg, VAR_POSITIONAL, False, None))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(_new(Param, (a.arg, KEYWORD_ONLY, d is not None, _param_type(a.annotation, d))))
    if args.kwarg:
        out.append(Param(args.kwarg.arg, VAR_KEYWORD, False, None))
    return tuple(out)


def summarise_function(node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool,
                        pending: list, imports: list[Import], module: ModuleWalk,
                        walked: list | None = None) -> FunctionInfo:
    """`walked`, when given, receives the walker (function_text.py reads its bindings' and
    constructions' nodes)."""
    decorators = tuple([_decorator_name(d) for d in node.decorator_list]) if node.decorator_list else ()
    params = _params(node.args)
    self_name = None
    if in_class and "staticmethod" not in decorators and params and params[0].kind <= POSITIONAL_OR_KEYWORD:
        self_name = params[0].name
    walker = _FunctionWalker(self_name, imports, module)
    walker.block_end = node.end_lineno or node.lineno
    if params:
        walker.params = frozenset([p.name for p in params])
    _note_header_values(node, module)
    _visit_each(walker, node.body)
    own_returns = len(walker.return_values)
    for nested in walker.nested:
        # Closures see the enclosing function's names; summarise their calls and probes in its scope.
        if isinstance(nested, (ast.FunctionDef, ast.AsyncFunctionDef)):
            walker.block_end = nested.end_lineno or nested.lineno
            # A closure's body runs when it is called, if ever: not on the enclosing function's path.
            walker.guards.append(_new(Guard, (OPAQUE, True, nested.lineno, walker.block_end)))
            _visit_each(walker, nested.body)
        else:
            pending.append(nested)
    del walker.return_values[own_returns:]  # what a closure returns is not what this function returns
    body = node.body
    if walked is not None:
        walked.append(walker)
    # By position (the fields' order), not by keyword: a keyword call costs more, 60,000 times.
    return FunctionInfo(
        node.name, node.lineno, node.col_offset, node.end_lineno or node.lineno, params, decorators,
        type_ref(node.returns), tuple(walker.return_values), is_noop_body(body),
        type(node) is ast.AsyncFunctionDef,
        {k: tuple(v) for k, v in walker.locals.items()} if walker.locals else {},
        {k: tuple(v) for k, v in walker.self_attrs.items()} if walker.self_attrs else {},
        tuple(_local_calls_bound(walker, body)), tuple(walker.probes), _constructions_bound(walker, body),
        is_unimplemented_body(body), tuple(walker.gates), tuple(walker.guards),
        falsy_defaults(node.args) if node.name == "__init__" else (),
        _probed_reads(walker) if walker.probes else (), (),
        is_checks_only_body(body), tuple(walker.falsy_stores),
        tuple(sorted(walker.other_stores)) if walker.other_stores else (), tuple(walker.declarations),
        _unconditional_asserts(node, walker) if walker.asserted else (),
    )


def is_type_checking(test: ast.expr) -> bool:
    """`TYPE_CHECKING` or `typing.TYPE_CHECKING`: a block only type checkers run."""
    return (type(test) is ast.Name and test.id == "TYPE_CHECKING") or (
        type(test) is ast.Attribute and test.attr == "TYPE_CHECKING")


def _unconditional_asserts(node: ast.AST, walker: _FunctionWalker) -> tuple:
    """The `asserted` entries that say what the object is wherever the function runs: asserts in
    the body itself or in an `if TYPE_CHECKING:` block there, on an expression no other
    `isinstance` of the function tests (`if isinstance(b, Wrapper): ...` first handles another
    kind of object). Asserts under any other test hold only on that path."""
    top: set[int] = set()
    for stmt in node.body:
        if type(stmt) is ast.Assert:
            top.add(stmt.lineno)
        elif type(stmt) is ast.If and not stmt.orelse and is_type_checking(stmt.test):
            top.update(s.lineno for s in stmt.body if type(s) is ast.Assert)
    tested = set()
    for n in ast.walk(node):
        if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id == "isinstance" and n.args \
                and n.lineno not in top:
            tested.add(walker.ref(n.args[0]))
    return tuple(a for a in walker.asserted if a[1] in top and a[0] not in tested)


def _note_header_values(node: ast.AST, module: ModuleWalk) -> None:
    """Names a decorator's arguments hand on (`@register(C)`: summary.name_values). (A parameter's
    class default is its annotation's "tdefault": signals/model_reach.py reads it there.)"""
    for d in node.decorator_list:
        if type(d) is ast.Call:
            for a in (*d.args, *[kw.value for kw in d.keywords]):
                if type(a) is ast.Name:
                    module.name_values.add(a.id)


def _probed_reads(walker: _FunctionWalker) -> tuple[Read, ...]:
    if not walker.probes or not walker.reads:
        return ()
    probed = {p.receiver for p in walker.probes}
    accessors = set()  # `get_backend` where `get_backend()` (or a local bound to it) is probed
    for r in probed:
        if r is not None:
            for v in (walker.locals.get(r[1], ()) if is_name(r) else (r,)):
                if v and is_call(v) and v[1] is not None:
                    accessors.add(v[1])
    out = []
    for node in walker.reads:
        value = node.value
        if type(value) is ast.Name:
            recv = ("name", value.id)
            if recv not in probed:
                continue
        else:
            if ("name", value.func.id) not in accessors:
                continue
            recv = walker.ref(value)
        out.append(Read(node.lineno, recv, node.attr, id(node) in walker.chained))
    return tuple(out)


def _falsy_literal(node: ast.expr | None) -> bool:
    return type(node) is ast.Constant and node.value is not Ellipsis and not node.value


def _class_falsy(falsy: dict[str, None], name: str, value: ast.expr | None) -> None:
    """Keep `falsy` (the class's false-literal attributes, in assignment order) true to the last
    assignment of `name` in the class body."""
    falsy.pop(name, None)
    if _falsy_literal(value):
        falsy[name] = None


def _after_overloads(previous: FunctionInfo | None, fn: FunctionInfo) -> None:
    """A definition after `@overload` stubs answers for all of them: its return type becomes the
    union of theirs and its own, which is what a caller can get (the stubs carry the precise
    types; the implementation's annotation is often a loose `Optional[type]`)."""
    if previous is not None and any(d.endswith("overload") for d in previous.decorators):
        fn.returns = _union(fn.returns, previous.returns)


def _summarise_class(node: ast.ClassDef, prefix: str, classes: dict[str, ClassInfo], pending: list,
                     imports: list[Import], module: ModuleWalk) -> None:
    name = f"{prefix}{node.name}"
    _note_header_values(node, module)
    info = ClassInfo(
        name=name, line=node.lineno, col=node.col_offset, end_line=node.end_lineno or node.lineno,
        bases=tuple(r for r in (_base_ref(b) for b in node.bases) if r),
        decorators=tuple(_decorator_name(d) for d in node.decorator_list),
    )
    classes[name] = info
    falsy: dict[str, None] = {}
    for stmt in _flatten(node.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn = summarise_function(stmt, True, pending, imports, module)
            previous = info.methods.get(stmt.name)
            # A property setter or an overload must not hide the real definition's signature.
            if previous is None or not any(d.endswith((".setter", ".deleter", "overload"))
                                           for d in fn.decorators):
                _after_overloads(previous, fn)
                info.methods[stmt.name] = fn
            elif any(d.endswith("overload") for d in fn.decorators):
                previous.returns = _union(previous.returns, fn.returns)  # the stub kept answers for this one too
        elif isinstance(stmt, ast.ClassDef):
            _summarise_class(stmt, f"{name}.", classes, pending, imports, module)
            info.attrs[stmt.name] = ClassAttr(stmt.lineno, None, ("name", stmt.name))
            _class_falsy(falsy, stmt.name, None)
        elif isinstance(stmt, ast.Assign):
            _note_qualname(module, stmt.value)
            value = EXPRESSIONS.ref(stmt.value)
            for target in stmt.targets:
                for t in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    if isinstance(t, ast.Name):
                        info.attrs[t.id] = ClassAttr(stmt.lineno, None, value)
                        _class_falsy(falsy, t.id, stmt.value)
                        if t.id == "model_type" and t is target:
                            _note_model_type(module.literals, name, stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            _note_qualname(module, stmt.value)
            info.attrs[stmt.target.id] = ClassAttr(stmt.lineno, type_ref(stmt.annotation),
                                                   EXPRESSIONS.ref(stmt.value))
            _class_falsy(falsy, stmt.target.id, stmt.value)
            if stmt.target.id == "model_type" and stmt.value is not None:
                _note_model_type(module.literals, name, stmt.value)
    info.falsy_attrs = tuple(falsy)


def _flatten(body: list[ast.stmt], out: list | None = None) -> list[ast.stmt]:
    """The statements of a body, with those under `if`/`try` switches (version, platform,
    `TYPE_CHECKING`, optional imports) in source order: body, handlers, else, finally."""
    if out is None:
        out = []
    for stmt in body:
        kind = type(stmt)
        if kind is ast.If:
            _flatten(stmt.body, out)
            _flatten(stmt.orelse, out)
        elif kind is ast.Try:
            _flatten(stmt.body, out)
            for h in stmt.handlers:
                _flatten(h.body, out)
            _flatten(stmt.orelse, out)
            _flatten(stmt.finalbody, out)
        else:
            out.append(stmt)
    return out


def _base_ref(node: ast.expr) -> tuple | None:
    if isinstance(node, ast.Subscript):  # Generic[T], SomeBase[T]
        node = node.value
    name = dotted(node)
    return ("name", name) if name else None


def summarise_source(source: str | bytes, filename: str = "<unknown>") -> ModuleSummary:
    """Parse once and summarise. Raises SyntaxError/ValueError on bad input (the caller reports it)."""
    tree = ast.parse(source, filename=filename)
    if isinstance(source, bytes):
        n_lines = source.count(b"\n") + (0 if source.endswith(b"\n") or not source else 1)
    else:
        n_lines = source.count("\n") + (0 if source.endswith("\n") or not source else 1)
    module = ModuleWalk()
    summary = call_deep(summarise_tree, tree, n_lines, module)  # valid code nested as deep as CPython compiles
    if module.platform_tested:  # most modules test no platform: no second walk over their statements
        call_deep(add_platform_gates, tree, summary)
    return summary


def summarise_tree(tree: ast.Module, n_lines: int, module: ModuleWalk | None = None) -> ModuleSummary:
    imports: list[Import] = []
    classes: dict[str, ClassInfo] = {}
    functions: dict[str, FunctionInfo] = {}
    pending: list[ast.AST] = []
    dunder_all = None
    unguarded: list[int] = []
    string_named: list[tuple[str, str]] = []

    module = module if module is not None else ModuleWalk()
    chains = module.chains
    top_walker = _FunctionWalker(None, imports, module)
    top_walker.module_level = True
    for stmt in tree.body:
        for node in _definitions_in(stmt):
            if isinstance(node, ast.ClassDef):
                _summarise_class(node, "", classes, pending, imports, module)
            else:
                fn = summarise_function(node, False, pending, imports, module)
                _after_overloads(functions.get(node.name), fn)
                functions[node.name] = fn
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.List, ast.Tuple)) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            dunder_all = tuple(e.value for e in stmt.value.elts
                               if isinstance(e, ast.Constant) and isinstance(e.value, str))
        elif type(stmt) is ast.Assign or type(stmt) is ast.AnnAssign or type(stmt) is ast.AugAssign:
            _note_literals(module.literals, stmt)
            if type(stmt.value) is ast.Dict:
                string_named.extend(_string_named(stmt.value))
        first = len(imports)
        top_walker.visit(stmt)  # definitions nested under if/try are skipped by the walker
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            unguarded.extend(range(first, len(imports)))
    # Classes defined inside functions are rare in backends but real; keep them addressable.
    while pending:
        node = pending.pop()
        if isinstance(node, ast.ClassDef) and node.name not in classes:
            _summarise_class(node, "", classes, pending, imports, module)

    module_names = {imp.local for imp in imports if imp.name is None}
    module_names.add("super")
    # Calls of names this module imports or defines: who calls a function, for model_reach.
    callable_names = {imp.local for imp in imports if imp.name is not None} | set(functions) | set(classes)
    filled = set(module.keywords)  # slots filled: keywords passed (`Batch(slot=x)`), attributes set
    for fn in _all_functions(functions, classes):
        filled.update(fn.self_attrs)
        _prune(fn, module_names)
        if fn.gates:
            # (the walk built these gates: a call gate is its two-item shape, read here without a
            # reader's call per gate, refs.CallGate everywhere else)
            fn.gates = tuple([g for g in fn.gates if len(g) != 2 or g[0] in callable_names])

    toplevel = FunctionInfo(
        name="<module>", line=1, col=0, end_line=n_lines, params=(), decorators=(), returns=None,
        return_values=(), noop=False, locals={k: tuple(v) for k, v in top_walker.locals.items()},
        calls=tuple(_local_calls_bound(top_walker, tree.body)), probes=tuple(top_walker.probes),
        constructions=_constructions_bound(top_walker, tree.body), gates=tuple(top_walker.gates),
    )
    _prune(toplevel, module_names, keep_all_locals=True)
    toplevel.gates = tuple(g for g in toplevel.gates if len(g) != 2 or g[0] in callable_names)
    return ModuleSummary(
        lines=n_lines, imports=tuple(imports), classes=classes, functions=functions,
        toplevel=toplevel, dunder_all=dunder_all, unguarded_imports=tuple(unguarded),
        slot_reads=tuple(sorted({c for c in chains if c[0] in filled})),
        name_literals=tuple(module.literals), attr_values=tuple(sorted(module.attr_values)),
        name_values=tuple(sorted(module.name_values)), handed=tuple(sorted(module.handed)),
        string_named=tuple(sorted(set(string_named))), qualname_strings=tuple(sorted(module.qualnames)),
    )


# A dotted path of at least three identifiers whose last is capitalised: how code names a class it
# loads by its qualified name (the first letter tested by the pattern, not by a call per string).
_QUALNAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\.[A-Z]\w*")


def _note_qualname(module: ModuleWalk, node: ast.expr | None) -> None:
    """Note a string constant that spells a qualified name (ModuleSummary.qualname_strings).
    Constants are leaves of the walk (no call each): this is asked only where code puts a class's
    qualified name: a return, a binding (class bodies too: an enum of backends by name), a call's
    argument, a table's value."""
    if type(node) is ast.Constant:
        text = node.value
        if type(text) is str and 4 < len(text) < 200 and " " not in text and text.count(".") >= 2 \
                and _QUALNAME.fullmatch(text):
            module.qualnames.add(text)


def _string_named(table: ast.Dict) -> list[tuple[str, str]]:
    """The (module, class) pairs a table's values name as two strings (`("gemma3_mm",
    "Gemma3ForCausalLM")`): a dotted or plain module name and a capitalised identifier."""
    out = []
    for v in table.values:
        if type(v) is ast.Tuple and len(v.elts) == 2 and all(type(e) is ast.Constant and type(e.value) is str
                                                             for e in v.elts):
            mod, cls = v.elts[0].value, v.elts[1].value
            if cls.isidentifier() and cls[:1].isupper() and mod and all(p.isidentifier() for p in mod.split(".")):
                out.append((mod, cls))
    return out


def _note_model_type(literals: list, cls: str, value: ast.expr) -> None:
    """`model_type = "foo"` in a configuration class's body: the model type its configurations
    declare (what a `config.model_type == "foo"` test compares), noted as "Class.model_type"."""
    text = _str_arg(value)
    if text is not None and text.isidentifier():
        literals.append((f"{cls}.model_type", (text,)))


def _note_literals(literals: list, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
    """A module-level binding of a name to a literal collection of identifiers; a later binding
    of a name so noted to anything else (`ARCHS |= extra`) is noted with no literals: what the name
    holds is then unknown."""
    value = stmt.value
    found = _identifier_literals(value) if value is not None and type(stmt) is not ast.AugAssign else ()
    targets = stmt.targets if type(stmt) is ast.Assign else [stmt.target]
    for t in targets:
        if type(t) is ast.Name and (found or any(name == t.id for name, _ in literals)):
            literals.append((t.id, found))


def _identifier_literals(node: ast.expr, depth: int = 0) -> tuple[str, ...]:
    """The identifier strings of a literal collection of strings (`("Foo", "Bar")`,
    `frozenset({...})`); () when the value is anything else."""
    kind = type(node)
    if kind is ast.Set or kind is ast.Tuple or kind is ast.List:
        texts = [e.value for e in node.elts if type(e) is ast.Constant and type(e.value) is str]
        if len(texts) != len(node.elts):
            return ()
        return tuple(t for t in texts if t.isidentifier())
    if kind is ast.Call and type(node.func) is ast.Name and node.func.id in ("frozenset", "set", "tuple", "list") \
            and len(node.args) == 1 and not node.keywords and depth == 0:
        return _identifier_literals(node.args[0], 1)
    return ()


def _all_functions(functions: dict[str, FunctionInfo], classes: dict[str, ClassInfo]):
    yield from functions.values()
    for cls in classes.values():
        yield from cls.methods.values()


def member_target(fn: FunctionInfo, func: tuple) -> tuple | None:
    """(receiver ref, member, how) for calls that reach a member through an object.

    `recv.m(...)` -> (recv, "m", "call"); `getattr(recv, "m", None)(...)` and a local bound by
    `fn = getattr(recv, "m", ...)` then `fn(...)` -> (recv, "m", "getattr"). The per-file pass
    already bound such a local's calls to the bindings that reach them (linter/perfile/reaching.py); a
    call it left as a name (in a closure or a lambda) may be reached by any of the local's values.
    """
    if is_attr(func):
        return (func[1], func[2], "call")
    if is_getattr(func):
        return (func[1], func[2], "getattr")
    if is_name(func):
        for value in fn.locals.get(func[1], ()):
            if value and is_getattr(value):
                return (value[1], value[2], "getattr")
    return None


def _prune(fn: FunctionInfo, module_names: set[str], keep_all_locals: bool = False) -> None:
    """Keep what the whole-tree passes can use; the cache and the warm run stay small.

    Calls on imported modules (`torch.cat`) and plain calls of functions and classes (`len(x)`)
    never reach a method through an instance; a call through a local name is kept because the
    local may be a bound method from `getattr(obj, "hook", None)`.
    """
    # A plain name's call is here only if the name is a local (_call_sites dropped the others).
    kept = []
    for call in fn.calls:
        if is_name(call.func) or root_name(call.func) not in module_names:
            kept.append(call)
    fn.calls = tuple(kept)
    if fn.guards:
        fn.guards = guards_in_use(fn)
    if keep_all_locals or not fn.locals:  # (two in five functions bind no local worth keeping)
        return
    wanted: set[str] = set()
    for call in fn.calls:
        names_in(call.func, wanted)
    for probe in fn.probes:
        names_in(probe.receiver, wanted)
    for value in fn.return_values:
        names_in(value, wanted)
    for value, _, _ in fn.asserted:
        names_in(value, wanted)
    for assigns in fn.self_attrs.values():
        for value, _, _ in assigns:
            names_in(value, wanted)
    for _, args, kwargs, _ in fn.constructions:
        for value in args:
            names_in(value, wanted)
        for _, value in kwargs:
            names_in(value, wanted)
    closure: dict[str, tuple[tuple, ...]] = {}
    todo = [n for n in wanted if n in fn.locals]
    while todo:
        name = todo.pop()
        if name in closure:
            continue
        closure[name] = fn.locals[name]
        found: set[str] = set()
        for value in closure[name]:
            names_in(value, found)
        todo.extend(n for n in found if n in fn.locals and n not in closure)
    # In the function's own order: `closure` was filled in the order of a set of names, which
    # depends on the hash seed, and the cache's bytes must not.
    fn.locals = {name: values for name, values in fn.locals.items() if name in closure}


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _definitions_in(stmt: ast.stmt) -> list[ast.stmt] | tuple:
    """Top-level definitions, including those under `if TYPE_CHECKING:`/`try:` switches."""
    kind = type(stmt)
    if kind in _DEFINITIONS:
        return [stmt]
    if kind is not ast.If and kind is not ast.Try:
        return ()
    return [inner for inner in _flatten([stmt]) if type(inner) in _DEFINITIONS]
