"""Canvas's and Moodle's files, written from outcomes built here: no course, no grading.

``canvas.fill_gradebook`` and ``moodle.fill_worksheet`` are functions of an LMS's table and the
class's outcomes (``gradebook/outcome.py``); ``feedback_zip`` of the pages and who the LMS
knows. tests/grader/test_lms.py runs them end to end, through ``autograd-lab export`` and
``feedback --zip`` on a graded class."""
import copy
import zipfile
from datetime import datetime, timedelta

from autograd_lab_grader.gradebook import status
from autograd_lab_grader.gradebook.late import Lateness
from autograd_lab_grader.gradebook.outcome import GradeCell, Outcome
from autograd_lab_grader.lms import canvas, moodle

LESSON, OTHER = "02_scalar_backward", "03_inside_backward"
DUE = datetime(2026, 11, 20, 23, 59)


def _class():
    """Four learners of the lesson as export reads them, and one of another lesson."""
    late = Lateness(DUE + timedelta(days=1, hours=2), DUE)
    return [
        Outcome("1001", "Ada Lovelace", LESSON, status.GRADED, score=3.0, max_score=4.0,
                late_penalty=1.0, when=late, reason="graded",
                questions=[GradeCell("q1", status.GRADED, 4.0, 4.0)],
                comments=[("q1", "Good <b>work</b>\n& more")]),
        Outcome("1002", "Grace Hopper", LESSON, status.MANUAL, max_score=4.0,
                awaiting=["written_1"], when=Lateness(DUE - timedelta(hours=1), DUE),
                questions=[GradeCell("written_1", status.MANUAL, None, 2.0)]),
        Outcome("1003", "Alan Turing", LESSON, status.FAILED, reason="the kernel died"),
        Outcome("1004", "Edsger Dijkstra", LESSON, status.MISSING, reason="no submission"),
        Outcome("1001", "Ada Lovelace", OTHER, status.GRADED, score=1.0, max_score=1.0),
    ]


def _gradebook():
    return [["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
             "Lesson 02: scalar backward (123)", "Lesson 03: inside backward (124)"],
            ["    Points Possible", "", "", "", "", "8.00", "1.00"],
            ["Lovelace, Ada", "1001", "", "", "A", "", "0.5"],
            ["Hopper, Grace", "1002", "", "", "A", "2.00", ""],
            ["Turing, Alan", "1003", "", "", "A", "", ""],
            ["Student, Test", "9999", "", "", "A", "", ""]]


def test_canvas_gradebook_filled_from_outcomes():
    table = _gradebook()
    before = copy.deepcopy(table)
    filled = canvas.fill_gradebook(table, _class(), [LESSON])
    assert table == before                                  # the table given is kept as it was
    rows = {row[1]: row for row in filled.table[2:]}
    column = "Lesson 02: scalar backward (123)"
    assert filled.columns == {LESSON: column}
    # 3 of 4 points, after the late policy's 1, scaled to the column's 8 Points Possible
    assert rows["1001"][5] == "6.00" and filled.scaled == {LESSON: (4.0, 8.0)}
    assert rows["1001"][6] == "0.5"                         # another lesson's column untouched
    # an outcome without a score empties its cell (Canvas keeps what it has), and says why
    assert rows["1002"][5] == "" and rows["1003"][5] == ""
    assert filled.left_empty == [
        ("1002", "Grace Hopper", LESSON, "needs manual grading (written answers: written_1)"),
        ("1003", "Alan Turing", LESSON, "failed: the kernel died")]
    assert filled.late == [("1001", "Ada Lovelace", LESSON,
                            "late by 1 d 2 h; the late policy took 1 of 4 points")]
    assert filled.filled == 1
    assert filled.not_in_file == [("1004", LESSON)]        # no row of theirs in the export
    assert filled.table[:2] == before[:2] and rows["9999"] == before[5]


