"""No special-casing of engine names: renaming every class, function, module and package of a tree
gives the same findings, with the same confidences and the same signals behind them.

It runs over whatever signals are registered (linter/signals/), so it grows stronger as they land.
The trees: every fixture, every rule's own examples, and small trees built for the signals to
decide (a delegate built from one implementation only, a wrapper built for one model only, a probe
on one platform only).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURES, lint, write_tree
from rename_tree import naming, rename_path, rename_tree

from attn_lint.linter import signals
from attn_lint.linter.findings import Reason
from attn_lint.linter.model.confidence import Signal
from attn_lint.linter.signals import active_signals
from attn_lint.rules import TREE_RULES

# A wrapper whose delegate is built (through a registry) from one implementation only, while another
# defines the hook the model probes; a second wrapper is built from the implementation that has it.
# A signal that follows where delegates come from lowers the first and keeps (or raises) the second.
DELEGATE_ORIGIN = {
    "serve/__init__.py": "",
    "serve/layers/__init__.py": "",
    "serve/layers/base_backend.py": """
class AttnBackend:
    def forward(self, batch):
        raise NotImplementedError
""",
    "serve/layers/flash_backend.py": """
from serve.layers.base_backend import AttnBackend

class FlashBackend(AttnBackend):
    def forward(self, batch):
        return batch

    def init_chunk_metadata(self, batch):
        self.meta = batch
""",
    "serve/layers/triton_backend.py": """
from serve.layers.base_backend import AttnBackend

class TritonBackend(AttnBackend):
    def forward(self, batch):
        return batch
""",
    "serve/layers/hybrid_backend.py": """
from serve.layers.base_backend import AttnBackend
from serve.layers.triton_backend import TritonBackend

FULL_BACKENDS = {"triton": TritonBackend}


class HybridBackend(AttnBackend):
    def __init__(self, name):
        self.full_backend: AttnBackend = FULL_BACKENDS[name]()

    def forward(self, batch):
        return self.full_backend.forward(batch)


class TwoStageBackend(AttnBackend):
    def __init__(self, inner: AttnBackend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)
""",
    "serve/runner.py": """
from serve.layers.flash_backend import FlashBackend
from serve.layers.hybrid_backend import HybridBackend, TwoStageBackend
from serve.layers.triton_backend import TritonBackend

BACKENDS = {"triton": TritonBackend, "flash": FlashBackend}


def make_hybrid():
    return HybridBackend("triton")


def make_two_stage(name):
    if name == "flash":
        return TwoStageBackend(FlashBackend())
    return TwoStageBackend(BACKENDS[name]())
""",
    "serve/models/__init__.py": "",
    "serve/models/prefill.py": """
from serve.layers.base_backend import AttnBackend


def prefill(backend: AttnBackend, batch):
    if hasattr(backend, "init_chunk_metadata"):
        backend.init_chunk_metadata(batch)
    return backend.forward(batch)
""",
}

# A wrapper built only under one model's configuration test; a probe on one platform only.
MODEL_AND_PLATFORM = {
    "engine/__init__.py": "",
    "engine/platform.py": """
def is_npu():
    return False
""",
    "engine/backends.py": """
class Backend:
    def forward(self, batch):
        raise NotImplementedError


class FastBackend(Backend):
    def forward(self, batch):
        return batch

    def plan(self, batch):
        self.planned = batch


class NpuBackend(Backend):
    def forward(self, batch):
        return batch

    def plan(self, batch):
        self.planned = batch


class SplitBackend(Backend):
    def __init__(self, first: Backend, second: Backend):
        self.first = first
        self.second = second

    def forward(self, batch):
        return self.second.forward(self.first.forward(batch))
""",
    "engine/configs.py": """
class LinearAttnConfig:
    pass


class DenseConfig:
    pass
""",
    "engine/builder.py": """
from engine.backends import FastBackend, SplitBackend
from engine.configs import LinearAttnConfig


def build(hf_config):
    if isinstance(hf_config, LinearAttnConfig):
        return SplitBackend(FastBackend(), FastBackend())
    return FastBackend()
""",
    "engine/dense_model.py": """
from engine.backends import Backend
from engine.platform import is_npu


class DenseModel:
    def __init__(self, backend: Backend):
        self.backend = backend

    def forward(self, batch):
        if is_npu():
            if hasattr(self.backend, "plan"):
                self.backend.plan(batch)
        return self.backend.forward(batch)
