"""model-reach: a wrapper built only under a model test is not seen from other models' code."""

from __future__ import annotations

import re

import pytest
from conftest import lint, write_tree

# A kept pairing leaves the finding live: `medium`, or `high` where its chain is all built
# (built-chain); this signal only rules out.
LIVE = ("medium", "high")

BACKENDS = '''
class Backend:
    def forward(self, x):
        raise NotImplementedError

class Impl(Backend):
    def forward(self, x):
        return x
    def hook_b(self):
        return 1
    def hook_shared(self):
        return 1
    def hook_free(self):
        return 1

class Wrapper(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner
    def forward(self, x):
        return self.inner.forward(x)

_BACKEND: Backend = Impl()

def get_backend() -> Backend:
    return _BACKEND
'''

CONFIGS = '''
class AConfig:
    pass

class BConfig:
    pass
'''

SETUP = '''
from pkg.backends import Wrapper
from pkg.configs import AConfig

def wrap(runner, backend):
    if isinstance(runner.model_config.hf_config, AConfig):
        return Wrapper(backend)
    return backend
'''

SHARED = '''
from pkg.backends import get_backend

class SharedMixin:
    def shared_step(self):
        if hasattr(get_backend(), "hook_shared"):
            return get_backend().hook_shared()

def free_function():
    if hasattr(get_backend(), "hook_free"):
        return get_backend().hook_free()
'''

MODEL = '''
from pkg.backends import get_backend
from pkg.shared import SharedMixin
{imports}

class {P}Attention(SharedMixin):
    def __init__(self, config{annotation}):
        self.config = config
    def forward(self):
        {probe}

class {P}ForCausalLM:
    def __init__(self, config{annotation}):
        self.attn = {P}Attention(config)

EntryClass = [{P}ForCausalLM]
'''


def _tree(tmp_path, setup=SETUP):
    files = {"pkg/__init__.py": "", "pkg/backends.py": BACKENDS, "pkg/configs.py": CONFIGS,
             "pkg/setup.py": setup, "pkg/shared.py": SHARED, "pkg/models/__init__.py": ""}
    for p, imports, annotation, probe in (
            ("A", "from pkg.configs import AConfig", ": AConfig", "return 0"),
            ("B", "from pkg.configs import BConfig", ": BConfig",
             'if hasattr(get_backend(), "hook_b"):\n            return get_backend().hook_b()'),
            ("C", "", "", "return 0")):
        files[f"pkg/models/{p.lower()}.py"] = MODEL.format(P=p, imports=imports, annotation=annotation,
                                                          probe=probe)
    return write_tree(tmp_path, files)


def _signals(result, key) -> set[str]:
    """The signals that lowered or raised the finding `key` ((class, member)). Where the tree
    cannot show what a builder is handed (a method used as a value), unknown-delegate may lower it;
    model-reach must not."""
    f = next(f for f in result.findings if (f.class_name.rsplit(".", 1)[-1], f.member) == key)
    return {r.signal for r in f.confidence_reasons}


def _confidence(result):
    return {(f.class_name.rsplit(".", 1)[-1], f.member): f.confidence for f in result.findings}


def test_wrapper_built_for_one_model_is_not_seen_in_another_models_code(tmp_path):
    got = _confidence(lint(_tree(tmp_path)))
    assert got[("Wrapper", "hook_b")] == "low"
    # Code both models run (a mixin), and a function whose callers are not seen, stay live.
    assert got[("Wrapper", "hook_shared")] in LIVE
    assert got[("Wrapper", "hook_free")] in LIVE


def test_reason_names_the_guard(tmp_path):
    finding = next(f for f in lint(_tree(tmp_path)).findings if f.member == "hook_b")
    reason = finding.confidence_reasons[0]
    assert reason.signal == "model-reach" and reason.path.endswith("setup.py") and reason.line == 6


def test_architecture_predicate_rules_out_other_models(tmp_path):
    setup = '''
from pkg.backends import Wrapper

def is_model_a(config):
    arch = (config.architectures or [None])[0]
    return arch in ("AForCausalLM",)

def wrap(runner, backend):
    if is_model_a(runner.model_config.hf_config):
        return Wrapper(backend)
    return backend
'''
    got = _confidence(lint(_tree(tmp_path, setup)))
    assert got[("Wrapper", "hook_b")] == "low"
    assert got[("Wrapper", "hook_shared")] in LIVE


