"""The `autograd-lab` steps on a class of mixed submissions: the grade command (progress,
summary, exit status, re-runs), report, feedback, export, collect, release, student-repo."""
import csv
import zipfile
from collections import Counter

import nbformat
import pytest
from typer.testing import CliRunner

import gradingcourse as gc
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.steps import collect, report
from autograd_lab_grader.commands.cli import app
from autograd_lab_grader.course import Course

# student -> (answers, {exercise: misconception the check must name, or None for a plain fail})
# an exercise not named passes
SQUARE_6 = "def square(x):\n    return 2 * x"            # the check calls it gradient-is-input
SQUARE_9 = "def square(x):\n    return 9.0"              # passes the check, fails the hidden test
SLOPE_9 = "def slope(x):\n    return x * x"              # gradient-is-input
SLOPE_3 = "def slope(x):\n    return x"                  # gradient-shape (the fixture's second id)
CLASS = {
    "alice": ({}, {}),
    "bob": ({"answer_square": SQUARE_6}, {"test_square": "gradient-is-input"}),
    "carol": ({"answer_slope": SLOPE_9}, {"test_slope": "gradient-is-input"}),
    "dave": ({"answer_slope": SLOPE_3}, {"test_slope": "gradient-shape"}),
    "erin": ({"answer_square": SQUARE_6, "answer_slope": SLOPE_9},
             {"test_square": "gradient-is-input", "test_slope": "gradient-is-input"}),
    "henry": ({"answer_square": SQUARE_9}, {"test_square": None}),
}
FAILED = "frank"          # its kernel dies
MISSING = "gina"          # registered, never submitted
runner = CliRunner()


def _gradebook(course):
    """Everything grading decides, without times: nbgrader's scores per cell and our statuses."""
    from nbgrader.api import Grade

    with course.gradebook() as gb:
        scores = sorted((g.student.id, g.name, g.score) for g in gb.db.query(Grade))
    statuses = {key: (r.status, r.reason, r.score)
                for key, r in status.read(course).items()}
    return scores, statuses


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    root = gc.make_course(tmp_path_factory.mktemp("mixed") / "course", timeout=5)
    for student, (answers, _) in CLASS.items():
        gc.submit(root, student, answers)
    gc.submit(root, FAILED, {"answer_square": "import os\nos._exit(3)"})
    course = Course(root)
    with course.gradebook() as gb:
        gb.add_student(MISSING)
    result = runner.invoke(app, ["-C", str(root), "grade", gc.LESSON, "--jobs", "2"])
    return course, result


def test_grade_shows_a_summary_and_fails_when_a_submission_failed(mixed):
    course, result = mixed
    assert result.exit_code == 1, result.output
    assert "frank" in result.output and "the kernel died" in result.output
    assert "gina" in result.output and "missing" in result.output
    assert f"{len(CLASS)} graded" in result.output


def test_grading_again_gives_the_same_gradebook(mixed):
    course, _ = mixed
    before = _gradebook(course)
    again = runner.invoke(app, ["-C", str(course.root), "grade", gc.LESSON])
    assert "frank" in again.output          # failed before: graded again, fails again
    # graded before and unchanged: skipped (the note is on alice's line below the table)
    assert "  alice: unchanged since graded" in again.output
    assert f"{len(CLASS)} graded before and unchanged since" in again.output
    assert _gradebook(course) == before
    forced = runner.invoke(app, ["-C", str(course.root), "grade", gc.LESSON, "--force"])
    assert f"{len(CLASS)} graded" in forced.output
    assert _gradebook(course) == before


