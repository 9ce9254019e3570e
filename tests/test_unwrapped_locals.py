"""A receiver that comes out of code unwrapping wrappers (`while hasattr(b, "inner"): b = b.inner`)
is not a wrapper, also through a chain of locals; a long function whose locals read each other is
answered once per local and depth, not once per path through them."""

import sys

from conftest import lint, write_tree
from small_trees import TREES

# Backend, FlashBackend (with the optional `plan_chunks`) and HybridBackend holding `full_attn_backend`.
_BACKENDS = TREES["AL001"]["serving/backends.py"]


def _model(start: str, layers: int = 4, width: int = 4) -> str:
    """`prefill` probes a local reached from `start` through `layers` layers of `width` locals,
    each bound once to every local of the layer before (width ** layers paths)."""
    lines = ["from serving.backends import Backend", "",
             "def innermost(backend: Backend) -> Backend:",
             '    while hasattr(backend, "full_attn_backend"):',
             "        backend = backend.full_attn_backend",
             "    return backend", "",
             "def prefill(backend: Backend, batch, flags):"]
    lines += [f"    a0_{i} = {start}" for i in range(width)]
    for k in range(1, layers + 1):
        for i in range(width):
            lines += [f"    if flags[{k * width + j}]:\n        a{k}_{i} = a{k - 1}_{j}" for j in range(width)]
    lines += [f'    if hasattr(a{layers}_0, "plan_chunks"):', f"        a{layers}_0.plan_chunks(batch)",
              f"    return a{layers}_0.forward(batch)", ""]
    return "\n".join(lines)


def _findings(tmp_path, start: str, layers: int = 4):
    root = write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py": _BACKENDS,
                                 "serving/model.py": _model(start, layers)})
    return [(f.code, f.member) for f in lint(root, astroid=False).findings]


def test_a_receiver_unwrapped_through_locals_is_not_a_wrapper(tmp_path):
    assert ("AL001", "plan_chunks") not in _findings(tmp_path, "innermost(backend)")


def test_the_same_locals_from_the_wrapper_itself_are_a_site(tmp_path):
    assert ("AL001", "plan_chunks") in _findings(tmp_path, "backend")


def test_locals_reading_each_other_are_answered_once_per_local_and_depth(tmp_path):
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event == "call" and frame.f_code.co_filename.endswith("families.py") \
                and frame.f_code.co_name in ("via_unwrapper", "_unwrapped"):
            calls += 1

    sys.setprofile(count)
    try:
        _findings(tmp_path, "backend", layers=5)  # no way out of the wrapper: every path is looked at
    finally:
        sys.setprofile(None)
    # 4 ** 5 = 1,024 paths from the probed local down to the parameter, for each question the rules
    # ask (about 2,400 calls when each path was walked); one answer per (local, depth) is at most
    # 21 locals x 7 depths per question (about 70 calls here).
    assert 0 < calls < 400
