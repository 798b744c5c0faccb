"""Hook handles, and the checks PyTorch makes of what a gradient hook returns."""
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
    """What a gradient hook returned for ``old``, checked as PyTorch checks it: None keeps
    ``old``; anything else must be a Tensor of ``old``'s type and then of its size. ``old``
    is a Tensor or an array, as the gradient travels, and so is what this returns."""
    if new is None:
        return old
    new = _checked(fn, new, old)
    return new if hasattr(old, "_data") else new._data


def check_hook_results(fn, new, old):
    """What a node's hook returned for the gradients ``old`` (a tuple of Tensors or None):
    a tuple of as many, each None (no gradient) or a Tensor like the one it replaces."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{typename(new)}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{_name(fn)}' has returned an incorrect number of values (got "
                           f"{len(new)}, but expected {len(old)})")
    return tuple(None if n is None else _checked(fn, n, o) for n, o in zip(new, old))


def check_post_accumulate_result(fn, new, tensor):
    """A post-accumulate-grad hook returns nothing (or its tensor)."""
    if new is not None and new is not tensor:
        _checked(fn, new, tensor)
        raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _checked(fn, new, old):
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not hasattr(new, "_data"):     # not a Tensor (this module sits below the class: it asks)
        raise TypeError(f"expected Variable, but hook returned '{typename(new)}'")
    new_dtype, old_dtype = new._data.dtype, _values(old).dtype
    if new_dtype != old_dtype:
        raise RuntimeError(f"hook '{_name(fn)}' has changed the type of value (was torch."
                           f"{from_numpy_dtype(old_dtype).legacy} got torch."
                           f"{from_numpy_dtype(new_dtype).legacy})")
    if np.shape(new._data) != np.shape(_values(old)):
        raise RuntimeError(f"hook '{_name(fn)}' has changed the size of value")
    return new


def _name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


def typename(obj):
    """The name of ``obj``'s type as PyTorch's messages give it (C's ``tp_name``): a class
    defined in Python by its bare name, a compiled one with its module (``numpy.ndarray``)."""
    cls = type(obj)
    if cls.__module__ == "builtins" or cls.__flags__ & _HEAP_TYPE:
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


_HEAP_TYPE = 1 << 9     # Py_TPFLAGS_HEAPTYPE: a class statement made it


def _values(x):
    # (a Tensor's array; this module sits below the Tensor class, so it asks, not checks)
    return getattr(x, "_data", x)
