"""What the class misunderstood, for a slide: per exercise, the share of the learners who handed
in that passed it, that showed each named misconception, that got it wrong otherwise, that left
it as released ("not attempted"), and whose submission could not be graded; per prediction, the share who
predicted right, who predicted wrong showing each misconception, and who did not predict.

A check that fails ends its message with a machine-readable line, ``Misconception [<id>]: ...``
(autograd_lab/checks). A prediction is graded for commitment: its check passes for any
well-formed prediction and *prints* ``Prediction [right]`` or ``Prediction [wrong]``, with a
``Misconception [<id>]`` line for what a wrong one shows. The report reads both from the
outputs of each test cell of every graded submission (autograded/): misconceptions of
exercises from their error outputs, of predictions from what their check printed. The points
come from the gradebook, and who handed in from the outcomes (the roster included). Each
learner is counted once per exercise, in one category (the first misconception their check
named), so an exercise's shares add up to 100%. Wrong predictions are the purest signal of a
misconception (nothing was at stake but the learner's own expectation): ``Report.by_misconception``
counts them per misconception next to the exercises that showed it. Misconceptions are shown
by a human name (the opening of the course's own explanation of it), never by their id alone.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..gradebook import status
from ..gradebook.outcome import outcomes
from ..reading import outputs
from ..course import Course

MISCONCEPTION = re.compile(r"Misconception \[([a-z0-9-]+)\]")
PREDICTION = re.compile(r"^Prediction \[(right|wrong)\]", re.M)
PREDICTION_TAG = "prediction"           # the tag of a prediction's answer cell
_STUB = re.compile(r"raise NotImplementedError|YOUR (CODE|ANSWER) HERE")


@dataclass
class Exercise:
    name: str                      # the test cell's grade_id
    passed: int = 0
    failed: int = 0                # graded, not passed (not attempted included)
    untouched: int = 0             # its answer cell still as released ("not attempted")
    learners: dict[str, set[str]] = field(default_factory=dict)   # misconception -> students
    first: Counter = field(default_factory=Counter)                 # misconception -> learners
                                                                   # for whom it came first
    prediction: bool = False       # a prediction: passed for commitment, right or wrong
    predicted_right: int = 0
    predicted: dict[str, set[str]] = field(default_factory=dict)  # misconception -> students
                                                                   # who predicted wrong showing it
    predicted_first: Counter = field(default_factory=Counter)
    predicted_wrong: int = 0       # every wrong prediction, a misconception named or not

    @property
    def misconceptions(self) -> Counter:
        """How many learners showed each misconception."""
        return Counter({m: len(students) for m, students in self.learners.items()})

    @property
    def other_wrong(self) -> int:
        return self.failed - self.untouched - sum(self.first.values())

    @property
    def predicted_wrong_other(self) -> int:
        """Wrong predictions that named no misconception."""
        return self.predicted_wrong - sum(self.predicted_first.values())

    @property
    def title(self) -> str:
        return re.sub(r"^test[_ ]", "", self.name).replace("_", " ")


@dataclass
class Question:
    """How the graded learners scored on one question (an nbgrader graded cell), hand-graded
    ones included: each score given and how many got it, and how many wait for a hand grade."""
    name: str
    max_score: float
    by_hand: bool = False          # a written answer (graded by a person)
    scores: Counter = field(default_factory=Counter)    # score -> learners
    waiting: int = 0

    @property
    def graded(self) -> int:
        return sum(self.scores.values())

    @property
    def mean(self) -> float | None:
        return sum(s * n for s, n in self.scores.items()) / self.graded if self.graded else None

    def distribution(self) -> str:
        """``0: 3 · 1: 12``, lowest score first."""
        return " · ".join(f"{s:g}: {n}" for s, n in sorted(self.scores.items()))


@dataclass
class Report:
    lesson: str
    learners: int                  # graded (including those waiting for a hand grade)
    exercises: list[Exercise]
    could_not_grade: int = 0       # handed in, failed before or during grading
    missing: int = 0
    waiting: int = 0               # handed in, not graded yet
    forgeries: list[str] = field(default_factory=list)  # flagged: tried to forge a grade
    questions: list[Question] = field(default_factory=list)   # every graded cell's scores

    @property
    def handed_in(self) -> int:
        return self.learners + self.could_not_grade + self.waiting

    def share(self, n: int) -> float:
        return 100.0 * n / self.handed_in if self.handed_in else 0.0

    def by_misconception(self) -> dict[str, tuple[int, int]]:
        """misconception -> (learners who showed it in an exercise, learners whose wrong
        prediction showed it), each learner counted once per misconception."""
        shown: dict[str, tuple[set, set]] = {}
        for exercise in self.exercises:
            for misconception, students in exercise.learners.items():
                shown.setdefault(misconception, (set(), set()))[0].update(students)
            for misconception, students in exercise.predicted.items():
                shown.setdefault(misconception, (set(), set()))[1].update(students)
        return {m: (len(a), len(b)) for m, (a, b) in
                sorted(shown.items(), key=lambda item: -len(item[1][0] | item[1][1]))}


def titles() -> dict[str, str]:
    """The misconceptions' explanations, when the course has its checks registry."""
    try:
        from autograd_lab.checks import MISCONCEPTIONS
    except ImportError:
        return {}
    return dict(MISCONCEPTIONS)


