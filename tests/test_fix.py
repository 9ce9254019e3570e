"""--fix / --diff for AL001: a forwarding method, safe signature, formatting kept, atomic writes."""

from __future__ import annotations

import difflib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from attn_lint.linter.app import fix as fixer
from attn_lint.linter.app.cli import main
from attn_lint.linter.app.engine import Settings, analyse

REPO = pathlib.Path(__file__).resolve().parent.parent

MODEL = '''
from serving.backends import Backend

def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
'''


def write(root, files: dict[str, str]):
    for rel, src in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src).lstrip("\n"))
        (p.parent / "__init__.py").touch()


def backends(impls: str, wrapper_extra: str = "", delegates: str = "full_attn_backend") -> str:
    attrs = "".join(f"        self.{d} = {d}\n" for d in delegates.split(","))
    params = ", ".join(f"{d}: Backend" for d in delegates.split(","))
    first = delegates.split(",")[0]
    return BASE.lstrip("\n") + textwrap.dedent(impls) + f'''

# The wrapper (a comment that must survive).
class HybridBackend(Backend):
    """Holds other backends."""

    def __init__(self, {params}):
{attrs}
    def forward(self, batch):
        return self.{first}.forward(batch)  # keep me
{wrapper_extra}

def helper():   # odd   spacing stays
    return   1
'''


BASE = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError
'''


def findings(root, codes=("AL001", "AL002")):
    res = analyse([str(root)], Settings(cache_dir=None))
    return [(f.code, f.class_name.rsplit(".", 1)[-1], f.member) for f in res.findings if f.code in codes]


def cli(root, *args):
    old = os.getcwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(main, ["--no-cache", *args, "."], catch_exceptions=False)
    finally:
        os.chdir(old)


def fix_and_read(root):
    r = cli(root, "--fix")
    return r, (root / "serving" / "backends.py").read_text()


def test_diff_does_not_write_and_fix_does(tmp_path):
    write(tmp_path, {"serving/backends.py": backends('''
        class FlashBackend(Backend):
            def forward(self, batch):
                return batch

            def plan_chunks(self, batch, disable_ragged: bool = False):
                self.planned = (batch, disable_ragged)

        class TrtBackend(FlashBackend):
            def plan_chunks(self, batch):
                self.planned = batch
    '''), "serving/model.py": MODEL})
    path = tmp_path / "serving" / "backends.py"
    before = path.read_text()
    assert findings(tmp_path) == [("AL001", "HybridBackend", "plan_chunks")]

    r = cli(tmp_path, "--diff")
    assert r.exit_code == 1
    assert r.stdout.startswith("--- a/serving/backends.py\n+++ b/serving/backends.py\n")
    assert "+    def plan_chunks(self, batch):" in r.stdout
    assert path.read_text() == before
    if shutil.which("git"):  # the diff applies as it is
        check = subprocess.run(["git", "apply", "--check", "-"], input=r.stdout, cwd=tmp_path, text=True,
                               capture_output=True)
        assert check.returncode == 0, check.stderr

    r, after = fix_and_read(tmp_path)
    assert r.exit_code == 0, r.output
    assert "fixed 1 finding in 1 file" in r.stderr
    # only additions: formatting and comments untouched
    removed = [x for x in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="")
               if x.startswith("-") and not x.startswith("---")]
    assert removed == []
    assert "# The wrapper (a comment that must survive)." in after and "def helper():   # odd   spacing stays" in after
    assert 'hook = getattr(self.full_attn_backend, "plan_chunks", None)' in after
    assert findings(tmp_path) == []
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".attn-lint-")] == []
    # nothing left to fix: --diff is empty and exits 0
    assert cli(tmp_path, "--diff").exit_code == 0


def test_fixed_code_runs_the_delegate_hook(tmp_path):
    write(tmp_path, {"serving/backends.py": backends('''
        class FlashBackend(Backend):
            def forward(self, batch):
                return batch

            def plan_chunks(self, batch, disable_ragged=False):
                self.planned = (batch, disable_ragged)
                return "planned"
    '''), "serving/model.py": MODEL})
    assert fix_and_read(tmp_path)[0].exit_code == 0
    code = ("from serving.backends import FlashBackend, HybridBackend, Backend\n"
            "f = FlashBackend(); h = HybridBackend(f)\n"
            "assert h.plan_chunks(7, disable_ragged=True) == 'planned' and f.planned == (7, True)\n"
            "h2 = HybridBackend(Backend()); assert h2.plan_chunks(1) is None\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("impls, expect_sig", [
    # shared prefix, the narrow implementation decides
    ('''
     class A(Backend):
         def plan_chunks(self, batch, disable_ragged=False): ...
     class B(Backend):
         def plan_chunks(self, batch): ...
     ''', "def plan_chunks(self, batch):"),
    # a keyword both accept with the same literal default becomes keyword-only
    ('''
     class A(Backend):
         def plan_chunks(self, batch, *, chunk: int = 8): ...
     class B(Backend):
         def plan_chunks(self, batch, extra=None, chunk: int = 8): ...
     ''', "def plan_chunks(self, batch, *, chunk: int = 8):"),
    # different defaults: left to each implementation
    ('''
     class A(Backend):
         def plan_chunks(self, batch, chunk=8): ...
     class B(Backend):
         def plan_chunks(self, batch, chunk=16): ...
     ''', "def plan_chunks(self, batch):"),
    # a default that is a name (maybe not importable in the wrapper's module): left out
    ('''
     LIMIT = 3
     class A(Backend):
         def plan_chunks(self, batch, limit=LIMIT): ...
     ''', "def plan_chunks(self, batch):"),
    # positional-only, *args and **kwargs are kept when every implementation has them
    ('''
     class A(Backend):
         def plan_chunks(self, batch, /, *args, **kwargs): ...
     class B(Backend):
         def plan_chunks(self, batch, /, *rest, **kw): ...
     ''', "def plan_chunks(self, batch, /, *args, **kwargs):"),
    # a required argument everyone takes stays required
    ('''
     class A(Backend):
         def plan_chunks(self, batch, seq_lens): ...
     class B(Backend):
         def plan_chunks(self, batch, seq_lens, flag=True): ...
     ''', "def plan_chunks(self, batch, seq_lens):"),
])
def test_signature_is_what_every_implementation_accepts(tmp_path, impls, expect_sig):
    write(tmp_path, {"serving/backends.py": backends(impls), "serving/model.py": MODEL})
    assert findings(tmp_path, ("AL001",))
    r, after = fix_and_read(tmp_path)
    assert "fixed 1 finding in 1 file" in r.stderr, r.output + after
    assert expect_sig in after, after
    # no AL001 left, and no AL002 in the wrapper (the model's own calls are another matter)
    assert [f for f in findings(tmp_path) if f[1] == "HybridBackend"] == []


def test_unfixable_when_an_implementation_needs_more(tmp_path):
    write(tmp_path, {"serving/backends.py": backends('''
        class A(Backend):
            def plan_chunks(self, batch, seq_lens): ...
        class B(Backend):
            def plan_chunks(self, batch): ...
    '''), "serving/model.py": MODEL})
    before = (tmp_path / "serving" / "backends.py").read_text()
    r, after = fix_and_read(tmp_path)
    assert r.exit_code == 1
    assert "cannot fix AL001 `HybridBackend.plan_chunks`" in r.stderr and "seq_lens" in r.stderr
    assert after == before


def test_two_delegates_and_async(tmp_path):
    write(tmp_path, {"serving/backends.py": backends('''
        class A(Backend):
            async def plan_chunks(self, batch): ...
    ''', delegates="prefill_backend,decode_backend", wrapper_extra='''
    def forward_decode(self, batch):
        return self.decode_backend.forward(batch)
