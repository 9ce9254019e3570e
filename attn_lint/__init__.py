"""attn-lint: whole-tree analysis of backend interface drift in LLM serving code."""

__version__ = "0.1.0"