def test_canvas_gradebook_refuses_a_table_that_is_not_one_and_an_unknown_column():
    for table, columns, said in (([["Name", "Score"], ["Ada", "1"]], None,
                                  "grades.csv: not Canvas's gradebook export"),
                                 (_gradebook(), {LESSON: "Lesson 9 (1)"},
                                  "grades.csv has no column 'Lesson 9 (1)'")):
        try:
            canvas.fill_gradebook(table, _class(), [LESSON], columns, source="grades.csv")
        except ValueError as error:
            assert str(error).startswith(said), error
        else:
            raise AssertionError(f"{said}: not refused")


def _worksheet():
    return [["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum grade",
             "Grade can be changed", "Last modified (submission)", "Last modified (grade)",
             "Feedback comments"],
            ["Participant 1001", "Ada Lovelace", "ada@x", "", "", "10.00", "Yes", "", "", ""],
            ["Participant 1002", "Grace Hopper", "grace@x", "", "", "10.00", "Yes", "", "", ""],
            ["Participant 1003", "Alan Turing", "alan@x", "", "4.00", "10.00", "No", "", "", ""]]


def test_moodle_worksheet_filled_from_one_lessons_outcomes():
    table = _worksheet()
    before = copy.deepcopy(table)
    filled = moodle.fill_worksheet(table, _class(), LESSON)
    assert table == before
    headers = filled.table[0]
    assert headers == before[0] + ["Late"]                  # Moodle's upload ignores it
    rows = {row[0]: dict(zip(headers, row)) for row in filled.table[1:]}
    ada = rows["Participant 1001"]
    assert ada["Grade"] == "7.50" and ada["Late"] == "yes"  # 3 of 4, out of Moodle's 10
    # the comment is plain text for Moodle's HTML: the grader's markup shown, not read
    assert ada["Feedback comments"] == (
        "3 of 4 points (late by 1 d 2 h; the late policy took 1 of 4 points). q1: Good "
        "&lt;b&gt;work&lt;/b&gt; &amp; more Your feedback page shows what each check found.")
    assert rows["Participant 1002"]["Grade"] == "" and rows["Participant 1002"]["Late"] == "no"
    assert rows["Participant 1003"]["Grade"] == "4.00"      # Moodle says it cannot change
    assert filled.left_empty == [
        ("1002", "Grace Hopper", LESSON, "needs manual grading (written answers: written_1)"),
        ("1003", "Alan Turing", LESSON, "Moodle says its grade cannot be changed")]
    assert filled.not_in_file == [("1004", LESSON)]         # the other lesson's is not asked
    assert filled.scaled == {LESSON: (4.0, 10.0)} and filled.filled == 1


def _pages(tmp_path, students):
    pages = []
    for student in students:
        page = tmp_path / "feedback" / student / LESSON / f"{LESSON}.html"
        page.parent.mkdir(parents=True)
        page.write_text(f"<p>{student}</p>")
        pages.append(page)
    return pages


def test_canvas_feedback_zip_names_each_page_as_the_download_named_the_file(tmp_path):
    named = {"1001": ("canvas", "lovelaceada_late_1001_555_scalar.ipynb"),
             "1002": ("moodle", "Grace Hopper_1002_assignsubmission_file_x.ipynb"),
             "1003": ("canvas", "turingalan_1004_556_x.ipynb")}      # someone else's file
    path = tmp_path / "canvas.zip"
    zipped = canvas.feedback_zip(_pages(tmp_path, ["1001", "1002", "1003", "1004"]), path, named)
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["lovelaceada_late_1001_555_scalar.ipynb"]
        assert archive.read(archive.namelist()[0]) == b"<p>1001</p>"
    assert [p.parent.parent.name for p in zipped.pages] == ["1001"]
    assert [s for s, _ in zipped.not_in_zip] == ["1002", "1003", "1004"]


def test_moodle_feedback_zip_names_each_page_for_its_participant(tmp_path):
    known = {"1001": "Ada_Lovelace", "1002": ""}
    path = tmp_path / "moodle.zip"
    zipped = moodle.feedback_zip(_pages(tmp_path, ["1001", "1002", "x7"]), path, LESSON, known)
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == [
            f"Ada Lovelace_1001_assignsubmission_file_{LESSON}-feedback.html"]
    assert dict(zipped.not_in_zip).keys() == {"1002", "x7"}
