"""A class for the tests of grading on a cluster (Slurm, Kubernetes, claims): the fixture lesson
(tests/support/gradingcourse.py) with right and wrong answers, a kernel that dies, and a roster
learner who hands nothing in; what grading decided, without times, to compare two gradings
of it; and the processes a grader leaves behind."""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import gradingcourse as gc
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.steps import export
from autograd_lab_grader.course import Course

SQUARE_6 = "def square(x):\n    return 2 * x"
SLOPE_3 = "def slope(x):\n    return x"
# student -> answers ({grade_id: code}); the others' answers are right
# (ada, whose kernel dies, comes first: graded before anything else, failed)
CLASS = {
    "ada": {"answer_square": "import os\nos._exit(1)"},
    "ann": {}, "ben": {"answer_square": SQUARE_6}, "cat": {"answer_slope": SLOPE_3},
    "dan": {}, "fay": {}, "gus": {"answer_square": SQUARE_6, "answer_slope": SLOPE_3},
    "hal": {}, "ivy": {"answer_slope": SLOPE_3}, "jon": {},
}
SCORES = {"ada": None, "ann": 5, "ben": 3, "cat": 2, "dan": 5, "fay": 5, "gus": 0, "hal": 5,
          "ivy": 2, "jon": 5}
ROSTER_ONLY = "kim"          # on the roster, hands nothing in: missing


def make(root: Path, db_url: str | None = None, students=CLASS, slow: float = 0) -> Course:
    """The course, released (against db_url's gradebook), with the class handed in; `slow`
    seconds of sleep at the top of every answer."""
    gc.make_course(root, timeout=5, db_url=db_url)
    for student in students:
        answers = dict(CLASS.get(student, {}))
        if slow:
            for grade_id, code in {**gc.SOLUTIONS, **answers}.items():
                code = answers.get(grade_id) or code.replace("    ### BEGIN SOLUTION\n", "") \
                    .replace("\n    ### END SOLUTION", "")
                answers[grade_id] = f"import time\ntime.sleep({slow})\n{code}"
        gc.submit(root, student, answers)
    course = Course(root, db_url)
    with course.gradebook() as gb:
        gb.add_student(ROSTER_ONLY)
    return course


def environ() -> dict[str, str]:
    """What a grader's process needs: this checkout first on the import path, the venv's
    programs (alembic, autograd-lab) on PATH."""
    root = str(Path(__file__).resolve().parents[2])
    bin_dir = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
                    [root, *filter(None, [os.environ.get("PYTHONPATH")])]),
                PATH=path if path.split(os.pathsep)[0] == bin_dir else f"{bin_dir}:{path}",
                COLUMNS="200")


def grade_here(course: Course, *args: str) -> subprocess.CompletedProcess:
    """`autograd-lab grade` of the whole class on this machine (the one-machine grade)."""
    return subprocess.run([sys.executable, "-m", "autograd_lab_grader", "-C", str(course.root),
                           *(["--db-url", course.db_url] if course.db_url else []),
                           "grade", gc.LESSON, *args],
                          capture_output=True, text=True, env=environ(), timeout=600)


def decided(course: Course, out: Path) -> dict:
    """Everything grading decided, without times: the status rows, nbgrader's score of every
    cell, and the export's two files (grades.csv, questions.csv), as written."""
    from nbgrader.api import Grade

    statuses = {student: (r.status, r.reason, r.score, r.max_score, r.sandbox)
                for (_, student), r in status.read(course, gc.LESSON).items()}
    with course.gradebook() as gb:
        cells = sorted((g.student.id, g.name, g.auto_score, g.manual_score, g.max_score)
                       for g in gb.db.query(Grade))
    files = {}
    for path in export.export(course, out, [gc.LESSON]):
        with path.open(newline="", encoding="utf-8") as f:
            files[path.name] = list(csv.reader(f))
    return dict(statuses=statuses, cells=cells, **files)


def expected_statuses() -> dict[str, tuple[str, float | None]]:
    found = {s: (status.FAILED if score is None else status.GRADED, score)
             for s, score in SCORES.items()}
    found[ROSTER_ONLY] = (status.MISSING, None)
    return found


def descendants(pid: int) -> set[int]:
    """Every live process below pid (children, their children, ...)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    # (the command name, in parentheses, may hold spaces)
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    """Those of pids still running (a zombie has ended)."""
    running = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    running.add(pid)
        except OSError:
            continue
    return running
