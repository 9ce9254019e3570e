"""AL002: an override narrower than the declaration a call binds, where the family followed and it did not.

`Runner` calls `self.backend.kv_shape(n, size, heads, dim, cache_dtype="auto")`; the base declares
`kv_shape(self, n, size, heads, dim, cache_dtype="auto")`, so a type checker accepts the call, and
every backend but one took the new parameter. The odd one out raises TypeError on every run that
installs it (vLLM 0.11.0's `RocmAttentionBackend.get_kv_cache_shape` without `cache_dtype_str`, the
Quark OSS MoE method's `apply_monolithic` without `input_ids`; fixed upstream in the next release).
Before this check no finding was made: the declared member kept AL002 away.
"""

from __future__ import annotations

from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse

BACKENDS = '''
class Backend:
    def kv_shape(self, n, size, heads, dim, cache_dtype="auto"):
        raise NotImplementedError


class FlashBackend(Backend):
    def kv_shape(self, n, size, heads, dim, cache_dtype="auto"):
        return (2, n, size, heads, dim)


class TritonBackend(Backend):
    def kv_shape(self, n, size, heads, dim, cache_dtype="auto"):
        return (n, 2, size, heads, dim)


class FlexBackend(Backend):
    def kv_shape(self, n, size, heads, dim, cache_dtype="auto"):
        return (2, n, heads, size, dim)


class TreeBackend(Backend):
    def kv_shape(self, n, size, heads, dim, cache_dtype="auto"):
        return (2, n, size, heads, dim)


class RocmBackend(Backend):
    def kv_shape(self, n, size, heads, dim):              # the family gained `cache_dtype`; this one did not
        return (2, n, size * heads * dim)


class MambaBackend(Backend):
    def kv_shape(self, conv_state, ssm_state):           # another contract altogether
        return (conv_state, ssm_state)


BACKENDS = {"flash": FlashBackend, "triton": TritonBackend, "flex": FlexBackend, "tree": TreeBackend,
            "rocm": RocmBackend, "mamba": MambaBackend}


class Runner:
    def __init__(self, name):
        self.backend: Backend = BACKENDS[name]()

    def allocate(self, n, size, heads, dim, dtype):
        return self.backend.kv_shape(n, size, heads, dim, cache_dtype=dtype)
'''

FIXED = BACKENDS.replace("    def kv_shape(self, n, size, heads, dim):              # the family gained `cache_dtype`; "
                         "this one did not\n", "    def kv_shape(self, n, size, heads, dim, cache_dtype=\"auto\"):\n")


def findings(tmp_path, source: str = BACKENDS, name: str = "serving"):
    root = write_tree(tmp_path / "tree", {f"{name}/__init__.py": "", f"{name}/backends.py": source}) / name
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL002",)))
    return [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence, [t.rsplit(".", 1)[-1] for t in f.targets], f)
            for f in result.findings + list(result.latent)]


def test_the_odd_one_out_is_reported_at_the_call(tmp_path):
    ((cls, member, level, targets, f),) = findings(tmp_path)
    assert (cls, member, level, targets) == ("Runner", "kv_shape", "medium", ["RocmBackend"])
    assert "unexpected keyword argument 'cache_dtype'" in f.message
    assert any("declares the call's keywords: a type checker accepts it" in e.note for e in f.evidence)


def test_fixed_is_clean(tmp_path):
    assert findings(tmp_path, FIXED) == []


def test_an_override_of_another_shape_is_not_drift(tmp_path):
    ((_, _, _, targets, _),) = findings(tmp_path)
    assert "MambaBackend" not in targets  # it lost every parameter: another contract, not a dropped one


def test_a_family_whose_signatures_vary_by_design_is_left_alone(tmp_path):
    """Two of six overrides lacking the parameter: the call is the caller's contract with the
    ones it is written for, not a family that moved."""
    source = BACKENDS.replace("class TreeBackend(Backend):\n    def kv_shape(self, n, size, heads, dim, cache_dtype=\"auto\"):",
                              "class TreeBackend(Backend):\n    def kv_shape(self, n, size, heads, dim):")
    assert source != BACKENDS
    assert findings(tmp_path, source) == []


