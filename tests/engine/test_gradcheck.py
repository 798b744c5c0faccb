"""Every differentiable operation's backward agrees with central differences of its forward.

For inputs x and random weights w, backward of ``loss = (f(x) * w).sum()`` must give
d loss / dx, and that derivative can be measured without autograd: nudge one input element
by +-h and watch the loss move. The measurement runs the engine's own forward under
``no_grad`` on float64 copies, so only the backward formula is under test.

Inputs stay away from kinks and overflow (minitorch's trick): ``log`` and ``sqrt`` see
positive values, divisors stay away from 0, ``relu``/``abs`` inputs stay away from 0 and the
values ``max`` compares stay apart, so the function is smooth wherever the stencil looks.

Second-order checks differentiate ``autograd.grad(..., create_graph=True)`` once more and
compare with central differences of that first derivative.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

import autograd_lab as al
from autograd_lab import autograd

checks = settings(max_examples=15, deadline=None)

# -- input domains -------------------------------------------------------------------------
ANY = st.floats(-3, 3)
POSITIVE = st.floats(0.1, 3)
AWAY_FROM_ZERO = st.floats(0.5, 3) | st.floats(-3, -0.5)
NONZERO = st.floats(0.1, 3) | st.floats(-3, -0.1)      # relu, abs, sign: never on the kink
WEIGHTS = st.floats(-1, 1)

H = 1e-4            # five-point stencil: error ~ h**4 * f''''' + eps_machine * |loss| / h
RTOL, ATOL = 1e-6, 1e-8


def draw_array(data, shape, elements=ANY):
    return data.draw(arrays(np.float64, shape, elements=elements))


def distinct(data, shape):
    """Values at least 0.1 apart, so that no max/min is near a tie."""
    n = int(np.prod(shape))
    ints = data.draw(arrays(np.int64, (n,), elements=st.integers(-40, 40), unique=True))
    return (ints * 0.1).reshape(shape)


# -- the check -----------------------------------------------------------------------------
def central_difference(loss, arrays_, i):
    """d loss / d arrays_[i], one element at a time, with the five-point central stencil."""
    grad = np.zeros_like(arrays_[i])
    for j in np.ndindex(grad.shape):
        def at(delta):                  # called only in this iteration: `j` is this one's
            moved = [a.copy() for a in arrays_]
            moved[i][j] += delta  # noqa: B023
            return loss(*moved)
        grad[j] = (8 * (at(H) - at(-H)) - (at(2 * H) - at(-2 * H))) / (12 * H)
    return grad


def assert_close(actual, expected, what):
    assert actual is not None, f"{what}: no gradient"
    actual = actual._data if isinstance(actual, al.Tensor) else actual
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == np.float64, f"{what}: dtype {actual.dtype}"
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=what)


def forward_loss(fn, weights):
    """The loss as a plain function of numpy arrays, run by the engine without a graph."""
    def loss(*arrays_):
        with al.no_grad():
            out = fn(*[al.tensor(a) for a in arrays_])
        return float((out._data * weights).sum())
    return loss


def check_gradients(data, fn, *inputs):
    """Backward of (fn(inputs) * w).sum() equals central differences, for every input."""
    leaves = [al.tensor(a, requires_grad=True) for a in inputs]
    out = fn(*leaves)
    assert out.requires_grad and out.grad_fn is not None
    weights = draw_array(data, out.shape, WEIGHTS)
    (out * al.tensor(weights)).sum().backward()
    loss = forward_loss(fn, weights)
    for i, leaf in enumerate(leaves):
        assert_close(leaf.grad, central_difference(loss, inputs, i), f"d loss / d input {i}")


def check_second_derivatives(data, fn, *inputs):
    """Differentiating create_graph's first derivative again equals central differences of
    the first derivative (computed by a plain backward)."""
    out_weights = draw_array(data, fn(*[al.tensor(a) for a in inputs]).shape, WEIGHTS)
    grad_weights = [draw_array(data, a.shape, WEIGHTS) for a in inputs]

    def first_derivative(leaves, create_graph):
        out = fn(*leaves)
        grads = autograd.grad((out * al.tensor(out_weights)).sum(), leaves,
                              create_graph=create_graph, allow_unused=True,
                              materialize_grads=True)
        return sum((g * al.tensor(u)).sum() for g, u in zip(grads, grad_weights))

    def first_derivative_value(*arrays_):
        leaves = [al.tensor(a, requires_grad=True) for a in arrays_]
        return first_derivative(leaves, create_graph=False).item()

    leaves = [al.tensor(a, requires_grad=True) for a in inputs]
    s = first_derivative(leaves, create_graph=True)
    if s.requires_grad:
        second = autograd.grad(s, leaves, allow_unused=True, materialize_grads=True)
    else:           # the first derivative does not depend on the inputs: it is linear
        second = [np.zeros_like(a) for a in inputs]
    for i, g in enumerate(second):
        assert_close(g, central_difference(first_derivative_value, inputs, i),
                     f"second derivative, input {i}")


# -- elementwise, one input ----------------------------------------------------------------
UNARY = {
    "neg": (lambda x: -x, ANY),
    "neg method": (lambda x: x.neg(), ANY),
    "reciprocal": (lambda x: x.reciprocal(), AWAY_FROM_ZERO),
    "exp": (lambda x: x.exp(), ANY),
    "al.exp": (al.exp, ANY),
    "log": (lambda x: x.log(), POSITIVE),
    "sin": (lambda x: x.sin(), ANY),
    "cos": (lambda x: x.cos(), ANY),
    "tanh": (lambda x: x.tanh(), ANY),
    "sigmoid": (lambda x: x.sigmoid(), ANY),
    "relu": (lambda x: x.relu(), NONZERO),
    "sqrt": (lambda x: x.sqrt(), POSITIVE),
    "abs": (lambda x: x.abs(), NONZERO),
    "abs()": (lambda x: abs(x), NONZERO),
    "sign": (lambda x: x.sign(), NONZERO),
    "square": (lambda x: x.square(), ANY),
    "x ** 2": (lambda x: x ** 2, ANY),
    "x ** 3": (lambda x: x.pow(3), ANY),
    "x ** 0": (lambda x: x ** 0, ANY),
    "x ** 1": (lambda x: x ** 1, ANY),
    "x ** 0.5": (lambda x: x ** 0.5, POSITIVE),
    "x ** -1.5": (lambda x: x ** -1.5, POSITIVE),
    "2 ** x": (lambda x: 2 ** x, ANY),
    "0.5 ** x": (lambda x: 0.5 ** x, ANY),
    "al.pow(2.5, x)": (lambda x: al.pow(2.5, x), ANY),
    "x + 2": (lambda x: x + 2, ANY),
    "2 + x": (lambda x: 2 + x, ANY),
    "x - 2": (lambda x: x - 2, ANY),
    "2 - x": (lambda x: 2 - x, ANY),
    "x * 2": (lambda x: x * 2, ANY),
    "2 * x": (lambda x: 2 * x, ANY),
    "x / 2": (lambda x: x / 2, ANY),
    "2 / x": (lambda x: 2 / x, AWAY_FROM_ZERO),
    "x * x": (lambda x: x * x, ANY),
    "x / x.exp()": (lambda x: x / x.exp(), ANY),
    "x ** x": (lambda x: x ** x, POSITIVE),
    "x.add(3, alpha=2)": (lambda x: x.add(3, alpha=2), ANY),
    "x.sub(x.sin(), alpha=0.5)": (lambda x: x.sub(x.sin(), alpha=0.5), ANY),
    "maximum(x, 0.5 * x)": (lambda x: al.maximum(x, 0.5 * x), NONZERO),
}

SHAPES = array_shapes(min_dims=0, max_dims=3, max_side=4)

def cases(table, defects=None):
    """``table``'s names as pytest parameters, marking the known defects."""
    defects = defects or {}
    return [pytest.param(name, marks=defects.get(name, ())) for name in table]


