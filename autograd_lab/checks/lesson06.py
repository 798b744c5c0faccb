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
from . import attempt, calls_named, check, defining_cell, fail, returned, same_values, show


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


@check
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


@check
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
        raise _UsedTheEngine("my_backward called the engine's backward pass")

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


def _run_mine(my_backward, root, gradient, leaves):
    """Probe side: my_backward(root, gradient), watched. What it did (an Outcome), the nodes
    it ran more than once (name, times), and the leaves afterwards (their .grad)."""
    with _watched() as calls:
        outcome = attempt(my_backward, root, gradient)
    again = [(node.name(), n) for node, n in calls.items()
             if n > 1 and type(node) is not AccumulateGrad]
    return outcome, again, leaves


def _leaves(rng, n=2, shape=(3,)):
    return [rng.uniform(-1.5, 1.5, size=shape).astype(np.float32) for _ in range(n)]


def _build(kind, values, depth, seed):
    """One graph: ``(root, gradient, leaves)``. The same arguments build the same graph, so
    the probe builds it for my_backward where the learner's code runs, and the judge builds
    it again for ``.backward()``."""
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


def _graph(kind, depth, seed, grads_before=None):
    """The graph of one case, its leaves holding ``grads_before`` in .grad."""
    values = _leaves(np.random.default_rng(seed))
    root, gradient, leaves = _build(kind, values, depth, seed)
    for leaf, before in zip(leaves, grads_before or ()):
        leaf.grad = tensor(np.asarray(before, np.float32))
    return root, gradient, leaves


def _what(kind, depth):
    return f"a chain of {depth} operations" if kind == "chain" else \
        f"a {kind} graph of {depth} operations"


#: the hidden cases, in order: (kind, depth, seed, misconception a wrong result shows, .grad
#: the leaves hold before). Chains and trees first (no node is reached twice); then graphs
#: where results are reused, where what goes wrong is a node that passed its gradient on
#: before every part of it had arrived; then .grad that was there, and a deep chain.
_GRAPHS = ([(kind, depth, seed, None, None) for seed in range(3)
           for kind, depth in (("chain", 6), ("tree-shaped", 5))]
          + [("fan-out", 8, 100 + seed, "recursive-backward", None) for seed in range(6)]
          + [("tree-shaped", 4, 7, None, ([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])),
             ("chain", 3000, 11, None, None)])


def _mine_on(my_backward, cases):
    """Probe: my_backward on the graph of every case."""
    if not callable(my_backward):
        return my_backward, None
    results = []
    for kind, depth, seed, _, before in cases:
        root, gradient, leaves = _graph(kind, depth, seed, before)
        results.append(_run_mine(my_backward, root, gradient, leaves))
    return my_backward, results


def _judge_run(what, result):
    """A failure for what my_backward did wrong while running, if anything."""
    __tracebackhide__ = True
    outcome, again, _ = result
    if outcome.raised:
        error = outcome.error
        if type(error).__name__ == "_UsedTheEngine":
            fail("my_backward called the engine (.backward() or torch.autograd.grad): it "
                 "should walk the graph itself.", hint="start from root.grad_fn and call the "
                 "nodes, as in section 2")
        if isinstance(error, RecursionError):
            fail(f"my_backward raised RecursionError on {what}.", hint="a walk that calls "
                 "itself once per node runs out of stack on a deep graph: keep the nodes "
                 "still to visit in a list, and loop")
        fail(f"my_backward raised {type(error).__name__} on {what}: {error}",
             hint="an entry of next_functions can be (None, 0): an input that needs no "
             "gradient (a constant). Skip it")
    if again:
        name, n = again[0]
        fail(f"On {what}, my_backward ran {name} {n} times.", expected="each node once, "
             "with the sum of everything sent to it", found=f"{name} called {n} times",
             misconception="recursive-backward")


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


def _walks_itself(my_backward, results, sources):
    """Fail unless my_backward is a function whose code walks the graph itself."""
    __tracebackhide__ = True
    if results is None:
        fail("`my_backward` should be a function my_backward(root, gradient).",
             found=show(my_backward))
    _, tree = defining_cell(sources, "my_backward")
    engine = [call for call in calls_named(tree, {"backward", "run_backward", "grad"})
              if not call.endswith(".grad") or call.endswith("autograd.grad")] if tree else []
    if engine:
        fail(f"my_backward called the engine ({engine[0]}): it should walk the graph itself, "
             "calling the nodes.", hint="start from root.grad_fn and call the nodes, as in "
             "section 2")


_BASIC = ("z = x * x + x", [1.0, 2.0])


