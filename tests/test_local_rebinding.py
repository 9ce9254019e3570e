"""A local bound by `getattr` more than once: a call of it is checked against the bindings that
reach it (CPython pickle.py: `reduce = getattr(self, "reducer_override", None)`, later
`reduce = getattr(obj, "__reduce__", None); reduce()` was checked as a call of `reducer_override`)."""

from __future__ import annotations

from conftest import lint, pairs, write_tree

from attn_lint.linter.perfile.summary import summarise_source

# TrtBackend.plan_chunks binds one argument; FlashBackend's binds two.
_BACKENDS = """
class Backend:
    def forward(self, batch):
        raise NotImplementedError

class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch, disable_ragged: bool = False):
        self.planned = batch

class TrtBackend(FlashBackend):
    def plan_chunks(self, batch):
        self.planned = batch

class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)

    def plan_chunks(self, batch, disable_ragged: bool = False):
"""


def _al002(tmp_path, body: str) -> list[tuple[str, str]]:
    result = lint(write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py": _BACKENDS + body}))
    assert result.errors == []
    return pairs(result.findings, "AL002")


def test_a_rebound_local_is_not_checked_as_its_first_binding(tmp_path):
    """The pickle shape: the second `hook(...)` calls `batch.finish`, not `plan_chunks`."""
    assert _al002(tmp_path, """
        hook = getattr(self.full_attn_backend, "plan_chunks", None)
        if hook is not None:
            hook(batch)
        hook = getattr(batch, "finish", None)
        if hook is not None:
            hook(batch, disable_ragged)
""") == []


def test_a_rebound_local_that_really_mismatches_still_fires(tmp_path):
    assert _al002(tmp_path, """
        hook = getattr(batch, "finish", None)
        if hook is not None:
            hook()
        hook = getattr(self.full_attn_backend, "plan_chunks", None)
        if hook is not None:
            hook(batch, disable_ragged)
""") == [("HybridBackend", "plan_chunks")]


def test_bindings_in_both_branches_reach_the_call(tmp_path):
    assert _al002(tmp_path, """
        if disable_ragged:
            hook = getattr(batch, "finish", None)
        else:
            hook = getattr(self.full_attn_backend, "plan_chunks", None)
        if hook is not None:
            hook(batch, disable_ragged)
""") == [("HybridBackend", "plan_chunks")]


def test_a_binding_later_in_a_loop_reaches_a_call_earlier_in_it(tmp_path):
    assert _al002(tmp_path, """
        hook = getattr(batch, "finish", None)
        for _ in range(2):
            if hook is not None:
                hook(batch, disable_ragged)
            hook = getattr(self.full_attn_backend, "plan_chunks", None)
""") == [("HybridBackend", "plan_chunks")]


def _called(source: str) -> list[tuple[int, tuple]]:
    fn = summarise_source(source).functions["f"]
    return sorted((c.line, c.func) for c in fn.calls)


def _g(recv: str, member: str) -> tuple:
    return ("getattr", ("name", recv), member)


def test_summary_binds_each_call_to_the_bindings_that_reach_it():
    assert _called("""
def f(a, b, c, flag):
    h = getattr(a, "x", None)
    h(1)
    if flag:
        h = getattr(b, "y", None)
    h(2)
    try:
        h = getattr(c, "z", None)
        h(3)
    except KeyError:
        h(4)
    h = len
    h(5)
    if (h := getattr(c, "w", None)) is not None:
        h(6)
""") == [(4, _g("a", "x")), (7, _g("a", "x")), (7, _g("b", "y")), (10, _g("c", "z")),
         (12, _g("a", "x")), (12, _g("b", "y")), (12, _g("c", "z")), (16, _g("c", "w"))]


def test_summary_keeps_every_binding_for_a_call_in_a_closure():
    """A nested function runs later: any binding of the enclosing function may reach it."""
    assert _called("""
def f(a, b):
    h = getattr(a, "x", None)
    def inner():
        h(1)
    h = getattr(b, "y", None)
    return inner
""") == [(5, ("name", "h"))]


def test_summary_applies_a_walrus_where_it_runs():
    """`x if test else y` runs its test first; a comprehension its conditions before its element."""
    assert _called("""
def f(a, b, items):
    h = getattr(a, "x", None)
    h(1) if (h := getattr(b, "y", None)) else None
    [h(i) for i in items if (h := getattr(b, "z", None))]
    [h() for h in items]
""") == [(4, _g("a", "x")), (4, _g("b", "y")), (5, _g("a", "x")), (5, _g("b", "y")), (5, _g("b", "z"))]


def test_a_dict_display_with_double_star_in_the_call(tmp_path):
    """`{**d, "a": 1}` has None among its keys: the reaching pass must not walk into it."""
    from conftest import lint, write_tree

    root = write_tree(tmp_path, {"pkg/m.py": 'def f(b, d):\n    g = getattr(b, "x", None)\n    return g({**d, "a": 1})\n'})
    result = lint(root)
    assert result.errors == [] and [f for f in result.findings if f.code == "AL002"] == []


def test_a_call_before_the_names_first_binding_is_recorded_whole():
    """A plain name's call is recorded only if the name is a local of the function; a loop can
    bind it after the call (the walk decides at the function's end, not where the call is)."""
    summary = summarise_source("""
def f(items, obj):
    for x in items:
        if x:
            hook(x, *[1, 2], key=3, **{"k": 4})
        hook = getattr(obj, "plan", None)
    report(items, size=1)
    return obj.size.total
""")
    calls = summary.functions["f"].calls
    assert [(c.line, c.func, c.n_positional, c.keywords, c.star, c.double_star) for c in calls] == [
        (5, _g("obj", "plan"), 3, ("key", "k"), False, False)]  # `report(...)`: no local, not kept
    assert ("size", "total") in summary.slot_reads  # its keyword still counts as a slot filled
