"""A class of 20 for two lessons, handed in the way an LMS hands it over (docs/maintainers/lms-formats.md):
a Canvas "Download Submissions" zip, Moodle's "Download all submissions" in folders and flat,
Canvas's gradebook export and Moodle's grading worksheet, all in their documented layouts.

The course is a small fixture (the real lessons take seconds a notebook): two lessons named
as the real ones are, each with one autograded exercise (gradingcourse's checks) and one
written answer graded by hand.
"""
from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import gradingcourse as gc

A, B = "02_scalar_backward", "05_accumulation"
LESSONS = (A, B)
EXERCISE = {A: ("answer_square", "test_square", 2, gc.SOLUTIONS["answer_square"]),
            B: ("answer_slope", "test_slope", 3, gc.SOLUTIONS["answer_slope"])}
WRITTEN_POINTS = 1
MAX = {A: 2 + WRITTEN_POINTS, B: 3 + WRITTEN_POINTS}
WRONG = {A: "def square(x):\n    return 2 * x",        # gradient-is-input
         B: "def slope(x):\n    return x"}             # gradient-shape
DUE = datetime(2026, 11, 20, 23, 59)                    # both lessons' due date (UTC)
ON_TIME = datetime(2026, 11, 19, 14, 30, 0)
LATE = datetime(2026, 11, 22, 9, 0)
EXTENDED_TO = datetime(2026, 11, 23, 12, 0)             # learner 13's own due date for lesson 02


