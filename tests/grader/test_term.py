"""A term as an instructor runs it, on a small class of lesson 02 (tests/support/lmsclass.py's course):
graded, hand graded, a second download that replaces two submissions, graded again, and
graded again by force. The feedback folder holds pages only for work as it is graded now,
nbgrader's formgrader lists for hand grading exactly whom autograd-lab says waits, another
lesson's notebook is named as such, and no page shows a path of the grading machine."""

import nbformat
import pytest
from typer.testing import CliRunner

import lmsclass as lc
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.gradebook.outcome import outcomes
from autograd_lab_grader.commands.cli import app
from autograd_lab_grader.course import Course

A, B = lc.A, lc.B
runner = CliRunner()

KEPT = "101"        # hand graded, never changes
WAITS = "102"       # never hand graded; its written answer is hostile markup
CODE = "103"        # hand graded, then hands in a wrong answer with the same written answer
WRITTEN = "104"     # hand graded, then hands in a new written answer
WARNS = "105"       # its answer cell warns: Python names the cell's file in the warning
OTHER = "106"       # hands in lesson 05's notebook as lesson 02
ABSENT = "107"      # on the roster, hands in nothing
HOSTILE = ('<script>alert("owned")</script><img src=x onerror="alert(1)"> The slope of '
           '$x^2$ at x.')


def cli(course, *args):
    from autograd_lab_grader.commands import cli as command
    command.console.width = 250         # one table row a line, so the output can be read back
    return runner.invoke(app, ["-C", str(course.root), *map(str, args)])


def _notebook(course, lesson=A, *, answer=None, right=True, written="The slope at x.") -> bytes:
    nb = nbformat.reads(lc.notebook(course.root, lesson, right=right, written=written).decode(),
                        as_version=4)
    if answer is not None:
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == lc.EXERCISE[lesson][0]:
                cell.source = answer(cell.source)
    return nbformat.writes(nb).encode()


def _submit(course, student, data: bytes):
    folder = course.submission(A, student)
    folder.mkdir(parents=True)
    (folder / f"{A}.ipynb").write_bytes(data)


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


def formgrader_lists(course, lesson=A):
    """The learners nbgrader's formgrader lists as needing a hand grade (its API's own
    answer, which its Manual Grading pages show)."""
    api = course.api()
    listed = {s["student"] for s in api.get_submissions(lesson) if s["needs_manual_grade"]}
    per_notebook = {s["student"] for s in api.get_notebook_submissions(lesson, lesson)
                    if s["needs_manual_grade"]}
    assert listed == per_notebook
    return listed


def autograd_lab_waits(course, lesson=A):
    return {o.student for o in outcomes(course, [lesson]) if o.status == status.MANUAL}


def _pages(course, lesson=A):
    return {p.parent.parent.name: p.read_text()
            for p in course.directory("feedback").glob(f"*/{lesson}/{lesson}.html")}


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    base = tmp_path_factory.mktemp("term")
    course = Course(lc.make_course(base / "course"))
    _submit(course, KEPT, _notebook(course))
    _submit(course, WAITS, _notebook(course, written=HOSTILE))
    _submit(course, CODE, _notebook(course))
    _submit(course, WRITTEN, _notebook(course))
    _submit(course, WARNS, _notebook(course, answer=lambda source: (
        "import warnings\nwarnings.warn('careful here')\n" + source)))
    _submit(course, OTHER, lc.notebook(course.root, B))
    with course.gradebook() as gb:
        gb.add_student(ABSENT)
    out, seen = {}, {}
    out["grade 1"] = cli(course, "grade", A, "--jobs", "2")
    hand_grade(course, A, skip={WAITS})
    out["feedback 1"] = cli(course, "feedback", A)
    seen["pages 1"] = _pages(course)
    # the second download: one learner changed their code alone, one their written answer
    for student, data in ((CODE, _notebook(course, right=False)),
                          (WRITTEN, _notebook(course, written="Rewritten: the slope at x."))):
        path = base / f"{student}.ipynb"
        path.write_bytes(data)
        out["collect", student] = cli(course, "collect", path, "--student", student,
                                      "--lesson", A, "--time", f"{lc.ON_TIME} UTC")
    out["feedback 2"] = cli(course, "feedback", A)
    seen["pages 2"] = _pages(course)
    out["grade 2"] = cli(course, "grade", A, "--jobs", "2")
    seen["lists 2"] = (formgrader_lists(course), autograd_lab_waits(course))
    out["feedback 3"] = cli(course, "feedback", A)
    seen["pages 3"] = _pages(course)
    out["grade 3"] = cli(course, "grade", A, "--jobs", "2", "--force")
    seen["lists 3"] = (formgrader_lists(course), autograd_lab_waits(course))
    return dict(course=course, out=out, seen=seen, base=base)


