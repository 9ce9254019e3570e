"""The analyser's core: discovery, per-file summaries, the tree index, resolution and the engine."""
