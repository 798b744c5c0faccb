"""How long a lesson takes a learner, estimated from its notebook by a stated method.

    .venv/bin/python scripts/lesson_time.py [LESSON ...]     (default: every lesson)
    .venv/bin/python scripts/lesson_time.py --write          (then scripts/release.py)

prints, per lesson, the minutes each kind of work takes and the total, rounded up to 5 minutes.
``--write`` puts them where they are stated: each lesson's header line (solutions/<L>/<L>.py)
the lesson tables' rows (STATED_ROWS: README.md and the learners' lessons page) and the
detailed time table (TIME_TABLE, the maintainers' guide); tests/course/test_lesson_times.py checks
that they are what this computes. The method, and why each rate, is in TIME_TABLE's page
("How long a lesson takes"):

- reading: the words of every text cell the learner reads, at READING_WPM words a minute
  (LaTeX commands and markdown markup are not words; the symbols they stand for are);
- code: the code the learner reads (in a code cell, or a code block of a text cell), counted in
  standard words of CHARS_PER_WORD characters (leading spaces left out) and read at
  CODE_WPM; a line shown before (the same characters) is recognised, not read again. Plus
  RUN_MINUTES for each code cell but the answer and test cells (run it, look at what it
  printed or drew; running an answer and its test is part of the minutes below), and but the
  install cell (tagged course-install), which only installs the engine where it is missing;
- a prediction (an answer cell tagged `prediction`): PREDICTION_MINUTES plus
  PREDICTION_MINUTES_PER_VALUE for each value predicted (each name the answer assigns; a
  dictionary counts its entries);
- a written explanation (a manually graded text cell): EXPLANATION_MINUTES, the cell after it
  that shows the model answer once the learner has written theirs included;
- an exercise (any other answer cell): EXERCISE_MINUTES plus EXERCISE_MINUTES_PER_LINE for each
  line of the solution the learner has to write: not blank, not a comment, and not already in
  the code shown above it (a line copied from the lesson is quick); an exercise tagged
  ALGORITHM_TAG (a loop the learner designs over a graph or over backward calls, whose slips
  compound) ALGORITHM_MINUTES more, calibrated on learners' timings.
"""
import ast
import math
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parent.parent

READING_WPM = 150
CHARS_PER_WORD = 6
CODE_WPM = READING_WPM / 2
RUN_MINUTES = 0.25
PREDICTION_MINUTES = 1
PREDICTION_MINUTES_PER_VALUE = 1
EXPLANATION_MINUTES = 4
EXERCISE_MINUTES = 4
EXERCISE_MINUTES_PER_LINE = 1
# a second and third slip, and tracing them through a graph: what a learner's timings of the two
# such exercises measured beyond the rest of the method (docs/maintainers/lessons.md)
ALGORITHM_MINUTES = 15
ALGORITHM_TAG = "algorithm"
LIMIT = 45
REVEAL = "from autograd_lab.checks.written import reveal"
PREDICTION_TAG = "prediction"
INSTALL_TAG = "course-install"

_SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)
_HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n.*?### END HIDDEN TESTS\n?", re.S)
_LATEX_COMMAND = re.compile(r"\\[a-zA-Z]+")
_MARKUP = re.compile(r"[`*#|$_{}\\^]|\]\([^)]*\)|^\s*[-=:|]+\s*$", re.M)


def lessons(root=ROOT):
    return sorted(p.name for p in (root / "solutions").iterdir() if (p / f"{p.name}.py").exists())


_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def words(markdown):
    """The words a reader reads in a markdown cell, its code blocks left out (they are code):
    link targets, markup and LaTeX command names dropped (\\partial L / \\partial y reads
    as "∂L/∂y": the letters are kept)."""
    text = _MARKUP.sub(" ", _LATEX_COMMAND.sub(" ", _FENCE.sub(" ", markdown)))
    return len([w for w in text.split() if any(ch.isalnum() for ch in w)])


def code_words(code, seen):
    """Standard words of code to read: its characters, leading spaces and blank lines left out,
    over CHARS_PER_WORD, but for the lines in ``seen`` (stripped lines shown before), to which
    the lines of ``code`` are then added."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    count = sum(len(line) for line in lines if line not in seen) / CHARS_PER_WORD
    seen.update(lines)
    return count


def written_lines(solution, given):
    """The lines of a solution a learner writes: not blank, not comments, not in ``given``
    (the stripped lines of the code cells above it)."""
    return [line for line in solution.splitlines()
            if line.strip() and not line.strip().startswith("#") and line.strip() not in given]


def predicted_values(solution):
    """How many values a prediction holds: one per name it assigns, a dict's entries each."""
    count = 0
    for node in ast.parse(solution).body:
        if isinstance(node, ast.Assign):
            count += len(node.value.keys) if isinstance(node.value, ast.Dict) else len(node.targets)
    return count


@dataclass
class Estimate:
    lesson: str
    reading_words: int = 0
    code_words: float = 0
    cells_run: int = 0
    predicted: tuple = ()            # values predicted, per prediction
    explanations: int = 0
    exercise_lines: tuple = ()       # lines to write, per exercise
    algorithms: int = 0              # exercises tagged ALGORITHM_TAG

    @property
    def minutes(self):
        """{kind of work: minutes}"""
        return {
            "reading": self.reading_words / READING_WPM,
            "code": self.code_words / CODE_WPM + self.cells_run * RUN_MINUTES,
            "predictions": sum(PREDICTION_MINUTES + n * PREDICTION_MINUTES_PER_VALUE
                               for n in self.predicted),
            "explanations": self.explanations * EXPLANATION_MINUTES,
            "exercises": sum(EXERCISE_MINUTES + n * EXERCISE_MINUTES_PER_LINE
                             for n in self.exercise_lines)
            + self.algorithms * ALGORITHM_MINUTES,
        }

    @property
    def total(self):
        return sum(self.minutes.values())

    @property
    def stated(self):
        """The total rounded up to 5 minutes: what the lesson's header says."""
        return 5 * math.ceil(self.total / 5 - 1e-9)


