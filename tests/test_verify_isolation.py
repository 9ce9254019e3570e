"""`--verify` runs the user's code in child processes: a hostile module body cannot take the run down,
hang it, leave processes behind or forge its output.

Each test runs the real CLI in a subprocess (the unchanged code died, hung or printed forged
verdicts with these trees) on a tree with two AL001 findings: `BadWrapper` in a module whose body
misbehaves and `GoodWrapper` in a clean one, whose verdict must stay what it is without the bad module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from conftest import REPO, write_tree

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation needs os.fork")

WRAPPER = '''
from .base import Backend


class {name}(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)
'''

TREE = {
    "pkg/__init__.py": "",
    "pkg/base.py": '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError


class Impl(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch
''',
    "pkg/model.py": '''
from .base import Backend


def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
''',
    "pkg/good.py": WRAPPER.format(name="GoodWrapper"),
}

LIMIT = 4  # --verify-time-limit for these runs


def verify_cli(tmp_path, hostile: str, timeout: float = 60):
    """Run `attn-lint --verify --format json` on TREE with `hostile` at the top of pkg/bad.py."""
    root = write_tree(tmp_path / "src", dict(TREE, **{"pkg/bad.py": hostile + WRAPPER.format(name="BadWrapper")}))
    env = dict(os.environ, PYTHONPATH=str(REPO), ATTN_LINT_TEST_DIR=str(tmp_path))
    env.pop("CI", None)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "check", "--verify", "--no-cache", "--no-server",
                           "--verify-time-limit", str(LIMIT), "--format", "json", str(root / "pkg")],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=str(tmp_path))
    elapsed = time.monotonic() - start
    assert proc.returncode == 1, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    doc = json.loads(proc.stdout)
    by = {f["class"].rsplit(".", 1)[-1]: f["verification"] for f in doc["findings"]}
    assert set(by) == {"BadWrapper", "GoodWrapper"}, by
    good = by["GoodWrapper"]
    # The static fact holds; no code builds GoodWrapper, so the pairing is not shown.
    assert good["verdict"] == "attribute-hidden" and good["load_mode"] == "import", good
    assert "`hasattr(w, 'plan_chunks')` is False on a real `GoodWrapper`" in good["detail"], good
    assert "forged" not in proc.stdout
    return by["BadWrapper"], elapsed


def test_os_exit_at_import_is_that_findings_verdict(tmp_path):
    bad, _ = verify_cli(tmp_path, "import os\nos._exit(0)\n")
    assert bad["verdict"] == "unverifiable", bad
    assert "ended its process with exit status 0" in bad["detail"], bad
    assert bad["facts"]["isolation"] == "exit"


def test_segfault_at_import_is_that_findings_verdict(tmp_path):
    bad, _ = verify_cli(tmp_path, "import ctypes\nctypes.string_at(0)\n")
    assert bad["verdict"] == "unverifiable", bad
    assert "was killed by SIGSEGV" in bad["detail"], bad


def test_a_body_that_ignores_sigalrm_and_loops_is_killed_at_the_time_limit(tmp_path):
    bad, elapsed = verify_cli(tmp_path, "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                        "while True:\n    pass\n", timeout=40)
    assert bad["verdict"] == "unverifiable", bad
    assert f"did not finish within {LIMIT} s" in bad["detail"], bad
    assert bad["facts"]["isolation"] == "timeout"
    assert elapsed < LIMIT + 20


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except FileNotFoundError:
        return False


def test_forked_processes_neither_hang_the_run_nor_outlive_it(tmp_path):
    """One fork sleeps holding every inherited fd (the old run waited on its stdout); another
    carries on with attn-lint's own work (the old run printed its report twice)."""
    hostile = '''import os, time
if os.fork() == 0:
    with open(os.path.join(os.environ["ATTN_LINT_TEST_DIR"], "sleeper.pid"), "w") as fh:
        fh.write(str(os.getpid()))
    time.sleep(300)
os.fork()
'''
    bad, elapsed = verify_cli(tmp_path, hostile, timeout=40)
    assert bad["verdict"] == "attribute-hidden", bad  # the body itself completes in the process that verifies it
    assert elapsed < 30
    pid = int((tmp_path / "sleeper.pid").read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the forked grandchild outlived the run"


def test_patching_attn_lints_own_functions_cannot_forge_verdicts_or_output(tmp_path):
    hostile = '''import sys
for _name, _mod in list(sys.modules.items()):
    if not _name.startswith("attn_lint"):
        continue
    if hasattr(_mod, "verify_al001"):
        def _forged(f, ctx, loader, _O=_mod.Outcome):
            return _O("fact", "forged by the module", "import")
        for _name in ("verify_al001", "verify_al002", "verify_al003"):
            setattr(_mod, _name, _forged)
    if hasattr(_mod, "Verification"):
        _mod.Verification.to_json = lambda self: {"verdict": "pairing-reproduced", "confirmed": True, "load_mode": "import",
                                                  "detail": "forged", "seconds": 0.0}
    if hasattr(_mod, "render"):
        _mod.render = lambda *a, **k: '{"forged": true}'
'''
    bad, _ = verify_cli(tmp_path, hostile)
    assert bad["verdict"] == "unverifiable", bad
    assert "changed attn-lint's own code or data" in bad["detail"], bad
    assert "verify_al001" in bad["detail"] and "Verification" in bad["detail"], bad
    assert bad["facts"]["isolation"] == "tampered"


def test_rewriting_a_rule_object_cannot_forge_its_verdict(tmp_path):
    """The run asks the rule object for its verification pairings: an attribute set on it by the
    user's code is a change to attn-lint's own data, not a verdict."""
    hostile = '''import sys
_rules = sys.modules.get("attn_lint.rules")
if _rules is not None:
    _rules.RULES_BY_CODE["AL001"].verification_pairings = lambda *a: "not run: forged by the module"
'''
    bad, _ = verify_cli(tmp_path, hostile)
    assert bad["verdict"] == "unverifiable", bad
    assert "changed attn-lint's own code or data" in bad["detail"] and "RULES_BY_CODE" in bad["detail"], bad
    assert bad["facts"]["isolation"] == "tampered"
