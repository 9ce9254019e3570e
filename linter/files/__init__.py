"""Phase 1, the files: which files a run reads (discovery, `--new-since` revisions, scopes), their
text and lines, what else a run reads beyond them, and the suppression comments in them."""
