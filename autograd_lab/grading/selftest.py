"""The course grades itself: every lesson's solution must get full marks, and its blank release
(what learners start from) zero. Runs in a scratch copy of the course with its own gradebook,
through the same grading path as a class (``grade.grade``)."""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import grade, status
from .course import CONFIG_FILE, Course


@dataclass
class Result:
    lesson: str
    solution: str
    blank: str

    @property
    def ok(self) -> bool:
        return self.solution.startswith("full") and self.blank.startswith("zero")


def _describe(row, expected) -> str:
    if row["status"] != status.GRADED:
        return f"{row['status']}: {row['reason']}"
    score = f"{row['score']:g}/{row['max_score']:g}"
    expected_score = row["max_score"] if expected == "full" else 0
    return f"{expected} {score}" if row["score"] == expected_score else f"WRONG {score}"


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
            rows = {r["student"]: r for r in grade.grade(copy, lesson, options)}
            results.append(Result(lesson, _describe(rows["solution"], "full"),
                                  _describe(rows["blank"], "zero")))
    return results
