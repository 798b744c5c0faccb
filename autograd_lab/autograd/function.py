"""Custom operations: subclass ``Function`` with ``forward(ctx, ...)`` and ``backward(ctx, ...)``.

``MyExp.apply(x)`` runs ``forward`` without recording, then attaches a node named
``MyExpBackward``. That node *is* the ``ctx`` both methods receive, so whatever forward stores
on it (``ctx.save_for_backward(...)``, ``ctx.k = 3``) is there in backward -- the same contract
as ``torch.autograd.Function``, and the one every built-in operation in ``_ops/`` follows.

``backward`` receives one gradient per output of ``forward``. An output that got no gradient
(unused, or marked non-differentiable) arrives as zeros of its shape, unless forward called
``ctx.set_materialize_grads(False)``: then it arrives as ``None``. Outputs that are not
tensors always arrive as ``None``.

A Function with several outputs: the engine's nodes take one gradient each, so each output
hangs on a small ``_Output`` node that labels its gradient with the output's number and
passes it on to the Function's node, where the labelled gradients are gathered (``_Grads``).
"""
import functools
import inspect
import warnings

import numpy as np

from .._core.dtype import from_numpy_dtype
from .._core.grad_mode import _State, no_grad
from .._core.graph import Node, new_node, unbroadcast
from .._core.hooks import typename
from .._core.record import _edge
from .._core.tensor import Tensor, _wrap