def _mine_basic(my_backward):
    """Probe: my_backward on the lesson's z = x * x + x, x = [1., 2.], gradient ones."""
    if not callable(my_backward):
        return my_backward, None
    x = tensor(_BASIC[1], requires_grad=True)
    return my_backward, [_run_mine(my_backward, x * x + x, tensor([1.0, 1.0]), [x])]


@check(probe=_mine_basic, sources=True)
def my_backward_basic(my_backward, results, *, sources):
    """x * x + x, x = [1., 2.], gradient ones: x.grad = 2x + 1."""
    __tracebackhide__ = True
    _walks_itself(my_backward, results, sources)
    _judge_run(_BASIC[0], results[0])
    x = tensor(_BASIC[1], requires_grad=True)
    (x * x + x).backward(tensor([1.0, 1.0]))
    _check_grads(_BASIC[0], results[0][2], [x], misconception="recursive-backward")


@check(probe=lambda my_backward: _mine_on(my_backward, _GRAPHS), sources=True)
def my_backward_hidden(my_backward, results, *, sources):
    """Random graphs, compared with .backward() on the same graphs built here."""
    __tracebackhide__ = True
    _walks_itself(my_backward, results, sources)
    for (kind, depth, seed, misconception, before), result in zip(_GRAPHS, results):
        what = _what(kind, depth)
        _judge_run(what, result)
        root, gradient, reference = _graph(kind, depth, seed, before)
        root.backward(gradient)
        mine = result[2]
        if before is not None:
            for name, leaf, r, b in zip("xw", mine, reference, before):
                if isinstance(leaf.grad, Tensor) and not same_values(leaf.grad.detach()._data,
                                                                     r.grad._data):
                    fail(f"{name}.grad held {np.asarray(b, np.float32)} before the call; "
                         "backward ADDS into .grad, it does not overwrite it.",
                         expected=repr(r.grad), found=show(leaf.grad))
        _check_grads(what, mine, reference, misconception)


# -- the custom Function -------------------------------------------------------------------
def _apply(Softplus, x):
    """Probe side: Softplus.apply(x), as an Outcome."""
    return attempt(Softplus.apply, x)


def _backward_of(Softplus, x_values, v, dtype=None):
    """Probe side: x.grad after Softplus.apply(x).backward(v) on a fresh x, and what the
    two steps did (Outcomes)."""
    x = tensor(x_values, dtype=dtype, requires_grad=True)
    forward = _apply(Softplus, x)
    backward = None
    if not forward.raised and isinstance(forward.value, Tensor) \
            and forward.value.grad_fn is not None:
        backward = attempt(forward.value.backward, tensor(v, dtype=dtype))
    return forward, backward, x.grad


def _is_function_class(Softplus):
    return isinstance(Softplus, type) and issubclass(Softplus, autograd.Function)


_BASIC_X = [-1.0, 0.0, 2.0]


def _softplus_basic(Softplus):
    """Probe: forward at the lesson's x = [-1., 0., 2.], and backward of y.sum()."""
    if not _is_function_class(Softplus):
        return Softplus, None
    return Softplus, (_apply(Softplus, tensor(_BASIC_X, requires_grad=True)),
                      _backward_of(Softplus, _BASIC_X, [1.0, 1.0, 1.0]))


def _the_class(Softplus, found):
    __tracebackhide__ = True
    if found is not None:
        return
    if getattr(Softplus, "kind", None) != "class":
        fail("`Softplus` should be a class (class Softplus(torch.autograd.Function): ...).",
             found=show(Softplus))
    fail("`Softplus` should subclass torch.autograd.Function "
         "(with `import autograd_lab as torch`).", found=f"bases {list(Softplus._bases)}")


def _forward(outcome, shape):
    """The tensor Softplus.apply(x) returned, or a failure saying what went wrong."""
    __tracebackhide__ = True
    y = returned("Softplus.apply(x)", outcome)
    if not isinstance(y, Tensor) or tuple(y.shape) != tuple(shape):
        fail("Softplus.apply(x) should return one tensor shaped like x.", found=show(y))
    return y


def _gradient(result, shape):
    """x.grad after backward through Softplus, or a failure saying what went wrong."""
    __tracebackhide__ = True
    forward, backward, grad = result
    y = _forward(forward, shape)
    if y.grad_fn is None:
        fail("Softplus.apply(x) has no grad_fn: it was not recorded.", found=show(y))
    returned("backward through Softplus", backward,
             hint="backward(ctx, grad_output) returns one tensor: dL/dx, shaped like x")
    return grad


