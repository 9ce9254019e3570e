"""unknown-delegate: a wrapper is paired only with what the code builds
into its delegate; a declared type (`inner: Base`, a factory `-> Base`) names no configuration.

Each case is one small package: `Base`, two implementations (`Paged` and `Sparse`; only `Sparse`
has the optional hook `plan_chunks`), a wrapper `Split` holding `inner: Base`, a site probing the
hook on whatever backend it is given, and a `setup.py` that builds the wrapper one way. Where
`setup.py` builds `Split` around `Sparse`, the finding about `plan_chunks` is reported (medium);
where the code never puts `Sparse` into it, the pairing is latent, with the reason. The paths
the tree is followed through are those serving code uses: registries (a decorator factory, a
registration function called at import, a dict display), module functions' returns, lambdas and
bound methods handed to a classmethod builder, `self` attributes, methods of a built object,
imports under branches, and the order of local bindings.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import rename_tree

BACKENDS = '''
class Base:
    def forward(self, batch):
        raise NotImplementedError


class Paged(Base):
    def forward(self, batch):
        return batch


class Sparse(Base):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch


class Split(Base):
    def __init__(self, inner: Base):
        self.inner = inner
{builder}
    def forward(self, batch):
        return self.inner.forward(batch)
'''

# A classmethod builder, in the cases that call one (one no code of the tree calls is an API:
# whatever its callers pass, every pairing stands).
INIT_NEW = '''
    @classmethod
    def init_new(cls, creator):
        return cls(creator())
'''

SITE = '''
from pkg.backends import Base


def prefill(backend: Base, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
'''

# What `setup.py` says: {case: (source, whether Split ever holds Sparse)}.
SETUPS = {
    "built-by-name": ('''
from pkg.backends import Split, Sparse

def build():
    return Split(Sparse())

def run():
    return build()
''', True),
    "only-the-other-class": ('''
from pkg.backends import Split, Paged

def build():
    return Split(Paged())

def run():
    return build()
''', False),
    "decorator-registry": ('''
from pkg.backends import Split, Sparse, Paged

BACKENDS = {}

def register(name):
    def decorator(fn):
        BACKENDS[name] = fn
        return fn
    return decorator

@register("sparse")
def create_sparse():
    return Sparse()

@register("paged")
def create_paged():
    return Paged()

def full_backend(name: str) -> Base:
    return BACKENDS[name]()

def build(name):
    return Split(full_backend(name))

def run(name):
    return build(name)
''', True),
    "decorator-registry-without-it": ('''
from pkg.backends import Split, Paged

BACKENDS = {}

def register(name):
    def decorator(fn):
        BACKENDS[name] = fn
        return fn
    return decorator

@register("paged")
def create_paged():
    return Paged()

def build(name):
    return Split(BACKENDS[name]())

def run(name):
    return build(name)
''', False),
    "registration-calls": ('''
from pkg.backends import Split, Sparse, Paged

_REGISTRY: dict = {}

def register_backend(name, archs, cls):
    _REGISTRY[name] = cls

register_backend("sparse", {"mha"}, Sparse)
register_backend("paged", {"mla"}, Paged)

def build(name):
    cls = _REGISTRY.get(name)
    return Split(cls())

def run(name):
    return build(name)
''', True),
    "dict-display": ('''
from pkg.backends import Split, Sparse, Paged

TABLE = {"sparse": Sparse, "paged": Paged}

def build(name):
    return Split(TABLE[name]())

def run(name):
    return build(name)
''', True),
    "registry-handed-on": ('''
from pkg.backends import Split, Sparse
from pkg.plugins import fill

TABLE = {"sparse": Sparse}
fill(TABLE)

def build(name):
    return Split(TABLE[name]())

def run(name):
    return build(name)
''', False),
    "lambda-to-a-classmethod": ('''
from pkg.backends import Split, Sparse

def make():
    return Sparse()

def run():
    return Split.init_new(lambda: make())
''', True),
    "bound-method-to-a-classmethod": ('''
from pkg.backends import Split, Sparse

class Runner:
    def make(self):
        return Sparse()

    def run(self):
        return Split.init_new(self.make)

def main():
    return Runner().run()
''', True),
    "self-attribute": ('''
from pkg.backends import Split, Sparse

class Runner:
    def __init__(self):
        self.backend = Sparse()

    def run(self):
        return Split(self.backend)

def main():
    return Runner().run()
''', True),
    "method-of-a-built-object": ('''
from pkg.backends import Split, Sparse

class Factory:
    def create(self):
        return Sparse()

class Runner:
    def __init__(self):
        self.factory = Factory()

    def run(self):
        return Split(self.factory.create())

def main():
    return Runner().run()
''', True),
    "import-under-a-branch": ('''
def build(flag):
    if flag:
        from pkg.backends import Split
    else:
        from pkg.other import OtherSplit as Split
    from pkg.backends import Sparse
    return Split(Sparse())

def run(flag):
    return build(flag)
''', True),
    "rebinding-after-the-wrap": ('''
from pkg.backends import Split, Sparse, Paged

def build():
    backend = Paged()
    backend = Split(backend)
    backend = Sparse()
    return backend

def run():
    return build()
''', False),
    "api-the-tree-never-calls": ('''
from pkg.backends import Split

def wrap(backend):
    return Split(backend)
''', True),
}

OTHER = '''
from pkg.backends import Base


class OtherSplit(Base):
    def __init__(self, inner):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)
'''

PLUGINS = '''
def fill(table):
    table.clear()
'''


# A second way `setup.py` builds the wrapper, around a class loaded by a computed name: the tree
# cannot say what that is (so the declared type alone is left), and does not build `Sparse` with it.
DYNAMIC = '''

import importlib

def dynamic(name):
    return Split(getattr(importlib.import_module("pkg.backends"), name)())

def run_dynamic(name):
    return dynamic(name)
'''


def _tree(root, setup: str):
    if "Split" in setup and "import Split" in setup:
        setup += DYNAMIC
    backends = BACKENDS.format(builder=INIT_NEW if "init_new" in setup else "")
    return write_tree(root, {"pkg/__init__.py": "", "pkg/backends.py": backends, "pkg/site.py": SITE,
                             "pkg/setup.py": setup, "pkg/other.py": OTHER, "pkg/plugins.py": PLUGINS})


def _finding(result):
    found = [f for f in result.findings if f.member == "plan_chunks" and f.code == "AL001"
             and f.class_name.endswith(".Split")]
    assert len(found) == 1, [(f.code, f.class_name, f.member) for f in result.findings]
    return found[0]


@pytest.mark.parametrize("case", sorted(SETUPS))
def test_a_pairing_is_reported_only_where_the_code_builds_it(tmp_path, case):
    setup, holds_sparse = SETUPS[case]
    f = _finding(lint(_tree(tmp_path, setup)))
    reasons = {r.signal for r in f.confidence_reasons}
    if holds_sparse:
        assert f.confidence == "medium", (case, [r.note for r in f.confidence_reasons])
    else:
        assert f.confidence == "low" and reasons == {"unknown-delegate"}, (case, f.confidence, reasons)
        (reason,) = f.confidence_reasons
        assert "no path of the code puts `Sparse` into `self.inner` of `Split`" in reason.note


def test_a_wrapper_the_tree_never_builds_is_an_api(tmp_path):
    """Nothing in the tree builds `Split`: its users choose what it holds, every pairing stands."""
    f = _finding(lint(_tree(tmp_path, "X = 1\n")))
    assert f.confidence == "medium"


@pytest.mark.parametrize("case", ["decorator-registry", "only-the-other-class", "registration-calls",
                                  "bound-method-to-a-classmethod"])
def test_renamed_tree_gives_the_same_confidence(tmp_path, case):
    setup, _ = SETUPS[case]
    src = _tree(tmp_path / "src", setup)
    renamed = tmp_path / "renamed"
    rename_tree(src, renamed)
    before = _finding(lint(src))
    after = [f for f in lint(renamed).findings if f.code == "AL001"]
    assert [(f.confidence, len(f.targets)) for f in after] == [(before.confidence, len(before.targets))]