def test_predicate_the_tree_cannot_decide_keeps_the_pairing(tmp_path):
    setup = '''
from pkg.backends import Wrapper

def is_model_a(config):
    return getattr(config, "flag", False)

def wrap(runner, backend):
    if is_model_a(runner.model_config.hf_config):
        return Wrapper(backend)
    return backend
'''
    assert _confidence(lint(_tree(tmp_path, setup)))[("Wrapper", "hook_b")] in LIVE


def test_unguarded_construction_keeps_the_pairing(tmp_path):
    setup = '''
from pkg.backends import Wrapper
from pkg.configs import AConfig

def wrap(runner, backend):
    if isinstance(runner.model_config.hf_config, AConfig):
        return Wrapper(backend)
    return Wrapper(backend) if runner.split else backend
'''
    assert _confidence(lint(_tree(tmp_path, setup)))[("Wrapper", "hook_b")] in LIVE


def test_quantization_config_test_is_not_a_model_test(tmp_path):
    setup = '''
from pkg.backends import Wrapper
from pkg.configs import AConfig

def wrap(runner, backend):
    if isinstance(runner.quant_config, AConfig):
        return Wrapper(backend)
    return backend
'''
    assert _confidence(lint(_tree(tmp_path, setup)))[("Wrapper", "hook_b")] in LIVE


def test_site_class_built_through_a_variable_is_followed_or_kept(tmp_path):
    tree = _tree(tmp_path)
    # A's model also builds B's attention through a local bound to the class: B's code is A's too.
    a = (tree / "pkg/models/a.py").read_text().replace(
        "self.attn = AAttention(config)",
        "from pkg.models.b import BAttention\n        cls = BAttention if config else AAttention\n"
        "        self.attn = cls(config)")
    (tree / "pkg/models/a.py").write_text(a)
    assert _confidence(lint(tree))[("Wrapper", "hook_b")] in LIVE


def test_a_private_layer_class_is_followed_to_its_model(tmp_path):
    """`_BAttention(config)` is a construction too (a class name by convention after its leading
    underscores): the probe in it is reached only from B's model."""
    tree = _tree(tmp_path)
    b = (tree / "pkg/models/b.py").read_text().replace("BAttention", "_BAttention")
    (tree / "pkg/models/b.py").write_text(b)
    assert _confidence(lint(tree))[("Wrapper", "hook_b")] == "low"


def test_wrapper_built_through_a_class_valued_local_under_the_test(tmp_path):
    # `cls = Wrapper; ...; cls(backend)` in a builder called only under the model test.
    setup = '''
from pkg.backends import Wrapper
from pkg.configs import AConfig

def _build(backend):
    wrapper_cls = Wrapper
    return wrapper_cls(backend)

def wrap(runner, backend):
    if isinstance(runner.model_config.hf_config, AConfig):
        return _build(backend)
    return backend
'''
    assert _confidence(lint(_tree(tmp_path, setup)))[("Wrapper", "hook_b")] == "low"


def test_class_valued_local_called_unguarded_keeps_the_pairing(tmp_path):
    setup = '''
from pkg.backends import Wrapper
from pkg.configs import AConfig

def wrap(runner, backend):
    wrapper_cls = Wrapper
    if isinstance(runner.model_config.hf_config, AConfig):
        return backend
    return wrapper_cls(backend)
'''
    assert _confidence(lint(_tree(tmp_path, setup)))[("Wrapper", "hook_b")] in LIVE


def test_a_subclass_built_unguarded_keeps_the_pairing(tmp_path):
    # The subclass inherits the gap, so it is the wrapper at the probe too.
    setup = SETUP + '''

class NpuWrapper(Wrapper):
    pass

def wrap_any(backend):
    return NpuWrapper(backend)
'''
    assert _confidence(lint(_tree(tmp_path, setup)))[("Wrapper", "hook_b")] in LIVE


_REFUSING = BACKENDS.replace('''class Wrapper(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner''', '''class Wrapper(Backend):
    def __init__(self, inner: Backend, runner):
        hf_config = runner.model_config.hf_config
        if not isinstance(hf_config, AConfig) or not hf_config.sparse:
            {exit}
        self.inner = inner''').replace("class Backend:", "from pkg.configs import AConfig\n\nclass Backend:")

_ANYWHERE = '''
from pkg.backends import Wrapper

def wrap(runner, backend):
    return Wrapper(backend, runner)
'''


