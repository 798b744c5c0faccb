"""Grades out: one row per learner and lesson, with a status, so a failure is never read as 0.

The rows are the class's outcomes (``gradebook/outcome.py``: who, which lessons, and each one's
status, read afresh from the gradebook, so hand grades count at once).

grades.csv     a row per learner and lesson: name, status, score, max, late penalty, reason,
               what the grading sandbox refused (or that it was off), and whether the grader
               flagged the submission as a forgery (``yes``), and why
questions.csv  a row per learner, lesson and question (nbgrader grade cell)
The two LMSs take their own files back: ``fill_canvas`` fills the lesson's column of Canvas's
gradebook export (``lms/canvas.py``'s ``fill_gradebook``), ``fill_moodle`` the Grade and
Feedback comments of Moodle's grading worksheet (``lms/moodle.py``'s ``fill_worksheet``); every
other cell is kept as it was, and a learner left empty is listed with why (``why_empty``), a
late one with how late (``how_late``).

Every CSV is written by ``write_csv``: a learner chooses their own name on many LMSs, and a
spreadsheet reads a cell starting with = + - @ (or a tab or carriage return) as a formula, so
such a text cell gets a leading ``'`` (OWASP's advice on CSV injection); a number (``-1.5``)
and an id (digits) are written as they are, so the LMS still reads its file back.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ..course import Course
from ..gradebook import late as lateness
from ..gradebook.outcome import lessons, outcomes, show_number, yes
from ..lms import Filled, canvas, moodle, read_csv
from ..reading.plain import printable

GRADES = ("student", "name", "lesson", "status", "score", "max_score", "late", "late_penalty",
          "submitted", "due", "reason", "sandbox", "forgery", "forgery_reason")
QUESTIONS = ("student", "lesson", "question", "status", "score", "max_score")


_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def cell(value):
    """A CSV cell a spreadsheet shows as text, never runs as a formula: a text that starts
    like one gets a leading ``'``; a plain number stays a number. No control character but
    newline and tab is in it (``plain.printable``): a CSV is read in a terminal too."""
    if not isinstance(value, str):
        return value
    value = printable(value)
    if value.startswith(_FORMULA) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_csv(path: Path, table, *, bom: bool = False, newline: str = "\r\n") -> Path:
    """Write rows (lists of cells) as CSV, every cell through ``cell``: the one way this
    package writes a CSV."""
    out = io.StringIO()
    csv.writer(out, lineterminator=newline).writerows([cell(c) for c in row] for row in table)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes((b"\xef\xbb\xbf" if bom else b"") + out.getvalue().encode("utf-8"))
    return Path(path)


def rows(course: Course, wanted: list[str] | None = None):
    """(grades rows, questions rows) as lists of dicts."""
    grades, questions = [], []
    cells = {}
    with course.gradebook() as gb:
        for assignment in gb.assignments:
            cells[assignment.name] = [(c.name, c.max_score) for nb in assignment.notebooks
                                      for c in nb.grade_cells]
    for out in outcomes(course, wanted):
        grades.append(dict(student=out.student, name=out.name, lesson=out.lesson,
                           status=out.status, score=show_number(out.score),
                           max_score=show_number(out.max_score),
                           late=yes(out.late), late_penalty=show_number(out.late_penalty),
                           submitted=lateness.show(out.when.submitted) if out.when else "",
                           due=lateness.show(out.when.due) if out.when else "",
                           reason=out.reason, sandbox=out.sandbox,
                           forgery="yes" if out.forgery else "",
                           forgery_reason=out.forgery_reason))
        by_name = {q.question: q for q in out.questions}
        for name, most in cells.get(out.lesson, []):
            q = by_name.get(name)
            questions.append(dict(student=out.student, lesson=out.lesson, question=name,
                                  status=q.status if q else out.status,
                                  score=show_number(q.score) if q else "",
                                  max_score=show_number(most)))
    return grades, questions


def export(course: Course, out: Path, wanted: list[str] | None = None) -> list[Path]:
    """grades.csv and questions.csv of the whole class in `out`; lessons asked for by name
    go to grades-<lesson>.csv and questions-<lesson>.csv, never over the class-wide files."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    grades, questions = rows(course, wanted)
    suffix = "-" + "-".join(lessons(course, wanted)) if wanted else ""
    for name, fields, table in ((f"grades{suffix}.csv", GRADES, grades),
                                (f"questions{suffix}.csv", QUESTIONS, questions)):
        paths.append(write_csv(out / name, [list(fields)] + [[row.get(k, "") for k in fields]
                                                            for row in table]))
    return paths


def fill_canvas(course: Course, gradebook: Path, target: Path, wanted: list[str] | None = None,
                columns: dict[str, str] | None = None) -> Filled:
    """Canvas's gradebook export at `gradebook` with the lessons' columns filled
    (``canvas.fill_gradebook``), written to `target` as Canvas wrote it (its byte order mark,
    its line ends)."""
    table, bom, newline = read_csv(gradebook)
    chosen = lessons(course, wanted)
    result = canvas.fill_gradebook(table, outcomes(course, chosen), chosen, columns,
                                   source=str(gradebook))
    result.path = write_csv(target, result.table, bom=bom, newline=newline)
    return result


def fill_moodle(course: Course, worksheet: Path, target: Path, lesson: str) -> Filled:
    """Moodle's grading worksheet at `worksheet` with one lesson's Grade and Feedback comments
    filled (``moodle.fill_worksheet``), written to `target` as Moodle wrote it."""
    table, bom, newline = read_csv(worksheet)
    result = moodle.fill_worksheet(table, outcomes(course, [lesson]), lesson,
                                   source=str(worksheet))
    result.path = write_csv(target, result.table, bom=bom, newline=newline)
    return result