'''), "serving/model.py": MODEL})
    r, after = fix_and_read(tmp_path)
    assert r.exit_code == 0, r.output
    assert "async def plan_chunks(self, batch):" in after
    assert after.count("await hook(batch)") == 2
    assert 'getattr(self.decode_backend, "plan_chunks", None)' in after
    assert 'getattr(self.prefill_backend, "plan_chunks", None)' in after
    assert findings(tmp_path) == []


def test_fixture_hidden_hook(tmp_path):
    src = REPO / "fixtures" / "al001_hidden_hook"
    if not src.is_dir():
        pytest.skip("fixtures/al001_hidden_hook is not in this checkout")
    shutil.copytree(src, tmp_path / "case")
    root = tmp_path / "case"
    assert ("AL001", "HybridLinearAttnBackend", "init_mha_chunk_metadata") in findings(root)
    r = cli(root, "--fix", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["findings"] == []
    assert findings(root, ("AL001", "AL002", "AL003")) == []
    text = (root / "serving" / "backends" / "hybrid_linear_attn_backend.py").read_text()
    # the list of all backends also holds full_attn_backend: forwarded once, through the attribute
    assert text.count("getattr(") == 1
    # the annotation is kept: `ForwardBatch` means the same class in the wrapper's module
    assert "def init_mha_chunk_metadata(self, forward_batch: ForwardBatch):" in text
    out = subprocess.run([sys.executable, "-c", "import serving.models.forward_mha"], cwd=root,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_never_writes_a_file_that_does_not_compile(tmp_path, monkeypatch):
    write(tmp_path, {"serving/backends.py": backends('''
        class A(Backend):
            def plan_chunks(self, batch): ...
    '''), "serving/model.py": MODEL})
    path = tmp_path / "serving" / "backends.py"
    before = path.read_text()
    monkeypatch.setattr(fixer, "compile_error", lambda data, p: "simulated error")
    r, after = fix_and_read(tmp_path)
    assert r.exit_code == 1 and "would not compile (simulated error)" in r.stderr
    assert after == before


def test_compile_error_detects_bad_code():
    assert fixer.compile_error(b"def f(self, a, a):\n    pass\n", "x.py")
    assert fixer.compile_error(b"x = 1\n", "x.py") is None


def test_tabs_and_crlf_are_kept(tmp_path):
    src = backends('''
        class A(Backend):
            def plan_chunks(self, batch): ...
    ''').replace("    ", "\t").replace("\n", "\r\n")
    (tmp_path / "serving").mkdir()
    (tmp_path / "serving" / "__init__.py").touch()
    (tmp_path / "serving" / "backends.py").write_bytes(src.encode())
    (tmp_path / "serving" / "model.py").write_text(textwrap.dedent(MODEL))
    r = cli(tmp_path, "--fix")
    assert r.exit_code == 0, r.output
    data = (tmp_path / "serving" / "backends.py").read_bytes()
    assert data.startswith(src.encode()[:200])
    assert b"\r\n\tdef plan_chunks(self, batch):\r\n\t\thook = getattr" in data.replace(
        b"\t\t# Added by attn-lint --fix (AL001): run the delegates' hook where they define it.\r\n", b"")
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_annotations_only_where_they_resolve_in_the_wrapper_module(tmp_path):
    write(tmp_path, {
        "serving/base.py": BASE,
        "serving/types.py": "class Batch:\n    pass\n\nclass Meta:\n    pass\n",
        "serving/impls.py": '''
            from serving.base import Backend
            from serving.types import Batch, Meta

            class A(Backend):
                def plan_chunks(self, batch: Batch, meta: Meta = None, n: int = 1): ...
        ''',
        "serving/backends.py": '''
            from serving.base import Backend
            from serving.types import Batch

            class HybridBackend(Backend):
                def __init__(self, full_attn_backend: Backend):
                    self.full_attn_backend = full_attn_backend

                def forward(self, batch):
                    return self.full_attn_backend.forward(batch)
        ''',
        "serving/model.py": MODEL.replace("serving.backends", "serving.base"),
    })
    r, after = fix_and_read(tmp_path)
    assert r.exit_code == 0, r.output
    # Batch is imported in the wrapper's module, Meta is not (its annotation is dropped), int is a builtin
    assert "def plan_chunks(self, batch: Batch, meta=None, n: int = 1):" in after, after


def test_fix_keeps_a_file_in_its_declared_encoding(tmp_path):
    impls = '''
        class FlashBackend(Backend):
            def forward(self, batch):
                return batch

            def plan_chunks(self, batch):
                self.planned = batch
    '''
    write(tmp_path, {"serving/model.py": MODEL})
    path = tmp_path / "serving" / "backends.py"
    source = "# -*- coding: latin-1 -*-\n# Caf\u00e9 backends\n" + backends(impls)
    path.write_bytes(source.encode("latin-1"))
    r = cli(tmp_path, "--fix")
    assert r.exit_code == 0, r.output
    fixed = path.read_bytes()
    assert fixed.startswith("# -*- coding: latin-1 -*-\n# Caf\u00e9 backends\n".encode("latin-1"))
    assert "def plan_chunks(self, batch):" in fixed.decode("latin-1")


# ------------------------------------------------------------------------------------------------
# Writing safely: what the user wrote meanwhile, links, modes, owners, files that cannot be written
# ------------------------------------------------------------------------------------------------

FLASH = '''
    class FlashBackend(Backend):
        def forward(self, batch):
            return batch

        def plan_chunks(self, batch):
            self.planned = batch
