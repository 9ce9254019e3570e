"""Real instances of the user's classes, made without running what the check is not about.

A serving backend's constructor allocates GPU buffers, reads configs and starts kernels; none of
that is what a static claim is about. ``new_instance`` makes an instance of the real class without
``__init__``; ``set_attr`` sets what the claim is about past any ``__setattr__`` override.
``Constructions`` records, while a construction path runs (pairing.py), every instance a class of
interest is built into and whether its real ``__init__`` finished.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def new_instance(cls: type) -> Any:
    """An instance without running ``__init__`` (abstract classes too: the claim is about the
    class's own members, and a real instance is always of some concrete subclass)."""
    abstract = getattr(cls, "__abstractmethods__", None)
    try:
        if abstract:
            cls.__abstractmethods__ = frozenset()
        try:
            return object.__new__(cls)
        except TypeError:
            return cls.__new__(cls)
    finally:
        if abstract:
            cls.__abstractmethods__ = abstract


def set_attr(obj: Any, name: str, value: Any) -> None:
    """Set an attribute past any ``__setattr__`` override (``nn.Module``'s needs ``__init__``)."""
    try:
        object.__setattr__(obj, name, value)
    except (AttributeError, TypeError):
        obj.__dict__[name] = value


@dataclass
class Built:
    """One instance a watched class was built into during a run."""

    instance: Any
    cls: type
    finished: bool = False  # its real __init__ returned (or was skipped)
    skipped: bool = False  # made without its __init__ (Constructions.skip)
    error: BaseException | None = None  # what its real __init__ raised


@dataclass
class Constructions:
    """Watch the real ``__init__`` of some classes: each call is recorded, then runs as written.

    Only ``__init__`` entries in the classes' own ``__dict__`` are replaced (a class without one
    gets one that calls the inherited ``__init__``); ``restore`` puts every class back as it was.
    """

    classes: list[type]
    # Classes whose constructor is heavy and not what the check is about (the implementations a
    # path builds: their __init__ allocates GPU state): instances are made without running it.
    skip: frozenset = frozenset()
    built: list[Built] = field(default_factory=list)
    _saved: list[tuple[type, bool, Any]] = field(default_factory=list)

    def install(self) -> None:
        seen: set[int] = set()
        for cls in self.classes:
            if id(cls) in seen:
                continue
            seen.add(id(cls))
            own = "__init__" in vars(cls)
            original = vars(cls).get("__init__")
            self._saved.append((cls, own, original))
            try:
                type.__setattr__(cls, "__init__", self._watch(cls))
            except (TypeError, AttributeError):  # a builtin or extension type: not watched
                self._saved.pop()

    def restore(self) -> None:
        for cls, own, original in reversed(self._saved):
            try:
                if own:
                    type.__setattr__(cls, "__init__", original)
                else:
                    type.__delattr__(cls, "__init__")
            except (TypeError, AttributeError):
                pass
        self._saved.clear()

    def _watch(self, cls: type):
        log = self.built

        def __init__(inst: Any, *args: Any, **kwargs: Any) -> None:
            # The first watched __init__ an instance enters is its outermost one: that call is the
            # construction (a super().__init__ into a watched base is part of it).
            entry = None
            if not any(b.instance is inst for b in log):
                entry = Built(inst, type(inst))
                log.append(entry)
                if cls in self.skip:
                    entry.finished = entry.skipped = True
                    return
            real = _original_init(cls, self._saved)
            try:
                real(inst, *args, **kwargs)
            except BaseException as exc:
                if entry is not None:
                    entry.error = exc
                raise
            if entry is not None:
                entry.finished = True

        __init__.__qualname__ = f"{cls.__qualname__}.__init__"
        return __init__


def _original_init(cls: type, saved: list[tuple[type, bool, Any]]):
    """The ``__init__`` ``cls`` had before watching: its own, or the next one up its MRO."""
    for c, own, original in saved:
        if c is cls and own:
            return original
    for base in cls.__mro__[1:]:
        for c, own, original in saved:
            if c is base:
                if own:
                    return original
                break
        else:
            if "__init__" in vars(base):
                return vars(base)["__init__"]
    return object.__init__
