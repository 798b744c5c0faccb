"""Checks of lesson 06, inside backward.

Every expected value is computed here with the engine: the predictions from the lesson's own
expressions, ``my_backward`` against ``.backward()`` on the same graphs built twice, the custom
Function against central differences of its own forward.
"""
import contextlib

import numpy as np

from .. import autograd, exp, float64, log, sigmoid, tanh, tensor
from .._tensor import Tensor
from ..autograd.graph import AccumulateGrad, Node
from . import fail, show, same_values


def _names(name, value):
    """A list of node names (type names or ``.name()``), or a clear failure."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        fail(f"`{name}` should be a list of node names, as strings "
             "(like \"MulBackward0\").", found=show(value))
    return ["AccumulateGrad" if v == "torch::autograd::AccumulateGrad" else v for v in value]


def _fan_out():
    """The lesson's z = x * x + x, with x = 3."""
    x = tensor(3.0, requires_grad=True)
    return x, x * x + x


def next_prediction(add_next, same_accumulator):
    __tracebackhide__ = True
    _, z = _fan_out()
    expected = [type(n).__name__ for n, _ in z.grad_fn.next_functions]
    found = _names("add_next", add_next)
    if found != expected:
        hint = None
        if found == expected[::-1]:
            hint = "next_functions follows the order of the inputs: (x * x) + x"
        elif len(found) != len(expected):
            hint = "one entry per input of the addition: it has two inputs"
        fail("Your prediction of z.grad_fn.next_functions is off.", expected=expected,
             found=found, hint=hint)
    if not isinstance(same_accumulator, bool):
        fail("`same_accumulator` should be True or False.", found=show(same_accumulator))
    mul = z.grad_fn.next_functions[0][0]
    truth = mul.next_functions[0][0] is mul.next_functions[1][0]
    if same_accumulator != truth:
        fail("Your prediction of whether both edges of MulBackward0 lead to the same node is off.",
             expected=truth, found=same_accumulator,
             hint="a leaf has exactly one AccumulateGrad, shared by every operation that uses it")


def order_prediction(order, x_grad):
    __tracebackhide__ = True
    from ..viz import trace_backward
    x, z = _fan_out()
    trace = trace_backward(z)
    expected = [type(s.node).__name__ for s in trace.steps]
    found = _names("order", order)
    if found != expected:
        if found.count("AccumulateGrad") > 1:
            fail("AccumulateGrad runs once, not once per edge that leads to it.",
                 expected=expected, found=found, misconception="recursive-backward")
        fail("Your prediction of the order the nodes run in is off.", expected=expected,
             found=found, hint="a node runs only after every node that sends it a gradient")
    if isinstance(x_grad, Tensor):
        fail("`x_grad` should be a plain number (like 1.5), not a tensor.", found=show(x_grad))
    if isinstance(x_grad, bool) or not isinstance(x_grad, (int, float)):
        fail("`x_grad` should be a number.", found=show(x_grad))
    truth = x.grad.item()
    if not np.isclose(x_grad, truth):
        hint = "dz/dx of x*x + x is 2x + 1: both paths count"
        if np.isclose(x_grad, 2 * x.item()) or np.isclose(x_grad, 1.0):
            fail("x.grad is the sum over every path from z to x.", expected=truth, found=x_grad,
                 misconception="recursive-backward")
        fail("Your prediction of x.grad is off.", expected=truth, found=x_grad, hint=hint)


# -- my_backward ---------------------------------------------------------------------------
class _UsedTheEngine(Exception):
    pass


@contextlib.contextmanager
def _watched():
    """While my_backward runs, the engine's backward pass refuses to run (the walk must be
    the learner's own: ``backward()`` and ``autograd.grad`` both call ``run_backward``), and
    every call of a node is counted: ``{node: calls}``."""
    def refuse(*args, **kwargs):
        raise _UsedTheEngine()

    def counted(node, *grads):
        calls[node] = calls.get(node, 0) + 1
        return call(node, *grads)
    calls = {}
    kept, call = autograd.run_backward, Node.__call__
    autograd.run_backward, Node.__call__ = refuse, counted
    try:
        yield calls
    finally:
        autograd.run_backward, Node.__call__ = kept, call


