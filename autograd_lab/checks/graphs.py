"""Backward graphs of the checks' own making, for the exercises that walk a graph by hand
(lesson 07 calls its nodes, lesson 08 writes the whole walk).

A walk by hand uses what PyTorch shows of a node: ``next_functions``, a call with the
gradient (a tuple back, a bare tensor for one input), ``name()``, and at the end of every
path a leaf's ``AccumulateGrad`` with its ``.variable``. The nodes here have exactly that and
nothing of what the engine's own backward pass reads, so ``backward()``, ``autograd.grad`` or
any function of the engine handed such a graph fails, whatever name it is called by: only a
walk of the learner's own reaches the leaves. Each node also runs once, as backward runs it:
a second call raises, so a walk that follows every path, or passes a gradient on before all
of it has arrived, shows in what it returns.

Every graph is made from a spec of plain data (``spec``): the probe builds it where the
learner's walk runs, and the judge builds it again and walks it with ``reference`` for the
gradients the leaves should get.
"""
import numpy as np

from .._tensor import Tensor, _wrap

_CLASSES: dict[str, type] = {}


class GraderNode:
    """One node of a check's graph: ``maps[i]`` turns the gradient that reaches it into the
    gradient for input ``i`` (None: an input that needs none, shown as ``(None, 0)``)."""

    __slots__ = ("inputs", "maps", "shape", "ran", "__weakref__")

    def __init__(self, inputs, maps, shape):
        self.inputs, self.maps, self.shape, self.ran = list(inputs), list(maps), shape, False

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"

    @property
    def next_functions(self):
        return tuple((None, 0) if node is None else (node, 0) for node in self.inputs)

    def __call__(self, *grads):
        # (PyTorch's words where a node is called with what is not a gradient)
        if len(grads) != 1:
            raise TypeError(f"{self.name()}: expected 1 argument (the gradient of its output), "
                            f"got {len(grads)}")
        grad = grads[0]
        if not isinstance(grad, Tensor):
            raise TypeError(f"{self.name()}: argument 0 is not a Variable")
        if tuple(grad.shape) != self.shape:
            raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index "
                               f"0 - got {list(grad.shape)} but expected shape compatible with "
                               f"{list(self.shape)}")
        if self.ran:
            raise RuntimeError(f"{self.name()} was called a second time: backward runs each "
                               "node once, with the sum of every gradient sent to it")
        self.ran = True
        g = np.asarray(grad.detach()._data, dtype=np.float32)
        outs = tuple(None if m is None else _wrap(np.asarray(m(g), dtype=np.float32))
                     for m in self.maps)
        return outs[0] if len(outs) == 1 else outs


def node_class(name):
    """The class of a check's node named ``name`` (``type(node).__name__`` reads it)."""
    if name not in _CLASSES:
        _CLASSES[name] = type(name, (GraderNode,), {"__slots__": (), "__module__": "builtins"})
    return _CLASSES[name]


def _matrix(rng, n, scale=1.0):
    return (rng.uniform(-1.0, 1.0, size=(n, n)) * scale / np.sqrt(n)).astype(np.float32)


