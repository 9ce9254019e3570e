"""The records Context.reaching speaks in: where a member is used, and which uses can be a wrapper.

Kept apart from context.py so that the rules' modules can build them without loading the tree passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .facts import Site
    from .resolve import Resolution


class Use(NamedTuple):
    """A place a member is used on a receiver: what Context.reaching asks about."""
    site: Site
    receiver: tuple | None  # the receiver's ref, as the summary recorded it
    line: int
    col: int
    kind: str  # "probe" | "call"
    item: object  # the caller's own record of the use, handed back with the answer


class Reached(NamedTuple):
    """A use whose receiver can be the wrapper asked about."""
    item: object  # Use.item
    resolution: Resolution  # the receiver's types, and why
    static: str  # the static type that admits the wrapper
