"""Every "lesson NN" the course says is right: read in the lessons (solutions/<L>/<L>.py, text
and code), the guides (README, docs/) and the checks' messages (autograd_lab/checks/), each
reference to a lesson by number names a lesson there is, and says of it what it teaches. And
every count of the lessons ("thirteen lessons", "12 notebooks") is the count there is.

What a reference says of its lesson is checked against that lesson's own text (its cells, less
the sentences that point at other lessons, so that a lesson is not its own evidence for what
it only cites):

- ``Lesson NN · Title`` (a link, a heading): the title is lesson NN's;
- ``lesson NN's `code```: the code is in lesson NN;
- ``NN_name``, a lesson's folder: that lesson exists;
- ``Checks of lesson NN, ...`` in ``lessonNN.py``: the module is that lesson's;
- any other: ``CITED`` below says, for that reference (its file and a quote of it), what
  lesson NN must hold: a phrase of its text, or ``EXAMPLE`` where a lesson only stands as an
  example (a command run on lesson 02, a measurement) and any lesson there is would do.

A reference that none of these covers fails, as does an entry of ``CITED`` that covers none:
moving a topic to another lesson, or renumbering them, makes every reference to it fail until
it is put right.
"""
import re
from dataclasses import dataclass
from pathlib import Path

import jupytext
import pytest

from course import LESSONS, ROOT

NUMBERS = {lesson[:2]: lesson for lesson in LESSONS}
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
GUIDES = [p for p in GUIDES if not {"node_modules", "_build"} & set(p.parts)]
CHECKS = sorted((ROOT / "autograd_lab" / "checks").glob("*.py"))
LESSON_FILES = [ROOT / "solutions" / lesson / f"{lesson}.py" for lesson in LESSONS]

#: a lesson in a reference that stands as an example only: any lesson there is would do
EXAMPLE = object()

