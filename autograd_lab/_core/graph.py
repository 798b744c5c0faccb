"""The backward graph: one ``Node`` per recorded operation, one ``AccumulateGrad`` per leaf.

A node knows:

* ``_next``: for each input of the forward operation, the node its gradient flows to next
  (the input's ``grad_fn``, the leaf's ``AccumulateGrad``, or ``None`` when that input needs
  no gradient). ``next_functions`` shows it the way PyTorch does: ``((node, 0), ...)``.
* ``_saved``: the values the backward formula needs (``save_for_backward``), as arrays, and
  in ``_checks`` each saved tensor's version then, so that a later in-place change is caught:
  four entries per saved tensor, in one flat tuple (its position in ``_saved``, the tensor or
  None for the node's own output, its version counter, its version then). Flat, because
  nearly every node saves one tensor, and one tuple per node is one object fewer per
  operation for the allocator and the cyclic collector to handle.
  Backward frees them unless ``retain_graph=True``; a node that saved nothing can run any
  number of times.
* ``backward(grad)``: the vector-Jacobian product, written next to its forward in ``_ops/``.

References only point backwards (output tensor -> node -> inputs). A node never holds its own
output tensor (a saved output is kept as its array and version counter), so there are no
reference cycles and a graph is freed by reference counting as soon as nothing holds its root.
"""
import itertools
import os
import re
import warnings
import weakref

import numpy as _np

from .grad_mode import INFERENCE_SAVED, _State
from .hooks import RemovableHandle, check_post_accumulate_result
from .tensor import Tensor

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


# What a node's ``_checks`` become when backward frees its saved values: a check that always
# fails, so that the engine's quick test of saved versions sends the node to the careful path,
# which raises the second-backward error.
FREED = (0, None, [1], 0)


class _Unsaved(tuple):
    """What a node saved when it saved nothing (every value None): false, so that backward
    never frees it (``if node._saved``), yet it unpacks as the node's formula expects."""
    __slots__ = ()

    def __bool__(self):
        return False


_sequence = itertools.count()