def _refusing_tree(tmp_path, exit_stmt):
    root = _tree(tmp_path, _ANYWHERE)
    (root / "pkg/backends.py").write_text(_REFUSING.replace("{exit}", exit_stmt))
    return root


def test_a_constructor_refusing_other_models_is_their_guard(tmp_path):
    # Built unguarded, but its constructor raises unless the config is AConfig's model.
    finding = next(f for f in lint(_refusing_tree(tmp_path, 'raise ValueError("A only")')).findings
                   if f.member == "hook_b")
    assert finding.confidence == "low"
    (why,) = [r for r in finding.confidence_reasons if r.signal == "model-reach"]
    assert why.path.endswith("backends.py") and "AConfig" in why.note


def test_a_constructor_that_returns_early_still_builds_the_object(tmp_path):
    got = _confidence(lint(_refusing_tree(tmp_path, "return")))
    assert got[("Wrapper", "hook_b")] in LIVE


PREDICATE_SETUP = '''
from pkg.backends import Wrapper

_A_ARCHS = frozenset({{"AForCausalLM"}})


def resolve_arch(config):
    return (config.architectures or [None])[0]


def is_model_a(config):
    return {test}


def wrap(runner, backend):
    if is_model_a(runner.model_config.hf_config):
        return Wrapper(backend)
    return backend
'''


def _config_with_model_type(tree, model_type: str) -> None:
    configs = (tree / "pkg/configs.py").read_text().replace(
        "class AConfig:\n    pass", f'class AConfig:\n    model_type = "{model_type}"')
    (tree / "pkg/configs.py").write_text(configs)


def test_predicate_of_alternatives_admits_what_either_admits(tmp_path):
    """`model_type in {...} or arch in _ARCHS`: a model type declared by a configuration class
    admits the models whose code names that class; a module-level collection of literals is read
    like literals written in the comparison."""
    test = 'getattr(config, "model_type", None) in {"model_a"} or resolve_arch(config) in _A_ARCHS'
    tree = _tree(tmp_path, PREDICATE_SETUP.format(test=test))
    _config_with_model_type(tree, "model_a")
    got = _confidence(lint(tree))
    assert got[("Wrapper", "hook_b")] == "low"
    assert got[("Wrapper", "hook_shared")] in LIVE


def test_alternatives_grouped_in_parentheses_are_one_set_of_alternatives(tmp_path):
    test = ('(getattr(config, "model_type", None) == "model_a" or resolve_arch(config) in _A_ARCHS) '
            'or resolve_arch(config) == "AForCausalLM"')
    tree = _tree(tmp_path, PREDICATE_SETUP.format(test=test))
    _config_with_model_type(tree, "model_a")
    assert _confidence(lint(tree))[("Wrapper", "hook_b")] == "low"


def test_alternatives_with_one_the_tree_cannot_decide_keep_the_pairing(tmp_path):
    for n, test in enumerate(('getattr(config, "model_type", None) == "model_a" or config.flag',
                 # no configuration class declares this model type
                 'getattr(config, "model_type", None) == "model_z" or resolve_arch(config) in _A_ARCHS',
                 # a collection that is not a module-level one of literals
                 'resolve_arch(config) in config.known_archs')):
        tree = _tree(tmp_path / str(n), PREDICATE_SETUP.format(test=test))
        _config_with_model_type(tree, "model_a")
        assert _confidence(lint(tree))[("Wrapper", "hook_b")] in LIVE, test


def test_a_collection_that_changes_is_not_read_as_its_literals(tmp_path):
    """`_A_ARCHS` with more added to it (a plugin's `.add`, a later `|=`): what it holds is not
    what is written, so the test decides nothing."""
    test = "resolve_arch(config) in _A_ARCHS"
    for n, change in enumerate(('\n\ndef register(arch):\n    _A_ARCHS.add(arch)\n',
                                '\n_A_ARCHS |= set(extra_archs())\n')):
        setup = PREDICATE_SETUP.format(test=test).replace(
            '_A_ARCHS = frozenset({"AForCausalLM"})', '_A_ARCHS = {"AForCausalLM"}' + change)
        tree = _tree(tmp_path / str(n), setup)
        assert _confidence(lint(tree))[("Wrapper", "hook_b")] in LIVE, change
    # Unchanged, the same test rules B out.
    tree = _tree(tmp_path / "plain", PREDICATE_SETUP.format(test=test))
    assert _confidence(lint(tree))[("Wrapper", "hook_b")] == "low"


