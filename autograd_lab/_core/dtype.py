"""dtypes and Size: the names PyTorch prints (``torch.float32``, ``torch.Size([2])``)."""
import numpy as np


class dtype:
    """A tensor element type. It prints as PyTorch prints it, so outputs match."""

    __slots__ = ("name", "np", "is_floating_point", "legacy")

    def __init__(self, name, np_type, legacy):
        self.name, self.np = name, np.dtype(np_type)
        self.is_floating_point = self.np.kind == "f"
        self.legacy = legacy            # 'FloatTensor': named in the in-place error text

    @property
    def scalar_name(self):
        """PyTorch's scalar type name, as its error texts say it: 'Float', 'Long', 'Bool'."""
        return self.legacy[:-len("Tensor")]

    @property
    def c_name(self):
        """The C++ type, as the error texts of PyTorch's BLAS products say it: 'float', 'long int'."""
        return _C_NAMES[self.name]

    @property
    def itemsize(self):
        return self.np.itemsize

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):               # pickles/deep-copies as the module singleton
        return self.name


float32 = dtype("float32", np.float32, "FloatTensor")
float64 = dtype("float64", np.float64, "DoubleTensor")
float16 = dtype("float16", np.float16, "HalfTensor")
int64 = dtype("int64", np.int64, "LongTensor")
int32 = dtype("int32", np.int32, "IntTensor")
int16 = dtype("int16", np.int16, "ShortTensor")
int8 = dtype("int8", np.int8, "CharTensor")
uint8 = dtype("uint8", np.uint8, "ByteTensor")
bool = dtype("bool", np.bool_, "BoolTensor")    # noqa: A001 -- PyTorch's own name

_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}
_BY_NUMPY = {d.np: d for d in (float32, float64, float16, int64, int32, int16, int8, uint8, bool)}


def from_numpy_dtype(np_dtype):
    return _BY_NUMPY[np_dtype]


class Size(tuple):
    """A shape. A tuple underneath, so ``x.shape == (2,)`` holds, as in PyTorch."""

    __slots__ = ()

    def __repr__(self):
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    # slicing, concatenating and repeating a Size give a Size, as in PyTorch
    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(other + tuple(self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n
