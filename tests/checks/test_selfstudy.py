"""Model answers for learners on their own (autograd_lab/checks/written.py): written beside
every released lesson that has a written answer, revealed by the cell after the answer only
once the saved notebook holds an attempt (the notebook JupyterLab or VS Code names, or one in
the kernel's folder) or, with no notebook on disk (Colab), once the learner hands an attempt to
reveal; never in a graded run; where they are not handed out (a learners' repository without
--self-study), the cell says so."""
import json

import nbformat
import pytest

import course as lessons
from autograd_lab.checks import VERDICTS_ENV, written

WRITTEN = [lesson for lesson in lessons.LESSONS
           if written.model_answers(json.loads(lessons.solution_path(lesson).read_text()))]


def test_every_lesson_but_the_first_has_written_answers():
    assert set(lessons.LESSONS) - set(WRITTEN) == {"00_start_here"}


@pytest.mark.parametrize("lesson", WRITTEN)
def test_the_release_holds_each_written_answers_model_and_rubric(lesson):
    """What release.py wrote beside the learner's notebook is the solution's model answer
    (rubric included), one per hand-graded cell, and nothing else of the solution."""
    folder = lessons.ROOT / "notebooks" / lesson
    kept = json.loads((folder / written.ANSWERS_FILE).read_text())
    solution = nbformat.read(lessons.solution_path(lesson), as_version=4)
    hand = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solution.cells
            if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("solution")}
    assert kept == hand
    assert all("Rubric" in text for text in kept.values()), lesson


def _lesson_folder(tmp_path, answer, model=True):
    lesson = WRITTEN[0]
    nb = nbformat.read(lessons.release_path(lesson), as_version=4)
    gid = next(c.metadata["nbgrader"]["grade_id"] for c in nb.cells if c.cell_type == "markdown"
               and c.metadata.get("nbgrader", {}).get("solution"))
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == gid and answer is not None:
            cell.source = answer
    nbformat.write(nb, tmp_path / f"{lesson}.ipynb")
    source = lessons.ROOT / "notebooks" / lesson / written.ANSWERS_FILE
    if model:
        (tmp_path / written.ANSWERS_FILE).write_text(source.read_text())
    return gid, json.loads(source.read_text())[gid]


MINE = "Backward starts from the derivative of what we care about, here z itself, so one."


@pytest.mark.parametrize("answer", [None, "YOUR ANSWER HERE", "see above", "   "])
def test_no_model_answer_before_an_attempt(tmp_path, monkeypatch, capsys, answer):
    gid, model = _lesson_folder(tmp_path, answer)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    written.reveal(gid)
    said = capsys.readouterr().out
    assert "Write your own answer" in said and model not in said


def test_the_model_answer_after_an_attempt(tmp_path, monkeypatch, capsys):
    gid, model = _lesson_folder(tmp_path, MINE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    written.reveal(gid)
    assert model in capsys.readouterr().out


def test_the_notebook_jupyter_names_is_the_one_read(tmp_path, monkeypatch, capsys):
    gid, model = _lesson_folder(tmp_path, MINE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("JPY_SESSION_NAME", str(next(tmp_path.glob("*.ipynb"))))
    written.reveal(gid)
    assert model in capsys.readouterr().out


@pytest.mark.parametrize("answer", [None, MINE])
def test_without_the_file_it_says_model_answers_are_not_handed_out(tmp_path, monkeypatch,
                                                                   capsys, answer):
    """A class whose written answers are graded gets no model answers (student-repo without
    --self-study): the cell says so plainly, before an attempt as after it, never "write
    yours first, then compare"."""
    gid, model = _lesson_folder(tmp_path, answer, model=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    written.reveal(gid)
    said = capsys.readouterr().out
    assert "Model answers are not handed out in this course" in said, said
    assert "instructor grades the written answers" in said
    assert model not in said and "compare" not in said


def test_nothing_is_revealed_in_a_graded_run(tmp_path, monkeypatch, capsys):
    gid, model = _lesson_folder(tmp_path, MINE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setenv(VERDICTS_ENV, "grader")
    written.reveal(gid)
    assert model not in capsys.readouterr().out


def test_with_no_notebook_on_disk_the_answer_handed_to_reveal_is_the_attempt(
        tmp_path, monkeypatch, capsys):
    """Colab keeps the notebook in the browser and never sends a text cell to the kernel: the
    learner hands their answer to reveal in its own cell. Before that, or with a placeholder,
    nothing is shown; after, the model answer of the course the engine comes from."""
    gid, model = _lesson_folder(tmp_path, None)
    for path in tmp_path.iterdir():
        path.unlink()                                       # no notebook, no model answers here
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    written.reveal(gid)
    said = capsys.readouterr().out
    assert "No saved notebook here holds" in said and f'reveal("{gid}", """' in said
    assert model not in said
    for placeholder in ("YOUR ANSWER HERE", "see above", ""):
        written.reveal(gid, placeholder)
        said = capsys.readouterr().out
        assert "Write your own answer" in said and model not in said
    written.reveal(gid, MINE)
    assert model in capsys.readouterr().out


def test_vs_codes_notebook_is_the_one_read(tmp_path, monkeypatch, capsys):
    """VS Code names the notebook in the kernel's namespace (__vsc_ipynb_file__) and may start
    the kernel in another folder."""
    from autograd_lab.checks import notebook
    gid, model = _lesson_folder(tmp_path, MINE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)

    class Shell:
        user_ns = {"__vsc_ipynb_file__": str(next(tmp_path.glob("*.ipynb")))}
    monkeypatch.setattr(notebook, "_shell", lambda: Shell())
    written.reveal(gid)
    assert model in capsys.readouterr().out
