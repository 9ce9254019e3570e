"""A module's source lines, read once per run, for the few passes that read a call's or a
function's own text where the summary keeps too little (function_text.py, registries.py).

Read as bytes through discover.open_source (regular files only, never blocking); a file that can
no longer be read, or that grew past what the per-file pass accepts since it was summarised, gives
None, and the pass asking keeps its wide answer.
"""

from __future__ import annotations

from .discover import MAX_FILE_BYTES, open_source


def read_source(path: str) -> bytes | None:
    """The file's bytes, or None where it cannot be read or outgrew what the per-file pass accepts."""
    try:
        with open_source(path) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_FILE_BYTES else None


class SourceLines:
    def __init__(self) -> None:
        self._lines: dict[str, list[bytes] | None] = {}

    def of(self, path: str) -> list[bytes] | None:
        if path not in self._lines:
            data = read_source(path)
            self._lines[path] = data.splitlines(keepends=True) if data is not None else None
        return self._lines[path]
