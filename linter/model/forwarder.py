"""The method AL001's `--fix` adds to a wrapper: forward the hook to each delegate that has it.

Its signature is what every implementation of the hook accepts: the leading positional parameters
they share (same name, same place), then, as keyword-only, the other parameters every
implementation accepts by keyword. A parameter that every implementation gives a default keeps it
only when the defaults are the same literal; otherwise it is left out (each implementation then uses
its own default). When some implementation requires an argument the others do not take, no safe
signature exists and the finding is not fixed (Unfixable). linter/app/fix.py places the method in the
file and writes it.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..findings import Finding
from ..perfile.signature import bound_params
from ..perfile.summary import KEYWORD_ONLY, POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_KEYWORD, VAR_POSITIONAL

if TYPE_CHECKING:
    from ..perfile.sources import SourceCache

_SAFE_ANNOTATION_NAMES = {"bool", "int", "float", "str", "bytes", "None", "object", "complex"}
_BUILTIN_NAMES = set(dir(builtins)) | {"None"}


class Unfixable(Exception):
    """Why one finding cannot be fixed safely (one line)."""


@dataclass
class WParam:
    name: str
    kind: int
    default: str | None  # source text of the default, None when required
    annotation: str | None = None



def forwarding_method(ctx, f: Finding, sources: SourceCache, indent: str) -> str:
    """The source of the method that forwards `f.member` to the wrapper's delegates, at `indent`."""
    index, model = ctx.index, ctx.model
    wrapper = model.wrappers.get(f.class_name)
    if wrapper is None:
        raise Unfixable(f"`{f.class_name}` is no longer a wrapper")
    member = f.member
    if not member.isidentifier():
        raise Unfixable(f"`{member}` is not an identifier")
    impls = []  # (owner qual, FunctionInfo)
    seen = set()
    for owner in f.targets:
        found = index.method(owner, member)
        if found is None:
            raise Unfixable(f"`{owner}` defines `{member}` as an attribute, not a method")
        if found.owner in seen:
            continue
        seen.add(found.owner)
        if found.fn.kind == "property":
            raise Unfixable(f"`{found.owner}.{member}` is a property")
        impls.append(found)
    if not impls:
        raise Unfixable("no implementation defines it as a method")
    asyncs = {fn.is_async for _, fn in impls}
    if len(asyncs) > 1:
        raise Unfixable(f"some implementations of `{member}` are async and some are not")
    is_async = asyncs.pop()

    delegates = []
    for d in wrapper.delegates:
        reach = model.implementations(d.types, exclude=f.class_name, exact=d.exact)
        if any(index.lookup(i, member) is not None for i in reach):
            delegates.append(d)
    if not delegates:
        raise Unfixable("no delegate attribute reaches an implementation of it")
    # A list of delegates usually holds the single ones too (`self.backends = [full, linear]`):
    # forward through the single attributes when any reaches the hook, so no delegate runs it twice.
    singles = [d for d in delegates if not d.sequence]
    if singles:
        delegates = singles

    wrapper_entry = index.classes[f.class_name]
    params = _merge_signatures(index, impls, member, sources, wrapper_entry.module)
    bound = sources.runtime_names(wrapper_entry.file.path)
    params = [p if not p.annotation or bound is None or _names_of(p.annotation) <= bound | _BUILTIN_NAMES
              else dataclasses.replace(p, annotation=_quoted(p.annotation)) for p in params]
    return _method_source(member, params, _similar_delegates(model, f.class_name, member, delegates),
                          is_async, indent)


def _names_of(annotation: str) -> set[str]:
    return {_root(n) for n in ast.walk(ast.parse(annotation, mode="eval"))
            if isinstance(n, (ast.Name, ast.Attribute))} - {None}


def _quoted(annotation: str) -> str:
    """A string annotation: never evaluated when the `def` runs (a name imported only under
    `if TYPE_CHECKING:` would raise NameError at import)."""
    return repr(annotation)


