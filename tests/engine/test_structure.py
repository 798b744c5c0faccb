"""How the graph is built and torn down, beyond the numbers it computes.

* Depth: backward and deallocation work on chains far deeper than Python's recursion limit.
* Memory: references only point backwards (tensor -> node -> inputs), so a dropped graph is
  freed by reference counting alone, with nothing left for the cycle collector.
* AccumulateGrad: one per leaf, holding the leaf; the leaf holds it weakly.
* Gradient buffers: ``.grad`` never shares memory with another ``.grad`` or with the caller's
  ``gradient``, and later backward passes add into it in place.
* Version counters: bumped by every in-place change, shared with ``detach()``.
* Size: every function of the backward pass (``_core/engine.py``) fits on one screen.

Tests taking ``lib`` run twice, under autograd_lab and under PyTorch (when installed), so
each assertion is checked against PyTorch's own behaviour.
"""
import ast
import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab import autograd

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["autograd_lab", "torch"])
def lib(request):
    if request.param == "torch":
        return request.getfixturevalue("torch")
    return al


# -- size ----------------------------------------------------------------------------------
SCREEN = 60     # lines, the docstring included


def test_every_function_of_the_backward_pass_fits_on_a_screen():
    """The backward pass is the code learners are sent to read (lesson 00). Where speed needs
    a loop written out, the loop is a sweep of its own, chosen once per pass
    (docs/maintainers/speed.md), not another branch in one long function."""
    tree = ast.parse((REPO / "autograd_lab" / "_core" / "engine.py").read_text())
    lengths = {f.name: f.end_lineno - f.lineno + 1 for f in ast.walk(tree)
               if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assert {"run_backward", "toposort"} <= lengths.keys()
    assert {name: n for name, n in lengths.items() if n > SCREEN} == {}


# -- depth ---------------------------------------------------------------------------------
def test_backward_through_a_100000_op_chain():
    x = al.tensor(1.0, dtype=al.float64, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0001
    y.backward()
    # d y / d x = 1.0001 ** 100000, rounded once per step along the way
    assert x.grad.item() == pytest.approx(1.0001 ** 100_000, rel=1e-9)


def test_backward_through_a_deep_chain_of_mixed_ops():
    x = al.tensor([0.5, 1.5], dtype=al.float64, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = (y.exp() + 1).log() + y.sigmoid().log()      # log(1 + e^y) + log(sigmoid(y)) = y
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad._data, 2 * x._data, rtol=1e-6)


def test_deleting_a_1000000_op_chain_does_not_crash():
    """Freeing the root frees a million nodes one after another; a recursive deallocation
    would overflow the C stack and kill the interpreter, so this runs in a fresh process."""
    code = (
        "import weakref\n"
        "import autograd_lab as al\n"
        "x = al.tensor(1.0, requires_grad=True)\n"
        "y = x * 1.0001\n"
        "first = weakref.ref(y.grad_fn)\n"
        "for _ in range(999_999):\n"
        "    y = y * 1.0001\n"
        "del y\n"
        "assert first() is None, 'the chain was not freed'\n"
        "print('freed')\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "freed"


# -- no reference cycles -------------------------------------------------------------------
def double(grad):              # a hook that captures no tensor
    return grad * 2


def observe(*args):
    return None


class Exp(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)        # its own output
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class Mul(autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)     # its inputs
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a


def fan_out(x, w):
    a = x * 2
    b = a.exp() + a.sin() + a * a + a
    return (b * w).sum(), [a, b]


def saved_outputs(x, w):
    parts = [x.exp(), x.tanh(), x.sigmoid(), x.sqrt(), x.reciprocal(), x ** w, 2 ** x,
             x.max(), x.norm(), x.prod(), x.relu()]
    total = sum(p.sum() for p in parts)
    return total, parts


def leaf_used_twice(x, w):
    a = x * x
    b = x + x
    c = a @ w + b.dot(w)
    return c, [a, b]


def retain_grad(x, w):
    a = x.exp()
    a.retain_grad()
    b = (a * w).sum()
    b.retain_grad()
    return b * 3, [a, b]


def hooks(x, w):
    x.register_hook(double)
    a = x * w
    a.register_hook(double)
    a.grad_fn.register_hook(observe)
    a.grad_fn.register_prehook(observe)
    b = a.tanh()
    b.register_hook(double)
    return b.sum(), [a, b]


def custom_functions(x, w):
    a = Exp.apply(x)
    b = Mul.apply(a, w)
    c = Exp.apply(b)
    return c.sum(), [a, b, c]


def in_place(x, w):
    a = x * 1.0
    a.mul_(w)
    a += x
    a[0] = w[1] * 3
    b = a.sin()             # saves a, not b: b may change
    b.add_(1)
    return b.sum(), [a, b]


def views_and_indexing(x, w):
    a = x.reshape(1, 3).expand(2, 3).T
    b = a[1:, 0] * w[[0, 0]] + a.flatten()[:2]
    return al.cat([b, a.sum(0)]).sum(), [a, b]


def everything(x, w):
    """All of the above in one graph: hooks on a leaf, a node and an intermediate, retain_grad,
    views of an intermediate, custom Functions saving their input and their output, an
    in-place change, a leaf used twice."""
    x.register_hook(double)
    a = Exp.apply(x * w)
    a.retain_grad()
    a.register_hook(double)
    a.grad_fn.register_prehook(observe)
    v = a.reshape(1, 3).T[1:, 0]
    b = Mul.apply(v.exp(), w[:2]) + x[:2].tanh()
    b.add_(1)
    return (b * b).sum() + a.sum(), [a, v, b]


GRAPHS = [fan_out, saved_outputs, leaf_used_twice, retain_grad, hooks, custom_functions,
          in_place, views_and_indexing, everything]


def _graph_objects(root, intermediates):
    """Weak references to every node reachable from root, to root and to the intermediates."""
    seen, stack = {}, [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen[id(node)] = node
            stack.extend(fn for fn, _ in node.next_functions)
    objects = [root] + intermediates + list(seen.values())
    return [(type(o).__name__, weakref.ref(o)) for o in objects]


def _build(graph, after):
    """Build the graph, maybe run a backward, and return weak references only: every strong
    reference the building made dies with this frame."""
    x = al.tensor([0.5, 1.0, 2.0], dtype=al.float64, requires_grad=True)
    w = al.tensor([1.5, -0.5, 0.25], dtype=al.float64, requires_grad=True)
    root, intermediates = graph(x, w)
    refs = _graph_objects(root, intermediates)
    if after == "backward":
        root.backward()
    elif after == "backward(retain_graph=True)":
        root.backward(retain_graph=True)
    elif after == "grad(create_graph=True)":
        gx, gw = autograd.grad(root, [x, w], create_graph=True)
        refs += _graph_objects((gx * gw).sum(), [gx, gw])
    return refs


@pytest.mark.parametrize("after", ["nothing", "backward", "backward(retain_graph=True)",
                                   "grad(create_graph=True)"])
@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__)
def test_dropped_graph_is_freed_by_reference_counting(graph, after):
    gc.collect()
    gc.disable()                # only reference counting may free anything from here on
    try:
        refs = _build(graph, after)
        alive = [name for name, ref in refs if ref() is not None]
        assert alive == [], f"still alive after dropping the root: {alive}"
        assert gc.collect() == 0, "the graph left cyclic garbage behind"
    finally:
        gc.enable()


def _tracked_per_op(fwd, ops):
    """GC-tracked objects a live graph keeps per recorded operation."""
    x = al.tensor([0.1, 0.5, -0.3, 0.9], requires_grad=True)
    gc.collect()
    before = len(gc.get_objects())
    root = fwd(x)
    gc.collect()
    kept = len(gc.get_objects()) - before
    del root
    return kept / ops


def chain(x):
    for _ in range(1000):
        x = x * 1.0001
    return x


def tiny_ops(x):                # benchmarks/bench.py's workload 2
    y = x
    for _ in range(250):
        y = (((y * 0.5) + x).tanh()) ** 2
    return y


def test_a_live_graph_keeps_few_objects_for_the_collector():
    """The cyclic collector walks every tracked object a live graph keeps, every full
    collection (a fifth of a long chain's time, before the graph is even used). An operation
    keeps a node and its tuple of edges, as the least engine (benchmarks/least.py) must; a
    saved tensor adds its check tuple and version counter, and a saved input the tensor itself
    (PyTorch keeps it). Anything more per operation -- a per-node dict, a list of edges, a
    tuple per saved value -- shows here first."""
    assert _tracked_per_op(chain, 1000) <= 2.01
    # per 4 ops: 4 nodes, 4 edge tuples; tanh's and pow's checks; the tanh output pow saves
    # and its version counter
    assert _tracked_per_op(tiny_ops, 1000) <= 3.01


def test_leaf_is_freed_with_its_graph():
    gc.disable()
    try:
        x = al.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).exp().sum()
        y.backward()
        leaf, grad, acc = weakref.ref(x), weakref.ref(x.grad), weakref.ref(x._grad_accumulator())
        del x, y
        assert (leaf(), grad(), acc()) == (None, None, None)
    finally:
        gc.enable()


# -- AccumulateGrad ------------------------------------------------------------------------
def test_one_accumulate_grad_per_leaf(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    a, b, c = x * 2, x.exp(), x * x
    acc = a.grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert b.grad_fn.next_functions[0][0] is acc
    assert c.grad_fn.next_functions[0][0] is acc and c.grad_fn.next_functions[1][0] is acc
    assert acc.variable is x


def test_accumulate_grad_holds_its_leaf(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    leaf = weakref.ref(x)
    del x
    assert leaf() is not None                       # the graph keeps the leaf alive
    assert y.grad_fn.next_functions[0][0].variable is leaf()
    y.sum().backward()
    assert leaf().grad.tolist() == [3.0, 3.0]
    del y
    assert leaf() is None


def test_leaf_holds_its_accumulate_grad_weakly():
    """(PyTorch's AccumulateGrad takes no weak references, so this one is engine-only.)"""
    x = al.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    acc = weakref.ref(y.grad_fn.next_functions[0][0])
    del y
    assert acc() is None, "the leaf kept its AccumulateGrad alive"
    # a new graph gets a new AccumulateGrad, and gradients still reach the same .grad
    (x * 3).sum().backward()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


# -- gradient buffers are never aliased ------------------------------------------------------
def _bump(t, lib):
    with lib.no_grad():
        t.add_(100)


SIBLINGS = {
    "a + b": lambda a, b, lib: (a + b).sum(),
    "a + b broadcast": lambda a, b, lib: (a + b.reshape(2, 1)).sum(),
    "a - b": lambda a, b, lib: (a - b).sum(),
    "a * 1 + b": lambda a, b, lib: (a * 1 + b).sum(),
    "cat": lambda a, b, lib: lib.cat([a, b]).sum(),
    "stack": lambda a, b, lib: lib.stack([a, b]).sum(),
    "expand": lambda a, b, lib: a.reshape(1, 2).expand(3, 2).sum() + (b + a).sum(),
    "the same leaf twice": lambda a, b, lib: (a + a).sum() + (b.view(2) + a).sum(),
}


@pytest.mark.parametrize("name", SIBLINGS)
def test_sibling_grads_are_independent(lib, name):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    SIBLINGS[name](a, b, lib).backward()
    before = b.grad.tolist()
    _bump(a.grad, lib)
    assert b.grad.tolist() == before


PASS_THROUGH = {
    "leaf itself": lambda x: x,
    "x + 1": lambda x: x + 1,
    "x - 1": lambda x: x - 1,
    "reshape": lambda x: x.reshape(2, 2),
    "view": lambda x: x.view(2, 2),
    "clone": lambda x: x.clone(),
    "expand": lambda x: x.expand(1, 4),
    "to float64": lambda x: x.double(),
    "slice": lambda x: x[:],
}


# PyTorch 2.13's AccumulateGrad keeps ("steals") a gradient tensor nobody else refers to. A
# view of the caller's gradient qualifies although it shares the caller's storage, so there
# x.grad and v alias. autograd_lab copies instead: a .grad that changes when the caller's
# tensor changes is a trap, not a lesson.
PYTORCH_ALIASES = {"reshape", "view"}


@pytest.mark.parametrize("name", PASS_THROUGH)
def test_grad_does_not_alias_the_callers_gradient(lib, name):
    if lib is not al and name in PYTORCH_ALIASES:
        pytest.skip("PyTorch lets .grad share storage with a view of the caller's gradient")
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = PASS_THROUGH[name](x)
    v = lib.ones(y.shape, dtype=y.dtype) * 0.5
    y.backward(v)
    assert x.grad.tolist() == [0.5] * 4
    _bump(x.grad, lib)                      # .grad changed: the caller's v is not
    assert v.flatten().tolist() == [0.5] * 4
    _bump(v, lib)                           # v changed: .grad is not
    assert x.grad.tolist() == [100.5] * 4


def test_accumulation_is_in_place(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert g is x.grad
    assert g.tolist() == [5.0, 5.0]


def test_accumulation_adds_into_an_assigned_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    mine = lib.tensor([10.0, 20.0])
    x.grad = mine
    (x * 2).sum().backward()
    assert x.grad is mine
    assert mine.tolist() == [12.0, 22.0]


def test_accumulation_survives_zero_(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    g.zero_()
    (x * 3).sum().backward()
    assert g is x.grad and g.tolist() == [3.0, 3.0]


# -- version counters ----------------------------------------------------------------------
def test_every_in_place_change_bumps_the_version(lib):
    x = lib.tensor([1.0, 2.0, 3.0])
    changes = [lambda: x.add_(1), lambda: x.sub_(1), lambda: x.mul_(2), lambda: x.div_(2),
               lambda: x.zero_(), lambda: x.fill_(3), lambda: x.__setitem__(0, 5.0),
               lambda: x.__iadd__(1), lambda: x.__imul__(2)]
    for n, change in enumerate(changes, start=1):
        change()
        assert x._version == n


def test_out_of_place_ops_leave_the_version_alone(lib):
    x = lib.tensor([1.0, 2.0, 3.0])
    y = x + 1
    _ = x * 2, x.exp(), x.sum(), x[0], x.reshape(3, 1), x.detach()
    assert x._version == 0 and y._version == 0


def test_version_is_counted_on_non_leaves_too(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.add_(1)
    y.mul_(x)
    y[0] = 0.0
    assert y._version == 3
    assert x._version == 0


def test_detach_shares_the_version_counter(lib):
    x = lib.tensor([1.0, 2.0])
    d = x.detach()
    d.add_(1)
    assert (x._version, d._version) == (1, 1)
    x.mul_(2)
    assert (x._version, d._version) == (2, 2)
    assert x.tolist() == d.tolist() == [4.0, 6.0]


def test_data_does_not_share_the_version_counter(lib):
    x = lib.tensor([1.0, 2.0])
    d = x.data
    d.add_(1)
    assert x._version == 0 and d._version == 1
    assert x.tolist() == [2.0, 3.0]             # ... though it shares the values


def test_in_place_change_through_data_goes_unnoticed(lib):
    """``.data`` is the escape hatch: the saved-tensor check does not see its changes."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y * y
    y.data.mul_(10)
    z.sum().backward()
    assert x.grad.tolist() == [20.0, 40.0]       # 2 * y, with y's changed values


def _check_views_share_the_version_counter(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
    for view in (lambda: x[0], lambda: x.view(4), lambda: x.T, lambda: x[:, 1]):
        before = x._version
        view().add_(1)
        assert x._version == before + 1


def test_views_share_the_version_counter():
    _check_views_share_the_version_counter(al)


def test_views_share_the_version_counter_in_pytorch(torch):
    _check_views_share_the_version_counter(torch)
    # ... which is what makes the saved-tensor check catch a change through a view
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = w * 1
    z = y * y
    y[0:1].mul_(10)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


@pytest.mark.parametrize("lib_name", ["autograd_lab", "torch"])
def test_inplace_through_a_view_rewrites_the_base_history(lib_name):
    """A view changed in place changes its base: the base's history gets a CopySlices node,
    the view becomes a view of the new base, and a view of a leaf gets PyTorch's error."""
    lib = al if lib_name == "autograd_lab" else pytest.importorskip("torch")
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    y = w * 1
    v = y[0:1]
    v.mul_(10)
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    (y * y).sum().backward()
    assert w.grad.tolist() == [200.0, 4.0]
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad"):
        w[0].add_(1)
    with lib.no_grad():                         # an optimizer-style update is allowed
        w[0].add_(1)
    assert w.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("lib_name", ["autograd_lab", "torch"])
def test_an_empty_broadcast_result_gives_each_input_its_own_shape(lib_name):
    """(1, 0) * (2, 0) broadcasts with no change of size: the gradient must still be summed
    back to (1, 0)."""
    lib = al if lib_name == "autograd_lab" else pytest.importorskip("torch")
    a = lib.zeros(2, 0, requires_grad=True)
    b = lib.zeros(1, 0, requires_grad=True)
    (a * b).sum().backward()
    assert tuple(a.grad.shape) == (2, 0) and tuple(b.grad.shape) == (1, 0)
