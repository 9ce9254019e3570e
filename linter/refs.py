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
"""

from __future__ import annotations

# --- readers ------------------------------------------------------------------------------------


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
    while ref is not None and ref[0] in ("attr", "call", "sub", "getattr", "iter"):
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


def class_values(types) -> list[str]:
    """The classes a resolver's type set holds as class objects (`("cls", "pkg.Cls")`: a variable
    holding the class itself, `type[Cls]`), as opposed to instances (plain qualified names)."""
    return [t[1] for t in types if type(t) is tuple and len(t) == 2 and t[0] == "cls"]