def _similar_delegates(model, wq: str, member: str, delegates: list) -> list:
    """The delegates the wrapper forwards its most similar members to (by shared name words:
    `init_mha_chunk_metadata` is like `init_forward_metadata`), when that is a strict subset: a
    prefill/decode split forwards a prefill hook to its prefill delegate only, as a maintainer writes."""
    if len(delegates) < 2:
        return delegates
    words = set(member.split("_")) - {""}
    forwarded = {d.attr: model.forwarded_to(wq, d.attr).keys() for d in delegates}
    scores = {other: len(words & set(other.split("_"))) for members in forwarded.values() for other in members
              if other != member}
    best = max(scores.values(), default=0)
    if not best:
        return delegates
    closest = {other for other, score in scores.items() if score == best}
    chosen = {attr for attr, members in forwarded.items() if closest & members}
    return [d for d in delegates if d.attr in chosen] if len(chosen) < len(delegates) else delegates


def _merge_signatures(index, impls, member: str, sources, wrapper_module: str) -> list[WParam]:
    sigs = []
    for owner, fn in impls:
        defaults, annotations = sources.defaults(index.classes[owner].file.path, fn)
        mod = index.classes[owner].module
        sigs.append((owner, [(p, defaults.get(p.name), annotations.get(p.name), mod) for p in bound_params(fn)]))

    def positional(sig):
        return [x for x in sig if x[0].kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]

    pos = [positional(s) for _, s in sigs]
    out: list[WParam] = []
    i = 0
    while all(len(p) > i for p in pos) and len({p[i][0].name for p in pos}) == 1:
        column = [p[i] for p in pos]
        kind = POSITIONAL_ONLY if any(x[0].kind == POSITIONAL_ONLY for x in column) else POSITIONAL_OR_KEYWORD
        default = _common_default(column)
        if default is _DROP:
            break  # differing defaults: leave it (and what follows) to each implementation
        out.append(WParam(column[0][0].name, kind, default, _common_annotation(column, index, wrapper_module)))
        i += 1
    taken = {w.name for w in out}

    # Keyword arguments every implementation accepts by name (outside the shared positional prefix).
    def by_keyword(sig, start):
        rest = positional(sig)[start:] + [x for x in sig if x[0].kind == KEYWORD_ONLY]
        return {x[0].name: x for x in rest if x[0].kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}

    kw_maps = [by_keyword(s, i) for _, s in sigs]
    for name in kw_maps[0]:
        if name in taken or not all(name in m for m in kw_maps):
            continue
        column = [m[name] for m in kw_maps]
        default = _common_default(column)
        if default is _DROP:
            continue
        out.append(WParam(name, KEYWORD_ONLY, default, _common_annotation(column, index, wrapper_module)))
        taken.add(name)

    for star in (VAR_POSITIONAL, VAR_KEYWORD):
        found = [next((x for x in s if x[0].kind == star), None) for _, s in sigs]
        if all(found):
            name = found[0][0].name
            if name in taken:
                raise Unfixable(f"`*{name}` clashes with another parameter name")
            out.append(WParam(name, star, None))
            taken.add(name)

    # Every required argument of every implementation must be passed by the wrapper.
    for owner, sig in sigs:
        for p, _, _, _ in sig:
            if p.kind in (VAR_POSITIONAL, VAR_KEYWORD) or p.has_default:
                continue
            if p.name not in taken:
                raise Unfixable(f"implementations disagree: `{owner.rsplit('.', 1)[-1]}.{member}` requires "
                                f"`{p.name}`, which not every implementation accepts")
    # Python's own rule: no required positional after a defaulted one.
    seen_default = False
    for w in out:
        if w.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD):
            if w.default is not None:
                seen_default = True
            elif seen_default:
                raise Unfixable("the shared positional parameters cannot be ordered validly")
    if "self" in taken:
        raise Unfixable("an implementation has a parameter named `self` after the receiver")
    return out


class _Drop:
    pass


_DROP = _Drop()


def _common_default(column) -> str | None | _Drop:
    """None: required (some implementation requires it); text: the shared literal default."""
    if any(not x[0].has_default for x in column):
        return None
    texts = {x[1] for x in column}
    if len(texts) != 1:
        return _DROP
    text = texts.pop()
    if text is None:
        return _DROP
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _DROP  # a name may not exist in the wrapper's module
    return text