@pytest.mark.parametrize("name", UNARY)
@checks
@given(data=st.data())
def test_unary_gradient(name, data):
    fn, domain = UNARY[name]
    x = draw_array(data, data.draw(SHAPES), domain)
    check_gradients(data, fn, x)


@pytest.mark.parametrize("name", UNARY)
@checks
@given(data=st.data())
def test_unary_second_derivative(name, data):
    fn, domain = UNARY[name]
    x = draw_array(data, data.draw(array_shapes(min_dims=0, max_dims=2, max_side=3)), domain)
    check_second_derivatives(data, fn, x)


# -- elementwise, two inputs, with broadcasting ---------------------------------------------
BINARY = {
    "add": (lambda a, b: a + b, ANY, ANY),
    "add alpha": (lambda a, b: al.add(a, b, alpha=-1.5), ANY, ANY),
    "sub": (lambda a, b: a - b, ANY, ANY),
    "sub alpha": (lambda a, b: a.sub(b, alpha=2), ANY, ANY),
    "mul": (lambda a, b: a * b, ANY, ANY),
    "div": (lambda a, b: a / b, ANY, AWAY_FROM_ZERO),
    # an exponent away from 0, where PyTorch's formula masks the base's gradient to 0 (so
    # its derivative in the exponent is 0 there, not the slope around it)
    "pow": (lambda a, b: a ** b, POSITIVE, st.floats(0.1, 2) | st.floats(-2, -0.1)),
    # a in (0, 1), b beyond +-1.5: b wins where it is positive, a where b is negative
    "maximum": (lambda a, b: al.maximum(a, b), st.floats(0, 1),
                st.floats(1.5, 2.5) | st.floats(-2.5, -1.5)),
    "max(a, b)": (lambda a, b: al.max(a, b), st.floats(0, 1),
                  st.floats(1.5, 2.5) | st.floats(-2.5, -1.5)),
}

