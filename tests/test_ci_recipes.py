"""The CI recipes of docs/ci.md, as written: each file under docs/ci/ is parsed, and the attn-lint
commands it runs are executed in a repository laid out as the recipe expects (an `origin` with the
base branch, a change on top). The first tests take the attn-lint on PATH; the last ones run the
install steps too, as written, with this checkout's commit in place of the placeholder URL and SHA
(network: the install fetches the dependencies), in a `--depth 1 --branch` clone, with the fetch
line the docs and the error message give, and the remote pre-commit hook pinned to a commit."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

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


# --- the install steps as written, a shallow clone, the remote pre-commit hook ---------------------

ROOT = DOCS.parent.parent


def _head_commit() -> str | None:
    """This checkout's commit, where the checkout is a git repository with no uncommitted change to
    what gets installed (an install from git takes the commit, not the work tree)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "linter", "rules", "runtime_check",
                                "attn_lint", "pyproject.toml"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return None if dirty.strip() else head


def _filled(line: str, sha: str) -> str:
    """A recipe line with its placeholders replaced: this checkout's URL and commit."""
    return (line.replace("https://github.com/<org>/attn-lint.git", f"file://localhost{ROOT}")
            .replace("<a full commit SHA>", sha).replace("$ATTN_LINT_REPO", f"file://localhost{ROOT}")
            .replace("$ATTN_LINT_REV", sha))


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh virtual environment with attn-lint installed by the GitHub recipe's own step."""
    sha = _head_commit()
    if sha is None:
        pytest.skip("the checkout has uncommitted changes to the package (or is no git repository): an "
                    "install from git would not be the code under test")
    base = tmp_path_factory.mktemp("venv")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    doc = yaml.safe_load((DOCS / "github-code-scanning.yml").read_text())
    step = next(st["run"] for st in doc["jobs"]["attn-lint"]["steps"] if st.get("run", "").startswith("pip "))
    env = {**_env(base), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("VIRTUAL_ENV", None)
    out = subprocess.run(["bash", "-ec", _filled(step, sha)], env=env, capture_output=True, text=True, timeout=900)
    said = out.stdout + out.stderr
    if out.returncode != 0 and "for attn-lint" not in said and any(
            w in said for w in ("No matching distribution", "Could not find a version", "Network is unreachable",
                                "Temporary failure in name resolution")):
        # (a recipe naming a package no index has, `pip install attn-lint`, fails the test instead)
        pytest.skip("the package index is unreachable: the install step cannot fetch the dependencies")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert (venv / "bin" / "attn-lint").exists()
    return venv, sha


@pytest.mark.network
def test_the_github_install_step_installs_this_commit(installed, tmp_path):
    venv, _ = installed
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import attn_lint; print(attn_lint.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert str(venv) in where  # the installed package, not this checkout
    out = subprocess.run([str(venv / "bin" / "attn-lint"), "--no-cache", "--no-server", str(ROOT / "fixtures")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "Found 4 findings" in out.stdout, out.stdout[-2000:] + out.stderr


def _shallow_clone_of_a_change(work, env, tmp_path):
    """The change (a wrapper hiding a hook) pushed to `origin`, then cloned as CI clones it:
    `--depth 1 --branch change`, without the base branch."""
    _commit(work, env, NEW_WRAPPER)
    _git(work, env, "push", "-q", "origin", "change")
    shallow = tmp_path / "shallow"
    _git(tmp_path, env, "clone", "-q", "--depth", "1", "--branch", "change",
         f"file://{work.parent / 'origin.git'}", str(shallow))
    return shallow


@pytest.mark.network
def test_the_gitlab_job_installed_as_written_in_a_shallow_clone(installed, checkout, tmp_path):
    """GitLab's default clone is shallow: `--depth 1 --branch change`, then the job's own lines,
    the pip line and the fetch line included."""
    venv, sha = installed
    work, env = checkout
    shallow = _shallow_clone_of_a_change(work, env, tmp_path)
    job = yaml.safe_load((DOCS / "gitlab-ci.yml").read_text())["attn-lint"]
    env = {**env, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "SRC": job["variables"]["SRC"],
           "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}"}
    out = _run(shallow, env, "\n".join(_filled(line, sha) for line in job["script"]))
    assert out.returncode == 1 and "OtherHybrid" in out.stdout and "HybridBackend`" not in out.stdout, \
        out.stdout[-2000:] + out.stderr[-2000:]


@pytest.mark.network
def test_the_fetch_line_the_error_gives_makes_the_revision_readable(installed, checkout, tmp_path):
    venv, _ = installed
    work, env = checkout
    shallow = _shallow_clone_of_a_change(work, env, tmp_path)
    env = {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}"}
    missing = _run(shallow, env, "attn-lint --new-since origin/main src")
    assert missing.returncode == 2 and "git fetch --depth=1 origin main:refs/remotes/origin/main" in missing.stderr
    fetch = missing.stderr.split("(", 1)[1].split(")", 1)[0]
    assert _run(shallow, env, fetch).returncode == 0
    out = _run(shallow, env, "attn-lint --new-since origin/main src")
    assert out.returncode == 1 and "OtherHybrid" in out.stdout, out.stdout + out.stderr


@pytest.mark.network
@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="needs pre-commit")
def test_the_remote_hook_pinned_to_a_commit(checkout):
    """docs/usage.md's `.pre-commit-config.yaml`: the hook from the attn-lint repository, `rev:` a
    full commit SHA (no release is tagged yet); pre-commit builds its own environment from it."""
    sha = _head_commit()
    if sha is None:
        pytest.skip("the checkout has uncommitted changes to the package: pre-commit would install its commit")
    work, env = checkout
    usage = (DOCS.parent / "usage.md").read_text()
    block = usage.split("# .pre-commit-config.yaml\n", 1)[1].split("```", 1)[0]
    config = yaml.safe_load(block)
    repo = config["repos"][0]
    assert repo["rev"].startswith("<a full commit SHA")
    repo["repo"], repo["rev"] = f"file://localhost{ROOT}", sha
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git(work, env, "add", "-A")
    out = subprocess.run(["pre-commit", "run", "--all-files"], cwd=work, env=env, capture_output=True, text=True,
                         timeout=900)
    if out.returncode != 0 and "No matching distribution" in out.stdout + out.stderr:
        pytest.skip("the package index is unreachable: pre-commit cannot build the hook's environment")
    assert out.returncode == 0 and "Passed" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
    backends = work / "src" / "serving" / "backends.py"
    backends.write_text(backends.read_text() + NEW_WRAPPER)
    _git(work, env, "add", "-A")
    out = subprocess.run(["pre-commit", "run", "--all-files"], cwd=work, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 1 and "OtherHybrid" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
