"""The summary codec is driven by one declaration per FunctionInfo field (codec.FUNCTION_FIELDS)."""

from __future__ import annotations

import dataclasses

import pytest

from attn_lint.linter import codec
from attn_lint.linter.summary import FunctionInfo, summarise_source


def test_every_field_is_declared_once_in_order():
    assert [row[0] for row in codec.FUNCTION_FIELDS] == [f.name for f in dataclasses.fields(FunctionInfo)]


def test_a_function_round_trips_through_both_decoders():
    src = ("import abc\n\nclass B(abc.ABC):\n    @abc.abstractmethod\n    def hook(self, x, *, y=None):\n"
           "        raise NotImplementedError\n\n    def run(self, b):\n        if hasattr(b, 'h'):\n"
           "            return self.inner.run(b, k=1)\n        self.flag = False\n        return None\n")
    summary = summarise_source(src, "m.py")
    functions = [f for c in summary.classes.values() for f in c.methods.values()]
    assert len(functions) == 2
    for f in functions:
        plain = codec._enc_function(f)
        assert codec._dec_function(plain) == f
        assert codec._own_function(plain) == f


def test_a_malformed_field_is_refused():
    f = FunctionInfo("f", 1, 0, 2, (), (), None, (), True)
    plain = list(codec._enc_function(f))
    plain[1] = "1"  # line: an int, not a string
    with pytest.raises(codec.Malformed):
        codec._dec_function(tuple(plain))
    with pytest.raises(codec.Malformed):
        codec._dec_function(tuple(plain[:-1]))  # one field short