#: (file, a quote of the reference: whitespace as one space) -> what the cited lesson holds (a
#: phrase of its own text, for a reference to one lesson; {number: phrase} for several), or
#: EXAMPLE
CITED = {
    # the lessons
    ('solutions/00_start_here/00_start_here.py', 'Lessons 01 to 06.'):
        {'01': 'z = x * y', '02': 'z = x ** 3', '03': 'y.backward(x)', '04': 'Variable', '05': 'z = y**3', '06': 'retain_graph'},
    ('solutions/00_start_here/00_start_here.py', 'Lessons 03, 04 and 07.'):
        {'03': 'blog', '04': 'blog', '07': 'blog'},
    ('solutions/00_start_here/00_start_here.py', 'Lessons 01 and 02 take this apart'):
        {'01': 'grad_fn', '02': 'backward()'},
    ('solutions/00_start_here/00_start_here.py', 'lesson 02 shows what happens otherwise'):
        'added twice',
    ('solutions/00_start_here/00_start_here.py', 'Lesson 01 starts right there'):
        'records a node',
    ('solutions/01_tensors_that_remember/01_tensors_that_remember.py', 'lesson 06 shows why `.detach()`'):
        '.data',
    ('solutions/01_tensors_that_remember/01_tensors_that_remember.py', 'Lesson 02 is all about this step'):
        'z.backward()',
    ('solutions/02_scalar_backward/02_scalar_backward.py', 'autograd notebook (lesson 00)'):
        'autograd notebook',
    ('solutions/02_scalar_backward/02_scalar_backward.py', 'Lesson 05 is about this accumulation'):
        'adds',
    ('solutions/02_scalar_backward/02_scalar_backward.py', 'the warning of lesson 01'):
        'warn',
    ('solutions/02_scalar_backward/02_scalar_backward.py', 'lesson 09 uses it'):
        'gradcheck',
    ('solutions/04_jacobian_rows/04_jacobian_rows.py', 'Lesson 03 ended with backward computing $v^\\top J$'):
        'v^\\top J',
    ('solutions/04_jacobian_rows/04_jacobian_rows.py', 'go backward again (lesson 06)'):
        'retain_graph=True',
    ('solutions/04_jacobian_rows/04_jacobian_rows.py', 'backward *adds* into `.grad` (lesson 05)'):
        'adds',
    ('solutions/04_jacobian_rows/04_jacobian_rows.py', "Lesson 03's last `y`, `y[i] = x[i] * x[i+1]`"):
        'x[i] * x[i+1]',
    ('solutions/04_jacobian_rows/04_jacobian_rows.py', 'lesson 06 keeps a graph for several'):
        'retain_graph=True',
    ('solutions/05_accumulation/05_accumulation.py', 'with weights of one (lesson 03)'):
        'Weights of one',
    ('solutions/05_accumulation/05_accumulation.py', '(lesson 06 says why)'):
        'retain_graph=True',
    ('solutions/05_accumulation/05_accumulation.py', 'lesson 04 zeroed `x.grad` between its one-hot calls'):
        'one-hot',
    ('solutions/05_accumulation/05_accumulation.py', 'out of the graph: lesson 10.'):
        'torch.no_grad()',
    ('solutions/06_retain_graph/06_retain_graph.py', "lesson 05's two-leaf example"):
        'z**3',
    ('solutions/06_retain_graph/06_retain_graph.py', 'the **sum** of both gradients (lesson 05)'):
        'adds',
    ('solutions/06_retain_graph/06_retain_graph.py', "`.data` (lesson 01's table"):
        '.data',
    ('solutions/07_inside_backward/07_inside_backward.py', 'Lesson 08 turns the walk into a loop'):
        'my_backward',
    ('solutions/07_inside_backward/07_inside_backward.py', "Allu's blog post (lesson 04) multiplies a row vector by a matrix"):
        'M',
    ('solutions/07_inside_backward/07_inside_backward.py', 'frees what the nodes saved (lesson 06)'):
        'frees',
    ('solutions/07_inside_backward/07_inside_backward.py', 'keeps the graph for another run: lesson 06'):
        'retain_graph=True',
    ('solutions/08_backward_by_hand/08_backward_by_hand.py', 'Lesson 07 called the nodes by hand'):
        'next_functions',
    ('solutions/08_backward_by_hand/08_backward_by_hand.py', "lesson 07's $z = x \\cdot x + x$"):
        'x * x + x',
    ('solutions/08_backward_by_hand/08_backward_by_hand.py', "(lesson 07's recipe pairs"):
        'next_functions',
    ('solutions/08_backward_by_hand/08_backward_by_hand.py', "(lesson 07's recipe);"):
        'next_functions',
    ('solutions/09_custom_function/09_custom_function.py', "Lesson 07 called the nodes PyTorch's operations record"):
        'next_functions',
    ('solutions/09_custom_function/09_custom_function.py', '`x ** 3` example (lesson 02)'):
        'x ** 3',
    ('solutions/09_custom_function/09_custom_function.py', 'where `PowBackward0` sat in lesson 02'):
        'PowBackward0',
    ('solutions/09_custom_function/09_custom_function.py', "lesson 02's central differences"):
        'central difference',
    ('solutions/09_custom_function/09_custom_function.py', 'one-hot weights, as in lesson 04'):
        'one-hot',
    ('solutions/09_custom_function/09_custom_function.py', "(lesson 04's $J$ turned on its side)"):
        'one-hot',
    ('solutions/10_training_loop/10_training_loop.py', "The loss is lesson 05's mean squared error"):
        'mean squared error',
    ('solutions/10_training_loop/10_training_loop.py', 'lesson 01 explained the `0`'):
        'MulBackward0',
    ('solutions/10_training_loop/10_training_loop.py', 'autograd never sees: lesson 06'):
        '.data',
    ('solutions/10_training_loop/10_training_loop.py', 'the loss swings (lesson 05)'):
        'swing',
    ('solutions/10_training_loop/10_training_loop.py', '(lesson 01: mind *when* `requires_grad` is set)'):
        'is_leaf',
    ('solutions/11_grad_modes/11_grad_modes.py', 'at the moment it runs (lesson 01)'):
        'records a node',
    ('solutions/11_grad_modes/11_grad_modes.py', 'which its backward frees (lesson 06)'):
        'frees',
    ('solutions/11_grad_modes/11_grad_modes.py', "`detach()`'s (lesson 01)"):
        'detach()',
    ('solutions/11_grad_modes/11_grad_modes.py', '(lesson 10 wrote its model as tensors)'):
        'W1',
    ('solutions/12_hooks_and_higher_order/12_hooks_and_higher_order.py', 'Lesson 11 decided whether a graph is recorded at all'):
        'no_grad',
    ('solutions/12_hooks_and_higher_order/12_hooks_and_higher_order.py', '`retain_grad()` (lesson 01)'):
        'retain_grad()',
    ('solutions/12_hooks_and_higher_order/12_hooks_and_higher_order.py', '`torch.autograd.grad` (lesson 06)'):
        'torch.autograd.grad',
    ('solutions/12_hooks_and_higher_order/12_hooks_and_higher_order.py', "(lesson 02's formula, in float64)"):
        'central difference',
    # the guides and the checks: most name a lesson as an example of grading
    ('README.md', 'Lesson 01 in JupyterLab, its backward graph drawn'):
        'viz.draw',
    ('README.md', '(80 a side, lessons 02 and 05)'): EXAMPLE,
    ('docs/instructors/large-class.md', '30 kB for lesson 02'): EXAMPLE,
    ('docs/measurements/grading.md', 'lesson 02, three turns each'): EXAMPLE,
    ('docs/instructors/learners-repo.md', '--lessons 00 01'): EXAMPLE,
    ('docs/instructors/learners-repo.md', '(`--lessons 02`)'): EXAMPLE,
    ('docs/instructors/sandbox.md', 'one grading lesson 02 peaks'): EXAMPLE,
    ('docs/instructors/term.md', 'The examples use lesson 02'): EXAMPLE,
    ('docs/instructors/term.md', '--lessons 00 01'): EXAMPLE,
    ('docs/instructors/term.md', '(`--lessons 02`)'): EXAMPLE,
    ('docs/instructors/term.md', '--moodle ~/Downloads/worksheet.csv --lesson 02'): EXAMPLE,
    ('docs/maintainers/tests.md', "report of lesson 02's class"): EXAMPLE,
    ('docs/maintainers/tests.md', 'lesson 02 handed in with each way'): EXAMPLE,
    ('docs/maintainers/tests.md', 'lesson 02 with a learner whose functions'): EXAMPLE,
    ('docs/maintainers/tests.md', 'Lesson 01 opened from `notebooks/`'): EXAMPLE,
    ('docs/maintainers/tests.md', 'as in a command run on lesson 02'): EXAMPLE,
    ('docs/maintainers/tests.md', 'a small Canvas class of lesson 02'): EXAMPLE,
    ('docs/maintainers/tests.md', 'each saves lesson 02 answered'): EXAMPLE,
    ('docs/maintainers/tests.md', 'grading lesson 02 four times'): EXAMPLE,
    ('docs/maintainers/tests.md', 'on a small class of lesson 02'): EXAMPLE,
    ('docs/maintainers/tests.md', 'Function that lesson 09 teaches'):
        'save_for_backward',
    ('docs/maintainers/lms-formats.md', 'Lesson 02: scalar backward (1234)'): EXAMPLE,
    ('docs/instructors/jupyterhub.md', '--homes autograd-class --lesson 02'): EXAMPLE,
    ('docs/measurements/grading.md', 'a whole notebook of lesson 03'): EXAMPLE,
    ('docs/measurements/grading.md', '500 submissions of lesson 02'): EXAMPLE,
    ('docs/measurements/grading.md', 'forked warm (lessons 02 and 05)'): EXAMPLE,
    ('docs/measurements/index.md', 'Lessons 02, 05 and 10, which imported `matplotlib.pyplot`'):
        {n: 'import matplotlib.pyplot as plt' for n in ('02', '05', '10')},
    ('autograd_lab/checks/__init__.py', 'without a " "word (lesson 06)'):
        '.data',
    ('autograd_lab/checks/graphs.py', '(lesson 07 calls its nodes, lesson 08 writes the whole walk)'):
        {'07': 'next_functions', '08': 'my_backward'},
}

