"""The tests that hold where a line of a function runs, read from the function's text.

`if <t>:` holds `t` over its body and `not t` over its `else`; an `if <t>: return | raise` with no
`else` holds `not t` over the rest of its block. Loops, `with` and `try` bodies pass through (they
decide how often a line runs, not which tests hold there). What `not`, `and` and `or` say of their
parts is for the reader of a test (`implied_isinstance`).

Used where a kind test decides what an object is: a call made only on the kinds an `isinstance`
names (signals/unsupported_pairing.py), a receiver narrowed by one (context.py).
"""

from __future__ import annotations

import ast


def holding(node: ast.AST, line: int) -> list[tuple[ast.expr, bool]]:
    """(test, truth) of every test that holds where `line` of the function `node` runs."""
    out: list[tuple[ast.expr, bool]] = []

    def leaves(body: list) -> bool:
        return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))

    def within(body: list) -> bool:
        for stmt in body:
            start, end = stmt.lineno, stmt.end_lineno or stmt.lineno
            if line < start:
                return False
            if isinstance(stmt, ast.If):
                if line > end:
                    if leaves(stmt.body) and not stmt.orelse:
                        out.append((stmt.test, False))
                    continue
                if line <= stmt.test.end_lineno:
                    return True  # the test itself
                in_body = bool(stmt.body) and stmt.body[0].lineno <= line <= (stmt.body[-1].end_lineno or line)
                out.append((stmt.test, in_body))
                return within(stmt.body if in_body else stmt.orelse)
            if start <= line <= end:
                inner = [s for f in ("body", "orelse", "finalbody") for s in getattr(stmt, f, None) or []
                         if isinstance(s, ast.stmt)]
                inner += [s for h in getattr(stmt, "handlers", ()) for s in h.body]
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                    return True
                return within(sorted(inner, key=lambda s: s.lineno))
        return False

    within(getattr(node, "body", []))
    return out


def kind_tests_at(text, scope, path: str, line: int) -> list[tuple[ast.expr, ast.expr, int]]:
    """(subject, classes, the test's line) of each `isinstance(subject, classes)` that holds where
    `line` of the function `scope` runs, from its text (`text`: function_text.FunctionText). The
    file's lines are read first: most functions test no kind before the line, and are not parsed."""
    lines = text.source_lines(path)
    if lines and not any(b"isinstance" in t for t in lines[max(scope.fn.line - 1, 0):line]):
        return []
    got = text.source(scope)
    if got is None:
        return []
    return [(subject, kinds, test.lineno) for test, truth in holding(got.node, line)
            for subject, kinds in implied_isinstance(test, truth)]


def implied_isinstance(test: ast.expr, truth: bool) -> list[tuple[ast.expr, ast.expr]]:
    """The `isinstance(x, C)` calls that hold when `test` has the truth `truth`, as (x, C):
    directly, as a part of a conjunction that holds or of a disjunction that fails, or negated."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return implied_isinstance(test.operand, not truth)
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And) != truth:
            return []  # a disjunction that holds (or a conjunction that fails) says no one part
        return [hit for v in test.values for hit in implied_isinstance(v, truth)]
    if truth and isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
            and len(test.args) == 2 and not test.keywords:
        return [(test.args[0], test.args[1])]
    return []
