"""A lesson run in this process, for the tests that try many answers against the checks (every
wrong answer of tests/support/submissions/, and every mutant of the checks, tests/tooling/
test_mutants.py): a kernel and a grading per answer would take minutes where this takes
milliseconds.

The solution notebook's code cells run in order in one namespace, with ``import autograd_lab as
torch`` as the lesson has it, the answer cells replaced where a test says (``answers``), an error
in a lesson's cell left for the next as a kernel leaves it. A test cell runs in two parts: its
visible tests (what Validate and the learner's own run show), and its hidden tests, as the
grader runs them (``checks.judging`` with a key, ``checks.hidden``). Each part's outcome is kept:
the CheckFailed it raised, or any other error, and what it printed (a prediction's verdict).
Both halves of a check run here, as in a learner's kernel: the probe, and the judge on its
description of the answers."""
import contextlib
import io
import os
import re
import sys
import warnings
from dataclasses import dataclass, field

import matplotlib
import nbformat

import course

# (lessons 02 and 05 plot) This process's backend, not os.environ's MPLBACKEND: every kernel
# the same test process starts later inherits its environment, and a learner's kernel with
# MPLBACKEND=Agg shows no plot at all.
matplotlib.use("Agg")

_HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[ \t]*\n(.*?)^[ \t]*### END HIDDEN TESTS[ \t]*$",
                     re.M | re.S)
KEY = b"lesson_run: one key for every run"


@dataclass
class Part:
    """One part of a test cell, run: the error it raised (None: it passed) and what it
    printed."""
    error: BaseException = None
    printed: str = ""

    @property
    def shown(self):
        """What a learner reads of it: the printed text, then the error's name and message."""
        said = f"{type(self.error).__name__}: {self.error}" if self.error is not None else ""
        return "\n".join(text for text in (self.printed, said) if text)

    @property
    def misconception(self):
        return getattr(self.error, "misconception", None)


@dataclass
class TestCell:
    grade_id: str
    answer: str                     # the answer cell it checks (the last one before it)
    answered: Part                  # that answer cell's own run
    visible: Part = field(default_factory=Part)
    hidden: Part = None             # None: the cell has no hidden tests


@dataclass
class _Cell:
    kind: str                       # "answer", "test" or "code"
    grade_id: str
    code: str
    hidden: str = ""


_cells = {}


def cells(lesson):
    """The solution notebook's code cells, parsed once: answer, test and other code cells."""
    if lesson not in _cells:
        nb = nbformat.read(course.solution_path(lesson), as_version=4)
        found = []
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            meta = cell.metadata.get("nbgrader", {})
            if course.is_answer(cell):
                found.append(_Cell("answer", meta["grade_id"], ""))
            elif meta.get("grade"):
                hidden = "\n".join(m.group(1) for m in _HIDDEN.finditer(cell.source))
                found.append(_Cell("test", meta["grade_id"], _HIDDEN.sub("", cell.source),
                                   hidden))
            else:
                found.append(_Cell("code", None, cell.source))
        _cells[lesson] = found
    return _cells[lesson]


_solutions = {}


def run(lesson, answers=None, *, until=None, hidden=True, key=KEY):
    """Run ``lesson`` with the solution's answers but ``answers`` ({answer cell: code});
    ``until``: stop after the test cell of this answer cell. {test cell: TestCell}."""
    if lesson not in _solutions:
        _solutions[lesson] = course.solution_answers(lesson)
    from autograd_lab import checks
    from autograd_lab._core import grad_mode
    filled = {**_solutions[lesson], **(answers or {})}
    namespace = {"__name__": "__main__"}
    found, answer, answered = {}, None, None
    saved = (sys.getrecursionlimit(), {name: value for name, value in vars(grad_mode._State).items()
                                       if not name.startswith("__")})
    with warnings.catch_warnings(), checks.judging(key):
        warnings.simplefilter("ignore")
        try:
            for cell in cells(lesson):
                if cell.kind == "answer":
                    answer = cell.grade_id
                    answered = _part(filled[answer], namespace)
                elif cell.kind == "code":
                    _part(cell.code, namespace)
                else:
                    test = found[cell.grade_id] = TestCell(cell.grade_id, answer, answered,
                                                           _part(cell.code, namespace))
                    if cell.hidden and hidden:
                        with checks.hidden():
                            test.hidden = _part(cell.hidden, namespace)
                    if until is not None and answer == until:
                        break
        finally:
            sys.setrecursionlimit(saved[0])
            for name, value in saved[1].items():
                setattr(grad_mode._State, name, value)
    return found


def _part(code, namespace):
    printed = io.StringIO()
    part = Part()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "<cell>", "exec"), namespace)
    except Exception as error:              # noqa: BLE001 -- a kernel shows it and goes on
        part.error = error
    part.printed = printed.getvalue()
    return part


def wrongs(lesson):
    """Every wrong answer of the lesson's submissions: those graded as a class (``WRONG``),
    the malformed predictions (``PREDICTIONS``), and the rest that reach the checks' other
    failures (``REFUSED``)."""
    import importlib
    module = importlib.import_module(f"submissions.{lesson}")
    malformed = [course.Wrong(f"malformed-{p.cell}", {p.cell: p.malformed})
                 for p in module.PREDICTIONS]
    return [*module.WRONG, *malformed, *getattr(module, "REFUSED", [])]


