"""Helpers for the course's tests: learner submissions made from the released notebooks, graded
by real nbgrader in a throwaway course directory.

A *submission* is the released notebook with its answer cells filled in: by the solution's own
answers, except for the cells a test names (``answers={grade_id: code}``), which hold what a
learner wrote. ``grade_class`` grades a whole class of them as an instructor does, with
`autograd-lab grade` (real nbgrader, the sandbox, every test cell judged outside the learner's
kernel) and `autograd-lab feedback`, and returns, per learner, the autograded score and the
feedback page's text.
"""
import ast
import html
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted(p.name for p in (ROOT / "solutions").iterdir() if (p / f"{p.name}.py").exists())
MISCONCEPTION = re.compile(r"Misconception \[([a-z0-9-]+)\]")


def solution_path(lesson):
    return ROOT / "solutions" / lesson / f"{lesson}.ipynb"


def release_path(lesson):
    return ROOT / "notebooks" / lesson / f"{lesson}.ipynb"


def grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def is_answer(cell):
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and meta.get("solution") and not meta.get("grade")


def solution_answers(lesson):
    """{grade_id: the solution's code} for every autograded answer cell of a lesson."""
    nb = nbformat.read(solution_path(lesson), as_version=4)
    keep = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")
    return {grade_id(c): "\n".join(line for line in c.source.splitlines() if not keep.match(line))
            for c in nb.cells if is_answer(c)}


def rebinding_answers(lesson):
    """Answer cells that rebind every name a test might lean on and answer with objects that
    equal everything: a test that trusts any of those names would pass them."""
    prelude = ("import builtins\n"
               "class Anything:\n"
               "    __eq__ = lambda self, other: True\n"
               "    __ne__ = lambda self, other: False\n"
               "    __bool__ = lambda self: True\n"
               "    __call__ = lambda self, *a, **k: self\n"
               "    __getattr__ = lambda self, name: self\n"
               "abs = len = isinstance = float = lambda *a, **k: Anything()\n"
               "torch = np = check = checks = Anything()\n")
    answers = {}
    for gid, code in solution_answers(lesson).items():
        names = sorted({t.id for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Assign)
                        for t in node.targets if isinstance(t, ast.Name)})
        answers[gid] = prelude + "".join(f"{n} = Anything()\n" for n in names)
    return answers


def submission(lesson, answers=None):
    """The released notebook, answered with the solution except where ``answers`` says."""
    nb = nbformat.read(release_path(lesson), as_version=4)
    filled = dict(solution_answers(lesson), **(answers or {}))
    unknown = set(answers or {}) - set(filled) | set(answers or {}) - set(solution_answers(lesson))
    if unknown:
        raise KeyError(f"{lesson} has no answer cell {sorted(unknown)}")
    written = _written_answers(lesson)
    for cell in nb.cells:
        if is_answer(cell):
            cell.source = filled[grade_id(cell)]
        elif grade_id(cell) in written:
            cell.source = written[grade_id(cell)]
    return nb


def _written_answers(lesson):
    """{grade_id: model answer} of the manually graded (markdown) answers."""
    nb = nbformat.read(solution_path(lesson), as_version=4)
    return {grade_id(c): c.source for c in nb.cells
            if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("solution")}


@dataclass
class Graded:
    score: float
    max_score: float
    feedback: str           # the feedback page as text
    cells: dict = None      # test cell grade_id -> Cell
    hidden: str = ""        # what the hidden tests found, as the instructor's report has it

    @property
    def misconceptions(self):
        return set(MISCONCEPTION.findall(self.feedback))


@dataclass
class Cell:
    """One test cell of an autograded submission: its points, and what it showed (printed
    text and error messages, as the autograded notebook holds them)."""
    score: float
    max_score: float
    shown: str