BROADCAST_SHAPES = [((3,), (3,)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 3), ()), ((4,), (2, 4)),
                    ((2, 1, 3), (4, 1))]


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("name", cases(BINARY))
@checks
@given(data=st.data())
def test_binary_gradient(name, shapes, data):
    fn, domain_a, domain_b = BINARY[name]
    a, b = draw_array(data, shapes[0], domain_a), draw_array(data, shapes[1], domain_b)
    check_gradients(data, fn, a, b)


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES[:4], ids=str)
@pytest.mark.parametrize("name", BINARY)
@checks
@given(data=st.data())
def test_binary_second_derivative(name, shapes, data):
    fn, domain_a, domain_b = BINARY[name]
    a, b = draw_array(data, shapes[0], domain_a), draw_array(data, shapes[1], domain_b)
    check_second_derivatives(data, fn, a, b)


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3), (2, 3)), ((3, 1), (1, 4), (3, 4)),
                                    ((), (2, 3), (3,)), ((4,), (2, 4), (2, 1))], ids=str)
@pytest.mark.parametrize("second_order", [False, True])
@checks
@given(data=st.data())
def test_where_gradient(shapes, second_order, data):
    condition = data.draw(arrays(np.bool_, shapes[2]))
    a, b = draw_array(data, shapes[0]), draw_array(data, shapes[1])
    fn = lambda x, y: al.where(al.tensor(condition), x * x, y.sin())    # noqa: E731
    (check_second_derivatives if second_order else check_gradients)(data, fn, a, b)


# -- reductions ----------------------------------------------------------------------------
@st.composite
def shape_and_dims(draw):
    shape = draw(array_shapes(min_dims=1, max_dims=3, max_side=4))
    dims = draw(st.lists(st.sampled_from(range(len(shape))), min_size=1, unique=True))
    dims = [d - len(shape) if draw(st.booleans()) else d for d in dims]   # negative dims too
    return shape, dims[0] if len(dims) == 1 else tuple(dims)


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@checks
@given(data=st.data())
def test_sum_mean_over_everything(reduce, data):
    x = draw_array(data, data.draw(SHAPES))
    check_gradients(data, lambda t: getattr(t, reduce)(), x)


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@checks
@given(data=st.data(), keepdim=st.booleans())
def test_sum_mean_over_dims(reduce, data, keepdim):
    shape, dim = data.draw(shape_and_dims())
    x = draw_array(data, shape)
    check_gradients(data, lambda t: getattr(t, reduce)(dim, keepdim=keepdim), x)
    check_gradients(data, lambda t: getattr(al, reduce)(t, dim=dim, keepdim=keepdim), x)


@pytest.mark.parametrize("reduce", ["max", "min"])
@checks
@given(data=st.data())
def test_max_min_over_everything(reduce, data):
    x = distinct(data, data.draw(SHAPES))
    check_gradients(data, lambda t: getattr(t, reduce)(), x)


@pytest.mark.parametrize("reduce", ["max", "min"])
@checks
@given(data=st.data(), keepdim=st.booleans())
def test_max_min_over_dim(reduce, data, keepdim):
    shape = data.draw(array_shapes(min_dims=1, max_dims=3, max_side=4))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = distinct(data, shape)
    check_gradients(data, lambda t: getattr(t, reduce)(dim, keepdim=keepdim).values, x)
    check_gradients(data, lambda t: getattr(al, reduce)(t, dim, keepdim)[0], x)


