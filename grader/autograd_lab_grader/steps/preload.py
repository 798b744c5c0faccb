"""What the forkserver of a grading run (``grade.py``) loads before it forks one process per
submission: ``worker`` and its imports, and the work each of those processes would otherwise
repeat after its fork, done here once.

Sampled with py-spy on lesson 03, a class of 12: compiling nbformat's schema into validators,
the import of IPython that jupyter_client's kernel-spec lookup makes, and jsonschema's first
check of nbgrader's cell schema came to about a fifth of a grading process's Python time outside
its kernel. What a grading process is spared, in all: `benchmarks/preload.py` (README, "What
warm kernels and the preload gain"). Nothing here reads a submission; of the course, only the
released notebooks of the lessons the run grades (``render_released``).
"""
import json
import os

import IPython.paths  # noqa: F401  (jupyter_client.kernelspec imports it to list kernel dirs)
import nbformat
import nbgrader.api  # noqa: F401  (the gradebook's ORM classes)
from nbgrader.nbgraderformat import MetadataValidator
from sqlalchemy.orm import configure_mappers

from nbgrader.apps import NbGraderAPI  # noqa: F401  (worker's autograde)

from .. import course
from ..reading import page
from . import feedback, worker  # noqa: F401


def warm() -> None:
    # (a Course unpickled in a grading process runs no __post_init__: its patches of nbgrader
    #  are made here)
    course._read_alembic_head_here()
    course._one_engine_per_gradebook()
    course._metadata_schema_checked_once()
    # the validators every notebook the course writes is checked with: reading it (strict) and
    # after nbconvert's last preprocessor (relaxed); nbformat keeps them per process
    for relaxed in (False, True):
        nbformat.validator.get_validator(4, nbformat.v4.nbformat_minor, relax_add_props=relaxed)
    # and the one nbgrader checks each graded cell's metadata with (kept by course.py)
    cell = nbformat.v4.new_code_cell(metadata={"nbgrader": {
        "schema_version": 3, "grade": True, "solution": False, "locked": True,
        "grade_id": "warm", "points": 1, "task": False}})
    MetadataValidator().validate_nb(nbformat.v4.new_notebook(cells=[cell]))
    # the gradebook's ORM classes are set up (their mappers configured) at the first query of
    # a process: nine percent of a grading process's Python time, sampled as above
    configure_mappers()
    # a learner's Markdown, rendered and cleaned for the inert notebook: the renderer's and
    # the cleaner's patterns are compiled at their first use (a third of a grading process's
    # Python time outside its kernel, lesson 02: cProfile), latex2mathml imported, and
    # pygments' Python lexer, which colours a fenced block, builds its patterns (the lessons
    # fence their code as python; a grading process paid 0.05 CPU-s for it)
    page.render_markdown("# *A* **b** `c` [d](https://e.org) $x^2$\n\n- f\n\n| g |\n|---|\n\n"
                         "```python\nx = torch.ones(2)  # c\n```\n")


# the released notebooks (os.pathsep between them) whose Markdown a forkserver renders before
# it forks (set by grade.run for the server it starts)
RELEASED = "AUTOGRAD_LAB_RELEASED"


def render_released(paths) -> None:
    """The Markdown cells of the lessons' released notebooks, rendered and cleaned once here,
    before the grading processes fork: a learner's notebook holds most of them as released,
    and each process then finds them done (``page._per_text``) instead of rendering them again
    (a quarter of a grading process's Python time outside its kernel, lesson 02: cProfile).
    The course's own files; one that is not there, or not a notebook, is skipped."""
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                cells = json.load(f)["cells"]
            sources = [cell["source"] for cell in cells if cell["cell_type"] == "markdown"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for source in sources:
            page.render_markdown(source if isinstance(source, str) else "".join(source))


warm()
render_released(filter(None, os.environ.get(RELEASED, "").split(os.pathsep)))