def spec(seed, kind, depth, before=False, n=3, leaves=2):
    """The random graph of ``seed`` as plain data: ``{"n", "leaves": [values], "nodes":
    [(name, [input], [map])], "gradient", "before"}``. An input is ``("leaf", i)``, ``("node",
    j)`` with j an earlier node, or None (a constant); a map is a matrix, or a vector that
    scales element by element; the last node is the root's. ``chain``: one path to each
    leaf, ``depth`` nodes of near-identity maps (deep enough for a walk that recurses to run
    out of stack); ``fan-out``: results used several times, constants among the inputs.
    ``before``: the leaves hold a ``.grad`` already. The same seed makes the same graph, in
    the kernel and in the grader."""
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-1.5, 1.5, size=n).round(3).tolist() for _ in range(leaves)]
    nodes = []
    if kind == "chain":
        for i in range(depth):
            scale = (1.0 + rng.uniform(-1e-3, 1e-3, size=n)).astype(np.float32)
            source = ("leaf", 0) if i == 0 else ("node", i - 1)
            nodes.append(("MulBackward0", [source], [scale.tolist()]))
        nodes.append(("MulBackward0", [("node", depth - 1), ("leaf", 1)],
                      [_matrix(rng, n).tolist(), _matrix(rng, n).tolist()]))
    else:
        pool = [("leaf", i) for i in range(leaves)]
        for i in range(depth):
            names = ("AddBackward0", "MulBackward0", "SubBackward0", "MmBackward0")
            a, b = (pool[int(rng.integers(len(pool)))] for _ in range(2))
            inputs, maps = [a, b], [_matrix(rng, n).tolist(), _matrix(rng, n).tolist()]
            if rng.uniform() < 0.3:         # a constant among the inputs: a (None, 0) edge
                inputs[1], maps[1] = None, None
            if rng.uniform() < 0.3:         # one input: the node returns a bare tensor
                inputs, maps = inputs[:1], maps[:1]
            nodes.append((names[int(rng.integers(len(names)))], inputs, maps))
            pool.append(("node", i))
        # every result made reaches the root, so that fan-out meets there too
        made = list(range(depth))
        nodes.append(("AddBackward0", [("node", j) for j in made],
                      [_matrix(rng, n).tolist() for _ in made]))
    gradient = rng.uniform(-1.0, 1.0, size=n).round(3).tolist()
    grads = [rng.uniform(-1.0, 1.0, size=n).round(3).tolist() for _ in range(leaves)] \
        if before else None
    return {"n": n, "leaves": values, "nodes": nodes, "gradient": gradient, "before": grads}


def build(graph):
    """``(root, gradient, leaves)``: the graph of a spec, its leaves real tensors that require
    grad (their ``.grad`` set to the spec's ``before``), its nodes GraderNodes, the root a
    tensor whose grad_fn is the last node."""
    from .. import tensor

    n = graph["n"]
    leaves = [tensor(v, requires_grad=True) for v in graph["leaves"]]
    for leaf, before in zip(leaves, graph["before"] or ()):
        leaf.grad = tensor(before)
    made = []
    for name, inputs, maps in graph["nodes"]:
        ins = [None if s is None else leaves[s[1]]._grad_accumulator() if s[0] == "leaf"
               else made[s[1]] for s in inputs]
        fns = [None if m is None else _applies(np.asarray(m, np.float32)) for m in maps]
        made.append(node_class(name)(ins, fns, (n,)))
    root = _wrap(np.zeros(n, np.float32), None, True)
    root._grad_fn = made[-1]
    return root, tensor(graph["gradient"]), leaves


def _applies(m):
    return (lambda g: m @ g) if m.ndim == 2 else (lambda g: m * g)


def reference(graph):
    """What each leaf's ``.grad`` holds after a right walk: each node run once, in an order
    where every node comes after all that send to it, the parts that meet at a node summed
    (float64, and then float32, as a tensor holds it)."""
    nodes, n = graph["nodes"], graph["n"]
    arrived = {len(nodes) - 1: np.asarray(graph["gradient"], np.float64)}
    leaves = [np.asarray(b, np.float64) if graph["before"] else np.zeros(n)
              for b in (graph["before"] or [None] * len(graph["leaves"]))]
    # a node's inputs are earlier nodes: from the root down is an order that waits
    for j in range(len(nodes) - 1, -1, -1):
        grad = arrived.pop(j, None)
        if grad is None:
            continue
        _, inputs, maps = nodes[j]
        for source, m in zip(inputs, maps):
            if source is None:
                continue
            m = np.asarray(m, np.float64)
            part = m @ grad if m.ndim == 2 else m * grad
            if source[0] == "leaf":
                leaves[source[1]] = leaves[source[1]] + part
            else:
                arrived[source[1]] = arrived.get(source[1], 0) + part
    return [leaf.astype(np.float32) for leaf in leaves]


def reached(graph):
    """Which leaves any path reaches (a leaf no path reaches keeps its .grad as it was)."""
    found = set()
    for _, inputs, _ in graph["nodes"]:
        found.update(s[1] for s in inputs if s is not None and s[0] == "leaf")
    return found
