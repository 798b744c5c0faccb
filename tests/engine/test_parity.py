"""autograd_lab against PyTorch, one snippet at a time (the snippets: tests/support/parity_cases.py).

Each case runs under real PyTorch and under autograd_lab and must print the same text, end
with the same exception (class and message) and raise the same warnings (category, message,
and where the warning points: the snippet's own line or inside the library).

Left out, because autograd_lab has no such API:
* ``torch.optim.SGD([x]).zero_grad()``: the engine has no optimizers; ``x.grad = None`` and
  ``x.grad.zero_()``, which that line is about, are covered (``vjp/zero_and_none``).
A case autograd_lab cannot match yet would be marked in ``parity_cases.XFAIL``, with the
reason (none today).
"""
import pytest

import autograd_lab
import dual
from parity_cases import CASES, FRESH, XFAIL


def _params():
    return [pytest.param(name, id=name, marks=[pytest.mark.xfail(strict=True, reason=XFAIL[name])]
                         if name in XFAIL else [])
            for name in sorted(CASES)]


@pytest.mark.parametrize("name", _params())
def test_same_as_pytorch(name, torch):
    code = CASES[name]
    if name in FRESH:
        ours = dual.run_fresh(code, "autograd_lab", sites=True)
        theirs = dual.run_fresh(code, "torch", sites=True)
    else:
        ours = dual.run(code, autograd_lab, sites=True)
        theirs = dual.run(code, torch, sites=True)
    assert ours == theirs


def test_case_tables_are_consistent():
    """Every FRESH or XFAIL entry names a case, so a renamed case cannot drop its mark."""
    assert FRESH <= CASES.keys()
    assert XFAIL.keys() <= CASES.keys()


class _LeftOpen:
    """An earlier test's object that warns when finalized, as a database connection does."""
    def __init__(self):
        self.me = self              # a cycle: only the garbage collector frees it

    def __del__(self):
        import warnings
        warnings.warn("left open", ResourceWarning, stacklevel=1)


def test_an_earlier_tests_garbage_is_not_the_snippets_warning():
    _LeftOpen()
    code = "import gc, warnings\ngc.collect()\nwarnings.warn('mine')\nprint(1)\n"
    out, error, warned = dual.run(code, autograd_lab)
    assert (out, error, warned) == ("1\n", None, [("UserWarning", "mine")])
