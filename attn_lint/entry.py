"""The console script: run the CLI without the cyclic collector, then leave without tearing down the heap.

A run over a large tree holds millions of small objects; freeing them one by one at interpreter
exit costs seconds and changes nothing (mypy and others exit the same way). Output is flushed
first, so nothing is lost.
"""

import os
import sys


def main() -> None:
    # One run, then exit: the cyclic collector would only scan the tree's millions of acyclic
    # objects (more than a second on large trees, after the engine re-enables it) and free nothing.
    import gc
    gc.disable()

    from attn_lint.linter.app.cli import main as cli

    code = 0
    try:
        cli()
    except SystemExit as exc:
        if isinstance(exc.code, int):
            code = exc.code
        elif exc.code is not None:
            print(exc.code, file=sys.stderr)
            code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):
        code = code or 1
    os._exit(code)
