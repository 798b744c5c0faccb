"""Checks of lesson 04, the Jacobian, row by row.

Every expected value is computed here with the engine from the lesson's own expressions: a
Jacobian from ``autograd.functional.jacobian``, the blog's rows from one-hot backward calls,
never from numbers typed in. ``jacobian_by_rows`` is also tried on functions of the tests'
own whose graph goes backward once (``Once``), in the hidden test drawn afresh for each
learner: only one backward call per row, each on a graph of its own, builds their Jacobian,
so ``functional.jacobian`` under another name, or numbers written in advance, score nothing.
"""
import contextlib

import numpy as np

from .. import autograd, mm, mv, tensor
from .._tensor import Tensor
from ..autograd import functional
from . import (Prediction, as_tensor_text, attempt, check, fail, returned, same_values, show,
               tensor_answer)
from . import ANY, Many, Maybe, Outcome
from .lesson03 import _backward


def _blog_mm():
    """The blog's example: x = [[2, 1]], M = [[1, 2], [3, 4]], y = x @ M."""
    x = tensor([[2.0, 1.0]], requires_grad=True)
    return x, mm(x, tensor([[1.0, 2.0], [3.0, 4.0]]))


# ---------------------------------------------------------------------------------------------
# the prediction
# ---------------------------------------------------------------------------------------------
@check
def mm_prediction(mm_grad_prediction):
    """The blog's y = x @ M, then y.backward([[3, 1]]): x.grad = 3 * row 0 + 1 * row 1 of J."""
    __tracebackhide__ = True
    found = tensor_answer("mm_grad_prediction", mm_grad_prediction, floating=False)
    x, _ = _blog_mm()
    v = tensor([[3.0, 1.0]])
    expected = _backward(_blog_mm, v)
    rows = [_backward(_blog_mm, tensor([e])) for e in ([1.0, 0.0], [0.0, 1.0])]
    J = np.concatenate(rows)                    # J[j] = dy[j]/dx, the rows the blog printed
    verdict = Prediction()
    what = f"x.grad: you predicted {as_tensor_text(found)}."
    if found.shape == (2, 2):
        verdict.off(what + " A 2x2 matrix, but x.grad has x's shape [1, 2].",
                    misconception="vjp-is-jacobian")
    elif found.shape != tuple(x.shape):
        verdict.off(what, hint="x.grad always has x's shape: x = [[2., 1.]] is 1x2, so write "
                    "[[a, b]]")
    elif same_values(found, v._data @ J.T):     # v^T J^T: columns where rows were meant
        verdict.off(what + " That combines the columns of the Jacobian, not its rows.",
                    misconception="jacobian-transposed")
    elif not same_values(found, expected):
        verdict.off(what, hint="backward([[3, 1]]) = 3 * (what [[1, 0]] gave) + 1 * (what "
                    "[[0, 1]] gave)")
    verdict.tell()


# ---------------------------------------------------------------------------------------------
# the Jacobian, row by row
# ---------------------------------------------------------------------------------------------
# (function, its text, x): the lesson's own function first
_LESSON_CASE = (lambda t: t[:3] * t[1:], "lambda t: t[:3] * t[1:]", [1.0, 2.0, 3.0, 4.0])


class Once(autograd.Function):
    """y, unchanged, on a graph that goes backward once: what a function of the tests hands
    back, so that a Jacobian comes only from one backward call per row (each after a call of
    f of its own). ``torch.autograd.functional.jacobian``, which goes backward through one
    graph once per row, fails on it, under whatever name it is called."""

    @staticmethod
    def forward(ctx, y):
        ctx.done = False
        return y * 1.0

    @staticmethod
    def backward(ctx, grad):
        if ctx.done:
            raise RuntimeError("this f's graph goes backward once: call f(x) again for the "
                               "next row (each call makes a graph of its own)")
        ctx.done = True
        return grad


#: functions of the tests' own: name -> (its parameters) -> a function of a 1-D tensor
_FAMILIES = {
    "linear": lambda W: (lambda t: mv(tensor(W), t)),
    "tanh": lambda W: (lambda t: mv(tensor(W), t).tanh() * 2),
    "products": lambda W: (lambda t: mv(tensor(W), t) * t[0] + t[-1] ** 2),
    "waves": lambda W: (lambda t: (mv(tensor(W), t)).sin() + mv(tensor(W), t.exp() * 0.1)),
}


def _family(name, W):
    return _FAMILIES[name](W)


def _once(f):
    return lambda t: Once.apply(f(t))


#: the visible case of a function of the tests' own: its graph goes backward once
_VISIBLE_ONCE = ("linear", [[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]], [1.0, -1.0, 2.0])


@contextlib.contextmanager
def _without_functional_jacobian(used):
    """While the learner's function runs, functional.jacobian refuses (and says it was used)."""
    def refuse(*args, **kwargs):
        used.append(True)
        raise RuntimeError("jacobian_by_rows may not call torch.autograd.functional.jacobian")
    saved, functional.jacobian = functional.jacobian, refuse
    try:
        yield
    finally:
        functional.jacobian = saved


def _call(jacobian_by_rows, f, x_values):
    used = []
    with _without_functional_jacobian(used):
        outcome = attempt(jacobian_by_rows, f, tensor(x_values))
    return outcome, bool(used)