def test_a_collection_imported_from_another_module_is_read_there(tmp_path):
    setup = PREDICATE_SETUP.format(test="resolve_arch(config) in A_ARCHS").replace(
        '_A_ARCHS = frozenset({"AForCausalLM"})', "from pkg.archs import A_ARCHS")
    tree = _tree(tmp_path, setup)
    (tree / "pkg/archs.py").write_text('A_ARCHS = ("AForCausalLM",)\n')
    assert _confidence(lint(tree))[("Wrapper", "hook_b")] == "low"


def test_model_type_declared_by_a_configuration_the_sites_model_names_keeps_the_pairing(tmp_path):
    """B's model names BConfig: a test of BConfig's model type admits B."""
    test = 'config.model_type == "model_b"'
    tree = _tree(tmp_path, PREDICATE_SETUP.format(test=test))
    configs = (tree / "pkg/configs.py").read_text().replace(
        "class BConfig:\n    pass", 'class BConfig:\n    model_type = "model_b"')
    (tree / "pkg/configs.py").write_text(configs)
    assert _confidence(lint(tree))[("Wrapper", "hook_b")] in LIVE


CLASS_ATTR_MODEL = '''
from pkg.backends import get_backend
from pkg.configs import BConfig


class BaseForCausalLM:
    model_cls = None

    def __init__(self, config):
        self.model = self.model_cls(config)


class BModel:
    def __init__(self, config: BConfig):
        self.config = config

    def forward(self):
        if hasattr(get_backend(), "hook_b"):
            return get_backend().hook_b()


class BForCausalLM(BaseForCausalLM):
    model_cls = BModel


EntryClass = [BForCausalLM]
'''


def test_class_built_through_a_class_attribute_is_followed_to_its_model(tmp_path):
    """`model_cls = BModel` in the model class, called as `self.model_cls(config)` by its base:
    BModel is built where B's model is, so its probe is reached only from B."""
    tree = _tree(tmp_path)
    (tree / "pkg/models/b.py").write_text(CLASS_ATTR_MODEL)
    got = _confidence(lint(tree))
    assert got[("Wrapper", "hook_b")] == "low"


def test_class_attribute_called_from_elsewhere_keeps_the_pairing(tmp_path):
    """The attribute is also called off another object (`holder.model_cls(...)`): where that
    object comes from is not followed, so the class's reach is unknown."""
    tree = _tree(tmp_path)
    (tree / "pkg/models/b.py").write_text(CLASS_ATTR_MODEL + '''

def build_any(holder, config):
    return holder.model_cls(config)
''')
    assert _confidence(lint(tree))[("Wrapper", "hook_b")] in LIVE


def test_class_attribute_overridden_by_a_subclass_is_not_its_construction(tmp_path):
    """A subclass that rebinds `model_cls` builds its own class, not BModel: A's model subclassing
    B's and rebinding it does not make BModel's probe A's code."""
    tree = _tree(tmp_path)
    (tree / "pkg/models/b.py").write_text(CLASS_ATTR_MODEL)
    a = (tree / "pkg/models/a.py").read_text().replace("EntryClass = [AForCausalLM]", '''
from pkg.models.b import BForCausalLM


class AOtherModel:
    def __init__(self, config: AConfig):
        self.config = config


class AOtherForCausalLM(BForCausalLM):
    model_cls = AOtherModel


EntryClass = [AForCausalLM, AOtherForCausalLM]
''')
    (tree / "pkg/models/a.py").write_text(a)
    assert _confidence(lint(tree))[("Wrapper", "hook_b")] == "low"


# --- a function or method used as a value has callers the tree does not show -----------------------
def _free_function_tree(tmp_path, model_a_body: str, a_imports: str = "", shared_extra: str = ""):
    """The probe in `free_function` (pkg/shared.py), called directly only from B's model; A's model
    (the one the wrapper is built for) does `model_a_body`."""
    tree = _tree(tmp_path)
    shared = tree / "pkg/shared.py"
    shared.write_text(shared.read_text() + '''

def run_callback(cb):
    return cb()
''' + shared_extra)
    b = (tree / "pkg/models/b.py").read_text()
    (tree / "pkg/models/b.py").write_text(
        "from pkg.shared import free_function\n" + b.replace("        if hasattr(get_backend()", "        free_function()\n        if hasattr(get_backend()", 1))
    a = (tree / "pkg/models/a.py").read_text()
    (tree / "pkg/models/a.py").write_text(a_imports + a.replace("        return 0", "        " + model_a_body, 1))
    return tree


