"""Checks of lesson 07, inside backward.

Every expected value is computed here with the engine from the lesson's own expressions: the
prediction from z = x * x + x, the walk by hand against ``backward()`` on the blog's product.
"""

from .. import mm, tensor
from . import (Prediction, as_tensor_text, calls_named, check, fail, parsed, same_values, show,
               tensor_answer)


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
def _product():
    """The exercise's graph: x = [[2, 1]], y = x @ M, s = (y * y).sum(); after s.backward():
    (dy, dx), both by the engine's own backward (y.retain_grad())."""
    x = tensor([[2.0, 1.0]], requires_grad=True)
    y = mm(x, tensor([[1.0, 2.0], [3.0, 4.0]]))
    y.retain_grad()
    (y * y).sum().backward()
    return y.grad._data, x.grad._data


def _cells_assigning(sources, names):
    """The learner's code cells (parsed) that assign one of ``names`` at their top level."""
    import ast
    return [tree for tree in parsed(sources)
            if any(isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in names
                or isinstance(t, ast.Tuple) and any(getattr(e, "id", None) in names
                                                     for e in t.elts)
                for t in node.targets) for node in tree.body)]


@check(sources=True)
def by_hand(grad_y, grad_x, *, sources):
    """grad_y and grad_x of s = (y * y).sum(), y = x @ M, computed by calling the nodes."""
    __tracebackhide__ = True
    want_y, want_x = _product()
    cells = _cells_assigning(sources, {"grad_y", "grad_x"})
    engine = [c for tree in cells[-1:] for c in calls_named(tree, {"backward", "grad"})]
    if engine:
        fail(f"Your answer calls {engine[0]}: the engine did the walk. Call the nodes yourself, "
             "from s.grad_fn down.")
    dy = tensor_answer("grad_y", grad_y, shape=want_y.shape)
    if same_values(dy, want_y / 2):
        fail("`grad_y` is half of ds/dy: it holds what ONE use of y in y * y sends back.",
             expected=as_tensor_text(want_y), found=show(grad_y), misconception="fan-out-sum",
             hint="MulBackward0 returns one gradient per input, and both inputs are y")
    if not same_values(dy, want_y):
        fail("`grad_y` is not ds/dy.", expected=as_tensor_text(want_y), found=show(grad_y),
             hint="call s.grad_fn with torch.tensor(1.0), then the node it leads to with what "
             "it returned")
    dx = tensor_answer("grad_x", grad_x, shape=want_x.shape)
    if same_values(dx, want_x / 2):
        fail("`grad_x` is half of ds/dx: it comes from one use of y in y * y only.",
             expected=as_tensor_text(want_x), found=show(grad_x), misconception="fan-out-sum")
    if same_values(dx, dy):
        fail("`grad_x` is ds/dy: it has not gone through MmBackward0 yet.",
             expected=as_tensor_text(want_x), found=show(grad_x),
             hint="call y.grad_fn with grad_y: its first result is for x")
    if not same_values(dx, want_x):
        fail("`grad_x` is not ds/dx.", expected=as_tensor_text(want_x), found=show(grad_x),
             hint="MmBackward0 called with grad_y returns (gradient for x, gradient for M)")
