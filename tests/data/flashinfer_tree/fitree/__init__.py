"""A small serving tree for attn-lint's verification tests: one hook plans a FlashInfer prefill
wrapper (through a helper object, as real MLA backends do), one does not (an NPU-style hook)."""