def test_function_called_only_from_other_models_code_is_ruled_out(tmp_path):
    """The baseline the next tests change: called by name only from B's code, mentioned in a
    comment and a string of its own module, it is B's code."""
    tree = _free_function_tree(tmp_path, "return 0", shared_extra='''
# free_function runs the probe for B
NAME = "free_function"
''')
    assert _confidence(lint(tree))[("Wrapper", "hook_free")] == "low"


@pytest.mark.parametrize("a_body, a_imports, shared_extra", [
    # A's code hands `free_function` to another function, which calls it
    ("return run_callback(free_function)", "from pkg.shared import free_function, run_callback\n", ""),
    ("return shared.run_callback(shared.free_function)", "from pkg import shared\n", ""),
    ('return shared.run_callback(getattr(shared, "free_function"))', "from pkg import shared\n", ""),
    # stored in a table of its own module
    ("return 0", "", '\nSTEPS = {"free": free_function}\n'),
], ids=["passed", "passed-through-its-module", "fetched-by-name", "stored-in-a-table"])
def test_function_used_as_a_value_keeps_the_pairing(tmp_path, a_body, a_imports, shared_extra):
    tree = _free_function_tree(tmp_path, a_body, a_imports, shared_extra)
    assert _confidence(lint(tree))[("Wrapper", "hook_free")] in LIVE


BUILDER_SETUP = '''
from pkg.backends import Wrapper
from pkg.configs import AConfig


class Builder:
    def build(self, backend):
        return Wrapper(backend)


def wrap(runner, backend, builder: Builder):
    if isinstance(runner.model_config.hf_config, AConfig):
        return builder.build(backend)
    return backend
'''


def test_method_called_only_under_a_model_test_builds_for_that_model(tmp_path):
    """The wrapper is built in a method, which is called (by name) only under A's test."""
    assert _confidence(lint(_tree(tmp_path, BUILDER_SETUP)))[("Wrapper", "hook_b")] == "low"


def test_bound_method_used_as_a_value_keeps_the_pairing(tmp_path):
    """`make = builder.build; make(backend)` calls it under no test."""
    setup = BUILDER_SETUP + '''

def generic(backend, builder: Builder):
    make = builder.build
    return make(backend)
'''
    assert "model-reach" not in _signals(lint(_tree(tmp_path, setup)), ("Wrapper", "hook_b"))


def test_method_fetched_by_getattr_and_handed_on_keeps_the_pairing(tmp_path):
    """`getattr(builder, "build")` handed to another function: called where the tree does not
    show. (A name computed at run time, `getattr(builder, name)`, is not seen: no pass can.)"""
    setup = BUILDER_SETUP + '''

def generic(backend, builder: Builder, run):
    return run(getattr(builder, "build"), backend)
'''
    assert "model-reach" not in _signals(lint(_tree(tmp_path, setup)), ("Wrapper", "hook_b"))


# --- a class handed on as a value is built where the tree shows no call of it ----------------------
LAYER = '''
from pkg.backends import get_backend


class SharedLayer:
    def __init__(self, config):
        self.config = config

    def run(self):
        if hasattr(get_backend(), "hook_b"):
            return get_backend().hook_b()


def build_layer(cls, config):
    return cls(config)


class Holder:
    def __init__(self, config, part_cls):
        self.part = part_cls(config)
'''


def _layer_tree(tmp_path, a_body: str, a_head: str = "", layer_extra: str = "",
                b_body: str = "return SharedLayer(self.config).run()"):
    """SharedLayer (whose `run` probes hook_b) is built by B's model; A's model, the one the
    wrapper is built for, does `a_body`."""
    tree = _tree(tmp_path)
    (tree / "pkg/layer.py").write_text(LAYER + layer_extra)
    names = ", ".join(["Holder", "SharedLayer", "build_layer",
                       *re.findall(r"^(?:class|def) (\w+)", layer_extra, re.M)])
    b = (tree / "pkg/models/b.py").read_text()
    start = b.index("        if hasattr(get_backend()")
    end = b.index("\n\n", start)
    (tree / "pkg/models/b.py").write_text(
        f"from pkg.layer import {names}\n" + b[:start] + "        " + b_body + b[end:])
    a = (tree / "pkg/models/a.py").read_text()
    (tree / "pkg/models/a.py").write_text(
        f"from pkg.layer import {names}\n" + a_head + a.replace("        return 0", "        " + a_body, 1))
    return tree


