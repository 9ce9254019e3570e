"""Formatters: each renders the same findings, errors and stats; none knows any rule."""
