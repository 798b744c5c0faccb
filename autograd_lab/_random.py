"""Random tensors are in ``autograd_lab/_ops/random.py``.

(This module keeps the old path importable.)"""
from ._ops.random import (Generator, _fma, default_generator, initial_seed, manual_seed, rand,
                          randn, seed)

__all__ = ["Generator", "default_generator", "initial_seed", "manual_seed", "rand", "randn",
           "seed", "_fma"]
