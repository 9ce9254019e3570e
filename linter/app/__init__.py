"""Phase 8, the application: the engine that runs the phases in order, the command line and its
configuration, the resident server, baselines, revision reuse, `--fix` and the rule pages."""