def estimate(lesson, root=ROOT):
    nb = jupytext.read(root / "solutions" / lesson / f"{lesson}.py")
    est = Estimate(lesson)
    predicted, exercises, given = [], [], set()
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown":
            if meta.get("solution"):
                est.explanations += 1
            else:
                # the time line itself is not counted: what it says must not change it
                est.reading_words += words(HEADER.sub("", cell.source))
                for block in _FENCE.findall(cell.source):
                    est.code_words += code_words(block, given)
            continue
        if meta.get("grade"):                        # a test cell: part of its answer's minutes
            continue
        if REVEAL in cell.source:       # a written answer's model answer: part of its minutes
            continue
        if INSTALL_TAG in cell.metadata.get("tags", []):     # installs the engine in Colab:
            continue                                         # no part of the lesson
        if meta.get("solution"):                     # an answer cell
            solution = "".join(_SOLUTION.findall(cell.source))
            if PREDICTION_TAG in cell.metadata.get("tags", []):
                predicted.append(predicted_values(textwrap.dedent(solution)))
            else:
                exercises.append(len(written_lines(solution, given)))
                est.algorithms += ALGORITHM_TAG in cell.metadata.get("tags", [])
            code = _SOLUTION.sub("", cell.source)        # what the released cell shows
        else:
            code = cell.source
            est.cells_run += 1
        est.code_words += code_words(code, given)
        given |= {line.strip() for line in cell.source.splitlines()}
    est.predicted, est.exercise_lines = tuple(predicted), tuple(exercises)
    return est


def table(estimates):
    head = ("lesson", "reading", "code", "predictions", "explanations", "exercises", "total",
            "stated")
    rows = [head]
    for est in estimates:
        m = est.minutes
        rows.append((est.lesson, *(f"{m[k]:.1f}" for k in head[1:6]), f"{est.total:.1f}",
                     str(est.stated)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))) for r in rows)


HEADER = re.compile(r"^(?:# )?\*\*Time:\*\* .*?(?= \*\*You will be able to:\*\*$)", re.M)
# the files whose lesson tables state each lesson's time (`| `NN_name` | NN min | ...`), and the
# page that holds the detailed table between the markers below (and the method)
STATED_ROWS = ("README.md", "docs/learners/lessons.md")
TIME_TABLE = "docs/maintainers/lessons.md"
README_ROW = re.compile(r"^\| `(\d\d_\w+)` \| [^|]* \|", re.M)
README_TABLE = re.compile(r"(<!-- lesson times: scripts/lesson_time.py --write -->\n)(?:.*?\n)?"
                          r"(<!-- end of lesson times -->)", re.S)


def header(est):
    """The header line of a lesson, as its .py twin writes it (without the learning goals)."""
    m = est.minutes
    return (f"# **Time:** about {est.stated} minutes: {round(m['reading'] + m['code'])} reading and "
            f"running the code, {round(m['predictions'] + m['explanations'])} predicting and "
            f"explaining, {round(m['exercises'])} on exercises.")


def readme_table(estimates):
    rows = ["| lesson | reading | code | predictions | written answers | exercises | total | "
            "stated |", "|---|---|---|---|---|---|---|---|"]
    for est in estimates:
        m = est.minutes
        rows.append(f"| `{est.lesson}` | " + " | ".join(
            f"{m[k]:.1f}" for k in ("reading", "code", "predictions", "explanations",
                                    "exercises")) + f" | {est.total:.1f} | {est.stated} |")
    return "\n".join(rows)


def stated_texts(estimates, root=ROOT):
    """{path: its text with the estimates written in}: the lesson headers, the lesson tables'
    rows (STATED_ROWS) and the detailed table (TIME_TABLE)."""
    texts = {}
    for est in estimates:
        path = root / "solutions" / est.lesson / f"{est.lesson}.py"
        text = path.read_text()
        if len(HEADER.findall(text)) != 1:
            raise ValueError(f"{path}: no single '**Time:** ...' header line")
        # re.sub calls the lambda before the loop moves on: `est` is this iteration's
        texts[path] = HEADER.sub(lambda m: header(est), text)  # noqa: B023
    by_lesson = {est.lesson: est for est in estimates}
    for name in STATED_ROWS:
        path = root / name
        text = path.read_text()
        if not README_ROW.search(text):
            raise ValueError(f"{name} has no lesson table (| `NN_name` | NN min | ...)")
        texts[path] = README_ROW.sub(lambda m: (f"| `{m[1]}` | {by_lesson[m[1]].stated} min |"
                                                if m[1] in by_lesson else m[0]), text)
    path = root / TIME_TABLE
    text = texts.get(path, path.read_text())
    if not README_TABLE.search(text):
        raise ValueError(f"{TIME_TABLE} has no lesson-times table markers")
    texts[path] = README_TABLE.sub(lambda m: m[1] + readme_table(estimates) + "\n" + m[2],
                                   text)
    return texts


if __name__ == "__main__":
    write = "--write" in sys.argv
    names = [a for a in sys.argv[1:] if a != "--write"]
    found = [estimate(lesson) for lesson in (names or lessons())]
    print(table(found))
    over = [e.lesson for e in found if e.total > LIMIT]
    if over:
        print(f"over {LIMIT} minutes: {', '.join(over)}")
    if write:
        if names:
            sys.exit("--write writes every lesson: name none")
        for path, text in stated_texts(found).items():
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
