"""Bad input never stops the run: each bad file is one entry in `errors`, the rest is analysed.

Every test copies a fixture with a known AL001 finding, adds one kind of bad input, and checks
both the error entry and that the finding still appears. Tests run as root here, so an unreadable
file is also provoked through a broken symlink and a dangling path argument.
"""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import FIXTURES, lint, pairs

GOOD = [("HybridLinearAttnBackend", "init_mha_chunk_metadata")]


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "al001_hidden_hook", root)
    return root


def _check(result, expected_errors):
    assert sorted((e.path, e.kind) for e in result.errors) == sorted(expected_errors)
    assert pairs(result.findings, "AL001") == GOOD, "the rest of the tree is still analysed"
    assert result.stats["errors"] == len(expected_errors)
    for e in result.errors:
        assert e.message and "\n" not in e.message


def test_syntax_error(tree):
    (tree / "serving" / "broken.py").write_text("x = 1\n\ndef prefill(batch:\n    pass\n")
    result = lint(tree)
    _check(result, [("serving/broken.py", "syntax-error")])
    assert result.errors[0].line == 3


def test_non_utf8_file(tree):
    (tree / "serving" / "latin.py").write_bytes(b"name = 'caf\xe9'\n")
    _check(lint(tree), [("serving/latin.py", "decode-error")])


def test_declared_encoding_is_honoured(tree):
    """A latin-1 file that says so is fine Python, not an error."""
    (tree / "serving" / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n")
    (tree / "serving" / "bom.py").write_bytes(b"\xef\xbb\xbfname = 'ok'\n")
    (tree / "serving" / "empty.py").write_bytes(b"")
    _check(lint(tree), [])


def test_binary_file(tree):
    (tree / "serving" / "blob.py").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    _check(lint(tree), [("serving/blob.py", "binary")])


def test_broken_symlink_entry(tree):
    os.symlink(tree / "nowhere.py", tree / "serving" / "dangling.py")
    _check(lint(tree), [("serving/dangling.py", "unreadable")])


def test_self_referencing_symlink_entry(tree):
    os.symlink("selfref.py", tree / "serving" / "selfref.py")
    _check(lint(tree), [("serving/selfref.py", "unreadable")])


def test_dangling_path_argument(tree, tmp_path):
    missing = tmp_path / "no-such-folder"
    result = lint(tree, missing)
    assert [(e.path, e.kind) for e in result.errors] == [(str(missing), "missing-path")]
    assert pairs(result.findings, "AL001") == GOOD


def test_dangling_path_argument_fails_the_command(tree, tmp_path):
    """The rest is analysed and reported, but a mistyped path exits 2, never 0."""
    from click.testing import CliRunner

    from attn_lint.linter.app.cli import main

    r = CliRunner().invoke(main, ["--no-cache", "--format", "json", str(tmp_path / "nope")])
    assert r.exit_code == 2, r.output


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can read a chmod 000 file")
def test_unreadable_file(tree):
    path = tree / "serving" / "secret.py"
    path.write_text("x = 1\n")
    path.chmod(0)
    try:
        _check(lint(tree), [("serving/secret.py", "unreadable")])
    finally:
        path.chmod(0o644)


def test_symlink_loop_directory(tree):
    os.symlink("..", tree / "serving" / "models" / "loop")  # serving/models/loop -> serving
    result = lint(tree)
    _check(result, [("serving/models/loop", "symlink-loop")])
    # nothing was analysed twice
    assert result.stats["files"] == 15


def test_file_over_the_size_limit(tree):
    big = tree / "serving" / "generated_tables.py"
    big.write_text("TABLE = [\n" + "    0,\n" * 20_000 + "]\n")
    assert big.stat().st_size > 100_000
    result = lint(tree, max_file_bytes=100_000)
    _check(result, [("serving/generated_tables.py", "too-large")])
    # the limit is a setting: the default takes the file
    _check(lint(tree), [])


def test_too_deeply_nested_expression(tree):
    (tree / "serving" / "deep.py").write_text("x = " + "+".join(["1"] * 100_000) + "\n")
    _check(lint(tree), [("serving/deep.py", "too-complex")])


def test_everything_at_once_in_parallel(tree):
    """All kinds together, with worker processes (the parallel path starts at a few dozen files)."""
    serving = tree / "serving"
    for i in range(60):
        (serving / f"filler_{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n")
    (serving / "broken.py").write_text("def f(:\n")
    (serving / "latin.py").write_bytes(b"s = '\xff'\n")
    (serving / "blob.py").write_bytes(b"\0\0\0")
    os.symlink(tree / "nowhere.py", serving / "dangling.py")
    os.symlink("..", serving / "models" / "loop")
    (serving / "huge.py").write_text("# " + "x" * 200_000 + "\n")
    result = lint(tree, jobs=2, max_file_bytes=100_000)
    _check(result, [("serving/broken.py", "syntax-error"), ("serving/latin.py", "decode-error"),
                    ("serving/blob.py", "binary"), ("serving/dangling.py", "unreadable"),
                    ("serving/models/loop", "symlink-loop"), ("serving/huge.py", "too-large")])
