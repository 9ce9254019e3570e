"""Fixtures that are variations of `fixed/` are what their VARIANT.toml builds (tests/fixture_builder.py)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from fixture_builder import FIXTURES, SPEC, Variant, VariantError, build, differences, variants, write

VARIED = ["al001_hidden_hook", "al002_delegation_typeerror", "al003_noop_default", "al003_placeholder_default",
          "al003_placeholder_forwarded", "fixed_one_arg", "getattr_wrapper", "leaf_lacks_hook"]


def test_every_variant_is_what_it_builds():
    found = variants()
    assert sorted(v.name for v in found) == VARIED  # the rest are written by hand
    assert [d for v in found for d in differences(v)] == []


def test_each_variant_differs_from_its_base_only_where_it_says():
    fixed = build(Variant("fixed_copy", "fixed"))  # no edits: the base itself
    for v in variants():
        built = build(v)
        edited = {e.file for e in v.edits}
        same = {rel for rel in fixed.keys() & built.keys() if rel not in edited and not any(
            rel == o or rel.startswith(o + "/") for o in v.own)}
        assert all(fixed[rel] == built[rel] for rel in same), v.name
        assert all(fixed[e.file] != built[e.file] for e in v.edits), v.name


@pytest.fixture
def pair(tmp_path):
    for name in ("fixed", "al002_delegation_typeerror"):
        shutil.copytree(FIXTURES / name, tmp_path / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fixtures"], cwd=tmp_path, check=True)
    return tmp_path, Variant.read(tmp_path / "al002_delegation_typeerror")


def test_a_shared_edit_in_the_base_reaches_the_variant(pair):
    root, v = pair
    runner = root / "fixed" / "serving" / "model_executor" / "model_runner.py"
    runner.write_text(runner.read_text() + "\n# a change every variant shares\n")
    assert differences(v, root) == ["al002_delegation_typeerror/serving/model_executor/model_runner.py: differs"]
    assert write(v, root) == ["wrote al002_delegation_typeerror/serving/model_executor/model_runner.py"]
    assert differences(v, root) == []
    assert (root / v.name / "serving/model_executor/model_runner.py").read_text().endswith("variant shares\n")


def test_a_hand_edit_of_a_built_file_is_caught_and_kept(pair):
    root, v = pair
    f = root / v.name / "serving" / "backends" / "flashinfer_mla_backend.py"
    f.write_text(f.read_text().replace("def ", "def  ", 1))
    assert differences(v, root) == ["al002_delegation_typeerror/serving/backends/flashinfer_mla_backend.py: differs"]
    edited = f.read_text()
    with pytest.raises(VariantError, match="changes git does not hold"):
        write(v, root)
    assert f.read_text() == edited


@pytest.mark.parametrize("spec, why", [
    ('base = "fixed"\ndrop = "serving/x.py"\n', "must be a list"),
    ('base = "fixed"\n[[edit]]\nfile = "a.py"\nold = "x"\n', "needs `file`, `old` and `new`"),
    ('drop = []\n', "needs `base`"),
    ('base = "fixed"\nown = [1]\n', "must be a list"),
])
def test_a_malformed_variant_is_refused_with_a_message(tmp_path, spec, why):
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / SPEC).write_text(spec)
    with pytest.raises(VariantError, match=why):
        Variant.read(tmp_path / "v")


def test_an_edit_must_match_once(pair):
    root, v = pair
    spec = root / v.name / SPEC
    spec.write_text(spec.read_text().replace("disable_flashinfer_ragged: bool = False", "no_such_parameter"))
    with pytest.raises(VariantError, match="occurs 0 times"):
        build(Variant.read(root / v.name), root)


def test_a_new_file_is_never_removed(pair):
    root, v = pair
    extra = root / v.name / "serving" / "backends" / "new_backend.py"
    extra.write_text("class NewBackend: ...\n")
    with pytest.raises(VariantError, match="under `own`"):
        write(v, root)
    assert extra.is_file()
    spec = root / v.name / SPEC
    spec.write_text(spec.read_text().replace('base = "fixed"\n', 'base = "fixed"\nown = ["serving/backends/new_backend.py"]\n'))
    assert differences(Variant.read(root / v.name), root) == []
