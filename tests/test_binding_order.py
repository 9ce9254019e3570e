"""A local's value at a use is the bindings that reach that use.

`backend = Split(backend)` then `backend = Hybrid(backend)` builds `Split` around what `backend`
held before that line, never around the `Hybrid` built after it. Straight-line code keeps the last
binding, both arms of an `if` reach past it, and a loop lets a binding later in its body reach a
use earlier in it (the wide answer stays there). The same for a parameter a builder rebinds: what
its callers give reaches the first wrap, not the later rebindings.

The tree: `Flash` and `Paged` are leaves (`Paged` has the optional hook), `Split` is a wrapper that
hides the hook, `Hybrid` a wrapper that plans the hook itself.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import naming, rename_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.linter.perfile.summary import summarise_source

_BACKENDS = """
class Backend:
    def forward(self, batch):
        raise NotImplementedError


class FlashBackend(Backend):
    def forward(self, batch):
        return batch


class PagedBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch


class SplitBackend(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)


class HybridBackend(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)

    def plan_chunks(self, batch):
        self.planned = batch
"""

_MODEL = """
from serving.backends import Backend


def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
"""

_IMPORTS = "from serving.backends import FlashBackend, HybridBackend, PagedBackend, SplitBackend\n"

# Builders that wrap `{leaf}()` in Split, then the result in Hybrid, each by rebinding one name.
BUILDERS = {
    "straight": """
def build():
    backend = {leaf}()
    backend = SplitBackend(backend)
    backend = HybridBackend(backend)
    return backend
""",
    "branches": """
def build(split: bool):
    backend = {leaf}()
    if split:
        backend = SplitBackend(backend)
    else:
        backend = SplitBackend(inner=backend)
    backend = HybridBackend(backend)
    return backend
""",
    "module-level": """
backend = {leaf}()
backend = SplitBackend(backend)
backend = HybridBackend(backend)
""",
    # A builder method's parameter: its callers give what reaches the first wrap.
    "parameter": """
class Builder:
    def wrap(self, backend):
        backend = SplitBackend(backend)
        backend = HybridBackend(backend)
        return backend


def build():
    return Builder().wrap({leaf}())
""",
    # A local handed to a builder method, which makes the wrapper from its parameter.
    "builder-call": """
class Builder:
    def split(self, inner):
        return SplitBackend(inner)

    def build(self):
        backend = {leaf}()
        backend = self.split(backend)
        backend = HybridBackend(backend)
        return backend
""",
}


def _tree(tmp_path, builder: str, leaf: str):
    return write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py": _BACKENDS,
                                 "serving/model.py": _MODEL,
                                 "serving/build.py": _IMPORTS + builder.replace("{leaf}", leaf)})


def _al001(root) -> list[tuple[str, str, tuple[str, ...]]]:
    result = lint(root, astroid=False)
    assert result.errors == []
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member, tuple(t.rsplit(".", 1)[-1] for t in f.targets))
                  for f in result.findings if f.code == "AL001")


@pytest.mark.parametrize("shape", sorted(BUILDERS))
def test_a_wrapper_does_not_hold_the_wrapper_built_around_it_later(tmp_path, shape):
    """VALID. Split holds Flash, which has no hook to hide; Hybrid plans the hook itself. Before,
    Split held every binding of the name, Hybrid too, and so hid Hybrid's `plan_chunks`."""
    assert _al001(_tree(tmp_path, BUILDERS[shape], "FlashBackend")) == []


@pytest.mark.parametrize("shape", sorted(BUILDERS))
def test_the_drift_the_nesting_does_build_names_only_what_it_holds(tmp_path, shape):
    """INVALID. Split(Paged) hides Paged's hook: reported, against Paged alone (before: against
    Hybrid too, which Split never holds)."""
    assert _al001(_tree(tmp_path, BUILDERS[shape], "PagedBackend")) == [
        ("SplitBackend", "plan_chunks", ("PagedBackend",))]


def test_what_each_wrapper_holds(tmp_path):
    root = _tree(tmp_path, BUILDERS["straight"], "FlashBackend")
    model = analyse([str(root)], Settings(cache_dir=None, jobs=1, astroid=False), keep_context=True).context.model
    held = {q.rsplit(".", 1)[-1]: sorted(t.rsplit(".", 1)[-1] for d in w.delegates for t in d.types)
            for q, w in model.wrappers.items()}
    assert held == {"SplitBackend": ["FlashBackend"], "HybridBackend": ["SplitBackend"]}


