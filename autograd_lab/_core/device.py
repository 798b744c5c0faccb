"""Devices, the way a PyTorch built without CUDA has them.

Every tensor lives on the CPU. ``torch.device("cuda")`` can still be *named* (PyTorch lets you
write it down), but asking for memory there -- a factory's ``device=``, ``.to("cuda")``,
``.cuda()`` -- raises what CPU-only PyTorch raises. So a tutorial's first lines,
``device = torch.device("cuda" if torch.cuda.is_available() else "cpu")``, run unchanged.
"""
import builtins
import re

TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
         "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
NO_CUDA = "Torch not compiled with CUDA enabled"
NO_ACCELERATOR = "Cannot access accelerator device when none is available."
_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9]\d*|0))?")


class device:       # noqa: N801 -- PyTorch's name
    """``torch.device("cpu")``, ``torch.device("cuda", 0)``, ``torch.device("cuda:1")``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):     # noqa: A002 -- PyTorch's argument names
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError(NO_ACCELERATOR)
        else:
            match = _STRING.fullmatch(type)
            if match is None:
                raise RuntimeError(f"Invalid device string: '{type}'")
            if match[1] not in TYPES:
                raise RuntimeError(f"Expected one of {', '.join(TYPES)} device type at start of "
                                   f"device string: {match[1]}")
            if match[2] is not None:
                if index is not None:
                    raise RuntimeError("type (string) must not include an index because index "
                                       f"was passed explicitly: {type}")
                index = int(match[2])
            type = match[1]
        if index is not None:
            if not isinstance(index, int):
                raise TypeError("device(): argument 'index' (position 2) must be int, not "
                                f"{builtins.type(index).__name__}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")

    def __repr__(self):
        extra = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{extra})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return (isinstance(other, device) and self.type == other.type
                and self.index == other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return device, (str(self),)


CPU = device("cpu")
_default = [None]       # set_default_device's device; None: the CPU


def check(requested):
    """The device a factory or ``.to()`` was asked for (None: the default one), as a device:
    the CPU, or PyTorch's error for a device this build cannot allocate on."""
    if requested is None:
        requested = _default[0]
        if requested is None:
            return CPU
    if type(requested) is not device:
        requested = device(requested)
    if requested.type == "cpu":
        return requested
    if requested.type == "cuda":
        raise AssertionError(NO_CUDA)
    raise NotImplementedError(
        f"Could not run 'aten::empty.memory_format' with arguments from the "
        f"'{requested.type.upper()}' backend: autograd_lab computes on the CPU only.")


def get_default_device():
    """The device factories use when they are given none."""
    return check(None)


def set_default_device(requested):
    """``set_default_device("cpu")`` (or None) is what there is; another device is accepted
    here and refused by the next factory, as PyTorch does without CUDA."""
    _default[0] = None if requested is None else device(requested)