def human_name(misconception: str, explanations: dict[str, str] | None = None,
               width: int = 60) -> str:
    """A misconception as a person reads it: the first clause of the course's explanation,
    cut at a word near `width`; the id in words where the course has none."""
    text = (explanations if explanations is not None else titles()).get(misconception)
    if not text:
        words = misconception.replace("-", " ")
        return words[:1].upper() + words[1:]
    first = re.split(r"(?<=[.!?;:])\s", text.replace("`", ""), maxsplit=1)[0].rstrip(".;:")
    if len(first) > width:
        first = first[:width].rsplit(" ", 1)[0] + "…"
    return first


def _errors(cell) -> str:
    return "\n".join(f"{o.evalue}\n" + "\n".join(o.traceback)
                     for o in outputs.of_cell(cell) if o.is_error())


def _printed(cell) -> str:
    """What a judged test cell printed (a prediction's verdict)."""
    return "".join(o.text for o in outputs.of_cell(cell)
                   if o.kind == "stream" and o.name == "stdout")


def report(course: Course, lesson: str) -> Report:
    found = outcomes(course, [lesson])
    graded = sorted(o.student for o in found if o.status in (status.GRADED, status.MANUAL))
    result = Report(lesson, len(graded), [],
                    could_not_grade=sum(o.status == status.FAILED for o in found),
                    missing=sum(o.status == status.MISSING for o in found),
                    waiting=sum(o.status == status.UNGRADED for o in found),
                    forgeries=sorted(o.student for o in found if o.forgery))
    exercises: dict[str, Exercise] = {}
    with course.gradebook() as gb:
        notebook = gb.find_assignment(lesson).notebooks[0].name
        for student in graded:
            path = course.directory("autograded") / student / lesson / f"{notebook}.ipynb"
            nb = nbformat.read(path, as_version=4)
            answers = []          # the answer cells since the last test cell
            tagged = False        # one of them is a prediction's
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if meta.get("solution") and cell.cell_type == "code":
                    answers.append(cell.source)
                    tagged = tagged or PREDICTION_TAG in cell.metadata.get("tags", [])
                if not meta.get("grade") or meta.get("solution") or cell.cell_type != "code":
                    continue
                name = meta["grade_id"]
                exercise = exercises.setdefault(name, Exercise(name))
                grade = gb.find_grade(name, notebook, lesson, student)
                shown = MISCONCEPTION.findall(_errors(cell))
                for misconception in shown:
                    exercise.learners.setdefault(misconception, set()).add(student)
                printed = _printed(cell)
                verdict = PREDICTION.search(printed)
                exercise.prediction = exercise.prediction or tagged or verdict is not None
                if grade.score is not None and grade.score >= grade.max_score:
                    exercise.passed += 1
                    if verdict is not None and verdict[1] == "right":
                        exercise.predicted_right += 1
                    elif verdict is not None:
                        exercise.predicted_wrong += 1
                        named = MISCONCEPTION.findall(printed[verdict.start():])
                        for misconception in named:
                            exercise.predicted.setdefault(misconception, set()).add(student)
                        if named:
                            exercise.predicted_first[named[0]] += 1
                else:
                    exercise.failed += 1
                    if answers and all(_STUB.search(a) for a in answers):
                        exercise.untouched += 1
                    elif shown:
                        exercise.first[shown[0]] += 1
                answers, tagged = [], False
    result.exercises = list(exercises.values())
    result.questions = questions(course, lesson, found)
    return result