class Node:
    """Base class of every backward node. Subclasses carry PyTorch's names (``MulBackward0``)."""

    # _pending: during a backward pass, the sum of the gradients that reached this node so far
    # _extras: None, or a dict of what few nodes have: "shapes" (see _shapes), hooks ("pre",
    #   "post", and "tensor" for the output tensor's) and "metadata". One slot, so that the
    #   backward sweep tells a plain node by one test and a new node has one slot less to set.
    # Slots only, and in every subclass too (``__slots__ = ()`` where a node keeps nothing
    # else): a per-node __dict__ would cost every recorded operation memory and time, in
    # allocation and in the cyclic collector.
    __slots__ = ("_next", "_saved", "_checks", "_seq", "_pending", "_extras", "__weakref__")
    saved_names = ()    # ``_saved_<name>`` for each saved value, in ``save_for_backward`` order
    pack_order = None   # the order PyTorch saves them in, where it differs (pack hooks see it)
    silenced = False    # forward may make inf or nan from finite values (log, sqrt, 1/x)
    # For values saved only when one input needs a gradient (``x * 2`` keeps the 2 for x's
    # gradient, and nothing of x): saved name -> that input's position.
    needed_by = {}
    # The node of the Scalar overload (MulBackward1 for MulBackward0), which a backward formula
    # being recorded makes for ``grad * 2`` (see ``_State.formula``)
    scalar = None
    # The inputs are one list of tensors (cat, stack): PyTorch computes the gradient of every
    # element when any needs one, so a node called by hand returns them all
    tensor_list = False
    # Its gradient is PyTorch's ZeroTensor (SgnBackward0): the node takes the engine's careful
    # path, and every node after it in that pass, since a ZeroTensor may reach them
    makes_zeros = False
    # Its backward is the user's (a custom Function's): its post-hooks see what it returned,
    # where a formula of PyTorch's computes nothing for an input sent no gradient
    users_backward = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # PyTorch's built-in nodes are C++ classes: ``type(y.grad_fn)`` prints
        # ``<class 'MulBackward0'>`` and their ``__module__`` is 'builtins'.
        if cls.__module__.startswith(("autograd_lab._ops", "autograd_lab._core")):
            cls.__module__ = "builtins"

    def name(self):
        return type(self).__name__

    def _sequence_nr(self):
        """When the node was made, as an ordinal (PyTorch's sequence number)."""
        return self._seq

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"

    @property
    def next_functions(self):
        return tuple((None, 0) if fn is None else fn._edge() for fn in self._next)

    def _output_node(self, i):
        """The node that saved value ``i``, one of this node's own outputs, hangs on."""
        return self

    def _edge(self):
        """How an edge to this node shows in ``next_functions``: (node, which output)."""
        return self, 0

    @property
    def metadata(self):
        return self._extras_table().setdefault("metadata", {})

    @property
    def _shapes(self):
        """The inputs' shapes when the forward broadcast them (backward sums each gradient back
        to its input's shape), else None."""
        return None if self._extras is None else self._extras.get("shapes")

    @_shapes.setter
    def _shapes(self, shapes):
        if shapes is not None:
            self._extras_table()["shapes"] = shapes
        elif self._extras is not None:
            self._extras.pop("shapes", None)

    # -- saved tensors -------------------------------------------------------------------
    def save_for_backward(self, *items):
        """Keep ``items`` (tensors, Python numbers or None) for backward.

        Backward needs their values as they are *now*: each tensor's version is noted so that
        an in-place change before backward is caught. The node's own output is kept only as
        its array and version counter -- holding the output tensor would be a reference cycle.
        """
        if _pack_hooks:
            return _save_packed(self, items)
        if len(items) == 1 and type(items[0]) is Tensor:
            return save_one(self, items[0])
        for t in items:
            if type(t) is Tensor:
                break
        else:
            # numbers only (``x * 2`` saves the 2); or nothing, since no input needs what a
            # value would give (they stop at a view made under no_grad): PyTorch saved none,
            # so there is nothing for backward to free, and a second backward may run
            self._saved = items if any(t is not None for t in items) else _Unsaved(items)
            return
        values, checks = list(items), ()
        for i, t in enumerate(items):
            if type(t) is Tensor:
                if t._inference:
                    raise RuntimeError(INFERENCE_SAVED)
                values[i] = t._data
                vc = t._vc or t._counter()
                checks += (i, None if t._grad_fn is self else t, vc, vc[0])
        self._saved, self._checks = tuple(values), checks

    def _unpack(self, as_tensors=False, only=None):
        """The saved values: arrays, or Tensors when the backward itself is being recorded.

        Raises PyTorch's errors if an earlier backward freed them, or if a saved tensor was
        changed in place after it was saved. With ``only`` (a position), that value alone is
        checked and converted: ``grad_fn._saved_self`` reads fine while ``other`` was changed."""
        __tracebackhide__ = True     # IPython shows the learner's line, not this one
        saved = self._saved
        if saved is None:
            raise RuntimeError(SECOND_BACKWARD)
        checks = [c for c in _each_check(self._checks) if only is None or c[0] == only]
        order = type(self).pack_order
        if order is not None:   # PyTorch unpacks in its saving order: its error names the
            checks.sort(key=lambda c: order.index(c[0]))    # first changed one in that order
        for i, t, vc, v in checks:
            if vc[0] != v:
                raise RuntimeError(_modified_text(self, t, saved[i], vc[0], v))
        packed = self._extras is not None and "packed" in self._extras
        if not as_tensors and not packed:
            return saved
        out = list(saved)
        if as_tensors:
            for i, t, vc, _ in checks:
                if t is None:   # our own output: a fresh tensor whose grad_fn is this node
                    t = Tensor._make(saved[i], self._output_node(i), vc)
                out[i] = t
        if packed:
            for i in type(self).pack_order or range(len(saved)):
                value = saved[i]
                if type(value) is Packed and (only is None or i == only):
                    t = value.unpack(self, i)
                    out[i] = t if as_tensors else t._data
        return out

    def _checked_backward(self, grad, as_tensors=False):
        """``backward(grad)`` after checking what it will read: PyTorch's errors if an
        earlier backward freed it or it was changed in place. With ``as_tensors`` (the
        backward is itself being recorded) the formula reads Tensors instead of arrays."""
        __tracebackhide__ = True     # IPython shows the learner's line, not this one
        values = self._unpack(as_tensors)
        if not as_tensors and (self._extras is None or "packed" not in self._extras):
            return self.backward(grad)
        arrays, self._saved = self._saved, tuple(values)
        formula, _State.formula = _State.formula, as_tensors
        try:
            return self.backward(grad)
        finally:
            self._saved = arrays
            _State.formula = formula

    def __getattr__(self, attr):
        # ``grad_fn._saved_self`` and friends, as PyTorch exposes them: saved tensors first,
        # then the plain values a subclass keeps in a slot of the same name.
        if attr.startswith("_saved_"):
            key = attr[7:]
            names = type(self).saved_names
            if key in names:
                needed_by = type(self).needed_by.get(key)
                if needed_by is not None and self._next[needed_by] is None:
                    return None             # never saved, so not freed either
                i = names.index(key)
                value = self._unpack(as_tensors=True, only=i)[i]
                if value is None or type(value) is Tensor:
                    return value
                return Tensor._make(_np.asarray(value))    # a saved number shows as a tensor
            if key in _slot_names(type(self)):
                value = getattr(self, key)
                return _unsigned(value) if key in _INT64 else value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def __dir__(self):
        # ``dir(grad_fn)`` lists what ``__getattr__`` serves, as PyTorch's nodes list theirs
        keys = set(type(self).saved_names) | _slot_names(type(self))
        return sorted(set(super().__dir__()) | {"_saved_" + k for k in keys if k})

    # -- the vector-Jacobian product -----------------------------------------------------
    def _undefined(self):
        """The input gradients when no gradient arrived (a hook replaced it with None): none,
        after unpacking what was saved, as PyTorch's generated nodes do."""
        self._unpack()
        return [None] * len(self._next)

    def __call__(self, *grads, **kwargs):
        """``y.grad_fn(torch.ones(2))`` returns the input gradients, as PyTorch's nodes do:
        a node of one input (``SumBackward0``, ``PowBackward0``) a bare Tensor, a node of
        several a tuple with one per input (``None`` for an input that needs none).

        Called by hand, the formula is ordinary code: with grad mode on it is recorded, so
        ``(x*x).grad_fn(ones)`` gives ``tensor([1., 2.], grad_fn=<MulBackward0>)`` twice.
        What it returns is the formula's own result, as PyTorch's node gives it: nothing for
        an input that needs no gradient, and a broadcast input's gradient in the broadcast
        shape (summing it back, and casting to the input's dtype, is the engine's work)."""
        grad = called_with(grads, kwargs)
        if grad is None or self._next and all(nxt is None for nxt in self._next):
            # No gradient (None is PyTorch's undefined one), or no input needs one:
            # PyTorch's node unpacks what it saved (a freed one still raises) and computes
            # nothing, so a gradient its formula would refuse passes too
            self._unpack()
            return None if len(self._next) == 1 else (None,) * len(self._next)
        recording = _State.enabled
        out = self._checked_backward(grad if recording else grad._data, as_tensors=recording)
        # a list input (cat's, stack's) is one input to PyTorch's formula: its elements'
        # gradients are computed together, if any of them has an edge
        listed = type(self).tensor_list and any(nxt is not None for nxt in self._next)
        out = tuple(None if g is None or nxt is None and not listed else
                    g if type(g) is Tensor else Tensor._make(_np.asarray(g))
                    for nxt, g in zip(self._next, out))
        return out[0] if len(out) == 1 else out

    # -- hooks ---------------------------------------------------------------------------
    def _extras_table(self):
        if self._extras is None:
            self._extras = {}
        return self._extras

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return replacement gradients."""
        return RemovableHandle(self._extras_table().setdefault("pre", []), fn)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may replace grad_inputs."""
        return RemovableHandle(self._extras_table().setdefault("post", []), fn)


