"""An unannotated parameter typed from the calls that pass it.

`Req.offload(self, pool, allocator)` says nothing of `allocator`; its callers do
(`req.offload(self.pool, self.token_to_kv_pool_allocator)`, that attribute annotated). Asked only
where the index has no other answer for the receiver of a member call (not of a probe: probing an
unannotated parameter is mostly duck typing over whatever comes in) that is such a parameter, and only for methods
(a call reaches them through a receiver the index can check) and `__init__` (its constructions
are in the summaries with their arguments). A caller's argument is read from its source where the
summary keeps none: only the call's own text is parsed, and only for these few calls.

The answer is what the callers the index can follow pass: each is a configuration that really
hands that object over, so a claim resting on it is true of that caller.
"""

from __future__ import annotations

import ast
import io
import tokenize
from typing import TYPE_CHECKING

from .source_lines import SourceLines
from .findings import Evidence
from .resolve import NOTHING, Resolution
from .summary import _EXPRESSIONS, KEYWORD_ONLY, VAR_KEYWORD, VAR_POSITIONAL

if TYPE_CHECKING:
    from .context import Context
    from .facts import Site

MAX_CALLERS = 8  # more callers than this: a utility everyone calls, not a hand-over worth typing
MAX_CALL_LINES = 60  # a call's text is read this far at most


class ParamCallers:
    def __init__(self, ctx: "Context"):
        self.ctx = ctx
        self._sources = SourceLines()
        self._memo: dict[tuple, Resolution] = {}

    def resolve(self, site: "Site", name: str) -> Resolution:
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

    def _resolve(self, site: "Site", name: str, position: int | None) -> Resolution:
        callers = (self._constructions(site, name, position) if site.fn.name == "__init__"
                   else self._member_calls(site, name, position))
        if not callers:
            return NOTHING
        out: set = set()
        steps: list[Evidence] = []
        resolver = self.ctx.resolver
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

    def _constructions(self, site: "Site", name: str, position: int | None) -> list:
        """What the calls running this `__init__` pass (FamilyModel.init_calls: the class's
        constructions, its subclasses' that inherit it, their `super().__init__(...)`)."""
        calls = self.ctx.model.init_calls(site.cls)
        if len(calls) > MAX_CALLERS:
            return []
        out = []
        for scope, (_, args, kwargs, star), _ in calls:
            arg = dict(kwargs).get(name)
            if arg is None and not star and position is not None and position < len(args):
                arg = args[position]
            if arg is not None:
                out.append((scope, self.ctx.index.modules[scope.module].file.display, scope.fn.line, arg))
        return out

    def _member_calls(self, site: "Site", name: str, position: int | None) -> list:
        """The calls of this very method (their receiver can be a class that runs it), each with
        the argument given for the parameter, read from the caller's source."""
        ctx, index, member = self.ctx, self.ctx.index, site.fn.name
        calls = []
        for csite, call, (recv, _, how) in ctx.member_calls.get(member, ()):
            if how != "call" or call.star or call.double_star:
                continue
            runs = (index.lookup(t, member) for t in ctx.resolver.resolve(recv, csite.scope).instances()
                    if t in index.classes)
            if not any(hit is not None and hit[0] == site.cls for hit in runs):
                continue
            calls.append((csite, call))
            if len(calls) > MAX_CALLERS:
                return []
        out = []
        for csite, call in calls:
            node = self._call_node(csite, call, member)
            if node is None:
                continue
            arg = next((kw.value for kw in node.keywords if kw.arg == name), None)
            if arg is None and position is not None and position < len(node.args) and not any(
                    isinstance(a, ast.Starred) for a in node.args[:position + 1]):
                arg = node.args[position]
            ref = _EXPRESSIONS.ref(arg) if arg is not None else None
            if ref is not None:
                out.append((csite.scope, csite.path, call.line, ref))
        return out

    def _call_node(self, csite: "Site", call, member: str) -> ast.Call | None:
        """The call `recv.member(...)` starting at (line, col), parsed from its own text: the
        tokens from its start up to the `)` that closes the parenthesis after `member` (parsing
        the caller's whole file for one call cost more than the rest of the rule)."""
        mod = self.ctx.index.modules.get(csite.module)
        if mod is None:
            return None
        path = mod.file.path
        lines = self._sources.of(path)
        if not lines or call.line > len(lines):
            return None
        head = lines[call.line - 1][call.col:]
        text = b"".join([head, *lines[call.line:call.line + MAX_CALL_LINES]]).decode("utf-8", "replace")
        end = _call_end(text, member)
        if end is None:
            return None
        try:
            node = ast.parse(text[:end], mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return node if isinstance(node, ast.Call) else None


def _call_end(text: str, member: str) -> int | None:
    """The offset just past the `)` closing `member(`'s argument list, where `member(` is the first
    name-then-parenthesis at bracket depth 0 (the receiver may hold brackets of its own)."""
    depth, target, prev, offsets = 0, None, None, _line_offsets(text)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                if target is None and depth == 0 and tok.string == "(" and prev is not None \
                        and prev.type == tokenize.NAME and prev.string == member:
                    target = 1
                    depth = 1
                    prev = tok
                    continue
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
                if target is not None and depth == 0:
                    return offsets[tok.end[0] - 1] + tok.end[1]
                if depth < 0:
                    return None
            if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
                prev = tok
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return None


def _line_offsets(text: str) -> list[int]:
    out, pos = [], 0
    for line in text.splitlines(keepends=True):
        out.append(pos)
        pos += len(line)
    out.append(pos)
    return out