def _run_mine(my_backward, root, gradient, what):
    """my_backward(root, gradient), watched; any error it raises becomes a clear failure."""
    __tracebackhide__ = True
    try:
        with _watched() as calls:
            my_backward(root, gradient)
    except _UsedTheEngine:
        fail("my_backward called the engine (.backward() or torch.autograd.grad): it should "
             "walk the graph itself.", hint="start from root.grad_fn and call the nodes, as "
             "in section 2")
    except RecursionError:
        fail(f"my_backward raised RecursionError on {what}.", hint="a walk that calls "
             "itself once per node runs out of stack on a deep graph: keep the nodes still "
             "to visit in a list, and loop")
    except Exception as error:      # the learner's bug: say which, not a traceback from here
        fail(f"my_backward raised {type(error).__name__} on {what}: {error}",
             hint="an entry of next_functions can be (None, 0): an input that needs no "
             "gradient (a constant). Skip it")
    again = [(node.name(), n) for node, n in calls.items()
             if n > 1 and type(node) is not AccumulateGrad]
    if again:
        name, n = again[0]
        fail(f"On {what}, my_backward ran {name} {n} times.", expected="each node once, "
             "with the sum of everything sent to it", found=f"{name} called {n} times",
             misconception="recursive-backward")


def _leaves(rng, n=2, shape=(3,)):
    return [rng.uniform(-1.5, 1.5, size=shape).astype(np.float32) for _ in range(n)]


def _build(kind, values, depth, seed):
    """One graph: ``(root, gradient, leaves)``. The same arguments build the same graph, so
    the check builds it twice: once for my_backward, once for ``.backward()``."""
    rng = np.random.default_rng(seed)
    leaves = [tensor(v, requires_grad=True) for v in values]
    const = tensor(rng.uniform(0.5, 1.5, size=values[0].shape).astype(np.float32))
    if kind == "chain":             # one path to each leaf: nothing meets anywhere but a leaf
        t = leaves[0]
        for i in range(depth):
            t = [lambda a: a * 1.001, lambda a: tanh(a), lambda a: a + const][i % 3](t)
        root = t * leaves[1]
    elif kind == "tree-shaped":            # leaves used several times, every other node once
        parts = []
        for i in range(depth):
            a, b = leaves[i % 2], leaves[(i + 1) % 2]
            parts.append([tanh(a) * b, a * const - b, exp(a * 0.5) + b * b][i % 3])
        root = parts[0]
        for p in parts[1:]:
            root = root + p
    else:                           # "fan-out": intermediate results used more than once
        pool = list(leaves)
        for i in range(depth):
            a = pool[rng.integers(len(pool))]
            b = pool[rng.integers(len(pool))]
            op = rng.integers(6)
            if op == 0:
                t = a + a
            elif op == 1:
                t = b * b
            elif op == 2:
                t = tanh(a) * b
            elif op == 3:
                t = a - b * const
            elif op == 4:
                t = (a + b) * 0.5
            else:
                t = tanh(a) + a
            pool.append(t)
        root = pool[-1]
        for t in pool[len(leaves):-1]:      # every intermediate result reaches the root
            root = root + t * 0.1
    gradient = tensor(rng.uniform(-1, 1, size=tuple(root.shape)).astype(np.float32))
    return root, gradient, leaves


def _what(kind, depth):
    return f"a chain of {depth} operations" if kind == "chain" else \
        f"a {kind} graph of {depth} operations"


def _compare(my_backward, kind, depth, seed, grads_before=None):
    """Run my_backward and .backward() on the same graph; the leaves whose .grad differ."""
    __tracebackhide__ = True
    rng = np.random.default_rng(seed)
    values = _leaves(rng)
    results = []
    for mine in (True, False):
        root, gradient, leaves = _build(kind, values, depth, seed)
        for leaf, before in zip(leaves, grads_before or ()):
            leaf.grad = tensor(before)
        if mine:
            _run_mine(my_backward, root, gradient, _what(kind, depth))
        else:
            root.backward(gradient)
        results.append(leaves)
    return results


