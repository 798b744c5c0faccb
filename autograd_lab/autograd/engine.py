"""The backward pass: sort the graph, sweep it from the root, accumulate, free.

1. ``toposort`` lists every node reachable from the roots so that a node comes after every
   node that sends it a gradient. It uses an explicit stack, not recursion, so a chain of a
   million operations sorts as easily as a short one.
2. ``run_backward`` walks that list once. Each node's incoming gradient is complete by the time
   it is reached (fan-out contributions were summed while earlier nodes ran); the node's
   backward turns it into its inputs' gradients, which are added to what those nodes already
   received. An AccumulateGrad adds what reaches it into its leaf's ``.grad``.
3. Unless ``retain_graph``, each node's saved tensors are freed once it has run.
"""
from .graph import AccumulateGrad
from .grad_mode import _State


def toposort(roots):
    """Nodes reachable from ``roots``, each listed before every node it sends a gradient to
    (a depth-first search with an explicit stack: reversed post-order)."""
    order, seen = [], set()
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root._next))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if child is not None and child not in seen:
                    seen.add(child)
                    stack.append((child, iter(child._next)))
                    break
            else:
                stack.pop()
                order.append(node)
    order.reverse()
    return order


def run_backward(roots, grads, keep_graph=False, create_graph=False, capture=(),
                 accumulate=True, on_step=None):
    """Send ``grads`` (one per root node) backward through the graph.

    ``capture``: nodes whose incoming gradient the caller wants back (``autograd.grad`` and
    ``backward(inputs=...)``), returned as a dict. ``accumulate=False`` leaves every ``.grad``
    alone. ``on_step(node, grad_in, grads_out)``, if given, sees every node as it runs
    (``viz.trace_backward`` records the pass with it).
    """
    pending = {}
    for node, g in zip(roots, grads):
        pending[node] = g if node not in pending else pending[node] + g
    captured = {}
    prev_mode = _State.enabled
    _State.enabled = create_graph       # the backward is itself recorded only for create_graph
    try:
        for node in toposort(roots):
            g = pending.pop(node, None)
            if g is None:
                continue
            hooks = node._hooks
            if hooks:
                g = _pre_hooks(hooks, g)
            if node in capture:
                captured[node] = g
            if not accumulate and type(node) is AccumulateGrad:
                continue
            outs = node._apply(g)
            if hooks and "post" in hooks:
                outs = _post_hooks(hooks["post"], outs, g)
            if on_step is not None:
                on_step(node, g, outs)
            for nxt, gi in zip(node._next, outs):
                if nxt is not None and gi is not None:
                    prev = pending.get(nxt)
                    pending[nxt] = gi if prev is None else prev + gi
            # Drop our references at once: a gradient that only ``pending`` refers to can
            # become a leaf's .grad without a copy (see Tensor._accumulate).
            outs = gi = g = None
            if not keep_graph:
                node._release()
    finally:
        _State.enabled = prev_mode
    return captured


def _user(g):
    """Hooks see Tensors, whichever form the gradient travels in."""
    from .._tensor import _wrap
    return g if g is None or hasattr(g, "_data") else _wrap(g)


def _back(new, old):
    """A hook's result, in the form the gradient was travelling in."""
    return new if hasattr(old, "_data") else new._data


def _pre_hooks(hooks, g):
    tensor_hooks = hooks.get("tensor", {})
    for fn in list(tensor_hooks.get("pre", ())):        # Tensor.register_hook on a non-leaf
        out = fn(_user(g))
        if out is not None:
            g = _back(out, g)
    if "retain" in tensor_hooks:                        # retain_grad() sees the final gradient
        tensor_hooks["retain"](_user(g))
    for fn in list(hooks.get("pre", ())):               # Node.register_prehook
        out = fn((_user(g),))
        if out is not None:
            g = _back(out[0], g)
    return g


def _post_hooks(fns, outs, g):
    for fn in list(fns):                                # Node.register_hook
        res = fn(tuple(_user(o) for o in outs), (_user(g),))
        if res is not None:
            outs = [None if r is None else _back(r, g) for r in res]
    return outs