@checks
@given(data=st.data())
def test_prod(data):
    x = draw_array(data, data.draw(SHAPES), st.floats(0.5, 1.5) | st.floats(-1.5, -0.5))
    check_gradients(data, lambda t: t.prod(), x)


@checks
@given(data=st.data())
def test_prod_with_zeros(data):
    """A product is a polynomial, smooth at 0: with one zero only that element's gradient is
    nonzero; with two zeros every gradient is 0."""
    x = draw_array(data, data.draw(array_shapes(min_dims=1, max_dims=2, max_side=4)),
                   st.sampled_from([0.0, 0.5, -1.25, 2.0]))
    check_gradients(data, lambda t: t.prod(), x)


@checks
@given(data=st.data())
def test_norm(data):
    x = draw_array(data, data.draw(array_shapes(min_dims=1, max_dims=3, max_side=4)),
                   AWAY_FROM_ZERO)
    check_gradients(data, lambda t: t.norm(), x)
    check_gradients(data, al.norm, x)


# -- matrix products -----------------------------------------------------------------------
MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)),
                 ((2, 2, 3), (2, 3, 4)), ((2, 2, 3), (3, 4)), ((3, 4), (2, 4, 2)),
                 ((3,), (2, 3, 4)), ((2, 2, 3), (3,)), ((2, 1, 2, 3), (3, 3, 2))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@checks
@given(data=st.data())
def test_matmul(shapes, data):
    a, b = draw_array(data, shapes[0]), draw_array(data, shapes[1])
    check_gradients(data, lambda x, y: x @ y, a, b)
    check_gradients(data, al.matmul, a, b)


MATRIX_PRODUCTS = {
    "mm": (lambda x, y: x.mm(y), (2, 3), (3, 4)),
    "al.mm": (al.mm, (2, 3), (3, 4)),
    "dot": (lambda x, y: x.dot(y), (3,), (3,)),
    "al.dot": (al.dot, (3,), (3,)),
    "mv": (lambda x, y: x.mv(y), (2, 3), (3,)),
    "al.mv": (al.mv, (2, 3), (3,)),
    "x @ x.T": (lambda x, y: x @ x.T + y, (2, 3), (2, 2)),
}


@pytest.mark.parametrize("name", MATRIX_PRODUCTS)
@checks
@given(data=st.data())
def test_matrix_product(name, data):
    fn, shape_a, shape_b = MATRIX_PRODUCTS[name]
    check_gradients(data, fn, draw_array(data, shape_a), draw_array(data, shape_b))


@pytest.mark.parametrize("shapes", [((2, 3), (3, 4)), ((3,), (3, 2)), ((2, 2, 3), (3,))],
                         ids=str)
@checks
@given(data=st.data())
def test_matmul_second_derivative(shapes, data):
    a, b = draw_array(data, shapes[0]), draw_array(data, shapes[1])
    check_second_derivatives(data, lambda x, y: (x @ y).sin(), a, b)


# -- shapes --------------------------------------------------------------------------------
SHAPE_OPS = {
    "reshape": (lambda x: x.reshape(6, 4), (2, 3, 4)),
    "reshape tuple": (lambda x: x.reshape((4, -1)), (2, 3, 4)),
    "al.reshape": (lambda x: al.reshape(x, (24,)), (2, 3, 4)),
    "reshape non-contiguous": (lambda x: x.permute(2, 0, 1).reshape(4, 6), (2, 3, 4)),
    "view": (lambda x: x.view(4, 6), (2, 3, 4)),
    "view -1": (lambda x: x.view(-1, 2), (2, 3, 4)),
    "flatten": (lambda x: x.flatten(), (2, 3, 4)),
    "permute": (lambda x: x.permute(2, 0, 1), (2, 3, 4)),
    "permute negative": (lambda x: x.permute((-1, 0, -2)), (2, 3, 4)),
    "transpose": (lambda x: x.transpose(0, 2), (2, 3, 4)),
    "transpose negative": (lambda x: al.transpose(x, -1, -2), (2, 3, 4)),
    "t": (lambda x: x.t(), (2, 3)),
    "t of a vector": (lambda x: al.t(x), (3,)),
    "T": (lambda x: x.T, (2, 3)),
    "mT": (lambda x: x.mT, (2, 3, 4)),
    "unsqueeze": (lambda x: x.unsqueeze(1), (2, 3)),
    "unsqueeze -1": (lambda x: al.unsqueeze(x, -1), (2, 3)),
    "squeeze": (lambda x: x.squeeze(), (1, 3, 1)),
    "squeeze dim": (lambda x: x.squeeze(2), (1, 3, 1)),
    "squeeze a dim that is not 1": (lambda x: x.squeeze(1), (1, 3, 1)),
    "expand": (lambda x: x.expand(2, 3, 4), (3, 1)),
    "expand -1": (lambda x: x.expand(5, -1), (1, 2)),
    "clone": (lambda x: x.clone(), (2, 3)),
    "al.clone": (lambda x: al.clone(x) * x, (2, 3)),
    "contiguous": (lambda x: x.T.contiguous(), (2, 3)),
    "then a product": (lambda x: x.T.reshape(3, 2) @ x, (2, 3)),
}


