"""Benchmark attn-lint against the floor of a Python tool and against pylint (run by hand, not in CI).

    python bench/bench.py                      # sglang 0.5.23 from PyPI, whole package and sglang/srt
    python bench/bench.py --tree DIR --runs 5  # any tree
    python bench/bench.py --pylint             # also pylint's closest checks (minutes to tens of minutes)
    python bench/bench.py --scaling            # 1/4, 1/2, all of the tree: table (and PNG with matplotlib)

Each measurement runs in a child process; wall time, CPU time (user+sys of the child) and peak RSS
come from os.wait4. The figure reported is the median of --runs runs (the machine is noisy).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

SGLANG = "0.5.23"
FLOOR_AST = "import ast,sys\nfor p in sys.argv[1:]:\n    ast.parse(open(p,'rb').read())\n"
FLOOR_LIBCST = ("import libcst,sys\nfor p in sys.argv[1:]:\n    try:\n        libcst.parse_module(open(p,'rb').read())\n"
                "    except Exception:\n        pass\n")


def fetch_sglang(version: str, dest: str) -> str:
    tree = os.path.join(dest, version)
    if os.path.isdir(os.path.join(tree, "sglang")):
        return os.path.join(tree, "sglang")
    os.makedirs(dest, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "--platform", "manylinux_2_34_x86_64", "--python-version", "3.11", f"sglang=={version}",
                    "-d", dest], check=True)
    wheel = next(os.path.join(dest, n) for n in os.listdir(dest) if n.startswith(f"sglang-{version}-"))
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tree, [n for n in zf.namelist() if n.startswith("sglang/")])
    return os.path.join(tree, "sglang")


def measure(argv: list[str], env: dict | None = None) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"{argv[:3]} exited {code}: {err[-500:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def median_of(runs: int, fn) -> dict:
    samples = [fn() for _ in range(runs)]
    return {k: statistics.median(s[k] for s in samples) for k in samples[0]}


def py_files(tree: str) -> list[str]:
    out = []
    for d, dirs, files in os.walk(tree):
        dirs[:] = sorted(x for x in dirs if x not in ("__pycache__",))
        out.extend(os.path.join(d, f) for f in sorted(files) if f.endswith(".py"))
    return out


def lint(tree: str, cache: str, extra: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "attn_lint", "--format", "json", "--cache-dir", cache, *(extra or []), tree]


def bench_tree(tree: str, runs: int, with_pylint: bool, with_libcst: bool) -> dict:
    files = py_files(tree)
    lines = sum(open(f, "rb").read().count(b"\n") for f in files)
    result = {"tree": tree, "files": len(files), "lines": lines}

    def cold():
        cache = tempfile.mkdtemp(prefix="al-cold-")
        try:
            return measure(lint(tree, cache))
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    result["attn-lint cold"] = median_of(runs, cold)
    cache = tempfile.mkdtemp(prefix="al-warm-")
    measure(lint(tree, cache))
    result["attn-lint warm"] = median_of(runs, lambda: measure(lint(tree, cache)))

    # One file changed: its content really changes (a comment appended), then is restored.
    victim = max(files, key=os.path.getsize)
    original = open(victim, "rb").read()

    def one_changed():
        with open(victim, "ab") as fh:
            fh.write(f"\n# bench edit {time.time_ns()}\n".encode())
        try:
            return measure(lint(tree, cache))
        finally:
            with open(victim, "wb") as fh:
                fh.write(original)

    result["attn-lint one file changed"] = median_of(runs, one_changed)
    measure(lint(tree, cache))
    result["attn-lint one file only (no cross-file view)"] = median_of(
        runs, lambda: measure(lint(victim, cache)))

    # pre-commit: the hook passes the changed file; attn-lint finds the project root from
    # pyproject.toml, analyses the whole project through the cache and keeps that file's findings.
    project = tempfile.mkdtemp(prefix="al-project-")
    name = os.path.basename(tree)
    os.symlink(tree, os.path.join(project, name))
    with open(os.path.join(project, "pyproject.toml"), "w") as fh:
        fh.write(f'[tool.attn-lint]\nsrc = ["{name}"]\n')
    rel = os.path.join(name, os.path.relpath(victim, tree))
    hook = [sys.executable, "-m", "attn_lint", "--changed-files", "--cache-dir", cache, rel]

    def in_project(argv):
        cwd = os.getcwd()
        os.chdir(project)
        try:
            return measure(argv)
        finally:
            os.chdir(cwd)

    in_project(hook)
    result["pre-commit hook, file unchanged since last run"] = median_of(runs, lambda: in_project(hook))

    def hook_changed():
        with open(victim, "ab") as fh:
            fh.write(f"\n# bench edit {time.time_ns()}\n".encode())
        try:
            return in_project(hook)
        finally:
            with open(victim, "wb") as fh:
                fh.write(original)

    result["pre-commit hook, that file changed"] = median_of(runs, hook_changed)
    shutil.rmtree(project, ignore_errors=True)
    result["floor: ast.parse, 1 process"] = median_of(
        max(1, runs // 2), lambda: measure([sys.executable, "-c", FLOOR_AST, *files]))
    if with_libcst:
        result["floor: libcst.parse_module, 1 process"] = measure([sys.executable, "-c", FLOOR_LIBCST, *files])
    if with_pylint:
        result["pylint closest checks"] = measure(
            [sys.executable, "-m", "pylint", "--disable=all",
             "--enable=arguments-differ,too-many-function-args,unexpected-keyword-arg,no-member",
             "--jobs=0", "--recursive=y", tree])
    shutil.rmtree(cache, ignore_errors=True)
    return result


def scaling(tree: str, runs: int) -> list[dict]:
    files = py_files(tree)
    rows = []
    for frac in (0.25, 0.5, 1.0):
        subset = files[: max(1, int(len(files) * frac))]
        tmp = tempfile.mkdtemp(prefix="al-scale-")
        root = os.path.dirname(tree)
        for f in subset:
            dst = os.path.join(tmp, os.path.relpath(f, root))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.symlink(f, dst)
        # Keep packages packages, so module names stay as in the full tree.
        for d, _, names in os.walk(os.path.join(tmp, os.path.basename(tree))):
            rel = os.path.relpath(d, tmp)
            init = os.path.join(root, rel, "__init__.py")
            if os.path.exists(init) and "__init__.py" not in names:
                os.symlink(init, os.path.join(d, "__init__.py"))

        def cold():
            cache = tempfile.mkdtemp(prefix="al-cold-")
            try:
                return measure(lint(os.path.join(tmp, os.path.basename(tree)), cache))
            finally:
                shutil.rmtree(cache, ignore_errors=True)

        m = median_of(runs, cold)
        lines = sum(open(f, "rb").read().count(b"\n") for f in subset)
        rows.append({"fraction": frac, "files": len(subset), "lines": lines, **m})
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def print_table(result: dict) -> None:
    print(f"\n{result['tree']}: {result['files']:,} files, {result['lines']:,} lines")
    base = result.get("floor: ast.parse, 1 process")
    print(f"{'measurement':42} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'vs ast floor':>12}")
    for key, m in result.items():
        if not isinstance(m, dict):
            continue
        ratio = f"{m['wall'] / base['wall']:.2f}x" if base else ""
        print(f"{key:42} {m['wall']:8.2f} {m['cpu']:8.2f} {m['rss_mb']:8.0f} {ratio:>12}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", help="tree(s) to measure (default: sglang and sglang/srt)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--download-dir", default=os.path.expanduser("~/.cache/attn-lint-bench"))
    ap.add_argument("--pylint", action="store_true", help="also run pylint's closest checks (slow)")
    ap.add_argument("--libcst", action="store_true", help="also the libcst parse floor (slow)")
    ap.add_argument("--scaling", action="store_true", help="cold time for 1/4, 1/2, all of the first tree")
    ap.add_argument("--json", help="write all figures to this file")
    args = ap.parse_args()
    trees = args.tree
    if not trees:
        pkg = fetch_sglang(SGLANG, args.download_dir)
        trees = [pkg, os.path.join(pkg, "srt")]
    report = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "trees": []}
    for tree in trees:
        result = bench_tree(tree, args.runs, args.pylint, args.libcst)
        print_table(result)
        report["trees"].append(result)
    if args.scaling:
        rows = scaling(trees[0], args.runs)
        report["scaling"] = rows
        print(f"\n{'fraction':>8} {'files':>7} {'lines':>10} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'us/line':>8}")
        for r in rows:
            print(f"{r['fraction']:8.2f} {r['files']:7,} {r['lines']:10,} {r['wall']:8.2f} {r['cpu']:8.2f} "
                  f"{r['rss_mb']:8.0f} {1e6 * r['wall'] / r['lines']:8.2f}")
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            fig, ax = plt.subplots(figsize=(5, 3.5))
            ax.plot([r["lines"] for r in rows], [r["wall"] for r in rows], "o-", label="wall s")
            ax.plot([r["lines"] for r in rows], [r["rss_mb"] / 100 for r in rows], "s--", label="peak MB / 100")
            ax.set_xlabel("lines analysed (cold)")
            ax.legend()
            fig.tight_layout()
            out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "scaling.png")
            fig.savefig(out, dpi=120)
            print(f"plot: {out}")
        except ImportError:
            print("(matplotlib not installed: no plot; pip install matplotlib)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)


if __name__ == "__main__":
    main()
