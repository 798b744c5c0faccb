"""Checks of lesson 11, define-by-run, freezing and grad modes.

Expected values come from the engine, run on the lesson's own expressions (the doubling loop
for its two inputs, the grad-mode flags, the two layers after ``eval()``), never typed in. A
learner's ``freeze`` is called on leaves of the check's own, handed over as a list, a tuple or
a generator (as a module's ``parameters()`` yields them).
"""
import numpy as np

from .. import is_grad_enabled, no_grad, set_grad_enabled, tensor
from . import (ANY, Maybe, Outcome, Prediction, attempt, check, fail, flag_answer,
               number_answer, returned, show)
from .._tensor import Tensor


# ----------------------------------------------------------------------------------------
# 1. a graph made as the code runs
# ----------------------------------------------------------------------------------------
def _double_until(x, limit=10.0):
    y = x * 2
    while y.abs() < limit:
        y = y * 2
    return y


def _loop_example():
    """(a.grad, b.grad) and (double_until(a), double_until(b)) for the lesson's a = 3, b = 0.5."""
    grads, values = [], []
    for start in (3.0, 0.5):
        x = tensor(start, requires_grad=True)
        y = _double_until(x)
        y.backward()
        grads.append(float(x.grad.item()))
        values.append(float(y.item()))
    return grads, values


@check
def loop_prediction(a_grad, b_grad):
    """a.grad and b.grad after double_until(a).backward(), a = 3, and the same for b = 0.5."""
    __tracebackhide__ = True
    found = [number_answer("a_grad", a_grad), number_answer("b_grad", b_grad)]
    grads, values = _loop_example()
    verdict = Prediction()
    if np.isclose(found[0], found[1]):
        verdict.off(f"you predicted the same gradient for both inputs, {found[0]:g}.",
                    misconception="static-graph",
                    hint="run the loop by hand for each input: how many times does y * 2 run?")
    else:
        for name, got, grad, value in zip(("a_grad", "b_grad"), found, grads, values):
            if np.isclose(got, grad):
                continue
            hint = ("each y * 2 that runs multiplies the gradient by 2: count them for this "
                    "input")
            if np.isclose(got, value):
                hint = ("that is what double_until returns; its gradient is how fast that "
                        "changes with the input")
            verdict.off(f"{name}: you predicted {got:g}.", hint=hint)
    verdict.tell()


# ----------------------------------------------------------------------------------------
# 3. no_grad is not a way to freeze
# ----------------------------------------------------------------------------------------
def _no_grad_example():
    w = tensor([1.0, -2.0], requires_grad=True)
    x = tensor([3.0, 0.5])
    with no_grad():
        inside = w.requires_grad
    return inside, (w * x).requires_grad


@check
def no_grad_prediction(w_requires_grad_inside, b_requires_grad):
    """w (a leaf that requires grad) read inside no_grad; b = w * x after the block."""
    __tracebackhide__ = True
    flag_answer("w_requires_grad_inside", w_requires_grad_inside)
    flag_answer("b_requires_grad", b_requires_grad)
    inside, after = _no_grad_example()
    verdict = Prediction()
    if w_requires_grad_inside != inside:
        verdict.off(f"(1) w.requires_grad inside no_grad: you predicted "
                    f"{w_requires_grad_inside}.", misconception="no-grad-freezes")
    if b_requires_grad != after:
        verdict.off(f"(2) b.requires_grad after the block: you predicted {b_requires_grad}.",
                    misconception="no-grad-freezes",
                    hint="the block has ended: grad mode is back on, and w requires grad")
    verdict.tell()


# ----------------------------------------------------------------------------------------
# 4. model.eval() is not a grad mode
# ----------------------------------------------------------------------------------------
def _eval_example():
    """The lesson's TinyNet after eval(): its two layers with no dropout between them. Whether
    the output requires grad, and whether backward gave w1 a gradient."""
    w1 = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w2 = tensor([[0.5, -1.0]], requires_grad=True)
    out = (w2 @ (w1 @ tensor([1.0, 1.0])).relu()).sum()
    records = out.requires_grad
    out.backward()
    return records, w1.grad is not None


