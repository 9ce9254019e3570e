"""Expression references: what the per-file pass records of an expression, and the only module that
knows their shapes.

A ref is a small tuple, kept as a tuple in summaries and on the wire (the cache format is free to
stay). The per-file walk (summary.py) builds them; other modules tell their kinds apart with the
readers here (tests/test_refs_vocabulary.py holds the tags it lists to that):

    ("name", id)                      a name: `backend`
    ("attr", base, attr)              an attribute: `self.full_attn_backend`
    ("getattr", base, attr)           `getattr(base, "attr", ...)` with a literal name
    ("call", func, line, col)         a call of `func`, where it is made
    ("sub", base)                     a subscript: `self.backends[i]`
    ("seq", items)                    a list, tuple or set display
    ("union", items)                  `a if c else b`, `a or b`
    ("type", type_ref)                `cast(T, x)`: the type it says
    ("iter", base)                    an item of `for x in base` (a local's binding)
    ("super",)                        a construction's callee: `super().__init__(...)`
    ("lambda", body)                  a call's argument `lambda: body` (passed_values reads it)

The resolver (resolve.py) answers with *type elements*, read with the readers below:

    "pkg.Cls"                         an instance of the class
    ("cls", "pkg.Cls")                the class object itself (`type[Cls]`, a class-valued variable)
    ("seq", "pkg.Cls")                a collection of instances
    ("mod", "pkg.mod")                a module
    ("fn", "pkg.mod.f")               a module-level function
    ("method", "pkg.Cls", "m")        a method (a bound or unbound method object)

and a summary records annotations as *type refs*:

    ("t", "Name")                     a name as written (`Base`, `mod.Base`)
    ("tseq", tref)                    `list[T]`, `Sequence[T]`, ...
    ("ttype", tref)                   `type[T]`
    ("tunion", (tref, ...))           `A | B`, `Optional[A]`, `Union[...]`
    ("tdefault", (tref, default))     a parameter's annotation with the class its default names
"""

from __future__ import annotations

from typing import NamedTuple

# --- readers ------------------------------------------------------------------------------------

_READS_FROM = frozenset({"attr", "call", "sub", "getattr", "iter"})


def is_name(ref) -> bool:
    """`ref` is a name (`("name", id)`); None is no ref."""
    return ref is not None and ref[0] == "name"


def is_attr(ref) -> bool:
    """`ref` is an attribute (`("attr", base, attr)`)."""
    return ref is not None and ref[0] == "attr"


def is_getattr(ref) -> bool:
    """`ref` is `getattr(base, "attr", ...)` with a literal name."""
    return ref is not None and ref[0] == "getattr"


def is_call(ref) -> bool:
    """`ref` is a call (`("call", func, line, col)`)."""
    return ref is not None and ref[0] == "call"


def is_sub(ref) -> bool:
    """`ref` is a subscript (`("sub", base)`)."""
    return ref is not None and ref[0] == "sub"


def is_name_of(ref, identifier: str) -> bool:
    """`ref` is the name `identifier`."""
    return ref == ("name", identifier)


def is_seq(ref) -> bool:
    """`ref` is a list, tuple or set display (`("seq", items)`)."""
    return ref is not None and ref[0] == "seq"


def is_union(ref) -> bool:
    """`ref` is one of several values (`a if c else b`, `a or b`: `("union", items)`)."""
    return ref is not None and ref[0] == "union"


def is_iter(ref) -> bool:
    """`ref` is an item of an iteration (`for x in refs`: `("iter", base)`, a local's binding)."""
    return ref is not None and ref[0] == "iter"


def is_self(ref, self_name: str | None) -> bool:
    """`ref` is the name the method's first parameter binds (`self`, whatever it is called)."""
    return self_name is not None and ref == ("name", self_name)


def root_name(ref) -> str | None:
    """The name an expression starts from (`self` in `self.a.b()[0]`), if any."""
    while ref is not None and ref[0] in _READS_FROM:
        ref = ref[1]
    return ref[1] if ref is not None and ref[0] == "name" else None  # (inline: the walk's hot path)


def dotted_ref(ref) -> str | None:
    """`a.b.c` of a name or attribute ref (what `dotted` is for a node); None for anything else."""
    parts = []
    while ref is not None and ref[0] == "attr":  # (inline: the walk's hot path)
        parts.append(ref[2])
        ref = ref[1]
    if ref is None or ref[0] != "name":
        return None
    return ".".join([ref[1], *reversed(parts)])


def annotation_of(ref):
    """The type ref a `cast(T, x)` says (`("type", T)`), else None."""
    return ref[1] if ref is not None and ref[0] == "type" else None


def lambda_body(ref):
    """The body ref of a lambda argument (`("lambda", body)`), else None."""
    return ref[1] if ref is not None and ref[0] == "lambda" else None


