"""Whether the tree's module names agree with its own imports. A tree named from the wrong folder
(a namespace package analysed from inside, a partial copy) has its modules named `layers.x` while
its files import `sglang.srt.layers.x`: those imports are found only by their tail, where that is
unique, and much of the drift between files goes unseen. A run says so when it is most of them."""

from __future__ import annotations


def own_imports(index) -> tuple[int, int]:
    """(imports of the tree's modules found only by their tail, imports of the tree's modules):
    absolute imports only; an import naming no module of the tree (another package) is neither."""
    misnamed = total = 0
    for name, module in index.modules.items():
        for imp in module.summary.imports:
            if imp.level or not imp.module:
                continue
            if imp.module in index.modules or (imp.name and f"{imp.module}.{imp.name}" in index.modules):
                total += 1
                continue
            dotted = [imp.module] + ([f"{imp.module}.{imp.name}"] if imp.name else [])
            if any(index.find_module(d, name) is not None or _tail_named(d, index.modules) for d in dotted):
                total += 1
                misnamed += 1
    return misnamed, total


def _tail_named(dotted: str, modules) -> bool:
    """Whether the import's last two names or more are a module of the tree, named from below."""
    parts = dotted.split(".")
    return any(".".join(parts[i:]) in modules for i in range(1, len(parts) - 1))
