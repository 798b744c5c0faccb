"""Checks of lesson 01, tensors that remember.

Expected values are computed here with the engine from the lesson's own expressions, never
typed in: what the lesson prints and what the check expects cannot drift apart.
"""
import numpy as np

from .. import tensor
from .._tensor import Tensor
from . import (ANY, Prediction, as_tensor_text, check, fail, same_values, show, tensor_answer)


def _flag(name, value):
    if not isinstance(value, bool):
        fail(f"`{name}` should be True or False.", found=show(value))
    return value


def _grad(t):
    """t.grad as float64 values (None stays None), read without PyTorch's non-leaf warning."""
    return None if t._grad is None else np.asarray(t._grad, dtype=np.float64)


def _node_name(node):
    return None if node is None else type(node).__name__


@check
def z_prediction(z_requires_grad, z_is_leaf, z_grad_fn):
    """The lesson's z = x * y, with x requiring grad and y not."""
    __tracebackhide__ = True
    _flag("z_requires_grad", z_requires_grad)
    _flag("z_is_leaf", z_is_leaf)
    if z_grad_fn is not None and not isinstance(z_grad_fn, str):
        fail("`z_grad_fn` should be the node's name as a string (or None).", found=show(z_grad_fn),
             hint="write the name you expect between quotes, as you would read it in the "
             "printout")
    x = tensor(1.0, requires_grad=True)
    z = x * tensor(2.0)
    verdict = Prediction()
    if z_requires_grad != z.requires_grad:
        verdict.off(f"z.requires_grad: you predicted {z_requires_grad}.",
                    hint="a result requires grad as soon as ONE of its inputs does: z "
                    "depends on x")
    if z_is_leaf != z.is_leaf:
        verdict.off(f"z.is_leaf: you predicted {z_is_leaf}.", misconception="not-a-leaf")
    if z_grad_fn != _node_name(z.grad_fn):
        verdict.off(f"z.grad_fn: you predicted {z_grad_fn!r}.",
                    hint="z was made by a multiplication involving a tensor that requires grad")
    verdict.tell()


def _lesson_tensors():
    a = tensor(5.0, requires_grad=True)
    b = tensor(5.0, requires_grad=True) * 0.1
    return {"a": a, "b": b, "c": b.detach(), "d": tensor([1.0, 2.0]) * 3}


_LINES = {"a": "a = torch.tensor(5.0, requires_grad=True)",
          "b": "b = torch.tensor(5.0, requires_grad=True) * 0.1",
          "c": "c = b.detach()", "d": "d = torch.tensor([1.0, 2.0]) * 3"}


@check
def leaf_predictions(predictions):
    __tracebackhide__ = True
    if not isinstance(predictions, dict):
        fail("`predictions` should be a dictionary from name to (requires_grad, is_leaf).",
             found=show(predictions))
    missing = sorted(set(_LINES) - set(predictions))
    if missing:
        fail(f"`predictions` has no entry for {', '.join(missing)}.",
             found=f"entries for {sorted(predictions, key=str)}",
             hint="write a pair for each of a, b, c and d")
    for name in _LINES:
        guess = predictions[name]
        if (not isinstance(guess, tuple) or len(guess) != 2
                or not all(isinstance(v, bool) for v in guess)):
            fail(f"predictions[{name!r}] should be a pair of booleans (requires_grad, is_leaf).",
                 found=show(guess))
    verdict = Prediction()
    for name, t in _lesson_tensors().items():
        guess = predictions[name]
        if guess == (t.requires_grad, t.is_leaf):
            continue
        what = f"{_LINES[name]}: you predicted {guess}."
        if name == "b":
            verdict.off(what, misconception="not-a-leaf")
        elif name == "d":
            verdict.off(what, hint="part 1 of the leaf rule: every tensor that does not "
                        "require grad is a leaf")
        elif name == "c":
            verdict.off(what, hint="detach() returns the same numbers with no history: no "
                        "grad_fn, no requires_grad, so a leaf")
        else:
            verdict.off(what, hint="you created a with requires_grad=True")
    verdict.tell()


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


def _frozen(w_frozen, w):
    """Probe: the answers; whether w_frozen shares w's numbers in memory, and whether it
    shares w's version counter. ``.detach()`` shares both (autograd still sees an in-place
    change made through either); ``.data`` shares the numbers with a counter of its own (a
    change through it goes unseen); a copy shares neither. They look the same otherwise."""
    if not (isinstance(w_frozen, Tensor) and isinstance(w, Tensor)):
        return w_frozen, w, False, False
    import numpy
    shares = bool(numpy.shares_memory(numpy.asarray(w_frozen._data), numpy.asarray(w._data)))
    return w_frozen, w, shares, w_frozen._vc is not None and w_frozen._vc is w._vc


