"""Wrappers nest: a delegate can hold another wrapper, and a wrapper's `__init__` can probe one.

A delegate holds another wrapper only where the tree shows one given to it: a construction passing
it (directly, through a factory's returns, through a parameter of the function that builds the
outer wrapper, or through a local bound to the class). An annotation naming the family's base says
nothing of which wrapper, so the hierarchy alone never makes one wrapper hold another. A wrapper
that only hands a hook on to delegates that never have it does not provide it.

Trees written for these tests: `Mixed` holds a dense backend and a state cache (another family) and
defines `commit_state`; `Phased` is a prefill/decode split of two backends; `Dense` is the leaf.
"""

from __future__ import annotations

from conftest import lint, pairs, write_tree

BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

    def on_ready(self):
        pass


class StateCache:
    def commit(self, steps):
        self.steps = steps


class Dense(Backend):
    max_len = 4096

    def forward(self, batch):
        return batch


class Mixed(Backend):
    """Dense layers and a recurrent state: only this wrapper can commit the state."""

    def __init__(self, dense: Backend, state: StateCache):
        self.dense = dense
        self.state = state
        self.max_len = getattr(dense, "max_len", None)

    def forward(self, batch):
        return self.dense.forward(batch)

    def commit_state(self, steps):
        {commit}

    def on_ready(self):
        self.state.commit(0)


class Phased(Backend):
    """Prefill/decode split."""

    def __init__(self, prefill: Backend, decode: Backend):
        self.prefill = prefill
        self.decode = decode

    def forward(self, batch):
        return self.prefill.forward(batch) if batch else self.decode.forward(batch)
{phased_extra}
'''

USES = '''
from serving.backends import Backend


def verify_step(backend: Backend, steps):
    if hasattr(backend, "commit_state"):
        backend.commit_state(steps)


def warm(backend: Backend):
    backend.on_ready()
'''

COMMITS = "self.state.commit(steps)"


def _lint(tmp_path, builds: str, commit: str = COMMITS, phased_extra: str = ""):
    backends = BACKENDS.replace("{commit}", commit).replace("{phased_extra}", phased_extra)
    root = write_tree(tmp_path, {"serving/__init__.py": "",
                                 "serving/backends.py": backends,
                                 "serving/build.py": "from serving.backends import *\n\n" + builds,
                                 "serving/uses.py": USES})
    return lint(root, select=("AL001", "AL003")).findings  # the rules nesting decides


# -- 2a: a delegate holding another wrapper ---------------------------------------------------

def test_a_construction_passing_a_wrapper_makes_the_outer_one_hide_its_hook(tmp_path):
    findings = _lint(tmp_path, '''
def build():
    return Phased(Mixed(Dense(), StateCache()), Dense())
''')
    assert pairs(findings) == [("Phased", "commit_state")]
    (f,) = findings
    assert f.targets == ("serving.backends.Mixed",)
    notes = " ".join(e.note for e in f.evidence)
    assert "passes Mixed as `prefill`" in notes and "`Mixed` defines `commit_state`" in notes


def test_a_factory_whose_returns_can_give_the_wrapper_counts(tmp_path):
    findings = _lint(tmp_path, '''
def wrap(inner: Backend, hybrid: bool) -> Backend:
    if hybrid:
        return Mixed(inner, StateCache())
    return inner


def build(hybrid):
    return Phased(wrap(Dense(), hybrid), wrap(Dense(), hybrid))
''')
    assert pairs(findings) == [("Phased", "commit_state")]


def test_one_visible_construction_passing_the_wrapper_counts_where_others_cannot_be_read(tmp_path):
    # `Phased(*parts)` hides what it passes: no narrowing, but the other construction shows Mixed.
    findings = _lint(tmp_path, '''
def build(parts):
    return Phased(*parts)


def build_mixed():
    return Phased(Mixed(Dense(), StateCache()), Dense())
''')
    assert pairs(findings) == [("Phased", "commit_state")]


def test_nesting_possible_in_the_hierarchy_but_never_built_is_not_reported(tmp_path):
    # Mixed is a Backend and Phased holds Backends, but no construction puts one inside the other.
    assert _lint(tmp_path, '''
def build():
    return Phased(Dense(), Dense())


def build_mixed():
    return Mixed(Dense(), StateCache())
''') == []


def test_the_annotation_alone_never_makes_a_wrapper_hold_another(tmp_path):
    assert _lint(tmp_path, "") == []


def test_an_inner_wrapper_that_only_hands_the_hook_to_delegates_without_it_provides_nothing(tmp_path):
    # Mixed.commit_state calls commit_state on its dense delegate, which never has it.
    assert _lint(tmp_path, '''
