"""Checks of lesson 08, backward by hand and in order.

Every expected value is computed here: the prediction from the lesson's own expression with
the engine, ``my_backward`` against ``.backward()`` on the same engine graphs built twice, and
on graphs of the check's own making (``graphs.py``), which the engine cannot walk, against a
right walk of them. Those graphs, drawn afresh for each learner in the hidden test, are what
makes the walk the learner's own: a call of the engine, under any name, fails on them, and
each of their nodes refuses to run twice.
"""
import contextlib

import numpy as np

from .. import autograd, exp, tanh, tensor
from .._tensor import Tensor
from ..autograd.graph import AccumulateGrad, Node
from . import (Prediction, as_tensor_text, attempt, check, fail, graphs, same_values, show)
from . import ANY, Many, Maybe, Outcome
from .lesson07 import _fan_out, _names


@check
def order_prediction(order, x_grad):
    __tracebackhide__ = True
    found = _names("order", order)
    if isinstance(x_grad, Tensor):
        fail("`x_grad` should be a plain number (like 1.5), not a tensor.", found=show(x_grad))
    if isinstance(x_grad, bool) or not isinstance(x_grad, (int, float)):
        fail("`x_grad` should be a number.", found=show(x_grad))
    from ..viz import trace_backward
    x, z = _fan_out()
    trace = trace_backward(z)
    expected = [type(s.node).__name__ for s in trace.steps]
    verdict = Prediction()
    if found != expected:
        if found.count("AccumulateGrad") > 1:
            verdict.off(f"The order: you predicted {found}: AccumulateGrad runs once, not once "
                        "per edge that leads to it.", misconception="recursive-backward")
        else:
            verdict.off(f"The order: you predicted {found}.",
                        hint="a node runs only after every node that sends it a gradient")
    truth = x.grad.item()
    if not np.isclose(x_grad, truth):
        if np.isclose(x_grad, 2 * x.item()) or np.isclose(x_grad, 1.0):
            verdict.off(f"x.grad: you predicted {x_grad}, the gradient of one path only: "
                        "x.grad is the sum over every path from z to x.",
                        misconception="recursive-backward")
        else:
            verdict.off(f"x.grad: you predicted {x_grad}.",
                        hint="dz/dx of x*x + x: both uses of x in the product count, and the "
                        "addition's too")
    verdict.tell()


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
        for _ in range(depth):
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


_BACKWARDS = {}


def _after_backward(kind, depth, seed, before):
    """The leaves of a case's engine graph after ``.backward()``: the same for every learner,
    so worked out once a process (the judge reads their ``.grad`` only)."""
    key = repr((kind, depth, seed, before))
    if key not in _BACKWARDS:
        root, gradient, leaves = _graph(kind, depth, seed, before)
        root.backward(gradient)
        _BACKWARDS[key] = leaves
    return _BACKWARDS[key]


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
             ("chain", 4000, 11, None, None)])


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
        text = str(error)
        if "None" in text or "NoneType" in text:
            hint = ("an entry of next_functions can be (None, 0): an input that needs no "
                    "gradient (a constant). Skip it")
        elif isinstance(error, KeyError):
            hint = ("a node reaches `ready` only once every edge into it has delivered: add "
                    "what each node returns into `arrived` for the node it goes to")
        elif "size" in text or "shape" in text:
            hint = ("a node of one input returns a bare tensor, not a tuple: wrap it, "
                    "`outs = (outs,)`, before pairing it with next_functions (section 1)")
        else:
            hint = None
        fail(f"my_backward raised {type(error).__name__} on {what}: {error}", hint=hint)
    if again:
        name, n = again[0]
        fail(f"On {what}, my_backward ran {name} {n} times.", expected="each node once, "
             "with the sum of everything sent to it", found=f"{name} called {n} times",
             misconception="recursive-backward")


def _check_grads(what, mine, reference, misconception=None):
    __tracebackhide__ = True
    for name, (leaf, ref) in zip("xw", zip(mine, reference, strict=True)):
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
        values, want = found.detach()._data, ref.grad._data
        if not same_values(values, want, rtol=1e-4, atol=1e-5):
            # a multiple of the right gradient is the seed mishandled, not the walk's order
            scale = np.ravel(values)[0] / np.ravel(want)[0] if np.ravel(want)[0] else 0.0
            scaled = same_values(values, scale * want, rtol=1e-4, atol=1e-5)
            fail(f"After my_backward on {what}, {name}.grad differs from what "
                 ".backward() gives.", expected=repr(ref.grad), found=show(found),
                 misconception=None if scaled else misconception,
                 hint=f"it is {scale:g} times the right one: start the walk from `gradient` "
                 "itself" if scaled else None)


