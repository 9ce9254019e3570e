"""Shared helpers: where the fixtures are, writing small trees, and running the analyser in-process."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# The cache's secret key lives in the user's config folder: tests keep theirs in one folder of the
# session's own (shared by the subprocesses they start), never in the user's.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="attn-lint-test-config-")
atexit.register(shutil.rmtree, os.environ["XDG_CONFIG_HOME"], True)
os.environ.pop("ATTN_LINT_CACHE_KEY", None)

from attn_lint.linter.app.engine import Settings, analyse  # noqa: E402  (after the environment is set)

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write {relative path: source} under root and return root."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    return root


def run_in_pty(args, env: dict, stream: str = "stdout", timeout: float = 120) -> str:
    """`python -m attn_lint ARGS` with stdout (or stderr) on a pseudo-terminal and the other
    stream discarded; what it wrote there, as text (escape sequences kept)."""
    import os
    import pty
    import select
    import subprocess
    import sys
    master, slave = pty.openpty()
    streams = {"stdout": slave, "stderr": subprocess.DEVNULL} if stream == "stdout" else \
        {"stdout": subprocess.DEVNULL, "stderr": slave}
    proc = subprocess.Popen([sys.executable, "-m", "attn_lint", *map(str, args)], env=env, **streams)
    os.close(slave)
    chunks = []
    while select.select([master], [], [], timeout)[0]:
        try:
            data = os.read(master, 65536)
        except OSError:  # the other side closed (Linux reports EIO)
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=timeout)
    os.close(master)
    return b"".join(chunks).decode(errors="replace")


def lint(*paths, **settings):
    """analyse() without the user's cache (unless cache_dir is given) and in one process."""
    settings.setdefault("cache_dir", None)
    settings.setdefault("jobs", 1)
    return analyse([str(p) for p in paths], Settings(**settings))


def pairs(findings, code: str | None = None) -> list[tuple[str, str]]:
    """(class short name, member) per finding, sorted, optionally of one rule."""
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member) for f in findings if code is None or f.code == code)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Never read or write the user's ~/.cache/attn-lint from a test (the CLI's default cache)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
