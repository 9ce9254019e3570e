"""The clean process of `--verify` (clean_process.py starts it): analyse the paths again, confine
itself, check the findings asked for, reply with their verdicts as JSON on stdout."""

from __future__ import annotations

import json
import sys

from ..linter.app.engine import Settings, analyse
from .clean_process import key_of
from .confine import confine, set_dumpable
from .verify import run_for_cli


def main() -> int:
    """The clean process: analyse, confine, verify, reply."""
    request = json.loads(sys.stdin.buffer.read())
    set_dumpable(False)
    notes = confine(hidden=tuple(request["hidden"]), read_only=tuple(request["protect"]))
    given = request["settings"]
    settings = Settings(**{**given, "select": tuple(given["select"]), "ignore": tuple(given["ignore"]),
                           "exclude": tuple(given["exclude"]),
                           "link_roots": tuple(given["link_roots"]) if given["link_roots"] is not None else None,
                           "cache_dir": None})
    result = analyse(request["paths"], settings, keep_context=True)
    wanted = set(request["findings"])
    by_key = {key_of(f): f for f in result.findings if key_of(f) in wanted}
    result.findings = list(by_key.values())
    result.latent = []
    verdicts, problem = run_for_cli(result, gpu=request["gpu"], task_time_limit=request["task_time_limit"],
                                    memory_limit=request["memory_limit"])
    reply = {"verdicts": {key_of(f): v.to_json() for f, v in verdicts.items()},
             "controls": [c.to_json() for c in getattr(verdicts, "controls", [])], "gpu_problem": problem,
             "notes": notes}
    sys.stdout.write(json.dumps(reply))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