def test_a_wrap_in_a_loop_may_hold_what_the_previous_iteration_built(tmp_path):
    """Sound where order cannot decide: the second time round, Split wraps the Hybrid the first
    iteration built, so it hides Hybrid's hook."""
    assert _al001(_tree(tmp_path, """
def build(layers: int):
    backend = FlashBackend()
    for _ in range(layers):
        backend = SplitBackend(backend)
        backend = HybridBackend(backend)
    return backend
""", "FlashBackend")) == [("SplitBackend", "plan_chunks", ("HybridBackend",))]


def test_the_loop_does_not_reach_past_itself(tmp_path):
    """A wrap after the loop is not seen by the wraps in it."""
    assert _al001(_tree(tmp_path, """
def build(layers: int):
    backend = FlashBackend()
    for _ in range(layers):
        backend = SplitBackend(backend)
    backend = HybridBackend(backend)
    return backend
""", "FlashBackend")) == []


def test_a_parameter_rebound_on_one_path_holds_what_it_was_given_and_the_rebinding(tmp_path):
    """Hybrid is given what the builder was given, or Split around it; Split only what it was given."""
    assert _al001(_tree(tmp_path, """
class Builder:
    def wrap(self, backend, hybrid: bool):
        if hybrid:
            backend = HybridBackend(backend)
        return SplitBackend(backend)


def build(hybrid: bool):
    return Builder().wrap(FlashBackend(), hybrid)
""", "FlashBackend")) == [("SplitBackend", "plan_chunks", ("HybridBackend",))]


def test_a_closure_sees_every_binding(tmp_path):
    """A closure runs later, after any binding: the wide answer stays."""
    assert _al001(_tree(tmp_path, """
def build():
    backend = FlashBackend()

    def split():
        return SplitBackend(backend)

    backend = HybridBackend(backend)
    return split
""", "FlashBackend")) == [("SplitBackend", "plan_chunks", ("HybridBackend",))]


def _constructions(source: str) -> dict[str, list]:
    fn = summarise_source(source).functions["build"]
    return {callee[1]: list(args) + [v for _, v in kwargs] for callee, args, kwargs, _ in fn.constructions}


def test_the_summary_binds_each_argument_to_the_bindings_that_reach_it():
    got = _constructions("""
def build(flag, inner, other):
    b = Flash()
    b = Split(b)
    if flag:
        b = Paged()
    c = Hybrid(b)
    inner = Pick(inner)
    x = Flash()
    x = Paged()
    x = x + 1
    return Outer(c, inner, backend=x)
""")
    assert got == {
        "Split": [("call", ("name", "Flash"), 3, 8)],
        "Hybrid": [("union", (("call", ("name", "Split"), 4, 8), ("call", ("name", "Paged"), 6, 12)))],
        # `c` is bound once: as it was; `inner` a parameter rebound: its binding, which reaches;
        # `x`, whose binding that reaches the summary cannot read: unknown, not an earlier one.
        "Pick": [("name", "inner")],
        "Outer": [("name", "c"), ("call", ("name", "Pick"), 8, 12), None],
    }


def test_a_name_a_closure_may_rebind_keeps_every_binding():
    """`nonlocal b` in a nested function: any call of it may rebind `b` before the wrap."""
    got = _constructions("""
def build():
    b = Flash()

    def swap():
        nonlocal b
        b = Paged()

    swap()
    return Split(b)
""")
    assert got == {"Split": [("name", "b")]}


def test_findings_survive_renaming(tmp_path):
    for n, (shape, leaf) in enumerate((s, leaf) for s in sorted(BUILDERS) for leaf in ("FlashBackend", "PagedBackend")):
        src = _tree(tmp_path / f"src{n}", BUILDERS[shape], leaf)
        names = naming(src)
        dest = tmp_path / f"renamed{n}"
        rename_tree(src, dest, names)
        expected = [(names[c], names[m], tuple(names[t] for t in ts)) for c, m, ts in _al001(src)]
        assert _al001(dest) == sorted(expected), shape
