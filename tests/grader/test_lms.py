"""A term with a real LMS: a class of 20 for two lessons (tests/support/lmsclass.py), from Canvas's
download and Moodle's two, with a roster, through collect, grade (real nbgrader and bwrap),
hand grading through nbgrader's API, feedback and export into the LMS's own files.

Canvas's class is graded for both lessons, Moodle's for one (its two download forms must give
the same submissions, which is checked without grading both). Lessons are named by their
numbers (`02`, `04`) as an instructor types them. The late policy is nbgrader's "zero"
(lmsclass's configuration); learner 13 has an extension for lesson 02, given with `extend`."""
import csv
import io
import json
import shutil
import zipfile

import pytest
from typer.testing import CliRunner

import lmsclass as lc
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.gradebook.outcome import outcomes
from autograd_lab_grader.steps import grade
from autograd_lab_grader.commands.cli import app
from autograd_lab_grader.course import Course

runner = CliRunner()
A, B = lc.A, lc.B
NOT_HAND_GRADED = {A: lc.CLASS[2].canvas}      # one John Smith's written answer waits


def cli(course, *args):
    from autograd_lab_grader.commands import cli as command
    command.console.width = 250         # one table row a line, so the output can be read back
    return runner.invoke(app, ["-C", str(course.root), *map(str, args)])


def _expected(lesson):
    """{canvas id: (status, score)} after hand grading (written answers get 1 point)."""
    out = {}
    for index, learner in enumerate(lc.CLASS):
        what = lc.plan(index, lesson)
        exercise = lc.EXERCISE[lesson][2]
        out[learner.canvas] = {
            "right": (status.GRADED, exercise + 1), "untitled": (status.GRADED, exercise + 1),
            # late: the "zero" policy takes the whole final score, hand grade included; within
            # an extension, nothing
            "wrong": (status.GRADED, 1), "late": (status.GRADED, 0), "blank": (status.GRADED, 0),
            "extended": (status.GRADED, exercise + 1), "zip": (status.FAILED, None),
            "missing": (status.MISSING, None), "broken": (status.FAILED, None),
            # another lesson's notebook: nbgrader cannot grade it as this lesson
            "empty": (status.FAILED, None), "other": (status.FAILED, None),
        }[what]
    if lesson in NOT_HAND_GRADED:
        out[NOT_HAND_GRADED[lesson]] = (status.MANUAL, None)
    return out


def _late(lesson):
    """{canvas id: late flag} of those with a time (every learner who handed in)."""
    return {l.canvas: lc.plan(i, lesson) == "late" for i, l in enumerate(lc.CLASS)
            if lc.plan(i, lesson) not in ("missing", "zip")}


def hand_grade(course, lesson, skip=()):
    """What the formgrader does when a grader types a score (its GradeHandler.put): set
    manual_score, clear needs_manual_grade. Every written answer gets full marks."""
    with course.gradebook() as gb:
        for submission in gb.assignment_submissions(lesson):
            if submission.student.id in skip:
                continue
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.needs_manual_grade and grade.auto_score is None:
                        grade.manual_score = grade.max_score
                        grade.needs_manual_grade = False
        gb.db.commit()


@pytest.fixture(scope="module")
def canvas(tmp_path_factory):
    """The Canvas class collected and graded, before any hand grading."""
    base = tmp_path_factory.mktemp("canvas")
    course = Course(lc.make_course(base / "course"))
    with course.gradebook() as gb:              # (the due date comes from release --due)
        for lesson in lc.LESSONS:
            gb.update_or_create_assignment(lesson, duedate=None)
    outputs = {"release": cli(course, "release", "02", "05", "--due", "2026-11-21 00:59",
                              "--timezone", "Europe/Berlin")}
    gradebook = lc.canvas_gradebook(base / "gradebook.csv")
    zips = {lesson: lc.canvas_zip(course.root, lesson, base / f"{lesson}.zip")
            for lesson in lc.LESSONS}
    outputs["roster"] = cli(course, "roster", gradebook)
    outputs["extend"] = cli(course, "extend", "02", lc.CLASS[13].canvas, "--until",
                            lc.EXTENDED_TO.isoformat() + "Z")
    outputs["collect", A] = cli(course, "collect", zips[A])
    # lesson 05's download holds one learner's lesson-02 notebook: its lesson must be said
    outputs["collect B unsaid"] = cli(course, "collect", zips[B])
    outputs["collect", B] = cli(course, "collect", zips[B], "--lesson", "05")
    before_b = {p: p.read_bytes() for p in (course.root / "submitted").rglob("*") if p.is_file()}
    for lesson in ("02", "05"):
        outputs["grade", lesson] = cli(course, "grade", lesson, "--jobs", "3")
    outputs["grade", A], outputs["grade", B] = outputs["grade", "02"], outputs["grade", "05"]
    return dict(base=base, course=course, zips=zips, gradebook=gradebook, out=outputs,
                submitted=before_b)


