"""Phase 4, inference: astroid's answer where the tree model cannot resolve a receiver, asked in a
child process with a bounded budget so that a hostile file cannot hang or exhaust the run."""
