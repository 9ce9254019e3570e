"""The project is ready to publish (issue 38): `python -m build` makes an sdist and, from it, a
wheel; the wheel installed alone (no checkout on the path) runs the quick start on the bundled
fixtures and names its console script. Before: no test built the project, and the recipes
installed with `pip install attn-lint`, which no registry has."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.network  # an isolated build fetches setuptools


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("build", reason="the `build` package is not installed (pip install -e '.[test]')")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 and ("Could not find a version" in proc.stdout + proc.stderr
                                 or "No matching distribution" in proc.stdout + proc.stderr):
        pytest.skip("the package index is unreachable: the isolated build cannot fetch setuptools")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "deprecated" not in proc.stdout + proc.stderr, "the build warns: fix pyproject.toml"
    return out


def test_build_makes_an_sdist_and_a_wheel(built):
    names = sorted(p.name for p in built.iterdir())
    assert any(n.endswith(".tar.gz") for n in names) and any(n.endswith(".whl") for n in names), names


def test_the_wheel_alone_runs_the_quick_start(built, tmp_path):
    (wheel,) = built.glob("*.whl")
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run([sys.executable, "-c", "import attn_lint; print(attn_lint.__file__)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(target)), where  # the wheel's code, not the checkout's
    run = subprocess.run([sys.executable, "-m", "attn_lint", "--no-cache", "--no-server", str(ROOT / "fixtures")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "Found 4 findings" in run.stdout, run.stdout[-2000:] + run.stderr
    rule = subprocess.run([sys.executable, "-m", "attn_lint", "rule", "AL002"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert rule.returncode == 0 and "How to fix" in rule.stdout


def test_the_wheel_names_its_console_script(built):
    (wheel,) = built.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        entry = next(n for n in z.namelist() if n.endswith("entry_points.txt"))
        text = z.read(entry).decode()
    assert "attn-lint = attn_lint.entry:main" in text
