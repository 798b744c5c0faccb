"""`autograd-lab selftest` on the course's real lessons: the course grades its own solutions full
and its blank release zero. (The report on a class of real wrong answers is test_course.py's: it
reads the class that file grades.)"""
import pytest

import course as lessons
from autograd_lab.grading import selftest
from autograd_lab.grading.course import Course

pytestmark = pytest.mark.skipif(not lessons.LESSONS, reason="the course has no lessons yet")


def test_selftest_passes_for_every_lesson():
    results = selftest.selftest(Course(lessons.ROOT))
    assert [r.lesson for r in results] == Course(lessons.ROOT).lessons()
    for result in results:
        assert result.ok, result