def called_with(grads, kwargs):
    """The one gradient a node called by hand was given (its output's), checked as PyTorch's
    node call checks it: positional, one, a Tensor or None."""
    if kwargs:
        raise TypeError("keyword arguments are not supported")
    if len(grads) != 1:
        raise TypeError(f"expected 1 arguments, got {len(grads)} instead")
    grad = grads[0]
    if grad is not None and not isinstance(grad, Tensor):
        raise TypeError("argument 0 is not a Variable")
    return grad


def _each_check(checks):
    """A node's ``_checks`` as one (position, tensor, counter, version) tuple per saved tensor."""
    return [] if checks is None else [checks[k:k + 4] for k in range(0, len(checks), 4)]


def intact(checks):
    """Whether every saved tensor is still at the version it was saved at (``_checks``)."""
    return all(checks[k][0] == checks[k + 1] for k in range(2, len(checks), 4))


# The plain values PyTorch's nodes keep as int64 (a dim, an index). Its getters hand them to
# Python as unsigned 64-bit numbers: ``x.sum(-1).grad_fn._saved_dim`` is
# ``(18446744073709551615,)``. (A number such as ``alpha`` is a Scalar, shown signed.)
_INT64 = frozenset(("dim", "dim0", "dim1", "dims", "index", "start", "end"))


