"""bind_error against the interpreter.

Signatures and calls are enumerated deterministically (no extra test dependency). For every
signature the function is built for real with exec; every call is made for real. The verdict must
agree with `inspect.Signature.bind` and with the interpreter, and for calls without `*args` /
`**kwargs` the message must be CPython's TypeError text, character for character. Parameters come
from `summarise_source` (the analyser's own parser) and `bound_params`, so the whole path a rule
takes is covered.
"""

from __future__ import annotations

import inspect
import itertools
import sys

import pytest

from attn_lint.linter.perfile.signature import CallShape, bind_error, bound_params
from attn_lint.linter.perfile.summary import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Param,
    summarise_source,
)

pytestmark = pytest.mark.skipif(sys.version_info < (3, 10), reason="message texts are CPython 3.10+")

KEYWORD_POOL = ("a", "b", "c", "d", "e", "args", "zz")


def _signatures():
    """Parameter lists (without self) as source text, over the shapes that matter to binding."""
    posonly_opts = [(), ("a",), ("a", "b=0"), ("a", "b")]
    normal_opts = [(), ("c",), ("c=0",), ("c", "d=0"), ("c=0", "d=0")]
    star_opts = [None, "*args"]
    kwonly_opts = [(), ("e",), ("e=0",)]
    kw_opts = [None, "**kw"]
    out = []
    for po, no, st, ko, kw in itertools.product(posonly_opts, normal_opts, star_opts, kwonly_opts, kw_opts):
        # A default may not be followed by a parameter without one.
        positional = list(po) + list(no)
        seen_default = False
        ok = True
        for p in positional:
            if "=" in p:
                seen_default = True
            elif seen_default:
                ok = False
        if not ok:
            continue
        parts = list(po)
        if po:
            parts.append("/")
        parts += list(no)
        if st:
            parts.append(st)
        elif ko:
            parts.append("*")
        parts += list(ko)
        if kw:
            parts.append(kw)
        out.append(", ".join(parts))
    return out


SIGNATURES = _signatures()


def _calls():
    out = []
    for n in range(5):
        for k in range(3):
            for kws in itertools.combinations(KEYWORD_POOL, k):
                out.append((n, kws))
    return out


CALLS = _calls()



def _build(params_src: str, kind: str):
    """Returns (callable as the caller sees it, params as bind_error sees them, qualname, implicit)."""
    if kind == "method":
        src = f"class C:\n    def f(self{', ' if params_src else ''}{params_src}):\n        pass\n"
    elif kind == "staticmethod":
        src = f"class C:\n    @staticmethod\n    def f({params_src}):\n        pass\n"
    elif kind == "classmethod":
        src = f"class C:\n    @classmethod\n    def f(cls{', ' if params_src else ''}{params_src}):\n        pass\n"
    else:
        src = f"def f({params_src}):\n    pass\n"
    namespace: dict = {}
    exec(compile(src, "<generated>", "exec"), namespace)
    summary = summarise_source(src)
    if kind == "function":
        fn = summary.functions["f"]
        return namespace["f"], fn.params, "f", 0
    fn = summary.classes["C"].methods["f"]
    target = namespace["C"]().f
    return target, bound_params(fn), "C.f", 0 if kind == "staticmethod" else 1


def _real_error(target, n: int, kws: tuple[str, ...]) -> str | None:
    try:
        target(*range(n), **dict.fromkeys(kws, 0))
    except TypeError as exc:
        return str(exc)
    return None


def _inspect_ok(target, n: int, kws: tuple[str, ...]) -> bool:
    try:
        inspect.signature(target).bind(*range(n), **dict.fromkeys(kws, 0))
    except TypeError:
        return False
    return True


@pytest.mark.parametrize("kind", ["method", "staticmethod", "classmethod", "function"])
def test_summary_params_match_inspect(kind):
    """The parser's parameter kinds, names and defaults are inspect's, self/cls removed for methods."""
    kinds = {inspect.Parameter.POSITIONAL_ONLY: POSITIONAL_ONLY,
             inspect.Parameter.POSITIONAL_OR_KEYWORD: POSITIONAL_OR_KEYWORD,
             inspect.Parameter.VAR_POSITIONAL: VAR_POSITIONAL,
             inspect.Parameter.KEYWORD_ONLY: KEYWORD_ONLY,
             inspect.Parameter.VAR_KEYWORD: VAR_KEYWORD}
    for params_src in SIGNATURES:
        target, params, _, _ = _build(params_src, kind)
        expected = [(p.name, kinds[p.kind], p.default is not inspect.Parameter.empty)
                    for p in inspect.signature(target).parameters.values()]
        assert [(p.name, p.kind, p.has_default) for p in params] == expected, params_src


def _plain_call_results(kind):
    for params_src in SIGNATURES:
        target, params, qualname, implicit = _build(params_src, kind)
        for n, kws in CALLS:
            got = bind_error(params, CallShape(n, kws), qualname, implicit=implicit)
            yield params_src, n, kws, got, _real_error(target, n, kws), _inspect_ok(target, n, kws)


