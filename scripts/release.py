"""Release the lessons: what learners open in notebooks/ is made from solutions/ by this.

    .venv/bin/python scripts/release.py [LESSON ...]      (default: every lesson)

For each lesson, the text twin solutions/<L>/<L>.py (jupytext py:percent: the file a maintainer
edits and reviews) is turned into solutions/<L>/<L>.ipynb, and nbgrader's generate_assignment
writes notebooks/<L>/<L>.ipynb from it: solutions replaced by stubs, hidden tests removed,
outputs cleared, graded cells locked. Running it twice gives the same bytes, so a test can check
that the committed notebooks/ is what solutions/ makes.
"""
import sys
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parent.parent


def lessons(root=ROOT):
    return sorted(p.name for p in (root / "solutions").iterdir() if (p / f"{p.name}.py").exists())


def to_notebook(lesson, root=ROOT):
    """solutions/<L>/<L>.py -> solutions/<L>/<L>.ipynb (no outputs: they are made by running)."""
    folder = root / "solutions" / lesson
    nb = jupytext.read(folder / f"{lesson}.py")
    for number, cell in enumerate(nb.cells):      # stable ids: the same text, the same bytes
        cell.id = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell-{number:03d}"
    jupytext.write(nb, folder / f"{lesson}.ipynb")


def generate(lesson, root=ROOT, db_url=None):
    """nbgrader's generate_assignment, configured as its command is (the course root's
    nbgrader_config.py), in this process: one Python start for every lesson, not one each."""
    if str(ROOT) not in sys.path:   # (the checkout's package, installed or not)
        sys.path.insert(0, str(ROOT))
    from autograd_lab_grader.course import Course

    result = Course(root, db_url).api().generate_assignment(lesson, force=True)
    if not result["success"] or "[ERROR]" in result.get("log", ""):
        raise RuntimeError(f"nbgrader generate_assignment {lesson} failed:\n"
                           f"{result.get('error') or result.get('log', '')}")


def model_answers(lesson, root=ROOT):
    """notebooks/<L>/model_answers.json: the written answers' model answers and rubrics, for
    learners who study alone (autograd_lab/checks/written.py reveals one once the learner has
    written their own; only `autograd-lab student-repo --self-study` hands the file out)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from autograd_lab.checks import written

    written.write(root / "solutions" / lesson / f"{lesson}.ipynb", root / "notebooks" / lesson)


def release(names=None, root=ROOT, db_url=None):
    for lesson in names or lessons(root):
        to_notebook(lesson, root)
        generate(lesson, root, db_url)
        model_answers(lesson, root)
        print(f"released notebooks/{lesson}/{lesson}.ipynb")


if __name__ == "__main__":
    release(sys.argv[1:] or None)
