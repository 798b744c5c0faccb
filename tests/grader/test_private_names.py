"""The private parts of jupyter_client, nbclient, nbgrader, nbconvert and ipykernel that the
grader relies on are all listed in ``autograd_lab_grader/patches.py`` (``PRIVATE``), and are
still there, with the signatures they had when the grader was written against them: after an
upgrade of one of those libraries, this is the test that says what to look at."""
import re
from pathlib import Path

import pytest

import autograd_lab_grader
from autograd_lab_grader import patches

GRADER = Path(autograd_lab_grader.__file__).resolve().parent


@pytest.mark.parametrize("entry", patches.PRIVATE, ids=lambda e: f"{e.module}.{e.name}")
def test_every_private_name_relied_on_is_there_as_written_against(entry):
    assert [p for p in patches.problems() if p.startswith(f"{entry.module}.{entry.name} ")] == []


def private(entry) -> bool:
    """Whether an entry relies on a private name: one of its parts begins with ``_`` (a dunder
    aside), or it replaces a name on a library's module."""
    return entry.how == "replaced" or any(
        part.startswith("_") and not part.startswith("__") for part in entry.name.split("."))


def test_at_most_eight_private_names_each_saying_why_no_public_one_serves():
    relied_on = [entry for entry in patches.PRIVATE if private(entry)]
    assert 1 <= len(relied_on) <= 8, [e.name for e in relied_on]
    assert all(len(entry.why.split()) >= 12 for entry in relied_on), \
        [e.name for e in relied_on if len(e.why.split()) < 12]
    # every other entry is a public name, and says so
    assert all(entry.why.startswith("public") for entry in patches.PRIVATE if not private(entry))


def test_the_check_sees_a_name_gone_and_a_signature_changed(monkeypatch):
    gone = patches.Private("jupyter_client.manager", "KernelManager._no_such_method", "called",
                           "(self)", patches.JUPYTER_CLIENT, "a test")
    changed = patches.Private("jupyter_client.manager", "KernelManager._async_wait",
                              "overridden", "(self, pollinterval: float = 0.5) -> None",
                              patches.JUPYTER_CLIENT, "a test")
    said = patches.Private("jupyter_client.manager", "KernelManager._async_wait", "behaviour",
                           None, patches.JUPYTER_CLIENT, "a test", needs=("no such text",))
    monkeypatch.setattr(patches, "PRIVATE", (gone, changed, said))
    found = patches.problems()
    assert len(found) == 3 and "gone" in found[0] and "signature" in found[1] \
        and "no such text" in found[2], found


def _source(path: Path) -> str:
    return path.read_text()


def test_only_patches_py_reaches_into_a_library_and_the_table_names_what_it_overrides():
    """No other module of the grader calls a private method of a class it extends, or sets an
    attribute of an imported module (the grader's own ``sandbox/inside/`` aside: it runs in
    the kernel, and is listed in the table all the same); every private method patches.py
    overrides or calls through super() is in PRIVATE."""
    listed = {entry.name.rpartition(".")[2] for entry in patches.PRIVATE}
    for path in sorted(GRADER.rglob("*.py")):
        text = _source(path)
        calls = set(re.findall(r"super\(\)\.(_[a-z]\w*)\(", text))
        if path.name == "patches.py":
            assert calls <= listed, calls - listed
            continue
        assert not calls, f"{path.relative_to(GRADER)} overrides a private method: {calls}"
        # (module.attribute = ... on a library module: nbgrader.api.create_engine = ...)
        assert not re.findall(r"^\s*(?:nbgrader|nbconvert|nbclient|jupyter_client|ipykernel|"
                              r"jsonschema|common)\.[\w.]+\s*=(?!=)", text, re.MULTILINE), path


def test_patches_made_keep_what_they_replaced():
    """What course.py replaced of nbgrader's is checked as the library had it (the original)."""
    import nbgrader.api

    from autograd_lab_grader import course

    course._one_engine_per_gradebook()
    assert nbgrader.api.create_engine is course._engine
    entry = next(e for e in patches.PRIVATE if e.name == "create_engine")
    assert patches.resolve(entry) is not course._engine
    assert patches.resolve(entry).__module__.startswith("sqlalchemy")


NBGRADER_INIT = r"""
import sys
import autograd_lab_grader
import nbgrader.api, nbgrader.apps, nbgrader.converters
from nbgrader import preprocessors
light = not any(m.split(".")[0] == "jupyter_server" or
                m.startswith("nbgrader.server_extensions") for m in sys.modules)
version = nbgrader.__version__
points = nbgrader._jupyter_server_extension_points()
print(light, version, points, "nbgrader.server_extensions.formgrader" in sys.modules)
"""


def test_the_grader_imports_nbgrader_without_its_server_extensions_until_asked():
    """(autograd_lab_grader/__init__.py) nbgrader's modules import without its package's
    __init__, and its server extensions, until a name only __init__ defines is asked for:
    then the real __init__ runs, as a Jupyter server loading the extension needs."""
    import subprocess
    import sys

    from importlib.metadata import version

    result = subprocess.run([sys.executable, "-c", NBGRADER_INIT], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split(None, 2)[:2] == ["True", version("nbgrader")], result.stdout
    assert result.stdout.strip().endswith("[{'module': 'nbgrader'}] True"), result.stdout


LAZY_IMPORTS = r"""
import sys
import autograd_lab_grader
from autograd_lab_grader.steps import preload
ran = sorted(name for name in autograd_lab_grader.LAZY
             if type(sys.modules[name]).__name__ != "module")
import requests, yaml
used = (yaml.safe_load("a: 1"), requests.codes.ok, type(yaml).__name__)
print(ran == sorted(autograd_lab_grader.LAZY), used, "requests.adapters" in sys.modules)
"""


def test_what_grading_never_runs_is_imported_lazily_and_works_when_used():
    """(autograd_lab_grader/__init__.py, LAZY) importing everything a grading process
    preloads leaves every module of LAZY bound but not run (a lazy module's class until its
    first attribute), and each works as itself once used."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", LAZY_IMPORTS], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True ({'a': 1}, 200, 'module') True", result.stdout