def _unsigned(value):
    if type(value) is int:
        return value % 2 ** 64
    return tuple(map(_unsigned, value)) if type(value) is tuple else value


def _slot_names(cls):
    """The plain values a node class keeps (``_saved_dim``...): the slots its subclasses add."""
    return {k for c in cls.__mro__ if c is not Node for k in c.__dict__.get("__slots__", ())}


def new_node(cls, next_functions, numbered=True):
    """A new ``cls`` node whose input gradients go to ``next_functions`` (one per input).
    ``numbered=False``: it takes no number of the creation order (an AccumulateGrad, which
    PyTorch makes without a sequence number, and toposort places each time it sorts), so the
    numbers ``_sequence_nr()`` shows are PyTorch's."""
    node = _new(cls)
    node._next = next_functions
    node._saved = ()
    node._checks = node._pending = node._extras = None
    # Creation order. A node is always created after the nodes that produced its inputs,
    # so "newest first" is a valid order for the backward pass (the engine sorts by it).
    node._seq = next(_sequence) if numbered else -1
    if _State.anomaly:
        remember_forward(node)
    return node


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


_forward_stacks = weakref.WeakKeyDictionary()     # anomaly mode: node -> where it was made


def remember_forward(node):
    """Anomaly mode: keep the user's stack of the forward call that made ``node`` (the frames
    outside autograd_lab, as PyTorch shows only Python frames)."""
    import traceback  # (anomaly mode only: not an import every program pays)
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PACKAGE)]
    _forward_stacks[node] = "".join(traceback.format_list(frames))


def forward_stack_warning(node):
    """The warning PyTorch gives in anomaly mode when ``node`` fails in backward."""
    import warnings
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                  f"error:\n{_forward_stacks.get(node, '')} (Triggered internally at "
                  "/pytorch/torch/csrc/autograd/python_anomaly_mode.cpp:122.)", UserWarning,
                  stacklevel=2)


_new = object.__new__


def save_one(node, t):
    """``node.save_for_backward(t)`` for one tensor: what most operations save, kept quick.
    (The check entry: position, the tensor -- None for the node's own output --, its version
    counter and the version now.)"""
    if _pack_hooks:
        return _save_packed(node, (t,))
    if t._inference:
        raise RuntimeError(INFERENCE_SAVED)
    counter = t._vc
    if counter is None:
        counter = t._vc = [0]
    node._saved = (t._data,)
    node._checks = (0, None if t._grad_fn is node else t, counter, counter[0])


def unbroadcast(grad, shape):
    """Sum ``grad`` back to ``shape``: the one place that undoes broadcasting.

    An input that was broadcast was used once for every position it was repeated over, so
    its gradient is the sum over those positions: over the leading dimensions broadcasting
    added, and over the dimensions where the input had size 1. As PyTorch's sum_to: one sum
    that keeps those dimensions, then a view without the leading ones (so that a gradient
    ``autograd.grad`` returns is a view made in backward, with what that forbids); to a 0-d
    shape, one plain sum (SumBackward0)."""
    if grad.shape == shape:
        return grad
    if not shape:
        return grad.sum() if type(grad) is Tensor else _np.asarray(grad.sum())
    lead = grad.ndim - len(shape)
    if lead < 0:
        return _sum_to_more_dims(grad, shape, lead)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    if dims:
        grad = grad.sum(dims, keepdims=True)
    return grad.reshape(shape) if lead else grad


def _sum_to_more_dims(grad, shape, lead):
    """sum_to a shape of more dimensions than ``grad`` has (a node called by hand). PyTorch's
    sum_to then reads "sizes" before ``grad``'s first dimension, memory that is not a size
    (what follows is undefined); taking them for sizes other than 1, it sums over each
    dimension, from ``lead`` (negative), where ``shape`` has a 1: sum's IndexError for one that
    does not exist, else ``grad`` in its fewer dimensions."""
    dims = [i for i in range(lead, grad.ndim)
            if shape[i - lead] == 1 and (i < 0 or grad.shape[i] != 1)]
    n = grad.ndim or 1
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
    if not dims:
        return grad
    return grad.sum(tuple(sorted({d % n for d in dims})), keepdims=True)


