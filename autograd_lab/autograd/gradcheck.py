"""``gradcheck`` and ``gradgradcheck``: is a backward right? Ask the finite differences.

For every input element x_k that requires grad, ``gradcheck`` nudges it by ``±eps`` and reads
the change of every output: (f(x + eps) - f(x - eps)) / 2eps, the central difference, is
column k of the *numerical* Jacobian. The *analytical* Jacobian comes from backward, one row
per output element (``autograd.grad`` with a one-hot ``grad_outputs``). The two must agree
within ``atol + rtol * |numerical|``, elementwise, or the check fails with both Jacobians
printed (rows: input elements, columns: output elements), as PyTorch prints them.

``gradgradcheck`` runs the same check on the function ``(inputs, v) -> v^T J``, the backward
itself (recorded with ``create_graph=True``): it checks second derivatives.

The order of the work -- which function calls, which backward calls, in which order -- is
PyTorch's slow mode (``fast_mode`` is accepted and runs the same check), so that a Function
that prints what it is doing prints the same thing under both.
"""
import warnings

import numpy as np

from .._core.backward import grad
from .._core.dtype import float64
from .._core.tensor import Tensor, _wrap
from .._ops.factories import zeros_like
from .._ops.random import rand

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against finite differences; True if
    they agree (else raise ``GradcheckError``, or return False if not ``raise_exception``)."""
    if check_forward_ad or check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("autograd_lab has no forward-mode AD and no vmap: "
                                  "check_forward_ad and check_batched_* are not supported")
    try:
        return _check(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, check_grad_dtypes,
                      check_undefined_grad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """``gradcheck`` of the backward of ``func``: the second derivatives. Without
    ``grad_outputs``, random ones in [-1, 1) are drawn from the default generator."""
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable(func(*inputs))
        grad_outputs = tuple(
            (rand(o.shape, dtype=o.dtype if o.is_floating_point() else float64) * 2 - 1)
            .requires_grad_() for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n = len(grad_outputs)
    wanted = {i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad}
    wanted_v = {i for i, v in enumerate(grad_outputs) if v.requires_grad}

    def backward_of_func(*args):
        xs = tuple(x.requires_grad_() if i in wanted else x for i, x in enumerate(args[:-n]))
        outs = _differentiable(func(*xs))
        vs = tuple(v.requires_grad_() if i in wanted_v else v for i, v in enumerate(args[-n:]))
        gs = grad(outs, tuple(x for i, x in enumerate(xs) if i in wanted), vs,
                  create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(backward_of_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)


def _check(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, check_undefined_grad):
    _check_inputs(inputs)
    out = _as_tuple(func(*inputs))
    outputs = _differentiable(out)
    diff_inputs = [x for x in inputs if _is_tensor(x) and x.requires_grad]
    numerical = _numerical_jacobians(func, inputs, out, eps)   # [input][output]
    if not outputs:
        if any(np.any(jac != 0) for per_input in numerical for jac in per_input):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    floats = [o for o in out if o.is_floating_point()]
    for i, o in enumerate(outputs):
        k = next(k for k, f in enumerate(floats) if f is o)
        analytical = _analytical_jacobians(diff_inputs, o, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][k]
            dtype = np.promote_types(a.dtype, n.dtype)
            if not np.allclose(a.astype(dtype), n.astype(dtype), rtol, atol):
                raise GradcheckError(
                    f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                    f"numerical:{_wrap(n)}\nanalytical:{_wrap(a)}\n")
    _check_multiplied_by_grad_output(outputs, diff_inputs)
    if check_undefined_grad:
        _check_zero_grad_outputs(func, inputs, outputs, diff_inputs)
    return True


def _check_inputs(inputs):
    found = False
    for idx, x in enumerate(inputs):
        if _is_tensor(x) and x.requires_grad:
            if x._data.dtype != np.float64:
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                              "floating point or complex. This check will likely fail if all "
                              "the inputs are not of double precision floating point or "
                              "complex. ", UserWarning, stacklevel=2)
            found = True
    if not found:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")


def _numerical_jacobians(func, inputs, out, eps):
    """For each input that requires grad, one Jacobian per floating output, each of shape
    (input elements, output elements): column k from nudging element k by ±eps."""
    jacobians = []
    for x in inputs:
        if not (_is_tensor(x) and x.requires_grad):
            continue
        data = x._storage()         # x's own memory, so that func sees the nudge
        step = data.dtype.type(eps)
        cols = []
        for k in np.ndindex(data.shape):
            orig = data[k].copy()
            data[k] = orig - step
            before = _clones(func(*inputs))
            data[k] = orig + step
            after = _clones(func(*inputs))
            data[k] = orig
            cols.append([_central(a, b, eps) for a, b in zip(before, after)])
        jacobians.append([
            np.stack([c[m] for c in cols]) if cols
            else np.zeros((0, o.numel()), o._data.dtype)
            for m, o in enumerate(o for o in out if o.is_floating_point())])
    return jacobians


def _clones(out):
    return [np.array(o._data) for o in _as_tuple(out) if o.is_floating_point()]


def _central(a, b, eps):
    with np.errstate(all="ignore"):
        return ((b - a) / (2 * eps)).astype(a.dtype).reshape(-1)


def _analytical_jacobians(diff_inputs, output, nondet_tol, check_grad_dtypes):
    """One Jacobian per input, (input elements, output elements), row by row from backward
    with one-hot ``grad_outputs`` -- twice, as PyTorch does, to catch a backward that gives
    different answers for the same question."""
    first, sizes_ok, types_ok = _rows(diff_inputs, output)
    second, _, _ = _rows(diff_inputs, output)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if any(a.size and np.abs(a - b).max() > nondet_tol for a, b in zip(first, second)):
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and "
            "grad_output multiple times gives different values, although analytical gradient "
            f"matches numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")
    return first


def _rows(diff_inputs, output):
    n_out = output.numel()
    jacobians = [np.zeros((x.numel(), n_out), x._data.dtype) for x in diff_inputs]
    sizes_ok = types_ok = True
    onehot = np.zeros(n_out, output._data.dtype)
    for row in range(n_out):
        onehot[:] = 0
        onehot[row] = 1
        grads = grad(output, diff_inputs, _wrap(onehot.reshape(output._data.shape).copy()),
                     retain_graph=True, allow_unused=True)
        for jac, x, g in zip(jacobians, diff_inputs, grads):
            if g is None:
                continue
            if g.shape != x.shape:
                sizes_ok = False
            elif g.dtype != x.dtype:
                types_ok = False
            jac[:, row] = g._data.reshape(-1)
    return jacobians, sizes_ok, types_ok


def _check_multiplied_by_grad_output(outputs, diff_inputs):
    grads = grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for g, x in zip(grads, diff_inputs):
        if g is None:
            continue
        if np.any(g._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != x.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.shape != x.shape:
            raise GradcheckError("grad is incorrect size")


def _check_zero_grad_outputs(func, inputs, outputs, diff_inputs):
    """PyTorch sends undefined gradients through fresh graphs: for all outputs at once, then
    (with several) for one output at a time. autograd_lab has no undefined gradient, so it
    sends zeros, which a Function receives the same way (materialised, or None)."""
    runs = [_differentiable(func(*inputs))]
    if len(runs[0]) > 1:
        runs += [_differentiable(func(*inputs)) for _ in outputs]
    for outs in runs:
        try:
            grads = grad(outs, diff_inputs, [zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            _warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from e
        if any(g is not None and np.any(g._data != 0) for g in grads):
            _warn_bc_breaking()
            raise GradcheckError(
                "Expected all input grads to be undefined or zero when all output grads are "
                'undefined or zero. Please look at "Notes about undefined output gradients" in '
                '"tools/autograd/derivatives.yaml"')


def _warn_bc_breaking():
    warnings.warn("Backwards compatibility: New undefined gradient support checking feature is "
                  "enabled by default, but it may break existing callers of this function. If "
                  'this is true for you, you can call this function with '
                  '"check_undefined_grad=False" to disable the feature', UserWarning,
                  stacklevel=2)


def _is_tensor(x):
    return isinstance(x, Tensor)


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _differentiable(out):
    return tuple(o for o in _as_tuple(out) if o.requires_grad)