def _square_plus(values):
    x = tensor(values, requires_grad=True)
    return x * x + x, tensor([1.0, 1.0]), [x]


def _doubled_twice(values):
    x = tensor(values, requires_grad=True)
    a = x * 2
    return a + a, tensor([1.0, 1.0]), [x]


#: the visible cases: (what, how to build the graph, its arguments, misconception a wrong
#: result shows). Section 4's fan-outs, where a node that passes its gradient on before every
#: part has arrived loses some, or runs once per path; a chain too deep for a walk that calls
#: itself once per node (and whose one-input nodes show a walk that does not wrap their bare
#: tensor); a random graph with fan-out. (The hidden cases are other graphs.)
_BASIC = (("z = x * x + x", _square_plus, ([1.0, 2.0],), "recursive-backward"),
          ("b = a + a with a = x * 2", _doubled_twice, ([1.0, -2.0],), "recursive-backward"),
          (_what("chain", 3000), _graph, ("chain", 3000, 21), None),
          (_what("fan-out", 8), _graph, ("fan-out", 8, 99), "recursive-backward"))


#: how many leaves each visible case's graph has (the leaves my_backward's run sends back)
_BASIC_LEAVES = (1, 1, 2, 2)


def _runs_shape(leaves):
    """What a probe of my_backward returns: per case, its Outcome, the nodes it ran more than
    once (name, times) and that case's leaves."""
    return ANY, Maybe([(Outcome, Many((str, int)), [Tensor] * n) for n in leaves])


def _mine_basic(my_backward):
    """Probe: my_backward on each visible case."""
    if not callable(my_backward):
        return my_backward, None
    return my_backward, [_run_mine(my_backward, *build(*args)) for _, build, args, _ in _BASIC]


# -- graphs of the check's own making -----------------------------------------------------
# (the engine cannot walk them, whatever name it is called by: graphs.py)
def _on_grader_graphs(my_backward, cases):
    """Probe side: my_backward on the graph of each case, (kind, depth, seed, before): what it
    did, and the graph's leaves afterwards."""
    results = []
    for kind, depth, seed, before in cases:
        root, gradient, leaves = graphs.build(graphs.spec(seed, kind, depth, before))
        results.append((attempt(my_backward, root, gradient), leaves))
    return results


def _judge_grader_graph(case, result):
    """A failure for what my_backward did on a case's graph of the check's making, if it did
    not give each leaf what a right walk gives."""
    __tracebackhide__ = True
    kind, depth, seed, before = case
    what = f"{_what(kind, depth)} of the check's own making"
    outcome, leaves = result
    if outcome.raised:
        error, text = outcome.error, str(outcome.error)
        if "called a second time" in text:
            fail(f"On {what}, my_backward called a node a second time.",
                 expected="each node once, with the sum of everything sent to it",
                 found=text, misconception="recursive-backward")
        if isinstance(error, AttributeError) and any(f"'{slot}'" in text for slot in (
                "_pending", "_next", "_seq", "_saved", "_extras")):
            fail(f"On {what}, my_backward handed the graph to the engine ({text}): its nodes "
                 "have only what a walk by hand needs (next_functions, a call with the "
                 "gradient, an AccumulateGrad's .variable).",
                 hint="walk the graph yourself: start from root.grad_fn and call the nodes, "
                 "as in section 2")
        _judge_run(what, (outcome, [], leaves))
    graph = graphs.spec(seed, kind, depth, before)
    reached = graphs.reached(graph)
    for i, (leaf, want) in enumerate(zip(leaves, graphs.reference(graph), strict=True)):
        name = "xw"[i]
        held = graph["before"][i] if before else None
        if i not in reached:
            continue
        found = leaf.grad
        if not isinstance(found, Tensor):
            fail(f"After my_backward on {what}, leaf {name}.grad is not a tensor.",
                 expected=as_tensor_text(want), found=show(found),
                 hint="an AccumulateGrad node's .variable is its leaf: add the gradient that "
                 "reaches the node into .variable.grad")
        values = found.detach()._data
        if same_values(values, want, rtol=1e-4, atol=1e-5):
            continue
        if held is not None and same_values(values, want - np.asarray(held, np.float32),
                                            rtol=1e-4, atol=1e-5):
            fail(f"{name}.grad held {as_tensor_text(held)} before the call; backward ADDS into "
                 ".grad, it does not overwrite it.", expected=as_tensor_text(want),
                 found=show(found))
        fail(f"After my_backward on {what}, {name}.grad is not what a right walk gives.",
             expected=as_tensor_text(want), found=show(found),
             misconception="recursive-backward")


