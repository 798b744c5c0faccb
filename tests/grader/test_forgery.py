"""Grades the learner's code cannot forge: a class of forgery attempts on lesson 02, graded by
`autograd-lab grade` with real nbgrader and real bwrap, among honest learners.

Each trick is what a determined learner writes in their first answer cell (or, for the shadow
module, hands in beside the notebook without writing any code). Each is handed in twice: with
the same wrong answers as an honest learner (`wrong`, 4 of 9), and as the blank release (its
answer names bound to None, so that the test cells reach the checks). Graded by plain nbgrader
in the learner's own kernel, every trick raises the wrong answers' score (it is a real forgery);
graded by autograd-lab, whose verdicts are decided outside the kernel, every trick scores exactly
what its answers score without it, and is flagged as an attempt.
"""
import shutil
import sysconfig
import subprocess
from pathlib import Path

import nbformat
import pytest

import course as lessons
from autograd_lab_grader.gradebook import status
from autograd_lab_grader.steps import grade
from autograd_lab_grader.course import Course

LESSON = "02_scalar_backward"
pytestmark = pytest.mark.skipif(LESSON not in lessons.LESSONS, reason="lesson 02 is missing")

# right where the learner is right, wrong in four places: 4 of 9 points (the two predictions
# wrong, but committed: a point each; derivative 2; the chain rule and the finite
# difference wrong). Each trick scores more in plain nbgrader: numpy's comparisons patched fail
# derivative_by_backward (its "a multiple of the derivative" test) but pass the two
# exercises, 7 of 9.
WRONG = {"predict_cube": "predicted_grad = 1.0",
         "predict_seed": "predicted_grad_10 = 3.0",
         "chain_rule": "def dy_dx(x):\n    return 3 * (x ** 2 + 1) ** 2",
         "numerical_derivative": "def numerical_derivative(f, x, h):\n"
                                 "    return (f(x + h) - f(x)) / h"}
ANSWER_NAMES = "predicted_grad predicted_grad_10 derivative dy_dx numerical_derivative"

TRICKS = {
    # the lesson's checks module replaced in sys.modules, every check a no-op
    "replaces-checks": """
import sys, types
import autograd_lab.checks
import autograd_lab.checks.lesson02 as _real
_fake = types.ModuleType(_real.__name__)
for _name, _value in vars(_real).items():
    setattr(_fake, _name, (lambda *a, **k: None) if callable(_value) and not _name.startswith("_")
            else _value)
sys.modules[_real.__name__] = _fake
autograd_lab.checks.lesson02 = _fake
""",
    # the code of the one `fail` every check calls, emptied
    "empties-fail": """
import autograd_lab.checks
autograd_lab.checks.fail.__code__ = (lambda *a, **k: None).__code__
""",
    # numpy's comparisons always say "equal"
    "patches-numpy": """
import numpy
numpy.isclose = lambda *a, **k: True
numpy.allclose = lambda *a, **k: True
numpy.array_equal = lambda *a, **k: True
""",
    # every cell that mentions the checks becomes `pass` before it runs
    "ast-transformer": """
import ast
class _Pass(ast.NodeTransformer):
    def visit_Module(self, node):
        if "che" + "ck" in ast.unparse(node):
            return ast.Module(body=[ast.Pass()], type_ignores=[])
        return node
get_ipython().ast_transformers.append(_Pass())
""",
    # after a failed test cell: its outputs cleared and its error forgotten
    "post-run-hook": """
from IPython.display import clear_output
def _forget(result):
    if result.error_in_exec is not None and "check." in result.info.raw_cell:
        clear_output()
        result.error_in_exec = None
get_ipython().events.register("post_run_cell", _forget)
""",
    # before each test cell, a value on display: nbgrader reads a first result as credit
    "pre-run-display": """
_POINTS = {"cube_prediction": 1, "seed_prediction": 1, "derivative_by_backward": 2,
           "chain_rule_formula": 2, "central_difference": 3}    # as the notebook's metadata says
def _credit(info):
    for name, points in _POINTS.items():
        if "check." + name in info.raw_cell:
            get_ipython().displayhook(points)
get_ipython().events.register("pre_run_cell", _credit)
""",
    # a trace function that swaps a test cell's `check` for a dummy as the cell runs
    "trace-function": """
import sys, types
class _Dummy:
    def __getattr__(self, name):
        return lambda *a, **k: None
def _local(frame, event, arg):
    if isinstance(frame.f_globals.get("check"), types.ModuleType):
        frame.f_globals["check"] = _Dummy()
    return _local
def _global(frame, event, arg):
    return _local if frame.f_code.co_name == "<module>" else None
sys.settrace(_global)
""",
    # the kernel's own execute handler wrapped: a test cell's error never leaves the kernel
    "wraps-execute-handler": """
_kernel = get_ipython().kernel
_handle = _kernel.shell_handlers["execute_request"]
async def _execute(*args, **kwargs):
    parent = args[-1] if args else kwargs.get("parent", {})
    code = parent.get("content", {}).get("code", "") if isinstance(parent, dict) else ""
    if "check." not in code:
        return await _handle(*args, **kwargs)
    send = _kernel.session.send
    def quiet(stream, msg_or_type, content=None, parent=None, *a, **k):
        kind = msg_or_type if isinstance(msg_or_type, str) else msg_or_type.get("msg_type")
        if kind == "error":
            return None
        if kind == "execute_reply" and content and content.get("status") == "error":
            content = {"status": "ok", "execution_count": content.get("execution_count"),
                       "user_expressions": {}, "payload": []}
        return send(stream, msg_or_type, content, parent, *a, **k)
    _kernel.session.send = quiet
    try:
        return await _handle(*args, **kwargs)
    finally:
        _kernel.session.send = send
_kernel.shell_handlers["execute_request"] = _execute
""",
}