class FunctionCtx(Node):
    """The node of a custom Function, handed to its forward and backward as ``ctx``.

    Besides what forward stores on it, it has ``ctx.needs_input_grad``: a tuple of booleans,
    one per argument of forward, saying whether that argument is a tensor that requires
    grad. In backward, ``ctx.needs_input_grad[0]`` is ``True`` when a gradient for the first
    input is wanted; a backward may skip computing the others and return ``None`` for them::

        @staticmethod
        def backward(ctx, grad_output):
            x, w = ctx.saved_tensors
            grad_x = grad_output @ w.T if ctx.needs_input_grad[0] else None
            grad_w = x.T @ grad_output if ctx.needs_input_grad[1] else None
            return grad_x, grad_w
    """

    _function = None        # the Function subclass this node belongs to
    users_backward = True
    _materialize = True
    _dirty = _non_diff = ()

    # PyTorch's Python nodes are Python classes: ``<torch.autograd.function.SquareBackward
    # object at 0x...>``, not the bare ``<MulBackward0 object ...>`` of its C++ nodes.
    __repr__ = object.__repr__
    def __call__(self, *grads):
        # unlike those, not callable
        raise TypeError(f"'{type(self).__name__}' object is not callable")

    @property
    def saved_tensors(self):
        """The tensors forward gave ``save_for_backward``, in that order, as a tuple (``None``
        where it was given ``None``); read it in backward: ``x, y = ctx.saved_tensors``.

        Reading it checks each tensor: one changed in place since it was saved (its version
        moved on) raises the RuntimeError "one of the variables needed for gradient
        computation has been modified by an inplace operation", and after a backward that did
        not keep the graph (``retain_graph``) it raises "Trying to backward through the graph
        a second time", because the saved tensors have been freed."""
        return tuple(self._unpack(as_tensors=True))

    saved_variables = saved_tensors

    def save_for_backward(self, *tensors):
        """Save the given tensors for backward, where ``ctx.saved_tensors`` gives them back.

        Call it at most once, in forward (or ``setup_context``), with tensors (or ``None``,
        which is saved as ``None``). Save every tensor backward needs this way rather than as
        an attribute (``ctx.x = x``): a saved tensor is checked when backward reads it (one
        modified in place since raises an error instead of giving a wrong gradient), is freed
        when backward has run, and passes through saved-tensor hooks
        (``torch.autograd.graph.saved_tensors_hooks``). Values that are not tensors go on
        ``ctx`` as attributes. Inputs and outputs of forward can be saved; a tensor made
        inside forward (neither) can be too, but then a second-order backward through it may
        not be right: recompute it in backward, or return it as an output::

            @staticmethod
            def forward(ctx, x, k):
                ctx.save_for_backward(x)
                ctx.k = k                   # k is not a tensor
                return x ** k

            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                return grad_output * ctx.k * x ** (ctx.k - 1), None
        """
        self._to_save = tensors         # kept until forward returns: outputs are swapped then

    def mark_non_differentiable(self, *tensors):
        """Mark outputs of forward as not differentiable: they do not require grad, and no
        gradient flows back through them.

        Call it at most once, in forward (or ``setup_context``), with tensors forward
        returns. Backward still receives one gradient per output: for a marked one it is
        zeros of that output's shape (``None`` after ``set_materialize_grads(False)``). What
        it is for: indices, as a sort returns them::

            @staticmethod
            def forward(ctx, x):
                values, idx = x.sort()
                ctx.mark_non_differentiable(idx)
                ctx.save_for_backward(x, idx)
                return values, idx

            @staticmethod
            def backward(ctx, grad_values, grad_idx):   # grad_idx still accepted
                x, idx = ctx.saved_tensors
                grad_x = torch.zeros_like(x)
                grad_x[idx] = grad_values
                return grad_x
        """
        self._non_diff = tensors

    def mark_dirty(self, *tensors):
        """Mark inputs of forward as modified in place by it.

        Call it at most once, in forward (or ``setup_context``), with every input forward
        changed in place (before or after changing it) and which it returns. The engine then
        counts the change as an in-place operation does: the tensor's version moves on, so a
        backward that needs its old value raises instead of giving a wrong gradient, and the
        returned tensor's ``grad_fn`` is this Function's node. A leaf that requires grad
        cannot be marked (as it cannot be changed in place)::

            @staticmethod
            def forward(ctx, x):
                x.add_(1)                   # x changed in place
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output
        """
        self._dirty = tensors

    def set_materialize_grads(self, value):
        """Set whether backward receives zeros (``True``, the default) or ``None`` for an
        output's gradient that is undefined: an output the loss did not use, or one marked
        with ``mark_non_differentiable``.

        Call it in forward (or ``setup_context``). With ``False``, backward must check for
        ``None``, and saves making tensors of zeros to add::

            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x.clone(), x.clone()

            @staticmethod
            def backward(ctx, g1, g2):
                grad = None
                for g in (g1, g2):
                    if g is not None:
                        grad = g if grad is None else grad + g
                return grad
        """
        self._materialize = bool(value)

    def _output_node(self, i):
        # Output nr's node, new (holding it would be a cycle): what gradients flowing into
        # this saved output, in a double backward, must reach.
        nr = self._saved_outputs.get(i)
        return self if nr is None else _output(self, nr)

    def apply(self, *grads):
        """``y.grad_fn.apply(g)``: the Function's own ``backward``, called as it is written
        (what it returns is not checked; the engine's call of the node checks it)."""
        return self._function.backward(self, *grads)

    def _checked_backward(self, grad, as_tensors=False):
        return self.backward(grad)      # ctx.saved_tensors checks and converts by itself

    def _undefined(self):
        return self.backward(None)      # backward runs, on zeros unless set_materialize_grads

    def backward(self, grad):
        recording = _State.enabled      # create_graph: gradients travel as Tensors
        grads = list(grad) if type(grad) is _Grads else [grad]
        user = []
        for g, meta in zip(grads, self._outputs):
            if g is None and meta is not None and self._materialize:
                g = np.zeros(*meta)
            user.append(g if g is None or recording else _wrap(np.asarray(g)))
        if recording:
            user = [g if g is None or hasattr(g, "_data") else _wrap(np.asarray(g)) for g in user]
        result = self._function.backward(self, *user)
        return self._input_grads(result if isinstance(result, tuple) else (result,), recording)

    def _input_grads(self, grads, recording):
        """What backward returned, one gradient per tensor input, checked as PyTorch checks
        it and summed or cast to each input's shape and dtype."""
        name, expected = type(self).__name__, len(self._inputs)
        if len(grads) > expected and all(g is None for g in grads[expected:]):
            grads = grads[:expected]        # extra Nones are allowed
        if len(grads) != expected:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(grads)})")
        for i, (g, meta) in enumerate(zip(grads, self._inputs)):
            if meta is None:
                if g is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Variable")
            elif g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {typename(g)})")
        out = []
        for g, meta in zip(grads, self._inputs):
            if meta is None:
                continue
            if g is None:
                out.append(None)
                continue
            shape, dtype = meta
            if tuple(g.shape) != shape and not _expands(shape, tuple(g.shape)):
                raise RuntimeError(
                    f"Function {name} returned an invalid gradient at index {len(out)} - got "
                    f"{list(g.shape)} but expected shape compatible with {list(shape)}")
            if recording:
                g = g if type(g) is Tensor else Tensor._make(np.asarray(g))
                if g._data.dtype != dtype:
                    g = g.to(from_numpy_dtype(dtype))
            else:
                g = np.asarray(g._data if isinstance(g, Tensor) else g, dtype)
            out.append(unbroadcast(g, shape) if tuple(g.shape) != shape else g)
        return out