@pytest.fixture(scope="module")
def hand_graded(canvas):
    for lesson in lc.LESSONS:
        hand_grade(canvas["course"], lesson, skip={NOT_HAND_GRADED.get(lesson)})
    return canvas


def test_release_takes_lesson_numbers_and_a_due_date(canvas):
    out = canvas["out"]["release"]
    assert out.exit_code == 0, out.output
    assert f"{A}: released, due 2026-11-20 23:59:00 UTC" in out.output      # (Berlin's 00:59)
    assert f"{B}: released, due 2026-11-20 23:59:00 UTC" in out.output
    with canvas["course"].gradebook() as gb:
        assert {a.name: a.duedate for a in gb.assignments} == {A: lc.DUE, B: lc.DUE}
    assert canvas["out"]["extend"].exit_code == 0, canvas["out"]["extend"].output
    wrong = cli(canvas["course"], "grade", "03")
    assert wrong.exit_code == 1 and "no lesson '03'" in wrong.output
    assert A in wrong.output and "Traceback" not in wrong.output


def test_roster_and_collect_keep_canvas_ids_and_names(canvas):
    course, out = canvas["course"], canvas["out"]
    assert out["roster"].exit_code == 0 and "20 learners" in out["roster"].output
    # Canvas's Test Student is no learner: said once, and nowhere else
    assert out["roster"].output.count("Test Student") == 1
    assert "999999" in out["roster"].output
    assert out["collect", A].exit_code == 0, out["collect", A].output
    assert "a Canvas download" in out["collect", A].output
    assert "17 new, 0 replaced, 0 unchanged" in out["collect", A].output
    with course.gradebook() as gb:
        students = {s.id: s for s in gb.students}
    assert set(students) == {l.canvas for l in lc.CLASS}
    zoe = students[lc.CLASS[1].canvas]
    assert (zoe.first_name, zoe.last_name) == ("Zoë", "Müller")     # NFC, as Canvas wrote it
    assert students[lc.CLASS[7].canvas].last_name == "王"
    # the two John Smiths (both smithjohn in Canvas's file names) are two learners
    smiths = [l for l in lc.CLASS if l.full == "John Smith"]
    assert len({s.canvas for s in smiths}) == 2 and smiths[0].sortable == smiths[1].sortable
    for smith in smiths:
        assert course.submission(A, smith.canvas).joinpath(f"{A}.ipynb").is_file()
    # Untitled.ipynb and the late one are placed; the late one's time is after the due date
    assert course.submission(A, lc.CLASS[8].canvas).joinpath(f"{A}.ipynb").is_file()
    stamp = course.submission(A, lc.CLASS[3].canvas).joinpath("timestamp.txt").read_text()
    assert stamp.strip() == "2026-11-22 09:00:00 UTC"
    on_time = course.submission(A, lc.CLASS[0].canvas).joinpath("timestamp.txt").read_text()
    assert on_time.strip() == "2026-11-19 14:30:00 UTC"
    assert "notes.pdf: not a notebook" in out["collect", A].output
    assert f"{A}.zip: a zip, not a notebook" in out["collect", A].output


def test_a_download_naming_two_lessons_is_refused_and_another_lessons_notebook_overwrites_nothing(
        canvas):
    course, out = canvas["course"], canvas["out"]
    refused = out["collect B unsaid"]
    assert refused.exit_code == 1 and "--lesson" in refused.output
    assert f"{A} (1 files)" in refused.output and f"{B} (17 files)" in refused.output
    said = out["collect", B]
    assert said.exit_code == 0, said.output
    other = lc.CLASS[9]
    assert f"its name says {A}, but it was handed in as {B}" in said.output
    # placed under lesson 05 as handed in; that learner's lesson 02 is what lesson 02's zip had
    assert course.submission(B, other.canvas).joinpath(f"{B}.ipynb").read_bytes() == \
        lc.notebook(course.root, A)
    assert course.submission(A, other.canvas).joinpath(f"{A}.ipynb").read_bytes() == \
        lc.notebook(course.root, A)