def lambda_ref(body) -> tuple:
    """The ref of `lambda: body`."""
    return ("lambda", body)


def base_of(ref):
    """The expression an attribute, item, call or `getattr` reads from (`self.a` of `self.a.b`,
    `f` of `f(x)`), else None."""
    return ref[1] if ref is not None and ref[0] in _READS_FROM else None


def is_item(ref) -> bool:
    """A subscript or an iteration's item."""
    return ref is not None and (ref[0] == "sub" or ref[0] == "iter")


def is_super_init(ref) -> bool:
    """A construction's callee that is `super().__init__(...)` (recorded as `("super",)`)."""
    return ref == ("super",)


def names_in(ref, out: set[str]) -> None:
    """Every name a ref reads (`("name", x)` anywhere inside it, sequences of refs included)."""
    # A loop over a stack, not recursion: it runs for every kept call, probe and binding.
    if type(ref) is not tuple or not ref:
        return
    stack = [ref]
    pop, push = stack.pop, stack.append
    while stack:
        ref = pop()
        head = ref[0]
        if head == "name":
            out.add(ref[1])
        elif type(head) is str:
            for item in ref[1:]:
                if type(item) is tuple and item:
                    push(item)
        else:  # a sequence of refs
            for sub in ref:
                if type(sub) is tuple and sub:
                    push(sub)


# --- type elements (what the resolver answers) ---------------------------------------------------


def class_value(t) -> str | None:
    """The class of a class-object element (`("cls", q)`), else None."""
    return t[1] if type(t) is tuple and t[0] == "cls" else None


def class_values(types) -> list[str]:
    """The classes a resolver's type set holds as class objects (`("cls", "pkg.Cls")`: a variable
    holding the class itself, `type[Cls]`), as opposed to instances (plain qualified names)."""
    return [q for t in types if (q := class_value(t)) is not None]


def instance_or_class(t) -> str | None:
    """The class of an instance or of a class object: what an attribute read on it looks up."""
    if type(t) is str:
        return t
    return t[1] if t[0] == "cls" else None


def seq_of(t) -> str | None:
    """The item class of a collection element (`("seq", q)`), else None."""
    return t[1] if type(t) is tuple and t[0] == "seq" else None


def module_value(t) -> str | None:
    """The module of a module element (`("mod", name)`), else None."""
    return t[1] if type(t) is tuple and t[0] == "mod" else None


def is_function_value(t) -> bool:
    """A module-level function element (`("fn", qual)`)."""
    return type(t) is tuple and t[0] == "fn"


def is_method_value(t) -> bool:
    """A method element (`("method", class, name)`)."""
    return type(t) is tuple and t[0] == "method"


def class_element(q: str) -> tuple:
    """The element for the class object `q` itself."""
    return ("cls", q)


def seq_element(q: str) -> tuple:
    """The element for a collection of `q` instances."""
    return ("seq", q)


# --- type refs (annotations as a summary records them) ------------------------------------------


def type_name(tref) -> str | None:
    """The name of a plain annotation (`("t", "Base")`), else None."""
    return tref[1] if tref is not None and tref[0] == "t" else None


def seq_type_item(tref):
    """The item annotation of `list[T]` and its kin (`("tseq", T)`), else None."""
    return tref[1] if tref is not None and tref[0] == "tseq" else None


def class_type_item(tref):
    """`T` of `type[T]` (`("ttype", T)`), else None."""
    return tref[1] if tref is not None and tref[0] == "ttype" else None


def type_alternatives(tref) -> tuple | None:
    """The alternatives of `A | B` (`("tunion", (A, B))`), else None."""
    return tref[1] if tref is not None and tref[0] == "tunion" else None


def defaulted_type(tref) -> tuple | None:
    """(annotation, default) of a parameter's annotation that carries the class its default
    names (`("tdefault", (ann, default))`), else None."""
    return tref[1] if tref is not None and tref[0] == "tdefault" else None


def type_union(items: tuple) -> tuple:
    """The annotation `A | B | ...` of the alternatives `items`."""
    return ("tunion", items)


# --- gates (a function's `gates`: what decides which model runs its code) -------------------------


class CallGate(NamedTuple):
    """A call of a name the module imports or defines (`build_pool(...)`), where it is made."""
    name: str
    line: int


class TestGate(NamedTuple):
    """A model test over the lines it guards: `last` -1 runs to the function's end, -2 to the end
    and the function raises where the test fails; `first` 0 is a `return` of the test."""
    first: int
    last: int
    key: tuple


def call_gate(g) -> CallGate | None:
    return CallGate(*g) if len(g) == 2 else None


def test_gate(g) -> TestGate | None:
    return TestGate(*g) if len(g) == 3 else None