#: the visible graphs of the check's making: a fan-out, and one whose leaves hold a .grad
#: already (backward adds into it)
_GRADER_BASIC = (("fan-out", 8, 20261, False), ("fan-out", 6, 20262, True))


def _runs_shape(leaves, grader=0):
    """What a probe of my_backward returns: per engine case, its Outcome, the nodes it ran
    more than once (name, times) and that case's leaves; per graph of the check's making, its
    Outcome and the graph's two leaves."""
    return ANY, Maybe([[(Outcome, Many((str, int)), [Tensor] * n) for n in leaves],
                       [(Outcome, [Tensor] * 2)] * grader])


def _mine_basic(my_backward):
    """Probe: my_backward on each visible case."""
    if not callable(my_backward):
        return my_backward, None
    return my_backward, [[_run_mine(my_backward, *build(*args)) for _, build, args, _ in _BASIC],
                         _on_grader_graphs(my_backward, _GRADER_BASIC)]


def _is_function(my_backward, results):
    __tracebackhide__ = True
    if results is None:
        fail("`my_backward` should be a function my_backward(root, gradient).",
             found=show(my_backward))


@check(probe=_mine_basic, reply=lambda: _runs_shape(_BASIC_LEAVES, len(_GRADER_BASIC)))
def my_backward_basic(my_backward, results):
    """x * x + x, a + a, a chain of 3,000 operations and a random graph with fan-out, each
    against .backward() on the same graph built here; then two graphs of the check's own
    making (one whose leaves hold a .grad already) against a right walk of them."""
    __tracebackhide__ = True
    _is_function(my_backward, results)
    engine, grader = results
    for (what, build, args, misconception), result in zip(_BASIC, engine, strict=True):
        _judge_run(what, result)
        root, gradient, reference = build(*args)
        root.backward(gradient)
        _check_grads(what, result[2], reference, misconception=misconception)
    for case, result in zip(_GRADER_BASIC, grader, strict=True):
        _judge_grader_graph(case, result)


def _mine_hidden(my_backward, *, drawn=()):
    """Probe: my_backward on the hidden engine graphs and on the drawn graphs of the check's
    making."""
    if not callable(my_backward):
        return my_backward, None
    engine = []
    for kind, depth, seed, _, before in _GRAPHS:
        root, gradient, leaves = _graph(kind, depth, seed, before)
        engine.append(_run_mine(my_backward, root, gradient, leaves))
    return my_backward, [engine, _on_grader_graphs(my_backward, drawn)]


def _draw_graphs(rng, **settings):
    """The hidden graphs of the check's making: fan-outs, one whose leaves hold a .grad, and a
    chain deeper than a walk that recurses can go, each from a seed no one knows before."""
    seeds = [int(s) for s in rng.integers(1, 2**62, size=5)]
    return {"drawn": [("fan-out", 8, seeds[0], False), ("fan-out", 12, seeds[1], False),
                      ("fan-out", 10, seeds[2], False), ("fan-out", 7, seeds[3], True),
                      ("chain", 4000, seeds[4], False)]}


@check(probe=_mine_hidden, reply=lambda *, drawn=(): _runs_shape([2] * len(_GRAPHS), len(drawn)),
       draw=_draw_graphs)
def my_backward_hidden(my_backward, results, *, drawn=()):
    """Random graphs, compared with .backward() on the same graphs built here, and graphs of
    the check's own making, drawn afresh for each learner, against a right walk of them."""
    __tracebackhide__ = True
    _is_function(my_backward, results)
    engine, grader = results
    for (kind, depth, seed, misconception, before), result in zip(_GRAPHS, engine,
                                                                  strict=True):
        what = _what(kind, depth)
        _judge_run(what, result)
        reference = _after_backward(kind, depth, seed, before)
        mine = result[2]
        if before is not None:
            for name, (leaf, r), b in zip("xw", zip(mine, reference, strict=True), before):
                if isinstance(leaf.grad, Tensor) and not same_values(leaf.grad.detach()._data,
                                                                     r.grad._data):
                    fail(f"{name}.grad held {np.asarray(b, np.float32)} before the call; "
                         "backward ADDS into .grad, it does not overwrite it.",
                         expected=repr(r.grad), found=show(leaf.grad))
        _check_grads(what, mine, reference, misconception)
    for case, result in zip(drawn, grader, strict=True):
        _judge_grader_graph(case, result)
