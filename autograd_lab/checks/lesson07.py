"""Checks of lesson 07, inside backward.

Every expected value is computed here with the engine from the lesson's own expressions: the
prediction from z = x * x + x, the walk by hand against ``backward()`` on the blog's product.
The walk is tried on the lesson's own graph, with the engine's backward refused, and on
graphs of the check's own making (``graphs.py``) that the engine cannot walk: in the hidden
test with numbers drawn afresh for each learner, so only a walk of the learner's own gives
them.
"""
import contextlib

import numpy as np

from .. import autograd, mm, tensor
from . import (ANY, Many, Maybe, Outcome, Prediction, as_tensor_text, attempt, check, fail,
               graphs, same_values, show, tensor_answer)


def _names(name, value):
    """A list of node names (type names or ``.name()``), or a clear failure that does not
    name the nodes of the answer."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        fail(f"`{name}` should be a list of node names, as strings "
             "(like \"PowBackward0\").", found=show(value))
    return ["AccumulateGrad" if v == "torch::autograd::AccumulateGrad" else v for v in value]


def _fan_out():
    """The lesson's z = x * x + x, with x = 3."""
    x = tensor(3.0, requires_grad=True)
    return x, x * x + x


@check
def next_prediction(add_next, same_accumulator):
    __tracebackhide__ = True
    found = _names("add_next", add_next)
    if not isinstance(same_accumulator, bool):
        fail("`same_accumulator` should be True or False.", found=show(same_accumulator))
    _, z = _fan_out()
    expected = [type(n).__name__ for n, _ in z.grad_fn.next_functions]
    verdict = Prediction()
    if found != expected:
        hint = None
        if found == expected[::-1]:
            hint = "next_functions follows the order of the inputs: (x * x) + x"
        elif len(found) != len(expected):
            hint = "one entry per input of the addition: it has two inputs"
        verdict.off(f"z.grad_fn.next_functions: you predicted {found}.", hint=hint)
    mul = z.grad_fn.next_functions[0][0]
    truth = mul.next_functions[0][0] is mul.next_functions[1][0]
    if same_accumulator != truth:
        verdict.off(f"Whether both edges of MulBackward0 lead to the same node: you predicted "
                    f"{same_accumulator}.", misconception="one-accumulator")
    verdict.tell()


# -- a backward pass by hand -----------------------------------------------------------------
#: the lesson's product: x = [[2, 1]], M = [[1, 2], [3, 4]]
_LESSON_PRODUCT = ([[2.0, 1.0]], [[1.0, 2.0], [3.0, 4.0]])


def _truth(x, M):
    """(ds/dy, ds/dx) of s = (y * y).sum(), y = x @ M, by the engine's own backward."""
    x = tensor(x, requires_grad=True)
    y = mm(x, tensor(M))
    y.retain_grad()
    (y * y).sum().backward()
    return y.grad._data, x.grad._data


def _engine_product(x, M):
    """s = (y * y).sum(), y = x @ M, recorded by the engine."""
    x = tensor(x, requires_grad=True)
    y = mm(x, tensor(M))
    return (y * y).sum()


def _grader_product(x, M):
    """The same s, its graph of the check's own making (graphs.py): SumBackward0,
    MulBackward0 with both edges to one MmBackward0, and x's AccumulateGrad (M needs no
    gradient: a (None, 0) edge). The engine cannot walk it, and each node runs once."""
    x_values, M_values = np.asarray(x, np.float32), np.asarray(M, np.float32)
    y_values = x_values @ M_values
    leaf = tensor(x_values.tolist(), requires_grad=True)
    product = graphs.node_class("MmBackward0")(
        [leaf._grad_accumulator(), None], [lambda g: g @ M_values.T, None], y_values.shape)
    square = graphs.node_class("MulBackward0")(
        [product, product], [lambda g: g * y_values, lambda g: g * y_values], y_values.shape)
    total = graphs.node_class("SumBackward0")(
        [square], [lambda g: g * np.ones_like(y_values)], ())
    s = tensor(float((y_values * y_values).sum()), requires_grad=True)
    s._grad_fn = total
    return s


@contextlib.contextmanager
def _engine_refused():
    """While by_hand runs on the lesson's own graph, the engine's backward pass refuses."""
    def refuse(*args, **kwargs):
        raise RuntimeError("by_hand called the engine's backward pass (.backward() or "
                           "torch.autograd.grad): call the nodes yourself")
    kept, autograd.run_backward = autograd.run_backward, refuse
    try:
        yield
    finally:
        autograd.run_backward = kept


