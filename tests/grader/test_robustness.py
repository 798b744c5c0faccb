"""`autograd-lab grade` on a class where learners broke everything a learner can break: each
submission gets the right status and score, and the others are graded all the same.

One class, graded once (two jobs), checked by one test per kind of submission. The fixture
lesson has two exercises: square (2 points) and slope (3 points); every broken submission
breaks the first one and answers the second correctly, so "3 of 5" means the grader went on.
"""
import hashlib

import pytest
from nbformat.v4 import new_code_cell

import gradingcourse as gc
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.steps import grade
from autograd_lab_grader.course import Course

WRONG_SQUARE = "def square(x):\n    return 2 * x"

# student id -> (answers, edit of the notebook or raw bytes, expected status, score, reason)
CASES = {
    "infinite-loop": ({"answer_square": "while True:\n    pass"}, None,
                      status.GRADED, 3, "stopped at the time limit: answer_square"),
    "swallows-interrupt": ({"answer_square": "import signal\n"
                                             "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                             "while True:\n    pass"}, None,
                           status.FAILED, None, "did not stop when interrupted"),
    "os-exit": ({"answer_square": "import os\nos._exit(0)"}, None,
                status.FAILED, None, "the kernel died"),
    "kernel-killed": ({"answer_square": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"},
                      None, status.FAILED, None, "the kernel died"),
    "syntax-error": ({"answer_square": "def square(x)\n    return x * x"}, None,
                     status.GRADED, 3, ""),
    "edited-test": ({"answer_square": WRONG_SQUARE},
                    lambda nb: setattr(gc.cell(nb, "test_square"), "source", "pass"),
                    status.GRADED, 3, ""),
    "deleted-test": ({"answer_square": WRONG_SQUARE},
                     lambda nb: nb.cells.remove(gc.cell(nb, "test_square")),
                     status.GRADED, 3, ""),
    "rebound-builtins": ({"answer_square": WRONG_SQUARE + "\nabs = lambda x: 0\n"
                                                          "isinstance = lambda *a: True\n"
                                                          "AssertionError = Exception\n"
                                                          "len = lambda x: 0"}, None,
                         status.GRADED, 3, ""),
    "not-json": (None, b'{"cells": [ this is not json', status.FAILED, None,
                 "not a valid notebook"),
    # a cell's nbgrader metadata is the instructor's, whatever the learner's copy says
    # (JupyterLab's property inspector shows it): restored as released before grading
    "old-metadata": ({"answer_square": WRONG_SQUARE},
                     lambda nb: gc.cell(nb, "answer_square").metadata.nbgrader.update(
                         schema_version=1),
                     status.GRADED, 3, "restored the nbgrader metadata of 1 cell(s) as "
                                       "released: answer_square"),
    "edited-points": ({"answer_square": WRONG_SQUARE},
                      lambda nb: gc.cell(nb, "test_square").metadata.nbgrader.update(
                          points="lots"),
                      status.GRADED, 3, "restored the nbgrader metadata of 1 cell(s) as "
                                        "released: test_square"),
    "test-ungraded": ({"answer_square": WRONG_SQUARE},
                      lambda nb: gc.cell(nb, "test_square").metadata.nbgrader.update(
                          grade=False, solution=True, points=0),
                      status.GRADED, 3, "restored the nbgrader metadata"),
    # a released cell copied (JupyterLab's copy keeps its metadata): the last copy is the one
    # graded, as nbgrader's own DeduplicateIds has it, the others are plain cells
    "copied-cell": ({"answer_square": WRONG_SQUARE},
                    lambda nb: nb.cells.insert(0, new_code_cell("pass", metadata={
                        "nbgrader": dict(gc.cell(nb, "test_square").metadata.nbgrader)})),
                    status.GRADED, 3, "removed nbgrader metadata from 1 copied cell(s)"),
    # a graded cell the learner made up (a grade_id the release does not have, and one with
    # none) counts for nothing, and the lesson's points stay its own
    "made-up-cells": ({"answer_square": WRONG_SQUARE},
                      lambda nb: nb.cells.extend([
                          new_code_cell("pass", metadata={"nbgrader": {
                              "grade": True, "grade_id": "bonus", "locked": True,
                              "points": 100, "schema_version": 3, "solution": False}}),
                          new_code_cell("pass", metadata={"nbgrader": {
                              "grade": True, "points": 100, "schema_version": 3}}),
                          new_code_cell("pass", metadata={"nbgrader": "graded"})]),
                      status.GRADED, 3, "removed nbgrader metadata from 3 cell(s)"),
    "huge-output": ({"answer_square": "def square(x):\n    return x * x\n"
                                      "for _ in range(200):\n    print('x' * 1_000_000)"}, None,
                    status.GRADED, 5, ""),
    "memory-bomb": ({"answer_square": "hoard = bytearray(3 * 1024**3)\n" + WRONG_SQUARE}, None,
                    status.GRADED, 3, ""),
    "wrong-name": ({}, "Copy of fixture (1).ipynb", status.GRADED, 5,
                   "graded 'Copy of fixture (1).ipynb' as 'fixture.ipynb'"),
}
# graded last (ids sort after the cases): everything before them must not have stopped the grader
CONTROLS = {"zz-right": 5, "zz-wrong": 3}


def _fingerprint(folder):
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                         p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    root = gc.make_course(tmp_path_factory.mktemp("class") / "course", timeout=4)
    for student, (answers, extra, *_expected) in CASES.items():
        if isinstance(extra, bytes):
            gc.submit(root, student, raw=extra)
        elif isinstance(extra, str):
            gc.submit(root, student, answers, name=extra)
        else:
            gc.submit(root, student, answers, edit=extra)
    gc.submit(root, "zz-right")
    gc.submit(root, "zz-wrong", {"answer_square": WRONG_SQUARE})
    course = Course(root)
    submitted = _fingerprint(root / "submitted")
    rows = grade.grade(course, gc.LESSON, grade.Options(jobs=2))
    return course, {row.student: row for row in rows}, submitted


@pytest.mark.parametrize("student", list(CASES))
def test_each_broken_submission_gets_its_status_and_score(graded_class, student):
    course, rows, _ = graded_class
    *_, expected_status, expected_score, reason = CASES[student]
    row = rows[student]
    assert row.status == expected_status, row
    assert row.score == expected_score, row
    if expected_status == status.GRADED:
        assert row.max_score == 5, row          # the lesson's points, whatever was handed in
    assert reason in row.reason, row
    if expected_status == status.FAILED:
        assert row.reason
    # the stored record is the one returned, and the others were graded
    stored = status.read(course, gc.LESSON)
    assert stored[(gc.LESSON, student)].status == expected_status
    for control, score in CONTROLS.items():
        assert (rows[control].status, rows[control].score) == (status.GRADED, score)
    assert set(rows) == set(CASES) | set(CONTROLS)


def test_huge_output_is_cut_before_it_reaches_the_autograded_notebook(graded_class):
    course, *_ = graded_class
    notebook = course.directory("autograded") / "huge-output" / gc.LESSON / f"{gc.LESSON}.ipynb"
    assert notebook.stat().st_size < 1_000_000
    assert "characters cut by the grader" in notebook.read_text()


def test_submitted_files_are_never_modified(graded_class):
    course, _, before = graded_class
    assert _fingerprint(course.root / "submitted") == before


def test_copies_of_a_released_cell_cannot_make_the_staged_notebook_grow(tmp_path):
    """Every copy of a released cell but the last loses its metadata before the notebook is
    staged, rather than each being given the release's: a notebook of copies is no larger
    staged than handed in."""
    import nbformat

    from autograd_lab_grader.steps import worker

    root = gc.make_course(tmp_path / "course")
    course = Course(root)
    copy = {"nbgrader": {"grade_id": "test_square"}}
    path = gc.submit(root, "copier", edit=lambda nb: nb.cells.extend(
        new_code_cell("", metadata=copy) for _ in range(5000)))
    staged = tmp_path / "staged"
    release = course.directory("release") / gc.LESSON / f"{gc.LESSON}.ipynb"
    note, _ = worker.stage(path.parent, staged, gc.LESSON, release)
    assert "removed nbgrader metadata from 5000 copied cell(s)" in note, note
    written = staged / f"{gc.LESSON}.ipynb"
    assert written.stat().st_size <= path.stat().st_size
    ids = [c.metadata.get("nbgrader", {}).get("grade_id")
           for c in nbformat.read(written, as_version=4).cells]
    assert ids.count("test_square") == 1 and ids[-1] == "test_square"