def test_grade_summary_lists_every_learner_sorted(canvas):
    out = canvas["out"]["grade", A]
    assert out.exit_code == 1, out.output          # two submissions failed
    lines = [line for line in out.output.splitlines() if line.startswith("│ 1")]
    ids = [line.split("│")[1].strip() for line in lines]
    assert ids == sorted(l.canvas for l in lc.CLASS)
    assert "999999" not in out.output
    assert "not a valid notebook" in out.output
    assert "to grade by hand: explain" in out.output
    blank = next(line for line in lines if line.startswith(f"│ {lc.CLASS[10].canvas}"))
    assert "0/3" in blank                           # a zero is listed like any score
    short = cli(canvas["course"], "grade", A, "--failed-only")
    listed = [line.split("│")[1].strip() for line in short.output.splitlines()
              if line.startswith("│ 1")]
    # the cut-off notebook, and the zip collect refused
    assert listed == sorted([lc.CLASS[4].canvas, lc.CLASS[12].canvas]), short.output
    assert "2 failed" in short.output and "16 graded before and unchanged" in short.output


def test_grade_summary_is_a_line_a_learner_at_80_columns(canvas):
    from autograd_lab_grader.commands import cli as command

    command.console.width = 80
    try:
        out = runner.invoke(app, ["-C", str(canvas["course"].root), "grade", "02"])
    finally:
        command.console.width = 250
    table = [line for line in out.output.splitlines() if line.startswith("│")]
    assert len(table) == len(lc.CLASS), out.output          # one line a learner
    assert all(len(line) <= 80 for line in table), out.output
    waiting = next(line for line in table if line.startswith(f"│ {NOT_HAND_GRADED[A]}"))
    assert "2+?/3" in waiting                              # autograded so far, and what waits
    late = next(line for line in table if line.startswith(f"│ {lc.CLASS[3].canvas}"))
    assert "late" in late.split("│")[5]
    assert f"  {lc.CLASS[4].canvas}: not a valid notebook" in out.output


def test_feedback_before_hand_grading_shows_no_zero(canvas):
    course = canvas["course"]
    waiting = cli(course, "feedback", A)
    assert waiting.exit_code == 0, waiting.output
    assert "waiting for hand grading" in waiting.output
    # only the blank one has a page: nbgrader scores an unchanged written answer 0 itself
    # ("No response"), so nothing of it waits for a human
    assert [p.parent.parent.name for p in course.directory("feedback").rglob("*.html")] == [
        lc.CLASS[10].canvas]
    partial = cli(course, "feedback", A, "--partial", "--student", lc.CLASS[0].canvas)
    assert partial.exit_code == 0, partial.output
    page = (course.directory("feedback") / lc.CLASS[0].canvas / A / f"{A}.html").read_text()
    assert "not graded yet" in page
    assert "Written response</a> (<span class=\"pending\">not graded yet</span> / 1.0)" in page
    assert "0.0 / 1.0" not in page
    assert "Score so far: 2.0 / 3.0" in page