def _walks(by_hand, *, cases=None):
    """Probe: by_hand on each case's s, ("lesson" or "grader", x, M)."""
    cases = _VISIBLE if cases is None else cases
    if not callable(by_hand):
        return by_hand, None
    outcomes = []
    for where, x, M in cases:
        if where == "lesson":
            s = _engine_product(x, M)
            with _engine_refused():
                outcomes.append(attempt(by_hand, s))
        else:
            outcomes.append(attempt(by_hand, _grader_product(x, M)))
    return by_hand, outcomes


#: the visible cases: the lesson's own product, then the same numbers on a graph of the
#: check's making
_VISIBLE = (("lesson", *_LESSON_PRODUCT), ("grader", *_LESSON_PRODUCT))


def _draw_products(rng, **settings):
    """Two products of the check's making, with numbers no one knows before."""
    return {"cases": [("grader", rng.uniform(-2, 2, size=(1, 2)).round(2).tolist(),
                       rng.uniform(-2, 2, size=(2, 2)).round(2).tolist()) for _ in range(2)]}


@check(probe=_walks, reply=lambda *, cases=_VISIBLE: (ANY, Maybe(Many(Outcome, len(cases)))),
       draw=_draw_products)
def by_hand(by_hand, outcomes, *, cases=_VISIBLE):
    """by_hand(s) for s = (y * y).sum(), y = x @ M: (grad_y, grad_x), computed by calling the
    nodes, on the lesson's graph (the engine refused meanwhile) and on graphs of the check's
    own making, which the engine cannot walk."""
    __tracebackhide__ = True
    if outcomes is None:
        fail("`by_hand` should be a function by_hand(s) returning (grad_y, grad_x).",
             found=show(by_hand))
    for (where, x, M), outcome in zip(cases, outcomes, strict=True):
        _judge_walk(where, x, M, outcome)


def _judge_walk(where, x, M, outcome):
    __tracebackhide__ = True
    on = "the lesson's s" if where == "lesson" else "an s of the check's own making"
    if outcome.raised:
        error, text = outcome.error, str(outcome.error)
        if "called the engine" in text or isinstance(error, AttributeError) and any(
                f"'{slot}'" in text for slot in ("_pending", "_next", "_seq")):
            fail(f"On {on}, by_hand used the engine's own backward: call the nodes yourself, "
                 "from s.grad_fn down.", found=f"{type(error).__name__}: {text}")
        if "called a second time" in text:
            fail(f"On {on}, by_hand called a node a second time: call each node once, with "
                 "the sum of what reaches it.", found=text, misconception="fan-out-sum")
        fail(f"by_hand raised {type(error).__name__} on {on}: {text}",
             hint="find each node from the one before it: s.grad_fn.next_functions[0][0] is "
             "MulBackward0, and both of its next_functions lead to MmBackward0")
    answer = outcome.value
    if not isinstance(answer, tuple) or len(answer) != 2:
        fail(f"by_hand(s) should return a pair (grad_y, grad_x) on {on}.", found=show(answer))
    grad_y, grad_x = answer
    want_y, want_x = _truth(x, M)
    dy = tensor_answer("grad_y", grad_y, shape=want_y.shape)
    if same_values(dy, want_y / 2):
        fail(f"`grad_y` on {on} is half of ds/dy: it holds what ONE use of y in y * y sends "
             "back.", expected=as_tensor_text(want_y), found=show(grad_y),
             misconception="fan-out-sum",
             hint="MulBackward0 returns one gradient per input, and both inputs are y")
    if not same_values(dy, want_y):
        fail(f"`grad_y` on {on} is not ds/dy.", expected=as_tensor_text(want_y),
             found=show(grad_y), hint="call s.grad_fn with torch.tensor(1.0), then the node it "
             "leads to with what it returned")
    dx = tensor_answer("grad_x", grad_x, shape=want_x.shape)
    if same_values(dx, want_x / 2):
        fail(f"`grad_x` on {on} is half of ds/dx: it comes from one use of y in y * y only.",
             expected=as_tensor_text(want_x), found=show(grad_x), misconception="fan-out-sum")
    if same_values(dx, dy):
        fail(f"`grad_x` on {on} is ds/dy: it has not gone through MmBackward0 yet.",
             expected=as_tensor_text(want_x), found=show(grad_x),
             hint="call MmBackward0 (the node both edges of MulBackward0 lead to) with grad_y: "
             "its first result is for x")
    if not same_values(dx, want_x):
        fail(f"`grad_x` on {on} is not ds/dx.", expected=as_tensor_text(want_x),
             found=show(grad_x),
             hint="MmBackward0 called with grad_y returns (gradient for x, gradient for M)")
