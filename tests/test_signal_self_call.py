"""self-call: a call an implementation's own instances make is `high` evidence where the tree runs
the calling method on one and builds one; ruled out where every call of the method runs on other
classes. And AL002's check of a class's own `self.m(...)` against the overrides of the subclasses
that run the calling method.

Before: vLLM 0.34.0's true finding (Ernie-4.5-VL's rotary override dropping `offsets`, which
`MRotaryEmbedding.forward_cpu` passes on `self`) was a declaration-only `medium`, like every other
finding; SGLang's `MMReceiverBase.encode` TypeError was `medium` too; no finding was ever `high`.
"""

from __future__ import annotations

from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.rules.al002_delegation_signature_mismatch import ROTARY  # the rule's own example

RECEIVER = '''
import threading


class Receiver:
    def send(self, req):
        threading.Thread(target=self._run, args=(req,)).start()

    def _run(self, req):
        try:
            self.encode(req, stats=None)
        except Exception:
            pass


class HttpReceiver(Receiver):
    def encode(self, req, stats=None):
        return req


class GrpcReceiver(Receiver):
    def encode(self, req):
        return req


RECEIVERS = {"http": HttpReceiver, "grpc": GrpcReceiver}


class Tokenizer:
    def __init__(self, mode):
        self.receiver = RECEIVERS[mode]()

    def submit(self, req):
        self.receiver.send(req)
'''


def findings(tmp_path, source: str, name: str = "serving"):
    root = write_tree(tmp_path / "tree", {f"{name}/__init__.py": "", f"{name}/mod.py": source}) / name
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL002",)))
    return [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence, [r.note for r in f.confidence_reasons])
            for f in result.findings]


def test_an_inherited_call_on_self_that_an_override_cannot_bind_is_high(tmp_path):
    ((cls, member, level, reasons),) = findings(tmp_path, ROTARY)
    assert (cls, member, level) == ("Rotary", "apply", "high")
    assert reasons == ["`VisionRotary` runs `Rotary.__call__` as its own, the tree runs that method on it, and "
                       "builds one (`VisionRotary(...)`): the call is made on it"]


def test_a_subclass_running_its_own_entry_point_never_meets_the_call(tmp_path):
    source = ROTARY.replace("class VisionRotary(Rotary):\n",
                            "class VisionRotary(Rotary):\n    def __call__(self, x, offsets=None):\n"
                            "        return self.apply(x)\n\n")
    assert findings(tmp_path, source) == []  # the call is never made on a VisionRotary


def test_a_call_under_a_test_is_not_claimed(tmp_path):
    source = ROTARY.replace("        return self.apply(x, offsets)\n",
                            "        if offsets is not None:\n            return self.apply(x, offsets)\n"
                            "        return x\n")
    ((_, _, level, _),) = findings(tmp_path, source)
    assert level == "low"  # the own-call check claims only what certainly runs


def test_an_unbuilt_subclass_is_not_claimed(tmp_path):
    source = ROTARY.replace("    return VisionRotary() if vision else Rotary()\n", "    return Rotary()\n")
    ((_, _, level, _),) = findings(tmp_path, source)
    assert level == "low"


def test_a_bound_method_handed_to_a_thread_and_a_table_of_classes_reach_the_call(tmp_path):
    """`threading.Thread(target=self._run)` in a method the implementation runs, and the class
    built from a table: the optional call's TypeError is certain on `GrpcReceiver`."""
    ((cls, member, level, reasons),) = findings(tmp_path, RECEIVER)
    assert (cls, member, level) == ("Receiver", "encode", "high")
    assert reasons[0].startswith("`GrpcReceiver` runs `Receiver._run` as its own, the tree runs that method on it")


def test_the_optional_call_under_a_test_stays_medium(tmp_path):
    source = RECEIVER.replace("            self.encode(req, stats=None)\n",
                              "            if req:\n                self.encode(req, stats=None)\n")
    ((_, _, level, _),) = findings(tmp_path, source)
    assert level == "medium"


def test_renamed_the_same(tmp_path):
    source = ROTARY.replace("VisionRotary", "Yz").replace("Rotary", "Qw").replace("apply", "go")
    ((cls, member, level, _),) = findings(tmp_path, source, name="engine")
    assert (cls, member, level) == ("Qw", "go", "high")
