"""The strides of views, against PyTorch's.

numpy and PyTorch agree on every stride a view reads. In a dimension of size 1 no element is
read, and each library sets its own; but PyTorch's overlap check for in-place operations
compares whole stride lists, so the views that can meet in one in-place operation (view,
reshape, unsqueeze, ``[None]``, expand) must carry PyTorch's strides there too."""
import numpy as np
import pytest
import torch

import autograd_lab as al


def _strides(t):
    return t.stride() if isinstance(t, torch.Tensor) else tuple(
        s // t._data.itemsize for s in t._data.strides)


def _laid_out(lib, shape, order, lead):
    """arange over ``shape``, its dimensions permuted by ``order``, ``lead`` new dimensions
    put in front with ``[None]``."""
    t = lib.arange(float(np.prod(shape))).reshape(shape).permute(*order)
    for _ in range(lead):
        t = t[None]
    return t


LAYOUTS = [((3, 1, 2), (0, 2, 1), 1), ((2, 1), (1, 0), 0), ((1, 3, 1), (2, 0, 1), 2),
           ((2, 3), (1, 0), 1), ((1, 1, 2), (1, 2, 0), 0), ((2, 2, 3), (2, 1, 0), 1)]


@pytest.mark.parametrize("shape, order, lead", LAYOUTS)
def test_views_have_pytorchs_strides(shape, order, lead):
    made = {}
    for lib in (torch, al):
        t = _laid_out(lib, shape, order, lead)
        n = t.numel()
        results = [t]
        for new in [(1, n), (n, 1), (1, 1, n), (n,)] + [(a, n // a) for a in range(2, n)
                                                         if n % a == 0]:
            for how in ("view", "reshape"):
                try:
                    results.append(getattr(t, how)(*new))
                except RuntimeError as e:
                    results.append(str(e)[:40])
        results += [t.unsqueeze(d) for d in range(-t.dim() - 1, t.dim() + 1)]
        results += [t.expand(1, *t.shape), t.expand(2, *t.shape)]
        made[lib] = [r if isinstance(r, str) else (tuple(r.shape), _strides(r)) for r in results]
    assert made[al] == made[torch]


def test_an_inplace_op_between_views_of_the_same_elements():
    """Views of the same elements with PyTorch's strides overlap fully (allowed); those whose
    strides differ in PyTorch too overlap partly (refused), in both."""
    for lib in (torch, al):
        g = lib.tensor([[1.4], [0.5]])
        t5 = g.mT.reshape(1, 2)
        t5[None, -1].mul_(t5)                   # the same strides: allowed
        a = lib.tensor([[1.9, 1.8]])
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            a[::2].add_(a)                      # a size-1 dimension's stride differs
