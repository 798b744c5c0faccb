"""``torch.save`` and ``torch.load``: tensors, and dicts, lists and tuples holding them, to a
path or a file object.

The file is Python's pickle, not PyTorch's zip archive: autograd_lab reads its own files, and
PyTorch cannot read them (nor autograd_lab PyTorch's). What a tensor keeps is what PyTorch
keeps: its values, dtype, shape and ``requires_grad`` -- not ``.grad``, not its graph (a saved
non-leaf loads as a leaf). ``torch.load`` only rebuilds tensors and plain containers unless
``weights_only=False``, as PyTorch does since 2.6, since unpickling can run any code.
"""
import codecs
import collections
import os
import pickle

from ._core import device as _device
from ._core.tensor import _rebuild_tensor

_UNSAFE = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, "
    "\x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In "
    "PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please "
    "check the recommended steps in the following error message.\n\tWeightsUnpickler error: "
    "Unsupported global: GLOBAL {0} was not an allowed global by default. Please use "
    "`torch.serialization.add_safe_globals([{0}])` or the "
    "`torch.serialization.safe_globals([{0}])` context manager to allowlist this global if you "
    "trust this class/function.\n\nCheck the documentation of torch.load to learn more about "
    "types accepted by default with weights_only "
    "https://pytorch.org/docs/stable/generated/torch.load.html.")


# What a saved tensor is rebuilt with (``Tensor.__reduce_ex__``, in _core/tensor.py). Files
# written before it moved name it by its old place, this module: both are allowed.
_SAFE = {(_rebuild_tensor.__module__, "_rebuild_tensor"): _rebuild_tensor,
         (__name__, "_rebuild_tensor"): _rebuild_tensor,
         ("collections", "OrderedDict"): collections.OrderedDict,
         ("_codecs", "encode"): codecs.encode}     # how pickle protocol 2 writes bytes


class _WeightsOnly(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) not in _SAFE:
            raise pickle.UnpicklingError(_UNSAFE.format(f"{module}.{name}"))
        return _SAFE[module, name]


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Write ``obj`` to ``f``: a path, or a file object opened for writing bytes."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as file:
            pickle_module.dump(obj, file, protocol=pickle_protocol)
    else:
        pickle_module.dump(obj, f, protocol=pickle_protocol)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Read back what ``save`` wrote. ``map_location`` may name the CPU only."""
    if map_location is not None and not callable(map_location) and not isinstance(
            map_location, dict):
        _device.check(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return load(file, weights_only=weights_only)
    if weights_only:
        return _WeightsOnly(f).load()
    return (pickle_module or pickle).load(f)
