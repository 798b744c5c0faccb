"""``torch.autograd.graph``: graph nodes and saved-tensor hooks, as PyTorch names them.

A public module: the graph itself -- nodes, saved tensors, ``AccumulateGrad`` -- is in
``autograd_lab/_core/graph.py``."""
from .._core.graph import (AccumulateGrad, Node, disable_saved_tensors_hooks, save_on_cpu,
                           saved_tensors_hooks)
from .._core.hooks import RemovableHandle

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "RemovableHandle", "AccumulateGrad"]
