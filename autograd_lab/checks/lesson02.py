"""Checks of lesson 02, scalar backward.

Expected derivatives are computed here with the engine's own backward (in float64 where a
learner's formula is compared), from the lesson's expressions; finite differences are computed
with the same formula the lesson teaches, at the step the test passes. ``derivative`` is tried
in the hidden test on functions and points drawn for each learner: only autograd gives their
derivatives, so a number or formula written in advance scores nothing.
"""
import math

import numpy as np

from .. import float64, tensor
from . import (ANY, Many, Maybe, Outcome, Prediction, called, check, fail, is_function,
               number_answer, returned)


def _grad_at(fn, x0, seed=None, dtype=None):
    """d fn / dx at x0 by backward: a fresh leaf, one graph, one pass."""
    x = tensor(x0, dtype=dtype, requires_grad=True)
    out = fn(x)
    out.backward() if seed is None else out.backward(tensor(seed))
    return x.grad.item()


def _cube(x):
    return x ** 3


def _g(t):
    return t ** 4 - 3 * t


def _y(x):
    return (x ** 2 + 1) ** 3


@check
def cube_prediction(predicted_grad):
    """x = 1, z = x**3, z.backward(): x.grad."""
    __tracebackhide__ = True
    found = number_answer("predicted_grad", predicted_grad)
    verdict = Prediction()
    if not np.isclose(found, _grad_at(_cube, 1.0)):
        if np.isclose(found, _cube(tensor(1.0)).item()):
            verdict.off(f"x.grad: you predicted {found:g}, the value of z (and of x).",
                        misconception="grad-is-value")
        else:
            verdict.off(f"x.grad: you predicted {found:g}.",
                        hint="backward leaves dz/dx in x.grad; for z = x**3 that is 3 x**2, "
                        "at x = 1")
    verdict.tell()


@check
def seed_prediction(predicted_grad_10):
    """x = 1, z = x**3, z.backward(torch.tensor(10.)): x.grad."""
    __tracebackhide__ = True
    found = number_answer("predicted_grad_10", predicted_grad_10)
    truth = _grad_at(_cube, 1.0, seed=10.0)
    verdict = Prediction()
    if not np.isclose(found, truth):
        if np.isclose(found, _grad_at(_cube, 1.0)):
            verdict.off(f"x.grad: you predicted {found:g}, as if the pass started with 1.",
                        misconception="gradient-scales")
        elif np.isclose(found, 10.0):
            verdict.off(f"x.grad: you predicted {found:g}: 10 is where the pass starts, not "
                        "where it ends.", misconception="gradient-scales")
        else:
            verdict.off(f"x.grad: you predicted {found:g}.",
                        hint="x.grad = (the starting value) * dz/dx")
    verdict.tell()


# -- a derivative from autograd ------------------------------------------------------------
#: the functions derivative() is tried on: name -> (its parameters) -> f, each of a tensor
_FUNCTIONS = {
    "lesson": lambda: _g,                                   # g(t) = t**4 - 3t
    "cubic": lambda a, b, c: (lambda t: a * t ** 3 + b * t ** 2 + c * t),
    "wave": lambda a, b, c: (lambda t: a * (b * t).sin() + c * t ** 2),
    "bump": lambda a, b, c: (lambda t: a * (-(t - b) ** 2).exp() + c * t),
    "ratio": lambda a, b, c: (lambda t: a * t / (1 + (b * t) ** 2) + c * t),
}
#: the visible cases: (function, its parameters, the point); the hidden test draws others
_LESSON_POINTS = (("lesson", (), 2.0), ("cubic", (1.0, 0.0, 0.0), 1.5))


def _text(name, params, x0):
    if name == "lesson":
        return f"derivative(g, {x0}) with g(t) = t**4 - 3t"
    if name == "cubic" and tuple(params) == (1.0, 0.0, 0.0):
        return f"derivative(f, {x0}) with f(t) = t**3"
    return f"derivative(f, {x0}) for a function f of the check's own"


def _derivatives(derivative, *, cases=_LESSON_POINTS):
    """Probe: the learner's derivative(f, x0) on each case, one call after the other (a leaf
    kept from one call to the next shows in the next)."""
    return called(derivative, *[(_FUNCTIONS[name](*params), x0) for name, params, x0 in cases])


