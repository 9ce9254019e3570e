"""Instructions the per-file pass executes, counted by callgrind (run by hand; needs valgrind).

    python bench/instructions.py                 # the summary walk over a fortieth of sglang 0.5.23
    python bench/instructions.py --part codec    # encode + marshal + load + rebuild of those summaries
    python bench/instructions.py --part facts    # the module facts the parent computes from them
    python bench/instructions.py --tree DIR --step 10

Wall and CPU time on a shared two-core machine swing by 10-20% from one run to the next, far more
than one change to the walk is worth. An instruction count under a fixed hash seed does not swing:
two runs of the same code agree to a few hundred instructions in 700 million, so a 0.2% change
shows. (Without PYTHONHASHSEED fixed, dict and set orders move the count by 1-2%.) Each figure is
the difference between two runs under valgrind, with and without the measured part, so that start-up,
reading and `ast.parse` cancel out. To compare two commits, run this in a worktree of each.
"""

from __future__ import annotations

import argparse
import ast
import gc
import marshal
import os
import re
import shutil
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT = os.path.dirname(_HERE)


def _child(tree: str, step: int, part: str, measured: bool) -> None:
    sys.path.insert(0, _HERE)
    import bench
    from attn_lint.linter.model import facts
    from attn_lint.linter.perfile import summary
    from attn_lint.linter.perfile.codec import Parsed, decode_own, encode_parsed
    gc.disable()
    trees = [ast.parse(open(p, "rb").read()) for p in bench.py_files(tree)[::step]]
    if part == "walk":
        if measured:
            for t in trees:
                summary.summarise_tree(t, 1)
        return
    summaries = [summary.summarise_tree(t, 1) for t in trees]
    if not measured:
        return
    for i, s in enumerate(summaries):
        if part == "codec":
            decode_own(marshal.loads(marshal.dumps(encode_parsed(Parsed("x", s, None)), 4)))
        else:
            facts._compute(f"m{i}", f"p{i}", s)


def _count(tree: str, step: int, part: str, measured: bool) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
           os.path.abspath(__file__), "--child", "--tree", tree, "--step", str(step), "--part", part]
    if measured:
        cmd.append("--measured")
    env = dict(os.environ, PYTHONHASHSEED="0",
               PYTHONPATH=os.pathsep.join(p for p in (_CHECKOUT, os.environ.get("PYTHONPATH", "")) if p))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stderr
    return int(re.search(r"Collected\s*:\s*(\d+)", out).group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", default=os.path.expanduser("~/.cache/attn-lint-bench/0.5.23/sglang"))
    ap.add_argument("--step", type=int, default=40, help="every STEP-th file of the tree")
    ap.add_argument("--part", choices=("walk", "codec", "facts"), default="walk")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--measured", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.tree, args.step, args.part, args.measured)
        return
    if shutil.which("valgrind") is None:
        sys.exit("bench/instructions.py needs valgrind (apt install valgrind)")
    if not os.path.isdir(args.tree):
        sys.exit(f"no tree at {args.tree}: run bench/bench.py once, or pass --tree")
    with_part = _count(args.tree, args.step, args.part, True)
    without = _count(args.tree, args.step, args.part, False)
    print(f"{args.part}: {with_part - without:,} instructions (every {args.step}th file of {args.tree})")


if __name__ == "__main__":
    main()
