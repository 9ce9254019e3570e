"""A delegate built from its constructor's parameters holds what every builder passes
(linter/model/passed_values.py), on fixtures/passed_class_values: a hybrid cache built from a class its
builder picks (`_pick(kind, default=LatentCache)`, a platform hook returning None in the tree)
never holds the layer-split cache that only another builder makes; one unknown caller keeps the
annotation's every subclass."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest
from conftest import FIXTURES, lint

_CASE = FIXTURES / "passed_class_values"


def _tree(tmp_path, edits: dict[str, tuple[str, str]] | None = None):
    root = tmp_path / "case"
    shutil.copytree(_CASE, root)
    for rel, (old, new) in (edits or {}).items():
        path = root / "kvstore" / "cache" / rel
        text = path.read_text()
        assert old in text, old
        path.write_text(text.replace(old, new))
    return root


def _al001(root):
    result = lint(root)
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member) for f in result.findings if f.code == "AL001")


def _delegate(root):
    from attn_lint.linter.app.engine import analyse

    model = analyse([str(root)], keep_context=True).context.model
    w = model.wrappers["kvstore.cache.pools.HybridCache"]
    (d,) = w.delegates
    return sorted(t.rsplit(".", 1)[-1] for t in d.types), sorted(t.rsplit(".", 1)[-1] for t in d.exact)


def test_the_builders_classes_are_what_the_delegate_holds(tmp_path):
    root = _tree(tmp_path)
    assert _delegate(root) == (["LatentCache", "PlainCache"], ["LatentCache", "PlainCache"])
    assert _al001(root) == []


def test_a_builder_passing_the_subclass_is_followed_too(tmp_path):
    root = _tree(tmp_path, {"builder.py": ("default=LatentCache", "default=SplitLatentCache")})
    assert "SplitLatentCache" in _delegate(root)[0]
    assert _al001(root) == [("HybridCache", "prefetch")]


def test_a_caller_passing_an_unknown_class_keeps_the_wide_answer(tmp_path):
    # A method no code in the tree calls: its callers, and what they pass, are outside the tree.
    root = _tree(tmp_path, {"builder.py": ("    def build_split(self):",
                                           "    def build_other(self, cls):\n"
                                           "        return HybridCache(8, inner_cls=cls)\n\n"
                                           "    def build_split(self):")})
    assert _delegate(root)[1] == []  # nothing held exactly
    assert _al001(root) == [("HybridCache", "prefetch")]


def test_a_builder_method_handed_on_as_a_value_keeps_the_wide_answer(tmp_path):
    # `table["hybrid"] = self._hybrid`: whoever calls it from the table passes any class.
    root = _tree(tmp_path, {"builder.py": ("    def build_split(self):",
                                           "    def register(self, table):\n"
                                           "        table[\"hybrid\"] = self._hybrid\n\n"
                                           "    def build_split(self):")})
    assert _delegate(root)[1] == []  # nothing held exactly
    assert _al001(root) == [("HybridCache", "prefetch")]


def test_a_splat_that_may_carry_the_parameter_keeps_the_wide_answer(tmp_path):
    root = _tree(tmp_path, {"builder.py": ('        if self.use_latent:\n            extra["page"] = 2\n',
                                           "        extra.update(self.overrides())\n")})
    assert _al001(root) == [("HybridCache", "prefetch")]


def _build_plain(tmp_path, call: str):
    return _tree(tmp_path, {"builder.py": ("    def build_split(self):",
                                           "    def build_plain(self, options):\n"
                                           "        self.log(**options)\n"
                                           f"        return {call}\n\n"
                                           "    def log(self, **fields):\n"
                                           "        print(fields)\n\n"
                                           "    def build_split(self):")})


def test_a_splat_in_another_call_of_the_builder_does_not_reach_the_construction(tmp_path):
    """`HybridCache(8)` takes its parameter's default: an unknown mapping splatted into another
    call of the same function (`self.log(**options)`) cannot carry `inner_cls` to it."""
    root = _build_plain(tmp_path, "HybridCache(8)")
    assert _delegate(root) == (["LatentCache", "PlainCache"], ["LatentCache", "PlainCache"])
    assert _al001(root) == []


def test_a_splat_into_the_construction_itself_keeps_the_wide_answer(tmp_path):
    root = _build_plain(tmp_path, "HybridCache(8, **options)")
    assert _delegate(root)[1] == []
    assert _al001(root) == [("HybridCache", "prefetch")]


def test_a_platform_hook_returning_a_class_in_the_tree_is_followed(tmp_path):
    # The hook's in-tree body returns a class: it is what `_pick` can give, not an unknown.
    root = _tree(tmp_path, {"platform.py": ("        return None",
                                            "        from kvstore.cache.pools import SplitLatentCache\n"
                                            "        return SplitLatentCache")})
    assert _al001(root) == [("HybridCache", "prefetch")]


def _wrap_through_a_function(tmp_path, extra: str = ""):
    root = _tree(tmp_path, {"builder.py": ("    def build_split(self):",
                                           "    def build_other(self):\n"
                                           "        return wrap(LatentCache)\n\n"
                                           "    def build_split(self):")})
    with open(root / "kvstore" / "cache" / "builder.py", "a") as fh:
        fh.write("\n\ndef wrap(cls):\n    return HybridCache(8, inner_cls=cls)\n" + extra)
    return root


def test_a_plain_functions_parameter_is_what_its_calls_pass(tmp_path):
    """A module-level function's calls are found by its name: `wrap(LatentCache)` is
    the only one, so `wrap`'s `cls` is LatentCache, built exactly."""
    root = _wrap_through_a_function(tmp_path)
    assert _delegate(root) == (["LatentCache", "PlainCache"], ["LatentCache", "PlainCache"])
    assert _al001(root) == []