# -- saved-tensor hooks -----------------------------------------------------------------
# ``saved_tensors_hooks(pack, unpack)``: while active, a node saves ``pack(tensor)`` instead of
# the tensor, and backward (or ``grad_fn._saved_self``) reads ``unpack(packed)``. What the
# hooks keep is up to them: a copy on disk, a compressed form, nothing at all.
_pack_hooks = []        # (pack, unpack) pairs, innermost last
_hooks_disabled = [None]    # disable_saved_tensors_hooks' message, while it is active


class saved_tensors_hooks:      # noqa: N801 -- PyTorch's name
    """Context manager: every tensor saved for backward inside it goes through ``pack_hook``
    when saved and ``unpack_hook`` each time it is read back."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _hooks_disabled[0] is not None:
            raise RuntimeError(_hooks_disabled[0])
        _pack_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _pack_hooks.pop()


class save_on_cpu(saved_tensors_hooks):     # noqa: N801
    """Saved tensors go to CPU memory and come back to their device. All memory is CPU memory
    here, so this is ``saved_tensors_hooks`` with hooks that copy."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: (t.device, t.cpu().clone()), lambda p: p[1].to(p[0]))


class disable_saved_tensors_hooks:      # noqa: N801
    """Context manager in which entering ``saved_tensors_hooks`` raises ``error_message``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self.previous, _hooks_disabled[0] = _hooks_disabled[0], self.error_message

    def __exit__(self, *exc):
        _hooks_disabled[0] = self.previous


class Packed:
    """A saved tensor as the pack hook returned it, and what a tensor unpacked from it must
    be attached to: the saving node (an output of it), or the tensor's grad_fn or leaf."""

    __slots__ = ("value", "unpack_hook", "edge", "requires_grad", "is_output")

    def __init__(self, node, t, pack, unpack):
        self.is_output = t.grad_fn is node
        self.edge = None if self.is_output else t.grad_fn or (
            grad_accumulator(t) if t._rg else None)
        self.requires_grad = t._rg
        self.unpack_hook = unpack
        enabled, _State.enabled = _State.enabled, False     # PyTorch packs without recording
        try:
            self.value = pack(t)
        finally:
            _State.enabled = enabled

    def unpack(self, node, i):
        t = self.unpack_hook(self.value)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        # The values are the hook's; the place in the graph is the saved tensor's.
        if self.is_output:
            return Tensor._make(t._data, node._output_node(i))
        if type(self.edge) is AccumulateGrad:
            leaf = Tensor._make(t._data)
            leaf._rg, leaf._acc = True, weakref.ref(self.edge)
            return leaf
        return Tensor._make(t._data, self.edge) if self.requires_grad else Tensor._make(t._data)


def _save_packed(node, items):
    """``save_for_backward`` while saved-tensor hooks are active: pack each tensor (no version
    check on what the hooks keep, as in PyTorch), in the order PyTorch saves them."""
    pack, unpack = _pack_hooks[-1]
    values = list(items)
    for i in type(node).pack_order or range(len(items)):
        if type(items[i]) is Tensor:
            values[i] = Packed(node, items[i], pack, unpack)
    values = tuple(values)
    node._saved = values if any(v is not None for v in values) else _Unsaved(values)
    node._checks = None
    node._extras_table()["packed"] = True


_layout_warned = []


def _layout_contract(grad, leaf):
    """PyTorch's warning (once) when a ``.grad`` added by hand ends in another shape."""
    return ("grad and param do not obey the gradient layout contract. This is not an error, "
            f"but may impair performance.\ngrad.sizes() = {list(grad.shape)}, strides() = "
            f"{list(grad.stride())}\nparam.sizes() = {list(leaf.shape)}, strides() = "
            f"{list(leaf.stride())} (Triggered internally at "
            "/pytorch/torch/csrc/autograd/functions/accumulate_grad.h:282.)")


def dense(a):
    """PyTorch's is_non_overlapping_and_dense, of a non-empty array: the elements fill one
    block of memory, the dimensions taken in some order (size-1 dimensions aside)."""
    expected = a.itemsize
    for stride, n in sorted((s, n) for s, n in zip(a.strides, a.shape) if n != 1):
        if stride != expected:
            return False
        expected *= n
    return a.size > 0


