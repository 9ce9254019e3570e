"""Which bindings of a local reach each call of it: `f = getattr(a, "x", None)`, later
`f = getattr(b, "y", None); f()` calls `b.y`, not `a.x`.

The per-file walk records every value a local is ever bound to. For a call of a local bound by
`getattr` that is not enough (CPython pickle.py rebinds `reduce` four times), so this small
reaching-bindings pass runs over the function body, only for the names that a `getattr` binds and
that are then called, which few functions have (350 of sglang's: 0.15 s of CPU in all); the walk
itself only notes which names a `getattr` binds.

Straight-line code and branches are exact: the latest binding in a block wins, both arms of an
`if` reach past it. A loop body runs a second time from the loop head when a binding inside it
reaches the next iteration (bindings kill and generate, so the second pass is the fixed point).
A `try` handler and `finally` may start anywhere in the `try` body, so every binding made there
reaches them. A `with` body is straight-line (a context manager that swallows exceptions is not
assumed). A walrus under `and`/`or`, a conditional expression or a comprehension may not run, so
it adds its value without replacing the earlier ones, and a call there, which may run after a
walrus written later in the expression, sees them all. Calls the pass does not see (in nested
functions and lambdas, which run later, in dead code, or of a name declared `global` or
`nonlocal`) are left as they were: every binding may reach them.

The same pass binds the arguments of calls to the bindings that reach them (bind_arguments):
`b = Split(b)` then `b = Hybrid(b)` builds `Split` from the binding before it, not from every
binding of `b`. A binding is known by its target's node there, so that its value is the one the
per-file walk recorded for that very node (for loops, unpacking and annotations included).
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections.abc import Callable

from ..refs import is_getattr, is_name

State = dict  # name -> frozenset of the values that may reach here; None: the point is unreachable
_NOTHING: frozenset = frozenset()
_NO_GETATTR = frozenset((None,))
_CONDITIONAL = (ast.BoolOp, ast.IfExp, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # the fields that hold statements
# Statements that bind a name only through their targets or a walrus, and always run on.
_PLAIN = frozenset({ast.Assign, ast.AnnAssign, ast.Expr, ast.Pass, ast.Assert})
# Nodes with nothing inside that this pass uses (a call's callee and a walrus target are read
# from their parents): the expression walk does not push them.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.Lambda}
                    | {c for base in (ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
                       for c in base.__subclasses__()})


def bind_local_calls(calls: list, body: list[ast.stmt], hooks: set[str],
                     value_of: Callable[[ast.expr | None, ast.expr | None], tuple | None]) -> list:
    """`calls` with each call of a local in `hooks` (names some `getattr` binds) replaced by one
    call per `getattr` binding that reaches it (`func` becomes that `("getattr", recv, name)`),
    or dropped when none does. `value_of(value, annotation)` is the ref the walk binds a name to."""
    names = {c.func[1] for c in calls if is_name(c.func) and c.func[1] in hooks}
    if not names:
        return calls
    reach = _Reaching(names, lambda target, value, annotation: value_of(value, annotation)
                      if value is not None else None)
    reach.block(body, {})
    out = []
    for call in calls:
        hit = reach.found.get((call.line, call.col)) if is_name(call.func) else None
        if hit is None or hit[0] != call.func[1] or hit[0] in reach.untracked:
            out.append(call)
            continue
        for value in sorted((v for v in hit[1] if v is not None and is_getattr(v)), key=repr):
            out.append(call._replace(func=value))
    return out


_ENTRY = ("entry",)  # what a name holds where the function starts: a parameter, what it was given
_AT_ENTRY = frozenset((_ENTRY,))


def bind_arguments(body: list[ast.stmt], calls: list[tuple[ast.Call, tuple, tuple]], names: set[str],
                   params: frozenset[str], value_at: dict,
                   received: Callable[[str, list], tuple] | None = None) -> list[tuple[tuple, tuple]]:
    """Each call's (positional refs, keyword refs) as given, with every argument that loads a name
    in `names` (locals bound more than once, parameters rebound) replaced by the values of the
    bindings of it that reach the call: `value_at` maps a binding's target node to the value the
    walk recorded for it; a binding it has no value for gives nothing, as everywhere else, and an
    argument that only such bindings reach is unknown (None). Left as it was: an argument the pass
    cannot tell about (a call in a closure or a lambda, in dead code, a name declared global or
    nonlocal), and a parameter that may still hold what the function was given there (its
    callers follow a parameter by its name), unless `received(name, values of the rebindings that
    also reach)` says what to put there instead."""
    # Only the statements that bind those names or hold those calls' arguments need their
    # expressions walked (most of the pass's time): the lines of the rest are skipped.
    lines = {t.lineno for t in value_at if t.id in names}
    lines.update(a.lineno for node, _, _ in calls for a in (*node.args, *[kw.value for kw in node.keywords])
                 if type(a) is ast.Name and a.id in names)
    reach = _Reaching(names, lambda target, value, annotation: target, loads=True, lines=sorted(lines))
    reach.block(body, dict.fromkeys(names, _AT_ENTRY))
    out = []
    for node, args, kwargs in calls:
        kw_nodes = [kw.value for kw in node.keywords if kw.arg]
        out.append((tuple([_reached(reach, n, r, params, value_at, received) for n, r in zip(node.args, args)]),
                    tuple([(k, _reached(reach, n, r, params, value_at, received))
                           for n, (k, r) in zip(kw_nodes, kwargs)])))
    return out


def _reached(reach: _Reaching, node: ast.expr, ref: tuple | None, params: frozenset[str],
             value_at: dict, received) -> tuple | None:
    if ref is None or not is_name(ref) or ref[1] not in reach.names or type(node) is not ast.Name:
        return ref
    hit = reach.found.get((node.lineno, node.col_offset))
    if hit is None or ref[1] in reach.untracked:
        return ref
    values = []  # of the bindings that reach, in source order
    for target in sorted((t for t in hit[1] if type(t) is ast.Name), key=lambda t: (t.lineno, t.col_offset)):
        value = value_at.get(target)
        if value is not None and value not in values:
            values.append(value)
    if _ENTRY in hit[1] and ref[1] in params:
        return ref if received is None else received(ref[1], values)
    if not values:
        return None
    return values[0] if len(values) == 1 else ("union", tuple(values))


def _join(*states: State | None) -> State | None:
    live = [s for s in states if s is not None]
    if not live:
        return None
    out = dict(live[0])
    for state in live[1:]:
        for name, values in state.items():
            out[name] = out.get(name, _NOTHING) | values
    return out


class _Reaching:
    def __init__(self, names: set[str], value_of, loads: bool = False, lines: list[int] | None = None):
        self.names = names
        self.value_of = value_of  # (target node, value, annotation) -> what the binding is known by
        self.loads = loads  # also record the names loaded as call arguments, by their own position
        self.lines = lines  # sorted; where given, an expression on none of these lines is not walked
        # call (or argument) position -> (name, values)
        self.found: dict[tuple[int, int], tuple[str, frozenset]] = {}
        self.untracked: set[str] = set()  # declared global or nonlocal: other code may rebind them
        self.loops: list[tuple[list, list]] = []  # (states at break, states at continue)
        self.log: list[tuple[str, frozenset]] = []  # every binding made, for try handlers

    def block(self, stmts: list[ast.stmt], state: State | None) -> State | None:
        lines = self.lines
        for stmt in stmts:
            if state is None:
                return None
            if lines is not None and type(stmt) in _PLAIN and not self.touches(stmt):
                continue  # binds no tracked name, holds no use of one, and runs on
            state = self.stmt(stmt, state)
        return state

    def touches(self, node: ast.AST) -> bool:
        """Whether `node` spans one of `lines`."""
        i = bisect_left(self.lines, node.lineno)
        return i < len(self.lines) and self.lines[i] <= (node.end_lineno or node.lineno)

    def bind(self, state: State, name: str, value: tuple | None, replace: bool = True) -> None:
        if name in self.names:
            values = frozenset((value,))
            state[name] = values if replace else state.get(name, _NOTHING) | values
            self.log.append((name, values))

    def bind_target(self, state: State, target: ast.expr, value: ast.expr | None,
                    annotation: ast.expr | None = None) -> None:
        """As the walk binds: `a, b = x, y` pairs the items; other unpacking binds no getattr."""
        if isinstance(target, ast.Name):
            if target.id in self.names:
                self.bind(state, target.id, self.value_of(target, value, annotation))
        elif isinstance(target, (ast.Tuple, ast.List)):
            paired = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            for i, elt in enumerate(target.elts):
                self.bind_target(state, elt, value.elts[i] if paired else None)
        elif isinstance(target, ast.Starred):
            self.bind_target(state, target.value, None)

    def bind_stores(self, state: State, node: ast.AST | None) -> None:
        """Every name `node` stores to (loop and `with` targets, `except ... as`, match captures)
        gets a value that is not a getattr."""
        kind = type(node)
        if kind is ast.Name:
            if node.id in self.names:
                self.bind(state, node.id, self.value_of(node, None, None))
            return
        if node is None or kind is ast.Attribute or kind is ast.Subscript:  # these store no local
            return
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                if sub.id in self.names:
                    self.bind(state, sub.id, self.value_of(sub, None, None))
            elif isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name:
                self.bind(state, sub.name, None)
            elif isinstance(sub, ast.MatchMapping) and sub.rest:
                self.bind(state, sub.rest, None)

    def expr(self, node: ast.AST | None, state: State) -> None:
        """Record the calls of tracked names in `node` (not in lambdas) and apply its walruses.
        They run in source order (a call loads its callee before its arguments run), except under
        a conditional expression or in a comprehension (`h() if (h := ...) else None`): a call
        there sees every walrus of the expression."""
        if node is None:
            return
        if self.lines is not None and not self.touches(node):
            return
        calls, walruses = [], []
        stack = [(node, False, _NOTHING)]  # node, may not run (or not in order), names a comprehension rebinds
        while stack:
            sub, maybe, shadowed = stack.pop()
            kind = type(sub)
            if kind is ast.Call:
                if type(sub.func) is ast.Name and sub.func.id in self.names:
                    calls.append(((sub.lineno, sub.col_offset), sub.func.id, maybe, sub.func.id in shadowed))
                if self.loads:  # (a comprehension's own variable is not the local)
                    calls.extend(((a.lineno, a.col_offset), a.id, maybe, False)
                                 for a in (*sub.args, *[kw.value for kw in sub.keywords])
                                 if type(a) is ast.Name and a.id in self.names and a.id not in shadowed)
            elif kind is ast.NamedExpr and sub.target.id in self.names:
                walruses.append(((sub.end_lineno, sub.end_col_offset), sub.target.id,
                                 self.value_of(sub.target, sub.value, None), maybe))
            if kind in _COMPREHENSIONS:
                shadowed = shadowed | {n.id for g in sub.generators for n in ast.walk(g.target)
                                       if isinstance(n, ast.Name) and n.id in self.names}
            child_maybe = maybe or kind in _CONDITIONAL
            for field in sub._fields:
                child = getattr(sub, field, None)
                if type(child) is list:
                    stack.extend((item, child_maybe, shadowed) for item in child
                                 if item is not None and type(item) not in _LEAVES)  # {**d}: a None key
                elif child is not None and type(child) not in _LEAVES and isinstance(child, ast.AST):
                    stack.append((child, child_maybe, shadowed))
        anywhere: dict[str, frozenset] = {}
        for _, name, value, _ in walruses:
            anywhere[name] = anywhere.get(name, _NOTHING) | {value}
        # A walrus (0) that ends where a call (1) starts is applied first.
        events = sorted([(w[0], 0, i) for i, w in enumerate(walruses)]
                        + [(c[0], 1, i) for i, c in enumerate(calls)])
        for _, is_call, i in events:
            if is_call:
                key, name, maybe, shadowed = calls[i]
                values = _NO_GETATTR if shadowed else state.get(name, _NOTHING)
                if maybe and not shadowed:
                    values = values | anywhere.get(name, _NOTHING)
                old = self.found.get(key)
                self.found[key] = (name, old[1] | values if old else values)
            else:
                _, name, value, maybe = walruses[i]
                self.bind(state, name, value, replace=not maybe)

    def stmt(self, node: ast.stmt, state: State) -> State | None:
        kind = type(node)
        if kind is ast.Assign:
            self.expr(node, state)
            for target in node.targets:
                self.bind_target(state, target, node.value)
        elif kind is ast.AnnAssign:
            self.expr(node.value, state)
            if node.value is not None:
                self.bind_target(state, node.target, node.value, node.annotation)
        elif kind is ast.If:
            self.expr(node.test, state)
            return _join(self.block(node.body, dict(state)), self.block(node.orelse, state))
        elif kind in (ast.For, ast.AsyncFor, ast.While):
            return self.loop(node, state)
        elif kind in (ast.Try, getattr(ast, "TryStar", ast.Try)):
            return self.try_(node, state)
        elif kind in (ast.With, ast.AsyncWith):
            for item in node.items:
                self.expr(item.context_expr, state)
                self.bind_stores(state, item.optional_vars)
            return self.block(node.body, state)
        elif kind is ast.Match:
            self.expr(node.subject, state)
            outs = [state]  # no case may match
            for case in node.cases:
                inner = dict(state)
                self.bind_stores(inner, case.pattern)
                self.expr(case.guard, inner)
                outs.append(self.block(case.body, inner))
            return _join(*outs)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            # Its body runs later (not seen here); it may rebind a name with `nonlocal` or `global`
            # (statements: their expressions need no walk).
            todo = [node]
            while todo:
                sub = todo.pop()
                if type(sub) is ast.Global or type(sub) is ast.Nonlocal:
                    self.untracked.update(sub.names)
                for field in _BLOCKS:
                    todo.extend(getattr(sub, field, ()))
            self.bind(state, node.name, None)
        elif kind in (ast.Global, ast.Nonlocal):
            self.untracked.update(node.names)
        elif kind in (ast.Return, ast.Raise):
            self.expr(node, state)
            return None
        elif kind is ast.Break or kind is ast.Continue:
            if self.loops:
                self.loops[-1][0 if kind is ast.Break else 1].append(state)
            return None
        else:  # expressions, augmented assignments, del, imports, assert, ...
            self.expr(node, state)
            if kind is ast.AugAssign:
                self.bind_stores(state, node.target)
            elif kind is ast.Delete:
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id in self.names:
                        state[target.id] = _NOTHING
            elif kind in (ast.Import, ast.ImportFrom):
                for alias in node.names:
                    self.bind(state, alias.asname or alias.name.split(".", 1)[0], None)
        return state

    def loop(self, node: ast.For | ast.AsyncFor | ast.While, entry: State) -> State | None:
        if type(node) is not ast.While:
            self.expr(node.iter, entry)
        head = entry
        for _ in range(2):
            breaks, continues = [], []
            self.loops.append((breaks, continues))
            state = dict(head)
            if type(node) is ast.While:
                self.expr(node.test, state)
            else:
                self.bind_stores(state, node.target)
            out = self.block(node.body, state)
            self.loops.pop()
            again = _join(head, out, *continues)
            if again == head:
                break
            head = again
        return _join(self.block(node.orelse, dict(head)), *breaks)

    def try_(self, node: ast.Try, entry: State) -> State | None:
        mark = len(self.log)
        body_out = self.block(node.body, dict(entry))
        raised = dict(entry)  # a handler may start anywhere in the body
        for name, values in self.log[mark:]:
            raised[name] = raised.get(name, _NOTHING) | values
        raised = _join(raised, body_out)
        outs = []
        for handler in node.handlers:
            inner = dict(raised)
            if handler.name:
                self.bind(inner, handler.name, None)
            outs.append(self.block(handler.body, inner))
        done = _join(self.block(node.orelse, body_out) if body_out is not None else None, *outs)
        if not node.finalbody:
            return done
        out = self.block(node.finalbody, _join(done, raised))  # also after a return or an uncaught raise
        return out if done is not None else None
