"""A module's source lines, read once per run, for the few passes that read a call's or a
function's own text where the summary keeps too little (param_callers.py, passed_values.py).

Read as bytes through discover.open_source (regular files only, never blocking); a file that can
no longer be read gives None, and the pass asking keeps its wide answer.
"""

from __future__ import annotations

from .discover import open_source


class SourceLines:
    def __init__(self) -> None:
        self._lines: dict[str, list[bytes] | None] = {}

    def of(self, path: str) -> list[bytes] | None:
        if path not in self._lines:
            try:
                with open_source(path) as fh:
                    self._lines[path] = fh.read().splitlines(keepends=True)
            except OSError:
                self._lines[path] = None
        return self._lines[path]
