"""Validate outside JupyterLab: `python -m autograd_lab.checks validate NOTEBOOK`, as the
Validate button runs a lesson, exits 1 on a wrong answer and 0 on the solution; validate(), in
a notebook's last cell, run with the kernel in another folder than the notebook (as in Colab,
where no notebook file is beside the kernel) lists exactly the exercises that fail, a wrong
answer with its check's message and an unanswered one as not answered; and reveal, with no
notebook on disk, refuses before an attempt and shows the model answer after."""
import importlib
import json
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

import course
from autograd_lab.checks import written

LESSON = "01_tensors_that_remember"


def wrong_answer(lesson):
    """A realistic wrong answer of one exercise that a visible test fails, naming its
    misconception (tests/support/submissions/)."""
    wrongs = importlib.import_module(f"submissions.{lesson}").WRONG
    return next(w for w in wrongs if w.misconception and not w.predicted and len(w.answers) == 1)


def validate_command(path, cwd):
    return subprocess.run([sys.executable, "-m", "autograd_lab.checks", "validate", str(path)],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def test_the_validate_command_exits_1_on_a_wrong_answer_and_0_on_the_right_one(tmp_path):
    wrong = wrong_answer(LESSON)
    nbformat.write(course.submission(LESSON, wrong.answers), tmp_path / "wrong.ipynb")
    nbformat.write(course.submission(LESSON), tmp_path / "right.ipynb")
    failed = validate_command(tmp_path / "wrong.ipynb", course.ROOT)   # (the course's config)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    out = failed.stdout
    assert out.startswith("VALIDATION FAILED ON 1 CELL(S)!")
    assert out.count("The following cell failed:") == 1
    assert f"Misconception [{wrong.misconception}]" in out
    passed = validate_command(tmp_path / "right.ipynb", tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.strip() == "Success! Your notebook passes all the tests."
    usage = subprocess.run([sys.executable, "-m", "autograd_lab.checks"], capture_output=True,
                           text=True)
    assert usage.returncode == 2 and "validate NOTEBOOK" in usage.stderr
    missing = validate_command(tmp_path / "nowhere.ipynb", tmp_path)
    assert missing.returncode == 2 and "no such notebook" in missing.stderr


def run_elsewhere(nb, folder):
    """Run ``nb`` top to bottom as Colab does: its kernel in ``folder``, where no notebook
    file is (nbclient runs the cells from memory)."""
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    assert not list(folder.glob("*.ipynb"))
    return nb


def shown(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def answer_cells(nb):
    return [i for i, c in enumerate(nb.cells) if course.is_answer(c)]


@pytest.fixture(scope="module")
def lesson_run(tmp_path_factory):
    """Lesson 01 with one exercise answered wrongly and the last one not answered at all, its
    written answer attempted (in the reveal cell, as in Colab), then validate() in a last cell;
    the kernel in a folder of its own."""
    wrong = wrong_answer(LESSON)
    nb = course.submission(LESSON, wrong.answers)
    released = nbformat.read(course.release_path(LESSON), as_version=4)
    last = answer_cells(nb)[-1]
    assert course.grade_id(nb.cells[last]) not in wrong.answers
    nb.cells[last].source = released.cells[last].source            # unanswered
    reveals = [i for i, c in enumerate(nb.cells) if "reveal(" in c.source]
    gid = course.grade_id(nb.cells[reveals[0] - 1])
    attempt = ("A grad_fn records the operation that made a tensor from tensors that "
               "require grad, so y, made by nobody, has none.")
    nb.cells.insert(reveals[0] + 1, nbformat.v4.new_code_cell(
        f"from autograd_lab.checks.written import reveal\nreveal({gid!r}, {attempt!r})"))
    nb.cells.append(nbformat.v4.new_code_cell(
        "from autograd_lab.checks import validate\nvalidate()"))
    folder = tmp_path_factory.mktemp("kernel-folder")
    return {"nb": run_elsewhere(nb, folder), "wrong": wrong, "unanswered": last,
            "reveals": reveals[0], "gid": gid}


def test_validate_in_the_last_cell_lists_the_failing_exercises(lesson_run):
    nb, wrong = lesson_run["nb"], lesson_run["wrong"]
    said = shown(nb.cells[-1])
    tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
             and c.cell_type == "code"]
    at = next(i for i, c in enumerate(nb.cells) if course.grade_id(c) in wrong.answers)
    failing = next(c for c in nb.cells[at + 1:] if c in tests)
    unanswered = next(c for c in nb.cells[lesson_run["unanswered"] + 1:] if c in tests)
    assert "VALIDATION FAILED ON 2 CELL(S)!" in said, said
    blocks = said.split("The following cell failed:")[1:]
    assert [b.split("The error was:")[0].split() for b in blocks] == [
        failing.source.split(), unanswered.source.split()]
    assert f"Misconception [{wrong.misconception}]" in blocks[0]
    # (its test runs on whatever the lesson's names hold: Validate says the same)
    assert "CheckFailed: " in blocks[1] or "has not run yet" in blocks[1]
    ran = said.split("Checked the ")[1].split(" ")[0]
    assert int(ran) == len(tests)


def test_validate_passes_the_solution_run_elsewhere(tmp_path):
    nb = course.submission(LESSON)
    nb.cells.append(nbformat.v4.new_code_cell(
        "from autograd_lab.checks import validate\nvalidate()"))
    said = shown(run_elsewhere(nb, tmp_path).cells[-1])
    assert said.rstrip().endswith("Success! Your notebook passes all the tests."), said


def test_reveal_with_no_notebook_on_disk_refuses_before_an_attempt_and_shows_after(lesson_run):
    nb, at, gid = lesson_run["nb"], lesson_run["reveals"], lesson_run["gid"]
    model = json.loads((course.ROOT / "notebooks" / LESSON / written.ANSWERS_FILE).read_text())
    before, after = shown(nb.cells[at]), nb.cells[at + 1]
    assert "No saved notebook here holds" in before and model[gid] not in before
    markdown = "".join(o.data.get("text/markdown", "") for o in after.outputs
                       if o.output_type == "display_data")
    assert model[gid] in markdown
