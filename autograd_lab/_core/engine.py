"""The backward pass: sort the graph, sweep it from the root, accumulate, free.

1. ``toposort`` lists every node reachable from the roots so that each node comes before
   the nodes it sends gradients to. It walks the graph with a growing list, not recursion,
   so a chain of a million operations sorts like a short one.
2. ``run_backward`` walks that list once. By the time a node is reached, every gradient
   flowing into it has arrived and been summed in its ``_pending`` slot (fan-out: ``x * x``
   sends two). The node's backward turns it into its inputs' gradients, which are added to
   what those nodes have waiting. An AccumulateGrad adds what reaches it into its leaf's
   ``.grad``. The walk is one of two loops, chosen once per pass: ``_plain_sweep`` for a
   plain ``backward()``, ``_careful_sweep`` when hooks, ``create_graph``, captured inputs,
   NaN checks or a step-through ask for more at every node.
3. Unless ``retain_graph``, each node's saved tensors are freed right after it has run.
"""
import gc
from itertools import chain
from operator import attrgetter

import numpy as np

from .dtype import from_numpy_dtype
from .grad_mode import _State
from .graph import FREED, AccumulateGrad, forward_stack_warning, intact, unbroadcast
from .hooks import check_hook_result, check_hook_results
from .tensor import _wrap
from .zeros import ZeroArray

_creation_order = attrgetter("_seq")
_FOUND = object()   # toposort's mark of a node it has reached
_NOTHING = {}       # the extras of a node that has none (read only)


class _Undefined:
    """The ``_pending`` of a node reached by an undefined gradient only: a node's hook returned
    None for the edge to it. PyTorch's engine still runs such a node (its hooks see None, its
    saved tensors are freed, a custom Function's backward gets zeros), so this one does too,
    in the careful sweep. A gradient that arrives besides replaces it (``UNDEFINED + g``)."""

    __slots__ = ()

    def __add__(self, g):
        return g

    def __repr__(self):
        return "UNDEFINED"


UNDEFINED = _Undefined()


def toposort(roots):
    """Every node reachable from ``roots``, each before the nodes it sends gradients to.

    A node is always created after the nodes that produced its inputs, so its creation
    number (``_seq``) is larger than theirs: newest first is a topological order. (PyTorch's
    engine orders its ready queue by the same kind of sequence number.) Collecting the nodes
    is one pass over a list that grows as the pass discovers nodes -- no recursion, however
    deep the graph -- and the sort is nearly free, since they come almost in order already.

    An AccumulateGrad is the exception. PyTorch gives it the highest priority: a leaf's
    gradient is added into ``.grad`` (and its hooks run) the moment the last node feeding it
    has run, before any older node runs (which may yet raise, leaving that ``.grad`` set). So
    it has no creation order of its own: each sort gives it a ``_seq`` half a step below its
    last feeder's, the smallest ``_seq`` among the nodes that send it gradients (and a leaf
    whose edge from that node comes first, first)."""
    found = list(roots)
    keep, accumulator = found.append, AccumulateGrad        # (local: hot loop)
    # Each node is found once. Its mark is its _pending slot, None until the pass reaches it
    # (a root's holds its seed already), reset below: a set of every node would add, for a
    # long chain, a quarter to what the graph itself weighs.
    for node in found:                  # the loop also visits the nodes appended below
        for nxt in node._next:
            if nxt is None:
                continue
            if type(nxt) is accumulator:
                # (a node's first edge first: PyTorch's ready queue hands out the leaves one
                # node makes ready in the order of its edges)
                if nxt._pending is None:
                    nxt._pending = _FOUND
                    keep(nxt)
                    nxt._seq = node._seq - 0.5 - node._next.index(nxt) * 1e-6
                elif nxt._seq > node._seq - 1:      # (else below this node's whatever its edge)
                    after = node._seq - 0.5 - node._next.index(nxt) * 1e-6
                    if after < nxt._seq:
                        nxt._seq = after
            elif nxt._pending is None:
                nxt._pending = _FOUND
                keep(nxt)
    for node in found:
        if node._pending is _FOUND:
            node._pending = None
    found.sort(key=_creation_order, reverse=True)
    return found


