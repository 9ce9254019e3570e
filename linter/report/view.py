"""What a formatter reads of a run: the findings, the latent ones, the per-file errors, the counts and
the files. The engine's result has these and more (the tree model, the read set); formatters are
written against this view so that they never depend on the engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..files.discover import SourceFile
    from ..findings import FileError, Finding


class Analysed(Protocol):
    findings: list[Finding]  # the reported findings (with `--show-latent`, the latent ones too)
    latent: list[Finding]  # low-confidence findings the report leaves out unless asked
    errors: list[FileError]
    stats: dict
    files: list[SourceFile]
    fixed: list[Finding] | None  # with `--new-since REF --show-fixed`: REF's findings that are gone
