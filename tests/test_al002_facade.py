"""AL002 on a facade: a class of no family builds its one held object from classes it names and
hands its own operations to it by name; a call one of those classes cannot bind is a TypeError in
that configuration (rules/al002 `_facade_calls`)."""

from __future__ import annotations

from conftest import lint, write_tree

_IMPLS = 'class SentencePieceTokenizer:\n    def __init__(self, path):\n        self.path = path\n\n    def encode(self, text, add_bos=True):\n        return [1]\n\n    def decode(self, ids):\n        return ""\n\n\nclass HuggingFaceTokenizer:\n    def __init__(self, path):\n        self.path = path\n\n    def encode(self, text, add_bos=True, add_special_tokens=True):\n        return [1]\n\n    def decode(self, ids):\n        return ""'

_FACADE = 'class Tokenizer:\n    def __init__(self, path: str):\n        if path.endswith(".model"):\n            self.model = SentencePieceTokenizer(path)\n        else:\n            self.model = HuggingFaceTokenizer(path)\n\n    def encode(self, text, add_bos=True, add_special_tokens=True):\n        return self.model.encode(text, add_bos, add_special_tokens=add_special_tokens)\n\n    def decode(self, ids):\n        return self.model.decode(ids)'


def _findings(tmp_path, files):
    root = write_tree(tmp_path, {"tok/__init__.py": "", **files})
    return [(f.class_name, f.member, f.targets, f.line) for f in lint(root, select=("AL002",)).findings]


def test_a_facade_call_one_held_class_cannot_bind(tmp_path):
    got = _findings(tmp_path, {"tok/tokenizers.py": _IMPLS + "\n\n\n" + _FACADE})
    assert got == [("tok.tokenizers.Tokenizer", "encode", ("tok.tokenizers.SentencePieceTokenizer",), 31)]


def test_classes_built_through_their_module(tmp_path):
    facade = _FACADE.replace("SentencePieceTokenizer(path)", "impls.SentencePieceTokenizer(path)").replace(
        "HuggingFaceTokenizer(path)", "impls.HuggingFaceTokenizer(path)")
    got = _findings(tmp_path, {"tok/impls.py": _IMPLS, "tok/facade.py": "from tok import impls\n\n\n" + facade})
    assert got == [("tok.facade.Tokenizer", "encode", ("tok.impls.SentencePieceTokenizer",), 12)]


def test_one_operation_handed_over_is_a_helper_not_a_facade(tmp_path):
    facade = _FACADE.replace("        return self.model.decode(ids)", "        return ids")
    assert _findings(tmp_path, {"tok/tokenizers.py": _IMPLS + "\n\n\n" + facade}) == []
