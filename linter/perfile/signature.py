"""Python's argument binding, statically: does a call fit a signature, and if not, what TypeError?

The order of checks and the message texts follow CPython's own (`initialize_locals` in ceval.c):
keywords first (unexpected, positional-only passed as keyword, multiple values), then too many
positionals, then missing positionals, then missing keyword-only arguments. The tests compare the
verdict with `inspect.Signature.bind` and the text with the interpreter's own TypeError.
"""

from __future__ import annotations

from dataclasses import dataclass

from .summary import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    CallSite,
    FunctionInfo,
    Param,
)


@dataclass(frozen=True, slots=True)
class CallShape:
    n_positional: int
    keywords: tuple[str, ...] = ()
    star: bool = False  # *args of unknown length: at least n_positional positionals
    double_star: bool = False  # **kwargs of unknown content

    @classmethod
    def of(cls, call: CallSite) -> CallShape:
        return cls(call.n_positional, call.keywords, call.star, call.double_star)

    def describe(self) -> str:
        parts = [f"{self.n_positional} positional"]
        if self.star:
            parts[0] += " (+ *args)"
        if self.keywords:
            parts.append("keywords " + ", ".join(self.keywords))
        if self.double_star:
            parts.append("**kwargs")
        return ", ".join(parts)


def bound_params(fn: FunctionInfo) -> tuple[Param, ...]:
    """Parameters seen by a call through an instance (self or cls already bound)."""
    if fn.kind == "staticmethod":
        return fn.params
    params = fn.params
    if params and params[0].kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD):
        return params[1:]
    return params


def _names(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"


def bind_error(params: tuple[Param, ...], call: CallShape, qualname: str, implicit: int = 1) -> str | None:
    """The TypeError Python raises for this call, or None when the call binds (or may bind).

    `params` are the parameters left after binding the receiver; `implicit` is how many arguments
    the interpreter counts as given before them (1 for self/cls), which its messages include.
    """
    positional = [p for p in params if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    has_varargs = any(p.kind == VAR_POSITIONAL for p in params)
    has_varkw = any(p.kind == VAR_KEYWORD for p in params)
    kwonly = [p for p in params if p.kind == KEYWORD_ONLY]
    by_name = {p.name: p for p in params if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}

    filled = {p.name for p in positional[: call.n_positional]}
    posonly = {p.name for p in params if p.kind == POSITIONAL_ONLY}
    for kw in call.keywords:
        param = by_name.get(kw)
        if param is None:
            if has_varkw:
                continue
            # At the first keyword that matches nothing, CPython names every positional-only
            # parameter passed by keyword, if any, before calling the keyword unexpected.
            as_kw = [k for k in call.keywords if k in posonly]
            if as_kw:
                return (f"{qualname}() got some positional-only arguments passed as keyword arguments: "
                        f"'{', '.join(as_kw)}'")
            return f"{qualname}() got an unexpected keyword argument '{kw}'"
        if kw in filled:
            return f"{qualname}() got multiple values for argument '{kw}'"
        filled.add(kw)

    if call.n_positional > len(positional) and not has_varargs:
        co_argcount = len(positional) + implicit
        given = call.n_positional + implicit
        defcount = sum(1 for p in positional if p.has_default)
        if defcount:
            sig, plural = f"from {co_argcount - defcount} to {co_argcount}", True
        else:
            sig, plural = str(co_argcount), co_argcount != 1
        kwonly_given = sum(1 for p in kwonly if p.name in filled)
        kw_sig = ""
        if kwonly_given:
            kw_sig = (f" positional argument{'s' if given != 1 else ''} (and {kwonly_given} keyword-only "
                      f"argument{'s' if kwonly_given != 1 else ''})")
        verb = "was" if given == 1 and not kwonly_given else "were"
        at_least = "at least " if call.star else ""
        return (f"{qualname}() takes {sig} positional argument{'s' if plural else ''} but "
                f"{at_least}{given}{kw_sig} {verb} given")

    if call.star or call.double_star:
        return None  # what remains (missing arguments) cannot be proved from the call site alone
    missing = [p.name for p in positional if p.name not in filled and not p.has_default]
    if missing:
        return (f"{qualname}() missing {len(missing)} required positional argument"
                f"{'s' if len(missing) != 1 else ''}: {_names(missing)}")
    missing_kw = [p.name for p in kwonly if p.name not in filled and not p.has_default]
    if missing_kw:
        return (f"{qualname}() missing {len(missing_kw)} required keyword-only argument"
                f"{'s' if len(missing_kw) != 1 else ''}: {_names(missing_kw)}")
    return None


def format_signature(fn: FunctionInfo) -> str:
    out: list[str] = []
    star_written = False
    for i, p in enumerate(fn.params):
        if p.kind == KEYWORD_ONLY and not star_written:
            out.append("*")
            star_written = True
        text = p.name
        if p.kind == VAR_POSITIONAL:
            text, star_written = "*" + p.name, True
        elif p.kind == VAR_KEYWORD:
            text = "**" + p.name
        elif p.has_default:
            text += "=…"
        out.append(text)
        if p.kind == POSITIONAL_ONLY and (i + 1 == len(fn.params) or fn.params[i + 1].kind != POSITIONAL_ONLY):
            out.append("/")
    return f"{fn.name}({', '.join(out)})"