def questions(course: Course, lesson: str, found=None) -> list[Question]:
    """The score distribution of every question of `lesson` (the outcomes: hand grades
    count as soon as they are in nbgrader's gradebook), in the lesson's order."""
    from .written import hand_graded

    by_hand = {name for _, name, _ in hand_graded(course, lesson)}
    with course.gradebook() as gb:
        cells = [(c.name, c.max_score) for nb in gb.find_assignment(lesson).notebooks
                 for c in nb.grade_cells]
    order = {}
    release = course.directory("release") / lesson / f"{lesson}.ipynb"
    if release.is_file():
        for i, cell in enumerate(nbformat.read(release, as_version=4).cells):
            order.setdefault(cell.metadata.get("nbgrader", {}).get("grade_id"), i)
    result = {name: Question(name, most, name in by_hand)
              for name, most in sorted(cells, key=lambda c: order.get(c[0], len(order)))}
    for out in found if found is not None else outcomes(course, [lesson]):
        if out.status not in (status.GRADED, status.MANUAL):
            continue
        for row in out.questions:
            question = result.get(row.question)
            if question is None:
                continue
            if row.status == status.MANUAL:
                question.waiting += 1
            elif row.score is not None:
                question.scores[float(row.score)] += 1
    return list(result.values())


def question_table(result: Report):
    """The questions' score distributions as a table for the terminal (rich)."""
    from rich.table import Table

    table = Table(title=f"{result.lesson}: scores per question (hand grades included)")
    for column in ("question", "points", "graded by", "graded", "scores: learners", "mean",
                   "waiting for a hand grade"):
        table.add_column(column)
    for q in result.questions:
        table.add_row(q.name, f"{q.max_score:g}", "hand" if q.by_hand else "autograder",
                      str(q.graded), q.distribution(),
                      "" if q.mean is None else f"{q.mean:.2f}", str(q.waiting))
    return table


_COLORS = {"passed": "#3a7d44", "predicted right": "#7fb77e", "other wrong answer": "#b0413e",
           "predicted wrong": "#d98c8a", "no prediction of the kind asked": "#9c6b98",
           "not attempted": "#c9c9c9", "could not be graded": "#5b5b5b"}
_MISCONCEPTION_COLORS = ["#e07a1f", "#f2b134", "#b5651d", "#d95d39", "#f4d35e", "#8c4f2b",
                         "#ee964b", "#c06014"]


PREDICTED_WRONG = "predicted wrong, showing "


def segments(result: Report, explanations: dict[str, str] | None = None):
    """Per exercise, [(category, learners)] in the order they are drawn; every learner who
    handed in is in one category. A prediction's learners who passed are split into those who
    predicted right and those who predicted wrong (``predicted wrong, showing <misconception>``,
    or ``predicted wrong`` where no misconception was named); its failures are learners with no
    prediction of the kind asked for."""
    explanations = titles() if explanations is None else explanations
    rows = []
    for exercise in result.exercises:
        if exercise.prediction:
            unjudged = exercise.passed - exercise.predicted_right - exercise.predicted_wrong
            parts = [("predicted right", exercise.predicted_right)]
            parts += [(PREDICTED_WRONG + human_name(m, explanations), n)
                      for m, n in exercise.predicted_first.most_common()]
            parts += [("predicted wrong", exercise.predicted_wrong_other),
                      ("passed", unjudged)]       # (a check that printed no verdict)
            parts += [(human_name(m, explanations), n) for m, n in exercise.first.most_common()]
            parts += [("no prediction of the kind asked", exercise.other_wrong)]
        else:
            parts = [("passed", exercise.passed)]
            parts += [(human_name(m, explanations), n) for m, n in exercise.first.most_common()]
            parts += [("other wrong answer", exercise.other_wrong)]
        parts += [("not attempted", exercise.untouched),
                  ("could not be graded", result.could_not_grade + result.waiting)]
        rows.append((exercise, [(c, n) for c, n in parts if n]))
    return rows


