"""After the same seed, rand and randn give exactly PyTorch's numbers, bit for bit."""
import numpy as np
import pytest

import autograd_lab

SEEDS = [0, 1, 42, 2147483647, 2 ** 32 + 5, -3]
DTYPES = [None, "float32", "float64", "float16"]

# One call after another from one seed: small tensors (one Box-Muller pair per two elements,
# the odd one left cached in the generator for the next call), whole and ragged blocks of 16,
# several dimensions, a 0-d and an empty tensor.
SHAPES = [(3,), (17,), (1,), (4, 4), (2, 3, 5), (15,), (), (784, 10), (0,), (5,), (16,),
          (33, 2)]


def _same(ours, theirs):
    theirs = theirs.detach().numpy()
    ours = ours.detach().numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs, strict=True)
    assert ours.tobytes() == theirs.tobytes()       # -0.0 and 0.0 must not pass for equal


def _kwargs(lib, dtype):
    return {} if dtype is None else {"dtype": getattr(lib, dtype)}


@pytest.mark.parametrize("fn", ["randn", "rand"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_a_sequence_of_calls_matches_pytorch(seed, dtype, fn, torch):
    torch.manual_seed(seed)
    autograd_lab.manual_seed(seed)
    for shape in SHAPES:
        _same(getattr(autograd_lab, fn)(shape, **_kwargs(autograd_lab, dtype)),
              getattr(torch, fn)(shape, **_kwargs(torch, dtype)))


def test_randn_and_rand_interleaved_share_one_stream(torch):
    """rand between two small randn calls must not disturb the cached normal sample."""
    for lib in (torch, autograd_lab):
        lib.manual_seed(7)
    for fn, size, dtype in [("randn", 3, None), ("rand", 5, None), ("randn", 1, "float64"),
                            ("rand", 20, "float64"), ("randn", 20, None), ("randn", 2, None)]:
        _same(getattr(autograd_lab, fn)(size, **_kwargs(autograd_lab, dtype)),
              getattr(torch, fn)(size, **_kwargs(torch, dtype)))


@pytest.mark.parametrize("seed", [0, 3])
def test_a_weight_matrix_matches_pytorch(seed, torch):
    """784x256 float32 goes through PyTorch's vectorised float32 log/sin/cos."""
    torch.manual_seed(seed)
    autograd_lab.manual_seed(seed)
    _same(autograd_lab.randn(784, 256), torch.randn(784, 256))
    _same(autograd_lab.randn(784, 256, dtype=autograd_lab.float64),
          torch.randn(784, 256, dtype=torch.float64))


def test_sizes_as_arguments_tuple_list_or_size(torch):
    for size in [(2, 3), ((2, 3),), ([2, 3],), (torch.Size([2, 3]),)]:
        ours = [autograd_lab.Size(s) if isinstance(s, torch.Size) else s for s in size]
        torch.manual_seed(1)
        autograd_lab.manual_seed(1)
        _same(autograd_lab.randn(*ours), torch.randn(*size))


def test_requires_grad_gives_a_leaf_with_the_same_values(torch):
    torch.manual_seed(0)
    autograd_lab.manual_seed(0)
    ours, theirs = autograd_lab.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    _same(ours, theirs)
    assert ours.requires_grad and ours.is_leaf and ours.grad_fn is None
    ours, theirs = autograd_lab.rand(4, 5, requires_grad=True), torch.rand(4, 5, requires_grad=True)
    _same(ours, theirs)
    assert ours.requires_grad and ours.is_leaf


def test_a_generator_object_has_its_own_stream(torch):
    """makemore's ``g = torch.Generator().manual_seed(2147483647)``, next to the default one."""
    torch.manual_seed(5)
    autograd_lab.manual_seed(5)
    theirs = torch.Generator().manual_seed(2147483647)
    ours = autograd_lab.Generator().manual_seed(2147483647)
    for size in [(27, 27), (3,), (1,)]:
        _same(autograd_lab.randn(size, generator=ours), torch.randn(size, generator=theirs))
        _same(autograd_lab.rand(size, generator=ours), torch.rand(size, generator=theirs))
    _same(autograd_lab.randn(4), torch.randn(4))     # the default generator was left alone


def test_seeds_are_kept_as_pytorch_keeps_them(torch):
    """64 bits are kept (negative ones as uint64), only the low 32 reach the twister."""
    assert autograd_lab.Generator().initial_seed() == torch.Generator().initial_seed()
    for seed in [0, 2 ** 64 - 1, -1, -2 ** 63, 2 ** 32 + 5, 12.7, "9"]:
        torch.manual_seed(seed)
        assert autograd_lab.manual_seed(seed).initial_seed() == torch.initial_seed()
        assert autograd_lab.initial_seed() == torch.initial_seed()
        _same(autograd_lab.randn(3), torch.randn(3))
    for seed in [2 ** 64, -2 ** 63 - 1]:
        with pytest.raises(ValueError) as theirs:
            torch.manual_seed(seed)
        with pytest.raises(ValueError) as ours:
            autograd_lab.manual_seed(seed)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("fn", ["randn", "rand"])
def test_integer_dtypes_are_refused_as_pytorch_refuses_them(fn, torch):
    for dtype in ["int64", "uint8", "bool"]:
        with pytest.raises(NotImplementedError) as theirs:
            getattr(torch, fn)(3, dtype=getattr(torch, dtype))
        with pytest.raises(NotImplementedError) as ours:
            getattr(autograd_lab, fn)(3, dtype=getattr(autograd_lab, dtype))
        assert str(ours.value) == str(theirs.value)


def test_the_blitz_example_matches_pytorch(torch):
    import dual
    import seed_snippets
    assert dual.run(seed_snippets.BLITZ, autograd_lab) == dual.run(seed_snippets.BLITZ, torch)


# ---- without PyTorch ----

@pytest.mark.parametrize("dtype", [None, "float64"])
def test_the_same_seed_gives_the_same_values_again(dtype):
    kwargs = _kwargs(autograd_lab, dtype)

    def draw(seed):
        autograd_lab.manual_seed(seed)
        return [autograd_lab.randn(3, **kwargs).numpy(), autograd_lab.rand(2, 2, **kwargs).numpy(),
                autograd_lab.randn(40, **kwargs).numpy(), autograd_lab.randn(1, **kwargs).numpy()]

    first, again, other = draw(11), draw(11), draw(12)
    for a, b, c in zip(first, again, other):
        assert a.tobytes() == b.tobytes()
        assert not np.array_equal(a, c)


def test_seed_reseeds_from_the_system_and_reports_it():
    used = autograd_lab.seed()
    assert used == autograd_lab.initial_seed()
    assert 0 <= used < 2 ** 64
    values = autograd_lab.randn(5).numpy()
    autograd_lab.manual_seed(used)
    assert autograd_lab.randn(5).numpy().tobytes() == values.tobytes()
    assert autograd_lab.seed() != used          # a 64-bit collision: one chance in 2**64


@pytest.mark.parametrize("dtype", [None, "float64"])
def test_the_distributions_have_the_right_shape(dtype):
    """A broken transform shows here even where no PyTorch is installed."""
    autograd_lab.manual_seed(0)
    normal = autograd_lab.randn(100_003, **_kwargs(autograd_lab, dtype)).numpy()
    uniform = autograd_lab.rand(100_003, **_kwargs(autograd_lab, dtype)).numpy()
    assert abs(normal.mean()) < 0.01 and abs(normal.std() - 1) < 0.01
    assert abs(np.mean(normal < -1.0) - 0.1587) < 0.005          # Phi(-1)
    assert 0 <= uniform.min() and uniform.max() < 1 and abs(uniform.mean() - 0.5) < 0.005


def test_the_float32_fma_rounds_once():
    """(1 + 2**-12)**2 + 2**-60 lies just above a float32 tie; rounding the float64 sum first
    would land on the tie and round down to even."""
    from autograd_lab._random import _fma
    a = np.float32(1 + 2 ** -12)
    assert _fma(np.array([a]), a, np.float32(2 ** -60))[0] == np.float32(1 + 2 ** -11 + 2 ** -23)
