"""An unannotated parameter typed from the calls that pass it.

`Req.offload(self, pool, allocator)` says nothing of `allocator`; its callers do
(`req.offload(self.pool, self.token_to_kv_pool_allocator)`, that attribute annotated). Asked only
where the index has no other answer for the receiver of a member call (not of a probe: probing an
unannotated parameter is mostly duck typing over whatever comes in) that is such a parameter, and only for methods
(a call reaches them through a receiver the index can check) and `__init__` (its constructions
are in the summaries with their arguments). A caller's argument is read from its source where the
summary keeps none: the calling function's text is parsed, once per run and function, as
passed_values.py does for its own callers (FunctionText.call_node).

The answer is what the callers the index can follow pass: each is a configuration that really
hands that object over, so a claim resting on it is true of that caller.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..findings import Evidence
from ..perfile.summary import EXPRESSIONS, KEYWORD_ONLY, VAR_KEYWORD, VAR_POSITIONAL
from .resolve import NOTHING, Resolution

if TYPE_CHECKING:
    from .callgraph import CallGraph
    from .facts import Site
    from .function_text import FunctionText
    from .index import TreeIndex
    from .resolve import Resolver

MAX_CALLERS = 8  # more callers than this: a utility everyone calls, not a hand-over worth typing


class ParamCallers:
    def __init__(self, index: TreeIndex, resolver: Resolver, calls: CallGraph, text: FunctionText):
        self.index = index
        self.resolver = resolver
        self.calls = calls
        self.text = text
        self._memo: dict[tuple, Resolution] = {}

    def resolve(self, site: Site, name: str) -> Resolution:
        fn = site.fn
        if site.cls is None or not fn.params or fn.params[0].name == name or fn.kind != "method":
            return NOTHING
        i = next((i for i, p in enumerate(fn.params) if p.name == name), None)
        if i is None or fn.params[i].annotation is not None or fn.params[i].kind in (VAR_POSITIONAL, VAR_KEYWORD):
            return NOTHING  # not a parameter, annotated, or *args/**kwargs
        key = (site.module, site.cls, fn.name, name)
        hit = self._memo.get(key)
        if hit is None:
            # The position among the arguments a call passes (`self` is not one); keyword-only: none.
            position = i - 1 if fn.params[i].kind != KEYWORD_ONLY else None
            hit = self._memo[key] = self._resolve(site, name, position)
        return hit

    def _resolve(self, site: Site, name: str, position: int | None) -> Resolution:
        callers = (self._constructions(site, name, position) if site.fn.name == "__init__"
                   else self._member_calls(site, name, position))
        if not callers:
            return NOTHING
        out: set = set()
        steps: list[Evidence] = []
        resolver = self.resolver
        for scope, path, line, arg in callers:
            r = resolver.resolve(arg, scope)
            found = r.instances()
            if not found:
                continue
            out |= found
            shown = ", ".join(sorted(t.rsplit(".", 1)[-1] for t in found))
            steps.append(Evidence(path, line, f"`{name}` is not annotated; this call passes {shown}"))
            steps.extend(r.steps[:2])
        if not out:
            return NOTHING
        return Resolution(frozenset(out), tuple(steps[:6]))

    def _constructions(self, site: Site, name: str, position: int | None) -> list:
        """What the calls running this `__init__` pass (CallGraph.init_calls: the class's
        constructions, its subclasses' that inherit it, their `super().__init__(...)`)."""
        calls = self.calls.init_calls(site.cls)
        if len(calls) > MAX_CALLERS:
            return []
        out = []
        for scope, (_, args, kwargs, star), _ in calls:
            arg = dict(kwargs).get(name)
            if arg is None and not star and position is not None and position < len(args):
                arg = args[position]
            if arg is not None:
                out.append((scope, self.index.modules[scope.module].file.display, scope.fn.line, arg))
        return out

    def _member_calls(self, site: Site, name: str, position: int | None) -> list:
        """The calls of this very method (their receiver can be a class that runs it), each with
        the argument given for the parameter, read from the caller's source."""
        index, resolver, member = self.index, self.resolver, site.fn.name
        calls = []
        for csite, call, (recv, _, how) in self.calls.member_calls.get(member, ()):
            if how != "call" or call.star or call.double_star:
                continue
            runs = (index.lookup(t, member) for t in resolver.resolve(recv, csite.scope).instances()
                    if t in index.classes)
            if not any(hit is not None and hit.owner == site.cls for hit in runs):
                continue
            calls.append((csite, call))
            if len(calls) > MAX_CALLERS:
                return []
        out = []
        for csite, call in calls:
            node = self.text.call_node(csite.scope, call.line, call.col)
            if node is None:
                continue
            arg = next((kw.value for kw in node.keywords if kw.arg == name), None)
            if arg is None and position is not None and position < len(node.args) and not any(
                    isinstance(a, ast.Starred) for a in node.args[:position + 1]):
                arg = node.args[position]
            ref = EXPRESSIONS.ref(arg) if arg is not None else None
            if ref is not None:
                out.append((csite.scope, csite.path, call.line, ref))
        return out
