"""The CI recipes of docs/ci.md, as written: each file under docs/ci/ is parsed, and the attn-lint
commands it runs are executed in a repository laid out as the recipe expects (an `origin` with the
base branch, a change on top). The install steps are left out: the attn-lint under test is the one
on PATH."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML (installed with pre-commit) parses the recipes")

from small_trees import TREES  # noqa: E402

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs" / "ci"
pytestmark = pytest.mark.skipif(shutil.which("git") is None or shutil.which("attn-lint") is None,
                                reason="needs git and attn-lint on PATH")

NEW_WRAPPER = '''

class OtherHybrid(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)
'''


def _env(base: pathlib.Path) -> dict:
    env = dict(os.environ)
    env.update({"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(base),
                "XDG_CACHE_HOME": str(base / "cache"), "PRE_COMMIT_HOME": str(base / "pre-commit"),
                "NO_COLOR": "1", "CI": "1"})
    env.pop("PYTHONPATH", None)
    return env


def _git(cwd, env, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)


@pytest.fixture
def checkout(tmp_path):
    """A clone of `origin` (branch main: one finding, already there) on a branch `change`."""
    env = _env(tmp_path)
    seed = tmp_path / "seed"
    for rel, src in TREES["AL001"].items():
        p = seed / "src" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src)
        (p.parent / "__init__.py").touch()
    _git(seed, env, "init", "-q", "-b", "main")
    _git(seed, env, "add", "-A")
    _git(seed, env, "commit", "-qm", "base: one finding already")
    _git(tmp_path, env, "clone", "-q", "--bare", str(seed), "origin.git")
    _git(tmp_path, env, "clone", "-q", str(tmp_path / "origin.git"), "work")
    work = tmp_path / "work"
    _git(work, env, "checkout", "-qb", "change")
    return work, env


def _commands(lines) -> list[str]:
    return [line for line in lines if "attn-lint" in line and not line.lstrip().startswith("pip ")]


def _run(work, env, script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-ec", script], cwd=work, env=env, capture_output=True, text=True, timeout=300)


def _commit(work, env, text: str | None):
    backends = work / "src" / "serving" / "backends.py"
    if text is None:
        (work / "src" / "serving" / "util.py").write_text("VALUE = 1\n")
    else:
        backends.write_text(backends.read_text() + text)
    _git(work, env, "add", "-A")
    _git(work, env, "commit", "-qm", "change")


def test_github_workflow(checkout):
    work, env = checkout
    doc = yaml.safe_load((DOCS / "github-code-scanning.yml").read_text())
    job = doc["jobs"]["attn-lint"]
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif") for s in job["steps"])
    assert next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout"))["with"]["fetch-depth"] == 0
    runs = [s["run"] for s in job["steps"] if "run" in s and _commands([s["run"]])]
    assert len(runs) == 2
    env = {**env, "BASE_REF": "main", "SRC": job["env"]["SRC"]}

    # A change that adds no drift: the SARIF carries the old finding, the gate passes.
    _commit(work, env, None)
    sarif = _run(work, env, runs[0])
    assert sarif.returncode == 0, sarif.stderr
    results = json.loads((work / "attn-lint.sarif").read_text())["runs"][0]["results"]
    assert len(results) == 1 and results[0]["partialFingerprints"]["attnLintIdentity/v1"]
    gate = _run(work, env, runs[1])
    assert gate.returncode == 0, gate.stdout + gate.stderr

    # A change that adds a wrapper hiding the hook: the gate fails on it alone.
    _commit(work, env, NEW_WRAPPER)
    gate = _run(work, env, runs[1])
    assert gate.returncode == 1 and "OtherHybrid" in gate.stdout and "HybridBackend`" not in gate.stdout


def test_gitlab_job(checkout):
    work, env = checkout
    job = yaml.safe_load((DOCS / "gitlab-ci.yml").read_text())["attn-lint"]
    assert job["variables"]["GIT_DEPTH"] == "0"
    script = "\n".join(line for line in job["script"] if not line.startswith("pip "))
    env = {**env, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "SRC": job["variables"]["SRC"]}
    _commit(work, env, None)
    assert _run(work, env, script).returncode == 0
    _commit(work, env, NEW_WRAPPER)
    out = _run(work, env, script)
    assert out.returncode == 1 and "OtherHybrid" in out.stdout
    assert (work / "attn-lint.sarif").exists()


@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="needs pre-commit")
def test_pre_commit_local_hook(checkout):
    work, env = checkout
    shutil.copy(DOCS / "pre-commit-local.yaml", work / ".pre-commit-config.yaml")
    _git(work, env, "add", "-A")
    # The base already has a finding: the hook compares with HEAD, so it blocks nothing...
    out = subprocess.run(["pre-commit", "run", "--all-files"], cwd=work, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and "Passed" in out.stdout, out.stdout + out.stderr
    # ...until a change (staged, about to be committed) adds drift of its own: only that is reported.
    backends = work / "src" / "serving" / "backends.py"
    backends.write_text(backends.read_text() + NEW_WRAPPER)
    _git(work, env, "add", "-A")
    out = subprocess.run(["pre-commit", "run", "--all-files"], cwd=work, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 1 and "OtherHybrid" in out.stdout and "HybridBackend`" not in out.stdout, \
        out.stdout + out.stderr
    out = subprocess.run(["pre-commit", "run", "--files", "src/serving/__init__.py"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "Passed" in out.stdout, out.stdout + out.stderr