# "lesson 03", "Lessons 01 to 06", "lessons 03, 04 and 07", "lesson 02_scalar_backward"
_NN = r"(?<![\d.])\d\d(?![\d.,]\d)"
REFERENCE = re.compile(rf"\blessons? ({_NN}(?:(?:, | and | or | to ){_NN})*)(_[a-z0-9_]+)?",
                       re.I)
TITLED = re.compile(r"\bLesson (\d\d) · ([^\]\n]+?)(?:\]|$| \(|\.$)", re.M)
POSSESSIVE = re.compile(r"'s `([^`]+)`")
FOLDER = re.compile(r"\b(\d\d)_[a-z][a-z0-9_]*[a-z0-9]\b")
CHECKS_OF = re.compile(r"Checks of lesson (\d\d), ")


def _text(path):
    """The file's text, whitespace made one space; a lesson's cells joined (its markdown
    without the comment marks of the py:percent twin)."""
    if path in LESSON_FILES:
        text = "\n".join(cell.source for cell in jupytext.read(path).cells)
    else:
        text = path.read_text(encoding="utf-8")
    return " ".join(text.split())


def _numbers(listed):
    """'01 to 06' -> 01 ... 06; '03, 04 and 07' -> 03, 04, 07."""
    found = []
    for part in re.split(r", | and | or ", listed):
        if " to " in part:
            low, high = (int(n) for n in part.split(" to "))
            found += [f"{n:02d}" for n in range(low, high + 1)]
        else:
            found.append(part)
    return found


