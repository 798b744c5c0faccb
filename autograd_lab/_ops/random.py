"""Random tensors that come out bit for bit as PyTorch's CPU generator makes them.

PyTorch's CPU generator is a Mersenne Twister (``at::mt19937``) giving 32-bit numbers; numpy
ships the same twister, so only the recipes on top of its stream are written out here:

* ``rand``, float32: one draw per element, its low 24 bits times 2**-24.
  float64: two draws ``hi, lo`` per element, the low 53 bits of ``hi << 32 | lo`` times 2**-53.
* ``randn`` of fewer than 16 elements: Box-Muller in double precision, one element at a time.
  A pair of uniform doubles gives two normals; the generator keeps the second for the next
  element, even one of a later call.
* ``randn`` of 16 elements or more: a uniform for every element first, then Box-Muller on
  blocks of 16 (element j pairs with element j + 8). A ragged end is redone with 16 new
  uniforms, written over the last 16 elements.

The float32 Box-Muller of big tensors is PyTorch's AVX2 code (also used on AVX-512 CPUs); it
has its own float32 log, sin and cos, reproduced below operation by operation. On a CPU without
AVX2 PyTorch computes those with the C library's float functions instead, and its last bit can
differ from ours there. Everything else uses double precision and the C library's functions,
which Python's ``math`` module calls too.
"""
import math
import os

import numpy as np

from .._core import device as _device
from .._core.tensor import _wrap

_TORCH_DEFAULT_SEED = 67280421310721    # the seed of a new torch.Generator()
_f = np.float32


def _mt19937(seed):
    """numpy's MT19937 in the state ``at::mt19937(seed)`` starts in.

    PyTorch keeps the whole 64-bit seed (``initial_seed`` shows it) but the twister only sees
    its low 32 bits, spread over the 624 state words by the reference ``init_genrand``.
    """
    key = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        key.append((1812433253 * (key[-1] ^ (key[-1] >> 30)) + i) & 0xFFFFFFFF)
    bits = np.random.MT19937(0)
    # pos 624: the first draw regenerates the state, as PyTorch's engine does
    bits.state = {"bit_generator": "MT19937",
                  "state": {"key": np.array(key, np.uint32), "pos": 624}}
    return bits