def run_backward(roots, grads, keep_graph=False, create_graph=False, capture=None,
                 accumulate=True, on_step=None, run_captured=False):
    """Send ``grads`` (one per root node) backward through the graph.

    ``capture``: nodes whose incoming gradient the caller wants back (``autograd.grad`` and
    ``backward(inputs=...)``), returned as a dict. Only the nodes on the way to them run; the
    captured nodes themselves too with ``run_captured`` (``backward(inputs=[non_leaf])`` runs
    the input's grad_fn, ``autograd.grad`` does not). ``accumulate=False`` leaves every ``.grad``
    alone. ``on_step(node, grad_in, grads_out)``, if given, sees every node as it runs
    (``viz.trace_backward`` records the pass with it).
    """
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    for node, g in zip(roots, grads):
        node._pending = g if node._pending is None else node._pending + g
    order = toposort(list(roots))
    leads = None if capture is None else _leading_to(order, capture, run_captured)
    prev_mode = _State.enabled
    _State.enabled = create_graph       # the backward is itself recorded only for create_graph
    # The sweep makes no reference cycles, so the cyclic collector has nothing to find here;
    # left on, it would rescan the whole live graph every few hundred temporaries.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with np.errstate(all="ignore"):     # inf and nan pass silently, as in PyTorch
            nan_check = _State.anomaly and _State.check_nan
            nodes = iter(order)
            # Most passes are plain backward() calls: the plain sweep. It hands the rest of
            # the pass to the careful sweep if a ZeroTensor may turn up.
            if (capture is None and accumulate and on_step is None and not nan_check
                    and not create_graph):
                nodes = _plain_sweep(nodes, keep_graph)
                if not nodes:
                    return {}
            return _careful_sweep(nodes, keep_graph, create_graph, capture, leads, accumulate,
                                  nan_check, on_step)
    except BaseException:
        for node in order:              # leave no half-summed gradient for the next pass
            node._pending = None
        raise
    finally:
        _State.enabled = prev_mode
        if collecting:
            gc.enable()


def _plain_sweep(nodes, keep_graph):
    """Run ``nodes`` (in topological order) as a plain ``backward()`` does: a node's formula
    straight on its gradient; ``_careful_step`` for one with hooks, broadcast inputs or saved
    values to check. Returns ``()``, or the nodes left for ``_careful_sweep`` (see ``_cut``)."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    node = None
    try:
        for node in nodes:
            g = node._pending
            if g is None:
                continue
            node._pending = None
            # Each saved tensor must be at the version it was saved at (a freed node's check
            # always fails); the first check is written out: most nodes save one or none.
            checks = node._checks
            if node._extras is None and (
                    checks is None or checks[2][0] == checks[3]
                    and (len(checks) == 4 or intact(checks))):
                outs = node.backward(g)
            elif node.makes_zeros:      # from here on, a gradient may be a ZeroTensor's
                node._pending = g
                return chain((node,), nodes)
            else:
                outs = _careful_step(node, g)
            # most nodes have one input or two: no zip (it costs 0.1 µs a node)
            nexts = node._next
            n = len(nexts)
            if n == 1:
                nxt, gi = nexts[0], outs[0]
                if nxt is not None and gi is not None:
                    waiting = nxt._pending
                    nxt._pending = gi if waiting is None else waiting + gi
                elif nxt is not None:
                    return _cut(node, outs, 0, keep_graph, nodes)
            elif n == 2:
                nxt, n2 = nexts
                gi, g2 = outs
                if nxt is not None and gi is not None:
                    waiting = nxt._pending
                    nxt._pending = gi if waiting is None else waiting + gi
                elif nxt is not None:
                    return _cut(node, outs, 0, keep_graph, nodes)
                if n2 is not None and g2 is not None:
                    waiting = n2._pending
                    n2._pending = g2 if waiting is None else waiting + g2
                elif n2 is not None:
                    return _cut(node, outs, 1, keep_graph, nodes)
                g2 = None
            elif n and not _send(nexts, outs):      # (n == 0: a leaf's AccumulateGrad)
                return _cut(node, outs, n, keep_graph, nodes)
            # Drop our references at once: a gradient that only ``_pending`` refers to
            # can become a leaf's .grad without a copy (see Tensor._accumulate).
            outs = gi = g = waiting = None
            if not keep_graph and node._saved:
                node._saved, node._checks = None, FREED
    except BaseException:
        if _State.anomaly and node is not None:
            forward_stack_warning(node)     # where the failing node was made
        raise
    return ()


def _careful_sweep(nodes, keep_graph, create_graph=False, capture=None, leads=None,
                   accumulate=True, nan_check=False, on_step=None):
    """Run ``nodes`` (in topological order), each through ``_careful_step``; with ``capture``,
    only the nodes in ``leads`` run. Returns the gradients captured."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    captured = {}
    wanted = None if capture is None else leads.union(capture)  # the nodes sent gradients
    node = None
    try:
        for node in nodes:
            g = node._pending
            if g is None:
                continue
            node._pending = None
            g = None if g is UNDEFINED else g   # reached, with no gradient (see _Undefined)
            if leads is not None and node not in leads:
                # Not run. Its tensor's hooks still see the gradient that reached it (as
                # in PyTorch), and a captured node hands it back.
                g = _hooked(node, g)
                if node in capture:
                    captured[node] = g
                g = None
                continue
            outs = _careful_step(node, g, create_graph, capture, captured, accumulate,
                                 nan_check, on_step, wanted)
            nexts = node._next
            if wanted is not None:  # gradients only for nodes on the way to an input
                nexts = [nxt if nxt in wanted else None for nxt in nexts]
            n = len(nexts)      # as in _plain_sweep (a zip here cost create_graph passes 1%)
            if n == 1:
                nxt, gi = nexts[0], outs[0]
                if nxt is not None and gi is not None:
                    waiting = nxt._pending
                    nxt._pending = gi if waiting is None else waiting + gi
                elif nxt is not None and nxt._pending is None:
                    nxt._pending = UNDEFINED
            elif n == 2:
                nxt, n2 = nexts
                gi, g2 = outs
                if nxt is not None and gi is not None:
                    waiting = nxt._pending
                    nxt._pending = gi if waiting is None else waiting + gi
                elif nxt is not None and nxt._pending is None:
                    nxt._pending = UNDEFINED
                if n2 is not None and g2 is not None:
                    waiting = n2._pending
                    n2._pending = g2 if waiting is None else waiting + g2
                elif n2 is not None and n2._pending is None:
                    n2._pending = UNDEFINED
                g2 = None
            else:
                _send(nexts, outs)
            outs = gi = g = waiting = None
            if not keep_graph and node._saved:
                node._saved, node._checks = None, FREED
    except BaseException:
        if _State.anomaly and node is not None:
            forward_stack_warning(node)     # where the failing node was made
        raise
    return captured


