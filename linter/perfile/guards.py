"""Dominating tests: which flags the code has already checked where a call or probe runs.

The per-file pass records, per function, each simple test that decides whether a stretch of lines
runs, as a `Guard` (test ref, polarity, first line, last line):

    if <t>: BODY else: ORELSE        -> (t, True, BODY) and (t, False, ORELSE)
    assert <t>                        -> (t, True, rest of the enclosing block)
    if <t>: return | raise            -> (t, False, rest of the enclosing block)

`not t` flips the polarity; `a and b` splits into both conjuncts where it holds, `a or b` into both
disjuncts where it fails; `x is None` / `x is not None` is the test of `x`. Only tests naming a
flag (a name, an attribute chain, a call of one) are kept: those are what a constructor and a use
site can share (`use_dsa` / `self.use_dsa`, `is_npu()`). A line is dominated by a guard when it
lies in the guard's range; `dominating` answers that from the summary alone. Stretches decided by
anything else (another test, a loop, a `try` with handlers) are recorded with the `OPAQUE` test.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from typing import NamedTuple

from ..refs import is_attr, is_call, is_name, is_self


class Guard(NamedTuple):
    test: tuple  # the tested ref ("name", x) | ("attr", ...) | ("call", ...)
    positive: bool  # the test holds over the range (False: it fails there)
    first: int
    last: int


# A test the pass does not read (`if n > 1:`), a loop body, a `try` body with handlers, a `match`
# case: lines that may or may not run, with no flag to name. The empty name is no identifier.
OPAQUE = ("name", "")

_FLAG_KINDS = frozenset({"name", "attr", "call"})
_MAX_PARTS = 4  # an `and` of more flags than this is a configuration table, not a switch


def split_test(node: ast.expr, positive: bool, ref, out: list, depth: int = 0) -> None:
    """The (ref, polarity) facts that hold where `node` evaluates to `positive`."""
    if depth > 6 or len(out) >= _MAX_PARTS:
        return
    kind = type(node)  # exact tests: the parser makes no subclasses of these
    if kind is ast.UnaryOp and type(node.op) is ast.Not:
        split_test(node.operand, not positive, ref, out, depth + 1)
    elif kind is ast.BoolOp:
        # `a and b` true: both true; `a or b` false: both false. Otherwise nothing is known of each.
        if (type(node.op) is ast.And) == positive:
            for value in node.values:
                split_test(value, positive, ref, out, depth + 1)
    elif kind is ast.Compare and len(node.ops) == 1 and type(node.comparators[0]) is ast.Constant \
            and node.comparators[0].value is None and type(node.ops[0]) in (ast.Is, ast.IsNot):
        split_test(node.left, positive == (type(node.ops[0]) is ast.IsNot), ref, out, depth + 1)
    elif kind is ast.Name or kind is ast.Attribute or kind is ast.Call:
        r = ref(node)
        if r is not None and r[0] in _FLAG_KINDS:
            out.append((r, positive))


def split_both(node: ast.expr, ref) -> tuple[list, list]:
    """split_test where `node` holds and where it fails. A plain flag (a name, an attribute, a
    call: most `if` tests) is read once for both."""
    kind = type(node)
    if kind is ast.Name or kind is ast.Attribute or kind is ast.Call:
        r = ref(node)
        if r is not None and r[0] in _FLAG_KINDS:
            return [(r, True)], [(r, False)]
        return [], []
    holds: list = []
    fails: list = []
    split_test(node, True, ref, holds)
    split_test(node, False, ref, fails)
    return holds, fails


def falsy_defaults(args: ast.arguments) -> tuple[str, ...]:
    """Parameters whose default makes a test of them fail (`x=None`, `use_x=False`): a caller that
    does not pass one never takes the branch that needs it."""
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return tuple(a.arg for a, d in pairs if isinstance(d, ast.Constant) and not d.value)


def exits(body: list[ast.stmt]) -> bool:
    """A block that leaves the enclosing block for good: it ends in `return` or `raise`."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def dominating(guards: tuple[Guard, ...], line: int) -> list[tuple[tuple, bool]]:
    """The (test ref, polarity) facts known to hold at `line`."""
    return [(g.test, g.positive) for g in guards if g.first <= line <= g.last]


