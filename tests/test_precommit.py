"""The pre-commit hook, for real: a hook repository made from this checkout, a project repository with a
small serving code base, `git commit` through the installed hook. A commit that introduces drift is
rejected; one that fixes it passes; a commit that touches none of a finding's files passes.

pre-commit installs the hook into its own virtualenv with pip (`language: python`), which needs the
package index (or a warm pip cache) for the dependencies: when that install fails, the test is
skipped with pip's reason.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
PRE_COMMIT = shutil.which("pre-commit")

pytestmark = [
    pytest.mark.network,
    pytest.mark.skipif(PRE_COMMIT is None or shutil.which("git") is None, reason="needs git and pre-commit"),
]

BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError


class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch


class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)
'''

FORWARD = '''
    def plan_chunks(self, batch):
        hook = getattr(self.full_attn_backend, "plan_chunks", None)
        if hook is not None:
            hook(batch)
'''

MODEL = '''
from serving.backends import Backend


def prefill(backend: Backend, batch):
    return backend.forward(batch)
'''

MODEL_PROBING = '''
from serving.backends import Backend


def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
'''


def _git(cwd, *args, env=None, check=True):
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if check and out.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")
    return out


def _hook_repo(dest: pathlib.Path, env) -> str:
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    dest.mkdir()
    for name in ("pyproject.toml", ".pre-commit-hooks.yaml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, dest / name)
    if not (dest / "README.md").exists():
        (dest / "README.md").write_text("# attn-lint\n")
    for name in ("attn_lint", "linter", "rules", "runtime_check"):
        shutil.copytree(REPO / name, dest / name, ignore=ignore)
    _git(dest, "init", "-q", env=env)
    _git(dest, "add", "-A", env=env)
    _git(dest, "commit", "-q", "-m", "hook repo", env=env)
    return _git(dest, "rev-parse", "HEAD", env=env).stdout.strip()


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return _make_project(tmp_path_factory.mktemp("precommit"), "attn-lint")


def _make_project(base: pathlib.Path, hook_id: str):
    env = dict(os.environ)
    env.update({
        "PRE_COMMIT_HOME": str(base / "pre-commit-home"),
        "XDG_CACHE_HOME": str(base / "xdg-cache"),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(base / "home"),
        "NO_COLOR": "1",
    })
    (base / "home").mkdir()
    env.pop("PYTHONPATH", None)
    rev = _hook_repo(base / "hook", env)

    proj = base / "proj"
    (proj / "serving").mkdir(parents=True)
    (proj / "serving" / "__init__.py").write_text("")
    (proj / "serving" / "backends.py").write_text(BACKENDS.lstrip())
    (proj / "serving" / "model.py").write_text(MODEL.lstrip())
    (proj / "serving" / "util.py").write_text("VALUE = 1\n")
    (proj / "pyproject.toml").write_text(textwrap.dedent('''
        [project]
        name = "demo-serving"
        version = "0"

        [tool.attn-lint]
        src = ["serving"]
    '''))
    (proj / ".pre-commit-config.yaml").write_text(textwrap.dedent(f'''
        repos:
          - repo: {base / "hook"}
            rev: {rev}
            hooks:
              - id: {hook_id}
    '''))
    _git(proj, "init", "-q", env=env)
    _git(proj, "add", "-A", env=env)
    _git(proj, "commit", "-q", "-m", "initial: clean", env=env)

    install = subprocess.run([PRE_COMMIT, "install-hooks"], cwd=proj, env=env, capture_output=True, text=True,
                             timeout=600)
    if install.returncode != 0:
        tail = (install.stdout + install.stderr).strip().splitlines()[-6:]
        pytest.skip("pre-commit could not install the hook environment (pip needs the package index "
                    "or a warm cache): " + " | ".join(tail))
    subprocess.run([PRE_COMMIT, "install"], cwd=proj, env=env, check=True, capture_output=True)
    return proj, env


def _commit(proj, env, message, *extra):
    _git(proj, "add", "-A", env=env)
    out = subprocess.run(["git", "commit", "-m", message, *extra], cwd=proj, env=env, capture_output=True,
                         text=True)
    return out.returncode, out.stdout + out.stderr


def _head(proj, env):
    return _git(proj, "rev-parse", "HEAD", env=env).stdout.strip()


def test_commits_through_the_hook(project):
    proj, env = project
    backends = proj / "serving" / "backends.py"
    model = proj / "serving" / "model.py"

    # 1. A change to model.py alone makes the (unchanged) wrapper hide a hook: the finding's evidence
    #    lies in the changed file, so the commit is rejected although backends.py was not touched.
    model.write_text(MODEL_PROBING.lstrip())
    head = _head(proj, env)
    code, out = _commit(proj, env, "probe plan_chunks")
    assert code != 0, out
    assert "AL001" in out and "serving/backends.py" in out and "serving/model.py" in out, out
    assert _head(proj, env) == head

    # 2. Forwarding the hook fixes it: the commit passes.
    backends.write_text(BACKENDS.lstrip() + FORWARD)
    code, out = _commit(proj, env, "probe plan_chunks and forward it")
    assert code == 0, out
    assert "attn-lint" in out and "Passed" in out

    # 3. Removing the forwarding method again is rejected.
    backends.write_text(BACKENDS.lstrip())
    code, out = _commit(proj, env, "drop the forwarding method")
    assert code != 0 and "AL001" in out, out

    # 4. Forced in (as on a tree that already has drift), it does not block commits that touch
    #    none of the finding's files...
    assert _commit(proj, env, "drift, forced", "--no-verify")[0] == 0
    (proj / "serving" / "util.py").write_text("VALUE = 2\n")
    code, out = _commit(proj, env, "unrelated change")
    assert code == 0, out

    # 5. ...nor one that only comments the file holding it: the hook compares with HEAD, which has
    #    the finding already (issue 38: before, any commit touching a finding's file was blocked).
    backends.write_text("# the backends\n" + BACKENDS.lstrip())
    code, out = _commit(proj, env, "comment the backends")
    assert code == 0, out

    # 6. A commit that introduces drift of its own is still rejected.
    backends.write_text("# the backends\n" + BACKENDS.lstrip().replace(
        "    def plan_chunks(self, batch):\n", "    def plan_decode(self, batch):\n        self.decoded = batch\n\n"
        "    def plan_chunks(self, batch):\n"))
    model.write_text(MODEL_PROBING.lstrip().replace("    return backend.forward(batch)\n",
                                                     "    if hasattr(backend, \"plan_decode\"):\n"
                                                     "        backend.plan_decode(batch)\n"
                                                     "    return backend.forward(batch)\n"))
    code, out = _commit(proj, env, "probe plan_decode")
    assert code != 0 and "plan_decode" in out and "plan_chunks" not in out, out  # only the new finding

    # 7. The whole-tree run (no --new-since) still reports every finding.
    out = subprocess.run(["attn-lint", "--no-server", "serving"], cwd=proj, env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "plan_chunks" in out.stdout, out.stdout + out.stderr


def test_the_server_hook_is_found_and_stopped_from_the_users_environment(tmp_path):
    """Issue 12, defect 6: the `attn-lint-server` hook starts a server from pre-commit's own
    virtualenv; `attn-lint server status` and `stop`, run from another environment (this one),
    must find it, and say which project it serves."""
    proj, env = _make_project(tmp_path, "attn-lint-server")
    env.pop("CI", None)  # under CI the hook runs in-process
    user_env = {**env, "PYTHONPATH": str(REPO)}

    def attn_lint(*args):
        return subprocess.run([sys.executable, "-m", "attn_lint", *args], cwd=proj, env=user_env,
                              capture_output=True, text=True, timeout=120)

    try:
        (proj / "serving" / "model.py").write_text(MODEL_PROBING.lstrip())
        code, out = _commit(proj, env, "probe plan_chunks")
        assert code != 0 and "AL001" in out, out
        status = attn_lint("server", "status")
        assert status.returncode == 0, status.stdout + status.stderr
        assert f"for {os.path.realpath(proj)}," in status.stdout, status.stdout
        assert str(tmp_path / "pre-commit-home") in status.stdout  # the hook environment's Python runs it
        assert "stopped" in attn_lint("server", "stop").stdout
        deadline = time.monotonic() + 15
        while attn_lint("server", "status").returncode != 1:
            assert time.monotonic() < deadline, "`server stop` did not stop the hook's server"
            time.sleep(0.2)
    finally:
        attn_lint("server", "stop", "--all")


def test_changed_files_mode_in_process(tmp_path, monkeypatch):
    """The same filter without pre-commit: `attn-lint --changed-files FILES` from the project root."""
    from click.testing import CliRunner

    from attn_lint.linter.app.cli import main

    (tmp_path / "serving").mkdir()
    (tmp_path / "serving" / "__init__.py").write_text("")
    (tmp_path / "serving" / "backends.py").write_text(BACKENDS.lstrip())
    (tmp_path / "serving" / "model.py").write_text(MODEL_PROBING.lstrip())
    (tmp_path / "serving" / "util.py").write_text("VALUE = 1\n")
    (tmp_path / "pyproject.toml").write_text('[tool.attn-lint]\nsrc = ["serving"]\n')
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    r = runner.invoke(main, ["--no-cache", "--changed-files", "--format", "concise", "serving/util.py"])
    assert r.exit_code == 0 and r.stdout == ""
    r = runner.invoke(main, ["--no-cache", "--changed-files", "--format", "concise", "serving/model.py"])
    assert r.exit_code == 1 and r.stdout.startswith("serving/backends.py:")
    r = runner.invoke(main, ["--no-cache", "--changed-files"])
    assert r.exit_code == 0
    # from a subfolder, paths are still shown relative to where attn-lint runs
    monkeypatch.chdir(tmp_path / "serving")
    r = runner.invoke(main, ["--no-cache", "--changed-files", "--format", "concise", "backends.py"])
    assert r.exit_code == 1 and r.stdout.startswith("backends.py:14:1: AL001")


@pytest.mark.skipif(sys.platform == "win32", reason="posix paths")
def test_hook_manifest_is_valid():
    out = subprocess.run([PRE_COMMIT, "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
