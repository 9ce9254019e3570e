"""A plain lint never runs the analysed repository's code, even where astroid would import it.

astroid imports rather than reads in two places: a compiled extension whose name is a standard
library module's (a `audioop.*.so` at the project's root shadows the real one while the roots lead
`sys.path`), and brains that call `__import__` (the one for `gi.repository`). Each test plants code
that would leave a marker file, and a probe whose receiver only astroid can type.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig

import pytest
from conftest import FIXTURES, lint, write_tree

PROBE = '''
def go(batch):
    if hasattr({call}, "init_mha_chunk_metadata"):
        pass
'''


# The tree defines a `make` of its own: a call of that name could run tree code, so the receiver
# built by `Foo.make()` is one the engine sends to astroid (a call only of names defined outside
# the tree is not sent, and these tests would prove nothing).
MAKER = "class Maker:\n    def make(self):\n        return self\n"


def _tree(tmp_path, extra: dict):
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "al001_hidden_hook", root)
    return write_tree(root, {"serving/maker.py": MAKER, **extra})


def _astroid_asked(result) -> int:
    return result.stats["astroid_queries"]


def test_a_brain_that_imports_never_runs_project_code(tmp_path):
    marker = tmp_path / "ran"
    root = _tree(tmp_path, {
        "gi/__init__.py": f"open({str(marker)!r}, 'w').write('ran')\n",
        "gi/repository/__init__.py": "",
        "serving/evil.py": "from gi.repository import Foo\n" + PROBE.format(call="Foo.make()"),
    })
    result = lint(root)
    assert _astroid_asked(result) >= 1  # the receiver really went to astroid
    assert not marker.exists()
    assert [f.member for f in result.findings] == ["init_mha_chunk_metadata"]


def _compiler() -> str | None:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    include = sysconfig.get_paths().get("include")
    if not shutil.which(cc) or not include or not (__import__("pathlib").Path(include) / "Python.h").exists():
        return None
    return cc


@pytest.mark.skipif(_compiler() is None, reason="no C compiler or Python headers to build the planted extension")
def test_a_compiled_module_in_the_project_is_never_loaded(tmp_path):
    marker = tmp_path / "ran"
    root = _tree(tmp_path, {"serving/evil.py": "import audioop\n" + PROBE.format(call="audioop.make()")})
    source = tmp_path / "ev.c"
    source.write_text(f'''#include <Python.h>
#include <stdio.h>
static struct PyModuleDef m = {{PyModuleDef_HEAD_INIT, "audioop", NULL, -1, NULL}};
PyMODINIT_FUNC PyInit_audioop(void) {{
    FILE *f = fopen("{marker}", "w"); if (f) {{ fputs("ran", f); fclose(f); }}
    return PyModule_Create(&m);
}}
''')
    target = root / f"audioop{sysconfig.get_config_var('EXT_SUFFIX')}"
    subprocess.run([_compiler(), "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", str(source),
                    "-o", str(target)], check=True)
    assert "audioop" not in sys.modules or "ran" not in str(sys.modules["audioop"])
    result = lint(root)
    assert _astroid_asked(result) >= 1
    assert not marker.exists()