class AccumulateGrad(Node):
    """The end of every path: adds the incoming gradient into its leaf's ``.grad``.

    A leaf has one AccumulateGrad, shared by every operation that uses the leaf. The node
    holds the leaf (``.variable``); the leaf holds the node only weakly."""

    __slots__ = ("variable",)

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def _sequence_nr(self):
        return 2 ** 64 - 1          # PyTorch's: the highest, so that it runs first when ready

    def backward(self, grad, hooked=False):
        leaf = self.variable
        if leaf._grad_fn is not None:   # changed in place since, with a gradient: no leaf now
            raise RuntimeError("leaf variable has been moved into the graph interior")
        leaf._accumulate(grad, hooked)
        return ()

    def _undefined(self):
        """No gradient arrived (a hook took it away): ``.grad`` stays as it is, and the leaf's
        post-accumulate hooks run all the same, as PyTorch's AccumulateGrad runs them."""
        leaf = self.variable
        for fn in (leaf._hooks or {}).get("post_acc", ()):
            check_post_accumulate_result(fn, fn(leaf), leaf)
        return ()

    def __call__(self, *grads, **kwargs):
        """Called by hand, as PyTorch's AccumulateGrad::apply: the gradient as it is given
        goes into ``.grad``, copied into the leaf's shape in its own dtype (a leaf with gaps
        in its memory takes a clone, of any shape; added to a
        ``.grad`` there already: in place under no_grad), and nothing for a leaf that no
        longer requires grad. The leaf's ``register_hook`` hooks do not run (PyTorch's
        engine runs them, not the node); its post-accumulate hooks do. Returns ``()``."""
        grad = called_with(grads, kwargs)
        if grad is None:
            return ()
        leaf = self.variable
        if leaf._history() is not None:
            raise RuntimeError("leaf variable has been moved into the graph interior")
        if leaf._rg:
            old = leaf._grad
            if old is None:
                # PyTorch's clone_obey_contract: a copy in the leaf's shape and strides (copy_
                # broadcasts what it is given), or for a leaf whose memory has gaps (a
                # detached view) a clone of the gradient, in the gradient's own shape
                a = leaf._data
                leaf._grad = Tensor._make(_np.zeros_like(a, grad._data.dtype)).copy_(grad) \
                    if dense(a) or not a.size else grad.clone()
            elif _State.enabled:
                leaf._grad = old + grad
                if leaf._grad.shape != leaf.shape and not _layout_warned:
                    _layout_warned.append(True)     # once per process, whatever the shapes
                    warnings.warn(_layout_contract(leaf._grad, leaf), UserWarning, stacklevel=2)
            else:
                old.add_(grad)
        for fn in (leaf._hooks or {}).get("post_acc", ()):
            check_post_accumulate_result(fn, fn(leaf), leaf)
        return ()


def grad_accumulator(leaf):
    """``leaf``'s AccumulateGrad: one per leaf, shared by all the ops that use it, made when
    the first one is recorded. (``Tensor._grad_accumulator``: _tensor_methods.py binds it.)"""
    acc = leaf._acc and leaf._acc()
    if acc is None:
        if leaf._no_grad_view:
            leaf._refuse_if_stale()
            return None     # requires grad (as its base does), but gradients stop here
        if leaf._base is not None and leaf._base._rg:
            return None     # the same: a view made before its base required grad
        acc = new_node(AccumulateGrad, (), numbered=False)
        acc.variable = leaf
        leaf._acc = weakref.ref(acc)   # weak: the node holds the leaf, not the other way
    return acc


def _data(x):
    return x._data if type(x) is Tensor else x


def short_name(name):
    """A node's name as PyTorch's error texts give it: MulBackward0 -> Mul, PowBackward1 -> Pow1."""
    return re.sub(r"Backward(?:0|([0-9]+))?$", lambda m: m.group(1) or "", name)


def _modified_text(node, t, value, version, saved_version):
    # PyTorch names the op that produced the tensor: the saving node for its own output,
    # otherwise whatever produced the tensor *now* (the in-place op, after an in-place change).
    producer = node if t is None else t.grad_fn
    which = ""
    if producer is not None:
        which = f", which is output 0 of {short_name(producer.name())},"
    kind = {"float32": "FloatTensor", "float64": "DoubleTensor"}.get(value.dtype.name, "Tensor")
    hint = ("the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good "
            "luck!") if _State.anomaly else (
            "enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [torch.{kind} [{', '.join(map(str, value.shape))}]]{which} is at "
        f"version {version}; expected version {saved_version} instead. Hint: {hint}")