def _check_grads(what, mine, reference, misconception=None):
    __tracebackhide__ = True
    for name, leaf, ref in zip("xw", mine, reference):
        if ref.grad is None:
            continue
        found = leaf.grad
        if not isinstance(found, Tensor):
            fail(f"After my_backward on {what}, leaf {name}.grad is not a tensor.",
                 expected=repr(ref.grad), found=show(found),
                 hint="an AccumulateGrad node's .variable is its leaf: add the gradient that "
                 "reaches the node into .variable.grad")
        if found.grad_fn is not None:
            fail(f"After my_backward, {name}.grad carries a grad_fn: your walk was recorded "
                 "as a graph of its own.", found=show(found),
                 hint="calling a node with grad mode on records what it computes: run the "
                 "walk inside `with torch.no_grad():`")
        if not same_values(found.detach()._data, ref.grad._data, rtol=1e-4, atol=1e-5):
            fail(f"After my_backward on {what}, {name}.grad differs from what "
                 ".backward() gives.", expected=repr(ref.grad), found=show(found),
                 misconception=misconception)


def my_backward_basic(my_backward):
    """x * x + x, x = [1., 2.], gradient ones: x.grad = 2x + 1."""
    __tracebackhide__ = True
    if not callable(my_backward):
        fail("`my_backward` should be a function my_backward(root, gradient).",
             found=show(my_backward))
    results = []
    for mine in (True, False):
        x = tensor([1.0, 2.0], requires_grad=True)
        z = x * x + x
        if mine:
            _run_mine(my_backward, z, tensor([1.0, 1.0]), "z = x * x + x")
        else:
            z.backward(tensor([1.0, 1.0]))
        results.append(x)
    _check_grads("z = x * x + x", [results[0]], [results[1]],
                 misconception="recursive-backward")


def my_backward_hidden(my_backward):
    """Random graphs, compared with .backward(): chains and trees first (no node is reached
    twice), then graphs where results are reused; then a deep chain and .grad that was there."""
    __tracebackhide__ = True
    if not callable(my_backward):
        fail("`my_backward` should be a function my_backward(root, gradient).",
             found=show(my_backward))
    for seed in range(3):
        for kind, depth in (("chain", 6), ("tree-shaped", 5)):
            _check_grads(_what(kind, depth), *_compare(my_backward, kind, depth, seed))
    for seed in range(6):
        # chains and trees came out right: what goes wrong now is a node that passed its
        # gradient on before every part of it had arrived
        _check_grads(_what("fan-out", 8), *_compare(my_backward, "fan-out", 8, 100 + seed),
                     misconception="recursive-backward")
    before = [np.ones(3, np.float32), np.full(3, 2.0, np.float32)]
    mine, ref = _compare(my_backward, "tree-shaped", 4, 7, grads_before=before)
    for name, leaf, r, b in zip("xw", mine, ref, before):
        if isinstance(leaf.grad, Tensor) and not same_values(leaf.grad.detach()._data,
                                                             r.grad._data):
            fail(f"{name}.grad held {b} before the call; backward ADDS into .grad, it does "
                 "not overwrite it.", expected=repr(r.grad), found=show(leaf.grad))
    _check_grads(_what("tree-shaped", 4), mine, ref)
    _check_grads(_what("chain", 3000), *_compare(my_backward, "chain", 3000, 11))


# -- the custom Function -------------------------------------------------------------------
def _softplus_class(Softplus):
    __tracebackhide__ = True
    if not isinstance(Softplus, type):
        fail("`Softplus` should be a class (class Softplus(torch.autograd.Function): ...).",
             found=show(Softplus))
    if not issubclass(Softplus, autograd.Function):
        fail("`Softplus` should subclass torch.autograd.Function "
             "(with `import autograd_lab as torch`).",
             found=f"bases {[b.__name__ for b in Softplus.__mro__[1:]]}")


def _apply(Softplus, x):
    __tracebackhide__ = True
    try:
        y = Softplus.apply(x)
    except Exception as error:
        fail(f"Softplus.apply(x) raised {type(error).__name__}: {error}")
    if not isinstance(y, Tensor) or tuple(y.shape) != tuple(x.shape):
        fail("Softplus.apply(x) should return one tensor shaped like x.", found=show(y))
    return y


def _backward(Softplus, x, v):
    """x.grad after Softplus.apply(x).backward(v), or a clear failure."""
    __tracebackhide__ = True
    y = _apply(Softplus, x)
    if y.grad_fn is None:
        fail("Softplus.apply(x) has no grad_fn: it was not recorded.", found=show(y))
    try:
        y.backward(v)
    except Exception as error:
        fail(f"backward through Softplus raised {type(error).__name__}: {error}",
             hint="backward(ctx, grad_output) returns one tensor: dL/dx, shaped like x")
    return x.grad


