"""What the class misunderstood: per exercise, how many learners passed and how many showed each
named misconception.

A check that fails ends its message with a machine-readable line, ``Misconception [<id>]: ...``
(autograd_lab/checks). The report reads it from the error outputs of each test cell of every
graded submission (autograded/), and the points from the gradebook. A learner counts once per
exercise and misconception.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import status
from .course import Course

MISCONCEPTION = re.compile(r"Misconception \[([a-z0-9-]+)\]")


@dataclass
class Exercise:
    name: str                      # the test cell's grade_id
    passed: int = 0
    failed: int = 0
    learners: dict[str, set[str]] = field(default_factory=dict)   # misconception -> students

    @property
    def misconceptions(self) -> Counter:
        """How many learners showed each misconception."""
        return Counter({m: len(students) for m, students in self.learners.items()})


@dataclass
class Report:
    lesson: str
    learners: int
    exercises: list[Exercise]


def titles() -> dict[str, str]:
    """The misconceptions' titles, when the course has its checks registry."""
    try:
        from autograd_lab.checks import MISCONCEPTIONS
    except ImportError:
        return {}
    return dict(MISCONCEPTIONS)


def _errors(cell) -> str:
    return "\n".join(f"{o.get('evalue', '')}\n" + "\n".join(o.get("traceback", []))
                     for o in cell.get("outputs", []) if o.get("output_type") == "error")


def report(course: Course, lesson: str) -> Report:
    graded = [student for (_, student), row in status.read(course, lesson).items()
              if row["status"] in (status.GRADED, status.MANUAL)]
    exercises: dict[str, Exercise] = {}
    with course.gradebook() as gb:
        notebook = gb.find_assignment(lesson).notebooks[0].name
        for student in sorted(graded):
            path = course.directory("autograded") / student / lesson / f"{notebook}.ipynb"
            nb = nbformat.read(path, as_version=4)
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if not meta.get("grade") or meta.get("solution") or cell.cell_type != "code":
                    continue
                name = meta["grade_id"]
                exercise = exercises.setdefault(name, Exercise(name))
                grade = gb.find_grade(name, notebook, lesson, student)
                if grade.score is not None and grade.score >= grade.max_score:
                    exercise.passed += 1
                else:
                    exercise.failed += 1
                for misconception in MISCONCEPTION.findall(_errors(cell)):
                    exercise.learners.setdefault(misconception, set()).add(student)
    return Report(lesson, len(graded), list(exercises.values()))


def write_figure(result: Report, path: Path) -> Path:
    """A horizontal bar chart: per exercise, learners who passed and per misconception."""
    from matplotlib.figure import Figure     # no pyplot: no GUI backend, Agg renders the PNG

    labels, values, colors = [], [], []
    for exercise in result.exercises:
        labels.append(f"{exercise.name}: passed")
        values.append(exercise.passed)
        colors.append("#4c9a5f")
        for misconception, n in exercise.misconceptions.most_common():
            labels.append(f"    [{misconception}]")
            values.append(n)
            colors.append("#c8553d")
    figure = Figure(figsize=(8, 0.4 * len(labels) + 1.2), layout="constrained")
    axes = figure.add_subplot()
    bars = axes.barh(range(len(labels)), values, color=colors)
    axes.bar_label(bars, padding=3)
    axes.set_yticks(range(len(labels)), labels)
    axes.invert_yaxis()
    axes.set_xlabel("learners")
    axes.set_xlim(0, max(result.learners, 1) * 1.1)
    axes.set_title(f"{result.lesson}: {result.learners} learners graded")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=150)
    return path