def _draw_functions(rng, **settings):
    """Three functions of the check's own, with parameters and points no one knows before."""
    names = [n for n in _FUNCTIONS if n != "lesson"]
    return {"cases": [(names[int(rng.integers(len(names)))],
                       tuple(rng.uniform(-2, 2, size=3).round(2).tolist()),
                       round(float(rng.uniform(-1.5, 1.5)), 2)) for _ in range(3)]}


_NON_LEAF = "is not a leaf Tensor"      # (the warning that reading a result's .grad gives)


@check(probe=_derivatives,
       reply=lambda *, cases=_LESSON_POINTS: (ANY, Maybe(Many(Outcome, len(cases)))),
       draw=_draw_functions)
def derivative_by_backward(derivative, outcomes, *, cases=_LESSON_POINTS):
    """derivative(f, x0): f'(x0) from backward, for the lesson's g at 2 and t**3 at 1.5 (the
    hidden test: functions and points of its own, drawn for each learner, which only autograd
    differentiates: no formula or number written in advance can know them)."""
    __tracebackhide__ = True
    is_function("derivative", derivative, outcomes, "def derivative(f, x0): ...")
    for (name, params, x0), outcome in zip(cases, outcomes, strict=True):
        f = _FUNCTIONS[name](*params)
        call = _text(name, params, x0)
        non_leaf = any(_NON_LEAF in w for w in outcome.warnings)
        if outcome.raised and isinstance(outcome.error, AttributeError) \
                and "NoneType" in str(outcome.error):
            if non_leaf:
                fail(f"`{call}` read the .grad of a tensor that is not a leaf: it is None.",
                     found=f"{type(outcome.error).__name__}: {outcome.error}",
                     misconception="nonleaf-grad")
            fail(f"`{call}` raised {type(outcome.error).__name__}: {outcome.error}",
                 hint="backward() returns None and fills the leaf's .grad: make the leaf with "
                 "torch.tensor(x0, requires_grad=True), call f(leaf).backward() on its own "
                 "line, then return leaf.grad")
        value = returned(call, outcome)
        if value is None:
            if non_leaf:
                fail(f"`{call}` returned None: the .grad of a tensor that is not a leaf.",
                     found=None, misconception="nonleaf-grad")
            fail(f"`{call}` returned None: the derivative is not there.", found=None,
                 misconception="backward-returns-none",
                 hint="backward() returns None and fills the leaf's .grad: return leaf.grad")
        found = number_answer(f"the value {call} returned", value)
        truth = _grad_at(f, x0)
        if np.isclose(found, truth, rtol=1e-5, atol=1e-6):
            continue
        said = dict(expected=_num(truth), found=_num(found))
        if any(np.isclose(found, k * truth) for k in (2, 3)) and not np.isclose(truth, 0.0):
            fail(f"`{call}` is a multiple of the derivative: backward ran more than once into "
                 "the same .grad.", **said, misconception="forgot-zero-grad",
                 hint="make a fresh leaf in every call")
        if np.isclose(found, f(tensor(x0)).item()):
            fail(f"`{call}` is f's value, not its derivative.", **said,
                 misconception="grad-is-value")
        fail(f"`{call}` is not f'(x0).", **said,
             hint="take the number autograd leaves in the leaf's .grad, not a formula or a "
             "number typed in")


def _num(value):
    # enough digits to tell two answers apart, without float64's noise (4.760000000000006)
    return f"{value:.10g}"


def _at_points(dy_dx, *, points):
    """Probe: the learner's dy_dx called at each point."""
    return called(dy_dx, *[(x0,) for x0 in points])