_SENTENCE = re.compile(r"(?<=[.!?:;])\s+|\s+-\s+|\|")


def _own_text(lesson):
    """What lesson ``lesson`` says itself: its text, less every sentence (or table cell, or
    list item) that names another lesson."""
    number = lesson[:2]
    kept = []
    for sentence in _SENTENCE.split(_text(ROOT / "solutions" / lesson / f"{lesson}.py")):
        named = {n for m in REFERENCE.finditer(sentence) for n in _numbers(m[1])}
        named |= {m[1] for m in FOLDER.finditer(sentence)}
        if named <= {number}:
            kept.append(sentence)
    return " ".join(kept)


def _title(lesson):
    heading = jupytext.read(ROOT / "solutions" / lesson / f"{lesson}.py").cells[0].source
    return re.match(r"# Lesson \d\d · (.+)", heading)[1].strip()


@dataclass
class Reference:
    path: Path
    start: int
    end: int
    numbers: list
    text: str           # the reference and what follows it on its line of text

    @property
    def where(self):
        return f"{self.path.relative_to(ROOT)}: ...{self.text}..."


def references(path, text=None):
    """Every reference to a lesson by number in ``path`` (whose text is ``text``)."""
    text = _text(path) if text is None else text
    for m in REFERENCE.finditer(text):
        yield Reference(path, m.start(), m.end(), _numbers(m[1]), text[m.start():m.end() + 60])


def _automatic(ref, text):
    """Why ``ref`` is right on its face, or None: a title, a possessive code span, a folder,
    a checks module's docstring."""
    tail = text[ref.end:]
    if len(ref.numbers) == 1:
        (number,) = ref.numbers
        titled = TITLED.match(text, ref.start)
        if titled and titled[1] == number:
            return "title"
        code = POSSESSIVE.match(tail)
        if code and number in NUMBERS and code[1] in _own_text(NUMBERS[number]):
            return "code"
        if re.match(r"_[a-z]", tail) or text[ref.end - 1] != number[-1]:
            return "folder"         # (checked with every folder named, below)
        if ref.path.name == f"lesson{number}.py" and CHECKS_OF.match(text, ref.start - 10):
            return "module"
    return None


def _covering(table, path, text, start, end):
    """The entries of ``table`` ({(file, quote): ...}) whose quote, somewhere in ``text`` (the
    file ``path``'s), spans ``start`` to ``end``."""
    rel = str(path.relative_to(ROOT))
    found = []
    for (where, quote), value in table.items():
        at = text.find(quote) if where == rel else -1
        while at != -1:
            if at <= start and end <= at + len(quote):
                found.append(((where, quote), value))
                break
            at = text.find(quote, at + 1)
    return found


ALL_FILES = [*LESSON_FILES, *GUIDES, *CHECKS]


