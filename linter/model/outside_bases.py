"""Which packages outside the tree its classes derive from, and how: what tells a plug-in's host
(linter/files/scope.py) from a framework the tree merely builds on."""

from __future__ import annotations

from collections import Counter, defaultdict

from ..findings import unlabelled


def outside_bases(index) -> dict[str, list[int]]:
    """Top-level package -> [classes of the tree deriving from one of its classes, distinct
    classes of it they derive from], for packages the tree does not hold itself."""
    own = {unlabelled(name).split(".")[0] for name in index.modules}
    derived: Counter = Counter()
    distinct: dict[str, set[str]] = defaultdict(set)
    for qual in index.classes:
        tops = set()
        for origin in index.outside_bases(qual):
            top = origin.split(".")[0]
            if top in own:
                continue
            tops.add(top)
            distinct[top].add(origin)
        derived.update(tops)
    return {top: [n, len(distinct[top])] for top, n in sorted(derived.items())}
