"""A mutation run: small faults put one at a time into the analysis code, and whether the tests
notice. A mutant that survives is a behaviour no test pins (or an equivalent mutant).

    python bench/mutation.py [--files rules/*.py linter/model/families.py linter/model/callgraph.py] \
        [--max 40] [--seed 1]

Works on a copy of the checkout (never on the working tree): each mutant is written there, the
test subset runs against it (`-m "not network and not slow"`), and the copy is restored. Mutation
points: comparison operators flipped (`==`/`!=`, `<`/`>=`, `in`/`not in`, `is`/`is not`), `and`/`or`
swapped, a `not` dropped, an integer constant moved by one, a `True`/`False` constant negated, and a
`continue`/`return None` guard's condition negated. Writes bench/results/mutation.json and prints
each surviving mutant with its place.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Tests that exercise the rules and the family model directly (the rest are output, CLI, cache,
# verification and real-code tests, slow or not about these files).
SUBSET = ["tests/test_rules_examples.py", "tests/test_fixtures.py", "tests/test_nested_wrappers.py",
          "tests/test_narrowing.py", "tests/test_passed_values.py", "tests/test_signal_wrapper_role.py",
          "tests/test_unknown_delegate.py", "tests/test_opaque_bases.py", "tests/test_evidence_chain.py",
          "tests/test_al003_placeholders.py", "tests/test_override_drops_parameter.py",
          "tests/test_al002_own_delegates.py", "tests/test_wrapper_hierarchy.py", "tests/test_wrapper_internal.py",
          "tests/test_abstract_intermediate.py", "tests/test_union_reach.py", "tests/test_state_not_hook.py",
          "tests/test_forwarding_api.py", "tests/test_override_returns.py", "tests/test_constant_answers.py",
          "tests/test_class_values.py", "tests/test_guards.py", "tests/test_unknown_is_latent.py",
          "tests/test_unwrapped_locals.py", "tests/test_al002_facade.py"]
_FLIP = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
         ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def points(tree: ast.AST) -> list[tuple[int, str]]:
    """(node index in ast.walk order, what the mutation does) for each mutable node."""
    out = []
    for i, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
            out.append((i, f"{type(node.ops[0]).__name__} -> {_FLIP[type(node.ops[0])].__name__}"))
        elif isinstance(node, ast.BoolOp):
            out.append((i, "and <-> or"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append((i, "drop `not`"))
        elif isinstance(node, ast.Constant) and type(node.value) is int and not isinstance(node.value, bool):
            out.append((i, f"{node.value} -> {node.value + 1}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            out.append((i, f"{node.value} -> {not node.value}"))
        elif isinstance(node, ast.If) and len(node.body) == 1 and isinstance(node.body[0], (ast.Continue, ast.Return)) \
                and (not isinstance(node.body[0], ast.Return) or node.body[0].value is None
                     or isinstance(node.body[0].value, ast.Constant)):
            out.append((i, "negate a guard"))
    return out


def mutate(tree: ast.AST, index: int) -> None:
    node = list(ast.walk(tree))[index]
    if isinstance(node, ast.Compare):
        node.ops = [_FLIP[type(node.ops[0])]()]
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.UnaryOp):
        # `not x` -> `not not x`: the truth of x itself, whatever x is (no unary + on objects)
        node.operand = ast.UnaryOp(ast.Not(), node.operand)
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        node.value = not node.value
    elif isinstance(node, ast.Constant):
        node.value += 1
    elif isinstance(node, ast.If):
        node.test = ast.UnaryOp(ast.Not(), node.test)


def run_tests(copy: Path, timeout: float, tests: list[str] | None = None) -> tuple[bool, float]:
    start = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        # (not the style check: ast.unparse writes the mutant's module in its own layout)
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                               "-m", "not network and not slow", "--ignore=tests/test_ruff_clean.py",
                               *(SUBSET if tests is None else tests)],
                              cwd=copy, env=env,
                              capture_output=True, text=True, timeout=timeout)
        killed = proc.returncode != 0
    except subprocess.TimeoutExpired:
        killed = True  # a mutant that hangs is noticed
    return killed, time.monotonic() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    rules = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "rules").glob("*.py"))
    ap.add_argument("--files", nargs="*", default=[*rules, "linter/model/families.py", "linter/model/callgraph.py"])
    ap.add_argument("--max", type=int, default=40, help="mutants sampled over all files")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--recheck", action="store_true",
                    help="run the survivors of bench/results/mutation.json against the whole fast suite")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    copy = Path(tempfile.mkdtemp(prefix="attn-lint-mutation-"))
    try:
        # Every file git tracks (the tests read docs/, bench/, .ci/ too), as the working tree has it.
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        for rel in filter(None, listed.decode().split("\0")):
            if (ROOT / rel).is_file():
                (copy / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, copy / rel)
        subprocess.run(["git", "init", "-q"], cwd=copy, check=True)  # tests that ask git for the root
        out = ROOT / "bench" / "results" / "mutation.json"
        tests = ["tests"] if args.recheck else None
        killed, seconds = run_tests(copy, args.timeout * (4 if args.recheck else 1), tests)
        if killed:
            print("the tests fail on the unmutated copy: fix that first", file=sys.stderr)
            return 2
        print(f"baseline: the {'whole fast suite' if args.recheck else 'subset'} passes in {seconds:.0f} s")
        if args.recheck:
            return _recheck(copy, out, args.timeout)
        # The copy is the snapshot: edits to the checkout while the run goes on change nothing.
        originals = {rel: (copy / rel).read_text() for rel in args.files}
        candidates = []
        for rel in args.files:
            candidates += [(rel, i, what) for i, what in points(ast.parse(originals[rel]))]
        chosen = sorted(rng.sample(candidates, min(args.max, len(candidates))))
        rows = []
        for rel, index, what in chosen:
            original = originals[rel]
            tree = ast.parse(original)
            node = list(ast.walk(tree))[index]
            line = getattr(node, "lineno", 0)
            mutate(tree, index)
            (copy / rel).write_text(ast.unparse(ast.fix_missing_locations(tree)) + "\n")
            killed, seconds = run_tests(copy, args.timeout)
            (copy / rel).write_text(original)
            rows.append({"file": rel, "line": line, "index": index, "mutation": what, "killed": killed,
                         "seconds": round(seconds, 1)})
            print(f"{'killed  ' if killed else 'SURVIVED'} {rel}:{line}  {what}  ({seconds:.0f} s)", flush=True)
        survived = [r for r in rows if not r["killed"]]
        summary = {"mutants": len(rows), "killed": len(rows) - len(survived), "candidates": len(candidates),
                   "files": args.files, "seed": args.seed, "rows": rows}
        out.write_text(json.dumps(summary, indent=1) + "\n")
        print(f"{len(rows) - len(survived)} of {len(rows)} mutants killed; results in {out.relative_to(ROOT)}")
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    return 0


def _recheck(copy: Path, out: Path, timeout: float) -> int:
    """Each survivor of the last run against every fast test (`killed_by_full_suite`)."""
    summary = json.loads(out.read_text())
    for row in summary["rows"]:
        if row["killed"] or row.get("index") is None:
            continue
        original = (copy / row["file"]).read_text()
        tree = ast.parse(original)
        mutate(tree, row["index"])
        (copy / row["file"]).write_text(ast.unparse(ast.fix_missing_locations(tree)) + "\n")
        killed, seconds = run_tests(copy, timeout * 4, tests=["tests"])
        (copy / row["file"]).write_text(original)
        row["killed_by_full_suite"] = killed
        print(f"{'killed  ' if killed else 'SURVIVED'} {row['file']}:{row['line']}  {row['mutation']}  "
              f"(whole fast suite, {seconds:.0f} s)", flush=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