""",
}


def _trees(tmp: Path) -> list[tuple[str, Path]]:
    trees = [(f"fixtures/{p.name}", p) for p in sorted(FIXTURES.iterdir()) if p.is_dir()]
    for name, files in (("delegate-origin", DELEGATE_ORIGIN), ("model-and-platform", MODEL_AND_PLATFORM)):
        trees.append((name, write_tree(tmp / name, files)))
    for rule in TREE_RULES:
        for i, example in enumerate(rule.INVALID + rule.VALID):
            trees.append((f"{rule.code}-example-{i}", write_tree(tmp / f"{rule.code}-{i}", example.files)))
    return trees


def _shape(result, root: Path, names: dict[str, str] | None) -> Counter:
    """Each finding as what must survive a renaming, spelled with the renamed names."""
    rn = (lambda s: names.get(s, s)) if names else (lambda s: s)
    dotted = (lambda s: ".".join(rn(p) for p in s.split("."))) if names else (lambda s: s)
    where = {f.display: os.path.relpath(f.path, root) for f in result.files}

    def path(display: str) -> str:
        rel = where.get(display, display)
        return rename_path(rel, names) if names else rel.replace(os.sep, "/")

    def one(f):
        reasons = tuple(sorted(Counter((r.signal, r.effect, path(r.path)) for r in f.confidence_reasons).items()))
        latent = ",".join(sorted(dotted(i) for i in dict(f.details).get("latent_impls", "").split(",") if i))
        return (f.code, path(f.path), dotted(f.class_name), rn(f.member), tuple(sorted(map(dotted, f.targets))),
                f.confidence, reasons, latent)

    return Counter(one(f) for f in result.findings)


def _mismatches(tmp: Path) -> tuple[list[str], int, Counter]:
    """(what differs per tree, findings compared, their confidences)."""
    problems, checked, levels = [], 0, Counter()
    for name, src in _trees(tmp / "orig"):
        names = naming(src)
        dest = tmp / "renamed" / name.replace("/", "_")
        rename_tree(src, dest, names)
        before, after = lint(src), lint(dest)
        assert not after.errors, (name, after.errors)
        expected, got = _shape(before, src, names), _shape(after, dest, None)
        if got != expected:
            problems.append(f"{name}: only before: {expected - got}; only after: {got - expected}")
        checked += sum(expected.values())
        levels.update(f.confidence for f in before.findings)
    return problems, checked, levels


def test_findings_and_confidences_survive_renaming(tmp_path):
    problems, checked, levels = _mismatches(tmp_path)
    assert not problems, "\n".join(problems)
    assert checked >= 10, checked  # the trees do have findings: the comparison is not vacuous
    print(f"\n{checked} findings compared over {len(active_signals())} signals; confidences {dict(levels)}")


class _SmallImpl(Signal):
    """Test-only, structural: rules out an implementation of two methods or fewer."""

    name, doc = "test-small-impl", "test-only"

    def rule_out(self, ctx, p):
        cls = ctx.index.classes[p.impl]
        return Reason(self.name, "lower", cls.file.display, cls.info.line, "small") \
            if len(cls.info.methods) <= 2 else None


class _NameSniffing(Signal):
    """Test-only, what no signal may do: decide by what an engine calls a class."""

    name, doc = "test-name-sniffing", "test-only"

    def rule_out(self, ctx, p):
        cls = ctx.index.classes[p.impl]
        return Reason(self.name, "lower", cls.file.display, cls.info.line, "named") \
            if "Flash" in p.impl else None


def test_structural_signals_survive_renaming(tmp_path, monkeypatch):
    """With a signal that lowers some findings, their confidence survives too."""
    monkeypatch.setattr(signals, "active_signals", lambda: [*active_signals(), _SmallImpl()])
    problems, _, levels = _mismatches(tmp_path)
    assert not problems, "\n".join(problems)
    assert levels["low"] and levels["medium"], levels


def test_a_name_reading_signal_is_caught(tmp_path, monkeypatch):
    monkeypatch.setattr(signals, "active_signals", lambda: [*active_signals(), _NameSniffing()])
    problems, _, _ = _mismatches(tmp_path)
    assert any(p.startswith("delegate-origin:") for p in problems), problems


def test_the_renamer_renames(tmp_path):
    """The renamed tree keeps no defined name but the language's and the platform vocabulary's."""
    src = write_tree(tmp_path / "src", DELEGATE_ORIGIN | MODEL_AND_PLATFORM)
    names = naming(src)
    dest = tmp_path / "dest"
    rename_tree(src, dest, names)
    text = "\n".join(p.read_text() for p in dest.rglob("*.py"))
    paths = {str(p.relative_to(dest)) for p in dest.rglob("*.py")}
    for old in ("HybridBackend", "FlashBackend", "init_chunk_metadata", "LinearAttnConfig", "make_hybrid",
                "serve", "layers", "hybrid_backend"):
        assert old in names and old not in text, old
    assert not any("backend" in p for p in paths), paths
    # kept: the platform vocabulary, dunders, the language's own names
    assert "is_npu" in text and "__init__" in text and "isinstance" in text and "hasattr" in text
    assert f'hasattr(self.backend, \'{names["plan"]}\')' in text


@pytest.mark.parametrize("name", ["is_npu", "forward_cuda", "_is_hip", "get", "__call__", "items"])
def test_kept_names(tmp_path, name):
    src = write_tree(tmp_path, {"pkg/mod.py": f"def {name}():\n    pass\n"})
    assert name not in naming(src)
