"""`autograd-lab` on the course's real lessons: the course grades its own solutions full and its
blank release zero, and the report counts the misconceptions of a class of real wrong answers."""
import importlib

import nbformat
import pytest

import course as lessons
from autograd_lab.grading import grade, report, selftest, status
from autograd_lab.grading.course import Course

pytestmark = pytest.mark.skipif(not lessons.LESSONS, reason="the course has no lessons yet")


def test_selftest_passes_for_every_lesson():
    results = selftest.selftest(Course(lessons.ROOT))
    assert [r.lesson for r in results] == Course(lessons.ROOT).lessons()
    for result in results:
        assert result.ok, result


def _wrong_answers(lesson):
    return importlib.import_module(f"submissions.{lesson}").WRONG


def test_report_counts_each_misconception_of_a_class(tmp_path):
    # the lesson whose wrong answers name the most misconceptions
    lesson = max(lessons.LESSONS, key=lambda l: len({w.misconception for w in _wrong_answers(l)}))
    wrongs = _wrong_answers(lesson)
    root = tmp_path / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_bytes((lessons.ROOT / "nbgrader_config.py").read_bytes())
    course = Course(root)
    import shutil
    shutil.copytree(lessons.ROOT / "solutions" / lesson, root / "solutions" / lesson)
    assert course.api().generate_assignment(lesson)["success"]
    notebooks = {"right": lessons.submission(lesson)}
    notebooks.update({w.name: lessons.submission(lesson, w.answers) for w in wrongs})
    for student, nb in notebooks.items():
        folder = course.submission(lesson, student)
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{lesson}.ipynb")
    rows = grade.grade(course, lesson, grade.Options(jobs=2))
    assert {r["status"] for r in rows} <= {status.GRADED, status.MANUAL}, rows

    result = report.report(course, lesson)
    assert result.learners == len(notebooks)
    shown = {}
    for exercise in result.exercises:
        for misconception, students in exercise.learners.items():
            for student in students:
                shown.setdefault(student, set()).add(misconception)
    for wrong in wrongs:
        if wrong.misconception:
            assert wrong.misconception in shown.get(wrong.name, set()), wrong
    assert "right" not in shown
    # and each learner shows the misconception of their answer, and no other
    assert {student: ids for student, ids in shown.items()} == {
        w.name: {w.misconception} for w in wrongs if w.misconception}
    # every test cell: who passed it is everyone but those who failed it
    for exercise in result.exercises:
        assert exercise.passed + exercise.failed == len(notebooks)
    assert all(e.passed >= 1 for e in result.exercises)    # the right answer passes them all
    png = report.write_figure(result, tmp_path / "report.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