@check(probe=_at_points, reply=lambda *, points: (ANY, Maybe(Many(Outcome, len(points)))))
def chain_rule_formula(dy_dx, outcomes, *, points):
    """dy_dx(x) for y = (x**2 + 1)**3, against backward in float64."""
    __tracebackhide__ = True
    is_function("dy_dx", dy_dx, outcomes, "def dy_dx(x): ...")
    for x0, outcome in zip(points, outcomes, strict=True):
        truth = _grad_at(_y, x0, dtype=float64)
        found = number_answer(f"dy_dx({x0})", returned(f"dy_dx({x0})", outcome))
        if np.isclose(found, truth, rtol=1e-6, atol=1e-9):
            continue
        outer = 3 * (x0 ** 2 + 1) ** 2          # g'(u) with g(u) = u**3, u = x**2 + 1
        said = dict(expected=_num(truth), found=_num(found))
        slips = [(outer, f"dy_dx({x0}) is only the outer derivative 3(x²+1)².",
                  "chain-rule-inner", None),
                 (outer + 2 * x0, f"dy_dx({x0}) adds the two derivatives instead of "
                  "multiplying them.", "chain-rule-inner", None),
                 (outer * 2, f"dy_dx({x0}) multiplies the outer derivative by 2, not by the "
                  "inside's derivative.", None, "the inside x² + 1 has derivative 2x"),
                 (outer * x0, f"dy_dx({x0}) multiplies the outer derivative by x, not by the "
                  "inside's derivative.", None, "the inside x² + 1 has derivative 2x")]
        for value, what, misconception, hint in slips:
            # at a point where two slips give the same number, neither is named
            if np.isclose(found, value) and sum(np.isclose(value, v) for v, *_ in slips) == 1 \
                    and not np.isclose(value, truth):
                fail(what, **said, misconception=misconception, hint=hint)
        fail(f"dy_dx({x0}) does not match autograd's dy/dx.", **said,
             hint="outer derivative at the inside, times the inside's derivative")


#: name -> (f, f', x, h): functions of plain numbers, their exact derivatives, a point, a step
_CASES = {
    "square": (lambda x: x ** 2, lambda x: 2 * x, 3.0, 0.5),
    "cubic": (lambda x: x ** 3 - 2 * x, lambda x: 3 * x ** 2 - 2, -1.5, 0.1),
    "sine": (math.sin, math.cos, 1.0, 0.2),
    "bump": (lambda x: math.exp(-x * x), lambda x: -2 * x * math.exp(-x * x), 0.7, 0.05),
    "small-step": (lambda x: x ** 3, lambda x: 3 * x ** 2, 2.0, 1e-4),
}


def _on_case(numerical_derivative, *, case):
    """Probe: the learner's numerical_derivative on one case's function, point and step."""
    f, _, x, h = _CASES[case]
    return called(numerical_derivative, (f, x, h))


@check(probe=_on_case, reply=lambda *, case: (ANY, Maybe(Many(Outcome, 1))))
def central_difference(numerical_derivative, outcomes, *, case):
    """numerical_derivative(f, x, h) against (f(x+h) - f(x-h)) / (2h) for one case."""
    __tracebackhide__ = True
    f, df, x, h = _CASES[case]
    central = (f(x + h) - f(x - h)) / (2 * h)
    is_function("numerical_derivative", numerical_derivative, outcomes,
                "def numerical_derivative(f, x, h): ...")
    call = f"numerical_derivative(f, {x}, {h})"
    found = number_answer(call, returned(call, outcomes[0]))
    if np.isclose(found, central, rtol=1e-6, atol=1e-9):
        return
    what = f"numerical_derivative at x = {x}, h = {h} ({case}) is off."
    forward, backward = (f(x + h) - f(x)) / h, (f(x) - f(x - h)) / h
    if np.isclose(found, forward, rtol=1e-6) or np.isclose(found, backward, rtol=1e-6):
        fail(what, expected=_num(central), found=_num(found), misconception="forward-difference")
    if np.isclose(found, 2 * central, rtol=1e-6) or np.isclose(found, central / 2, rtol=1e-6):
        fail(what, expected=_num(central), found=_num(found),
             misconception="finite-difference-step")
    if np.isclose(found, df(x), rtol=1e-4):
        fail(what, expected=_num(central), found=_num(found),
             misconception="finite-difference-step",
             hint="close to f'(x) itself: the estimate must use the step h it is given")
    fail(what, expected=_num(central), found=_num(found), hint="(f(x + h) - f(x - h)) / (2 * h)")