@pytest.mark.parametrize("name", SHAPE_OPS)
@checks
@given(data=st.data())
def test_shape_op(name, data):
    fn, shape = SHAPE_OPS[name]
    check_gradients(data, fn, draw_array(data, shape))


# -- indexing ------------------------------------------------------------------------------
INDEXING = {
    "int": lambda x: x[1],
    "negative int": lambda x: x[-1],
    "slice": lambda x: x[1:3],
    "slice with step": lambda x: x[::2],
    "open slice": lambda x: x[2:],
    "two ints": lambda x: x[1, 2],
    "column": lambda x: x[:, 1],
    "two slices": lambda x: x[1:, ::2],
    "ellipsis": lambda x: x[..., 0],
    "None": lambda x: x[None],
    "list with repeats": lambda x: x[[0, 2, 0]],
    "tensor with repeats": lambda x: x[al.tensor([3, 3, 1])],
    "pairs with repeats": lambda x: x[[0, 0, 3], [1, 1, 2]],
    "columns with repeats": lambda x: x[:, [0, 0, 2]],
    "boolean mask": lambda x: x[al.tensor([[True, False, True], [False, False, True],
                                           [True, True, True], [False, False, False]])],
    "boolean rows": lambda x: x[al.tensor([True, False, True, True])],
    "indexed twice": lambda x: x[1:][0] * x[0],
}


@pytest.mark.parametrize("name", INDEXING)
@checks
@given(data=st.data())
def test_indexing(name, data):
    check_gradients(data, INDEXING[name], draw_array(data, (4, 3)))


# -- joining, dtype ------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
@checks
@given(data=st.data())
def test_cat(dim, data):
    a, b, c = draw_array(data, (2, 3)), draw_array(data, (2, 3)), draw_array(data, (2, 3))
    check_gradients(data, lambda x, y, z: al.cat([x, y, z * y], dim), a, b, c)


@checks
@given(data=st.data())
def test_cat_different_sizes(data):
    a, b = draw_array(data, (1, 3)), draw_array(data, (4, 3))
    check_gradients(data, lambda x, y: al.cat((x, y)), a, b)
    check_gradients(data, lambda x, y: al.cat((x.T, y.T), dim=1), a, b)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@checks
@given(data=st.data())
def test_stack(dim, data):
    a, b = draw_array(data, (2, 3)), draw_array(data, (2, 3))
    check_gradients(data, lambda x, y: al.stack([x, y, x * y], dim), a, b)


@pytest.mark.parametrize("convert", [lambda x: x.to(al.float32), lambda x: x.float(),
                                     lambda x: x.to(dtype=al.float32)],
                         ids=["to", "float", "to dtype="])
@checks
@given(data=st.data())
def test_to_another_dtype(convert, data):
    """ToCopyBackward0 is the identity on values; its gradient must come back in the input's
    dtype. (A float32 forward is too coarse for central differences, so the check is exact.)"""
    x = al.tensor(draw_array(data, (2, 3)), requires_grad=True)
    y = convert(x)
    assert y.dtype == al.float32 and y.grad_fn.name() == "ToCopyBackward0"
    w = draw_array(data, (2, 3), WEIGHTS).astype(np.float32)
    (y * al.tensor(w)).sum().backward()
    assert x.grad.dtype == al.float64
    np.testing.assert_array_equal(x.grad._data, w.astype(np.float64))


