"""Input built to hurt a tool that reads it: pathological nesting, class chains thousands deep,
FIFOs named like source, file names that are not UTF-8, and terminal escapes in the source.

Each is either analysed correctly or one per-file diagnostic; the rest of the tree is still analysed
(the AL001 fixture's finding still appears), and nothing blocks, crashes or writes raw control
characters to the terminal.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest
from conftest import FIXTURES, lint, pairs

from attn_lint.linter.app.engine import Settings, analyse

GOOD = [("HybridLinearAttnBackend", "init_mha_chunk_metadata")]
FINDING_FILE = "serving/backends/hybrid_linear_attn_backend.py"


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "al001_hidden_hook", root)
    return root


def _errors(result) -> list[tuple[str, str]]:
    return sorted((e.path, e.kind) for e in result.errors)


def _within(seconds: float, fn, *args, **kwargs):
    """fn(...), failing the test (instead of hanging it) when it blocks for longer than `seconds`."""
    outcome: list = []

    def target():
        try:
            outcome.append((True, fn(*args, **kwargs)))
        except Exception as exc:  # raised again in the test's thread
            outcome.append((False, exc))

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert outcome, f"still blocked after {seconds} s"
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def _cli(*args, cwd, env=None):
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "attn_lint", "--no-cache", *args], capture_output=True,
                          cwd=cwd, env=full, timeout=120)


# --- 6. nesting and depth -----------------------------------------------------------------------

def test_parser_stack_overflow_is_one_file_error(tree):
    """`x = ------...`: CPython's parser itself gives up with MemoryError. That file is unparsable;
    the run goes on, in one process and with workers, and the CLI names the file."""
    (tree / "serving" / "minus.py").write_text("x = " + "-" * 6000 + "\n")
    with pytest.raises(MemoryError):
        compile((tree / "serving" / "minus.py").read_text(), "minus.py", "exec")
    for jobs in (1, 2):
        result = lint(tree, jobs=jobs)
        assert _errors(result) == [("serving/minus.py", "too-complex")]
        assert "nested too deeply" in result.errors[0].message
        assert pairs(result.findings, "AL001") == GOOD
    for i in range(60):  # enough files for the worker pool
        (tree / "serving" / f"filler_{i}.py").write_text(f"def f{i}(x):\n    return x\n")
    assert _errors(lint(tree, jobs=2)) == [("serving/minus.py", "too-complex")]
    proc = _cli("--format", "concise", ".", cwd=tree)
    out = proc.stdout.decode()
    assert "internal error" not in proc.stderr.decode()
    assert "serving/minus.py:1:1: too-complex" in out and "AL001" in out
    assert proc.returncode == 1  # the finding; a file that cannot be parsed changes nothing


def _deep_module() -> str:
    """Valid code nested far deeper than a recursive walk's default limit allows (CPython compiles
    all of it), around a class whose method the summary must keep."""
    chain = "+".join(["a"] * 2_500)
    elifs = "".join(f"        elif x == {i}:\n            return self.backend.step{i}(x)\n" for i in range(1, 900))
    return ("class DeepHelper:\n"
            "    def run(self, a, x):\n"
            f"        y = self.backend.combine({chain})\n"
            "        if x == 0:\n            return y\n" + elifs +
            f"TOP = a{'.b' * 1_500}\n"
            "if FLAG == 0:\n    pass\n" + "".join(f"elif FLAG == {i}:\n    pass\n" for i in range(1, 1_200)) +
            "class AfterTheChain:\n    pass\n")


def test_valid_deep_code_is_analysed(tree):
    source = _deep_module()
    compile(source, "deep.py", "exec")  # valid Python, as deep as CPython takes it
    (tree / "serving" / "deep.py").write_text(source)
    result = analyse([str(tree)], Settings(cache_dir=None, jobs=1), keep_context=True)
    assert result.errors == []
    assert pairs(result.findings, "AL001") == GOOD
    summary = result.context.index.modules["serving.deep"].summary
    assert set(summary.classes) == {"DeepHelper", "AfterTheChain"}
    calls = {c.func[2] for c in summary.classes["DeepHelper"].methods["run"].calls if c.func[0] == "attr"}
    assert {"combine", "step1", "step899"} <= calls


def _chain(n: int, deepest_first: bool) -> str:
    order = range(n - 1, -1, -1) if deepest_first else range(n)
    return "".join(f"class C{i}{f'(C{i - 1})' if i else ''}:\n    def forward(self, x):\n        return x\n"
                   for i in order)


def test_class_chain_written_deepest_first(tree):
    """`class C499(C498)` before `class C498`: the MRO is computed without recursing per class."""
    (tree / "serving" / "chain.py").write_text(_chain(500, deepest_first=True))
    # The same chain across files, each module importing its base from the next one.
    pkg = tree / "serving" / "split"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(500):
        base = f"from serving.split.m{500 - i:03d} import S{i - 1}\n" if i else ""
        (pkg / f"m{499 - i:03d}.py").write_text(f"{base}class S{i}{f'(S{i - 1})' if i else ''}:\n    pass\n")
    result = analyse([str(tree)], Settings(cache_dir=None, jobs=1), keep_context=True)
    assert result.errors == []
    assert pairs(result.findings, "AL001") == GOOD
    index = result.context.index
    assert index.mro("serving.chain.C499") == [f"serving.chain.C{i}" for i in range(499, -1, -1)]
    assert index.roots("serving.chain.C499") == {"serving.chain.C0"}
    assert index.mro("serving.split.m000.S499") == [f"serving.split.m{499 - i:03d}.S{i}"
                                                    for i in range(499, -1, -1)]


def test_long_class_chain_takes_seconds(tree):
    """4,000 classes in one chain: was roughly cubic (about four minutes here); 0.3 s now."""
    (tree / "serving" / "chain.py").write_text(_chain(4_000, deepest_first=False))
    started = time.perf_counter()
    result = analyse([str(tree)], Settings(cache_dir=None, jobs=1), keep_context=True)
    elapsed = time.perf_counter() - started
    assert result.errors == []
    assert pairs(result.findings, "AL001") == GOOD
    assert len(result.context.index.mro("serving.chain.C3999")) == 4_000
    assert elapsed < 20, f"{elapsed:.1f} s"


def test_diamonds_keep_c3_order(tree):
    """The linear-time merge gives C3's answer where there is more than one base."""
    (tree / "serving" / "diamond.py").write_text(
        "class O: pass\nclass A(O): pass\nclass B(O): pass\nclass C(O): pass\nclass D(O): pass\n"
        "class E(O): pass\nclass K1(A, B, C): pass\nclass K2(D, B, E): pass\nclass K3(D, A): pass\n"
        "class Z(K1, K2, K3): pass\n")
    index = analyse([str(tree)], Settings(cache_dir=None, jobs=1), keep_context=True).context.index
    namespace: dict = {}
    exec(compile((tree / "serving" / "diamond.py").read_text(), "diamond.py", "exec"), namespace)
    expected = [f"serving.diamond.{c.__name__}" for c in namespace["Z"].__mro__[:-1]]
    assert index.mro("serving.diamond.Z") == expected


