"""astroid, asked only where the tree index cannot type a receiver, within a time bound.

Inference is far costlier than the index (it parses and infers whole modules), so the engine
asks only for probe receivers of hooks that a wrapper could hide, each call is cut off after a
per-call limit, and all calls together stop after a total budget.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager

from .discover import import_root
from .findings import Evidence
from .index import TreeIndex
from .resolve import Resolution


class _Timeout(Exception):
    pass


_TIMED_OUT = object()  # no answer for lack of time: not remembered


@contextmanager
def _time_limit(seconds: float):
    usable = (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def _raise(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def forget_modules(names: list[str]) -> None:
    """Drop astroid's parsed copies of modules whose files changed, and the inference caches that
    may hold answers derived from them. Nothing to do when astroid was never asked."""
    if not names or "astroid" not in sys.modules:
        return
    try:
        import astroid
        from astroid.context import _invalidate_cache
        from astroid.inference_tip import clear_inference_tip_cache
        from astroid.nodes._base_nodes import LookupMixIn
    except ImportError:  # another astroid layout: forget everything instead
        import astroid
        astroid.MANAGER.clear_cache()
        return
    for name in names:
        astroid.MANAGER.astroid_cache.pop(name, None)
    astroid.MANAGER._mod_file_cache.clear()  # a new or removed file can change what a name imports
    clear_inference_tip_cache()
    _invalidate_cache()
    LookupMixIn.lookup.cache_clear()


class AstroidBridge:
    def __init__(self, index: TreeIndex, per_call: float = 1.0, budget: float = 2.0,
                 memo: dict | None = None, digests: dict[str, str] | None = None):
        self.index = index
        # Answers from earlier runs, keyed by the probing file's content digest and position:
        # most trees give astroid nothing to add, and asking again on every run costs seconds.
        self.memo = memo if memo is not None else {}
        self.digests = digests or {}
        self.per_call = per_call
        self.budget = budget
        self.spent = 0.0
        self.calls = 0
        self.answers = 0
        self.timeouts = 0
        self._roots: list[str] | None = None

    def _import_roots(self) -> list[str]:
        if self._roots is None:
            self._roots = sorted({import_root(m.file) for m in self.index.modules.values()})
        return self._roots

    def infer(self, site, line: int, col: int, kind: str) -> Resolution | None:
        mod = self.index.modules.get(site.module)
        if mod is None:
            return None
        key = (self.digests.get(mod.file.path), line, col, kind)
        if key[0] is not None and key in self.memo:
            quals = self.memo[key]
        else:
            quals = self._infer(mod, line, col)
            if quals is _TIMED_OUT:
                return None
            if key[0] is not None:
                self.memo[key] = quals
        if not quals:
            return None
        self.answers += 1
        note = f"astroid inferred the receiver as {', '.join(q.rsplit('.', 1)[-1] for q in quals)}"
        return Resolution(frozenset(quals), (Evidence(mod.file.display, line, note),), via="astroid")

    def _infer(self, mod, line: int, col: int):
        """The in-tree classes astroid infers for the receiver at (line, col), sorted; () for
        none (also when the query used its whole per-call limit); _TIMED_OUT when the run's
        budget ran out first (an answer not to remember)."""
        try:
            import astroid
            from astroid import nodes
        except ImportError:  # pragma: no cover - a declared dependency
            return None
        if self.spent >= self.budget:
            return _TIMED_OUT
        self.calls += 1
        start = time.perf_counter()
        old_path = list(sys.path)
        sys.path[:0] = [r for r in self._import_roots() if r not in sys.path]
        found: set[str] = set()
        limit = min(self.per_call, self.budget - self.spent)
        try:
            with _time_limit(limit):
                tree = astroid.MANAGER.ast_from_file(mod.file.path, modname=mod.name)
                target = _receiver_node(tree, line, col, nodes)
                if target is None:
                    return ()
                for n, value in enumerate(target.infer()):
                    if n >= 8:
                        break
                    proxied = getattr(value, "_proxied", None)
                    if isinstance(value, astroid.Instance) and proxied is not None:
                        qual = self._map(proxied.qname(), mod.name)
                        if qual:
                            found.add(qual)
        except _Timeout:
            self.timeouts += 1
            # A query that used its whole per-call limit is remembered as unanswered (asking again
            # on every run would cost that second every time); one cut short by the end of the
            # run's budget is asked again on a later run.
            return () if limit >= self.per_call else _TIMED_OUT
        except Exception:  # astroid raises many kinds of inference errors; all mean "no answer"
            return ()
        finally:
            sys.path[:] = old_path
            self.spent += time.perf_counter() - start
        return tuple(sorted(found))

    def _map(self, qname: str, near: str) -> str | None:
        if qname in self.index.classes:
            return qname
        module, _, name = qname.rpartition(".")
        found = self.index.find_module(module, near)  # within the asking module's project first
        if found and f"{found}.{name}" in self.index.classes:
            return f"{found}.{name}"
        return None


def _receiver_node(tree, line: int, col: int, nodes):
    for node in tree.nodes_of_class((nodes.Call, nodes.Attribute)):
        if node.lineno != line or node.col_offset != col:
            continue
        if isinstance(node, nodes.Call) and node.args:
            return node.args[0]
        if isinstance(node, nodes.Attribute):
            return node.expr
    return None
