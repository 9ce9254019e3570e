"""Whether the tree's module names agree with its own imports. A tree named from the wrong folder
(a namespace package analysed from inside, a partial copy) has its modules named `layers.x` while
its files import `sglang.srt.layers.x`: those imports are found only by their tail, where that is
unique, and much of the drift between files goes unseen. A run says so when it is most of them."""

from __future__ import annotations


def own_imports(index) -> tuple[int, int]:
    """(imports of the tree's modules found only by their tail, imports of the tree's modules):
    absolute imports only; an import naming no module of the tree (another package) is neither.
    (`find_module` matches by the end where no module has the whole name; each dotted name is
    asked once per project: a large tree imports the same few thousand names tens of thousands of
    times.)"""
    misnamed = total = 0
    found: dict[tuple[str, str], bool] = {}
    for name, module in index.modules.items():
        project = name.partition(":")[0] if ":" in name else ""
        for imp in module.summary.imports:
            if imp.level or not imp.module:
                continue
            if imp.module in index.modules or (imp.name and f"{imp.module}.{imp.name}" in index.modules):
                total += 1
                continue
            for dotted in (imp.module, f"{imp.module}.{imp.name}") if imp.name else (imp.module,):
                key = (project, dotted)
                hit = found.get(key)
                if hit is None:
                    hit = found[key] = index.find_module(dotted, name) is not None
                if hit:
                    total += 1
                    misnamed += 1
                    break
    return misnamed, total
