"""`autograd-lab selftest`: the course grades its own solutions full and its blank releases zero,
and says WRONG where a solution is not right. On two lessons of the real course (test_course.py
grades every lesson's solution and blank release as part of a class)."""
import shutil

import nbformat
import pytest

import course as lessons
from autograd_lab_grader.steps import selftest
from autograd_lab_grader.course import CONFIG_FILE, Course

pytestmark = pytest.mark.skipif(len(lessons.LESSONS) < 2, reason="the course has no lessons yet")


def _wrong_exercise(lesson):
    """A wrong answer of ``lesson`` to an exercise (not a prediction, which keeps its points)."""
    from importlib import import_module
    return next(w for w in import_module(f"submissions.{lesson}").WRONG
                if not w.predicted and len(w.answers) == 1)


def test_selftest_grades_solutions_full_and_blanks_zero_and_flags_a_wrong_solution(tmp_path):
    right, broken = lessons.LESSONS[:2]
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(lessons.ROOT / CONFIG_FILE, root / CONFIG_FILE)
    for lesson in (right, broken):
        shutil.copytree(lessons.ROOT / "solutions" / lesson, root / "solutions" / lesson)
    # the second lesson's solution notebook answers one exercise wrongly
    ((cell_id, wrong_code),) = _wrong_exercise(broken).answers.items()
    path = root / "solutions" / broken / f"{broken}.ipynb"
    nb = nbformat.read(path, as_version=4)
    (cell,) = [c for c in nb.cells if lessons.grade_id(c) == cell_id]
    cell.source = wrong_code
    nbformat.write(nb, path)

    course = Course(root)
    results = selftest.selftest(course)
    assert [r.lesson for r in results] == course.lessons() == [right, broken]
    first, second = results
    assert first.ok and first.solution.startswith("full") and first.blank.startswith("zero"), first
    assert not second.ok and second.solution.startswith("WRONG"), second
    assert second.blank.startswith("zero"), second