@checks
@given(data=st.data())
def test_double(data):
    x = al.tensor(draw_array(data, (3,)).astype(np.float32), requires_grad=True)
    y = x.double()
    assert y.dtype == al.float64 and y.grad_fn.name() == "ToCopyBackward0"
    w = draw_array(data, (3,), WEIGHTS)
    (y * al.tensor(w)).sum().backward()
    assert x.grad.dtype == al.float32
    np.testing.assert_array_equal(x.grad._data, w.astype(np.float32))


@checks
@given(data=st.data())
def test_to_the_same_dtype_is_the_identity(data):
    check_gradients(data, lambda x: x.to(al.float64) * x.double(), draw_array(data, (3,)))


# -- in-place operations on non-leaves -----------------------------------------------------
def _inplace(method):
    def fn(x, y):
        z = x * 1.5                 # a non-leaf, so it may be changed in place
        getattr(z, method)(y)
        return z * x
    return fn


def _augmented(x, y):
    z = x.sin()                 # saves x, not z: z may change (exp's saved output may not)
    z += y
    z *= y
    z -= x
    z /= y
    return z


INPLACE = {
    "add_": (_inplace("add_"), ANY),
    "sub_": (_inplace("sub_"), ANY),
    "mul_": (_inplace("mul_"), ANY),
    "div_": (_inplace("div_"), AWAY_FROM_ZERO),
    "add_ alpha": (lambda x, y: x.clone().add_(y, alpha=3), ANY),
    "augmented assignment": (_augmented, AWAY_FROM_ZERO),
}


@pytest.mark.parametrize("name", cases(INPLACE))
@checks
@given(data=st.data())
def test_inplace(name, data):
    fn, domain_y = INPLACE[name]
    check_gradients(data, fn, draw_array(data, (2, 3)), draw_array(data, (2, 3), domain_y))


@pytest.mark.parametrize("name", cases(INPLACE))
@checks
@given(data=st.data())
def test_inplace_broadcast_other(name, data):
    fn, domain_y = INPLACE[name]
    check_gradients(data, fn, draw_array(data, (2, 3)), draw_array(data, (3,), domain_y))


def _setitem(key):
    def fn(x, y):
        z = x.sin()
        z[key] = y * 2
        return z * x
    return fn


SETITEM = {
    "row": (1, (3,)),
    "slice": (slice(0, 2), (2, 3)),
    "element": ((0, 1), ()),
    "column broadcast": ((slice(None), 2), ()),
    "advanced": (([0, 1], [2, 0]), (2,)),
}


@pytest.mark.parametrize("name", SETITEM)
@checks
@given(data=st.data())
def test_setitem_on_non_leaf(name, data):
    key, value_shape = SETITEM[name]
    check_gradients(data, _setitem(key), draw_array(data, (2, 3)), draw_array(data, value_shape))


@checks
@given(data=st.data())
def test_setitem_with_number(data):
    def fn(x):
        z = x * x
        z[0] = 4.0
        return z
    check_gradients(data, fn, draw_array(data, (2, 3)))


# -- custom Functions ----------------------------------------------------------------------
class Cube(autograd.Function):
    """x**3, saving its input"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


class Exp(autograd.Function):
    """e**x, saving its output"""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class ScaledMul(autograd.Function):
    """k * a * b with a non-tensor argument in the middle"""

    @staticmethod
    def forward(ctx, a, k, b):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a * b * k

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b * ctx.k, None, g * a * ctx.k


CUSTOM = {
    "saves its input": lambda x, y: Cube.apply(x) + y,
    "saves its output": lambda x, y: Exp.apply(x * y),
    "non-tensor argument": lambda x, y: ScaledMul.apply(x, 2.5, y.tanh()),
    "used twice": lambda x, y: Exp.apply(x) * Exp.apply(x) + Cube.apply(Cube.apply(y)),
}


@pytest.mark.parametrize("name", CUSTOM)
@checks
@given(data=st.data())
def test_custom_function(name, data):
    a, b = draw_array(data, (2, 3), st.floats(-1, 1)), draw_array(data, (2, 3), st.floats(-1, 1))
    check_gradients(data, CUSTOM[name], a, b)


@pytest.mark.parametrize("name", ["saves its input", "saves its output"])
@checks
@given(data=st.data())
def test_custom_function_second_derivative(name, data):
    """A backward written with tensor operations is differentiable again."""
    a, b = draw_array(data, (3,), st.floats(-1, 1)), draw_array(data, (3,), st.floats(-1, 1))
    check_second_derivatives(data, CUSTOM[name], a, b)