class Generator:
    """A CPU random generator: the twister's stream plus one cached normal sample."""

    def __init__(self, device="cpu"):
        self.manual_seed(_TORCH_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % 2 ** 64             # PyTorch reads a negative seed as uint64
        self._bits = None       # made on first draw: numpy.random is slow to import
        self._next_normal = None
        return self

    def seed(self):
        """Reseed from the operating system, as PyTorch does, and return the seed."""
        self.manual_seed(int.from_bytes(os.urandom(8), "little"))
        return self._seed

    def initial_seed(self):
        return self._seed

    def _uniform(self, n, double=False):
        """n uniform numbers in [0, 1): float32 from 24 bits of one draw, float64 from 53
        bits of two. Both are exact multiples of a power of two, so no rounding happens."""
        if self._bits is None:
            self._bits = _mt19937(self._seed)
        if double:
            hi, lo = self._bits.random_raw(2 * n).reshape(n, 2).T
            return ((hi & 0x1FFFFF) * 2.0 ** 32 + lo) * 2.0 ** -53
        return (self._bits.random_raw(n) & 0xFFFFFF).astype(_f) * _f(2.0 ** -24)

    def _normal(self):
        """One sample of ``at::normal_distribution<double>``: the cos half of a Box-Muller
        pair, the sin half kept for the next call. Note log1p(-u2), where the 16-block code
        below takes log(1 - u)."""
        if self._next_normal is not None:
            sample, self._next_normal = self._next_normal, None
            return sample
        u1, u2 = (float(u) for u in self._uniform(2, double=True))
        radius = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self._next_normal = radius * math.sin(theta)
        return radius * math.cos(theta)


default_generator = Generator()
default_generator.seed()        # unseeded, PyTorch starts from a random seed too


def manual_seed(seed):
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


# ---- Box-Muller on blocks of 16: u1 = 1 - u[j] feeds the radius, u2 = u[j + 8] the angle ----

def _box_muller16_double(u):
    """The plain C++ loop, in double: C library log, cos and sin, the ones ``math`` calls."""
    u1, u2 = 1.0 - u[:, :8].ravel(), u[:, 8:].ravel()
    log = np.fromiter(map(math.log, u1), np.float64, len(u1))
    radius = np.sqrt(-2.0 * log)
    theta = 2.0 * math.pi * u2
    cos = np.fromiter(map(math.cos, theta), np.float64, len(theta))
    sin = np.fromiter(map(math.sin, theta), np.float64, len(theta))
    return np.concatenate([(radius * cos).reshape(-1, 8), (radius * sin).reshape(-1, 8)], 1)


def _fma(a, b, c):
    """float32 a * b + c with one rounding, as the FMA instruction computes it.

    The compiler fused each multiply whose only use is an add into an FMA, so the emulation
    must too. a * b is exact in float64; the float64 sum is rounded to odd (a last bit of 1
    marks "inexact"), which makes the one rounding to float32 the one that decides.
    """
    p = a.astype(np.float64) * b
    s = p + c
    back = s - p
    err = (p - (s - back)) + (c - back)         # the exact s - (p + c), by Knuth's TwoSum
    even = (s.view(np.int64) & 1) == 0
    s = np.where((err != 0) & even, np.nextafter(s, np.copysign(np.inf, err)), s)
    return s.astype(_f)


def _log_avx2(x):
    """``log256_ps`` (Cephes logf) for x in (0, 1]: x = m * 2**e with m in [sqrt(.5), sqrt(2)),
    log(x) = e * ln 2 + log1p(m - 1) by a polynomial. ln 2 is split in two (q2 + q1)."""
    bits = x.view(np.int32)
    e = ((bits >> 23) - 126).astype(_f)
    m = ((bits & 0x007FFFFF) | 0x3F000000).view(_f)        # the mantissa, in [0.5, 1)
    small = m < _f(0.707106781186547524)
    e -= small                                              # then use 2m instead
    x = (m - _f(1)) + np.where(small, m, _f(0))
    z = x * x
    y = np.full_like(x, _f(7.0376836292e-2))
    for p in (-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
              -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1):
        y = _fma(y, x, _f(p))
    y = _fma(y * x, z, e * _f(-2.12194440e-4))
    y = y - z * _f(0.5)
    return (x + y) + e * _f(0.693359375)


def _sincos_avx2(x):
    """``sincos256_ps`` (Cephes sinf/cosf) for x in [0, 2 pi): reduce by the multiple j of
    pi/4 (made even), then one polynomial for sin and one for cos, swapped where j says."""
    j = (x * _f(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_f)
    # x - y * pi/4 with pi/4 in three parts; the first two products are exact
    x = x + y * _f(-0.78515625)
    x = x + y * _f(-2.4187564849853515625e-4)
    x = _fma(y, _f(-3.77489497744594108e-8), x)
    z = x * x
    cos = _fma(np.full_like(z, _f(2.443315711809948e-5)), z, _f(-1.388731625493765e-3))
    cos = _fma(cos, z, _f(4.166664568298827e-2)) * z
    cos = _fma(cos, z, -(z * _f(0.5))) + _f(1)
    sin = _fma(np.full_like(z, _f(-1.9515295891e-4)), z, _f(8.3321608736e-3))
    sin = _fma(sin, z, _f(-1.6666654611e-1)) * z
    sin = _fma(sin, x, x)
    swap = (j & 2) != 0
    sin, cos = np.where(swap, cos, sin), np.where(swap, sin, cos)
    return (np.where((j & 4) != 0, -sin, sin),
            np.where(((j - 2) & 4) == 0, -cos, cos))


def _box_muller16_float(u):
    """PyTorch's AVX2 ``NormalFill16<float>``, all in float32."""
    radius = np.sqrt(_f(-2) * _log_avx2(_f(1) - u[:, :8]))
    sin, cos = _sincos_avx2(_f(2 * math.pi) * u[:, 8:])
    return np.concatenate([radius * cos, radius * sin], 1)


def _normal_fill(gen, n, np_dtype):
    """``normal_fill``: Box-Muller on each whole block of 16 uniforms. A ragged end is redone:
    16 new uniforms, written over the last 16 elements. float32 and float64 draw all n
    uniforms first (so the ragged end's own ones are thrown away); float16 computes in a
    float32 buffer a block at a time and draws only whole blocks."""
    double = np_dtype == np.float64
    box_muller16 = _box_muller16_double if double else _box_muller16_float
    out = np.empty(n, np.float64 if double else _f)
    whole = n - n % 16
    u = gen._uniform(n if np_dtype in (np.float32, np.float64) else whole, double)
    out[:whole] = box_muller16(u[:whole].reshape(-1, 16)).ravel()
    if whole != n:
        out[n - 16:] = box_muller16(gen._uniform(16, double).reshape(1, 16)).ravel()
    return out


# ---- the factories ----

def _size(size):
    """randn(2, 3), randn((2, 3)) and randn([2, 3]) all mean the shape (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def _factory(kernel, size, generator, dtype, device, requires_grad, make):
    """Check the device and the dtype, draw ``make(generator, numel, numpy dtype)`` and wrap it as a leaf."""
    _device.check(device)
    np_dtype = np.dtype(_f) if dtype is None else dtype.np
    if np_dtype.kind != "f":
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{dtype.legacy[:-len("Tensor")]}\'')
    shape = _size(size)
    array = make(generator or default_generator, math.prod(shape), np_dtype)
    t = _wrap(array.astype(np_dtype, copy=False).reshape(shape))
    if requires_grad:
        t.requires_grad = True
    return t


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    def make(gen, n, np_dtype):
        if n >= 16:                 # PyTorch's vectorised path (its tensor is contiguous)
            return _normal_fill(gen, n, np_dtype)
        return np.array([gen._normal() for _ in range(n)])
    return _factory("normal_kernel_cpu", size, generator, dtype, device, requires_grad, make)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    def make(gen, n, np_dtype):
        u = gen._uniform(n, np_dtype == np.float64).astype(np_dtype)
        u[u == 1] = 0       # a float16 can round up to 1; PyTorch then gives 0, staying in [0, 1)
        return u
    return _factory("check_uniform_bounds", size, generator, dtype, device, requires_grad,
                    make)
