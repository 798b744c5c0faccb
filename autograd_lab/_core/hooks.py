"""Hook handles, and the check PyTorch makes of what a gradient hook returns."""
import numpy as np

from .dtype import from_numpy_dtype


class RemovableHandle:
    """What ``register_hook`` returns: ``.remove()`` takes the hook away again."""

    __slots__ = ("hooks", "fn")

    def __init__(self, hooks, fn):
        self.hooks, self.fn = hooks, fn
        hooks.append(fn)

    def remove(self):
        if self.fn in self.hooks:
            self.hooks.remove(self.fn)


def check_hook_result(fn, new, old):
    """What a gradient hook returned must look like what it was given (PyTorch checks too).
    ``new`` and ``old`` are Tensors or arrays, as the gradient travels."""
    name = getattr(fn, "__name__", type(fn).__name__)
    if np.shape(new) != np.shape(old):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    new_dtype, old_dtype = np.result_type(_values(new)), np.result_type(_values(old))
    if new_dtype != old_dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was torch."
                           f"{from_numpy_dtype(old_dtype).legacy} got torch."
                           f"{from_numpy_dtype(new_dtype).legacy})")
    return new


def _values(x):
    # (a Tensor's array; this module sits below the Tensor class, so it asks, not checks)
    return getattr(x, "_data", x)