def deciding(guards: tuple[Guard, ...], line: int) -> set[Guard]:
    """The guards whose range holds `line`: two lines with the same set run on the same path."""
    return {g for g in guards if g.first <= line <= g.last}


def self_flag(ref: tuple, self_name: str | None) -> str | None:
    """`self.<flag>` as the flag's name."""
    if self_name and is_attr(ref) and is_self(ref[1], self_name):
        return ref[2]
    return None


def guards_in_use(fn) -> tuple[Guard, ...]:
    """The guards the whole-tree passes can use: any over a probe or a read (the path a probe and
    the reads of its object share; `OPAQUE` ones only where there are reads), a test of
    `self.<flag>` over a kept call or a `self` assignment, a test of a name over a `self` assignment
    (a constructor choosing its delegate by a parameter)."""
    probed = sorted({p.line for p in fn.probes} | {r.line for r in fn.reads})
    calls = sorted({c.line for c in fn.calls})
    stores = sorted({line for assigns in fn.self_attrs.values() for _, _, line in assigns})
    self_ref = ("name", fn.params[0].name) if fn.params else None
    kept = []
    receivers = None  # (line, receiver) of the member calls, once a guard asks
    for g in fn.guards:
        test = g.test
        if test == OPAQUE:
            if fn.reads and _covers(probed, g):
                kept.append(g)
        elif _covers(probed, g):
            kept.append(g)
        elif is_attr(test) and test[1] == self_ref and self_ref is not None:
            if _covers(calls, g) or _covers(stores, g):
                kept.append(g)
        elif (is_attr(test) or is_call(test)) and _covers(calls, g):
            if receivers is None:
                member_calls = [c for c in fn.calls if is_attr(c.func)]
                member_calls.sort(key=_line)
                receivers = ([c.line for c in member_calls], [c.func[1] for c in member_calls])
            if _gates_its_own_call(receivers, test, g):
                kept.append(g)
        elif is_name(test) and _covers(stores, g):
            kept.append(g)
    return tuple(kept)


def _covers(lines: list[int], g: Guard) -> bool:
    i = bisect_left(lines, g.first)
    return i < len(lines) and lines[i] <= g.last


def gate_subject(test: tuple) -> tuple[tuple, str] | None:
    """(the object, the member) of a test that asks an object itself: `x.flag`, `x.supports()`."""
    if is_call(test) and test[1] is not None and is_attr(test[1]):
        test = test[1]
    if is_attr(test) and test[1] is not None:
        return test[1], test[2]
    return None


def same_object(a: tuple | None, b: tuple | None) -> bool:
    """Two refs that read the same object: equal once each call is taken without its position
    (`get_backend()` tested on one line and probed on the next is one accessor's answer)."""
    return a is not None and b is not None and _unplaced(a) == _unplaced(b)


def _unplaced(ref):
    if type(ref) is not tuple:
        return ref
    if ref and is_call(ref):
        return ("call", _unplaced(ref[1]))
    return tuple(_unplaced(r) for r in ref)


def _gates_its_own_call(receivers: tuple[list, list], test: tuple, g: Guard) -> bool:
    """A test of an object's own flag or capability (`if b.supports_x():`) over a call on that
    object (`b.x(...)`): what the receiver-gate signal reads. `receivers`: the lines of the
    function's member calls, in order, and their receivers."""
    subject = gate_subject(test)
    if subject is None or subject[0] is None:
        return False
    obj = subject[0]
    # Without a call in it, the object is its own unplaced form, and so must a match be.
    placed = _unplaced(obj) if _has_call(obj) else None
    lines, recvs = receivers
    i = bisect_left(lines, g.first)
    while i < len(lines) and lines[i] <= g.last:
        if recvs[i] == obj or (placed is not None and _unplaced(recvs[i]) == placed):
            return True
        i += 1
    return False


def _line(call) -> int:
    return call.line


def _has_call(ref) -> bool:
    return type(ref) is tuple and bool(ref) and (is_call(ref) or any(_has_call(r) for r in ref[1:]))