@check(probe=_softplus_basic)
def softplus_basic(Softplus, found):
    """Forward values at x = [-1., 0., 2.] and the gradient of y.sum()."""
    __tracebackhide__ = True
    _the_class(Softplus, found)
    applied, backward = found
    values = tensor(_BASIC_X)
    y = _forward(applied, values.shape)
    expected = log(1 + exp(values))
    if not same_values(y.detach()._data, expected._data):
        fail("Softplus.apply(x) should compute log(1 + exp(x)).", expected=repr(expected),
             found=show(y.detach()))
    ones = tensor([1.0, 1.0, 1.0])
    _compare_grad(_gradient(backward, values.shape), sigmoid(values), values, ones)


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


_EPS = 1e-6


def _hidden_points():
    """The hidden check's points x and weights v: float64, five each, three times."""
    rng = np.random.default_rng(6)
    return [(rng.uniform(-3, 3, size=5), rng.uniform(-2, 2, size=5)) for _ in range(3)]


def _steps(xs):
    """xs moved by +eps and -eps in one coordinate at a time: the points of the central
    differences, in the order (+e_0, -e_0, +e_1, ...)."""
    out = []
    for i in range(len(xs)):
        step = np.zeros(len(xs))
        step[i] = _EPS
        out += [xs + step, xs - step]
    return out


def _softplus_hidden(Softplus):
    """Probe: at each hidden point, the forward, the backward of v, and the forward at the
    central-difference points; then the backward of every one-hot (the Jacobian's rows, as
    gradcheck builds them) and how many tensors forward saved."""
    if not _is_function_class(Softplus):
        return Softplus, None
    found = []
    for xs, vs in _hidden_points():
        found.append((_apply(Softplus, tensor(xs, dtype=float64)),
                      _backward_of(Softplus, xs, vs, float64),
                      [_apply(Softplus, tensor(p, dtype=float64)) for p in _steps(xs)]))
    xs = _hidden_points()[-1][0]
    rows = [_backward_of(Softplus, xs, np.eye(len(xs))[i], float64) for i in range(len(xs))]
    applied = _apply(Softplus, tensor(xs, dtype=float64, requires_grad=True))
    saved = None
    if not applied.raised and isinstance(applied.value, Tensor) and applied.value.grad_fn:
        saved = attempt(lambda: len(applied.value.grad_fn.saved_tensors))
    return Softplus, (found, rows, saved)


@check(probe=_softplus_hidden)
def softplus_hidden(Softplus, found):
    """A gradient check in float64: forward against log(1 + exp(x)), backward(v) against
    central differences of the learner's own forward, for random x and v; the whole Jacobian
    as gradcheck checks it; then what forward saved."""
    __tracebackhide__ = True
    _the_class(Softplus, found)
    points, rows, saved = found
    for (xs, vs), (applied, backward, stepped) in zip(_hidden_points(), points):
        y = _forward(applied, xs.shape)
        if not same_values(y._data, np.log1p(np.exp(xs))):
            fail("Softplus.apply(x) should compute log(1 + exp(x)).",
                 expected=repr(log(1 + exp(tensor(xs, dtype=float64)))), found=show(y))
        x, v = tensor(xs, dtype=float64), tensor(vs, dtype=float64)
        grad = _gradient(backward, xs.shape)
        # v^T J by central differences of the learner's own forward, one input at a time
        # (softplus acts elementwise, but the check does not assume it)
        values = [_forward(o, xs.shape).detach()._data for o in stepped]
        numeric = np.array([vs @ (values[2 * i] - values[2 * i + 1]) / (2 * _EPS)
                            for i in range(len(xs))])
        _compare_grad(grad, tensor(numeric, dtype=float64), x, v)
    # the Jacobian both ways, with gradcheck's tolerances (row i: backward of e_i)
    xs = _hidden_points()[-1][0]
    analytic = np.array([_gradient(r, xs.shape).detach()._data for r in rows])
    values = [_forward(o, xs.shape).detach()._data for o in points[-1][2]]
    numeric = np.array([(values[2 * j] - values[2 * j + 1]) / (2 * _EPS)
                        for j in range(len(xs))]).T
    if not np.allclose(analytic, numeric, rtol=1e-3, atol=1e-5):
        fail("Softplus does not pass torch.autograd.gradcheck: its backward and central "
             "differences of its forward disagree.", found=f"x = {tensor(xs, dtype=float64)!r}")
    if saved is None or saved.raised or not saved.value:
        fail("forward saved nothing with ctx.save_for_backward.",
             hint="ctx.save_for_backward(x) keeps x for backward and lets autograd check it "
             "was not changed in place since; read it back with ctx.saved_tensors")