def test_a_replaced_submission_leaves_no_page_of_its_old_grading(term):
    out, seen = term["out"], term["seen"]
    assert out["feedback 1"].exit_code == 0, out["feedback 1"].output
    assert set(seen["pages 1"]) == {KEPT, CODE, WRITTEN, WARNS}
    assert "Score: 3.0 / 3.0" in seen["pages 1"][CODE]
    for student in (CODE, WRITTEN):
        assert out["collect", student].exit_code == 0, out["collect", student].output
    # collected again, not graded yet: the pages of the old submissions are gone, and said
    assert out["feedback 2"].exit_code == 0, out["feedback 2"].output
    assert set(seen["pages 2"]) == {KEPT, WARNS}
    said = out["feedback 2"].output
    for student in (CODE, WRITTEN):
        assert f"no page for {student}: not graded yet" in said, said
    # graded again: the code-only change has its new page, the new written answer waits
    assert set(seen["pages 3"]) == {KEPT, CODE, WARNS}
    assert "Score: 1.0 / 3.0" in seen["pages 3"][CODE]
    assert "3.0 / 3.0" not in seen["pages 3"][CODE]
    said = out["feedback 3"].output
    assert f"no page for {WRITTEN}: waiting for hand grading (explain)" in said, said
    assert f"no page for {WAITS}: waiting for hand grading" in said
    assert f"no page for {ABSENT}: missing" in said
    assert f"no page for {OTHER}: failed: " in said


def test_regrading_keeps_the_formgraders_list_equal_to_autograd_labs(term):
    course, out, seen = term["course"], term["out"], term["seen"]
    for run in ("grade 2", "grade 3"):
        assert "Traceback" not in out[run].output, out[run].output
    # after a regrade of what changed, and after a forced regrade of the class: the code-only
    # change keeps its hand grade, the new written answer waits, and nbgrader agrees
    for lists in ("lists 2", "lists 3"):
        formgrader, ours = seen[lists]
        assert ours == {WAITS, WRITTEN}, lists
        assert formgrader == ours, lists
    scores = {o.student: o.score for o in outcomes(course, [A])}
    assert scores[KEPT] == 3 and scores[CODE] == 1 and scores[WARNS] == 3
    with course.gradebook() as gb:
        explain = gb.find_grade("explain", A, A, CODE)
        assert (explain.manual_score, explain.needs_manual_grade) == (1, False)


def test_a_hand_grade_of_an_answer_changed_outside_collect_is_asked_for_again(term, tmp_path):
    from autograd_lab_grader.steps import worker

    course = term["course"]
    # a notebook put in place by hand (no collect to unset the hand grade), written answer new
    (course.submission(A, KEPT) / f"{A}.ipynb").write_bytes(
        _notebook(course, written="Something else entirely."))
    result = cli(course, "grade", A, "--student", KEPT)
    assert "grade them again: explain (1)" in result.output, result.output
    assert KEPT in formgrader_lists(course) and KEPT in autograd_lab_waits(course)
    assert worker.answers(tmp_path / "none.ipynb") is None


def test_another_lessons_notebook_is_named_as_that_lesson(term):
    course = term["course"]
    row = status.read(course, A)[(A, OTHER)]
    assert row.status == status.FAILED
    assert f"this is lesson {B}'s notebook, handed in as {A}" in row.reason
    assert "KeyError" not in row.reason


def test_no_page_shows_a_path_of_the_grading_machine(term):
    course, seen = term["course"], term["seen"]
    page = seen["pages 3"][WARNS]
    assert "careful here" in page and "[your cell]" in page
    for pages in (seen["pages 1"], seen["pages 3"]):
        for student, text in pages.items():
            for path in ("/tmp/", "ipykernel_", "autograd-lab-", str(course.root),
                         str(term["base"])):
                assert path not in text, (student, path)


def test_written_answers_one_question_at_a_time_and_every_questions_scores(term, tmp_path):
    from autograd_lab_grader.steps import report

    course = term["course"]
    waiting = autograd_lab_waits(course)
    result = cli(course, "report", A, "--out", tmp_path / "a.png")
    assert result.exit_code == 0, result.output
    # the score distribution of every question, the hand-graded one included
    questions = {q.name: q for q in report.report(course, A).questions}
    assert list(questions) == ["test_square", "explain"]
    explain = questions["explain"]
    assert explain.by_hand and explain.waiting == len(waiting)
    graded = {KEPT, WAITS, CODE, WRITTEN, WARNS} - waiting
    assert explain.scores == {1.0: len(graded)}
    assert questions["test_square"].scores == {0.0: 1, 2.0: 4}      # CODE's wrong answer
    row = next(line for line in result.output.splitlines() if line.startswith("│ explain"))
    assert "hand" in row and f"1: {len(graded)}" in row and f"│ {len(waiting)} " in row
    # a page per hand-graded question: every answer, those waiting first, safe to open
    page = (course.root / "reports" / f"{A}-written" / "explain.html").read_text()
    assert "explain.html" in result.output
    assert "The slope at x." in page and "Rewritten: the slope at x." in page
    assert "The slope at x." in page.split("The model answer")[1]     # the rubric, then answers
    for student in {KEPT, WAITS, CODE, WRITTEN, WARNS}:
        assert f'id="learner-{student}"' in page
    assert OTHER not in page and ABSENT not in page
    first = [page.index(f'id="learner-{s}"') for s in sorted(waiting)]
    rest = [page.index(f'id="learner-{s}"') for s in sorted(graded)]
    assert max(first) < min(rest)
    assert page.count("not graded yet") == len(waiting)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "<script" not in page and "onerror" not in page and "<img src=" not in page
    assert "[an image from outside this page, not shown]" in page     # WAITS's, as words
    assert "<math" in page                  # the learner's $x^2$, as MathML
