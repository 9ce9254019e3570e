"""capability-flag: a call made only where a kept flag read off the receiver's class holds."""

from __future__ import annotations

from conftest import lint, write_tree

_BACKENDS = """
class Backend:
    supports_captured: bool = False

    def forward(self, x):
        raise NotImplementedError

    def init_metadata(self, batch):
        pass

    def capture_metadata(self, batch):
        raise NotImplementedError


class GraphBackend(Backend):
    supports_captured: bool = True

    def forward(self, x):
        return x

    def capture_metadata(self, batch):
        return {"batch": batch}


class EagerBackend(Backend):
    def forward(self, x):
        return x


class SplitBackend(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner
        {wrapper_init}

    def forward(self, x):
        return self.inner.forward(x)

    def init_metadata(self, batch):
        self.inner.init_metadata(batch)


def build(graphs: bool) -> Backend:
    inner = GraphBackend() if graphs else EagerBackend()
    return SplitBackend(inner)
"""

_RUNNER = """
from pkg.backends import Backend


class Engine:
    backend: Backend


class BaseRunner:
    def __init__(self, engine: Engine):
        self.engine = engine


class GraphRunner(BaseRunner):
    def __init__(self, engine: Engine, breakable: bool):
        super().__init__(engine)
        if breakable:
            self.use_captured = {flag_source}.supports_captured
        else:
            self.use_captured = False
        {runner_extra}

    def capture(self, batch):
        backend = self.engine.backend
        {guard}
        return backend.capture_metadata(batch)
"""

_GUARD = "if not self.use_captured:\n            backend.init_metadata(batch)\n            return None"


def _finding(tmp_path, guard: str = _GUARD, flag_source: str = "engine.backend", wrapper_init: str = "",
             runner_extra: str = ""):
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/backends.py": _BACKENDS.replace("{wrapper_init}", wrapper_init or "pass"),
        "pkg/runner.py": _RUNNER.replace("{guard}", guard).replace("{flag_source}", flag_source)
                                .replace("{runner_extra}", runner_extra or "pass"),
    })
    found = [f for f in lint(root).findings if f.code == "AL003" and f.member == "capture_metadata"]
    assert len(found) == 1, found
    return found[0]


def test_the_kept_flag_of_the_receiver_rules_the_wrapper_out(tmp_path):
    f = _finding(tmp_path)
    assert f.confidence == "low"
    (why,) = [r for r in f.confidence_reasons if r.signal == "capability-flag"]
    assert why.effect == "lower" and why.path.endswith("runner.py")
    assert "self.use_captured" in why.note and "supports_captured" in why.note and "SplitBackend" in why.note


def test_no_guard_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, guard="pass")
    assert f.confidence == "medium"
    assert not [r for r in f.confidence_reasons if r.signal == "capability-flag"]


def test_a_wrapper_passing_its_delegates_answer_on_keeps_the_pairing(tmp_path):
    # The wrapper says what its delegate says: behind it the capture call does run.
    f = _finding(tmp_path, wrapper_init="self.supports_captured = inner.supports_captured")
    assert f.confidence == "medium"


def test_a_flag_read_off_another_object_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, flag_source="self.engine.other")
    assert f.confidence == "medium"


def test_a_flag_set_true_elsewhere_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, runner_extra="self.force = True\n\n    def enable(self):\n        self.use_captured = True")
    assert f.confidence == "medium"


def test_a_flag_updated_in_place_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, runner_extra="self.force = True\n\n    def enable(self, on):\n        self.use_captured |= on")
    assert f.confidence == "medium"


def test_a_wrapper_setting_the_capability_by_setattr_keeps_the_pairing(tmp_path):
    f = _finding(tmp_path, wrapper_init='setattr(self, "supports_captured", True)')
    assert f.confidence == "medium"


def _capture_for(tmp_path, method: str) -> list:
    """The AL003 findings on `capture_metadata` once the runner has one more method."""
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/backends.py": _BACKENDS.replace("{wrapper_init}", "pass"),
        "pkg/runner.py": _RUNNER.replace("{guard}", _GUARD).replace("{flag_source}", "engine.backend")
                                .replace("{runner_extra}", "pass") + method,
    })
    return [f for f in lint(root).findings if f.code == "AL003" and f.member == "capture_metadata"]


def test_a_class_method_testing_its_class_keeps_the_pairing(tmp_path):
    # `cls.use_captured` is the class's attribute, not the flag an instance kept: the method's
    # own site stays live (the guarded `capture` alone would be ruled out).
    found = _capture_for(tmp_path, '''

    @classmethod
    def capture_for(cls, batch):
        backend = cls.engine.backend
        if not cls.use_captured:
            return None
        return backend.capture_metadata(batch)
''')
    assert len(found) == 1 and found[0].confidence == "medium", found


def test_a_static_method_testing_its_first_parameter_keeps_the_pairing(tmp_path):
    # `runner.use_captured` of a runner handed in, not an instance the class kept the flag on:
    # the method's own site stays live (the guarded `capture` alone would be ruled out).
    found = _capture_for(tmp_path, '''

    @staticmethod
    def capture_for(runner: "GraphRunner", batch):
        backend = runner.engine.backend
        if not runner.use_captured:
            return None
        return backend.capture_metadata(batch)
''')
    assert len(found) == 1 and found[0].confidence == "medium", found