def test_export_has_one_row_per_roster_learner_and_lesson_with_hand_grades(hand_graded, tmp_path):
    course = hand_graded["course"]
    result = cli(course, "export", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader((tmp_path / "grades.csv").open(encoding="utf-8")))
    assert len(rows) == 20 * 2
    assert {(r["student"], r["lesson"]) for r in rows} == {
        (s, lesson) for s in [l.canvas for l in lc.CLASS] for lesson in lc.LESSONS}
    for lesson in lc.LESSONS:
        for student, (expected_status, score) in _expected(lesson).items():
            row = next(r for r in rows if r["student"] == student and r["lesson"] == lesson)
            assert row["status"] == expected_status, row
            if score is not None:
                assert float(row["score"]) == score, row
            if expected_status != status.GRADED:
                assert row["score"] == "", row
    by = {(r["student"], r["lesson"]): r for r in rows}
    assert by[lc.CLASS[1].canvas, A]["name"] == "Zoë Müller"
    assert "not a valid notebook" in by[lc.CLASS[4].canvas, A]["reason"]
    assert "not a valid notebook" in by[lc.CLASS[6].canvas, B]["reason"]     # the empty file
    for lesson in lc.LESSONS:
        for student, late in _late(lesson).items():
            row = by[student, lesson]
            assert row["late"] == ("yes" if late else "no"), row
            assert row["due"] == ("2026-11-23 12:00:00 UTC" if (student, lesson) == (
                lc.CLASS[13].canvas, A) else "2026-11-20 23:59:00 UTC"), row
    late = by[lc.CLASS[3].canvas, A]            # Canvas's _late: late; "zero" takes all 3
    assert (late["late"], late["late_penalty"], late["score"]) == ("yes", "3", "0")
    assert late["submitted"] == "2026-11-22 09:00:00 UTC"
    extended = by[lc.CLASS[13].canvas, A]       # as late, within their extension
    assert (extended["late"], extended["late_penalty"], extended["score"]) == ("no", "", "3")
    zipped = by[lc.CLASS[12].canvas, A]
    assert zipped["status"] == status.FAILED and zipped["late"] == ""
    assert f"{lc.CLASS[12].sortable}_{lc.CLASS[12].canvas}_" in zipped["reason"]
    assert "a zip, not a notebook" in zipped["reason"]
    questions = list(csv.DictReader((tmp_path / "questions.csv").open(encoding="utf-8")))
    waiting = [q for q in questions if q["student"] == NOT_HAND_GRADED[A] and q["lesson"] == A]
    assert {q["question"]: (q["status"], q["score"]) for q in waiting} == {
        "test_square": (status.GRADED, "2"), "explain": (status.MANUAL, "")}


def test_hand_grades_reach_graded_without_regrading_and_survive_a_regrade(hand_graded):
    course = hand_graded["course"]
    student = lc.CLASS[0].canvas
    before = status.read(course, A)[(A, student)].graded_at
    outcome = {o.student: o for o in outcomes(course, [A])}[student]
    assert (outcome.status, outcome.score) == (status.GRADED, 3)
    assert status.read(course, A)[(A, student)].graded_at == before    # nothing re-graded
    again = cli(course, "grade", A, "--student", student)
    assert again.exit_code == 0, again.output
    after = {o.student: o for o in outcomes(course, [A])}[student]
    assert (after.status, after.score) == (status.GRADED, 3)
    assert status.read(course, A)[(A, student)].graded_at > before


def test_canvas_gradebook_is_filled_in_its_own_columns(hand_graded, tmp_path):
    course, gradebook = hand_graded["course"], hand_graded["gradebook"]
    result = cli(course, "export", "--out", tmp_path, "--canvas", gradebook)
    assert result.exit_code == 0, result.output
    filled = tmp_path / f"canvas-{gradebook.name}"
    raw = filled.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    before = list(csv.reader(io.StringIO(gradebook.read_bytes().decode("utf-8-sig"))))
    after = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    assert after[0] == before[0] and after[1] == before[1] and len(after) == len(before)
    header = after[0]
    col = {A: header.index("Lesson 02: scalar backward (7001)"),
           B: header.index("Lesson 05: accumulation (7002)")}
    scale = {A: 1.0, B: 8.0 / lc.MAX[B]}
    for old, new in zip(before[2:], after[2:]):
        student = new[1]
        for i, (o, n) in enumerate(zip(old, new)):
            if i not in col.values():
                assert o == n                         # every other cell as Canvas wrote it
        if student == "999999":                   # Canvas's Test Student: as it was
            assert new == old
            continue
        for lesson in lc.LESSONS:
            expected_status, score = _expected(lesson)[student]
            if expected_status == status.GRADED and score is not None:
                assert float(new[col[lesson]]) == pytest.approx(score * scale[lesson]), new
            elif expected_status != status.GRADED:
                assert new[col[lesson]] == ""         # never a 0 for a failure
    # the failed and the unfinished are listed, by id and name
    assert "left empty" in result.output
    for learner, _lesson in ((lc.CLASS[4], A), (lc.CLASS[6], B), (lc.CLASS[2], A),
                            (lc.CLASS[12], A)):
        assert learner.canvas in result.output
    assert "scaled to the LMS's 8" in result.output
    # the late, with the policy: Canvas's import takes scores only
    late = result.output[result.output.index(
        "late (late policy: nbgrader's, penalty_method 'zero': late work scores 0)"):]
    assert lc.CLASS[3].canvas in late and "late by 1 d 9 h" in late
    assert lc.CLASS[13].canvas not in late
    assert (tmp_path / "grades.csv").is_file() and not (tmp_path / "canvas-canvas-gradebook.csv"
                                                         ).exists()
    again = cli(course, "export", "--out", tmp_path, "--canvas", filled)
    assert again.exit_code == 0 and (tmp_path / f"canvas-{gradebook.name}").is_file()
    assert not list(tmp_path.glob("canvas-canvas-*"))


