"""built-chain (linter/signals/built_chain.py): a finding whose whole evidence chain is what the code
builds, assigns, calls and returns is `high`; one link that is only a declared type (a parameter,
attribute or return annotation) leaves it `medium`, as does a chain the rule's other signals rule out
(latent stays latent). AL002 skips it: a call's positive evidence is the call made on the
implementation (self-call)."""

from __future__ import annotations

from conftest import lint, write_tree

BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch

class HybridBackend(Backend):
    def __init__(self):
        self.inner = FlashBackend()

    def forward(self, batch):
        return self.inner.forward(batch)
'''

BUILT = '''
from serving.backends import HybridBackend

def make_backend():
    return HybridBackend()

class Runner:
    def __init__(self):
        self.backend = make_backend()

    def step(self, batch):
        if hasattr(self.backend, "plan_chunks"):
            self.backend.plan_chunks(batch)
        return self.backend.forward(batch)
'''

# The same probe, on a parameter whose annotation is all the code says of it.
DECLARED = '''
from serving.backends import Backend, HybridBackend

def make_backend():
    return HybridBackend()

def step(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)

def main(batch):
    return step(make_backend(), batch)
'''


def _al001(tmp_path, runner: str, backends: str = BACKENDS):
    result = lint(write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py": backends,
                                        "serving/runner.py": runner}))
    (f,) = [f for f in result.findings if f.code == "AL001"]
    return f


def test_a_chain_the_code_builds_is_high(tmp_path):
    f = _al001(tmp_path, BUILT)
    assert f.confidence == "high", f.confidence_reasons
    assert not any(e.declared for e in f.evidence)
    (reason,) = [r for r in f.confidence_reasons if r.signal == "built-chain"]
    assert reason.effect == "raise" and "no declared type" in reason.note


def test_one_declared_link_leaves_it_medium(tmp_path):
    f = _al001(tmp_path, DECLARED)
    assert f.confidence == "medium"
    assert [e.note for e in f.evidence if e.declared] == ["`backend` is a parameter annotated `Backend`"]
    # JSON marks it, so a consumer sees why the finding is not `high`.
    assert [e["note"] for e in f.to_json()["evidence"] if e["declared"]] == \
        ["`backend` is a parameter annotated `Backend`"]


def test_a_declared_delegate_its_builders_are_followed_for_is_built(tmp_path):
    """A delegate annotated with the base whose every assignment is followed to what its builders
    pass (`HybridBackend(FlashBackend())`) is known by construction: the annotation is not in the chain."""
    backends = BACKENDS.replace("    def __init__(self):\n        self.inner = FlashBackend()",
                                "    def __init__(self, inner: Backend):\n        self.inner = inner")
    runner = BUILT.replace("import HybridBackend", "import FlashBackend, HybridBackend").replace(
        "HybridBackend()", "HybridBackend(FlashBackend())")
    f = _al001(tmp_path, runner, backends)
    assert f.confidence == "high"
    assert any("passes FlashBackend as `inner`" in e.note for e in f.evidence)


def test_renamed_the_same(tmp_path):
    renames = {"Backend": "Engine", "FlashBackend": "FastEngine", "HybridBackend": "SplitEngine",
               "plan_chunks": "prepare", "inner": "held", "make_backend": "build", "Runner": "Loop",
               "backend": "engine"}

    def renamed(text: str) -> str:
        for old, new in sorted(renames.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(old, new)
        return text

    f = _al001(tmp_path, renamed(BUILT).replace("serving.engines", "serving.backends"), renamed(BACKENDS))
    assert (f.class_name.rsplit(".", 1)[-1], f.member, f.confidence) == ("SplitEngine", "prepare", "high")


def test_a_chain_cut_short_keeps_its_declared_links():
    """Reports show a chain's first links; a declared link past the cut is kept (as a supporting
    link, shown with --verbose), so that a finding never looks built because the link that was only
    a declared type was left out of sight; a binding's declared type never takes a shown place."""
    from dataclasses import replace

    from attn_lint.linter.findings import Evidence, shortened

    built = [Evidence("a.py", i, f"step {i}") for i in range(5)]
    declared = Evidence("b.py", 9, "`x` is a parameter annotated `Base`", declared=True)
    binding = Evidence("c.py", 1, "`y` is declared `Base` at module level", supporting=True, declared=True)
    chain = [binding, *built[:3], declared, *built[3:]]
    assert shortened(chain, 2) == (built[0], built[1], binding, replace(declared, supporting=True))
    assert shortened(chain, 4) == (*built[:3], declared, binding)
    assert shortened(built, 3) == tuple(built[:3])


def test_a_receiver_known_by_an_isinstance_test_is_declared(tmp_path):
    """`if isinstance(b, Backend):` says what kind the object is, not which class the code built
    there: the chain leans on it, the finding stays `medium`."""
    runner = '''
from serving.backends import Backend, HybridBackend

