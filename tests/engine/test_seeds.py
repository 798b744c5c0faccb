"""Every seed example prints under autograd_lab exactly what it prints under PyTorch."""
import pytest

import autograd_lab
import dual
import seed_snippets


@pytest.mark.parametrize("name", sorted(seed_snippets.ALL))
def test_seed_example_prints_what_pytorch_prints(name, torch):
    code = seed_snippets.ALL[name]
    assert dual.run(code, autograd_lab) == dual.run(code, torch)


def test_seed_blitz_gradient_without_torch():
    """The blog's result, from the numbers alone: v * 2**9 once |y| passes 1000."""
    out, error, _ = dual.run(seed_snippets.BLITZ_FIXED, autograd_lab)
    assert error is None
    assert out.splitlines()[1] == "tensor([5.1200e+01, 5.1200e+02, 5.1200e-02])"
