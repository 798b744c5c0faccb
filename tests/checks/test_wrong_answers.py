"""Every wrong answer of tests/support/submissions/ refused as it says, and every failure of the
checks reached by one, in this process (tests/support/lesson_run.py: a lesson's cells run in
order, a test cell's visible and hidden tests apart): what tests/tooling/test_mutants.py runs
against each mutant of the checks, and what real nbgrader grades in
tests/course/test_course.py (``WRONG``)."""
import pytest

import course
import lesson_run
import mutants


@pytest.mark.parametrize("lesson", course.LESSONS)
def test_the_solution_passes_every_test_visible_and_hidden(lesson):
    assert lesson_run.solution_problems(lesson) == []


@pytest.mark.parametrize("lesson", course.LESSONS)
def test_every_wrong_answer_is_refused_as_it_says(lesson):
    wrongs = lesson_run.wrongs(lesson)
    assert len({w.name for w in wrongs}) == len(wrongs), "two wrong answers of one name"
    problems = {w.name: lesson_run.judged(lesson, w) for w in wrongs}
    assert {name: said for name, said in problems.items() if said} == {}


@pytest.mark.parametrize("lesson", course.LESSONS)
def test_every_exercise_has_a_plainly_wrong_answer(lesson):
    """Beside the misconceptions and the answers of the wrong kind: an answer of the right
    kind that is simply wrong (``plain``), named by no misconception."""
    exercises = set(lesson_run.exercises(lesson))
    plain = {next(iter(w.answers)) for w in lesson_run.wrongs(lesson)
             if w.name.startswith("plain-") and not w.misconception and not w.predicted}
    assert plain >= exercises, f"no plainly wrong answer for {sorted(exercises - plain)}"


def test_every_failure_of_every_check_is_reached():
    """Each fail(...) of autograd_lab/checks/ runs for some wrong answer (or, for the one a
    graded kernel's check raises, in a graded run's kernel): a failure no answer reaches is
    one no test shows to refuse anything."""
    with lesson_run.lines_run() as seen:
        for lesson in course.LESSONS:
            for wrong in lesson_run.wrongs(lesson):
                lesson_run.run(lesson, wrong.answers, until=next(iter(wrong.answers)))
        lesson_run.graded_kernel(course.LESSONS[0])
    unreached = [f"{f.module}.py:{f.line} {f.function}: {f.text}"
                 for f in mutants.failures() if (f.path, f.line) not in seen]
    assert unreached == []


def test_a_graded_kernels_check_claims_nothing():
    """In a graded run's kernel every check fails as VerdictPending (the grader judges)."""
    found = lesson_run.graded_kernel(course.LESSONS[0])
    assert found and all(type(cell.visible.error).__name__ == "VerdictPending"
                         for cell in found.values()), found