def _page_score(course, lesson, student):
    """The total a learner's feedback page says: (score, maximum)."""
    import re
    page = (course.directory("feedback") / student / lesson / f"{lesson}.html").read_text()
    found = re.search(r'<p class="grade">Score: ([0-9.]+) / ([0-9.]+)</p>', page)
    assert found, page[:2000]
    return float(found[1]), float(found[2]), " ".join(re.sub(r"<[^>]+>", " ", page).split())


def test_a_late_and_an_extended_learners_pages_say_the_grade_export_gives(hand_graded, tmp_path):
    """One computation of the final score feeds the page, grades.csv and Canvas's file, for a
    late learner and one with an extension; an extension given later removes the page that
    said the old grade, and the page written again says the new one, as export does."""
    course, gradebook = hand_graded["course"], hand_graded["gradebook"]
    late, extended = lc.CLASS[3].canvas, lc.CLASS[13].canvas

    def everywhere():
        assert cli(course, "feedback", A).exit_code == 0
        out = tmp_path / "grades"
        result = cli(course, "export", "--out", out, "--canvas", gradebook)
        assert result.exit_code == 0, result.output
        rows = {(r["student"], r["lesson"]): r
                for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
        canvas_rows = list(csv.reader(io.StringIO(
            (out / f"canvas-{gradebook.name}").read_bytes().decode("utf-8-sig"))))
        column = canvas_rows[0].index("Lesson 02: scalar backward (7001)")
        in_canvas = {row[1]: row[column] for row in canvas_rows[2:]}
        said = {}
        for student in (late, extended):
            score, most, text = _page_score(course, A, student)
            assert score == float(rows[student, A]["score"]) == float(in_canvas[student])
            assert most == float(rows[student, A]["max_score"]) == lc.MAX[A]
            said[student] = (score, text)
        return said

    said = everywhere()
    assert said[late][0] == 0 and "late by 1 d 9 h" in said[late][1]
    assert "The late policy took 3 of 3 points: the score above is after it" in said[late][1]
    assert said[extended][0] == lc.MAX[A] and "Your own due date: 2026-11-23 12:00:00 UTC" \
        in said[extended][1]
    try:
        given = cli(course, "extend", "02", late, "--until", "2026-11-25 12:00")
        assert given.exit_code == 0, given.output
        assert f"removed the feedback pages of {late} for {A}" in given.output
        assert not (course.directory("feedback") / late / A).exists()
        said = everywhere()
        assert said[late][0] == lc.MAX[A] and "late" not in said[late][1].split("Score:")[1][:80]
    finally:
        assert cli(course, "extend", "02", late, "--clear").exit_code == 0
    assert everywhere()[late][0] == 0


def test_report_for_a_slide_counts_shares_of_those_who_handed_in(hand_graded, tmp_path):
    from autograd_lab_grader.steps import report

    course = hand_graded["course"]
    result = report.report(course, A)
    assert (result.handed_in, result.could_not_grade, result.missing) == (18, 2, 2)
    square, = result.exercises
    assert (square.passed, square.untouched) == (11, 1)
    assert square.first == {"gradient-is-input": 4} and square.other_wrong == 0
    (_, parts), = report.segments(result)
    assert sum(n for _, n in parts) == result.handed_in          # every one in one category
    shown = cli(course, "report", A, "--out", tmp_path / "a.png")
    assert shown.exit_code == 0, shown.output
    assert report.human_name("gradient-is-input") in shown.output
    assert "gradient-is-input" not in shown.output               # never the bare id
    for words in ("18 handed in", "22%", "not attempted", "could not be graded", "61%"):
        assert words in shown.output, words
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"


def test_collecting_again_regrades_nothing_and_a_change_keeps_the_old(hand_graded):
    course, zips, base = hand_graded["course"], hand_graded["zips"], hand_graded["base"]
    again = cli(course, "collect", zips[A])
    assert "0 new, 0 replaced, 17 unchanged" in again.output, again.output
    before = _graded_at(course)
    regrade = cli(course, "grade", A)
    assert "16 graded before and unchanged since" in regrade.output, regrade.output
    assert _graded_at(course) == before
    # learner 1 resubmits: the right answer and a new written answer
    changed_learner = lc.CLASS[1]
    new = lc.notebook(course.root, A, written="Rewritten: the slope.")
    old = course.submission(A, changed_learner.canvas).joinpath(f"{A}.ipynb").read_bytes()
    redownload = lc.canvas_zip(course.root, A, base / "again.zip",
                               changed={changed_learner.canvas: new})
    result = cli(course, "collect", redownload)
    assert "0 new, 1 replaced, 16 unchanged" in result.output, result.output
    kept = [p for p in (course.root / "submitted-history" / changed_learner.canvas / A).iterdir()]
    assert len(kept) == 1 and (kept[0] / f"{A}.ipynb").read_bytes() == old
    # its hand grade was for the old written answer: kept beside it, and asked for again
    assert json.loads((kept[0] / "hand-grades.json").read_text()) == {"explain": 1.0}
    assert "grade them again" in result.output
    regrade = cli(course, "grade", A)
    assert "15 graded before and unchanged since" in regrade.output
    after = _graded_at(course)
    assert {k for k in after if after[k] != before.get(k)} == {(A, changed_learner.canvas)}
    outcome = {o.student: o for o in outcomes(course, [A])}[changed_learner.canvas]
    assert outcome.status == status.MANUAL and outcome.score is None


def _graded_at(course):
    """When each submission graded or waiting for a hand grade was last graded."""
    return {k: r.graded_at for k, r in status.read(course, A).items()
            if r.status in (status.GRADED, status.MANUAL)}


@pytest.fixture(scope="module")
def moodle(tmp_path_factory):
    base = tmp_path_factory.mktemp("moodle")
    courses = {}
    released = lc.make_course(base / "released")
    for form in ("folders", "flat"):
        # (one release copied: a release gives its cells new ids, and the bytes are compared)
        course = Course(shutil.copytree(released, base / form))
        path = lc.moodle_zip(course.root, B, base / f"{form}.zip", folders=form == "folders")
        courses[form] = (course, cli(course, "collect", path, "--lesson", B))
    course = courses["folders"][0]
    worksheet = lc.moodle_worksheet(base / "worksheet.csv", B)
    roster = cli(course, "roster", worksheet)
    running = []        # what grade's progress line is told, about once a second
    rows = grade.grade(course, B, grade.Options(jobs=3), on_running=running.append)
    hand_grade(course, B)
    with course.gradebook() as gb:      # what the formgrader's comment box stores
        for student, text in COMMENTS.items():
            comment = gb.find_comment("explain", B, B, student)
            comment.manual_comment = text
        gb.db.commit()
    return dict(base=base, courses=courses, worksheet=worksheet, roster=roster, rows=rows,
                running=running)


COMMENTS = {lc.CLASS[0].moodle: "=Good: you say <b>why</b>,\n\nnot only what. " + "x" * 3000,
            lc.CLASS[12].moodle: "Right, but late."}


def _tree(course):
    folder = course.root / "submitted"
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file()}