def nbgrader(args, cwd, check=True):
    """nbgrader's own command, as an instructor runs it in the course root (plain nbgrader,
    for the tests that contrast it with `autograd-lab grade`)."""
    bin_dir = Path(sys.executable).parent       # nbgrader runs `alembic` from PATH
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([str(bin_dir / "nbgrader"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True)
    if check and proc.returncode:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def grade_class(lesson, notebooks, workdir):
    """Grade ``{student: notebook}`` for one lesson as the instructor does (`autograd-lab grade`,
    then its feedback pages, hand-graded answers left as not graded yet); ``{student: Graded}``."""
    from autograd_lab_grader.steps import feedback, grade
    from autograd_lab_grader.course import Course

    root = Path(workdir)
    shutil.copy(ROOT / "nbgrader_config.py", root)
    shutil.copytree(ROOT / "solutions" / lesson, root / "solutions" / lesson)
    course = Course(root)
    made = course.api().generate_assignment(lesson)
    if not made["success"]:
        raise RuntimeError(f"releasing {lesson} failed:\n{made.get('log', '')}")
    for student, nb in notebooks.items():
        folder = course.submission(lesson, student)
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{lesson}.ipynb")
    rows = {row.student: row for row in grade.grade(course, lesson, grade.Options())}
    feedback.feedback(course, lesson, partial=True)
    results = {}
    with course.gradebook() as gb:
        for student in notebooks:
            if rows[student].status not in ("graded", "needs manual grading"):
                raise RuntimeError(f"{student} was not graded: {rows[student]}")
            sub = gb.find_submission(lesson, student)
            page = course.directory("feedback") / student / lesson / f"{lesson}.html"
            text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text())) if page.exists() else ""
            graded = nbformat.read(course.directory("autograded") / student / lesson
                                   / f"{lesson}.ipynb", as_version=4)
            cells = {}
            for cell in graded.cells:
                meta = cell.metadata.get("nbgrader", {})
                if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                    found = gb.find_grade(meta["grade_id"], lesson, lesson, student)
                    cells[meta["grade_id"]] = Cell(found.score, found.max_score,
                                                   shown(cell.outputs))
            results[student] = Graded(sub.code_score, sub.max_code_score, text, cells,
                                      rows[student].hidden)
    return results


def test_cell_of(lesson, answer):
    """The grade_id of the test cell that checks the answer cell ``answer``: the first test
    cell after it."""
    cells = nbformat.read(solution_path(lesson), as_version=4).cells
    at = next(i for i, c in enumerate(cells) if grade_id(c) == answer)
    return next(grade_id(c) for c in cells[at + 1:] if c.cell_type == "code"
                and c.metadata.get("nbgrader", {}).get("grade")
                and not c.metadata.get("nbgrader", {}).get("solution"))


def shown(outputs):
    """What a cell's outputs show a learner: printed text, error names and messages."""
    return "\n".join(o.get("text", "") if o.output_type == "stream"
                     else f"{o.ename}: {o.evalue}" if o.output_type == "error"
                     else "\n".join(str(v) for k, v in o.get("data", {}).items()
                                    if k.startswith("text/"))
                     for o in outputs)


def edited(code, *changes):
    """``code`` with each ``(old, new)`` of ``changes`` made, for a wrong answer that is the
    solution with one slip; an ``old`` the code no longer holds is an error, not a silent no-op."""
    for old, new in changes:
        if old not in code:
            raise ValueError(f"the answer holds no {old!r}")
        code = code.replace(old, new)
    return code


@dataclass
class Wrong:
    """A wrong answer learners really give: the answer cells it changes, and what the feedback
    must then say (a misconception id, or a phrase for an answer of the wrong kind).
    ``predicted``: a well-formed wrong prediction, which keeps its points (it was committed)
    and is named in the feedback all the same. ``hidden_only``: right on every visible case and
    wrong on the hidden ones (a shortcut, numbers written in for the visible cases): it loses
    the exercise's points, and its page says a hidden test failed and shows none of what that
    test tried, expected or found."""
    name: str
    answers: dict
    misconception: str = None
    says: str = None
    predicted: bool = False
    hidden_only: bool = False


@dataclass
class Predicted:
    """A prediction of a lesson (its answer cell), with an answer of the wrong kind for it, as
    a learner who has not predicted writes one, and the texts of the right answer that such a
    learner must not be shown."""
    cell: str
    malformed: str
    answer: tuple


PARITY_TAG = "torch-parity"
