"""Test cells judged outside the learner's process.

nbgrader scores a test cell by what the kernel that ran the learner's answers reports about it:
an error output or not, a first ``execute_result`` as partial credit. A learner's code runs in
that kernel first and can change what it reports (replace a check, patch numpy, hook IPython's
events, wrap the execute handler). Here the grader runs the instructor's copy of every test
cell itself, in the grading process, which never runs learner code: the learner's names in it
are ``Remote``s (``autograd_lab/checks/answers.py``), so a check asks the kernel to run its
probe and judges the description that comes back, and calling a learner's function calls it
in the kernel on data. What the cell prints, warns or raises here becomes its outputs in the
autograded notebook, and nbgrader's own rules (``determine_grade``) score those.

The kernel runs the learner's view of each test cell too (the visible tests), where every
check only raises ``VerdictPending``: an honest kernel claims no points in a test cell. A
kernel whose test cell claims more than the grader gave has been tampered with (``claimed``).
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import io
import re
import reprlib
import sys
import warnings
from dataclasses import dataclass

from nbformat import NotebookNode
from nbformat.v4 import new_output

from autograd_lab import checks
from autograd_lab.checks import answers
from autograd_lab.checks.answers import Remote

HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?",
                    re.DOTALL | re.MULTILINE)
MAX_PRINTED = 20_000            # characters a judged cell's printed output keeps
# a test cell's last value, shown: shortened at every level (nbgrader reads a number there)
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = MAX_PRINTED


def visible(source: str) -> str:
    """A test cell as the learner's copy has it: without its hidden tests."""
    return HIDDEN.sub("", source).rstrip()


def free_names(source: str) -> list[str]:
    """The names a test cell reads but never binds, and that are not builtins: the learner's
    answers (``dg_dt``, ``my_backward``)."""
    tree = ast.parse(source)
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted(n for n in read - bound if not hasattr(builtins, n))


@dataclass
class Judged:
    outputs: list             # nbformat outputs, as the autograded notebook shows them
    raised: bool              # whether the cell ended in an error
    malformed: list = ()      # replies of the kernel no unchanged kernel sends (a forgery)
    hidden: list = ()         # what the hidden tests found, in full: for the instructor only


def _error(error: BaseException) -> NotebookNode:
    name, text = type(error).__name__, str(error)
    return new_output("error", ename=name, evalue=text, traceback=[f"{name}: {text}"])


def _cut(text: str) -> str:
    if len(text) <= MAX_PRINTED:
        return text
    return text[:MAX_PRINTED] + f"\n... [{len(text) - MAX_PRINTED} more characters cut]\n"


def parts(source: str) -> list[tuple[ast.Module, bool]]:
    """A test cell as its parts, in order, each parsed, with whether it is a hidden block:
    the visible code between the blocks, and each block as a whole. A cell whose hidden block
    is not Python on its own (cut out of a loop, say) is one part, hidden as a whole: then
    nothing it finds is shown to the learner."""
    found, at = [], 0
    for block in HIDDEN.finditer(source):
        found.append((source[at:block.start()], False))
        found.append((block.group(0), True))
        at = block.end()
    found.append((source[at:], False))
    try:
        return [(ast.parse(code), hidden) for code, hidden in found if code.strip()]
    except SyntaxError:
        return [(ast.parse(source), bool(HIDDEN.search(source)))]


def _hidden_view(error: BaseException) -> Exception:
    """What the learner sees of a hidden test that failed: which check, the misconception it
    points to; never a value of the test's (for an error that is not a check's, not even its
    kind: a learner's code can name an exception after what it was asked)."""
    if isinstance(error, checks.CheckFailed):
        return checks.hidden_failure(error.check, error.misconception)
    return checks.hidden_failure()