def test_a_plain_function_used_as_a_value_keeps_the_wide_answer(tmp_path):
    # Handed on as a value, the function may be called where the tree does not show.
    root = _wrap_through_a_function(tmp_path, "\n\nHOOKS = [wrap]\n")
    assert _delegate(root)[1] == []
    assert _al001(root) == [("HybridCache", "prefetch")]


def test_a_function_read_again_from_its_text_keeps_the_files_positions(tmp_path, monkeypatch):
    """passed_values re-reads a caller's text to find a call by (line, col): every node of the
    re-read function must sit where it is in the file, for a method (parsed inside a block), a
    decorated async method and a module-level function, straight from the parse (no second walk
    moving the nodes)."""
    import ast

    from attn_lint.linter.app.engine import analyse
    from attn_lint.linter.model.facts import Scope
    from attn_lint.linter.model.function_text import FunctionText

    src = ("import functools\n\n\nclass Box:\n    def fill(self, k):\n        x = 1\n"
           "        return make(k, size=x)\n\n    @functools.cache\n    async def later(self):\n"
           "        await go(\n            1)\n\n\ndef top(a):\n    return make(a)\n")
    (tmp_path / "m.py").write_text(src)
    ctx = analyse([str(tmp_path)], keep_context=True).context
    # Facts of its own, so that nothing the run read is reused: every function is read here.
    text = FunctionText(ctx.index, {"m": SimpleNamespace(derived={})})
    monkeypatch.setattr(ast, "increment_lineno", lambda *a: pytest.fail("the re-read nodes were moved"))
    summary = ctx.index.modules["m"].summary
    wanted = {n.lineno: (n.col_offset, n.end_lineno) for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call)}
    for cls, fn in (("m.Box", summary.classes["Box"].methods["fill"]),
                    ("m.Box", summary.classes["Box"].methods["later"]), (None, summary.functions["top"])):
        info, node = text.source(Scope("m", cls, fn))
        assert (node.lineno, info.line, info.end_line) == (fn.line, fn.line, fn.end_line)
        calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
        assert calls and all(wanted[c.lineno] == (c.col_offset, c.end_lineno) for c in calls)
        assert all(text.call_node(Scope("m", cls, fn), c.lineno, c.col_offset) is not None for c in calls)
