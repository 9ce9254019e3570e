"""Capability flags: a call made only where the installed object's class says it supports it.

An engine that probes a hook by a class-level flag instead of `hasattr` reads the flag off the
object once and keeps the answer (`self.use_x = runner.backend.supports_x`, else `False`), then
calls the hook only where the kept answer holds (`if not self.use_x: return` before
`backend.x(...)`). A wrapper whose class carries the family's false default for that flag (it
neither sets the flag nor forwards it from its delegate) is never the object at such a call: the
caller took the other branch, and what the wrapper inherits for the hook never runs there.

Sound by construction, and so narrow:
* the call's receiver and the object the flag was read from are the same expression once locals,
  `self` and constructor parameters kept as `self.<attr>` are written out
  (`backend = self.runner.backend` and `runner.backend` in `__init__`, where `self.runner = runner`);
* every store of the kept flag in the site's class, its bases and subclasses is either a false
  literal or that one read (an augmented assignment, a `setattr` or any other value: no answer);
* on the wrapper the flag is a class attribute whose nearest definition is a false literal, and no
  method of the wrapper's classes stores it on `self` (a wrapper passing its delegate's answer on,
  `self.supports_x = inner.supports_x`, stays in).
Stores made on the object from outside its classes (`backend.supports_x = True` in another module)
are not in the summary; a tree that does that would need this signal to look there too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Reason, short
from ..model.confidence import Pairing, Signal
from ..perfile.guards import dominating, self_flag
from ..refs import is_attr, is_name, is_name_of, is_super_init

if TYPE_CHECKING:
    from ..model.context import Context

_SELF = ("self",)  # `self` of whichever method, once written out
_MAX_DEPTH = 8


class CapabilityFlag(Signal):
    name = "capability-flag"
    doc = ("A call made only where a kept flag holds (`if not self.use_x: return`), the flag read off "
           "the very receiver's class (`self.use_x = runner.backend.supports_x`, else False), never "
           "meets a wrapper whose class keeps the family's false default for that flag.")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        site = p.site
        if p.wrapper is None or site.cls is None or not site.fn.params or not site.fn.guards \
                or p.receiver is None or site.fn.kind != "method":
            return None  # a static or class method's first parameter is not the kept instance
        self_name = site.fn.params[0].name
        polarity: dict[str, set[bool]] = {}
        for ref, positive in dominating(site.fn.guards, p.line):
            flag = self_flag(ref, self_name)
            if flag is not None:
                polarity.setdefault(flag, set()).add(positive)
        flags = sorted(f for f, v in polarity.items() if v == {True})
        if not flags:
            return None
        index = ctx.index
        if site.cls not in index.classes or p.wrapper not in index.classes:
            return None
        classes = frozenset(index.mro(site.cls)) | frozenset(index.descendants(site.cls))
        receiver = _written_out(ctx, classes, site.cls, site.fn, p.receiver, 0)
        if receiver is None:
            return None
        memo = ctx.state(CapabilityFlag, dict)
        for flag in flags:
            key = (site.cls, flag)
            if key not in memo:
                memo[key] = _kept_from(ctx, classes, flag)
            kept = memo[key]
            if kept is None or kept[0] != receiver:
                continue
            _, capability, path, line = kept
            key = (p.wrapper, capability)
            if key not in memo:
                memo[key] = _false_default(ctx, p.wrapper, capability)
            default = memo[key]
            if default is None:
                continue
            return Reason(self.name, "lower", site.path, p.line,
                          f"runs only where `self.{flag}` holds, which is read from the receiver's "
                          f"`{capability}` ({path}:{line}); `{short(p.wrapper)}` keeps the false "
                          f"default of `{short(default[0])}.{capability}` ({default[1]}:{default[2]})")
        return None


def _kept_from(ctx: Context, classes: frozenset[str], flag: str) -> tuple | None:
    """(the written-out object, capability attribute, path, line) when every store of `self.<flag>`
    in `classes` is a false literal or a read of that one attribute of that one object."""
    index = ctx.index
    source = None
    for cls in sorted(classes):
        entry = index.classes.get(cls)
        if entry is None:
            continue
        if flag in entry.info.methods:
            return None  # a property or a method: computed, not kept
        if flag in entry.info.attrs and flag not in entry.info.falsy_attrs:
            return None
        if _stored_otherwise(entry.info, flag):
            return None
        for method, (value, _, line) in index.assignments(cls).get(flag, ()):
            if value is None and (flag, line) in method.falsy_stores:
                continue
            if value is None or not is_attr(value):
                return None
            obj = _written_out(ctx, classes, cls, method, value[1], 0)
            if obj is None or (source is not None and source[:2] != (obj, value[2])):
                return None
            source = source or (obj, value[2], entry.file.display, line)
    return source


def _false_default(ctx: Context, wrapper: str, capability: str) -> tuple | None:
    """(owner, path, line) of the false class-level default the wrapper keeps for `capability`."""
    index = ctx.index
    for cls in index.mro(wrapper):
        entry = index.classes.get(cls)
        if entry is None:
            return None  # a base outside the tree may define anything
        info = entry.info
        if capability in info.methods or index.assignments(cls).get(capability):
            return None
        if _stored_otherwise(info, capability):
            return None
    for cls in index.mro(wrapper):
        info = index.classes[cls].info
        if capability in info.attrs:
            if capability not in info.falsy_attrs:
                return None
            return cls, index.classes[cls].file.display, info.attrs[capability].line
    return None


def _stored_otherwise(info, attr: str) -> bool:
    """A method of the class stores `self.<attr>` other than by `=` (`+=`, `setattr`)."""
    return any(attr in m.other_stores or "*" in m.other_stores for m in info.methods.values())


def _written_out(ctx: Context, classes: frozenset[str], owner: str, fn, ref: tuple | None,
                 depth: int) -> tuple | None:
    """An expression with its locals replaced by their one value, the method's `self` as `_SELF`,
    and a parameter kept as `self.<attr>` as that attribute; None where that is not one object."""
    if ref is None or depth > _MAX_DEPTH:
        return None
    if is_attr(ref):
        base = _written_out(ctx, classes, owner, fn, ref[1], depth + 1)
        return ("attr", base, ref[2]) if base is not None else None
    if not is_name(ref):
        return None
    name = ref[1]
    if fn.params and name == fn.params[0].name and "staticmethod" not in fn.decorators:
        return _SELF
    values = fn.locals.get(name)
    if values:
        return _written_out(ctx, classes, owner, fn, values[0], depth + 1) if len(values) == 1 else None
    if any(q.name == name for q in fn.params):
        attr = _kept_parameter(ctx, classes, owner, fn, name, 0)
        return ("attr", _SELF, attr) if attr is not None else None
    return None


def _kept_parameter(ctx: Context, classes: frozenset[str], owner: str, fn, param: str,
                    depth: int) -> str | None:
    """`attr` when `fn` stores `param` as `self.<attr>` (itself, or by handing it to the base's
    `__init__` through `super().__init__(...)`) and every store of that attribute in `classes` is
    a parameter of its own method (the object handed to the constructor)."""
    index = ctx.index
    for attr, stores in fn.self_attrs.items():
        if not any(is_name_of(value, param) for value, _, _ in stores):
            continue
        for cls in classes:
            if cls not in index.classes:
                continue
            for method, (value, _, _) in index.assignments(cls).get(attr, ()):
                if not (value and is_name(value) and any(q.name == value[1] for q in method.params)):
                    return None
        return attr
    if fn.name != "__init__" or depth > _MAX_DEPTH:
        return None
    for callee, args, kwargs, star in fn.constructions:
        if not is_super_init(callee) or star:
            continue
        passed = [i for i, a in enumerate(args) if is_name_of(a, param)]
        named = [k for k, a in kwargs if is_name_of(a, param)]
        base = next((c for c in index.mro(owner)[1:]
                     if c in index.classes and "__init__" in index.classes[c].info.methods), None)
        if base is None:
            return None
        init = index.classes[base].info.methods["__init__"]
        names = [q.name for q in init.params[1:]]
        target = named[0] if named else (names[passed[0]] if passed and passed[0] < len(names) else None)
        if target is None or target not in {q.name for q in init.params}:
            continue
        return _kept_parameter(ctx, classes, base, init, target, depth + 1)
    return None