def _hook_b(tree):
    return _confidence(lint(tree))[("Wrapper", "hook_b")]


def test_class_built_only_by_another_models_code_is_ruled_out(tmp_path):
    assert _hook_b(_layer_tree(tmp_path, "return 0")) == "low"


def test_class_handed_to_a_function_keeps_the_pairing(tmp_path):
    """`build_layer(SharedLayer, config)` builds it inside a function, which may keep it anywhere."""
    assert _hook_b(_layer_tree(tmp_path, "return build_layer(SharedLayer, self.config)")) in LIVE


def test_class_called_out_of_a_table_keeps_the_pairing(tmp_path):
    tree = _layer_tree(tmp_path, "LAYERS[0](self.config)", a_head="LAYERS = [SharedLayer]\n")
    assert _hook_b(tree) in LIVE
    table = _layer_tree(tmp_path / "t", 'return 0', a_head='LAYERS = {"x": SharedLayer}\n')
    assert _hook_b(table) in LIVE  # a dict's values: not followed, whoever reads it


def test_class_handed_to_a_constructor_comes_from_where_that_class_is_built(tmp_path):
    """`Holder(config, part_cls=SharedLayer)` builds it as a part of Holder: from A's code, live;
    from B's code only, B's."""
    assert _hook_b(_layer_tree(tmp_path, "return Holder(self.config, part_cls=SharedLayer)")) in LIVE
    b_only = _layer_tree(tmp_path / "b", "return 0", b_body="return Holder(self.config, part_cls=SharedLayer)")
    assert _hook_b(b_only) == "low"


def test_class_handed_to_the_base_constructor_is_a_part_of_the_subclass(tmp_path):
    extra = '''

class SharedHolder(Holder):
    def __init__(self, config):
        super().__init__(config, part_cls=SharedLayer)
'''
    assert _hook_b(_layer_tree(tmp_path, "return SharedHolder(self.config)", layer_extra=extra)) in LIVE
    b_only = _layer_tree(tmp_path / "b", "return 0", layer_extra=extra, b_body="return SharedHolder(self.config)")
    assert _hook_b(b_only) == "low"


def test_class_default_of_a_parameter_is_built_where_that_function_runs(tmp_path):
    extra = '''

def build_default(config, cls=SharedLayer):
    return cls(config)
'''
    assert _hook_b(_layer_tree(tmp_path, "return build_default(self.config)", layer_extra=extra)) in LIVE
    b_only = _layer_tree(tmp_path / "b", "return 0", layer_extra=extra, b_body="return build_default(self.config)")
    assert _hook_b(b_only) == "low"


def test_class_default_named_through_its_module_keeps_the_pairing(tmp_path):
    """`def build_default(config, cls=layer.SharedLayer)` in a module that has no name
    `SharedLayer` of its own: where it is built is not followed, so it is unknown."""
    tree = _layer_tree(tmp_path, "return build_default(self.config)", a_head="from pkg.factory import build_default\n")
    (tree / "pkg/factory.py").write_text(
        "from pkg import layer\n\n\ndef build_default(config, cls=layer.SharedLayer):\n    return cls(config)\n")
    assert _hook_b(tree) in LIVE


def test_module_collection_used_only_in_type_tests_hands_nothing_on(tmp_path):
    """`POOLS = (SharedLayer,)` read only by `isinstance(x, POOLS)`: no hand-over; the same
    collection iterated and called is one."""
    tested = _layer_tree(tmp_path, "return isinstance(self.config, POOLS)", a_head="POOLS = (SharedLayer, Holder)\n")
    assert _hook_b(tested) == "low"
    called = _layer_tree(tmp_path / "c", "return [c(self.config) for c in POOLS]",
                         a_head="POOLS = (SharedLayer, Holder)\n")
    assert _hook_b(called) in LIVE
    extended = _layer_tree(tmp_path / "e", "return [c(self.config) for c in ALL_POOLS]",
                           a_head="POOLS = (SharedLayer,)\nALL_POOLS = POOLS + (Holder,)\n")
    assert _hook_b(extended) in LIVE
