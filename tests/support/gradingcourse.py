"""A tiny nbgrader course for the grading tests: one lesson, two autograded exercises whose
checks fail the way autograd_lab.checks does (a CheckFailed message ending in a
`Misconception [id]:` line), and helpers that write learner submissions into it."""
from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

LESSON = "fixture"
POINTS = {"test_square": 2, "test_slope": 3}
TOTAL = sum(POINTS.values())

CONFIG = """\
c = get_config()
c.CourseDirectory.root = "."
c.CourseDirectory.course_id = "fixture-course"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.Execute.timeout = {timeout}
c.OverwriteCells.add_missing_cells = True
"""

# the lesson's checks, as a module next to the notebook (nbgrader copies it into autograded/)
CHECKS = '''\
class CheckFailed(AssertionError):
    """A learner's answer is wrong; the message says how, and which misconception it shows."""


def _fail(what, expected, found, misconception=None, why=""):
    lines = [what, f"  expected: {expected!r}", f"  found:    {found!r}"]
    if misconception:
        lines.append(f"Misconception [{misconception}]: {why}")
    raise CheckFailed("\\n".join(lines))


def square(fn):
    got = fn(3.0)
    if got == 6.0:
        _fail("square(3.0)", 9.0, got, "gradient-is-input", "the derivative of x**2 is not x**2")
    if got != 9.0:
        _fail("square(3.0)", 9.0, got)


def slope(fn):
    got = fn(3.0)
    if got == 9.0:
        _fail("slope of x**2 at 3.0", 6.0, got, "gradient-is-input",
              "x.grad holds the slope at x, not the value of the function")
    if got == 3.0:
        _fail("slope of x**2 at 3.0", 6.0, got, "gradient-shape", "a made-up second id")
    if got != 6.0:
        _fail("slope of x**2 at 3.0", 6.0, got)
'''

SOLUTIONS = {
    "answer_square": "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION",
    "answer_slope": ("def slope(x):\n    ### BEGIN SOLUTION\n"
                     "    t = torch.tensor(x, requires_grad=True)\n    (t * t).backward()\n"
                     "    return t.grad.item()\n    ### END SOLUTION"),
}
TESTS = {
    "test_square": ("import fixturechecks as check\ncheck.square(square)\n"
                    "### BEGIN HIDDEN TESTS\nassert square(-2.0) == 4.0, 'HIDDEN-SQUARE'\n"
                    "### END HIDDEN TESTS"),
    "test_slope": ("import fixturechecks as check\ncheck.slope(slope)\n"
                   "### BEGIN HIDDEN TESTS\nassert slope(-1.0) == -2.0, 'HIDDEN-SLOPE'\n"
                   "### END HIDDEN TESTS"),
}


def _meta(grade_id, *, grade=False, solution=False, locked=False, points=None):
    meta = {"schema_version": 3, "grade": grade, "solution": solution, "locked": locked,
            "grade_id": grade_id}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _lesson_notebook():
    cells = [
        new_markdown_cell("# A fixture lesson", metadata=_meta("intro", locked=True)),
        new_code_cell("import autograd_lab as torch", metadata=_meta("setup", locked=True)),
    ]
    for answer, test in (("answer_square", "test_square"), ("answer_slope", "test_slope")):
        cells.append(new_code_cell(SOLUTIONS[answer], metadata=_meta(answer, solution=True)))
        cells.append(new_code_cell(TESTS[test], metadata=_meta(test, grade=True, locked=True,
                                                                points=POINTS[test])))
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def make_course(root: Path, timeout: int = 5, db_url: str | None = None) -> Path:
    """Write the course and release its lesson (which also registers it in the gradebook)."""
    from autograd_lab_grader.course import Course

    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(CONFIG.format(timeout=timeout))
    source = root / "solutions" / LESSON
    source.mkdir(parents=True)
    (source / "fixturechecks.py").write_text(CHECKS)
    nbformat.write(_lesson_notebook(), source / f"{LESSON}.ipynb")
    result = Course(root, db_url).api().generate_assignment(LESSON)
    assert result["success"], result.get("log")
    return root


def released(root: Path):
    return nbformat.read(root / "notebooks" / LESSON / f"{LESSON}.ipynb", as_version=4)


def submit(root: Path, student: str, answers: dict[str, str] | None = None, *,
           edit=None, name: str = LESSON + ".ipynb", raw: bytes | None = None) -> Path:
    """Write student's submission: the released notebook with `answers` ({grade_id: code}),
    then `edit(nb)` for anything else; or `raw` bytes as they are."""
    folder = root / "submitted" / student / LESSON
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if raw is not None:
        path.write_bytes(raw)
        return path
    nb = released(root)
    answers = {**{k: v.replace("    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", "")
                  for k, v in SOLUTIONS.items()}, **(answers or {})}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    if edit:
        edit(nb)
    nbformat.write(nb, path)
    return path


def copy_course(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def processes_with(marker: str) -> list[str]:
    """The processes on this machine whose command line holds `marker` (what an attack
    started and the sandbox should have ended), pytest's own aside."""
    import os

    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline and "pytest" not in cmdline:
            found.append(f"{pid}: {cmdline}")
    return found


def cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
