"""The per-file pass records which flag tests decide each line (linter/perfile/guards.py), and the codec
keeps them."""

from __future__ import annotations

from attn_lint.linter.perfile.codec import _dec_function, _enc_function
from attn_lint.linter.perfile.guards import OPAQUE, dominating
from attn_lint.linter.perfile.summary import summarise_source

_SRC = '''
class W:
    def __init__(self, use_x, inner=None, n=0):
        self.use_x = use_x
        if inner is not None:
            self.inner = inner
        elif not use_x:
            self.inner = A(n)
        else:
            self.inner = B(n)

    def f(self, items):
        assert self.use_x and self.ready
        inner = self.inner; hasattr(inner, "k")
        for item in items:
            inner.m(item)
        try:
            inner.k()
        except Exception:
            inner.m(0)

    def g(self, n):
        if not self.use_x or n > 1:
            return
        self.inner.m(2)
'''


def _fns():
    s = summarise_source(_SRC)
    return s.classes["W"].methods


def test_branches_asserts_and_early_returns():
    fns = _fns()
    init, f, g = fns["__init__"], fns["f"], fns["g"]
    self_x = ("attr", ("name", "self"), "use_x")
    assert set(dominating(init.guards, 6)) == {(("name", "inner"), True)}
    assert set(dominating(init.guards, 8)) == {(("name", "inner"), False), (("name", "use_x"), False)}
    assert set(dominating(init.guards, 10)) == {(("name", "inner"), False), (("name", "use_x"), True)}
    assert set(dominating(f.guards, 14)) == {(self_x, True), (("attr", ("name", "self"), "ready"), True)}
    assert (OPAQUE, True) in dominating(f.guards, 16)  # a loop body may not run
    assert (OPAQUE, True) in dominating(f.guards, 18)  # a caught try body may not finish
    assert (OPAQUE, True) in dominating(f.guards, 20)  # a handler runs only on failure
    assert (self_x, True) in dominating(g.guards, 25)  # `or` fails as a whole past the early return
    assert init.falsy_defaults == ("inner", "n")


def test_only_guards_over_recorded_lines_are_kept():
    fns = _fns()
    assert [r.attr for r in fns["f"].reads] == ["m", "k", "m"]
    # `g` reads nothing off a probed object: its loop-free body keeps no OPAQUE stretch.
    assert all(guard.test != OPAQUE for guard in fns["g"].guards)


def test_codec_keeps_guards_and_reads():
    for fn in _fns().values():
        assert _dec_function(_enc_function(fn)) == fn