def _cut(node, outs, sent, keep_graph, nodes):
    """The plain sweep's way out when ``node`` left an edge without a gradient (a hook
    returned None for it; its first ``sent`` edges have their gradients already): send the
    rest, mark the nodes left without one (see ``_send``), free the node, and return the
    rest of the pass for the careful sweep, which runs the marked nodes on an undefined
    gradient as PyTorch does. (Besides: a ZeroTensor, see ``makes_zeros``.) The plain
    sweep never meets a mark."""
    _send(node._next[sent:], outs[sent:])
    if not keep_graph and node._saved:
        node._saved, node._checks = None, FREED
    return nodes


def _send(nexts, outs):
    """Add each gradient of ``outs`` to what its node of ``nexts`` has waiting; a node that an
    edge reaches without one is marked reached (``UNDEFINED``) if nothing waits there. Says
    whether every edge had a gradient."""
    full = True
    for nxt, gi in zip(nexts, outs):
        if nxt is None:
            continue
        waiting = nxt._pending
        if gi is not None:
            nxt._pending = gi if waiting is None else waiting + gi
        else:
            full = False
            if waiting is None:
                nxt._pending = UNDEFINED
    return full


def _leading_to(order, capture, run_captured):
    """The nodes of ``order`` (a topological order) that run when the gradients of the nodes
    of ``capture`` are wanted (and have their saved tensors freed), as in PyTorch: a node runs
    if some node it sends gradients to is captured or runs itself; a captured node itself only
    with ``run_captured``."""
    leads = set()
    for node in reversed(order):        # inputs first: a node's next nodes are decided
        for nxt in node._next:
            if nxt is not None and (nxt in leads or nxt in capture):
                leads.add(node)
                break
    if run_captured:
        leads.update(capture)
    return leads


def _hooked(node, g):
    """The gradient that reached ``node``, which does not run, after the hooks that see it
    all the same: the output tensor's hooks (a leaf's, for its AccumulateGrad). The node's
    pre-hooks are the node's: they do not run (PyTorch's engine calls the tensor's only)."""
    extras = node._extras or _NOTHING
    if "tensor" in extras:
        g = _pre_hooks(extras, g, node_hooks=False)
    if type(node) is AccumulateGrad:
        g = node.variable._leaf_hooks(g)
    return g