def test_a_branch_that_redeclares_the_method_keeps_its_own_contract(tmp_path):
    source = BACKENDS.replace("class RocmBackend(Backend):\n", "class PagedBase(Backend):\n"
                              "    def kv_shape(self, n, size, heads, dim):\n        raise NotImplementedError\n\n\n"
                              "class RocmBackend(PagedBase):\n").replace('"rocm": RocmBackend', '"rocm": RocmBackend')
    assert findings(tmp_path, source) == []


def test_an_override_nothing_builds_is_latent(tmp_path):
    source = BACKENDS.replace('"rocm": RocmBackend, ', "")
    ((_, _, level, targets, _),) = findings(tmp_path, source)
    assert (level, targets) == ("low", ["RocmBackend"])


def test_renamed_the_same(tmp_path):
    ren = {"kv_shape": "cache_layout", "cache_dtype": "kv_kind", "RocmBackend": "HipImpl", "Backend": "Impl",
           "Runner": "Engine"}
    source = BACKENDS
    for a, b in ren.items():
        source = source.replace(a, b)
    ((cls, member, level, targets, _),) = findings(tmp_path, source, name="engine")
    assert (cls, member, level, targets) == ("Engine", "cache_layout", "medium", ["HipImpl"])


# vLLM 0.11.0's shape: the backends are classes, never instances (the shape is a static method
# called on the class a group holds, `type[Backend]`), and the platform names the one it picks by
# its qualified name, loaded by a helper that imports the module and reads the attribute.
STATIC = '''
import importlib
from dataclasses import dataclass


class Backend:
    @staticmethod
    def kv_shape(n, size, heads, dim, cache_dtype="auto"):
        raise NotImplementedError
''' + "".join(f'''

class {name}Backend(Backend):
    @staticmethod
    def kv_shape(n, size, heads, dim, cache_dtype="auto"):
        return (2, n, size, heads, dim)
''' for name in ("Flash", "Triton", "Flex", "Tree")) + '''

class RocmBackend(Backend):
    @staticmethod
    def kv_shape(n, size, heads, dim):                   # the family gained `cache_dtype`; this one did not
        return (2, n, size * heads * dim)


def backend_qualname(rocm: bool) -> str:
    if rocm:
        return ("serving.backends."
                "RocmBackend")
    return "serving.backends.FlashBackend"


def load_by_qualname(qualname: str):
    module, _, name = qualname.rpartition(".")
    return getattr(importlib.import_module(module), name)


@dataclass
class Group:
    backend: type[Backend]
    layers: list


class Runner:
    def __init__(self, groups: list[Group]):
        self.groups = groups

    def allocate(self, n, size, heads, dim, dtype):
        for group in self.groups:
            backend = group.backend
            yield backend.kv_shape(n, size, heads, dim, cache_dtype=dtype)
'''


def test_a_static_method_called_on_the_class_a_field_holds(tmp_path):
    """The receiver is a class object (`type[Backend]`), the member a static method: the odd one
    out raises TypeError there as it would on an instance. The class is named by its qualified
    name (the platform's choice), which hands it out: the finding is in the default report."""
    ((cls, member, level, targets, f),) = findings(tmp_path, STATIC)
    assert (cls, member, level, targets) == ("Runner", "kv_shape", "medium", ["RocmBackend"])
    assert "unexpected keyword argument 'cache_dtype'" in f.message


def test_a_class_no_string_and_no_code_names_stays_latent(tmp_path):
    source = STATIC.replace('return ("serving.backends."\n                "RocmBackend")',
                            'return "serving.backends.TritonBackend"')
    assert source != STATIC
    ((_, _, level, targets, _),) = findings(tmp_path, source)
    assert (level, targets) == ("low", ["RocmBackend"])


def test_a_static_method_family_renamed(tmp_path):
    source = STATIC
    for a, b in {"kv_shape": "page_layout", "RocmBackend": "HipImpl", "Backend": "Impl", "Runner": "Engine",
                 "Group": "Bucket", "serving.backends": "engine.backends"}.items():
        source = source.replace(a, b)
    ((cls, member, level, targets, _),) = findings(tmp_path, source, name="engine")
    assert (cls, member, level, targets) == ("Engine", "page_layout", "medium", ["HipImpl"])
