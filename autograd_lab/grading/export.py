"""CSV exports with a status column, so that a failure is never read as a 0.0.

grades.csv     a row per learner and lesson: status, score, max score, reason, and what the
               grading sandbox refused or which limit it hit (or that it was off)
questions.csv  a row per learner, lesson and question (nbgrader grade cell): the same, per cell
A lesson never graded by `autograd-lab grade` but graded by plain nbgrader is exported from
nbgrader's own record; a learner with nothing at all for a lesson is "missing".
"""
from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import MissingEntry

from . import status
from .course import Course

GRADES = ("student", "lesson", "status", "score", "max_score", "reason", "sandbox")
QUESTIONS = ("student", "lesson", "question", "status", "score", "max_score")


def _number(value):
    return "" if value is None else f"{value:g}"


def rows(course: Course):
    """(grades rows, questions rows) as lists of dicts."""
    recorded = status.read(course)
    grades, questions = [], []
    with course.gradebook() as gb:
        for assignment in sorted(gb.assignments, key=lambda a: a.name):
            lesson = assignment.name
            for student in sorted(s.id for s in gb.students):
                row = recorded.get((lesson, student))
                if row is None:
                    try:
                        submission = gb.find_submission(lesson, student)
                    except MissingEntry:
                        row = dict(status=status.MISSING, score=None, max_score=None,
                                   reason="no submission", sandbox="")
                    else:
                        row = dict(status=status.MANUAL if submission.needs_manual_grade
                                   else status.GRADED, score=submission.score,
                                   max_score=submission.max_score, reason="graded by nbgrader",
                                   sandbox="unknown: graded by nbgrader")
                graded = row["status"] in (status.GRADED, status.MANUAL)
                grades.append(dict(student=student, lesson=lesson, status=row["status"],
                                   score=_number(row["score"] if graded else None),
                                   max_score=_number(row["max_score"] if graded
                                                     else assignment.max_score),
                                   reason=row["reason"], sandbox=row["sandbox"]))
                for notebook in assignment.notebooks:
                    for cell in notebook.grade_cells:
                        question = dict(student=student, lesson=lesson, question=cell.name,
                                        status=row["status"], score="",
                                        max_score=_number(cell.max_score))
                        if graded:
                            grade = gb.find_grade(cell.name, notebook.name, lesson, student)
                            question["score"] = _number(grade.score)
                            if grade.needs_manual_grade:
                                question["status"] = status.MANUAL
                        questions.append(question)
    return grades, questions


def export(course: Course, out: Path) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, fields, table in zip(("grades.csv", "questions.csv"), (GRADES, QUESTIONS),
                                   rows(course)):
        path = out / name
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(table)
        paths.append(path)
    return paths
