"""Random tensors: ``manual_seed``, ``rand``, ``randn``."""
import numpy as np

from ._tensor import _wrap

_generator = np.random.default_rng()


def manual_seed(seed):
    global _generator
    _generator = np.random.default_rng(seed)


def seed():
    manual_seed(None)


def _shape(size):
    return tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else tuple(size)


def _leaf(array, dtype, requires_grad):
    t = _wrap(array.astype(np.float32 if dtype is None else dtype.np))
    if requires_grad:
        t.requires_grad = True
    return t


def randn(*size, dtype=None, requires_grad=False):
    return _leaf(_generator.standard_normal(_shape(size)), dtype, requires_grad)


def rand(*size, dtype=None, requires_grad=False):
    return _leaf(_generator.random(_shape(size)), dtype, requires_grad)