def test_both_moodle_downloads_give_the_same_learners_and_names(moodle):
    (folders, out_a), (flat, out_b) = moodle["courses"]["folders"], moodle["courses"]["flat"]
    for out in (out_a, out_b):
        assert out.exit_code == 0 and "a Moodle download" in out.output, out.output
        assert "onlinetext answer, not a notebook" in out.output
    assert _tree(folders) and _tree(folders) == _tree(flat)
    assert {p.name for p in (folders.root / "submitted").iterdir()} == {
        l.moodle for i, l in enumerate(lc.CLASS) if lc.plan(i, B) != "missing"}
    with flat.gradebook() as gb:
        names = {s.id: s.last_name for s in gb.students}
    assert names[lc.CLASS[1].moodle] == "Zoë Müller"
    assert names[lc.CLASS[2].moodle] == names[lc.CLASS[3].moodle] == "John Smith"


def test_the_progress_line_is_told_which_submissions_are_running(moodle):
    running, rows = moodle["running"], moodle["rows"]
    assert running and all(len(now) <= 3 for now in running)
    seen = {student for now in running for student, _ in now}
    graded = {r.student for r in rows if r.status != status.MISSING}
    assert seen == graded
    for now in running:                 # the longest-running first
        seconds = [s for _, s in now]
        assert seconds == sorted(seconds, reverse=True)