def test_every_lesson_named_by_number_exists():
    missing = [f"{ref.where} (lesson {n})" for path in ALL_FILES for ref in references(path)
               for n in ref.numbers if n not in NUMBERS]
    folders = [f"{path.relative_to(ROOT)}: {m[0]}" for path in ALL_FILES
               for m in FOLDER.finditer(_text(path))
               if m[1] in NUMBERS and not m[0].startswith(NUMBERS[m[1]])]
    assert missing == [] and folders == []


def test_every_reference_says_what_its_lesson_teaches():
    problems, used = [], set()
    for path in ALL_FILES:
        text = _text(path)
        for ref in references(path):
            if _automatic(ref, text):
                continue
            entries = _covering(CITED, path, text, ref.start, ref.end)
            if not entries:
                problems.append(f"not in CITED: {ref.where}")
                continue
            for key, evidence in entries:
                used.add(key)
                if evidence is EXAMPLE:
                    continue
                held = evidence if isinstance(evidence, dict) else {ref.numbers[0]: evidence}
                for number in ref.numbers:
                    if number not in held:
                        problems.append(f"CITED says nothing of lesson {number}: {ref.where}")
                    elif number in NUMBERS and held[number] not in _own_text(NUMBERS[number]):
                        problems.append(f"lesson {number} does not hold {held[number]!r}: "
                                        f"{ref.where}")
    stale = sorted(set(CITED) - used)
    assert problems == [] and stale == [], "\n".join(problems + [f"stale: {s}" for s in stale])


def test_every_lesson_title_is_the_lessons_own():
    wrong = [f"{path.relative_to(ROOT)}: Lesson {m[1]} · {m[2]}" for path in ALL_FILES
             for m in TITLED.finditer(_text(path))
             if m[1] in NUMBERS and not m[2].startswith(_title(NUMBERS[m[1]]))]
    assert wrong == []


# "thirteen lessons", "12 notebooks", "Thirteen Jupyter notebooks": a count as large as the
# course's might be the course's (two lessons, 480 notebooks are not)
COUNTS = {word: n for n, word in enumerate(
    ["eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
     "seventeen", "eighteen", "nineteen", "twenty"], start=8)}
COUNT = re.compile(rf"\b({'|'.join(COUNTS)}|[89]|1\d|20) (lessons|(?:jupyter )?notebooks)\b",
                   re.I)

#: counts of lessons or notebooks that are not the course's: (file, quote) -> why
NOT_THE_COURSE = {
    ("docs/maintainers/lessons.md", "6 h 40 for nine lessons the method"):
        "the learner's timing the method was checked against, of nine lessons",
    ("docs/measurements/index.md", "for the eight lessons then"):
        "a measurement of when the course had eight lessons",
    ("docs/instructors/large-class.md", "(8 lessons of 10,000 learners)"):
        "a term of a large class, made up",
    ("docs/measurements/grading.md", "(8 lessons of 10,000 learners)"):
        "a term of a large class, made up",
}


def test_every_count_of_the_lessons_is_right():
    wrong, used = [], set()
    for path in [*LESSON_FILES, *GUIDES]:
        text = _text(path)
        rel = str(path.relative_to(ROOT))
        for m in COUNT.finditer(text):
            word = m[1].lower()
            count = int(word) if word.isdigit() else COUNTS[word]
            if count == len(LESSONS):
                continue
            keys = [key for key, _ in _covering(NOT_THE_COURSE, path, text, m.start(), m.end())]
            if keys:
                used.update(keys)
            else:
                wrong.append(f"{rel}: ...{text[max(m.start() - 40, 0):m.end() + 20]}...")
    stale = sorted(set(NOT_THE_COURSE) - used)
    assert wrong == [] and stale == [], "\n".join(wrong + [f"stale: {s}" for s in stale])


@pytest.mark.parametrize("text, numbers", [
    ("as lesson 03 zeroed x.grad", [["03"]]),
    ("Lessons 01 to 06 teach", [["01", "02", "03", "04", "05", "06"]]),
    ("Lessons 03, 04 and 07 show", [["03", "04", "07"]]),
    ("lessons 02 and 05, then lesson 12", [["02", "05"], ["12"]]),
    ("those two lessons 59.5 and 54 minutes", []),
])
def test_references_are_read_whole(text, numbers):
    """The reader finds lists and ranges, not only their first number, and no time."""
    assert [ref.numbers for ref in references(ROOT / "README.md", text)] == numbers
