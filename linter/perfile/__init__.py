"""Phase 2, one file at a time: a file's summary (its classes, functions, calls, probes, guards), the
codec that writes it to the cache and reads it back sealed, the cache itself, and the source a fix
rewrites. Nothing here looks at a second file."""
