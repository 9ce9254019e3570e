"""The pipeline: discover -> summaries (cached, parallel) -> index -> rules -> sorted findings."""

from __future__ import annotations

import functools
import gc
import marshal
import os
import struct
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..files.discover import MAX_FILE_BYTES, SourceFile, discover, import_root, open_source
from ..files.read_set import Reads, ReadSet
from ..findings import FileError, Finding
from ..inference.side_process import close_parent_fds, fork_helper, settle_in_child
from ..model.confidence import partly_assessed
from ..model.identity import identified
from ..perfile.cache import SUMMARY_KEY, TOOL_KEY, Cache, content_hash, default_cache_dir, entry_name, sealed
from ..perfile.codec import Parsed as _Parsed
from ..perfile.codec import decode_own

if TYPE_CHECKING:  # the annotation only: the tree passes load where a run needs them (below)
    from ..model.context import Context

# The tree passes (index, context, rules, astroid) are imported where a run needs them, not here:
# a run answered by the resident server, or from the whole-result cache, never loads them.

PER_CALL = 0.25  # seconds of astroid for one query
PARALLEL_THRESHOLD = 48  # below this many files to parse, worker start-up costs more than it saves


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    jobs: int = 0  # 0: one worker per core
    cache_dir: str | None = field(default_factory=default_cache_dir)  # None: no cache
    astroid: bool = True
    astroid_budget: float = 0.5  # seconds of astroid per run, all queries together
    max_file_bytes: int = MAX_FILE_BYTES
    # Where links met while walking a folder may lead besides that folder (the CLI: the project
    # root); None follows every link, as a caller of the library asks.
    link_roots: tuple[str, ...] | None = None
    # Where the paths a report shows start from (the CLI: the folder it was started in, so that
    # every path printed opens from there); None: from the folder each file was found under.
    display_base: str | None = None

    def rules(self):
        from ...rules import TREE_RULES
        chosen = []
        for rule in TREE_RULES:
            if self.select and not any(rule.code.startswith(s) for s in self.select):
                continue
            if any(rule.code.startswith(i) for i in self.ignore):
                continue
            chosen.append(rule)
        return chosen

    def key(self) -> str:
        shown = () if self.display_base is None else (self.display_base,)
        return repr((sorted(r.code for r in self.rules()), self.astroid, self.max_file_bytes, *shown))

    @property
    def workers(self) -> int:
        """How many processes the per-file pass may use: `jobs`, or one per core (0)."""
        return self.jobs or os.cpu_count() or 1


@dataclass
class Result:
    findings: list[Finding]
    errors: list[FileError]
    stats: dict
    files: list[SourceFile] = field(default_factory=list)
    context: Context | None = None
    digests: dict[str, str] = field(default_factory=dict)  # path -> content_hash of the bytes analysed
    # Low-confidence findings (latent drift), split from `findings` by the CLI's postprocess; the
    # engine and its caches keep every finding in `findings`.
    latent: list[Finding] = field(default_factory=list)
    # With --new-since REF --show-fixed: the findings REF had that are gone (paths as at REF).
    fixed: list[Finding] | None = None
    # What the analysis read beyond the analysed files (read_set.py); None where not known.
    reads: ReadSet | None = None


def _parse_bytes(data: bytes, path: str, max_bytes: int, digest: str) -> _Parsed:
    if len(data) > max_bytes:
        return _Parsed(digest, None, ("too-large", f"{len(data) / 1e6:.1f} MB is over the "
                                                   f"{max_bytes / 1e6:.0f} MB limit; skipped", 0))
    if b"\0" in data:
        return _Parsed(digest, None, ("binary", "contains NUL bytes: not Python source", 0))
    from ..perfile.summary import summarise_source
    try:
        return _Parsed(digest, summarise_source(data, path), None)
    except SyntaxError as exc:
        msg = exc.msg or str(exc)
        kind = "decode-error" if ("codec can't decode" in msg or "unicode error" in msg) else "syntax-error"
        return _Parsed(digest, None, (kind, msg, exc.lineno or 0))
    except (ValueError, UnicodeDecodeError) as exc:
        return _Parsed(digest, None, ("decode-error", str(exc), 0))
    except RecursionError:
        return _Parsed(digest, None, ("too-complex", "could not parse: nested too deeply", 0))
    except MemoryError:
        if len(data) <= BOUNDED_ABOVE:  # no room to exhaust: CPython's parser gave up on the nesting
            return _Parsed(digest, None, ("too-complex", "could not parse: nested too deeply", 0))
        return _Parsed(digest, None, ("too-complex", _OVER_MEMORY, 0))
    except Exception as exc:  # a defect in the per-file pass: that file's diagnostic, not the run's end
        return _Parsed(digest, None, ("internal-error", f"attn-lint could not summarise this file "
                                                        f"({type(exc).__name__}: {exc}); please report it", 0))