@check(probe=_frozen, reply=lambda: (ANY, ANY, bool, bool))
def frozen_copy(w_frozen, w, shares_numbers, shares_counter):
    """The lesson's w = torch.tensor([0.5, -1.5], requires_grad=True) * 2: w_frozen holds its
    numbers outside the graph, taken out with .detach() (or copied), not through .data, which
    shares w's numbers without its version counter. (The learner's w is passed to tell a copy
    from w itself; the numbers are compared with the lesson's own w, made here.)"""
    __tracebackhide__ = True
    expected = tensor([0.5, -1.5], requires_grad=True) * 2
    if w_frozen is w:
        fail("`w_frozen` is w itself (the same tensor under a second name), still in the graph.",
             found=show(w_frozen), misconception="copy-in-graph")
    values = tensor_answer("w_frozen", w_frozen, shape=tuple(expected.shape))
    if w_frozen.requires_grad or w_frozen.grad_fn is not None:
        fail("`w_frozen` is still part of the graph.",
             found=f"{w_frozen!r}, made by {_node_name(w_frozen.grad_fn)}",
             misconception="copy-in-graph")
    if not np.allclose(values, expected.detach()._data):
        fail("`w_frozen` should hold the same numbers as w.", expected=repr(expected.detach()),
             found=show(w_frozen))
    if shares_numbers and not shares_counter:
        fail("`w_frozen` holds the right numbers, but it shares w's numbers without w's "
             "version counter (what w.data gives): autograd cannot see a change made through "
             "it.", found=show(w_frozen), misconception="data-not-detach",
             hint="take the numbers out with w.detach() (or copy them: w.detach().clone())")


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


# -- retain_grad(): the gradient of an intermediate result ---------------------------------
@check
def hidden_grad(x, h, loss):
    """The lesson's x = [1, 2, 3] (leaf), h = x * 2, loss = (h ** 2).sum(), one backward."""
    __tracebackhide__ = True
    tensor_answer("x", x, shape=(3,))
    tensor_answer("h", h, shape=(3,))
    tensor_answer("loss", loss, shape=())
    if not x.is_leaf:
        fail("`x` is not a leaf: it was computed, so x.grad is never filled.",
             found=f"{x!r}", misconception="not-a-leaf")
    if not x.requires_grad:
        fail("`x` should require grad.", found=show(x), hint="create it with requires_grad=True")
    if h.is_leaf:
        fail("`h` is a leaf: it is not computed from x any more, so the loss cannot reach x "
             "through it.", found=show(h),
             hint="keep h = x * 2 (an intermediate result) and ask it to keep its gradient")
    if not h.retains_grad:
        fail("h.grad is None after backward: h is an intermediate result, not a leaf.",
             found=f"h.retains_grad = {h.retains_grad}", misconception="nonleaf-grad",
             hint="call h.retain_grad() BEFORE loss.backward()")
    if x.grad is not None and h._grad is None:
        fail("h.grad is None after backward: h.retain_grad() came after the backward pass, "
             "which had passed through h without keeping anything.",
             found=f"h.retains_grad = {h.retains_grad}, h.grad = None",
             misconception="nonleaf-grad", hint="call h.retain_grad() BEFORE loss.backward()")
    if x.grad is None or h._grad is None:
        fail("No gradient arrived: call loss.backward() (once) in your cell.",
             found=f"x.grad = {x.grad}")
    xs = tensor([1.0, 2.0, 3.0], requires_grad=True)
    hs = xs * 2
    hs.retain_grad()
    (hs ** 2).sum().backward()
    expected = {"h": _grad(hs), "x": _grad(xs)}
    found = {"h": _grad(h), "x": _grad(x)}
    if all(same_values(found[k], 2 * expected[k]) for k in found):
        text = {k: {name: as_tensor_text(v[name]) for name in v}
                for k, v in (("expected", expected), ("found", found))}
        fail("h.grad and x.grad are twice what one backward gives: backward ran twice.",
             expected=f"h.grad = {text['expected']['h']}, x.grad = {text['expected']['x']}",
             found=f"h.grad = {text['found']['h']}, x.grad = {text['found']['x']}",
             misconception="forgot-zero-grad")
    for k in ("h", "x"):
        if not same_values(found[k], expected[k]):
            fail(f"{k}.grad is not d loss / d {k}.", expected=as_tensor_text(expected[k]),
                 found=as_tensor_text(found[k]),
                 hint="x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True), h = x * 2, "
                 "loss = (h ** 2).sum()")
