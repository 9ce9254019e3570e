"""astroid on the idle core: the bridge's queries answered by a child process while the rules go on.

After the parse, the tree passes keep one core busy, and astroid's queries (up to the run's whole
budget, half a second on a cold run over sglang) ran on that same core, each one holding up the
rule that asked. On a run that parses many files, a child is forked before the parse, while the
parent is still small (forked later, the parent would pay a page fault for every page of its
heap that it touches afterwards: 0.3 s on sglang). Once the index is built the child learns the
project's import roots and readies astroid; every query goes to it and the rules go on as if
astroid had no answer, which is what it answers nearly always (on sglang: never). When the rules
are done, the parent collects the answers into the bridge's memo. If one of them names a class,
the rules run again and read it from the memo: the findings are those of a run that asks astroid
in place, and the second pass is paid only where astroid found something.

The child answers in the order the queries were asked, within the same per-query limit and run
budget, so the same queries get answers (or run out of time) as they would in place. It gets
paths, names and positions, and sends back astroid's raw answer (class names, files read, modules
not found); the parent maps those onto its index.
"""

from __future__ import annotations

from .astroid_bridge import AstroidBridge
from .astroid_child import AstroidChild


class AsideBridge(AstroidBridge):
    """An AstroidBridge whose queries go to an AstroidChild until `finish`."""

    def __init__(self, index, child: AstroidChild, **kwargs):
        super().__init__(index, **kwargs)
        self.child: AstroidChild | None = child
        self._sent: dict[tuple, str] = {}  # query -> the asking module (astroid's names are mapped from there)
        child.send(("roots", self._import_roots()))  # the child readies astroid while the tree passes start

    def _ask(self, mod, line: int, col: int, key: tuple) -> tuple | None:
        if self.child is None:
            return super()._ask(mod, line, col, key)
        if key not in self._sent:
            self._sent[key] = mod.name
            self.child.send(("ask", key, mod.file.path, mod.name, line, col))
        return None  # for now: finish() says whether the rules must run again

    def finish(self) -> bool:
        """Collect the child's answers into the memo; True when one names a class of the tree (the
        rules must run again to read it). Queries after this are asked in place."""
        child, self.child = self.child, None
        got = child.collect() if child is not None else None
        if got is None:
            return False
        answers, self.calls, self.timeouts, self.spent = got
        found = False
        for key, raw in answers:  # the queries this bridge sent, in order
            if raw is not None:
                answer = self._resolved(raw, self._sent[key])
                self._remember(key, answer)
                found = found or bool(answer[0])
        return found
