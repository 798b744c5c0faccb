"""Model answers for learners studying on their own.

A written explanation is graded by hand, so neither Validate nor a test cell can say whether it
is right. A learner with no instructor can instead compare their answer with the lesson's model
answer and its rubric: ``reveal("explain_seed")``, in the cell after the written answer, shows
them, but only after an attempt of their own (so the comparison comes after the attempt, not
instead of it): the saved notebook holds one in that cell (JupyterLab, Notebook, VS Code), or,
where no notebook file is beside the kernel (Colab keeps it in the browser, and a text cell
never reaches the kernel), the learner hands it to the kernel in the reveal cell itself,
``reveal("explain_seed", "my answer ...")``.

The model answers travel beside each released notebook, in ``model_answers.json`` (written by
``scripts/release.py`` from the solutions), and reach learners only in a repository for
self-study (``autograd-lab student-repo --self-study``); with no notebook file, the copy of the
course the engine is installed from has them (the learners' repository, which Colab clones). A
class whose written answers are graded gets none: ``reveal`` then says so, before and after an
attempt, and who grades the answer. In a graded run it shows nothing either.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

ANSWERS_FILE = "model_answers.json"
BLANK = "YOUR ANSWER HERE"
MIN_WORDS = 8           # an attempt, not a placeholder ("see above", "x")


def model_answers(notebook: dict) -> dict[str, str]:
    """{grade_id: model answer} of a solution notebook's hand-graded written answers."""
    found = {}
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "markdown" and meta.get("grade") and meta.get("solution"):
            source = cell.get("source", "")
            found[meta["grade_id"]] = "".join(source) if isinstance(source, list) else source
    return found


def write(solution: Path, folder: Path) -> Path | None:
    """Write the model answers of the solution notebook ``solution`` into the released
    lesson's ``folder`` (sorted, one run gives the same bytes); None, and no file, when the
    lesson has no written answer."""
    answers = model_answers(json.loads(Path(solution).read_text(encoding="utf-8")))
    target = Path(folder) / ANSWERS_FILE
    if not answers:
        target.unlink(missing_ok=True)
        return None
    target.write_text(json.dumps(answers, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                      encoding="utf-8")
    return target


def _notebooks() -> list[Path]:
    """The notebook this kernel runs, where the front end says which (JupyterLab, VS Code);
    else those in the kernel's folder (JupyterLab starts a kernel in its notebook's folder)."""
    from .notebook import this_notebook
    named = this_notebook()
    if named is not None:
        return [named]
    return sorted(Path.cwd().glob("*.ipynb"))


def _answers_files(notebook: Path | None) -> list[Path]:
    """The model answers there are for a written answer: beside the notebook that holds it;
    with no such notebook, in the kernel's folder and beside the lessons of the course the
    engine is installed from (``notebooks/*/`` beside the package: the learners' repository
    Colab cloned)."""
    if notebook is not None:
        found = [notebook.parent / ANSWERS_FILE]
    else:
        import autograd_lab
        checkout = Path(autograd_lab.__file__).resolve().parent.parent
        found = [Path.cwd() / ANSWERS_FILE, *sorted((checkout / "notebooks").glob(
            f"*/{ANSWERS_FILE}"))]
    return [path for path in found if path.is_file()]


def _model_answer(grade_id: str, files: list[Path]) -> str | None:
    for path in files:
        try:
            found = json.loads(path.read_text(encoding="utf-8")).get(grade_id)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(found, str):
            return found
    return None


def _written(grade_id: str) -> tuple[Path | None, str | None]:
    """The saved notebook holding the written answer ``grade_id``, and that answer."""
    for path in _notebooks():
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        for cell in cells:
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
                source = cell.get("source", "")
                return path, "".join(source) if isinstance(source, list) else source
    return None, None


def _show(text: str) -> None:
    """Markdown in a notebook; plain text anywhere else."""
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
    except ImportError:
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        print(text)
        return
    display(Markdown(text))


def reveal(grade_id: str, answer: str | None = None) -> None:
    """Show the model answer of the written answer ``grade_id`` and its rubric, once the learner
    has attempted it: ``answer``, their own answer handed over in this call, or else the
    saved notebook's answer in that cell. Otherwise say what to do first."""
    from . import VERDICTS_ENV

    if os.environ.get(VERDICTS_ENV) == "grader":
        print("(Model answers are not shown in a graded run.)")
        return
    path, saved = _written(grade_id)
    files = _answers_files(path)
    if not files:
        # (before the attempt too: "write yours first, then compare" would promise what
        # never comes)
        print("Model answers are not handed out in this course: your instructor grades the "
              "written answers by hand, and you will see their comments with your feedback.")
        return
    attempt = answer if isinstance(answer, str) else saved
    if attempt is None:
        print(f"No saved notebook here holds the written answer {grade_id!r}. Save the "
              "notebook (Ctrl+S) and run this cell again; where the notebook is not a file "
              "beside this kernel (Colab), hand your answer to reveal in this cell instead: "
              f'reveal("{grade_id}", """your two or three sentences"""), and run it.')
        return
    words = attempt.replace(BLANK, " ").split()
    if len(words) < MIN_WORDS:
        print("Write your own answer in the cell above first, in two or three sentences, and "
              "save the notebook (Ctrl+S), or hand it to reveal in this cell: "
              f'reveal("{grade_id}", """your answer"""). Then run this cell again to compare '
              "it with the model answer.")
        return
    model = _model_answer(grade_id, files)
    if model is None:
        print(f"This copy of the course has no model answer for {grade_id!r}.")
        return
    _show("**Model answer** (compare it with yours: the rubric says what earns the points)"
          "\n\n" + model)