def _expands(shape, to):
    """Whether an input of ``shape`` broadcasts to a gradient of shape ``to`` (which is then
    summed back to the input's shape, as PyTorch does)."""
    try:
        return np.broadcast_shapes(shape, to) == to
    except ValueError:
        return False


class _Output(Node):
    """Output ``nr`` of a Function with several outputs: the node that output hangs on.

    It shows itself as the Function's node (``grad_fn`` prints, names and reads as it) and
    passes its gradient on to it, labelled with the output's number."""

    __slots__ = ("ctx", "nr")
    __call__ = FunctionCtx.__call__     # as the Function's node: not callable

    def backward(self, grad):
        grads = _Grads([None] * len(self.ctx._outputs))
        grads[self.nr] = grad
        return [grads]

    def __repr__(self):
        return repr(self.ctx)

    def name(self):
        return self.ctx.name()

    @property
    def next_functions(self):
        return self.ctx.next_functions

    @property
    def metadata(self):
        return self.ctx.metadata

    def register_hook(self, fn):
        return self.ctx.register_hook(fn)

    def register_prehook(self, fn):
        return self.ctx.register_prehook(fn)

    def _edge(self):
        return self.ctx, self.nr

    def __getattr__(self, attr):
        if attr == "ctx":
            raise AttributeError(attr)
        return getattr(self.ctx, attr)


def _output(ctx, nr):
    node = new_node(ctx._function._node_class(output=True), (ctx,))
    node.ctx, node.nr = ctx, nr
    return node


class _Grads(list):
    """The gradients of a Function's outputs, one per output (None: none arrived yet).
    ``+`` adds two such lists output by output, as the engine adds any two gradients."""

    def __add__(self, other):
        return _Grads(a if b is None else b if a is None else a + b for a, b in zip(self, other))