def _careful_step(node, g, create_graph=False, capture=None, captured=None, accumulate=True,
                  nan_check=False, on_step=None, wanted=None):
    """One node's step with everything a plain backward() does not need: hooks, capture,
    broadcast inputs, recording the backward (create_graph), NaN checks, the step-through.
    ``wanted``: with capture, the nodes that are sent gradients.
    Returns the input gradients (``()`` for a leaf skipped by ``accumulate=False``)."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    extras = node._extras or _NOTHING
    if capture is not None and node in capture:
        # a node that runs is captured before its hooks (a leaf's hooks run first: its
        # AccumulateGrad does not run here), as in PyTorch
        captured[node] = _hooked(node, g) if type(node) is AccumulateGrad else g
    hooked = (type(node) is AccumulateGrad and accumulate and ("pre" in extras or g is None))
    if hooked:
        # The leaf's hooks are its AccumulateGrad's tensor pre-hooks, which PyTorch runs
        # before the node's pre-hooks, on an undefined gradient too (they see None).
        g = node.variable._leaf_hooks(g)
    if "pre" in extras or "tensor" in extras:
        g = _pre_hooks(extras, g)
    if not accumulate and type(node) is AccumulateGrad:
        return ()
    # Saved values freed, changed in place or to be read as Tensors: _checked_backward
    # raises PyTorch's error or converts.
    checks = node._checks
    if g is None:                       # a pre-hook took it away: PyTorch's undefined gradient
        outs = node._undefined()
    elif type(node) is AccumulateGrad:
        # the leaf's hooks are the learner's code, not a recorded formula: `g * 2` in one is
        # PyTorch's MulBackward0, as anywhere else (a formula's number would make MulBackward1)
        outs = node.backward(g, hooked)
    elif type(g) is ZeroArray and not create_graph:
        # A ZeroTensor reaches a formula: it runs on Tensors, whose operations decide which
        # gradients stay ZeroTensors as PyTorch's kernels do (``*`` keeps one, tanh_backward
        # does not); numpy's arithmetic inside a formula would keep it in both.
        outs = [gi if gi is None or type(gi) is list else gi._data
                for gi in node._checked_backward(_wrap(g), True)]
    elif (node._saved is not None and not create_graph and (checks is None or intact(checks))
            and "packed" not in extras):
        outs = node.backward(g)
    else:
        outs = node._checked_backward(g, create_graph)
    shapes = extras.get("shapes")
    if shapes is not None:              # the forward broadcast an input
        outs = [None if gi is None else unbroadcast(gi, s) for gi, s in zip(outs, shapes)]
    dtypes = extras.get("dtypes")
    if dtypes is not None:              # inputs of two dtypes: each gradient in its own
        outs = [_in_dtype(gi, d) for gi, d in zip(outs, dtypes)]
    if "post" in extras:
        outs = _post_hooks(extras["post"], _computed(node, outs, wanted), g)
    if nan_check:
        _check_nan(node, outs)
    if on_step is not None:
        on_step(node, g, outs)
    return outs


def _in_dtype(g, dtype):
    if g is None or g.dtype == dtype:
        return g
    if hasattr(g, "_data"):
        return g.to(from_numpy_dtype(dtype))
    return np.asarray(g, dtype)


def _check_nan(node, outs):
    for i, gi in enumerate(outs):
        if gi is not None and not isinstance(gi, list) and np.isnan(gi._data if hasattr(gi, "_data") else gi).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _user(g):
    """Hooks see Tensors, whichever form the gradient travels in."""
    return g if g is None or hasattr(g, "_data") else _wrap(np.asanyarray(g))


def _users(g):
    """A node's incoming gradients as hooks see them: a tuple, one per output of the node
    (a custom Function with several outputs gathers them in a list, see function.py)."""
    return tuple(map(_user, g)) if isinstance(g, list) else (_user(g),)


def _back(new, old):
    """A hook's result, in the form the gradient was travelling in."""
    return new if new is None or hasattr(old, "_data") else np.asarray(new._data)


def _pre_hooks(hooks, g, node_hooks=True):
    tensor_hooks = hooks.get("tensor", {})
    for fn in list(tensor_hooks.get("pre", ())):        # Tensor.register_hook on a non-leaf
        g = check_hook_result(fn, fn(_user(g)), g)
    if "retain" in tensor_hooks:                        # retain_grad() sees the final gradient
        tensor_hooks["retain"](_user(g))
    for fn in list(hooks.get("pre", ()) if node_hooks else ()):    # Node.register_prehook
        given = _users(g)
        out = fn(given)
        if out is not None:
            out = check_hook_results(fn, out, given)
            g = (type(g)(map(_back, out, g)) if isinstance(g, list)  # several outputs' (function.py)
                 else _back(out[0], g))
    return g


def _computed(node, outs, wanted):
    """The gradients of ``outs`` that PyTorch's node computes, the others None: none for an
    edge to nothing (a constant's), nor, under ``autograd.grad``, for one to a node on no way
    to an input. (A list input, cat's, is one input to PyTorch's formula: all of its
    gradients are computed if any is.) Its post-hooks see these."""
    if node.users_backward:
        return outs
    needed = [nxt is not None and (wanted is None or nxt in wanted) for nxt in node._next]
    if node.tensor_list:
        needed = [any(needed)] * len(needed)
    return [gi if keep else None for gi, keep in zip(outs, needed)] \
        if not all(needed) and len(outs) == len(needed) else outs


def _post_hooks(fns, outs, g):
    for fn in list(fns):                                # Node.register_hook
        given = tuple(_user(o) for o in outs)
        res = fn(given, _users(g))
        if res is not None:
            outs = [_back(r, g) for r in check_hook_results(fn, res, given)]
    return outs