# --- 7. FIFOs and other non-regular files ----------------------------------------------------------

def test_fifo_named_like_source_is_skipped(tree, tmp_path):
    os.mkfifo(tree / "serving" / "pipe.py")
    os.symlink(tree / "serving" / "pipe.py", tree / "serving" / "link_to_pipe.py")
    os.mkfifo(tmp_path / "given.py")
    result = _within(30, lint, tree, tmp_path / "given.py")
    # With several arguments, files are named relative to the folder they share (tmp_path).
    assert _errors(result) == [("given.py", "unreadable"), ("tree/serving/link_to_pipe.py", "unreadable"),
                               ("tree/serving/pipe.py", "unreadable")]
    assert all("not a regular file" in e.message for e in result.errors)
    assert pairs(result.findings, "AL001") == GOOD


def test_source_replaced_by_fifo_after_discovery_never_blocks(tree):
    """Every reader of source files (summaries, suppressions, --fix, code frames) refuses a FIFO
    put where a discovered file was, instead of blocking in open()."""
    from attn_lint.linter.app.fix import SourceCache
    from attn_lint.linter.files.discover import open_source
    from attn_lint.linter.report.text import code_frame
    fifo = tree / "serving" / "swapped.py"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        _within(10, open_source, str(fifo))
    with pytest.raises(OSError):
        _within(10, SourceCache().data, str(fifo))
    assert _within(10, code_frame, "swapped.py", 3, {"swapped.py": str(fifo)}) == []
    from attn_lint.linter.app.engine import _worker
    path, parsed, failure, fresh = _within(10, _worker, (str(fifo), 1 << 20, None, True))
    assert parsed is None and "not a regular file" in failure and not fresh