# Tricks on the grader's own protocol, by a learner who has read it: the kernel's answer to
# the grader's requests (answers.serve) replaced, so that a probe's reply has another shape
# than the one the probe returns. Plain nbgrader never asks, so these forge nothing there.
PROTOCOL_TRICKS = {
    # the wrong function exercises answered with no outcomes at all: a judge that loops over
    # the outcomes the reply lists would judge nothing (a blank notebook scored full marks)
    "empties-outcomes": """
import json as _json
import autograd_lab.checks.answers as _answers
_serve = _answers.serve
def _forged(request, namespace=None):
    reply = _json.loads(_serve(request, namespace))
    answer = reply.get("answer") or {}
    if answer.get("t") == "tuple" and len(answer.get("items", [])) == 2 and (
            "chain_rule" in request or "central_diff" in request):
        answer["items"][1] = {"t": "list", "items": []}
    return _json.dumps(reply)
_answers.serve = _forged
""",
    # the function exercises' replies turned around: (outcomes, function)
    "reorders-replies": """
import json as _json
import autograd_lab.checks.answers as _answers
_serve = _answers.serve
def _forged(request, namespace=None):
    reply = _json.loads(_serve(request, namespace))
    answer = reply.get("answer") or {}
    if answer.get("t") == "tuple" and ("chain_rule" in request or "central_diff" in request):
        answer["items"] = answer.get("items", [])[::-1]
    return _json.dumps(reply)
_answers.serve = _forged
""",
}
TRICKS_ALL = {**TRICKS, **PROTOCOL_TRICKS}

# handed in beside the notebook, no code in it: modules the kernel imports on its first
# traceback (IPython's traceback formatting), which a working directory on the import path
# would load: a Python one that empties `fail`, and a compiled one
SHADOW_PY = """
import importlib, os, sys
os.write(2, b"SHADOW-LOADED\\n")
import autograd_lab.checks
autograd_lab.checks.fail.__code__ = (lambda *a, **k: None).__code__
del sys.modules["stack_data"]
sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]
_real = importlib.import_module("stack_data")
sys.modules["stack_data"] = _real
globals().update({k: v for k, v in vars(_real).items() if not k.startswith("__")})
"""
SHADOW_C = r"""
#include <Python.h>
#include <unistd.h>
PyMODINIT_FUNC PyInit_executing(void) {
    write(2, "SHADOW-SO-LOADED\n", 17);
    PyRun_SimpleString("import autograd_lab.checks\n"
                       "autograd_lab.checks.fail.__code__ = (lambda *a, **k: None).__code__\n");
    PyErr_SetString(PyExc_ImportError, "shadow");
    return NULL;
}
"""


def _notebook(base, trick=None):
    """Lesson 02 as a learner hands it in: wrong answers or the blank release, with a trick."""
    if base == "right":
        nb = lessons.submission(LESSON)
    elif base == "wrong":
        nb = lessons.submission(LESSON, WRONG)
    else:
        nb = nbformat.read(lessons.release_path(LESSON), as_version=4)
    if trick is not None:
        first = next(c for c in nb.cells if lessons.grade_id(c) == "predict_cube")
        names = (" = ".join(ANSWER_NAMES.split()) + " = None\n") if base == "blank" else ""
        first.source = TRICKS_ALL[trick] + names + first.source
    return nb


def _compiled_shadow(folder: Path) -> Path:
    source = folder / "shadow.c"
    source.write_text(SHADOW_C)
    target = folder / f"executing{sysconfig.get_config_var('EXT_SUFFIX')}"
    subprocess.run(["gcc", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}",
                    str(source), "-o", str(target)], check=True, capture_output=True)
    source.unlink()
    return target


def _course(root: Path) -> Course:
    root.mkdir(parents=True)
    shutil.copy(lessons.ROOT / "nbgrader_config.py", root)
    shutil.copytree(lessons.ROOT / "solutions" / LESSON, root / "solutions" / LESSON)
    course = Course(root)
    assert course.api().generate_assignment(LESSON)["success"]
    return course


