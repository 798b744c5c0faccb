"""A term's messy middle on a small Canvas class of lesson 02 (lmsclass's course): a hidden test
the instructor got wrong, fixed and regraded (`regrade`: every learner gets the new test's
score, hand grades stay, the feedback pages say the new scores); a learner who drops, and
comes back (`drop`, `drop --undo`); Canvas's feedback as one zip for "Re-upload Submissions";
and grade's summary saying the late policy and what it took."""
import csv
import io
import zipfile

import nbformat
import pytest
from typer.testing import CliRunner

import lmsclass as lc
from autograd_lab_grader.commands.cli import app
from autograd_lab_grader.course import Course
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.gradebook.outcome import outcomes

A = lc.A
runner = CliRunner()
RIGHT = "def square(x):\n    return x * x"
# right at 3.0 (the visible check), wrong for a negative x: what the fixed hidden test finds
SIGNED = "def square(x):\n    return abs(x) * x"
WRONG_TEST = "assert square(-2.0) == -4.0, 'HIDDEN-SQUARE'"     # the instructor's mistake
FIXED_TEST = "assert square(-2.0) == 4.0, 'HIDDEN-SQUARE'"
# Canvas user id: (name, answer, late)
CLASS = {"201": ("Ada Lovelace", RIGHT, False), "202": ("Zoë Müller", SIGNED, False),
         "203": ("José Ñúñez", RIGHT, True), "204": ("Ngozi Okonkwo", RIGHT, False)}
ROSTER_ONLY = "205"         # on the roster, hands in nothing
DROPS = ("204", ROSTER_ONLY)


def cli(course, *args):
    from autograd_lab_grader.commands import cli as command
    command.console.width = 250
    return runner.invoke(app, ["-C", str(course.root), *map(str, args)])


def _set_hidden_test(root, line):
    path = root / "solutions" / A / f"{A}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "test_square":
            cell.source = "\n".join(line if l.startswith("assert square(-2.0)") else l
                                    for l in cell.source.splitlines())
            assert line in cell.source
    nbformat.write(nb, path)


def _download_names():
    names = {}
    for i, (student, (name, _, late)) in enumerate(CLASS.items()):
        first, last = name.split()
        sortable = "".join(c for c in (last + first).lower() if c.isalpha())
        names[student] = f"{sortable}{'_late' if late else ''}_{student}_{900 + i}_{A}.ipynb"
    return names


def _gradebook(path):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                     "Lesson 02: scalar backward (7001)", "Current Score"])
    writer.writerow(["    Points Possible", "", "", "", "", "3.00", "(read only)"])
    for student, (name, _, _) in [*CLASS.items(), (ROSTER_ONLY, ("Åsa Lindqvist", "", False))]:
        first, last = name.split()
        writer.writerow([f"{last}, {first}", student, "", "", "Section A", "", ""])
    path.write_text("\ufeff" + out.getvalue(), encoding="utf-8")
    return path


def hand_grade(course):
    with course.gradebook() as gb:
        for submission in gb.assignment_submissions(A):
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.needs_manual_grade and grade.auto_score is None:
                        grade.manual_score = grade.max_score
                        grade.needs_manual_grade = False
        gb.db.commit()


def _pages(course):
    return {p.parent.parent.name: p.read_bytes()
            for p in course.directory("feedback").glob(f"*/{A}/{A}.html")}


def _scores(course):
    return {o.student: (o.status, o.score) for o in outcomes(course, [A])}


def _test_square(course):
    with course.gradebook() as gb:
        return {s: gb.find_grade("test_square", A, A, s).score for s in CLASS}


def _explain(course):
    with course.gradebook() as gb:
        return {s: gb.find_grade("explain", A, A, s).manual_score for s in CLASS}


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    base = tmp_path_factory.mktemp("regrade")
    course = Course(lc.make_course(base / "course"))
    _set_hidden_test(course.root, WRONG_TEST)
    out, seen = {}, {}
    out["release"] = cli(course, "release", "02")
    gradebook = _gradebook(base / "gradebook.csv")
    out["roster"] = cli(course, "roster", gradebook)
    names = _download_names()
    release = nbformat.read(course.root / "notebooks" / A / f"{A}.ipynb", as_version=4)
    with zipfile.ZipFile(base / "submissions.zip", "w") as z:
        for student, (_, answer, late) in CLASS.items():
            for cell in release.cells:
                meta = cell.metadata.get("nbgrader", {})
                if meta.get("grade_id") == "answer_square":
                    cell.source = answer
                elif meta.get("grade_id") == "explain":
                    cell.source = "The slope at x."
            when = (lc.LATE if late else lc.ON_TIME).timetuple()[:6]
            z.writestr(zipfile.ZipInfo(names[student], date_time=when),
                       nbformat.writes(release))
    out["collect"] = cli(course, "collect", base / "submissions.zip")
    out["grade 1"] = cli(course, "grade", "02", "--jobs", "2")
    hand_grade(course)
    out["feedback 1"] = cli(course, "feedback", "02", "--zip", base / "canvas-feedback.zip")
    seen["pages 1"], seen["scores 1"] = _pages(course), _scores(course)
    seen["test_square 1"], seen["explain 1"] = _test_square(course), _explain(course)
    out["grade summary 1"] = cli(course, "grade", "02")
    return dict(course=course, out=out, seen=seen, base=base, names=names,
                gradebook=gradebook)


