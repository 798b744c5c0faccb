"""The backward graph: one ``Node`` per recorded operation, one ``AccumulateGrad`` per leaf.

A node knows:

* ``_next``: for each input of the forward operation, the node its gradient flows to next
  (the input's ``grad_fn``, the leaf's ``AccumulateGrad``, or ``None`` when that input needs
  no gradient). ``next_functions`` shows it the way PyTorch does: ``((node, 0), ...)``.
* ``_saved``: the tensors the backward formula needs (``save_for_backward``). Backward frees
  them unless ``retain_graph=True``; a node that saved nothing can run any number of times.
* ``backward(grad)``: the vector-Jacobian product, written next to its forward in ``_ops.py``.

References only point backwards (output tensor -> node -> inputs). A node never holds its own
output tensor (a saved output is kept as a bare alias of its data), so there are no reference
cycles and a graph is freed by reference counting as soon as nothing holds its root.
"""
import re

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


class Node:
    """Base class of every backward node. Subclasses carry PyTorch's names (``MulBackward0``)."""

    __slots__ = ("_next", "_saved", "_versions", "_shapes", "_hooks", "__weakref__")
    saved_names = ()    # ``_saved_<name>`` for each saved tensor; "result" marks the op's output

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"

    @property
    def next_functions(self):
        return tuple((fn, 0) for fn in self._next)

    @property
    def metadata(self):
        return self._hook_table().setdefault("metadata", {})

    # -- saved tensors -------------------------------------------------------------------
    def save_for_backward(self, *tensors):
        """Keep ``tensors`` (``None`` allowed) for backward, noting each one's version now."""
        self._saved = tensors
        # a Python number (``x * 2`` saves the 2) has no version to check
        self._versions = tuple(t._version if hasattr(t, "_vc") else None for t in tensors)

    def _unpack(self, as_tensors=False):
        """The saved values as arrays (or as Tensors, when the backward itself is recorded).

        Raises PyTorch's errors if an earlier backward freed them, or if one was changed in
        place after it was saved (its version counter moved on)."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(SECOND_BACKWARD)
        out = []
        for name, t, v in zip(self.saved_names, saved, self._versions):
            if v is None:                # None, or a Python number
                out.append(t)
            elif t._version != v:
                raise RuntimeError(_modified_text(self, t, v, is_output=name == "result"))
            elif not as_tensors:
                out.append(t._data)
            elif name == "result":      # a fresh tensor whose grad_fn is this node, as PyTorch does
                out.append(t._alias(grad_fn=self))
            else:
                out.append(t)
        return out

    def _release(self):
        if self._saved:
            self._saved = None

    def __getattr__(self, attr):
        # ``grad_fn._saved_self``, ``_saved_exponent``...: saved tensors first, then the
        # plain values a subclass keeps in a slot of the same name.
        if attr.startswith("_saved_"):
            key = attr[7:]
            names = type(self).saved_names
            if key in names:
                value = self._unpack(as_tensors=True)[names.index(key)]
                if value is None or hasattr(value, "_vc"):
                    return value
                from .._tensor import tensor
                return tensor(value)        # PyTorch shows a saved number as a tensor
            for cls in type(self).__mro__:
                if key in getattr(cls, "__slots__", ()):
                    return getattr(self, key)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    # -- the vector-Jacobian product -----------------------------------------------------
    def _apply(self, grad):
        """Input gradients for the output gradient ``grad``, each summed back to its input's
        shape if the forward broadcast it; ``None`` where an input needs no gradient."""
        grads = self.backward(grad)
        if self._shapes is not None:
            grads = [None if g is None else unbroadcast(g, s) for g, s in zip(grads, self._shapes)]
        return grads

    def __call__(self, *grads):
        """``y.grad_fn(torch.ones(2))`` returns the input gradients, as PyTorch's nodes do."""
        from .._tensor import _as_array, _wrap
        out = self._apply(*[None if g is None else _as_array(g) for g in grads])
        return tuple(None if g is None else _wrap(g) for g in out)

    # -- hooks ---------------------------------------------------------------------------
    def _hook_table(self):
        if self._hooks is None:
            self._hooks = {}
        return self._hooks

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return replacement gradients."""
        return _Handle(self._hook_table().setdefault("pre", []), fn)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may replace grad_inputs."""
        return _Handle(self._hook_table().setdefault("post", []), fn)


def unbroadcast(grad, shape):
    """Sum ``grad`` back to ``shape``: the one place that undoes broadcasting.

    An input that was broadcast was used once for every position it was repeated over, so
    its gradient is the sum over those positions: over the leading dimensions broadcasting
    added, and over the dimensions where the input had size 1."""
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    if not axes:
        return grad.reshape(shape)
    return grad.sum(axes, keepdims=True).reshape(shape) if lead == 0 else \
        grad.sum(axes).reshape(shape)


class AccumulateGrad(Node):
    """The end of every path: adds the incoming gradient into its leaf's ``.grad``.

    A leaf has one AccumulateGrad, shared by every operation that uses the leaf. The node
    holds the leaf (``.variable``); the leaf holds the node only weakly."""

    __slots__ = ("variable",)

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def _apply(self, grad):
        self.variable._accumulate(grad)
        return ()

    def __call__(self, *grads):
        from .._tensor import _as_array
        for g in grads:
            self._apply(_as_array(g))
        return ()


def _modified_text(node, t, saved_version, is_output):
    # PyTorch names the op that produced the tensor: the saving node for a saved output,
    # otherwise whatever produced the tensor *now* (the in-place op, after an in-place change).
    producer = node if is_output else t.grad_fn
    which = ""
    if producer is not None:
        which = f", which is output 0 of {re.sub(r'Backward[0-9]*$', '', producer.name())},"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [torch.{t.dtype.legacy} [{', '.join(map(str, t.shape))}]]{which} is at "
        f"version {t._version}; expected version {saved_version} instead. Hint: enable anomaly "
        "detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")


class _Handle:
    """What ``register_hook`` returns: ``.remove()`` takes the hook away again."""

    __slots__ = ("hooks", "fn")

    def __init__(self, hooks, fn):
        self.hooks, self.fn = hooks, fn
        hooks.append(fn)

    def remove(self):
        if self.fn in self.hooks:
            self.hooks.remove(self.fn)