class Function:
    """Base class of user-defined differentiable operations (see the module docstring)."""

    def __init__(self, *args, **kwargs):
        # ``Softplus(x)``: PyTorch makes the object and warns (its methods are static)
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        # ``Softplus()(x)``, the style of PyTorch before 0.4
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """The newer style: ``forward(*args)`` without ctx, then ``setup_context(ctx, inputs,
        output)`` saves what backward needs."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def _node_class(cls, output=False):
        """``<Name>Backward``, the class of this Function's nodes; with ``output``, the class
        of its outputs' nodes when it has several (named alike: they show as the node)."""
        key = "_output_cls" if output else "_node_cls"
        if key not in cls.__dict__:
            base, extra = (_Output, {"__slots__": ()}) if output else (FunctionCtx, {})
            setattr(cls, key, type(cls.__name__ + "Backward", (base,),
                                   dict(extra, _function=cls,
                                        __module__="torch.autograd.function")))
        return cls.__dict__[key]

    @classmethod
    def apply(cls, *args, **kwargs):
        if cls.setup_context is not Function.setup_context:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)   # (PyTorch's too)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        if kwargs:
            args = _by_position(cls.forward, args, kwargs)
        tensors = [a for a in args if isinstance(a, Tensor)]
        record = _State.enabled and any(t.requires_grad for t in tensors)
        ctx = new_node(cls._node_class(), tuple(_edge(t) for t in tensors))
        ctx._inputs = [(a.shape, a._data.dtype) if isinstance(a, Tensor) else None for a in args]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx._to_save = ()
        with no_grad():
            if cls.setup_context is Function.setup_context:
                out = cls.forward(ctx, *args)
            else:
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
        saved = ctx._to_save
        if record:
            for i, t in enumerate(saved):
                if t is not None and not isinstance(t, Tensor):
                    raise TypeError("save_for_backward can only save variables, but argument "
                                    f"{i} is of type {typename(t)}")
        # (PyTorch's words, cut short as its own formatting cuts them)
        if not all(isinstance(t, Tensor) for t in ctx._non_diff):
            raise RuntimeError("mark_non_differentiable only accepts variable arguments, but got ")
        if not all(isinstance(t, Tensor) for t in ctx._dirty):
            raise RuntimeError("mark_dirty can only accept variables, but argument ")
        outs = out if isinstance(out, tuple) else (out,)
        if not all(any(d is o for o in outs) for d in ctx._dirty):
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must "
                               "all be outputs of the Function.")
        if not record:
            return out
        if not all(any(d is t for t in tensors) for d in ctx._dirty):
            warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                          "Tensors that have been mutated should be passed to ctx.mark_dirty(). "
                          "(Triggered internally at /pytorch/torch/csrc/autograd/"
                          "custom_function.cpp:320.)", UserWarning,
                          stacklevel=1)     # (PyTorch's points inside itself)
        ctx._outputs = [(o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None
                        for o in outs]
        result = [_attach(ctx, o, tensors) for o in outs]
        ctx._to_save = ()      # holding an output would be a cycle
        ctx.saved_names = ("",) * len(saved)
        Node.save_for_backward(ctx, *saved)     # outputs now have grad_fn=ctx: kept bare
        ctx._saved_outputs = {}
        if len(outs) > 1:
            for nr, o in enumerate(result):
                if isinstance(o, Tensor) and o.grad_fn is ctx:
                    o.grad_fn = _output(ctx, nr)
                    ctx._saved_outputs.update((i, nr) for i, s in enumerate(saved) if s is o)
        return tuple(result) if isinstance(out, tuple) else result[0]


def _by_position(forward, args, kwargs):
    """``apply``'s keyword arguments put in their places among forward's positional ones (after
    ``ctx``), as PyTorch's apply places them: none may be left out before the last given."""
    params = list(inspect.signature(forward).parameters.values())[1:]
    names = [p.name for p in params
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for name in kwargs:
        if name not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        if names.index(name) < len(args):
            raise TypeError(f"forward() got multiple values for argument '{name}'")
    last = max(names.index(name) for name in kwargs)
    for i in range(len(args), last + 1):
        if names[i] not in kwargs:
            raise TypeError(f"forward() missing required argument: '{names[i]}' (position {i})")
    return args + tuple(kwargs[name] for name in names[len(args):last + 1])


def _attach(ctx, o, inputs):
    """Make forward's output ``o`` an output of ``ctx`` in the graph (if it is differentiable)."""
    if not isinstance(o, Tensor):
        return o
    if any(o is d for d in ctx._dirty):     # changed in place: its history now ends in ctx
        if o.grad_fn is None and o._rg:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                               "operation.")
        o._bump_version()
    elif any(o is t for t in inputs):       # an input handed back: a new tensor
        o = o._alias()
    if o._data.dtype.kind != "f" or any(o is n for n in ctx._non_diff):
        return o
    o.grad_fn, o._rg = ctx, True
    return o


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable: it runs without recording,
    and differentiating its result raises PyTorch's error."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