'''

# A second wrapper with the same finding, in another file.
PAIR = '''
from serving.backends import Backend

class PairBackend(Backend):
    def __init__(self, primary: Backend):
        self.primary = primary

    def forward(self, batch):
        return self.primary.forward(batch)
'''

BY_HAND = '''
    def plan_chunks(self, batch):  # written by hand while attn-lint ran
        return self.full_attn_backend.plan_chunks(batch)
'''


def add_by_hand(path):
    path.write_text(path.read_text().replace("  # keep me\n", "  # keep me\n" + BY_HAND))
    return path.read_text()


def two_wrappers(root, padding: str = ""):
    write(root, {"serving/backends.py": backends(FLASH) + padding, "serving/pair.py": PAIR,
                 "serving/model.py": MODEL})
    return root / "serving" / "backends.py", root / "serving" / "pair.py"


def test_fix_leaves_a_file_edited_after_the_analysis(tmp_path, monkeypatch):
    path, pair = two_wrappers(tmp_path)
    real_plan = fixer.plan
    edited = []

    def hook_added_by_hand_then_plan(result, found):
        # the user adds the hook while the analysis runs: the fix must not add a second one
        edited.append(add_by_hand(path))
        return real_plan(result, found)

    monkeypatch.setattr(fixer, "plan", hook_added_by_hand_then_plan)
    r = cli(tmp_path, "--fix")
    assert path.read_text() == edited[0]
    assert "serving/backends.py" in r.stderr and "changed since it was analysed" in r.stderr, r.stderr
    assert "fixed 1 finding in 1 file" in r.stderr  # the other file is fixed all the same
    assert "def plan_chunks" in pair.read_text()
    assert r.exit_code == 1, r.output  # not everything asked for was fixed


def test_apply_checks_the_analysed_content_right_before_writing(tmp_path):
    path, _ = two_wrappers(tmp_path)
    res = analyse([str(tmp_path)], Settings(cache_dir=None), keep_context=True)
    plans = fixer.plan(res, res.findings)
    assert all(fp.new for fp in plans)
    edited = add_by_hand(path)  # between planning and writing
    assert fixer.apply(plans, (str(tmp_path),)) == (1, 1)
    assert path.read_text() == edited
    assert any("serving/backends.py" in n and "changed since it was analysed" in n for n in fixer.notes(plans))


def test_fix_writes_a_symlinked_module_at_its_target_inside_the_project(tmp_path):
    tree = tmp_path / "tree"
    path, _ = two_wrappers(tree)
    real = tree / "elsewhere" / "backends.py"
    real.parent.mkdir()
    path.rename(real)
    path.symlink_to(real)
    r = cli(tree, "--fix")
    assert r.exit_code == 0, r.output
    assert path.is_symlink() and os.readlink(path) == str(real)
    assert "def plan_chunks(self, batch):" in real.read_text()
    assert [p.name for p in real.parent.iterdir()] == ["backends.py"]


def test_fix_never_writes_through_a_link_out_of_the_project(tmp_path):
    tree = tmp_path / "tree"
    path, _ = two_wrappers(tree)
    real = tmp_path / "elsewhere" / "backends.py"
    real.parent.mkdir()
    path.rename(real)
    path.symlink_to(real)
    before = real.read_bytes()
    # The library follows the link (no link_roots): the fix is planned, and refused at the write.
    res = analyse([str(tree)], Settings(cache_dir=None), keep_context=True)
    plans = fixer.plan(res, res.findings)
    assert any(fp.new for fp in plans)
    assert fixer.apply(plans, (str(tree),)) == (1, 1)  # the wrapper in serving/pair.py, inside
    assert [fp.refused for fp in plans if fp.path == str(path)] == [True]
    assert any("link to a file outside the project root" in n for n in fixer.notes(plans))
    assert real.read_bytes() == before and path.is_symlink()
    # The command line does not even follow it: the link is reported, the file left alone.
    r = cli(tree, "--fix")
    assert r.exit_code == 1, r.output
    assert "symbolic link that leads outside" in r.output
    assert real.read_bytes() == before and path.is_symlink()


def test_fix_keeps_mode_and_owner(tmp_path):
    path, _ = two_wrappers(tmp_path)
    path.chmod(0o640)
    if os.geteuid() == 0:
        os.chown(path, 12345, 23456)
    st = path.stat()
    r = cli(tmp_path, "--fix")
    assert r.exit_code == 0, r.output
    after = path.stat()
    assert "def plan_chunks(self, batch):" in path.read_text()
    assert (after.st_mode, after.st_uid, after.st_gid) == (st.st_mode, st.st_uid, st.st_gid)


def test_fix_refuses_a_read_only_file(tmp_path):
    path, pair = two_wrappers(tmp_path)
    before = path.read_bytes()
    path.chmod(0o444)
    r = cli(tmp_path, "--fix")
    assert path.read_bytes() == before and path.stat().st_mode & 0o777 == 0o444
    assert "serving/backends.py" in r.stderr and "read-only" in r.stderr, r.stderr
    assert "def plan_chunks" in pair.read_text()
    assert r.exit_code == 1, r.output


def test_a_failed_write_is_reported_and_the_other_files_are_still_fixed(tmp_path):
    # A real write failure: the file-size limit (EFBIG, as on a full disk) stops the big file's
    # write, which comes first; the small file after it must still be written.
    path, pair = two_wrappers(tmp_path, padding=("#" * 100 + "\n") * 80)
    before = path.read_bytes()
    limit = len(before) - 1000
    assert len(pair.read_bytes()) + 1000 < limit

    def small_files_only():
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-m", "attn_lint", "--no-cache", "--fix", "."], cwd=tmp_path, env=env,
                         capture_output=True, text=True, preexec_fn=small_files_only)
    assert out.returncode == 1, out.stderr
    assert "internal error" not in out.stderr
    assert "in serving/backends.py: cannot write the file (File too large)" in out.stderr, out.stderr
    assert path.read_bytes() == before
    assert "def plan_chunks" in pair.read_text()
    assert "fixed 1 finding in 1 file" in out.stderr
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".attn-lint-")] == []


def _import_fresh(root, module: str):
    """Import `module` from `root` in a new interpreter: (exit status, stderr)."""
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=root, capture_output=True, text=True,
                          timeout=60)
    return proc.returncode, proc.stderr


def test_fix_quotes_an_annotation_whose_name_is_imported_only_for_type_checking(tmp_path):
    """Issue 12: `def init_mha_chunk_metadata(self, forward_batch: ForwardBatch)` was added to a
    module that imports ForwardBatch only under TYPE_CHECKING: NameError at import."""
    root = tmp_path / "t"
    shutil.copytree(REPO / "fixtures" / "al001_hidden_hook", root)
    wrapper = root / "serving" / "backends" / "hybrid_linear_attn_backend.py"
    src = wrapper.read_text()
    src = src.replace("from __future__ import annotations\n\n", "")
    src = src.replace("from serving.model_executor.forward_batch_info import ForwardBatch\n",
                      "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                      "    from serving.model_executor.forward_batch_info import ForwardBatch\n")
    src = src.replace(": ForwardBatch", ': "ForwardBatch"')  # the original runs: its own annotations are quoted
    wrapper.write_text(src)
    assert _import_fresh(root, "serving.backends.hybrid_linear_attn_backend")[0] == 0
    assert cli(root, "--fix").exit_code == 0
    fixed = wrapper.read_text()
    assert "def init_mha_chunk_metadata(self, forward_batch: 'ForwardBatch'" in fixed
    rc, err = _import_fresh(root, "serving.backends.hybrid_linear_attn_backend")
    assert rc == 0, err


def test_fix_keeps_an_annotation_bound_at_run_time(tmp_path):
    root = tmp_path / "t"
    shutil.copytree(REPO / "fixtures" / "al001_hidden_hook", root)
    wrapper = root / "serving" / "backends" / "hybrid_linear_attn_backend.py"
    wrapper.write_text(wrapper.read_text().replace("from __future__ import annotations\n\n", ""))
    assert cli(root, "--fix").exit_code == 0
    assert "forward_batch: ForwardBatch" in wrapper.read_text()
    assert _import_fresh(root, "serving.backends.hybrid_linear_attn_backend")[0] == 0


def test_a_split_wrapper_forwards_a_hook_where_it_forwards_similar_members(tmp_path):
    """A prefill/decode split forwards a prefill-metadata hook to the prefill delegate only, as its
    own `init_prefill_metadata` does, not to both."""
    write(tmp_path, {"serving/backends.py": BASE + '''
class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def init_prefill_chunk_metadata(self, batch):
        pass

    def init_prefill_metadata(self, batch):
        pass

    def init_decode_metadata(self, batch):
        pass


class SplitBackend(Backend):
    def __init__(self, prefill_backend: Backend, decode_backend: Backend):
        self.prefill_backend = prefill_backend
        self.decode_backend = decode_backend

    def forward(self, batch):
        return self.prefill_backend.forward(batch) if batch else self.decode_backend.forward(batch)

    def init_prefill_metadata(self, batch):
        self.prefill_backend.init_prefill_metadata(batch)

    def init_decode_metadata(self, batch):
        self.decode_backend.init_decode_metadata(batch)
''', "serving/model.py": MODEL.replace("plan_chunks", "init_prefill_chunk_metadata")})
    assert cli(tmp_path, "--fix").exit_code == 0
    added = (tmp_path / "serving" / "backends.py").read_text().split("def init_prefill_chunk_metadata")[-1]
    assert "self.prefill_backend" in added and "self.decode_backend" not in added
