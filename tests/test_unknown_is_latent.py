"""Unknown is not "every subclass".

Two ways the analysis used to read a delegate it could not see as "any subclass of the base":

* an inherited classmethod factory (`Euler.from_config(cfg)`, written on a base as
  `return cls(**cfg)`) was typed as the class defining it, so the object it builds could be
  every subclass of that base; `cls` is the class it is called on;
* a constructor option with a default that no call in the tree passes (`helper: Scheduler =
  None`) was every subclass of its annotation; what it holds is chosen outside the tree, so the
  pairings it gives are latent (`unpassed-option`), never the default report.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import rename_tree

_SCHEDULERS = """
class ConfigMixin:
    @classmethod
    def from_config(cls, config, **kwargs):
        return cls(**config)


class Scheduler(ConfigMixin):
    order = 1

    def set_timesteps(self, n):
        self.timesteps = list(range(n))


class EulerScheduler(Scheduler):
    def step(self, out, t, sample):
        return sample


class RepaintScheduler(Scheduler):
    def step(self, out, t, sample, mask):
        return sample * mask


class Solver(Scheduler):
    def __init__(self, order: int = 2, helper: Scheduler = None):
        self.order = order
        self.helper = helper

    def step(self, out, t, sample):
        if self.helper:
            return self.helper.step(out, t, sample)
        return sample
"""


def _pipeline(build: str) -> str:
    return f"""
from serving.schedulers import EulerScheduler, RepaintScheduler


class Pipeline:
    def __init__(self, config):
        self.scheduler = {build}

    def run(self, out, t, sample):
        if hasattr(self.scheduler, "step"):
            return self.scheduler.step(out, t, sample)
        return sample
"""


def _tree(tmp_path, pipeline: str = "", extra: str = ""):
    files = {"serving/__init__.py": "", "serving/schedulers.py": _SCHEDULERS + extra}
    if pipeline:
        files["serving/pipeline.py"] = pipeline
    return write_tree(tmp_path, files)


def _al002(result) -> list[tuple[str, tuple[str, ...]]]:
    assert result.errors == []
    return sorted((f.class_name.rsplit(".", 1)[-1], tuple(t.rsplit(".", 1)[-1] for t in f.targets))
                  for f in result.findings if f.code == "AL002")


def _shown(root):
    result = lint(root, astroid=False)
    shown = [f for f in result.findings if f.confidence != "low"]
    latent = [f for f in result.findings if f.confidence == "low"]
    result.findings = shown
    return _al002(result), sorted(f.class_name.rsplit(".", 1)[-1] for f in latent if f.code == "AL002")


@pytest.mark.parametrize("build", ["EulerScheduler.from_config(config)",
                                   "EulerScheduler().from_config(config)"])
def test_an_inherited_classmethod_factory_builds_the_class_it_is_called_on(tmp_path, build):
    """INVALID before: `from_config` returned `ConfigMixin`, so `Repaint` (which needs a mask)
    was a scheduler the pipeline could hold."""
    root = _tree(tmp_path, _pipeline(build))
    assert [w for w, _ in _shown(root)[0] if w == "Pipeline"] == []


def test_the_class_a_classmethod_factory_builds_is_still_checked(tmp_path):
    """Called on the base, the factory builds any scheduler: Repaint among them."""
    root = _tree(tmp_path, _pipeline("Scheduler.from_config(config)").replace("import ", "import Scheduler, "))
    assert [f for f in _shown(root)[0] if f[0] == "Pipeline"] == [("Pipeline", ("RepaintScheduler",))]


def test_an_option_nothing_passes_is_latent_not_every_subclass(tmp_path):
    """INVALID before: `helper` was every `Scheduler` subclass, Repaint among them, in the
    default report; nothing in the tree hands `Solver` a helper."""
    root = _tree(tmp_path, extra="\n\ndef build():\n    return Solver(3)\n")
    assert _shown(root) == ([], ["Solver"])


@pytest.mark.parametrize("build", ["Solver(helper=RepaintScheduler())", "Solver(2, RepaintScheduler())",
                                   "Solver(**options)", "make(helper=RepaintScheduler())",
                                   "make(helper=options)"])  # a call the summaries keep no keywords of
def test_an_option_the_tree_passes_is_reported(tmp_path, build):
    """A construction passing the option (by keyword, by position, possibly through `**`, or a
    keyword of that name passed anywhere) keeps the finding in the default report."""
    root = _tree(tmp_path, extra=f"\n\ndef build(options):\n    return {build}\n")
    shown, _ = _shown(root)
    assert [w for w, _ in shown] == ["Solver"]
    assert "RepaintScheduler" in shown[0][1]


def test_the_same_findings_with_every_name_changed(tmp_path):
    src = _tree(tmp_path / "src", _pipeline("EulerScheduler.from_config(config)"),
                extra="\n\ndef build():\n    return Solver(3)\n")
    renamed = tmp_path / "renamed"
    rename_tree(src, renamed)
    shown, latent = _shown(renamed)
    assert shown == [] and len(latent) == 1


def test_a_classmethod_spreading_keywords_may_pass_the_option(tmp_path):
    """`cls(**options)` in the class's own classmethod may pass `helper` (its keywords are not
    read): `unpassed-option` says nothing there, whatever else rules the pairing out."""
    schedulers = _SCHEDULERS.replace(
        "    def step(self, out, t, sample):\n        if self.helper:",
        "    @classmethod\n    def make(cls, **options):\n        return cls(**options)\n\n"
        "    def step(self, out, t, sample):\n        if self.helper:")
    assert "def make(cls" in schedulers
    root = write_tree(tmp_path, {"serving/__init__.py": "", "serving/schedulers.py": schedulers
                                 + "\n\ndef build(opts):\n    return Solver.make(**opts)\n"})
    found = [f for f in lint(root, astroid=False).findings if f.code == "AL002" and f.class_name.endswith(".Solver")]
    assert found
    assert all(r.signal != "unpassed-option" for f in found for r in f.confidence_reasons)
