"""Every module that can decide findings keys the results cache: editing one must never be
answered from an older run's results."""

from __future__ import annotations

import os

from attn_lint.linter.perfile import cache


def test_every_analysis_module_keys_the_cache(tmp_path, monkeypatch):
    home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(cache.__file__))))
    keyed = cache.analysis_modules()
    # The modules the analysis imports, in every phase folder: each must be keyed (a new one is, by default).
    for name in ("linter/model/param_callers.py", "linter/perfile/guards.py", "linter/perfile/platforms.py",
                 "linter/model/context.py", "linter/model/families.py", "linter/model/resolve.py",
                 "linter/inference/astroid_bridge.py", "linter/signals/model_reach.py", "linter/refs.py",
                 "linter/app/engine.py", "rules/base.py", "rules/al002_delegation_signature_mismatch.py"):
        assert name in keyed
    assert not any(m.startswith("linter/report/") or m in cache.PRESENTATION_MODULES for m in keyed)
    base = cache.code_digest()
    for name in keyed:
        real = os.path.join(home, name)
        with open(real, "rb") as fh:
            data = fh.read()
        # Same digest function over a copy of the folder with one module edited.
        copy = tmp_path / name.replace("/", "_")
        copy.write_bytes(data + b"\n# edited\n")
        original_open = open

        def edited_open(path, mode="r", *a, _real=real, _copy=str(copy), _open=original_open, **k):
            return _open(_copy if os.path.abspath(path) == _real else path, mode, *a, **k)

        monkeypatch.setattr("builtins.open", edited_open)
        try:
            assert cache.code_digest() != base, f"editing {name} leaves the results cache key unchanged"
        finally:
            monkeypatch.setattr("builtins.open", original_open)


def test_every_module_the_per_file_pass_imports_keys_the_summaries():
    """A stored summary is as the per-file pass made it and the codec wrote it: the codec, the cache
    and every module the pass imports (transitively) key the summaries, so an edit to one (a guard's
    shape, the platform words) is never answered with a summary an older walk made. guards.py and
    platforms.py once did not."""
    from test_import_cycles import imports_of, modules_of_project

    modules = modules_of_project()
    todo = ["attn_lint.linter.perfile.summary"]
    seen: set[str] = {"attn_lint.linter.perfile.codec", "attn_lint.linter.perfile.cache"}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += sorted(imports_of(name, modules[name], modules, typing=True))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(cache.__file__))))
    paths = {os.path.relpath(modules[m], root).replace(os.sep, "/") for m in seen
             if not modules[m].name == "__init__.py" and m.startswith("attn_lint.linter")}
    assert "linter/perfile/guards.py" in paths
    assert sorted(paths - set(cache.STORAGE_MODULES)) == []