def write_figure(result: Report, path: Path, explanations: dict[str, str] | None = None) -> Path:
    """One stacked bar per exercise, 0-100% of the learners who handed in: passed, each
    misconception by its human name, other wrong answers, not attempted, could not be graded;
    a prediction's bar: predicted right, predicted wrong showing each misconception (in the
    misconception's colour, hatched), no prediction."""
    from matplotlib.figure import Figure     # no pyplot: no GUI backend, Agg renders the PNG

    rows = segments(result, explanations)
    names = [c for _, parts in rows for c, _ in parts]
    categories = [c for c in dict.fromkeys(names) if c not in _COLORS]
    misconceptions = list(dict.fromkeys(c.removeprefix(PREDICTED_WRONG) for c in categories))
    colors = dict(_COLORS)
    colors.update({c: _MISCONCEPTION_COLORS[misconceptions.index(c.removeprefix(PREDICTED_WRONG))
                                            % len(_MISCONCEPTION_COLORS)] for c in categories})
    shown = result.by_misconception()
    figure = Figure(figsize=(11, 1.0 * max(len(rows), 1) + 2.6 + 0.6 * len(shown)),
                    layout="constrained")
    if shown:
        axes, summary = figure.subplots(2, 1, height_ratios=[max(len(rows), 1),
                                                              max(0.6 * len(shown), 1.2)])
    else:
        axes, summary = figure.add_subplot(), None
    drawn = set()
    for y, (_exercise, parts) in enumerate(rows):
        left = 0.0
        for category, n in parts:
            width = result.share(n)
            bar = axes.barh(y, width, left=left, color=colors[category], edgecolor="white",
                            hatch="//" if category.startswith(PREDICTED_WRONG) else None,
                            label=category if category not in drawn else None)
            drawn.add(category)
            if width >= 7:
                axes.bar_label(bar, labels=[f"{width:.0f}%"], label_type="center", fontsize=11,
                               color="black" if category == "not attempted" else "white")
            left += width
    axes.set_yticks(range(len(rows)), [e.title for e, _ in rows], fontsize=12)
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("% of the learners who handed in", fontsize=11)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    title = f"{result.lesson}: {result.handed_in} handed in"
    if result.could_not_grade or result.waiting:
        title += f" ({result.could_not_grade + result.waiting} could not be graded)"
    if result.missing:
        title += f", {result.missing} did not hand in"
    if result.forgeries:
        title += f", {len(result.forgeries)} flagged for forging a grade"
    axes.set_title(title, fontsize=14, loc="left")
    order = ["passed", "predicted right", *misconceptions,
             *(PREDICTED_WRONG + m for m in misconceptions), "other wrong answer",
             "predicted wrong", "no prediction of the kind asked", "not attempted",
             "could not be graded"]
    handles, labels = axes.get_legend_handles_labels()
    ranked = sorted(zip(handles, labels), key=lambda hl: order.index(hl[1]))
    if ranked:
        long = max(len(l) for _, l in ranked) > 55       # a wrong prediction's, say
        figure.legend([h for h, _ in ranked], [l for _, l in ranked], loc="outside lower center",
                      ncols=1 if long else 2, fontsize=11, frameon=False)
    if summary is not None:
        _misconception_panel(summary, result, shown, explanations, colors)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=150)
    return path


def _misconception_panel(axes, result: Report, shown, explanations, colors):
    """Per misconception, the share of the learners who showed it in an exercise and the share
    whose wrong prediction showed it, side by side, in the colour the bars above give it."""
    names = [human_name(m, explanations, width=45) for m in shown]
    for y, (m, (in_exercises, in_predictions)) in enumerate(shown.items()):
        color = colors.get(human_name(m, explanations),
                           _MISCONCEPTION_COLORS[y % len(_MISCONCEPTION_COLORS)])
        for offset, n, hatch in ((-0.2, in_exercises, None), (0.2, in_predictions, "//")):
            bar = axes.barh(y + offset, result.share(n), height=0.38, color=color,
                            edgecolor="white", hatch=hatch)
            if n:
                axes.bar_label(bar, labels=[f"{result.share(n):.0f}%"], padding=3, fontsize=9)
    axes.set_yticks(range(len(names)), names, fontsize=10)
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("% of the learners who handed in who showed it: in an exercise (solid), "
                    "in a wrong prediction (hatched)", fontsize=10)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