def build():
    return Phased(Mixed(Dense(), StateCache()), Dense())
''', commit="self.dense.commit_state(steps)") == []


def test_forwarding_is_followed_down_more_than_one_wrapper(tmp_path):
    """Mixed hands `commit_state` to its dense delegate, a Relay wrapper, which hands it to Dense,
    which never has it: neither wrapper provides it, so Phased around them hides nothing. Read one
    level deep, Relay's own method would count as providing it."""
    relay = '''
class Relay(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)

    def commit_state(self, steps):
        return self.inner.commit_state(steps)

'''
    def commit_state_findings(root, builds):
        found = _lint(root, relay + builds, commit="self.dense.commit_state(steps)")
        return [p for p in pairs(found) if p[1] == "commit_state"]  # (Relay hides Dense's `max_len` too)

    assert commit_state_findings(tmp_path / "never", '''
def build():
    return Phased(Mixed(Relay(Dense()), StateCache()), Dense())
''') == []
    # A leaf that has it at the bottom makes the whole chain provide it: Phased hides it.
    assert commit_state_findings(tmp_path / "provided", '''
class Deep(Dense):
    def commit_state(self, steps):
        self.steps = steps


def build():
    return Phased(Mixed(Relay(Deep()), StateCache()), Dense())
''') == [("Phased", "commit_state")]


def test_the_outer_wrapper_forwarding_the_hook_is_not_reported(tmp_path):
    assert _lint(tmp_path, '''
def build():
    return Phased(Mixed(Dense(), StateCache()), Dense())
''', phased_extra='''
    def commit_state(self, steps):
        hook = getattr(self.prefill, "commit_state", None)
        if hook is not None:
            hook(steps)
''') == []


def test_al003_keeps_to_leaf_implementations(tmp_path):
    # Phased inherits the no-op `on_ready` that the nested Mixed overrides. AL003 does not pair a
    # wrapper with a nested one (docs/history-corpus.md, gap 2: measured, it added only a pairing
    # the code never runs on sglang 0.5.23); AL001 does.
    findings = _lint(tmp_path, '''
def build():
    return Phased(Mixed(Dense(), StateCache()), Dense())
''')
    assert pairs(findings, "AL003") == []


# -- 2b: a wrapper's __init__ probing a parameter that can be another wrapper -----------------

def test_a_probe_of_an_init_parameter_sees_the_wrapper_a_construction_passes(tmp_path):
    # Mixed.__init__ reads `getattr(dense, "max_len", None)`: for Mixed(Phased(...)) that is
    # Phased, which hides the max_len its delegates have.
    findings = _lint(tmp_path, '''
def build():
    return Mixed(Phased(Dense(), Dense()), StateCache())
''')
    assert pairs(findings) == [("Phased", "max_len")]
    notes = " ".join(e.note for e in findings[0].evidence)
    assert "passes Phased as `dense`" in notes


def test_through_a_parameter_of_the_function_that_builds_the_outer_wrapper(tmp_path):
    findings = _lint(tmp_path, '''
def wrap(runner, inner: Backend):
    return Mixed(inner, StateCache())


def build(runner):
    return wrap(runner, Phased(Dense(), Dense()))
''')
    assert pairs(findings) == [("Phased", "max_len")]


def test_a_parameter_rebound_on_one_path_still_holds_what_it_was_given_on_the_others(tmp_path):
    findings = _lint(tmp_path, '''
def wrap(runner, inner: Backend):
    if runner:
        inner = Dense()
    return Mixed(inner, StateCache())


def build(runner):
    return wrap(runner, Phased(Dense(), Dense()))
''')
    assert pairs(findings) == [("Phased", "max_len")]


def test_through_a_local_bound_to_the_wrapper_class(tmp_path):
    findings = _lint(tmp_path, '''
def wrap(runner, inner: Backend):
    cls = Mixed
    return cls(inner, StateCache())


def build(runner):
    return wrap(runner, Phased(Dense(), Dense()))
''')
    assert pairs(findings) == [("Phased", "max_len")]


def test_a_parameter_no_construction_gives_a_wrapper_stays_internal(tmp_path):
    # Phased is built, but never handed to Mixed: the probe in Mixed.__init__ sees a Dense.
    assert _lint(tmp_path, '''
def build():
    return Mixed(Dense(), StateCache())


def build_phased():
    return Phased(Dense(), Dense())
''') == []


def test_the_inner_wrapper_forwarding_the_probed_member_is_not_reported(tmp_path):
    assert _lint(tmp_path, '''
def build():
    return Mixed(Phased(Dense(), Dense()), StateCache())
''', phased_extra='''
    @property
    def max_len(self):
        return self.prefill.max_len
''') == []