def _full(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def judge(source: str, ask, import_path: str | None = None) -> Judged:
    """Run the test cell ``source`` (the instructor's, with its hidden tests) here, its free
    names standing for the learner's (``ask(request) -> reply``: one request to the kernel).
    Returns its outputs: what it printed, warned (on stderr, which scores nothing, as in a
    kernel), the value of a last expression (partial credit), the error it ended in.

    A hidden block runs as ``checks.hidden()``: checks that draw their inputs draw them there.
    Of a hidden block the outputs show no value: a failure says which check failed and the
    misconception it points to (``checks.hidden_failure``), a warning that one warned, and
    what it printed is not shown. What it found, in full, is in ``Judged.hidden``, for the
    instructor's report."""
    namespace = {"__builtins__": builtins, "__name__": "__test_cell__"}
    namespace.update({name: Remote(name, ask) for name in free_names(source)})
    pieces = parts(source)
    last = None
    if pieces and pieces[-1][0].body and isinstance(pieces[-1][0].body[-1], ast.Expr):
        last = pieces[-1][0].body.pop()
    printed, value, failure, kept = io.StringIO(), None, None, []
    answers.MALFORMED.clear()
    hidden_warnings, hidden_warned, running_hidden = [], False, False
    with warnings.catch_warnings(record=True) as caught, _importable(import_path):
        warnings.simplefilter("default")
        try:
            for tree, hidden in pieces:
                running_hidden = hidden
                if not hidden:
                    with contextlib.redirect_stdout(printed):
                        exec(compile(tree, "<test cell>", "exec"), namespace)
                    continue
                quiet, seen = io.StringIO(), len(caught)
                try:
                    with checks.hidden(), contextlib.redirect_stdout(quiet):
                        exec(compile(tree, "<test cell>", "exec"), namespace)
                finally:
                    if quiet.getvalue():
                        kept.append(f"printed: {_cut(quiet.getvalue())}")
                    hidden_warnings.extend(caught[seen:])
                    del caught[seen:]
            if last is not None:
                hidden_last = running_hidden = pieces[-1][1]
                with (checks.hidden() if hidden_last else contextlib.nullcontext()), \
                        contextlib.redirect_stdout(printed):
                    value = eval(compile(ast.Expression(last.value), "<test cell>", "eval"),
                                 namespace)
                if hidden_last and not isinstance(value, (int, float)):
                    kept.append(f"value: {_SHORT.repr(value)}")
                    value = None
        except MemoryError:
            raise           # the grader's own trouble, not a verdict: the notebook fails, said
        except Exception as error:              # noqa: BLE001 -- the verdict: shown, scored 0
            failure = error
            if running_hidden:
                kept.append(_cut(_full(error)))
                failure = _hidden_view(error)
    for w in hidden_warnings:
        kept.append("warned: " + warnings.formatwarning(w.message, w.category, w.filename,
                                                        w.lineno).strip())
        hidden_warned = True
    outputs = []
    if printed.getvalue():
        outputs.append(new_output("stream", name="stdout", text=_cut(printed.getvalue())))
    text = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno)
                   for w in caught)
    if hidden_warned:
        text += "A hidden test warned (what it said stays with the grader).\n"
    if text:
        outputs.append(new_output("stream", name="stderr", text=_cut(text)))
    if failure is not None:
        outputs.append(_error(failure))
    elif value is not None:
        outputs.append(new_output("execute_result", data={"text/plain": _cut(_SHORT.repr(value))},
                                  execution_count=None))
    return Judged(outputs, failure is not None, list(answers.MALFORMED), kept)


@contextlib.contextmanager
def _importable(path: str | None):
    """The lesson's own folder (the instructor's source directory) importable while its test
    cell runs here: a course may keep its checks next to its notebook. Python writes no
    bytecode there meanwhile: grading leaves the course's own folders as they were."""
    if not path:
        yield
        return
    sys.path.insert(0, path)
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        yield
    finally:
        sys.dont_write_bytecode = writes
        try:
            sys.path.remove(path)
        except ValueError:
            pass


def points(cell: NotebookNode, outputs: list) -> float:
    """What nbgrader gives a test cell showing ``outputs`` (its own rule)."""
    from nbgrader.utils import determine_grade

    shown = NotebookNode(cell.copy())
    shown.outputs = outputs
    score, _ = determine_grade(shown)
    return float(score or 0.0)
