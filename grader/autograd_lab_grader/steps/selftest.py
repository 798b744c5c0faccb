"""The course grades itself: every lesson's solution must get full marks, and its blank release
(what learners start from) zero, on the autograded (code) cells. Runs in a scratch copy of the course with its own gradebook,
through the same grading path as a class (``grade.grade``)."""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import grade
from ..gradebook import status
from ..course import CONFIG_FILE, Course


@dataclass
class Result:
    lesson: str
    solution: str
    blank: str

    @property
    def ok(self) -> bool:
        return self.solution.startswith("full") and self.blank.startswith("zero")


def _describe(course: Course, row, expected) -> str:
    """The autograded score (code cells: written answers wait for a human) against expected."""
    if row.status not in (status.GRADED, status.MANUAL):
        return f"{row.status}: {row.reason}"
    with course.gradebook() as gb:
        submission = gb.find_submission(row.lesson, row.student)
        score, most = submission.code_score, submission.max_code_score
    expected_score = most if expected == "full" else 0
    return f"{expected if score == expected_score else 'WRONG'} {score:g}/{most:g}"


def selftest(course: Course, lessons: list[str] | None = None,
             options: grade.Options = grade.Options()) -> list[Result]:
    lessons = lessons or course.lessons()
    results = []
    with tempfile.TemporaryDirectory(prefix="autograd-lab-selftest-") as tmp:
        scratch = Path(tmp) / "course"
        scratch.mkdir()
        shutil.copy2(course.root / CONFIG_FILE, scratch / CONFIG_FILE)
        source = course.directory("source")
        shutil.copytree(source, scratch / source.relative_to(course.root))
        copy = Course(scratch)
        release = course.directory("release")
        for lesson in lessons:
            result = copy.api().generate_assignment(lesson, force=True, create=True)
            if not result["success"]:
                raise RuntimeError(f"releasing {lesson} failed:\n{result.get('log', '')}")
            # the committed release when there is one: it is what learners really get
            blank = release / lesson / f"{lesson}.ipynb"
            if not blank.is_file():
                blank = copy.directory("release") / lesson / f"{lesson}.ipynb"
            for student, notebook in (("solution", source / lesson / f"{lesson}.ipynb"),
                                      ("blank", blank)):
                folder = copy.submission(lesson, student)
                folder.mkdir(parents=True)
                shutil.copy2(notebook, folder / f"{lesson}.ipynb")
        # every lesson's two submissions in one pool: the cores stay busy across lessons
        rows = {(r.lesson, r.student): r for r in grade.run(
            copy, [(lesson, s) for lesson in lessons for s in ("solution", "blank")], options)}
        for lesson in lessons:
            results.append(Result(lesson, _describe(copy, rows[lesson, "solution"], "full"),
                                  _describe(copy, rows[lesson, "blank"], "zero")))
    return results
