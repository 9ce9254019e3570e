"""The summary codec is driven by one declaration per field of each summary record
(codec.FUNCTION_FIELDS, CLASS_FIELDS, SUMMARY_FIELDS)."""

from __future__ import annotations

import dataclasses

import pytest

from attn_lint.linter.perfile import codec
from attn_lint.linter.perfile.summary import CallSite, FunctionInfo, Param, Probe, summarise_source


@pytest.mark.parametrize("record", list(codec.RECORD_FIELDS), ids=lambda r: r.__name__)
def test_every_field_is_declared_once_in_order(record):
    assert [row[0] for row in codec.RECORD_FIELDS[record]] == [f.name for f in dataclasses.fields(record)]


def test_a_module_round_trips_through_both_decoders():
    src = ("from a import b as c\nimport d.e\n__all__ = ['K']\n\nclass K(c.Base):\n    flag = False\n"
           "    size: int = 3\n\n    def m(self):\n        return self.x.y\n\nclass K2(K):\n    pass\n\n"
           "def f(x):\n    return getattr(x, 'm')\n\nVALUES = {'a': K}\n")
    parsed = codec.Parsed("0" * 40, summarise_source(src, "m.py"), None)
    assert parsed.summary.classes and parsed.summary.imports and parsed.summary.dunder_all
    plain = codec.encode_parsed(parsed)
    assert codec.decode_parsed(plain, "0" * 40) == parsed
    assert codec.decode_own(plain) == parsed
    digest, summary, error = plain
    with pytest.raises(codec.Malformed):  # an unguarded import that is not one of its imports
        codec.decode_parsed((digest, summary[:6] + ((len(summary[1]),),) + summary[7:], error), digest)
    with pytest.raises(codec.Malformed):  # a class attribute that is not (name, line, annotation, value)
        cls = summary[2][0]
        codec.decode_parsed((digest, summary[:2] + ((cls[:7] + ((("flag", 6),),) + cls[8:],),) + summary[3:],
                             error), digest)


def test_a_function_round_trips_through_both_decoders():
    src = ("import abc\n\nclass B(abc.ABC):\n    @abc.abstractmethod\n    def hook(self, x, *, y=None):\n"
           "        raise NotImplementedError\n\n    def run(self, b):\n        if hasattr(b, 'h'):\n"
           "            return self.inner.run(b, k=1)\n        self.flag = False\n        return None\n")
    summary = summarise_source(src, "m.py")
    functions = [f for c in summary.classes.values() for f in c.methods.values()]
    assert len(functions) == 2
    assert any(f.params for f in functions) and any(f.calls for f in functions) and any(f.probes for f in functions)
    for f in functions:
        plain = codec._enc_function(f)
        for decoded in (codec._dec_function(plain), codec._own_function(plain)):
            assert decoded == f
            # Equal is not enough: a plain tuple equals a NamedTuple. Each record is rebuilt as itself.
            assert all(type(p) is Param for p in decoded.params)
            assert all(type(c) is CallSite for c in decoded.calls)
            assert all(type(p) is Probe for p in decoded.probes)


def test_a_malformed_field_is_refused():
    f = FunctionInfo("f", 1, 0, 2, (), (), None, (), True)
    plain = list(codec._enc_function(f))
    plain[1] = "1"  # line: an int, not a string
    with pytest.raises(codec.Malformed):
        codec._dec_function(tuple(plain))
    with pytest.raises(codec.Malformed):
        codec._dec_function(tuple(plain[:-1]))  # one field short