def test_moodle_worksheet_is_filled_and_feedback_zip_named_for_moodle(moodle, tmp_path):
    course = moodle["courses"]["folders"][0]
    assert moodle["roster"].exit_code == 0 and "20 learners" in moodle["roster"].output
    result = cli(course, "export", "--out", tmp_path, "--moodle", moodle["worksheet"],
                 "--lesson", B)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader((tmp_path / f"moodle-{B}-worksheet.csv").open(encoding="utf-8")))
    assert len(rows) == 20
    by = {r["Identifier"]: r for r in rows}
    for index, learner in enumerate(lc.CLASS):
        row = by[f"Participant {learner.moodle}"]
        what = lc.plan(index, B)
        if index == 19:                  # Moodle says its grade cannot be changed
            assert row["Grade"] == ""
            continue
        if what in ("right", "wrong"):
            points = (lc.EXERCISE[B][2] + 1) if what == "right" else 1
            assert float(row["Grade"]) == pytest.approx(points * 10 / lc.MAX[B]), row
            assert f"{points} of {lc.MAX[B]} points" in row["Feedback comments"]
            assert row["Late"] == "no", row
        elif what == "late":            # Moodle's zip time after the due date: "zero"
            assert float(row["Grade"]) == 0 and row["Late"] == "yes", row
            assert row["Feedback comments"].startswith(
                f"0 of {lc.MAX[B]} points (late by 1 d 9 h; the late policy took 4 of 4 points). "
                "explain: Right, but late."), row
        elif what in ("missing", "empty"):
            assert row["Grade"] == "" and row["Feedback comments"] == "", row
    # the grader's comment, as plain text on one line, bounded, and never a formula
    comment = by[f"Participant {lc.CLASS[0].moodle}"]["Feedback comments"]
    assert comment.startswith(f"{lc.MAX[B]} of {lc.MAX[B]} points. explain: =Good: you say "
                              "&lt;b&gt;why&lt;/b&gt;, not only what. xxx")
    assert "…" in comment and len(comment) < 1100
    assert lc.CLASS[6].moodle in result.output and "failed" in result.output
    # an export of one lesson leaves the class-wide grades.csv alone, and names its own
    assert not (tmp_path / "grades.csv").exists() and (tmp_path / f"grades-{B}.csv").is_file()
    assert "cannot be changed" in result.output
    pages = tmp_path / "feedback.zip"
    written = cli(course, "feedback", B, "--zip", pages)
    assert written.exit_code == 0, written.output
    names = zipfile.ZipFile(pages).namelist()
    assert f"Zoë Müller_{lc.CLASS[1].moodle}_assignsubmission_file_{B}-feedback.html" in names
    assert len(names) == sum(lc.plan(i, B) in ("right", "wrong", "late", "untitled")
                             for i in range(len(lc.CLASS)))


def test_a_late_moodle_learners_page_says_the_grade_the_worksheet_gets(moodle, tmp_path):
    course = moodle["courses"]["folders"][0]
    assert cli(course, "feedback", B).exit_code == 0
    result = cli(course, "export", "--out", tmp_path, "--moodle", moodle["worksheet"],
                 "--lesson", B)
    assert result.exit_code == 0, result.output
    rows = {r["Identifier"]: r for r in csv.DictReader(
        (tmp_path / f"moodle-{B}-worksheet.csv").open(encoding="utf-8"))}
    grades = {r["student"]: r for r in csv.DictReader(
        (tmp_path / f"grades-{B}.csv").open(encoding="utf-8"))}
    checked = 0
    for index, learner in enumerate(lc.CLASS):
        if lc.plan(index, B) not in ("late", "right", "wrong") or index == 19:
            continue
        score, most, text = _page_score(course, B, learner.moodle)
        assert score == float(grades[learner.moodle]["score"])
        assert float(rows[f"Participant {learner.moodle}"]["Grade"]) == pytest.approx(
            score * 10 / most)
        assert f"{score:g} of {most:g} points" in rows[f"Participant {learner.moodle}"][
            "Feedback comments"]
        checked += lc.plan(index, B) == "late"
    assert checked