def softplus_basic(Softplus):
    """Forward values at x = [-1., 0., 2.] and the gradient of y.sum()."""
    __tracebackhide__ = True
    _softplus_class(Softplus)
    values = np.array([-1.0, 0.0, 2.0], np.float32)
    y = _apply(Softplus, tensor(values, requires_grad=True))
    expected = log(1 + exp(tensor(values)))
    if not same_values(y.detach()._data, expected._data):
        fail("Softplus.apply(x) should compute log(1 + exp(x)).", expected=repr(expected),
             found=show(y.detach()))
    ones = tensor([1.0, 1.0, 1.0])
    grad = _backward(Softplus, tensor(values, requires_grad=True), ones)
    _compare_grad(grad, sigmoid(tensor(values)), tensor(values), ones)


def _compare_grad(grad, expected, x, v):
    """x.grad against the expected v^T J; the usual slips named."""
    __tracebackhide__ = True
    if not isinstance(grad, Tensor) or tuple(grad.shape) != tuple(x.shape):
        fail("x.grad after backward through Softplus should be a tensor shaped like x.",
             found=show(grad))
    found = grad.detach()._data
    if same_values(found, expected._data):
        return
    xs, vs = x._data.astype(np.float64), v._data.astype(np.float64)
    if same_values(found, 1 / (1 + np.exp(xs))) or same_values(found, vs / (1 + np.exp(xs))):
        fail("The gradient of log(1 + exp(x)) is off.", expected=repr(expected),
             found=show(grad), hint="the chain rule: d/dx log(u) = u'/u, and u = 1 + exp(x) "
             "has u' = exp(x); exp(x) / (1 + exp(x)) is sigmoid(x)")
    if same_values(found, 1 / (1 + np.exp(-xs))):
        fail("backward returned the derivative alone, not grad_output times it.",
             expected=repr(expected), found=show(grad),
             misconception="backward-ignores-grad-output")
    fail("The gradient through Softplus does not match central differences of its forward.",
         expected=repr(expected), found=show(grad))


def softplus_hidden(Softplus):
    """A gradient check in float64: forward against log(1 + exp(x)), backward(v) against
    central differences of the learner's own forward, for random x and v; then what forward
    saved."""
    __tracebackhide__ = True
    _softplus_class(Softplus)
    rng = np.random.default_rng(6)
    eps = 1e-6
    for _ in range(3):
        xs, vs = rng.uniform(-3, 3, size=5), rng.uniform(-2, 2, size=5)
        y = _apply(Softplus, tensor(xs, dtype=float64))
        if not same_values(y._data, np.log1p(np.exp(xs))):
            fail("Softplus.apply(x) should compute log(1 + exp(x)).",
                 expected=repr(log(1 + exp(tensor(xs, dtype=float64)))), found=show(y))
        x, v = tensor(xs, dtype=float64, requires_grad=True), tensor(vs, dtype=float64)
        grad = _backward(Softplus, x, v)
        # v^T J by central differences of the learner's own forward, one input at a time
        # (softplus acts elementwise, but the check does not assume it)
        numeric = np.empty(5)
        for i in range(5):
            step = np.zeros(5)
            step[i] = eps
            up = _apply(Softplus, tensor(xs + step, dtype=float64)).detach()._data
            down = _apply(Softplus, tensor(xs - step, dtype=float64)).detach()._data
            numeric[i] = vs @ (up - down) / (2 * eps)
        _compare_grad(grad, tensor(numeric, dtype=float64), x, v)
    x = tensor(xs, dtype=float64, requires_grad=True)
    try:
        passed = autograd.gradcheck(Softplus.apply, (x,), raise_exception=False)
    except Exception as error:
        fail(f"torch.autograd.gradcheck(Softplus.apply, (x,)) raised {type(error).__name__}: "
             f"{error}")
    if passed is not True:
        fail("Softplus does not pass torch.autograd.gradcheck.", found=f"x = {x!r}")
    y = _apply(Softplus, x)
    if not y.grad_fn.saved_tensors:
        fail("forward saved nothing with ctx.save_for_backward.",
             hint="ctx.save_for_backward(x) keeps x for backward and lets autograd check it "
             "was not changed in place since; read it back with ctx.saved_tensors")