def _lesson_jacobian(jacobian_by_rows):
    """Probe: the learner's jacobian_by_rows on the lesson's function, and on a function of
    the tests' own whose graph goes backward once: (Outcome, whether it called
    functional.jacobian) each, or None when it is not a function."""
    if not callable(jacobian_by_rows):
        return jacobian_by_rows, None
    f, _, x_values = _LESSON_CASE
    name, W, x_once = _VISIBLE_ONCE
    return jacobian_by_rows, [_call(jacobian_by_rows, f, x_values),
                              _call(jacobian_by_rows, _once(_family(name, W)), x_once)]


def _other_jacobians(jacobian_by_rows, *, cases=()):
    """Probe: the learner's jacobian_by_rows on each drawn function of the tests' own."""
    if not callable(jacobian_by_rows):
        return jacobian_by_rows, None
    return jacobian_by_rows, [_call(jacobian_by_rows, _once(_family(name, W)), x)
                              for name, W, x in cases]


def _draw_functions(rng, **settings):
    """Three functions of the tests' own, of shapes and numbers no one knows before."""
    cases = []
    for _ in range(3):
        m, n = int(rng.integers(2, 5)), int(rng.integers(2, 5))
        name = sorted(_FAMILIES)[int(rng.integers(len(_FAMILIES)))]
        cases.append((name, rng.uniform(-2, 2, size=(m, n)).round(2).tolist(),
                      rng.uniform(-1.5, 1.5, size=n).round(2).tolist()))
    return {"cases": cases}


def _check_jacobian(result, f, text, x_values):
    __tracebackhide__ = True
    outcome, used = result
    x = tensor(x_values)
    J = functional.jacobian(f, x)._data.astype(np.float64)
    m, n = J.shape
    call = f"jacobian_by_rows({text}, {x!r})"
    if used:
        fail("jacobian_by_rows called torch.autograd.functional.jacobian: build J yourself, "
             "from one backward call per row.")
    if outcome.raised and "goes backward once" in str(outcome.error):
        fail(f"{call} went backward through one graph of f twice: {outcome.error}",
             hint="a graph may be freed by its first backward: call y = f(x) afresh for each "
             "row, then y.backward(one_hot) once")
    answer = returned(call, outcome)
    if isinstance(answer, (list, tuple)) and answer and all(isinstance(r, Tensor) for r in answer):
        fail(f"{call} returned a {type(answer).__name__} of rows, not one Tensor.",
             found=f"{len(answer)} tensors", hint="torch.stack(rows) makes them one matrix")
    if answer is None:
        fail(f"{call} returned None.", hint="end the function with `return torch.stack(rows)`")
    found = tensor_answer("the value jacobian_by_rows returned", answer, requires_grad=False)
    expected = as_tensor_text(J)
    if found.shape == (n,):
        fail(f"{call} returned one vector, not the {m}x{n} Jacobian.", expected=expected,
             found=show(answer), misconception="vjp-is-jacobian")
    if found.shape == (n, m) and same_values(found, J.T) and not same_values(J, J.T):
        fail(f"{call} returned the Jacobian transposed.", expected=expected, found=show(answer),
             misconception="jacobian-transposed")
    if found.shape != (m, n):
        fail(f"{call} has the wrong shape: J has one row per element of y = f(x) ({m}) and one "
             f"column per element of x ({n}).", expected=f"shape [{m}, {n}]: {expected}",
             found=show(answer))
    if same_values(found, J):
        return
    if same_values(found, np.cumsum(J, axis=0)) and m > 1:
        fail(f"Row i of {call} is the sum of rows 0..i of J: x.grad was not reset between the "
             "backward calls.", expected=expected, found=show(answer),
             misconception="forgot-zero-grad")
    if m > 1 and all(same_values(row, found[0]) for row in found) \
            and not all(same_values(row, J[0]) for row in J):
        fail(f"Every row of {call} is the same vector. x.grad is one tensor that backward "
             "updates in place, so a row that IS x.grad changes with it (x.grad.zero_() "
             "zeroes it too).", expected=expected, found=show(answer),
             hint="keep a copy of each row: x.grad.clone(), or set x.grad = None between calls")
    fail(f"{call} is not the Jacobian of f at x.", expected=expected, found=show(answer),
         hint="row i is x.grad after f(x).backward(e_i), e_i one-hot with a 1 at position i")


def _is_function(jacobian_by_rows, results):
    __tracebackhide__ = True
    if results is None:
        fail("`jacobian_by_rows` should be a function of (f, x).", found=show(jacobian_by_rows))


@check(probe=_lesson_jacobian, reply=lambda: (ANY, Maybe([(Outcome, bool), (Outcome, bool)])))
def jacobian_of_lesson_function(jacobian_by_rows, results):
    """The lesson's f(t) = t[:3] * t[1:], and a function of the tests' own whose graph goes
    backward once."""
    __tracebackhide__ = True
    _is_function(jacobian_by_rows, results)
    f, text, x_values = _LESSON_CASE
    _check_jacobian(results[0], f, text, x_values)
    name, W, x_once = _VISIBLE_ONCE
    _check_jacobian(results[1], _family(name, W), "f, a function of the test's own", x_once)


@check(probe=_other_jacobians,
       reply=lambda *, cases=(): (ANY, Maybe(Many((Outcome, bool), len(cases)))),
       draw=_draw_functions)
def jacobian_of_other_functions(jacobian_by_rows, results, *, cases=()):
    """Functions of the tests' own, drawn for each learner, each handing back a graph that goes
    backward once: only one backward call per row, on a graph of its own, builds J."""
    __tracebackhide__ = True
    _is_function(jacobian_by_rows, results)
    for (name, W, x), result in zip(cases, results, strict=True):
        _check_jacobian(result, _family(name, W), "f, a function of the test's own", x)
