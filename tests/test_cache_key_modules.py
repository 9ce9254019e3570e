"""Every module that can decide findings keys the results cache: editing one must never be
answered from an older run's results."""

from __future__ import annotations

import os

from attn_lint.linter import cache


def test_every_analysis_module_keys_the_cache(tmp_path, monkeypatch):
    here = os.path.dirname(cache.__file__)
    keyed = [n for n in sorted(os.listdir(here)) if n.endswith(".py") and n not in cache.PRESENTATION_MODULES]
    # The modules the analysis imports: each must be keyed (a new one is, by default).
    for name in ("param_callers.py", "guards.py", "platforms.py", "context.py", "families.py", "resolve.py"):
        assert name in keyed
    base = cache.code_digest()
    for name in keyed:
        real = os.path.join(here, name)
        with open(real, "rb") as fh:
            data = fh.read()
        # Same digest function over a copy of the folder with one module edited.
        copy = tmp_path / name
        copy.write_bytes(data + b"\n# edited\n")
        original_open = open

        def edited_open(path, mode="r", *a, _real=real, _copy=str(copy), _open=original_open, **k):
            return _open(_copy if os.path.abspath(path) == _real else path, mode, *a, **k)

        monkeypatch.setattr("builtins.open", edited_open)
        try:
            assert cache.code_digest() != base, f"editing linter/{name} leaves the results cache key unchanged"
        finally:
            monkeypatch.setattr("builtins.open", original_open)
