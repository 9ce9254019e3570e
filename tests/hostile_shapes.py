"""Trees a hostile repository can plant to make the analysis slow or large: a few hundred kB of
source each, shaped to hit a quadratic or cubic walk (tests/test_hostile_shapes.py holds the run
to a time and memory budget on each; bench/hostile.py runs them larger)."""

from __future__ import annotations

from pathlib import Path


def _package(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).write_text(text)
    return root


def deep_chain(root: Path, depth: int) -> Path:
    """Single inheritance `depth` classes deep, each adding a method of its own, with a wrapper at
    the bottom and probes of members spread along the chain."""
    out = ["class Base:\n    def forward(self, x):\n        return x\n"]
    for i in range(depth):
        out.append(f"class C{i}({'Base' if i == 0 else f'C{i - 1}'}):\n    def h{i}(self, x):\n        return x\n")
    out.append(f"class Wrapper(C{depth - 1}):\n    def __init__(self, inner: Base):\n        self.inner = inner\n\n"
               "    def forward(self, x):\n        return self.inner.forward(x)\n")
    step = max(1, depth // 50)
    out.append("def use(b: Base):\n" + "".join(f"    if hasattr(b, 'h{i}'):\n        b.h{i}(1)\n"
                                               for i in range(0, depth, step)))
    out.append("def build():\n    return Wrapper(C0())\n")
    return _package(root, {"chain.py": "\n".join(out)})


def wide_family(root: Path, wrappers: int, impls: int, hooks: int, built: bool = True) -> Path:
    """`impls` implementations each defining `hooks` hooks, `wrappers` wrappers each holding a
    family member (built around one, or only annotated: then every implementation is possible),
    and a probe of every hook."""
    hook_defs = "".join(f"    def hook{j}(self, a, b):\n        return a\n" for j in range(hooks))
    out = ["class Base:\n    def forward(self, x):\n        return x\n"]
    out += [f"class Impl{k}(Base):\n{hook_defs}" for k in range(impls)]
    out += [f"class Wrap{k}(Base):\n    def __init__(self, inner: Base):\n        self.inner = inner\n\n"
            f"    def forward(self, x):\n        return self.inner.forward(x)\n" for k in range(wrappers)]
    out.append("def use(b: Base):\n" + "".join(f"    if hasattr(b, 'hook{j}'):\n        b.hook{j}(1, 2)\n"
                                               for j in range(hooks)))
    if built:
        out.append("def build():\n    return [" + ", ".join(f"Wrap{k}(Impl{k % impls}())" for k in range(wrappers))
                   + "]\n")
    return _package(root, {"family.py": "\n".join(out)})


def long_display(root: Path, megabytes: float) -> Path:
    """One list display of about `megabytes` MB: cheap to write, costly to hold as a syntax tree."""
    n = int(megabytes * 2**20 / 2)
    return _package(root, {"data.py": "TABLE = [" + "1," * (n - 1) + "1]\n", "ok.py": "class A:\n    pass\n"})
