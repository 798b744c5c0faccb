"""``torch.nn.functional``: activations, ``linear`` and the losses, as functions of tensors.
The operations themselves, with their backward, are in ``_ops/nn.py``."""
import warnings

from .._ops import arithmetic as _arithmetic
from .._ops import nn as _nn
from .._ops.arg_parser import checked
from .._ops.nn import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
                       mse_loss, nll_loss)

# PyTorch's checks of their arguments (``relu(None)``: "argument 'input' (position 1) must be
# Tensor, not NoneType")
relu, sigmoid, tanh, linear = (checked(fn, f"F.{name}", method=False) for fn, name in (
    (_arithmetic.relu, "relu"), (_arithmetic.sigmoid, "sigmoid"), (_arithmetic.tanh, "tanh"),
    (_nn.linear, "linear")))

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "linear", "mse_loss",
           "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits"]


def _implicit_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):    # noqa: A002 -- PyTorch's names
    if dim is None:
        dim = _implicit_dim("softmax", input.ndim)
    return _nn.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):    # noqa: A002
    if dim is None:
        dim = _implicit_dim("log_softmax", input.ndim)
    return _nn.log_softmax(input, dim, dtype=dtype)
