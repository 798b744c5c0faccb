"""Checks of lesson 02, scalar backward.

Expected derivatives are computed here with the engine's own backward (in float64 where a
learner's formula is compared), from the lesson's expressions; finite differences are computed
with the same formula the lesson teaches, at the step the test passes.
"""
import math

import numpy as np

from .. import float64, tensor
from . import (ANY, Many, Maybe, Outcome, Prediction, assigned, called, calls_named, check,
               fail, is_function, number_answer, parsed, returned, show, tensor_answer)


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


def _leaf_t(t):
    """t: a leaf holding 2.0 that requires grad (before anything reads t.grad: on a non-leaf
    that read warns, and a test cell that writes to stderr scores nothing)."""
    __tracebackhide__ = True
    t_value = tensor_answer("t", t, shape=())
    if not t.requires_grad:
        fail("`t` does not require grad, so autograd records nothing from it.", found=show(t),
             hint="create t with torch.tensor(2.0, requires_grad=True)")
    if not t.is_leaf:
        fail("`t` requires grad but is not a leaf, so t.grad is never filled.",
             found=f"{t!r}, made by {type(t.grad_fn).__name__}", misconception="not-a-leaf")
    if t_value != 2.0:
        fail("`t` should hold 2.0.", expected=2.0, found=show(t))


@check(sources=True)
def autograd_derivative(t, g, dg_dt, *, sources):
    """t = 2 (a leaf that requires grad), g = t**4 - 3t, dg_dt from backward."""
    __tracebackhide__ = True
    _leaf_t(t)
    tensor_answer("g", g, shape=())
    if g.grad_fn is None:
        fail("`g` was not computed from t: it has no grad_fn.", found=show(g),
             hint="compute g = t ** 4 - 3 * t from your t")
    if not np.isclose(g.detach().item(), _g(tensor(2.0)).item()):
        fail("`g` is not t**4 - 3t at t = 2.", expected=_g(tensor(2.0)).item(), found=show(g))
    if dg_dt is None:
        if any(calls_named(value, {"backward"}) for value in assigned(sources, "dg_dt")):
            fail("`dg_dt` is None: it is what backward() returned.", found=None,
                 misconception="backward-returns-none")
        fail("`dg_dt` is None: the derivative is not there.", found=None,
             misconception="nonleaf-grad",
             hint="backward() returns None and fills t.grad: answer dg_dt = t.grad")
    truth = _grad_at(_g, 2.0)
    found = number_answer("dg_dt", dg_dt)
    if np.isclose(found, 2 * truth) or np.isclose(found, 3 * truth):
        fail("`dg_dt` is a multiple of dg/dt: backward ran more than once.", expected=truth,
             found=found, misconception="forgot-zero-grad")
    if np.isclose(found, g.detach().item()):
        fail("`dg_dt` is g's value, not its derivative.", expected=truth, found=found,
             hint="after g.backward() the derivative is in t.grad")
    if not np.isclose(found, truth):
        fail("`dg_dt` is not dg/dt at t = 2.", expected=truth, found=found)
    _called_backward(sources)


def _called_backward(sources):
    """Fail unless the learner's code calls backward (or autograd.grad) somewhere: read from
    the notebook itself in a graded run, which the kernel cannot change (from the kernel's
    history on the learner's machine; nothing to read outside IPython)."""
    __tracebackhide__ = True
    if sources and not any(calls_named(tree, {"backward", "grad"}) for tree in parsed(sources)):
        fail("`dg_dt` did not come from autograd: your code never calls backward().",
             hint="call g.backward() and take the derivative from t.grad, not from a formula "
             "or a number typed in")


@check(sources=True)
def derivative_came_from_backward(t, *, sources):
    """What backward left in t.grad is dg/dt (the answer was not typed in), and the code
    calls backward: t.grad is what the kernel says, the code is the notebook's."""
    __tracebackhide__ = True
    _leaf_t(t)
    _called_backward(sources)
    if t.grad is None:
        fail("t.grad is None: your cell never ran backward through t.", found=None,
             hint="call g.backward() and take the derivative from t.grad")
    if not np.isclose(t.grad.item(), _grad_at(_g, 2.0)):
        fail("t.grad is not dg/dt at t = 2.", expected=_grad_at(_g, 2.0), found=show(t.grad),
             misconception="forgot-zero-grad")


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
