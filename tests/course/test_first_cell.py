"""A lesson's first code cell costs what importing the engine costs: it imports
``autograd_lab`` (and its ``viz``), and a lesson imports anything heavier, matplotlib above
all (0.6 s of CPU, more than numpy and the engine together), in the cell that first uses it.
Every kernel, a learner's and each submission's at grading, runs the first cell; few lessons
plot, and those late.

Each released notebook's install cell and first code cell run in a fresh Python; what they
load beyond ``import numpy, autograd_lab`` must be the standard library or ``ALLOWED``.
"""
import os
import subprocess
import sys

import nbformat
import pytest

import course

# the engine's drawings: viz and the graphviz package it renders with (under 0.1 s of CPU)
ALLOWED = {"autograd_lab", "graphviz"}
INSTALL_TAG = "course-install"

MODULES = "import sys\nprint('\\n'.join(sorted(sys.modules)))\n"


def loaded(*cells):
    """The modules a fresh Python holds after running ``cells``, one after another."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(course.ROOT), os.environ.get("PYTHONPATH", "")])}
    script = "".join(f"exec(compile({cell!r}, 'cell', 'exec'))\n" for cell in cells)
    out = subprocess.run([sys.executable, "-c", script + MODULES], capture_output=True,
                         text=True, env=env, cwd=course.ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def heavy(modules, baseline):
    """The packages of ``modules`` beyond ``baseline`` that are neither the standard library
    nor ``ALLOWED``."""
    return sorted({m.split(".")[0] for m in modules - baseline}
                  - set(sys.stdlib_module_names) - ALLOWED)


def opening_cells(lesson):
    """The install cell and the lesson's first code cell, as the released notebook has them."""
    cells = [c for c in nbformat.read(course.release_path(lesson), as_version=4).cells
             if c.cell_type == "code"]
    install = [c.source for c in cells if INSTALL_TAG in c.metadata.get("tags", [])]
    first = next(c.source for c in cells if INSTALL_TAG not in c.metadata.get("tags", []))
    return install + [first]


@pytest.fixture(scope="module")
def baseline():
    return loaded("import numpy, autograd_lab")


@pytest.mark.parametrize("lesson", course.LESSONS)
def test_the_first_code_cell_imports_no_more_than_the_engine(lesson, baseline):
    cells = opening_cells(lesson)
    assert "autograd_lab" in cells[-1], f"{lesson}: its first code cell is not the imports"
    assert heavy(loaded(*cells), baseline) == [], \
        f"{lesson}: its first code cell imports these; import them where they are first used"


def test_a_plotting_import_is_heavy(baseline):
    # the check above fails a first cell that imports pyplot, as lessons 02, 05 and 10 once did
    assert "matplotlib" in heavy(loaded("import matplotlib.pyplot as plt"), baseline)
    assert heavy(loaded("import autograd_lab as torch\nfrom autograd_lab import viz"),
                 baseline) == []
