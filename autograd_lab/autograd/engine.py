"""The backward pass is in ``autograd_lab/_core/engine.py`` (topological sort, one sweep,
accumulation, freeing); ``backward()`` and ``grad()`` are in ``_core/backward.py``.

(PyTorch has no ``torch.autograd.engine``; this module keeps the path the lessons name.)"""
from .._core.engine import run_backward, toposort

__all__ = ["run_backward", "toposort"]