@check
def eval_prediction(out_requires_grad, w1_has_grad):
    """TinyNet().eval(): does its output require grad, and does backward reach w1?"""
    __tracebackhide__ = True
    flag_answer("out_requires_grad", out_requires_grad)
    flag_answer("w1_has_grad", w1_has_grad)
    records, reached = _eval_example()
    verdict = Prediction()
    if out_requires_grad != records:
        verdict.off(f"out.requires_grad after model.eval(): you predicted {out_requires_grad}.",
                    misconception="eval-freezes")
    if w1_has_grad != reached:
        verdict.off(f"model.w1.grad after out.backward(): you predicted "
                    f"{'a tensor' if w1_has_grad else 'None'}.", misconception="eval-freezes",
                    hint="w1 still requires grad, and out was computed from it")
    verdict.tell()


# ----------------------------------------------------------------------------------------
# 5. the exercise: freeze
# ----------------------------------------------------------------------------------------
_SHAPES = ((2, 2), (2,))
_GIVEN = {"list": "a list", "tuple": "a tuple", "generator": "a generator"}


def _leaves(shapes):
    """Leaves that require grad, one of each shape, their numbers 1, 2, 3, ... in turn."""
    return [tensor(np.full(tuple(shape), float(i + 1)).tolist(), requires_grad=True)
            for i, shape in enumerate(shapes)]


def _freeze_probe(freeze, *, given="list", shapes=_SHAPES):
    """Probe: the learner's freeze on fresh leaves, handed over as ``given``; whether grad
    mode was still on after the call (and it is then put back as it was), and the leaves."""
    if not callable(freeze):
        return freeze, None, None, None
    params = _leaves(shapes)
    handed = {"list": list, "tuple": tuple, "generator": lambda ps: (p for p in ps)}[given]
    before = is_grad_enabled()
    outcome = attempt(freeze, handed(params))
    recording = is_grad_enabled()
    set_grad_enabled(before)      # (an answer that switched grad mode off: the kernel's back)
    return freeze, outcome, recording, params


def _draw_leaves(rng, **settings):
    """Leaves no one knows the number or the shapes of before (how they are handed over is
    the cell's)."""
    return {"shapes": tuple(tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(0, 3)))
                            for _ in range(int(rng.integers(1, 5))))}


@check(probe=_freeze_probe,
       reply=lambda *, shapes=_SHAPES, **settings: (
           ANY, Maybe(Outcome), Maybe(bool), Maybe([Tensor] * len(shapes))),
       draw=_draw_leaves)
def frozen(freeze, outcome, recording, params, *, given="list", shapes=_SHAPES):
    """freeze(params): every tensor params yields (a list, a tuple or a generator of leaves
    that require grad) frozen in place, grad mode left as it was. (In the hidden tests the
    leaves' number and shapes are drawn for each learner.)"""
    __tracebackhide__ = True
    if outcome is None:
        fail("`freeze` should be a function (def freeze(params): ...).", found=show(freeze))
    call = f"freeze(params), params {_GIVEN[given]} of {len(shapes)} leaves that require grad"
    returned(call, outcome)
    if not recording:
        fail(f"After {call}, grad mode is off: from then on nothing is recorded, the "
             "parameters that should go on training included.", misconception="no-grad-freezes",
             hint="leave grad mode alone and change each tensor's own flag")
    still = [i for i, p in enumerate(params) if p.requires_grad]
    if len(still) == len(params):
        fail(f"After {call}, each of them still requires grad: every operation on them is "
             "recorded, and backward fills their .grad.", misconception="detach-freezes")
    if still:
        fail(f"After {call}, the tensors at positions {still} still require grad.",
             hint="freeze every tensor that params yields")
