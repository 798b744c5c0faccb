"""Custom operations: subclass ``Function`` with ``forward(ctx, ...)`` and ``backward(ctx, ...)``.

``MyExp.apply(x)`` runs ``forward`` without recording, then attaches a node named
``MyExpBackward``. That node *is* the ``ctx`` both methods receive, so whatever forward stores
on it (``ctx.save_for_backward(...)``, ``ctx.k = 3``) is there in backward -- the same contract
as ``torch.autograd.Function``, and the one every built-in operation in ``_ops/`` follows.
"""
import numpy as np

from .graph import Node, new_node
from .grad_mode import _State, no_grad


class FunctionCtx(Node):
    """The node of a custom Function, handed to its forward and backward as ``ctx``."""

    _function = None        # the Function subclass this node belongs to

    @property
    def saved_tensors(self):
        return tuple(self._unpack(as_tensors=True))

    def save_for_backward(self, *tensors):
        self._to_save = tensors         # kept until forward returns: outputs are swapped then

    def _checked_backward(self, grad, as_tensors=False):
        return self.backward(grad)      # ctx.saved_tensors checks and converts by itself

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors

    def backward(self, grad):
        from .._tensor import Tensor, _wrap
        plain = not isinstance(grad, Tensor)
        grads = self._function.backward(self, _wrap(np.asarray(grad)) if plain else grad)
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) != len(self._arg_is_tensor):
            raise RuntimeError(f"function {type(self).__name__} returned an incorrect number of "
                               f"gradients (expected {len(self._arg_is_tensor)}, got {len(grads)})")
        tensor_grads = [g for g, is_t in zip(grads, self._arg_is_tensor) if is_t]
        return [None if g is None else (g._data if plain else g) for g in tensor_grads]


class Function:
    """Base class of user-defined differentiable operations (see the module docstring)."""

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    @classmethod
    def _node_class(cls):
        if "_node_cls" not in cls.__dict__:
            cls._node_cls = type(cls.__name__ + "Backward", (FunctionCtx,),
                                 {"_function": cls, "__module__": cls.__module__})
        return cls._node_cls

    @classmethod
    def apply(cls, *args):
        from .._tensor import Tensor
        from .._ops import _edge
        tensors = [a for a in args if isinstance(a, Tensor)]
        record = _State.enabled and any(t.requires_grad for t in tensors)
        ctx = new_node(cls._node_class(), tuple(_edge(t) for t in tensors))
        ctx._arg_is_tensor = [isinstance(a, Tensor) for a in args]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx._to_save, ctx._non_diff = (), ()
        with no_grad():
            out = cls.forward(ctx, *args)
        if not record:
            return out
        outs = out if isinstance(out, tuple) else (out,)
        result = []
        for o in outs:
            if isinstance(o, Tensor) and not any(o is n for n in ctx._non_diff):
                if any(o is t for t in tensors):     # an input handed back: a new tensor
                    o = o._alias()
                o.grad_fn, o._rg = ctx, True
            result.append(o)
        ctx.saved_names = ("",) * len(ctx._to_save)
        Node.save_for_backward(ctx, *ctx._to_save)    # outputs now have grad_fn=ctx: kept bare
        ctx._to_save = ()       # it may hold an output, whose grad_fn is ctx: a reference cycle
        return tuple(result) if isinstance(out, tuple) else result[0]
