"""``autograd.functional.jacobian``: the full Jacobian, one backward pass per output element.

Row i of the Jacobian is v^T J with v the i-th one-hot vector: exactly what
``y.backward(gradient=onehot_i)`` computes. This is the slow, explicit way, on purpose."""
import numpy as np

from .._core.tensor import Tensor, _wrap
# (torch.autograd.grad, which a course check can keep from running the engine; the package
#  imports this module only on first use, so importing the package from here is no cycle)
from . import grad


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    inputs = tuple(x.detach().requires_grad_(True) for x in inputs)
    out = func(*inputs)
    rows = [np.zeros((out.numel(),) + x._data.shape, x._data.dtype) for x in inputs]
    for i in range(out.numel()):
        onehot = np.zeros(out.numel(), out._data.dtype)
        onehot[i] = 1
        gs = grad(out, inputs, _wrap(onehot.reshape(out._data.shape)), retain_graph=True,
                  allow_unused=True)
        for r, g in zip(rows, gs):
            if g is not None:
                r[i] = g._data
    jac = tuple(_wrap(r.reshape(out._data.shape + x._data.shape)) for r, x in zip(rows, inputs))
    return jac[0] if single else jac
