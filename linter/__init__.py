"""The analyser, one folder per phase; a folder imports only from the folders below it.

The vocabulary every phase speaks sits here at the top of `linter/` and imports no folder:
`findings` (what is reported), `refs` (the shapes of expressions in summaries) and `userfiles`
(reading and writing a user's files safely). Then, from the bottom up: `files/` (which files a run
reads), `perfile/` (one file's summary, the codec and the cache), `model/` (the tree model and the
passes that build it), `inference/` (astroid, in a child process), `signals/` (the confidence
signals), the rules (`attn_lint.rules`, outside this folder), `report/` (the formatters) and `app/`
(the engine, the command line, the server). tests/test_layers.py holds the order and checks it.
"""
