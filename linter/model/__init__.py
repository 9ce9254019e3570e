"""Phase 3, the tree model: the index of every summary, name resolution, class families, the call
graph, registries, what delegates hold, the ordered passes that build them, and the Context a rule
reads; also the assessment's records (`confidence.Pairing`, `Signal`) that signals and rules share."""
