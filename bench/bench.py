"""Benchmark attn-lint against the floor of a Python tool and against pylint (run by hand, not in CI).

    python bench/bench.py                      # sglang 0.5.23 from PyPI, whole package and sglang/srt
    python bench/bench.py --tree DIR --runs 5  # any tree
    python bench/bench.py --pylint             # also pylint's closest checks (minutes to tens of minutes)
    python bench/bench.py --scaling            # 1/4, 1/2, all of the tree: table (and PNG with matplotlib)
    python bench/bench.py --no-server          # skip the resident-server (--server) measurements

Each measurement runs in a child process; wall time, CPU time (user+sys of the child) and peak RSS
come from os.wait4. The figure reported is the median of --runs runs (the machine is noisy); cold
runs alternate with the floor, and the cold run's ratio to the floor is reported per pair.
"One file changed" is a real code edit (a function with a probe and a call appended to the
largest file), restored after each run. Per-phase times come from the run's own JSON stats.
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
FLOOR_LIBCST = ("import libcst,sys\nfor p in sys.argv[1:]:\n    try:\n"
                "        libcst.parse_module(open(p,'rb').read())\n"
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


# Users' Pythons write bytecode caches; a sandbox that sets PYTHONDONTWRITEBYTECODE would charge every
# run for compiling attn-lint itself. Measured commands run with the default.
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "CI")}
# The pre-commit and server measurements run `python -m attn_lint` from a temporary project folder:
# this checkout must be importable there too, installed or not.
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV["PYTHONPATH"] = os.pathsep.join(p for p in (_CHECKOUT, ENV.get("PYTHONPATH", "")) if p)

TARGETS = {  # the targets on the 2-core machine, whole package
    "attn-lint cold": 15.0,
    "attn-lint warm": 0.5,
    "attn-lint one file changed": 1.0,
    "pre-commit hook, that file changed": 1.0,
    "--server: one file changed": 1.0,
    "--server: pre-commit hook, that file changed": 1.0,
}
PEAK_MB = 2048


def measure(argv: list[str], env: dict | None = None, stats: bool = False, ok=(0, 1)) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE if stats else subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env or ENV)
    out = proc.stdout.read() if stats else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        raise RuntimeError(f"{argv[:3]} exited {code}: {err[-500:]}")
    result = {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}
    if stats:
        doc = json.loads(out)["stats"]
        result["analysis_s"] = doc.get("seconds", 0.0)
        for name, seconds in (doc.get("phases") or {}).items():
            result[f"phase:{name}"] = seconds
    return result


def median_of(runs: int, fn) -> dict:
    return _median_dict([fn() for _ in range(runs)])


def _median_dict(samples: list[dict]) -> dict:
    keys = set().union(*samples)
    return {k: statistics.median(s.get(k, 0.0) for s in samples) for k in sorted(keys)}


def py_files(tree: str) -> list[str]:
    out = []
    for d, dirs, files in os.walk(tree):
        dirs[:] = sorted(x for x in dirs if x not in ("__pycache__",))
        out.extend(os.path.join(d, f) for f in sorted(files) if f.endswith(".py"))
    return out


def lint(tree: str, cache: str, extra: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "attn_lint", "--format", "json", "--cache-dir", cache, *(extra or []), tree]


class Edit:
    """A real code edit (a new function with a probe and a call), then the file restored: the
    summary, the sites and the tree model all change, as they do when someone edits code."""

    def __init__(self, path: str):
        self.path = path
        with open(path, "rb") as fh:
            self.original = fh.read()

    def __enter__(self):
        n = time.time_ns()
        with open(self.path, "ab") as fh:
            fh.write((f"\n\ndef _bench_edit_{n}(backend, batch):\n"
                      f"    if hasattr(backend, \"init_forward_metadata\"):\n"
                      f"        backend.init_forward_metadata(batch)\n"
                      f"    return backend\n").encode())
        return self

    def __exit__(self, *exc):
        with open(self.path, "wb") as fh:
            fh.write(self.original)
        # A later run must see the restore as a change even within one mtime tick.
        os.utime(self.path, ns=(time.time_ns(), time.time_ns()))


def bench_tree(tree: str, runs: int, with_pylint: bool, with_libcst: bool, with_server: bool) -> dict:
    files = py_files(tree)
    lines = sum(open(f, "rb").read().count(b"\n") for f in files)
    result = {"tree": tree, "files": len(files), "lines": lines}

    def cold():
        cache = tempfile.mkdtemp(prefix="al-cold-")
        try:
            return measure(lint(tree, cache), stats=True)
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    def floor():
        return measure([sys.executable, "-c", FLOOR_AST, *files])

    # The floor and a cold run in turns: on a shared machine the speed drifts over minutes, and the
    # cold run's ratio to the floor (what the target is stated in) is steadier within a pair than
    # between medians taken minutes apart.
    pairs = [(floor(), cold()) for _ in range(runs)]
    result["attn-lint cold"] = _median_dict([c for _, c in pairs])
    result["floor: ast.parse, 1 process"] = _median_dict([f for f, _ in pairs])
    result["cold / floor, pairs"] = sorted(c["wall"] / f["wall"] for f, c in pairs)
    cache = tempfile.mkdtemp(prefix="al-warm-")
    measure(lint(tree, cache))
    result["attn-lint warm"] = median_of(runs, lambda: measure(lint(tree, cache), stats=True))

    victim = max(files, key=os.path.getsize)
    result["edited file"] = os.path.relpath(victim, tree)

    def one_changed(extra=None):
        with Edit(victim):
            return measure(lint(tree, cache, extra), stats=True)

    result["attn-lint one file changed"] = median_of(runs, one_changed)
    measure(lint(tree, cache))
    result["one file on its own (no cross-file view)"] = median_of(runs, lambda: measure(lint(victim, cache)))

    # pre-commit: the hook passes the changed file; attn-lint finds the project root from
    # pyproject.toml, analyses the whole project through the cache and keeps that file's findings.
    project = tempfile.mkdtemp(prefix="al-project-")
    name = os.path.basename(tree)
    # A copy, not a link: a configuration's `src` may not lead out of its project.
    shutil.copytree(tree, os.path.join(project, name))
    with open(os.path.join(project, "pyproject.toml"), "w") as fh:
        fh.write(f'[tool.attn-lint]\nsrc = ["{name}"]\n')
    rel = os.path.join(name, os.path.relpath(victim, tree))

    def hook(extra=()):
        return [sys.executable, "-m", "attn_lint", "--changed-files", "--format", "json", "--cache-dir", cache,
                *extra, rel]

    def in_project(argv):
        cwd = os.getcwd()
        os.chdir(project)
        try:
            return measure(argv, stats=True)
        finally:
            os.chdir(cwd)

    def hook_changed(extra=()):
        with Edit(os.path.join(project, rel)):
            return in_project(hook(extra))

    in_project(hook())
    result["pre-commit hook, file unchanged since last run"] = median_of(runs, lambda: in_project(hook()))
    result["pre-commit hook, that file changed"] = median_of(runs, hook_changed)

    if with_server:
        # The resident server (attn-lint --server): started once, as a user's first --server run
        # would; then the same edits. Its own memory is read from /proc (it is not a child here).
        server = [sys.executable, "-m", "attn_lint", "server"]
        subprocess.run([*server, "start", "--cache-dir", cache], check=True, env=ENV, stdout=subprocess.DEVNULL)
        try:
            with Edit(victim):  # a change, so that this run loads every summary into the server
                result["--server: first run after start (loads the tree)"] = measure(
                    lint(tree, cache, ["--server"]), stats=True)
            result["--server: warm"] = median_of(runs, lambda: measure(lint(tree, cache, ["--server"]), stats=True))
            result["--server: one file changed"] = median_of(runs, lambda: one_changed(["--server"]))
            in_project(hook(["--server"]))
            result["--server: pre-commit hook, that file changed"] = median_of(
                runs, lambda: hook_changed(["--server"]))
            result["server process peak MB"] = _server_peak_mb(cache)
        finally:
            # --all: the hook's runs belong to the temporary project, whose server is another one.
            subprocess.run([*server, "stop", "--all", "--cache-dir", cache], env=ENV, stdout=subprocess.DEVNULL)
    shutil.rmtree(project, ignore_errors=True)
    result["floor: ast.parse, 1 process"] = result.pop("floor: ast.parse, 1 process")  # listed last
    if with_libcst:
        result["floor: libcst.parse_module, 1 process"] = measure([sys.executable, "-c", FLOOR_LIBCST, *files])
    if with_pylint:
        result["pylint closest checks"] = measure(
            [sys.executable, "-m", "pylint", "--disable=all",
             "--enable=arguments-differ,too-many-function-args,unexpected-keyword-arg,no-member",
             "--jobs=0", "--recursive=y", tree], ok=range(32))  # pylint's status is a bit mask of message kinds
    shutil.rmtree(cache, ignore_errors=True)
    return result


def _server_peak_mb(cache: str) -> float:
    out = subprocess.run([sys.executable, "-m", "attn_lint", "server", "status", "--cache-dir", cache],
                         capture_output=True, text=True, env=ENV).stdout
    try:
        pid = int(out.split("pid ", 1)[1].split()[0])
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (IndexError, ValueError, OSError):
        pass
    return float("nan")


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

        def cold(tmp=tmp):
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
    print(f"\n{result['tree']}: {result['files']:,} files, {result['lines']:,} lines; "
          f"edits go to {result.get('edited file')}")
    base = result.get("floor: ast.parse, 1 process")
    print(f"{'measurement':46} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'vs ast':>7}  target")
    for key, m in result.items():
        if not isinstance(m, dict):
            continue
        ratio = f"{m['wall'] / base['wall']:.2f}x" if base else ""
        target = TARGETS.get(key)
        verdict = ""
        if target is not None:
            verdict = f"<= {target:g} s: " + ("met" if m["wall"] <= target else
                                              f"MISSED by {m['wall'] - target:.2f} s")
        if m["rss_mb"] > PEAK_MB:
            verdict += f"; peak over {PEAK_MB} MB"
        print(f"{key:46} {m['wall']:8.2f} {m['cpu']:8.2f} {m['rss_mb']:8.0f} {ratio:>7}  {verdict}")
    pairs = result.get("cold / floor, pairs")
    if pairs:
        print(f"{'cold / floor, measured in turns':46} median {statistics.median(pairs):.3f}x "
              f"of {len(pairs)} pairs ({', '.join(f'{r:.3f}' for r in pairs)}); target <= 1.1x: "
              + ("met" if statistics.median(pairs) <= 1.1 else "MISSED"))
    if "server process peak MB" in result:
        print(f"{'server process peak memory':46} {'':8} {'':8} {result['server process peak MB']:8.0f}")
    print("\nwhere the time goes (median seconds inside the analysis; the rest of wall is start-up, "
          "reading the cache or talking to the server, and output):")
    for key, m in result.items():
        if isinstance(m, dict) and "analysis_s" in m and ("changed" in key or key == "attn-lint warm"):
            phases = ", ".join(f"{k[6:]} {v:.3f}" for k, v in m.items() if k.startswith("phase:") and v >= 0.001)
            print(f"  {key}: analysis {m['analysis_s']:.3f} of {m['wall']:.3f} wall ({phases})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", help="tree(s) to measure (default: sglang and sglang/srt)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--download-dir", default=os.path.expanduser("~/.cache/attn-lint-bench"))
    ap.add_argument("--pylint", action="store_true", help="also run pylint's closest checks (slow)")
    ap.add_argument("--libcst", action="store_true", help="also the libcst parse floor (slow)")
    ap.add_argument("--scaling", action="store_true", help="cold time for 1/4, 1/2, all of the first tree")
    ap.add_argument("--no-server", action="store_true", help="skip the --server measurements")
    ap.add_argument("--json", help="write all figures to this file")
    args = ap.parse_args()
    trees = args.tree
    if not trees:
        pkg = fetch_sglang(SGLANG, args.download_dir)
        trees = [pkg, os.path.join(pkg, "srt")]
    report = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "trees": []}
    for tree in trees:
        result = bench_tree(tree, args.runs, args.pylint, args.libcst, not args.no_server)
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
