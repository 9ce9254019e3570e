"""The project's own code passes `ruff check` under the rule set pyproject.toml chooses."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> list[str] | None:
    found = shutil.which("ruff")
    if found:
        return [found]
    try:
        import ruff  # noqa: F401  (the wheel ships the binary; `python -m ruff` runs it)
    except ImportError:
        return None
    return [sys.executable, "-m", "ruff"]


def test_ruff_check_is_clean():
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed: pip install -e '.[test]'")
    proc = subprocess.run([*ruff, "check", "--no-cache", str(ROOT)], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