def make_backend():
    return HybridBackend()

class Holder:
    def __init__(self):
        self.backend = make_backend()

def step(holder, batch):
    b = getattr(holder, "backend", None)
    if isinstance(b, Backend):
        if hasattr(b, "plan_chunks"):
            b.plan_chunks(batch)
'''
    f = _al001(tmp_path, runner)
    assert f.confidence == "medium"
    assert [e.note for e in f.evidence if e.declared] == ["`b` is tested `isinstance(..., Backend)` where it is used"]


_DEEP_DELEGATE = {
    "serving/backends.py": BACKENDS.split("class HybridBackend")[0] + '''
class Holder:
    def __init__(self, backend: Backend):
        self.backend = backend


class Options:
    def __init__(self, holder: Holder):
        self.holder = holder


class HybridBackend(Backend):
    def __init__(self, options: Options):
        self.inner = options.holder.backend

    def forward(self, batch):
        return self.inner.forward(batch)
''',
    "serving/model.py": '''
from serving.backends import FlashBackend, HybridBackend, Holder, Options


def build():
    return HybridBackend(Options(Holder(FlashBackend())))


def prefill(batch):
    backend = build()
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
''',
}


def _declared_delegate_links(tmp_path) -> list[int]:
    result = lint(write_tree(tmp_path, _DEEP_DELEGATE))
    (finding,) = [f for f in result.findings if f.code == "AL001"]
    return sorted(e.line for e in finding.evidence if e.declared and e.path.endswith("backends.py"))


def test_a_delegate_chain_shown_by_its_end_keeps_its_declared_links(tmp_path, monkeypatch):
    """AL001 shows a delegate's chain by its last links (findings.tail); the declared links before
    them (`options: Options`, `holder: Holder`, `backend: Backend`) stay in the evidence as
    supporting ones, or the built-chain signal would read the chain as built. The check says no
    when the chain is cut by a plain slice."""
    source = _DEEP_DELEGATE["serving/backends.py"].splitlines()
    inits = [n for n, text in enumerate(source, 1) if text.strip().startswith("def __init__(self, ")
             and ": " in text.split("(self, ", 1)[1]]  # Holder's, Options' and HybridBackend's
    assert len(inits) == 3
    assert _declared_delegate_links(tmp_path / "tail") == inits
    from attn_lint.rules import al001_unforwarded_hook as al001
    monkeypatch.setattr(al001, "tail", lambda links, k: tuple(links)[-k:])
    assert _declared_delegate_links(tmp_path / "slice") != inits


def _text_report(root) -> str:
    from click.testing import CliRunner

    from attn_lint.linter.app.cli import main
    r = CliRunner().invoke(main, ["--no-cache", "--no-server", "--format", "text", str(root)])
    assert r.exit_code == 1, r.output
    return r.stdout


def test_the_text_report_says_what_kept_a_finding_from_high(tmp_path):
    """A maintainer gating CI on `high` reads, under a `medium` finding, the declared link that kept
    it there; a `high` finding has no such line."""
    files = {"serving/__init__.py": "", "serving/backends.py": BACKENDS}
    medium = _text_report(write_tree(tmp_path / "declared", {**files, "serving/runner.py": DECLARED}))
    assert "[medium]" in medium
    (line,) = [x for x in medium.splitlines() if x.lstrip().startswith("not high:")]
    declared = _al001(tmp_path / "again", DECLARED)
    (link,) = [e for e in declared.evidence if e.declared]
    assert link.note == "`backend` is a parameter annotated `Backend`" and not link.supporting
    # The link is shown in the evidence above: the line names it by its place.
    assert f"serving/runner.py:{link.line} is a declared type" in line
    high = _text_report(write_tree(tmp_path / "built", {**files, "serving/runner.py": BUILT}))
    assert "[high]" in high and "not high:" not in high


def test_a_construction_passing_a_declared_parameter_is_a_declared_link(tmp_path):
    """`HybridBackend(inner)` where `inner` is known only by its annotation (`inner: FlashBackend`)
    passes what the declaration allows, not what the code is shown building: the construction's
    link says so, as the parameter's own link would."""
    runner = '''
from serving.backends import FlashBackend, HybridBackend

def make_backend(inner: FlashBackend):
    return HybridBackend(inner)

class Runner:
    def __init__(self, inner: FlashBackend):
        self.backend = make_backend(inner)

    def step(self, batch):
        if hasattr(self.backend, "plan_chunks"):
            self.backend.plan_chunks(batch)
        return self.backend.forward(batch)
'''
    backends = BACKENDS.replace("    def __init__(self):\n        self.inner = FlashBackend()",
                                "    def __init__(self, inner: Backend):\n        self.inner = inner")
    assert backends != BACKENDS
    f = _al001(tmp_path, runner, backends)
    passes = [e for e in f.evidence if "passes FlashBackend as `inner`" in e.note]
    assert passes and all(e.declared for e in passes)