@pytest.mark.parametrize("kind", ["method", "staticmethod", "classmethod", "function"])
def test_plain_call_verdict_matches_inspect_and_cpython(kind):
    """Calls without *args/**kwargs: an error exactly when inspect and the interpreter reject the call."""
    mismatches = []
    checked = inspect_quirks = 0
    for params_src, n, kws, got, real, inspect_ok in _plain_call_results(kind):
        checked += 1
        if (real is None) != inspect_ok:
            # inspect.Signature.bind (3.11) rejects a positional-only name passed as a keyword even
            # when **kwargs would take it; the interpreter accepts. The interpreter is the truth.
            assert real is None and "**kw" in params_src and "/" in params_src, (params_src, n, kws)
            inspect_quirks += 1
        if (got is None) != (real is None):
            mismatches.append(f"def f({params_src}) called with {n} positional, keywords {kws}: "
                              f"Python says {real!r}, bind_error says {got!r}")
    assert checked > 5000 and inspect_quirks < checked // 20
    assert not mismatches, f"{len(mismatches)} mismatches, e.g.\n" + "\n".join(mismatches[:15])


@pytest.mark.parametrize("kind", ["method", "staticmethod", "classmethod", "function"])
def test_plain_call_message_matches_cpython(kind):
    """Calls without *args/**kwargs: the message is CPython's TypeError text, character for character."""
    mismatches = [f"def f({params_src}) called with {n} positional, keywords {kws}: "
                  f"expected {real!r}, got {got!r}"
                  for params_src, n, kws, got, real, _ in _plain_call_results(kind) if got != real]
    assert not mismatches, f"{len(mismatches)} mismatches, e.g.\n" + "\n".join(mismatches[:15])


# One test per known divergence, so that each flips to XPASS (and fails, being strict) on its fix.
_POS = POSITIONAL_OR_KEYWORD


def test_missing_three_names_uses_cpythons_oxford_comma():
    params = (Param("a", _POS, False), Param("b", _POS, False), Param("c", _POS, False))
    assert bind_error(params, CallShape(0), "C.f") == \
        "C.f() missing 3 required positional arguments: 'a', 'b', and 'c'"


def test_positional_only_as_keyword_beats_a_later_unexpected_keyword():
    params = (Param("a", POSITIONAL_ONLY, False),)
    assert bind_error(params, CallShape(0, ("a", "b")), "C.f") == \
        "C.f() got some positional-only arguments passed as keyword arguments: 'a'"


def test_positional_only_as_keyword_beats_a_later_multiple_values():
    params = (Param("a", POSITIONAL_ONLY, False), Param("c", _POS, False))
    assert bind_error(params, CallShape(2, ("a", "c")), "C.f") == \
        "C.f() got some positional-only arguments passed as keyword arguments: 'a'"


@pytest.mark.parametrize("kind", ["method", "staticmethod", "function"])
def test_star_calls_are_only_flagged_when_provably_wrong(kind):
    """`f(x, *args)` / `f(x, **kw)` of unknown content: an error is reported only if every
    possible content fails, and never claimed for calls that can bind."""
    wrong_claims = []
    for params_src in SIGNATURES:
        target, params, qualname, implicit = _build(params_src, kind)
        for n, kws in CALLS:
            for star, double_star in ((True, False), (False, True), (True, True)):
                got = bind_error(params, CallShape(n, kws, star=star, double_star=double_star), qualname,
                                 implicit=implicit)
                if got is None:
                    continue
                extra_pos = range(4) if star else (0,)
                extra_kw_sets = ([()] + [(k,) for k in KEYWORD_POOL if k not in kws] +
                                 [tuple(k for k in KEYWORD_POOL if k not in kws)]) if double_star else [()]
                for extra in extra_pos:
                    for more in extra_kw_sets:
                        if _real_error(target, n + extra, kws + more) is None:
                            wrong_claims.append(f"def f({params_src}) with {n}+{extra} positional, keywords "
                                                f"{kws}+{more}: binds, but bind_error said {got!r}")
    assert not wrong_claims, f"{len(wrong_claims)} wrong claims, e.g.\n" + "\n".join(wrong_claims[:15])


def test_star_call_too_many_positionals_says_at_least():
    params = (Param("batch", POSITIONAL_OR_KEYWORD, False),)
    msg = bind_error(params, CallShape(2, star=True), "TRTLLMMLABackend.init_mha_chunk_metadata")
    assert msg == ("TRTLLMMLABackend.init_mha_chunk_metadata() takes 2 positional arguments but at least 3 "
                   "were given")


def test_star_call_missing_arguments_is_not_provable():
    params = (Param("a", POSITIONAL_OR_KEYWORD, False), Param("b", POSITIONAL_OR_KEYWORD, False))
    assert bind_error(params, CallShape(0, star=True), "C.f") is None
    assert bind_error(params, CallShape(0, double_star=True), "C.f") is None


def test_seed_case_text():
    """The reviewer's TypeError from the seed, exactly."""
    src = ("class TRTLLMMLABackend:\n"
           "    def init_mha_chunk_metadata(self, forward_batch):\n"
           "        pass\n")
    fn = summarise_source(src).classes["TRTLLMMLABackend"].methods["init_mha_chunk_metadata"]
    msg = bind_error(bound_params(fn), CallShape(2), "TRTLLMMLABackend.init_mha_chunk_metadata")
    ns: dict = {}
    exec(src, ns)
    with pytest.raises(TypeError) as info:
        ns["TRTLLMMLABackend"]().init_mha_chunk_metadata(1, False)
    assert msg == str(info.value) == ("TRTLLMMLABackend.init_mha_chunk_metadata() takes 2 positional "
                                      "arguments but 3 were given")
    assert bind_error(bound_params(fn), CallShape(1), "TRTLLMMLABackend.init_mha_chunk_metadata") is None