def test_report_counts_learners_per_exercise_and_misconception(mixed, tmp_path):
    course, _ = mixed
    result = report.report(course, gc.LESSON)
    assert result.learners == len(CLASS)
    found = {e.name: e for e in result.exercises}
    assert set(found) == set(gc.POINTS)
    for exercise in gc.POINTS:
        outcomes = [fails[exercise] if exercise in fails else "pass"
                    for _, fails in CLASS.values()]
        assert found[exercise].passed == outcomes.count("pass")
        assert found[exercise].misconceptions == Counter(
            o for o in outcomes if o not in ("pass", None))
    png = report.write_figure(result, tmp_path / "report.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    from autograd_lab_grader.commands import cli as command
    command.console.width = 200         # a table row a line, to be read back
    cli = runner.invoke(app, ["-C", str(course.root), "report", gc.LESSON,
                              "--out", str(tmp_path / "cli.png")])
    assert cli.exit_code == 0, cli.output
    # misconceptions by their human name, not their id; shares of the 7 who handed in
    assert report.human_name("gradient-shape") in cli.output and (tmp_path / "cli.png").is_file()
    assert "gradient-shape" not in cli.output
    assert "7 handed in" in cli.output and "1 could not be graded" in cli.output
    assert "1 did not hand in" in cli.output


def test_feedback_shows_check_messages_but_no_hidden_test_or_traceback(mixed):
    course, _ = mixed
    result = runner.invoke(app, ["-C", str(course.root), "feedback", gc.LESSON])
    assert result.exit_code == 0, result.output
    pages = {p.parent.parent.name: p.read_text()
             for p in course.directory("feedback").rglob("*.html")}
    assert set(pages) == set(CLASS)
    for student, page in pages.items():
        assert "HIDDEN-" not in page and "HIDDEN TESTS" not in page, student
        assert "most recent call last" not in page and "Cell In[" not in page, student
        assert "fixturechecks.py" not in page, student     # no frame of the check either
    assert "Misconception [gradient-is-input]" in pages["bob"]
    assert "expected: 9.0" in pages["bob"]
    assert "A hidden test failed." in pages["henry"]
    # nbgrader copies the autograded folder's other files beside each page (the lesson's own
    # files among them, which may hold its hidden tests): the folder handed out holds the page
    assert (course.directory("autograded") / "bob" / gc.LESSON / "fixturechecks.py").is_file()
    for student in CLASS:
        folder = course.directory("feedback") / student / gc.LESSON
        assert sorted(p.name for p in folder.iterdir()) == [f"{gc.LESSON}.html"], student


def test_export_has_a_status_column_and_no_zero_for_a_failure(mixed, tmp_path):
    course, _ = mixed
    result = runner.invoke(app, ["-C", str(course.root), "export", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    grades = {r["student"]: r for r in csv.DictReader((tmp_path / "grades.csv").open())}
    assert grades[FAILED]["status"] == "failed" and grades[FAILED]["score"] == ""
    assert "kernel died" in grades[FAILED]["reason"]
    assert grades[MISSING]["status"] == "missing" and grades[MISSING]["score"] == ""
    assert grades["alice"]["score"] == f"{gc.TOTAL:g}" and grades["alice"]["status"] == "graded"
    questions = list(csv.DictReader((tmp_path / "questions.csv").open()))
    assert len(questions) == len(grades) * len(gc.POINTS)
    for row in questions:
        fails = CLASS.get(row["student"], ({}, {}))[1]
        if row["student"] in CLASS:
            expected = 0 if row["question"] in fails else gc.POINTS[row["question"]]
            assert float(row["score"]) == expected, row
        else:
            assert row["score"] == "" and row["status"] in ("failed", "missing")


def _notebook_bytes(root):
    return nbformat.writes(gc.released(root)).encode()


def test_collect_from_a_zip_places_what_it_can_and_names_the_rest(mixed, tmp_path):
    course, _ = mixed
    root = gc.copy_course(course.root, tmp_path / "course")
    notebook = _notebook_bytes(root)
    archive = tmp_path / "lms.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("ivan_1234_5678_fixture.ipynb", notebook)            # flat LMS name
        z.writestr("judy/fixture-final.ipynb", notebook)                 # a folder per learner
        z.writestr("submitted/kim/fixture/fixture.ipynb", notebook)     # nbgrader's layout
        z.writestr("submitted/kim/fixture/timestamp.txt", "2026-11-20 10:00:00")
        z.writestr("../evil_fixture.ipynb", notebook)
        z.writestr("/abs/mallory_fixture.ipynb", notebook)
        z.writestr("sub/../../up_fixture.ipynb", notebook)
        z.writestr("notes.txt", "hello")
        z.writestr("leo_homework.ipynb", notebook)
    result = collect.collect(Course(root), archive)
    assert sorted(result.placed) == [("ivan", "fixture", "fixture.ipynb"),
                                     ("judy", "fixture", "fixture.ipynb"),
                                     ("kim", "fixture", "fixture.ipynb")]
    assert dict(result.not_placed) == {
        "submitted/kim/fixture/timestamp.txt": (
            "a timestamp.txt handed in: a submission's time is the LMS's (its download) or "
            "yours (`collect NOTEBOOK --time`), never a file's"),
        "../evil_fixture.ipynb": "unsafe path (absolute or with ..)",
        "/abs/mallory_fixture.ipynb": "unsafe path (absolute or with ..)",
        "sub/../../up_fixture.ipynb": "unsafe path (absolute or with ..)",
        "notes.txt": "not a notebook",
        "leo_homework.ipynb": "no lesson id in its name (--lesson says which lesson a download "
                              "is)"}
    for student in ("ivan", "judy", "kim"):
        assert (root / "submitted" / student / "fixture" / "fixture.ipynb").read_bytes() == notebook
    assert not (tmp_path / "evil_fixture.ipynb").exists()
    # the same again: everything is there already and unchanged, and said so
    again = collect.collect(Course(root), archive)
    assert again.placed == [] and again.replaced == []
    assert sorted(again.unchanged) == [("ivan", "fixture"), ("judy", "fixture"), ("kim", "fixture")]
    assert dict(again.not_placed) == dict(result.not_placed)


def test_collect_from_a_folder_by_cli(mixed, tmp_path):
    course, _ = mixed
    root = gc.copy_course(course.root, tmp_path / "course")
    downloads = tmp_path / "downloads"
    (downloads / "Mia Wong").mkdir(parents=True)
    (downloads / "Mia Wong" / "fixture.ipynb").write_bytes(_notebook_bytes(root))
    (downloads / "stray.pdf").write_bytes(b"%PDF")
    result = runner.invoke(app, ["-C", str(root), "collect", str(downloads)])
    assert result.exit_code == 0, result.output
    assert (root / "submitted" / "mia-wong" / "fixture" / "fixture.ipynb").is_file()
    assert "stray.pdf" in result.output and "not a notebook" in result.output


def test_release_regenerates_the_same_notebooks(mixed, tmp_path):
    course, _ = mixed
    root = gc.copy_course(course.root, tmp_path / "course")
    released = root / "notebooks" / gc.LESSON / f"{gc.LESSON}.ipynb"
    before = released.read_bytes()
    result = runner.invoke(app, ["-C", str(root), "release"])
    assert result.exit_code == 0, result.output
    assert released.read_bytes() == before


def test_student_repo_holds_no_solution_and_no_hidden_test(mixed, tmp_path):
    course, _ = mixed
    dest = tmp_path / "learners"
    result = runner.invoke(app, ["-C", str(course.root), "student-repo", str(dest)])
    assert result.exit_code == 0, result.output
    files = [p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()]
    assert f"notebooks/{gc.LESSON}/{gc.LESSON}.ipynb" in files
    assert "README.md" in files and "autograd_lab/__init__.py" in files
    assert not any(f.startswith(("solutions/", "grader/")) for f in files)
    for f in files:
        text = (dest / f).read_text(errors="ignore")
        assert "HIDDEN" not in text and "BEGIN SOLUTION" not in text, f


def test_every_command_has_help():
    for command in ("roster", "release", "student-repo", "collect", "grade", "feedback",
                    "export", "report", "selftest"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "Usage" in result.output, command


@pytest.mark.parametrize("option", [["--jobs", "-1"], ["--timeout", "0"], ["--memory", "-5"]])
def test_grade_refuses_an_option_out_of_range_before_it_grades(mixed, option):
    course, _ = mixed
    before = status.read(course, gc.LESSON)
    result = runner.invoke(app, ["-C", str(course.root), "grade", gc.LESSON, "--force", *option])
    assert result.exit_code == 2, result.output
    assert option[0] in result.output
    assert status.read(course, gc.LESSON) == before       # nothing was graded


def test_grading_options_refuse_what_would_hang_or_break_every_kernel():
    from autograd_lab_grader.steps.grade import Options
    with pytest.raises(ValueError, match="jobs"):
        Options(jobs=-1)
    with pytest.raises(ValueError, match="memory"):
        Options(memory=0)
    assert Options(jobs=0).jobs == 0        # 0: the default


def test_the_console_script_is_declared():
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "grader" / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["autograd-lab"] == "autograd_lab_grader.commands.cli:app"
    # (the learner's distribution declares none: learners never get the command)
    assert "scripts" not in tomllib.loads((root / "pyproject.toml").read_text())["project"]