def judged(lesson, wrong):
    """Run ``lesson`` with ``wrong``'s answer as far as its test cell; what is not as the wrong
    answer says (a list of sentences; empty: as it says). A wrong answer's test cell fails
    with a CheckFailed that names its misconception (None where it names none) and holds its
    ``says``; one right on the visible cases (``hidden_only``) passes them and fails the
    hidden ones; a wrong prediction passes and prints its verdict. Every test cell before it
    passes, visible and hidden."""
    from autograd_lab.checks import CheckFailed
    (answer,) = wrong.answers
    found = run(lesson, wrong.answers, until=answer)
    problems = [f"{cell.grade_id}: {part.shown}" for cell in found.values() if cell.answer != answer
                for part in (cell.visible, cell.hidden) if part is not None and part.error]
    (test,) = [cell for cell in found.values() if cell.answer == answer]
    part = test.hidden if wrong.hidden_only else test.visible
    if wrong.hidden_only and test.visible.error is not None:
        problems.append(f"failed a visible test: {test.visible.shown}")
    if part is None:
        return problems + ["its test cell has no hidden tests"]
    shown = " ".join(part.shown.split())
    if test.answered.error is not None:     # the answer's own cell raised: the learner sees that
        if part.error is None:
            problems.append(f"its test passed after the answer raised {test.answered.shown}")
        if wrong.misconception and part.misconception != wrong.misconception:
            problems.append(f"named {part.misconception}, not {wrong.misconception}: "
                            f"{part.shown}")
        if wrong.says and wrong.says not in " ".join(test.answered.shown.split()):
            problems.append(f"the answer's error does not say {wrong.says!r}: "
                            f"{test.answered.shown}")
        return problems
    if wrong.predicted:
        if part.error is not None:
            problems.append(f"a wrong prediction failed: {part.shown}")
        elif "Prediction [wrong]" not in part.printed:
            problems.append(f"the prediction was not told wrong: {part.printed}")
        named = set(course.MISCONCEPTION.findall(part.printed))
        if (wrong.misconception or None) not in named | {None} or \
                not wrong.misconception and named:
            problems.append(f"named {named or 'none'}, not {wrong.misconception}")
    elif not isinstance(part.error, CheckFailed):
        problems.append(f"passed, or raised what is not a check's failure: {part.shown}")
    elif part.misconception != wrong.misconception:
        problems.append(f"named {part.misconception}, not {wrong.misconception}: {part.shown}")
    if wrong.says and wrong.says not in shown:
        problems.append(f"does not say {wrong.says!r}: {part.shown}")
    return problems


def solution_problems(lesson):
    """What of the solution's run is not a pass: every test cell, visible and hidden."""
    return [f"{cell.grade_id}: {part.shown}" for cell in run(lesson).values()
            for part in (cell.visible, cell.hidden) if part is not None and part.error]


CHECKS = os.path.join(os.path.dirname(course.ROOT / "autograd_lab" / "checks" / "x"), "")


@contextlib.contextmanager
def lines_run():
    """The lines of autograd_lab/checks/ run inside the block: a set of (file name, line)."""
    seen = set()

    def local(frame, event, arg):
        if event == "line":
            seen.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def calls(frame, event, arg):
        if frame.f_code.co_filename.startswith(CHECKS):
            seen.add((frame.f_code.co_filename, frame.f_lineno))
            return local
        return None

    # a learner's walk that recurses past the limit raises RecursionError inside the tracer,
    # and Python then stops tracing: each call of a learner's function (answers.attempt, under
    # whatever name a module of the checks holds it) starts it again when it returns
    import importlib
    from autograd_lab.checks import answers
    original = answers.attempt
    # (every module of the checks imported first: one imported while the wrapper is in place
    # would keep it, and start this tracer again in a later block)
    for path in sorted(os.listdir(CHECKS)):
        if path.startswith("lesson") and path.endswith(".py"):
            importlib.import_module(f"autograd_lab.checks.{path[:-3]}")

    def attempt(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        finally:
            sys.settrace(calls)

    holders = [m for name, m in list(sys.modules.items())
               if name.startswith("autograd_lab.checks") and m is not None
               and m.__dict__.get("attempt") is original]
    before = sys.gettrace()
    for holder in holders:
        holder.attempt = attempt
    sys.settrace(calls)
    try:
        yield seen
    finally:
        sys.settrace(before)
        for holder in holders:
            holder.attempt = original


def exercises(lesson):
    """The answer cells of a lesson that are exercises (not predictions)."""
    nb = nbformat.read(course.solution_path(lesson), as_version=4)
    return [course.grade_id(c) for c in nb.cells
            if course.is_answer(c) and "prediction" not in c.metadata.get("tags", [])]


def graded_kernel(lesson):
    """The solution run as in a graded run's kernel, where every check is the grader's to
    judge (``VERDICTS_ENV``): {test cell: TestCell}."""
    from autograd_lab import checks
    saved = os.environ.get(checks.VERDICTS_ENV)
    os.environ[checks.VERDICTS_ENV] = "grader"
    try:
        return run(lesson, hidden=False)
    finally:
        if saved is None:
            del os.environ[checks.VERDICTS_ENV]
        else:
            os.environ[checks.VERDICTS_ENV] = saved
