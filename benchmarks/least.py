"""The least engine: what recording a graph in Python over numpy costs at the very least.

``bench.py --least`` runs the tiny ops, the chain and the fan-in through this module as a fourth
engine, with the same workload code as torch and autograd_lab. It does only what any engine of
this design must: per operation one numpy call, a node (its edges, what it saved, its creation
number) and a tensor; backward collects the nodes, sorts them newest first and runs each
formula once. It has nothing else autograd_lab does to behave as PyTorch does: no dtype
promotion, version counters (in-place checks), hooks, grad mode, views, anomaly mode, errors,
create_graph or broadcasting. So its ratio to torch is a floor for ours: a target below it
cannot be met by an engine written this way, and the gap above it is what PyTorch's behaviour
costs us.

Its numbers are still PyTorch's for these workloads: tanh's gradient ``1 - y*y`` is rounded
once, as PyTorch's fused multiply-add rounds it (in float64, then to float32), as
autograd_lab does; bench.py checks its gradients against torch's like the others'."""
import gc
import itertools

import numpy as np

WORKLOADS = (2, 4, 5)       # bench.py's workloads whose operations this engine has

_seq = itertools.count()
_new = object.__new__
_numbers = {}               # Python float -> 0-d float32 array (numpy converts a float per call)


def _number(b):
    c = _numbers.get(b)
    if c is None:
        c = _numbers[b] = np.array(b, np.float32)
    return c


class Node:
    __slots__ = ("next", "saved", "seq", "pending", "backward")


class Accumulate:           # a leaf's AccumulateGrad
    __slots__ = ("next", "seq", "pending", "tensor")


class Tensor:
    __slots__ = ("data", "node", "_grad", "requires_grad")

    def __init__(self, data, node=None, requires_grad=False):
        self.data, self.node, self._grad, self.requires_grad = data, node, None, requires_grad
        if requires_grad and node is None:
            acc = self.node = Accumulate()
            acc.next, acc.seq, acc.pending, acc.tensor = (), -1, None, self

    def __mul__(self, other):
        if type(other) is Tensor:
            return _record(self.data * other.data, _mul_back, (self.node, other.node),
                           (other.data, self.data))
        d = self.data
        # (a number times an array: numpy converts a Python float on every call; times a
        #  numpy scalar it is quickest as it is)
        c = _number(other) if type(d) is np.ndarray else other
        return _record(d * c, _scale_back, (self.node,), c)

    def __add__(self, other):
        return _record(self.data + other.data, _add_back, (self.node, other.node), None)

    def __pow__(self, exponent):            # (2 only: the tiny ops' y ** 2)
        return _record(np.square(self.data), _square_back, (self.node,), self.data)

    def tanh(self):
        out = np.tanh(self.data)
        return _record(out, _tanh_back, (self.node,), out)

    def sum(self):
        return _record(np.asarray(self.data.sum()), _sum_back, (self.node,), np.shape(self.data))

    def backward(self):
        backward(self.node, np.ones_like(self.data))

    @property
    def grad(self):
        return None if self._grad is None else Tensor(self._grad)

    @grad.setter
    def grad(self, value):
        self._grad = None if value is None else value.data

    def detach(self):
        return self

    def numpy(self):
        return self.data


def tensor(data, requires_grad=False):
    return Tensor(np.array(data), requires_grad=requires_grad)


def _record(out, backward_fn, edges, saved):
    node = _new(Node)
    node.next, node.saved, node.seq, node.pending, node.backward = (
        edges, saved, next(_seq), None, backward_fn)
    t = _new(Tensor)
    t.data, t.node, t._grad, t.requires_grad = out, node, None, True
    return t


def _mul_back(saved, g):
    b, a = saved
    return g * b, g * a


def _scale_back(c, g):
    return (g * c,)


def _add_back(saved, g):
    return g, g


def _square_back(a, g):
    return (g * (a + a),)


def _tanh_back(y, g):
    wide = y.astype(np.float64)
    return (g * (1.0 - wide * wide).astype(y.dtype),)


def _sum_back(shape, g):
    return (np.broadcast_to(g, shape),)


def backward(root, seed):
    found = [root]
    root.pending = seed
    for node in found:                      # every node reachable, once
        for nxt in node.next:
            if nxt.pending is None:
                nxt.pending = False
                found.append(nxt)
    found.sort(key=lambda n: n.seq, reverse=True)   # newest first: a topological order
    collecting = gc.isenabled()
    gc.disable()
    try:
        for node in found:
            g = node.pending
            node.pending = None
            if g is False:                  # reachable, but sent no gradient
                continue
            if type(node) is Accumulate:
                t = node.tensor
                t._grad = g if t._grad is None else t._grad + g
                continue
            for nxt, gi in zip(node.next, node.backward(node.saved, g)):
                waiting = nxt.pending
                nxt.pending = gi if waiting is False else waiting + gi
            node.saved = None
    finally:
        if collecting:
            gc.enable()
