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


def _error(error: BaseException) -> NotebookNode:
    name, text = type(error).__name__, str(error)
    return new_output("error", ename=name, evalue=text, traceback=[f"{name}: {text}"])


def _cut(text: str) -> str:
    if len(text) <= MAX_PRINTED:
        return text
    return text[:MAX_PRINTED] + f"\n... [{len(text) - MAX_PRINTED} more characters cut]\n"


def judge(source: str, ask, sources: list[str], import_path: str | None = None) -> Judged:
    """Run the test cell ``source`` (the instructor's, with its hidden tests) here, its free
    names standing for the learner's (``ask(request) -> reply``: one request to the kernel;
    ``sources``: the learner's code cells before it). Returns its outputs: what it printed,
    warned (on stderr, which scores nothing, as in a kernel), the value of a last expression
    (partial credit), the error it ended in."""
    namespace = {"__builtins__": builtins, "__name__": "__test_cell__"}
    namespace.update({name: Remote(name, ask, sources) for name in free_names(source)})
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    printed, value, failure = io.StringIO(), None, None
    answers.MALFORMED.clear()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(printed), \
            _importable(import_path):
        warnings.simplefilter("default")
        try:
            exec(compile(tree, "<test cell>", "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<test cell>", "eval"),
                             namespace)
        except MemoryError:
            raise           # the grader's own trouble, not a verdict: the notebook fails, said
        except Exception as error:              # noqa: BLE001 -- the verdict: shown, scored 0
            failure = error
    outputs = []
    if printed.getvalue():
        outputs.append(new_output("stream", name="stdout", text=_cut(printed.getvalue())))
    if caught:
        text = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno)
                       for w in caught)
        outputs.append(new_output("stream", name="stderr", text=_cut(text)))
    if failure is not None:
        outputs.append(_error(failure))
    elif value is not None:
        outputs.append(new_output("execute_result", data={"text/plain": _cut(_SHORT.repr(value))},
                                  execution_count=None))
    return Judged(outputs, failure is not None, list(answers.MALFORMED))


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