# What summarising one file may take beyond what the process had (a syntax tree costs a few
# hundred bytes per token: an 8 MB list display of small numbers takes gigabytes); pool workers run
# under it, and a large file summarised here goes to a child that does.
FILE_MEMORY = 2 * 2**30
BOUNDED_ABOVE = 1 << 20  # bytes: smaller files cannot come near FILE_MEMORY


_OVER_MEMORY = "summarising it needs more memory than attn-lint gives one file"


def _limit_memory(extra: int) -> bool:
    """RLIMIT_AS at what the process has mapped now plus `extra` (the soft limit: ours to lift)."""
    try:
        import resource
        with open("/proc/self/statm") as fh:
            mapped = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = mapped + extra if hard == resource.RLIM_INFINITY else min(mapped + extra, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        return True
    except (ImportError, OSError, ValueError):
        return False


def _parse_bounded(data: bytes, path: str, max_bytes: int, digest: str) -> _Parsed:
    """`_parse_bytes` under FILE_MEMORY: in a forked child for a large file (this process has no
    limit of its own)."""
    if len(data) <= BOUNDED_ABOVE or not hasattr(os, "fork") or not os.path.exists("/proc/self/statm"):
        return _parse_bytes(data, path, max_bytes, digest)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(rfd)
            _limit_memory(FILE_MEMORY)
            plain = Cache.plain_bytes(_parse_bytes(data, path, max_bytes, digest))
            with os.fdopen(wfd, "wb") as fh:
                fh.write(plain)
        finally:
            os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as fh:
        plain = fh.read()
    os.waitpid(pid, 0)
    try:
        return decode_own(marshal.loads(plain))
    except Exception:  # the child died on the way (out of memory before it could say so)
        return _Parsed(digest, None, ("too-complex", _OVER_MEMORY, 0))


def _read(path: str, max_bytes: int) -> tuple[bytes | None, str | None]:
    """A source file's bytes (one more than the limit, so a file over it is seen), or why not."""
    try:
        with open_source(path) as fh:
            return fh.read(max_bytes + 1), None
    except OSError as exc:
        return None, exc.strerror or str(exc)


def _summarise_file(path: str, max_bytes: int, cache: Cache | None) -> tuple[_Parsed | None, str | None]:
    """Read, summarise and cache one file: (its summary, why the file could not be read)."""
    data, failure = _read(path, max_bytes)
    if data is None:
        return None, failure
    digest = content_hash(data)
    if cache is not None:
        # Same content seen before (another checkout, a moved tree, a reverted edit): no parse.
        hit = cache.get_summary(digest)
        if hit is not None:
            return hit, None
    parsed = _parse_bounded(data, path, max_bytes, digest)
    if cache is not None:
        cache.put_raw(digest, sealed(digest, Cache.plain_bytes(parsed)))
    return parsed, None


_worker_caches: dict[str, Cache] = {}  # one per folder and worker: Cache() makes its folder


def _worker_cache(cache_dir: str) -> Cache:
    return _worker_caches.get(cache_dir) or _worker_caches.setdefault(cache_dir, Cache(cache_dir))


def _worker(args: tuple[str, int, str | None, bool]) -> tuple[str, bytes | None, str | None, bool]:
    """A pool worker: one file's summary in plain marshal form (codec.decode_own rebuilds it), made
    here or checked here from the cache: the parent receives only summaries made or checked by its
    own workers, the slower checked decoding runs in parallel, and the plain form costs both sides
    less than pickling the objects (a fresh summary's is the cache entry's payload, made anyway;
    a checked entry's payload is passed on as it is). The last item says the summary is new and
    its entry still to be written (by the parent, when `write` is false: see _LateWrites)."""
    path, max_bytes, cache_dir, write = args
    data, failure = _read(path, max_bytes)
    if data is None:
        return path, None, failure, False
    digest = content_hash(data)
    cache = _worker_cache(cache_dir) if cache_dir else None
    if cache is not None:
        hit = cache.get_checked_plain(digest)
        if hit is not None:
            return path, hit, None, False
    plain = Cache.plain_bytes(_parse_bytes(data, path, max_bytes, digest))
    if cache is not None and write:
        cache.put_raw(digest, sealed(digest, plain))
    return path, plain, None, cache is not None and not write


def _load_worker(args: tuple[str, str]) -> tuple[str, bytes | None]:
    """A pool worker: the checked payload of one summary entry (None: a miss)."""
    digest, cache_dir = args
    return digest, _worker_cache(cache_dir).get_checked_plain(digest)


def _init_worker(parent: int, memory: int) -> None:
    gc.disable()  # summaries are acyclic; the collector only costs time here
    settle_in_child(parent)
    _limit_memory(memory)  # each worker summarises one file at a time: a file's bound


def _worker_memory(jobs: int) -> int:
    """A file's bound in each of `jobs` workers: FILE_MEMORY, or less where all of them at once
    would take more than half the machine's memory."""
    try:
        half = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):
        return FILE_MEMORY
    return max(min(FILE_MEMORY, half // max(jobs, 1)), 256 * 2**20)


def analyse(paths: list[str], settings: Settings | None = None, keep_context: bool = False,
            cache: Cache | None = None, progress=None) -> Result:
    """Analyse `paths`. `cache` replaces the on-disk cache named by the settings (the resident
    server passes one that keeps entries in memory). `progress(phase, done, total)`, when given,
    is called as the run goes (phases: discover, parse, load, index, then each rule's code); the
    engine itself never prints."""
    settings = settings or Settings()
    start = time.perf_counter()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    late = _LateWrites()
    from ..inference.astroid_child import AstroidChild
    child = AstroidChild(PER_CALL, settings.astroid_budget)
    cache = cache or Cache(settings.cache_dir)
    try:
        return _analyse(paths, settings, start, keep_context, cache, progress or _no_progress, late, child)
    finally:
        child.collect()  # a run that ended early: the child must not wait for ever
        late.wait()  # a run's entries exist when it returns
        cache.prune_if_due()
        if gc_was_enabled:
            gc.enable()


def _no_progress(phase: str, done: int, total: int) -> None:
    pass


def _analyse(paths: list[str], settings: Settings, start: float, keep_context: bool, cache: Cache,
             progress, late: _LateWrites, child) -> Result:
    phases: dict[str, float] = {}
    mark = [start]

    def phase(name: str) -> None:  # where the time went, for --statistics and the benchmark
        now = time.perf_counter()
        phases[name] = round(phases.get(name, 0.0) + now - mark[0], 4)
        mark[0] = now

    progress("discover", 0, 0)
    files, errors = discover(paths, settings.exclude, cache.path_sets_kept if cache.resident else 0,
                             settings.link_roots, settings.display_base)
    phase("discover")
    # The stat map names content digests, which are only valid for one summary format.
    stat_key = entry_name("stat", (SUMMARY_KEY, sorted(os.path.abspath(p) for p in paths)))
    old_stats: dict = (cache.load(stat_key) if cache.keeps_runs else None) or {}
    new_stats: dict = {}

    # 1. Which files changed: an unchanged stat keeps its content digest without a read. The ctime
    # and inode are in it because an edit can put the mtime back (`touch -r`, an unpacked archive)
    # at the same size; nothing but the kernel sets the ctime.
    digests: dict[str, str] = {}
    todo: list[str] = []
    # The stat taken before reading is the one recorded: a file that changes after it is read is
    # seen as changed by the next run, never the other way round.
    seen: dict[str, tuple[int, int, int, int]] = {}
    for f in files:
        try:
            st = os.stat(f.path)
        except OSError as exc:
            errors.append(FileError(f.display, "unreadable", exc.strerror or str(exc)))
            continue
        old = old_stats.get(f.path)
        seen[f.path] = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
        if old and old[0] == seen[f.path]:
            digests[f.path] = old[1]
            new_stats[f.path] = old
        else:
            todo.append(f.path)

    phase("stat")
    # 2. Parse what changed, in parallel when there is enough of it.
    parsed: dict[str, _Parsed] = {}
    read_failures: dict[str, str] = {}
    by_path = {f.path: f for f in files}

    def early_facts(path: str, p: _Parsed) -> None:
        # The per-module facts of the tree passes, computed while the workers still parse: the
        # parent waits for them anyway, and after the parse it would run alone on one core.
        if p.summary is not None:
            module_facts, derivations = _per_module_passes()
            f = by_path[path]
            derived = module_facts.facts_of(f.module, f.display, p.summary).derived
            for key, derive in derivations:
                if key not in derived:
                    derived[key] = derive(f.module, p.summary)

    progress("parse", 0, len(todo))
    if _astroid_aside(settings, cache, len(todo)):
        child.open()  # before the parse, while this process is small (astroid_aside.py)
    _parse_all(todo, settings, cache, parsed, read_failures, early_facts, progress, late,
               on_start=lambda: _warm_up(settings, aside=bool(child.pid)), seen=seen)
    late.start()
    for path in todo:
        if path in parsed:
            digests[path] = parsed[path].digest
            cache.keep(parsed[path].digest, parsed[path])
            new_stats[path] = (seen[path], parsed[path].digest)
    if new_stats != old_stats and cache.keeps_runs:
        cache.store(stat_key, new_stats)
    phase("parse")

    # 3. Nothing changed since a run with the same files and settings: reuse its result whole.
    rules = settings.rules()
    run_key = entry_name("result", (TOOL_KEY, settings.key(), [(f.display, f.module, digests.get(f.path))
                                                               for f in files]), size=16)
    base_stats = {"files": len(files), "parsed": len(todo), "cached": len(files) - len(todo), "phases": phases}
    roots = sorted({import_root(f) for f in files})
    cached = None if keep_context or not cache.keeps_runs else cache.load(run_key)
    if cached is not None and not Reads(roots, digests, content_hash).holds(cached["reads"]):
        cached = None  # a file astroid read beyond the analysed ones has changed since
    if cached is not None:
        errors.extend(cached["file_errors"])
        errors.extend(FileError(_display(files, p), "unreadable", m) for p, m in read_failures.items())
        result = _finish(cached["findings"], errors, {**base_stats, **cached["stats"], "reused_result": True},
                         files, None, rules, start)
        result.reads = cached["reads"]
        result.digests = digests
        return result

    # 4. Otherwise load every summary (from the cache where unchanged) and run the rules.
    from ..inference.astroid_aside import AsideBridge
    from ..inference.astroid_bridge import AstroidBridge, forget_modules
    from ..model.context import Context
    from ..model.index import Module, TreeIndex
    from ..model.outside_bases import outside_bases
    from ..model.own_imports import own_imports
    missing = [f.path for f in files if f.path in digests and f.path not in parsed]
    _load_all(missing, digests, settings, cache, parsed, early_facts, progress)
    lost = [p for p in missing if p not in parsed]  # evicted from the cache: parse again
    if lost:
        progress("parse", 0, len(lost))
    _parse_all(lost, settings, cache, parsed, read_failures, progress=progress)

    phase("load")
    modules: list[Module] = []
    file_errors: list[FileError] = []
    n_lines = 0
    for f in files:
        if f.path in read_failures:
            errors.append(FileError(f.display, "unreadable", read_failures[f.path]))
            continue
        p = parsed.get(f.path)
        if p is None:
            continue
        if p.error is not None:
            kind, message, line = p.error
            file_errors.append(FileError(f.display, kind, message, line))
            continue
        n_lines += p.summary.lines
        modules.append(Module(f.module, f, p.summary))
    errors.extend(file_errors)

    progress("index", 0, len(modules))
    index = TreeIndex(modules)
    deep = _too_deep(index)
    file_errors.extend(deep)
    errors.extend(deep)
    # astroid keeps parsed modules for the life of the process (the resident server's too).
    forget_modules(set(todo).union(p for p in old_stats if p not in seen))
    # astroid's answers are the project's own: another project's files never stand in for its.
    memo_key = entry_name("astroid", (TOOL_KEY, roots))
    memo = cache.load(memo_key) if settings.astroid and cache.keeps_runs else None
    memo = memo if isinstance(memo, dict) else {}
    bridge = None
    if settings.astroid:
        limits = {"per_call": PER_CALL, "budget": settings.astroid_budget, "memo": memo, "digests": digests}
        bridge = AsideBridge(index, child, **limits) if child.pid else AstroidBridge(index, **limits)
    context = Context.build(index, fallback=bridge)
    phase("index")
    from ..model import facts as module_facts
    module_facts.retain(stat_key, {module_facts.key_of(m.name, m.file.display, m.summary)
                                   for m in index.modules.values()}, cache.path_sets_kept)

    def run_rules(context: Context) -> list[Finding]:
        found: list[Finding] = []
        for n, rule in enumerate(rules):
            progress(rule.code, n, len(rules))
            found.extend(rule.check(context))
            phase(rule.code)
        return found

    findings = run_rules(context)
    if isinstance(bridge, AsideBridge) and bridge.finish():
        # astroid named a class for a receiver: the rules run again and read it from the memo.
        bridge.answers = 0
        context = Context.build(index, fallback=bridge)
        findings = run_rules(context)
    findings = identified(findings, rules, context)
    findings.sort(key=lambda f: f.sort_key)
    rule_stats = {
        "lines": n_lines, "classes": len(index.classes),
        "outside_bases": outside_bases(index),  # what tells a plug-in's host (scope.py)
        **dict(zip(("own_imports_misnamed", "own_imports"), own_imports(index))),
        "families": len({r for roots in context.model.family_members.values() for r in roots}),
        "wrappers": len(context.model.wrappers),
        # Where a hook is asked for (hasattr, getattr with a default, try/except AttributeError):
        # with the two counts above, what `--statistics` says when a tree gives no findings.
        "probe_sites": sum(len(sites) for sites in context.probes.values()),
        "probed_members": len(context.probes),
        "partly_assessed": partly_assessed(context),
        "astroid_queries": bridge.calls if bridge else 0,
        "astroid_answers": bridge.answers if bridge else 0,
        "astroid_seconds": round(bridge.spent, 3) if bridge else 0.0,
    }
    if cache.keeps_runs:
        if bridge is not None and bridge.learned:
            cache.store(memo_key, memo)
        cache.store(run_key, {"findings": findings, "file_errors": file_errors, "stats": rule_stats,
                              "reads": bridge.used if bridge is not None else ReadSet()})
    result = _finish(findings, errors, {**base_stats, **rule_stats}, files, context if keep_context else None,
                     rules, start)
    result.digests = digests  # --fix writes only a file that still holds what was analysed
    result.reads = bridge.used if bridge is not None else ReadSet()
    return result


def _too_deep(index) -> list[FileError]:
    """One diagnostic per file with classes deeper than the index follows (index.MAX_DEPTH)."""
    from ..model.index import MAX_DEPTH
    by_file: dict[str, list[str]] = {}
    for entry in sorted((index.classes[q] for q in index.too_deep), key=lambda e: (e.file.display, e.info.line)):
        by_file.setdefault(entry.file.display, []).append(entry.info.name)
    return [FileError(path, "too-deep", f"class hierarchy more than {MAX_DEPTH} levels deep: `{names[0]}`"
                      + (f" and {len(names) - 1} more" if len(names) > 1 else "")
                      + " analysed as if their bases were outside the tree", 0)
            for path, names in sorted(by_file.items())]


@functools.cache
def _per_module_passes():
    """The facts module and the signals' per-module derivations, loaded with the first summary
    that needs them: a run that reuses a whole result never does."""
    from ..model import facts
    from ..signals import per_module_derivations
    return facts, per_module_derivations()


def _astroid_aside(settings: Settings, cache: Cache, n_parsed: int) -> bool:
    """Whether astroid's queries run in a child (astroid_aside.py): on a run that parses many
    files (whose answers the memo cannot hold), where the tree passes leave a core idle; not in
    the resident server, whose astroid keeps what it parsed."""
    return (settings.astroid and not cache.resident and n_parsed >= PARALLEL_THRESHOLD
            and settings.workers > 1)


def _warm_up(settings: Settings, aside: bool) -> None:
    """What the tree passes need, loaded in the parent while the pool's workers parse their first
    files: the analysis modules and rules, and astroid's model of the builtins (which a query would
    otherwise build inside its own time; see astroid_bridge.prepare), unless astroid's child will
    build it on the idle core."""
    from ..model import context, index  # noqa: F401
    settings.rules()
    if settings.astroid and not aside:
        from ..inference.astroid_bridge import prepare
        prepare()


def _display(files: list[SourceFile], path: str) -> str:
    return next((f.display for f in files if f.path == path), path)


def _parse_all(paths: list[str], settings: Settings, cache: Cache, parsed: dict, failures: dict,
               on_result=None, progress=_no_progress, late: _LateWrites | None = None,
               on_start=None, seen: dict | None = None) -> None:
    if not paths:
        return
    total = len(paths)
    jobs = settings.workers
    pooled = jobs > 1 and len(paths) >= PARALLEL_THRESHOLD
    if pooled:
        # Largest files first, in small chunks: no worker is left alone with a big file at the end.
        # `seen`: path -> (mtime, size, ctime, inode), what the stat pass took, where it took it.
        paths = sorted(paths, key=lambda p: seen[p][1] if seen and p in seen else _size(p), reverse=True)
    defer = pooled and late is not None and late.open(cache)
    tasks = [(p, settings.max_file_bytes, cache.dir if cache.enabled else None, not defer) for p in paths]
    if pooled:
        with _pool(jobs) as pool:
            results = pool.map(_worker, tasks, chunksize=max(1, min(16, len(tasks) // (jobs * 8))))
            if on_start is not None:
                on_start()  # the workers have their first chunks: nothing comes back for a while
            for done, (path, plain, failure, fresh) in enumerate(results, 1):
                progress("parse", done, total)
                if failure is not None:
                    failures[path] = failure
                else:
                    parsed[path] = decode_own(marshal.loads(plain))
                    if fresh:
                        late.add(parsed[path].digest, plain)
                    if on_result is not None:
                        on_result(path, parsed[path])
        return
    for done, (path, max_bytes, _, _) in enumerate(tasks, 1):
        result, failure = _summarise_file(path, max_bytes, cache if cache.enabled else None)
        progress("parse", done, total)
        if failure is not None:
            failures[path] = failure
        else:
            parsed[path] = result


def _pool(jobs: int):
    """The per-file pass's worker processes (forked where the system can: they start at once and
    share what the parent has loaded), each ending with the parent."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                               initargs=(os.getpid(), _worker_memory(jobs)))


def _load_all(paths: list[str], digests: dict[str, str], settings: Settings, cache: Cache, parsed: dict,
              on_result, progress) -> None:
    """Load the summaries of unchanged files from the cache. On a large tree (a run after an edit,
    a CI job with a restored cache) the pool's workers read and check the entries while the
    parent rebuilds what they pass on and computes each module's facts, as during a parse."""
    unread = []
    for path in paths:
        kept = cache.in_memory(digests[path])  # the resident server's: no read
        if kept is not None:
            parsed[path] = kept
        else:
            unread.append(path)
    paths = unread
    jobs = settings.workers
    if jobs < 2 or len(paths) < PARALLEL_THRESHOLD or not cache.enabled:
        for n, path in enumerate(paths):
            if not n % 256:
                progress("load", n, len(paths))
            hit = cache.get_summary(digests[path])
            if hit is not None:
                parsed[path] = hit
        return
    by_digest: dict[str, list[str]] = {}
    for path in paths:
        by_digest.setdefault(digests[path], []).append(path)
    tasks = [(d, cache.dir) for d in by_digest]
    with _pool(jobs) as pool:
        chunk = max(1, min(64, len(tasks) // (jobs * 8)))
        for n, (digest, plain) in enumerate(pool.map(_load_worker, tasks, chunksize=chunk)):
            if not n % 256:
                progress("load", n, len(tasks))
            if plain is None:
                continue
            summary = decode_own(marshal.loads(plain))
            cache.keep(digest, summary)
            for path in by_digest[digest]:
                parsed[path] = summary
                on_result(path, summary)


class _LateWrites:
    """New summary entries, written by a child process while the parent runs the tree passes.

    A cold run has thousands of new entries. Written as one file each by the busy parsing workers,
    they cost most of a second of system time on a quiet ext4 (and up to a millisecond a file, 3
    to 4 s in all, on a busier one), paid in full by the parse's two busy cores, while the tree
    passes after the parse keep only one core busy. They go into one pack (Cache.put_pack),
    written by a child forked before the parse (while the parent is still small: forking it after
    would copy the page tables of every summary). As the workers hand over new summaries, the
    parent appends them to an unlinked temporary file the child holds too (no pipe to wait on);
    when the parse is done it closes a pipe, and the child reads the file, writes the pack and
    exits. The parent waits for it before the run returns, so a finished run's entries exist as
    before. Where fork is missing, or in the resident server (a process with client threads), the
    pool's workers write as they parse."""

    fork = staticmethod(getattr(os, "fork", None))
    _HEAD = struct.Struct("<II")  # a digest's length, then its summary's

    def __init__(self) -> None:
        self.pid = 0
        self._pipe = -1  # closed by the parent when the parse is done
        self._spool = -1  # the entries, appended by the parent
        self._sent: set[str] = set()  # identical files: one entry

    def open(self, cache: Cache) -> bool:
        """Start the writer; False where the workers must write their entries themselves."""
        if not (cache.enabled and not cache.resident and self.fork is not None):
            return False
        import tempfile
        try:
            spool, name = tempfile.mkstemp(prefix="attn-lint-spool-")
        except OSError:
            return False
        try:
            os.unlink(name)  # held by its descriptor alone, the writer's copy included
        except OSError:
            os.close(spool)
            return False
        read_end, write_end = os.pipe()

        def write() -> None:
            while os.read(read_end, 4096):
                pass  # the parent closes its end when the parse is done (or the run ends)
            entries = self._read_spool(spool)
            if entries:
                cache.put_pack(entries)

        self.pid = fork_helper(self.fork, write, child_fds=(read_end,), parent_fds=(write_end,))
        if not self.pid:
            os.close(spool)
            return False
        self._spool, self._pipe = spool, write_end
        return True

    def add(self, digest: str, plain: bytes) -> None:
        """One new summary (its plain form in marshal form), for the writer."""
        if self._spool < 0 or digest in self._sent:
            return
        self._sent.add(digest)
        name = digest.encode()
        record = [self._HEAD.pack(len(name), len(plain)), name, plain]
        try:
            whole = os.writev(self._spool, record) == sum(map(len, record))
        except OSError:
            whole = False
        if not whole:  # a full disk: this entry and the rest are misses next time, nothing follows a cut
            os.close(self._spool)
            self._spool = -1

    @classmethod
    def _read_spool(cls, fd: int) -> dict[str, bytes]:
        size = os.fstat(fd).st_size
        data = memoryview(os.pread(fd, size, 0))
        entries: dict[str, bytes] = {}
        at, head = 0, cls._HEAD.size
        while at + head <= len(data):
            n_name, n_plain = cls._HEAD.unpack_from(data, at)
            at += head
            name = bytes(data[at:at + n_name]).decode()
            plain = bytes(data[at + n_name:at + n_name + n_plain])
            if len(plain) != n_plain:
                break  # a write cut short (a full disk): what came before is whole
            entries[name] = plain
            at += n_name + n_plain
        return entries

    def start(self) -> None:
        """Let the writer go (the parse is done)."""
        if self._spool >= 0:
            os.close(self._spool)
        close_parent_fds(self._pipe)
        self._spool = self._pipe = -1

    def wait(self) -> None:
        self.start()  # a run that ended early: the writer must not wait for ever
        if self.pid:
            pid, self.pid = self.pid, 0
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _finish(findings, errors, stats, files, context, rules, start) -> Result:
    errors.sort(key=lambda e: (e.path, e.line))
    stats["errors"] = len(errors)
    stats["by_rule"] = {r.code: sum(1 for f in findings if f.code == r.code) for r in rules}
    stats["seconds"] = round(time.perf_counter() - start, 3)
    return Result(findings, errors, stats, files, context)
