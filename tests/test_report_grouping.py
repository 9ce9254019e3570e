"""The text report groups one wrapper's findings (issue 38): one head naming the class and its
hooks, its code shown once, and the evidence lines and help a finding of the group has already
shown not repeated. Before, each finding printed the same frame, the same delegate lines and the
same help again (on sglang 0.5.16, one 22-class list seven times)."""

from __future__ import annotations

import subprocess
import sys

BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError


class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch

    def warm_up(self, batch):
        self.warm = batch


class HybridBackend(Backend):
    def __init__(self, full: Backend):
        self.full = full

    def forward(self, batch):
        return self.full.forward(batch)


def build() -> Backend:
    return HybridBackend(FlashBackend())
'''
MODEL = '''
from serving.backends import Backend


def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    if hasattr(backend, "warm_up"):
        backend.warm_up(batch)
    return backend.forward(batch)
'''


def report(tmp_path, *args):
    (tmp_path / "serving").mkdir()
    (tmp_path / "serving" / "__init__.py").write_text("")
    (tmp_path / "serving" / "backends.py").write_text(BACKENDS)
    (tmp_path / "serving" / "model.py").write_text(MODEL)
    return subprocess.run([sys.executable, "-m", "attn_lint", "--no-cache", "--no-server", *args, "serving"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120).stdout


def test_one_wrapper_one_head_one_frame(tmp_path):
    out = report(tmp_path)
    assert "serving/backends.py:18: `HybridBackend`: 2 findings (plan_chunks, warm_up)" in out
    assert out.count("class HybridBackend(Backend):") == 1  # the frame, once
    assert out.count("AL001 [error]") == 2


def test_lines_and_help_already_shown_are_not_repeated(tmp_path):
    out = report(tmp_path)
    assert out.count("`self.full` holds exactly FlashBackend") == 1
    assert "(2 lines as above)" in out
    assert out.count("help: ") == 1


def test_machine_formats_keep_every_finding_whole(tmp_path):
    concise = report(tmp_path, "--format", "concise")
    assert concise.count("HybridBackend") >= 2 and "findings (" not in concise