# --- 8. file names that are not UTF-8 ---------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["text", "concise", "github", "json", "sarif"])
def test_undecodable_file_names_in_every_format(tmp_path, fmt):
    """A tree under a folder whose name is not UTF-8, and an unparsable file with such a name: every
    format writes its report to a strict UTF-8 stdout."""
    top = os.fsencode(tmp_path) + b"/tree\xff"
    shutil.copytree(FIXTURES / "al001_hidden_hook", os.fsdecode(top))
    with open(top + b"/serving/bad\xfe.py", "wb") as fh:
        fh.write(b"def f(:\n")
    proc = _cli("--format", fmt, ".", cwd=tmp_path, env={"PYTHONIOENCODING": "utf-8:strict"})
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "Error" not in err and "internal error" not in err
    out = proc.stdout.decode("utf-8")  # strict: the report is valid UTF-8
    if fmt == "json":
        doc = json.loads(out)
        assert os.fsencode(doc["errors"][0]["path"]) == b"tree\xff/serving/bad\xfe.py"
    elif fmt == "sarif":
        doc = json.loads(out)
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
        assert "tree%FF/" + FINDING_FILE in uris
    else:
        assert "tree\\udcff/serving/bad\\udcfe.py" in out
        assert "tree\\udcff/" + FINDING_FILE in out


# --- 9. terminal escapes in the source ------------------------------------------------------------

def test_escape_sequences_in_source_are_shown_escaped(tree):
    """A line in the finding's code frame clears the screen and rings the bell when printed raw;
    `[bold]` in source is text, never rich markup."""
    from attn_lint.linter.report.text import make_console, render
    path = tree / FINDING_FILE
    lines = path.read_text().split("\n")
    finding_line = lint(tree).findings[0].line
    lines.insert(finding_line - 1, "# \x1b[2J\x1b]0;pwned\x07 [bold red]not markup[/] \x08\x9b done")
    path.write_text("\n".join(lines))
    result = lint(tree)
    assert pairs(result.findings, "AL001") == GOOD
    for force_terminal in (False, True):
        out = io.StringIO()
        console = make_console(out)
        if force_terminal:
            console = type(console)(file=out, force_terminal=True, color_system="standard", markup=False,
                                    highlight=False, soft_wrap=True, emoji=False)
        render(result, console)
        text = out.getvalue()
        assert "# \\x1b[2J\\x1b]0;pwned\\x07 [bold red]not markup[/] \\x08\\x9b done" in text
        frame = [ln for ln in text.splitlines() if "pwned" in ln]
        assert len(frame) == 1 and "\x07" not in frame[0] and "\x08" not in text and "\x9b" not in text
        if not force_terminal:
            assert "\x1b" not in text


def test_a_defect_in_the_per_file_pass_is_that_files_diagnostic(tmp_path, monkeypatch):
    """A bug in the summary of one file (such as the reaching pass once had) must not end the run."""
    import shutil

    from conftest import FIXTURES, lint

    from attn_lint.linter.perfile import summary

    shutil.copytree(FIXTURES / "al001_hidden_hook", tmp_path / "t")
    (tmp_path / "t" / "serving" / "odd.py").write_text("x = 1\n")
    real = summary.summarise_source

    def flaky(data, path):
        if path.endswith("odd.py"):
            raise AttributeError("'NoneType' object has no attribute '_fields'")
        return real(data, path)

    monkeypatch.setattr(summary, "summarise_source", flaky)
    result = lint(tmp_path / "t")
    assert [f.member for f in result.findings] == ["init_mha_chunk_metadata"]
    (err,) = result.errors
    assert err.kind == "internal-error" and err.path.endswith("odd.py") and "AttributeError" in err.message