def _submit(course: Course, student: str, nb, shadow: bool = False):
    folder = course.submission(LESSON, student)
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{LESSON}.ipynb")
    if shadow:
        (folder / "stack_data.py").write_text(SHADOW_PY)
        _compiled_shadow(folder)


CONTROLS = ("right", "wrong", "blank")
FORGED = [f"{trick}-{base}" for trick in TRICKS_ALL for base in ("wrong", "blank")] + [
    "shadow-wrong", "shadow-blank"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The whole class in one run, and the honest learners again, graded alone."""
    course = _course(tmp_path_factory.mktemp("forgery") / "course")
    for base in CONTROLS:
        _submit(course, base, _notebook(base))
    for trick in TRICKS_ALL:
        for base in ("wrong", "blank"):
            _submit(course, f"{trick}-{base}", _notebook(base, trick))
    for base in ("wrong", "blank"):
        _submit(course, f"shadow-{base}", _notebook(base), shadow=True)
    rows = {r.student: r for r in grade.grade(course, LESSON, grade.Options())}
    alone = _course(tmp_path_factory.mktemp("alone") / "course")
    for base in CONTROLS:
        _submit(alone, base, _notebook(base))
    alone_rows = {r.student: r for r in grade.grade(alone, LESSON, grade.Options())}
    return course, rows, (alone, alone_rows)


def _autograded(course, student):
    """What autograd-lab scored: the code cells' points."""
    with course.gradebook() as gb:
        return gb.find_submission(LESSON, student).code_score


def test_honest_learners_score_as_when_graded_alone(graded):
    course, rows, (alone, alone_rows) = graded
    scores = {s: _autograded(course, s) for s in CONTROLS}
    assert scores == {"right": 9, "wrong": 4, "blank": 0}
    assert scores == {s: _autograded(alone, s) for s in CONTROLS}
    for student in CONTROLS:
        assert rows[student].status in (status.GRADED, status.MANUAL), rows[student]
        assert rows[student].status == alone_rows[student].status
        assert not rows[student].forgery and not rows[student].forgery_reason, \
            rows[student]
        assert "ATTEMPT" not in rows[student].sandbox, rows[student]


@pytest.mark.parametrize("student", FORGED)
def test_a_trick_scores_what_its_answers_score_and_is_flagged(graded, student):
    course, rows, _ = graded
    base = student.rpartition("-")[2]
    row = rows[student]
    assert row.status in (status.GRADED, status.MANUAL), row
    assert _autograded(course, student) == _autograded(course, base), row
    assert row.forgery is True and row.forgery_reason, row
    assert "ATTEMPT" not in row.sandbox, row       # (the flag, not a word in the text)


def test_the_shadow_modules_never_load(graded):
    course, rows, _ = graded
    for student in ("shadow-wrong", "shadow-blank"):
        log = (course.root / "grading-logs" / LESSON / f"{student}.log").read_text()
        assert "SHADOW" not in log
        assert "'stack_data.py'" in rows[student].forgery_reason, rows[student]
        assert "executing.cpython" in rows[student].forgery_reason, rows[student]


def test_the_tricks_forge_a_grade_decided_in_the_kernel(tmp_path):
    """The same wrong answers with each trick, graded by plain nbgrader (the verdict decided in
    the learner's kernel): every trick scores more than the honest wrong answers."""
    course = _course(tmp_path / "course")
    _submit(course, "wrong", _notebook("wrong"))
    for trick in TRICKS:
        _submit(course, f"{trick}-wrong", _notebook("wrong", trick))
    _submit(course, "shadow-wrong", _notebook("wrong"), shadow=True)
    lessons.nbgrader(["autograde", LESSON, "--force"], course.root)
    scores = {s: _autograded(course, s) for s in ["wrong", *(f"{t}-wrong" for t in TRICKS),
                                                  "shadow-wrong"]}
    assert scores["wrong"] == 4
    forged = {s: v for s, v in scores.items() if s != "wrong" and v > scores["wrong"]}
    assert set(forged) == set(scores) - {"wrong"}, scores


def test_the_report_and_the_export_name_every_forgery(graded, tmp_path):
    from typer.testing import CliRunner

    from autograd_lab_grader.gradebook.outcome import outcomes
    from autograd_lab_grader.steps import export, report
    from autograd_lab_grader.commands.cli import app
    course, _, _ = graded
    assert report.report(course, LESSON).forgeries == sorted(FORGED)
    said = CliRunner().invoke(app, ["-C", str(course.root), "report", LESSON]).output
    assert f"{len(FORGED)} flagged for forging a grade" in said
    flagged = {o.student for o in outcomes(course, [LESSON]) if o.forgery}
    assert flagged == set(FORGED)
    grades, _ = export.rows(course, [LESSON])
    assert {r["student"] for r in grades if r["forgery"] == "yes"} == set(FORGED)
    assert all(r["forgery_reason"] for r in grades if r["forgery"] == "yes")