def _common_annotation(column, index, wrapper_module: str) -> str | None:
    """The implementations' shared annotation, when every name in it means the same in the wrapper's
    module (a builtin, or bound to the same class, module or import there); else None."""
    texts = {x[2] for x in column}
    if len(texts) != 1:
        return None
    text = texts.pop()
    if not text:
        return None
    try:
        node = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    for n in ast.walk(node):
        if isinstance(n, (ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            return None  # a forward reference: its names are not checked here
    roots = {_root(n) for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))} - {None}
    for name in roots:
        if name in _SAFE_ANNOTATION_NAMES:
            continue
        if not all(_same_binding(index, wrapper_module, x[3], name) for x in column):
            return None
    return text


def _root(node) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _same_binding(index, mod_a: str, mod_b: str, name: str) -> bool:
    try:
        a, b = index.resolve_name(mod_a, name), index.resolve_name(mod_b, name)
    except Exception:  # a resolver hiccup only costs the annotation
        a = b = None
    if a is not None and a == b:
        return True
    ma, mb = index.modules.get(mod_a), index.modules.get(mod_b)
    if ma is None or mb is None:
        return False
    ia = [(i.module, i.name) for i in ma.summary.imports if i.local == name and i.level == 0]
    ib = [(i.module, i.name) for i in mb.summary.imports if i.local == name and i.level == 0]
    return bool(ia) and ia == ib


def _method_source(member: str, params: list[WParam], delegates, is_async: bool, indent: str) -> str:
    names = {p.name for p in params}
    hook = _fresh("hook", names)
    item = _fresh("delegate", names | {hook})
    seq_name = _fresh("delegates", names | {hook, item})

    sig = ["self"]
    star_written = False
    for i, p in enumerate(params):
        if p.kind == KEYWORD_ONLY and not star_written:
            sig.append("*")
            star_written = True
        if p.kind == VAR_POSITIONAL:
            sig.append("*" + p.name)
            star_written = True
            continue
        if p.kind == VAR_KEYWORD:
            sig.append("**" + p.name)
            continue
        text = p.name
        if p.annotation:
            text += f": {p.annotation}"
            if p.default is not None:
                text += f" = {p.default}"
        elif p.default is not None:
            text += f"={p.default}"
        sig.append(text)
        if p.kind == POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind != POSITIONAL_ONLY):
            sig.append("/")

    args = []
    for p in params:
        if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD):
            args.append(p.name)
        elif p.kind == VAR_POSITIONAL:
            args.append("*" + p.name)
        elif p.kind == KEYWORD_ONLY:
            args.append(f"{p.name}={p.name}")
        else:
            args.append("**" + p.name)
    call = f"{'await ' if is_async else ''}{hook}({', '.join(args)})"

    ind = indent
    lines = [f"{'async ' if is_async else ''}def {member}({', '.join(sig)}):",
             f"{ind}# Added by attn-lint --fix (AL001): run the delegates' hook where they define it."]
    single = len(delegates) == 1 and not delegates[0].sequence
    for d in delegates:
        if d.sequence:
            lines += [f"{ind}{seq_name} = self.{d.attr}",
                      f"{ind}for {item} in ({seq_name}.values() if isinstance({seq_name}, dict) else {seq_name}):",
                      f"{ind}{ind}{hook} = getattr({item}, \"{member}\", None)",
                      f"{ind}{ind}if {hook} is not None:",
                      f"{ind}{ind}{ind}{call}"]
        else:
            lines += [f"{ind}{hook} = getattr(self.{d.attr}, \"{member}\", None)",
                      f"{ind}if {hook} is not None:",
                      f"{ind}{ind}{'return ' if single else ''}{call}"]
    if single:
        lines.append(f"{ind}return None")
    return "\n".join(lines) + "\n"


def _fresh(base: str, taken: set[str]) -> str:
    name = base
    n = 0
    while name in taken or name == "self":
        n += 1
        name = f"_{base}{n if n > 1 else ''}"
    return name
