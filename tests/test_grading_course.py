"""`autograd-lab` on the course's real lessons: the course grades its own solutions full and its
blank release zero, and the report counts the misconceptions of a class of real wrong answers,
those of wrong predictions (which keep their points) apart from those of exercises."""
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
    assert any(w.predicted and w.misconception for w in wrongs), lesson
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
    shown, predicted = {}, {}
    for exercise in result.exercises:
        for misconception, students in exercise.learners.items():
            for student in students:
                shown.setdefault(student, set()).add(misconception)
        for misconception, students in exercise.predicted.items():
            assert exercise.prediction
            for student in students:
                predicted.setdefault(student, set()).add(misconception)
    assert "right" not in shown and "right" not in predicted
    # each learner shows the misconception of their answer, and no other: a wrong prediction's
    # as a prediction, an exercise's as an exercise
    assert shown == {w.name: {w.misconception} for w in wrongs
                     if w.misconception and not w.predicted}
    assert predicted == {w.name: {w.misconception} for w in wrongs
                         if w.misconception and w.predicted}
    # next to each other, per misconception: learners who showed it in an exercise, and in a
    # wrong prediction
    both = result.by_misconception()
    for misconception in {w.misconception for w in wrongs if w.misconception}:
        assert both[misconception] == (
            sum(misconception in ids for ids in shown.values()),
            sum(misconception in ids for ids in predicted.values())), misconception
    # a prediction's bar: who predicted right, who predicted wrong showing what
    rows = {exercise.name: dict(parts) for exercise, parts in report.segments(result)}
    for wrong in wrongs:
        if wrong.predicted and wrong.misconception:
            (cell,) = wrong.answers
            parts = rows[f"{cell}_test"]
            assert parts["predicted right"] >= 1
            assert parts[report.PREDICTED_WRONG + report.human_name(wrong.misconception)] >= 1
    # every test cell: who passed it is everyone but those who failed it
    for exercise in result.exercises:
        assert exercise.passed + exercise.failed == len(notebooks)
    assert all(e.passed >= 1 for e in result.exercises)    # the right answer passes them all
    png = report.write_figure(result, tmp_path / "report.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