def test_canvas_feedback_is_one_zip_named_as_the_download(term):
    out, base = term["out"], term["base"]
    for step in ("release", "roster", "collect", "grade 1", "feedback 1"):
        assert out[step].exit_code == 0, (step, out[step].output)
    said = out["feedback 1"].output
    assert "for Canvas: the assignment's page > Re-upload Submissions" in said, said
    pages = term["seen"]["pages 1"]
    assert set(pages) == set(CLASS)        # every learner is graded (hand grades given)
    with zipfile.ZipFile(base / "canvas-feedback.zip") as z:
        members = {info.filename: z.read(info) for info in z.infolist()}
    # one member per graded learner, named as that learner's file in Canvas's download (Canvas
    # matches it by the user and submission ids in it), holding the learner's own page
    assert set(members) == set(term["names"].values())
    for student, name in term["names"].items():
        assert members[name] == pages[student]
        assert "Score: " in members[name].decode()


def test_grades_summary_says_the_policy_and_what_it_took(term):
    said = term["out"]["grade 1"].output
    assert ("late policy: nbgrader's, penalty_method 'zero': late work scores 0; 1 late, it "
            "took 0 points in all; 1 late not graded in full yet") in said, said
    said = term["out"]["grade summary 1"].output
    assert ("late policy: nbgrader's, penalty_method 'zero': late work scores 0; 1 late, it "
            "took 1 points in all (203: 1 of 1)") in said, said


def test_a_dropped_learner_is_in_no_export_or_count_and_comes_back(term, tmp_path):
    course = term["course"]
    before = _scores(course)
    assert before["204"] == (status.GRADED, 1) and before[ROSTER_ONLY][0] == status.MISSING
    dropped = cli(course, "drop", *DROPS, "--note", "left the course in week 3")
    assert dropped.exit_code == 0, dropped.output
    listed = cli(course, "drop")
    assert "204: taken out" in listed.output and "left the course in week 3" in listed.output
    exported = cli(course, "export", "--out", tmp_path, "--canvas", term["gradebook"])
    report = cli(course, "report", "02", "--out", tmp_path / "02.png")
    graded = cli(course, "grade", "02")
    for result in (exported, report, graded):
        assert result.exit_code == 0, result.output
        for student in DROPS:
            assert student not in result.output, result.output
    with open(tmp_path / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["student"] for r in rows} == set(CLASS) - {"204"}
    with open(tmp_path / "questions.csv", newline="") as f:
        assert not {r["student"] for r in csv.DictReader(f)} & set(DROPS)
    with open(tmp_path / "canvas-gradebook.csv", newline="", encoding="utf-8-sig") as f:
        canvas = {r["ID"]: r for r in csv.DictReader(f)}
    assert canvas["204"]["Lesson 02: scalar backward (7001)"] == ""     # as Canvas had it
    assert canvas["201"]["Lesson 02: scalar backward (7001)"] == "1.00"
    # the report's counts: three handed in, none missing
    assert (f"{A}: 3 handed in, 3 graded, 0 could not be graded, 0 did not hand in"
            in report.output), report.output
    # their files, history and grades are kept
    assert (course.submission(A, "204") / f"{A}.ipynb").is_file()
    assert (course.directory("feedback") / "204" / A / f"{A}.html").is_file()
    # undone: back, with the grade they had
    back = cli(course, "drop", "--undo", *DROPS)
    assert back.exit_code == 0 and "204: back in the term" in back.output
    assert _scores(course) == before
    again = cli(course, "export", "--out", tmp_path)
    assert again.exit_code == 0, again.output
    with open(tmp_path / "grades.csv", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert (rows["204"]["status"], rows["204"]["score"]) == ("graded", "1")
    assert rows[ROSTER_ONLY]["status"] == "missing"


def test_regrading_after_a_hidden_test_is_fixed(term):
    course, seen = term["course"], term["seen"]
    # graded with the wrong hidden test: the right answers lost test_square, the signed one
    # passed it
    assert seen["test_square 1"] == {"201": 0, "202": 2, "203": 0, "204": 0}
    assert seen["explain 1"] == {s: 1 for s in CLASS}
    assert b"Score: 1.0 / 3.0" in seen["pages 1"]["201"]
    _set_hidden_test(course.root, FIXED_TEST)
    result = cli(course, "regrade", "02", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert "released again" in result.output
    assert "wrote again 4 of the 4 feedback pages" in result.output, result.output
    # every learner has the new test's score; the hand grades of unchanged answers stay
    assert _test_square(course) == {"201": 2, "202": 0, "203": 2, "204": 2}
    assert _explain(course) == {s: 1 for s in CLASS}
    scores = _scores(course)
    assert scores["201"] == scores["204"] == (status.GRADED, 3)
    assert scores["202"] == (status.GRADED, 1)
    assert scores["203"] == (status.GRADED, 0)          # late: the "zero" policy
    pages = _pages(course)
    assert set(pages) == set(CLASS)
    assert b"Score: 3.0 / 3.0" in pages["201"] and b"Score: 1.0 / 3.0" in pages["202"]
    assert b"The late policy took 3 of 3 points" in pages["203"]