def _meta(grade_id, *, grade=False, solution=False, locked=False, points=None):
    meta = {"schema_version": 3, "grade": grade, "solution": solution, "locked": locked,
            "grade_id": grade_id}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _lesson(lesson):
    answer, test, points, solution = EXERCISE[lesson]
    cells = [
        new_markdown_cell(f"# {lesson}\n\nThe derivative of $x^2$ is $2x$.",
                          metadata=_meta("intro", locked=True)),
        new_code_cell("import autograd_lab as torch", metadata=_meta("setup", locked=True)),
        new_code_cell(solution, metadata=_meta(answer, solution=True)),
        new_code_cell(gc.TESTS[test], metadata=_meta(test, grade=True, locked=True,
                                                     points=points)),
        new_markdown_cell("### BEGIN SOLUTION\nThe slope at x.\n### END SOLUTION",
                          metadata=_meta("explain", grade=True, solution=True,
                                         points=WRITTEN_POINTS)),
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def make_course(root: Path) -> Path:
    from autograd_lab_grader.course import Course

    root.mkdir(parents=True)
    (root / "nbgrader_config.py").write_text(
        gc.CONFIG.format(timeout=5) + 'c.LateSubmissionPlugin.penalty_method = "zero"\n')
    api = Course(root).api()
    for lesson in LESSONS:
        source = root / "solutions" / lesson
        source.mkdir(parents=True)
        (source / "fixturechecks.py").write_text(gc.CHECKS)
        nbformat.write(_lesson(lesson), source / f"{lesson}.ipynb")
        result = api.generate_assignment(lesson)
        assert result["success"], result.get("log")
    with Course(root).gradebook() as gb:        # (what `nbgrader db assignment add --duedate` does)
        for lesson in LESSONS:
            gb.update_or_create_assignment(lesson, duedate=DUE)
    return root


def notebook(root: Path, lesson: str, *, right=True, written="The slope of the function at x.",
             blank=False) -> bytes:
    """A learner's notebook: the release, answered (right or wrong), with a written answer."""
    nb = nbformat.read(root / "notebooks" / lesson / f"{lesson}.ipynb", as_version=4)
    answer, *_ , solution = EXERCISE[lesson]
    if not blank:
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id == answer:
                cell.source = (solution.replace("    ### BEGIN SOLUTION\n", "")
                               .replace("\n    ### END SOLUTION", "") if right else WRONG[lesson])
            elif grade_id == "explain":
                cell.source = written
    return nbformat.writes(nb).encode()


@dataclass(frozen=True)
class Learner:
    first: str
    last: str
    canvas: str          # Canvas user id
    moodle: str          # Moodle participant id

    @property
    def full(self):
        return f"{self.first} {self.last}"

    @property
    def sortable(self):
        """Canvas's lastfirst: the sortable name lower-cased, non-letters dropped."""
        return "".join(c for c in (self.last + self.first).lower() if c.isalpha())


_NAMES = [("Ada", "Lovelace"), ("Zoë", "Müller"), ("John", "Smith"), ("John", "Smith"),
          ("José", "Ñúñez"), ("Siobhán", "O'Brien"), ("Anne-Marie", "Duval"), ("小明", "王"),
          ("Ngozi", "Okonkwo"), ("Åsa", "Lindqvist")]
CLASS = [Learner(first, last, str(100000 + i), str(5000 + i))
         for i, (first, last) in enumerate(_NAMES + [(f"Learner{chr(65 + i // 26)}{chr(65 + i % 26)}",
                                                     "Test") for i in range(10)])]
assert len(CLASS) == 20

# what each learner hands in, per lesson: "right", "wrong", "missing", "broken" (cut-off JSON),
# "empty" (a zero-byte file), "late" (right, after the due date), "untitled" (right, saved as
# Untitled.ipynb), "other" (the other lesson's notebook handed in here), "blank" (the release,
# nothing answered), "zip" (right, but inside a zip: collect refuses it), "extended" (right,
# late by the lesson's due date, within the extension the instructor gave outside the LMS)
def plan(index: int, lesson: str) -> str:
    special = {(3, A): "late", (4, A): "broken", (5, A): "missing", (6, B): "empty",
               (10, A): "blank", (12, A): "zip", (13, A): "extended", (12, B): "late",
               (7, B): "missing", (8, A): "untitled", (9, B): "other", (18, A): "missing",
               (18, B): "missing"}
    if (index, lesson) in special:
        return special[(index, lesson)]
    return "wrong" if index % 5 == 1 else "right"


def handed_in(root: Path, lesson: str):
    """(learner, what, file name, bytes, time) for every learner who handed something in."""
    for index, learner in enumerate(CLASS):
        what = plan(index, lesson)
        if what == "missing":
            continue
        other = B if lesson == A else A
        data = {"right": lambda: notebook(root, lesson), "late": lambda: notebook(root, lesson),
                "extended": lambda: notebook(root, lesson), "zip": lambda: zipped(root, lesson),
                "untitled": lambda: notebook(root, lesson),
                "wrong": lambda: notebook(root, lesson, right=False),
                "blank": lambda: notebook(root, lesson, blank=True),
                "broken": lambda: notebook(root, lesson)[:200], "empty": lambda: b"",
                # only the lambda picked is called, before the loop moves on
                "other": lambda: notebook(root, other)}[what]()  # noqa: B023
        name = {"untitled": "Untitled.ipynb", "other": f"{other}.ipynb",
                "zip": f"{lesson}.zip"}.get(what, f"{lesson}.ipynb")
        time = LATE if what in ("late", "extended") else ON_TIME
        yield learner, what, name, data, time


def zipped(root: Path, lesson: str) -> bytes:
    """A zip holding the learner's notebook (what "Compress" in a file manager gives)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(f"{lesson}/{lesson}.ipynb", notebook(root, lesson))
    return out.getvalue()


def _zip(path: Path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data, time in members:
            info = zipfile.ZipInfo(name, date_time=time.timetuple()[:6])
            info.external_attr = 0o100644 << 16      # a regular file, as LMSs write them
            info.create_system = 3
            z.writestr(info, data)
    return path


def canvas_zip(root: Path, lesson: str, path: Path, changed: dict[str, bytes] | None = None):
    """Canvas's Download Submissions: flat, `<lastfirst>[_late]_<user>_<submission>_<file>`,
    with a PDF someone attached. `changed`: {canvas id: new bytes} (a resubmission)."""
    members = []
    for learner, what, name, data, time in handed_in(root, lesson):
        late = "_late" if what in ("late", "extended") else ""
        data = (changed or {}).get(learner.canvas, data)
        sub = 900000 + int(learner.canvas) - 100000 + (1000 if lesson == B else 0)
        members.append((f"{learner.sortable}{late}_{learner.canvas}_{sub}_{name}", data, time))
    members.append((f"{CLASS[0].sortable}_{CLASS[0].canvas}_900000_notes.pdf", b"%PDF-1.4", ON_TIME))
    return _zip(path, members)


def moodle_zip(root: Path, lesson: str, path: Path, *, folders: bool):
    """Moodle's Download all submissions, in folders or flat; one learner's online text."""
    members = []
    for learner, _what, name, data, time in handed_in(root, lesson):
        prefix = f"{learner.full}_{learner.moodle}_assignsubmission_file_"
        members.append((f"{prefix}/{name}" if folders else prefix + name, data, time))
    text = f"{CLASS[1].full}_{CLASS[1].moodle}_assignsubmission_onlinetext_"
    members.append((f"{text}/onlinetext.html" if folders else text + "onlinetext.html",
                    b"<p>see my notebook</p>", ON_TIME))
    return _zip(path, members)


def canvas_gradebook(path: Path) -> Path:
    """Canvas's gradebook export: identity columns, one column per assignment, computed ones,
    the Points Possible row (its first cell padded), and a read-only marker row."""
    out = io.StringIO()
    writer = csv.writer(out)
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
              "Lesson 02: scalar backward (7001)", "Lesson 05: accumulation (7002)",
              "Reading quiz (7003)", "Current Score", "Unposted Current Score", "Final Score"]
    writer.writerow(header)
    writer.writerow(["    Points Possible", "", "", "", "", "3.00", "8.00", "5.00",
                     "(read only)", "(read only)", "(read only)"])
    for i, learner in enumerate(CLASS):
        writer.writerow([f"{learner.last}, {learner.first}", learner.canvas, f"S{i:04d}",
                         f"l{i}@uni.example", "Section A", "", "", "4.00", "80", "80", "80"])
    writer.writerow(["Student, Test", "999999", "", "", "Section A", "", "", "", "", "", ""])
    path.write_text("\ufeff" + out.getvalue(), encoding="utf-8")
    return path


def moodle_worksheet(path: Path, lesson: str) -> Path:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["Identifier", "Full name", "Email address", "Status", "Grade",
                     "Maximum grade", "Grade can be changed", "Last modified (submission)",
                     "Last modified (grade)", "Feedback comments"])
    for i, learner in enumerate(CLASS):
        writer.writerow([f"Participant {learner.moodle}", learner.full, f"l{i}@uni.example",
                         "Submitted for grading", "", "10.00", "Yes" if i != 19 else "No",
                         "Thursday, 19 November 2026, 2:30 PM", "-", ""])
    path.write_text(out.getvalue(), encoding="utf-8")
    return path
