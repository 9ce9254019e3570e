"""`--verify` in a process that never held the caller's secrets.

The children that import the user's code used to be forks of attn-lint itself, so each began
with everything attn-lint had: the caller's whole environment (a CI job's tokens), the cache's
seal key in memory, the result channels of the findings after it. Scrubbing a fork cannot undo
that (a freed string stays in memory). So the command line runs verification in a fresh
interpreter, started with an allow-listed environment (confine.py) and no cache: it analyses the
same paths with the same settings, confines itself, and forks one child per finding from there
(isolate.py), none of which can reach another's result. attn-lint itself is not dumpable
meanwhile, so none can read its memory or environment through /proc.

The parent sends the request as JSON on the child's stdin and reads the verdicts back as JSON,
validated like any child's result; a finding the clean analysis does not find again (a file
changed meanwhile) is unverifiable, never guessed at.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from typing import Any

from ..linter.app.engine import Settings
from ..linter.findings import Finding
from ..linter.model.identity import identity
from .confine import clean_environment, set_dumpable

_MAX_REPLY = 256 * 2**20  # a reply larger than this is not one of ours
SETTINGS = ("select", "ignore", "exclude", "jobs", "astroid", "astroid_budget", "max_file_bytes", "link_roots")


def key_of(f: Finding) -> str:
    """A finding, the same in both processes (paths are not: the command line rebases them)."""
    return json.dumps([identity(f), f.code, f.class_name, f.member, os.path.basename(f.path), f.line, f.column])


@dataclasses.dataclass
class CleanRun:
    """What the clean process handed back: verdicts by finding key (JSON, validated by the caller),
    the GPU controls, the GPU problem, and a problem of the whole run (it did not finish)."""

    verdicts: dict[str, Any]
    controls: list
    gpu_problem: str | None
    problem: str | None = None
    notes: list[str] = dataclasses.field(default_factory=list)  # what the confinement could not do


def run_clean(paths: list[str], settings: Settings, findings: list[Finding], *, gpu: bool, task_time_limit: float,
              memory_limit: int | None, protect: tuple[str, ...] = ()) -> CleanRun:
    """The parent's side: start the clean process, hand it the request, read its reply.
    `protect`: folders the checked code must not write (the cache's)."""
    from ..linter.perfile.cache import key_file
    request = {"paths": list(paths), "settings": {k: getattr(settings, k) for k in SETTINGS},
               "findings": [key_of(f) for f in findings], "gpu": gpu, "task_time_limit": task_time_limit,
               "memory_limit": memory_limit, "protect": list(protect), "hidden": [key_file()]}
    was = set_dumpable(False)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "attn_lint.runtime_check.clean_main"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=clean_environment(os.environ), start_new_session=True, close_fds=True)
        try:
            out, _ = proc.communicate(json.dumps(request).encode(), timeout=_deadline(len(findings), task_time_limit,
                                                                                   gpu))
        except subprocess.TimeoutExpired:
            _kill(proc)
            return CleanRun({}, [], None, "the verification process did not finish in time")
        except BaseException:
            _kill(proc)
            raise
    finally:
        if was:
            set_dumpable(True)
    if proc.returncode != 0 or len(out) > _MAX_REPLY:
        return CleanRun({}, [], None, f"the verification process ended with status {proc.returncode}")
    try:
        reply = json.loads(out)
        verdicts, controls, problem, notes = reply["verdicts"], reply["controls"], reply["gpu_problem"], reply["notes"]
        if not (isinstance(verdicts, dict) and isinstance(controls, list)
                and (problem is None or isinstance(problem, str))
                and isinstance(notes, list) and all(isinstance(n, str) for n in notes)):
            raise ValueError
    except (ValueError, TypeError, KeyError):
        return CleanRun({}, [], None, "the verification process sent a reply that is not one")
    return CleanRun(verdicts, controls, problem, notes=notes)


def _deadline(n: int, task_time_limit: float, gpu: bool) -> float:
    """Generous: the analysis, two attempts per finding, the GPU step's build and controls."""
    from .isolate import GPU_BUILD_ALLOWANCE
    return 600 + (2 * n + 4) * (task_time_limit + (GPU_BUILD_ALLOWANCE if gpu else 0))


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.kill()
    proc.wait()
