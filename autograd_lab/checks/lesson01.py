"""Checks of lesson 01, tensors that remember.

Expected values are computed here with the engine from the lesson's own expressions, never
typed in: what the lesson prints and what the check expects cannot drift apart.
"""
import numpy as np

from .. import tensor
from . import check, fail, show, tensor_answer


def _flag(name, value):
    if not isinstance(value, bool):
        fail(f"`{name}` should be True or False.", found=show(value))
    return value


def _node_name(node):
    return None if node is None else type(node).__name__


@check
def z_prediction(z_requires_grad, z_is_leaf, z_grad_fn):
    """The lesson's z = x * y, with x requiring grad and y not."""
    __tracebackhide__ = True
    x = tensor(1.0, requires_grad=True)
    z = x * tensor(2.0)
    if _flag("z_requires_grad", z_requires_grad) != z.requires_grad:
        fail("Your prediction of z.requires_grad is not what happens.",
             expected=z.requires_grad, found=z_requires_grad,
             hint="a result requires grad as soon as ONE of its inputs does: z depends on x")
    if _flag("z_is_leaf", z_is_leaf) != z.is_leaf:
        fail("Your prediction of z.is_leaf is not what happens.", expected=z.is_leaf,
             found=z_is_leaf, misconception="not-a-leaf")
    expected = _node_name(z.grad_fn)
    if z_grad_fn is not None and not isinstance(z_grad_fn, str):
        fail("`z_grad_fn` should be the node's name as a string (or None).", found=show(z_grad_fn))
    if z_grad_fn != expected:
        fail("Your prediction of z.grad_fn is not what happens.", expected=repr(expected),
             found=repr(z_grad_fn),
             hint="z was made by a multiplication involving a tensor that requires grad")


def _lesson_tensors():
    a = tensor(5.0, requires_grad=True)
    b = tensor(5.0, requires_grad=True) * 0.1
    return {"a": a, "b": b, "c": b.detach(), "d": tensor([1.0, 2.0]) * 3}


@check
def leaf_predictions(predictions):
    __tracebackhide__ = True
    actual = _lesson_tensors()
    if not isinstance(predictions, dict):
        fail("`predictions` should be a dictionary from name to (requires_grad, is_leaf).",
             found=show(predictions))
    missing = sorted(set(actual) - set(predictions))
    if missing:
        fail(f"`predictions` has no entry for {', '.join(missing)}.",
             expected=sorted(actual), found=sorted(predictions))
    for name, t in actual.items():
        guess = predictions[name]
        if (not isinstance(guess, tuple) or len(guess) != 2
                or not all(isinstance(v, bool) for v in guess)):
            fail(f"predictions[{name!r}] should be a pair of booleans (requires_grad, is_leaf).",
                 found=show(guess))
        truth = (t.requires_grad, t.is_leaf)
        if guess == truth:
            continue
        if name == "b":
            fail("Your prediction for b = torch.tensor(5.0, requires_grad=True) * 0.1 is off.",
                 expected=truth, found=guess, misconception="not-a-leaf")
        if name == "d":
            fail("Your prediction for d = torch.tensor([1.0, 2.0]) * 3 is off.", expected=truth,
                 found=guess, hint="nothing in d's computation requires grad, so no graph was "
                 "recorded: d is a plain tensor, and every tensor outside a graph is a leaf")
        if name == "c":
            fail("Your prediction for c = b.detach() is off.", expected=truth, found=guess,
                 hint="detach() returns the same numbers with no history: no grad_fn, no "
                 "requires_grad, so a leaf")
        fail(f"Your prediction for {name} is off.", expected=truth, found=guess)


@check
def learning_rate_leaf(lr):
    __tracebackhide__ = True
    values = tensor_answer("lr", lr, shape=())
    if not lr.requires_grad:
        fail("`lr` should require grad (it is meant to be learnable).", found=show(lr),
             hint="pass requires_grad=True when you create it")
    if not lr.is_leaf:
        fail("`lr` requires grad but is not a leaf: it was computed, so lr.grad would stay None.",
             found=f"{lr!r}, made by {_node_name(lr.grad_fn)}", misconception="not-a-leaf")
    if not np.isclose(values, 0.5):
        fail("`lr` should hold 0.5.", expected=0.5, found=show(lr))


@check
def frozen_copy(w_frozen, w):
    """The lesson's w = torch.tensor([0.5, -1.5], requires_grad=True) * 2: w_frozen holds its
    numbers outside the graph. (The learner's w is passed to tell a copy from w itself; the
    numbers are compared with the lesson's own w, made here.)"""
    __tracebackhide__ = True
    expected = tensor([0.5, -1.5], requires_grad=True) * 2
    if w_frozen is w:
        fail("`w_frozen` is w itself, not a copy outside the graph.", found=show(w_frozen))
    values = tensor_answer("w_frozen", w_frozen, shape=tuple(expected.shape))
    if w_frozen.requires_grad or w_frozen.grad_fn is not None:
        fail("`w_frozen` is still part of the graph.", found=show(w_frozen),
             hint="w.detach() gives the same numbers without the history")
    if not np.allclose(values, expected.detach()._data):
        fail("`w_frozen` should hold the same numbers as w.", expected=repr(expected.detach()),
             found=show(w_frozen))


@check
def fixed_backward(weight, loss):
    """weight = 2, loss = (3 weight - 1)^2: dloss/dweight = 6 (3 weight - 1) = 30."""
    __tracebackhide__ = True
    tensor_answer("weight", weight, shape=())
    tensor_answer("loss", loss, shape=())
    if loss.grad_fn is None and loss.requires_grad:
        fail("loss requires grad, but it has no grad_fn: nothing connects it to weight.",
             found=f"weight.requires_grad = {weight.requires_grad}, weight.grad = {weight.grad}",
             misconception="requires-grad-on-loss")
    if not weight.requires_grad:
        fail("`weight` does not require grad, so no graph is recorded from it.", found=show(weight),
             hint="create weight with requires_grad=True")
    if not weight.is_leaf:
        fail("`weight` is not a leaf, so its .grad is never filled.", found=show(weight),
             misconception="not-a-leaf")
    if float(weight.detach().item()) != 2.0:
        fail("`weight` should still hold 2.0.", expected=2.0, found=show(weight))
    if weight.grad is None:
        fail("weight.grad is None: call loss.backward() in your cell.", found=None)
    expected = 6 * (3 * 2.0 - 1)
    found = float(weight.grad.item())
    if np.isclose(found, 2 * expected):
        fail("weight.grad holds twice the derivative: backward ran twice and .grad added up.",
             expected=expected, found=found, misconception="forgot-zero-grad")
    if not np.isclose(found, expected):
        fail("weight.grad is not d loss / d weight.", expected=expected, found=found)
