"""Random programs, run under PyTorch and under autograd_lab, compared after every step.

A program is a list of Python statements over a few tensors: leaves of 0 to 3 dimensions in
float32 and float64, elementwise ops with broadcasting, reductions, matmul, views, indexing,
cat/stack/where, in-place changes (arithmetic, ``fill_``, ``copy_``, ``x[key] = value`` with a
value of another shape), hooks (and hooks that return the wrong thing), ``retain_grad``,
``no_grad``, ``detach``, a leaf frozen after it was used, ``backward`` (with a gradient of
either float dtype, retained or not, with ``create_graph``), ``autograd.grad`` (through hooks;
of a reduction's gradient), nodes called by hand (with what they do not take too), and calls
PyTorch refuses (a bad ``dim``, shapes that do not fit, mixed dtypes, ``None``).

The generator proposes each statement by looking at the tensors PyTorch holds at that point
(so most statements are valid, and the invalid ones are chosen on purpose). After every step
both runs are compared: every variable's values (within its dtype's tolerance), dtype, shape,
``requires_grad``, ``is_leaf``, grad_fn name and ``.grad``; what the hooks received; the
warnings; the exception's class and text. A difference is shrunk to a minimal program (drop
statements while it still differs) and printed.

Each kind of statement is a *feature* with a name (``FEATURES``). ``KEPT_DIFFERENT`` names the
features whose difference is kept on purpose (docs/learners/pytorch.md says why); ``NOT_YET``
the ones known to differ that are still to be fixed. Both are left out of the CI block by name,
never by seed.

The long block, with the agreement rate (from the repository root)::

    PYTHONPATH=$PWD .venv/bin/python tests/support/random_programs.py --programs 20000
    # --all: every feature, NOT_YET included; --show N: print N shrunk differences
"""
import contextlib
import io
import math
import random
import re
import sys
import time
import warnings

import numpy as np

from dual import _clean

SIZES = (1, 2, 3)

# -- proposing statements ---------------------------------------------------------------


class Proposer:
    """Proposes the next statement of one program from what PyTorch holds (``ns``)."""

    def __init__(self, rng, ns, features, lab_ns=None):
        self.rng, self.ns, self.features, self.lab_ns = rng, ns, features, lab_ns
        self.count = 0

    # helpers
    def new(self, prefix="t"):
        self.count += 1
        return f"{prefix}{self.count}"

    def tensors(self, pred=None, names=None):
        torch = self.ns["torch"]
        return [(k, v) for k, v in self.ns.items()
                if isinstance(v, torch.Tensor) and not k.startswith("_") and _holds(pred, v)
                and (names is None or names(k))]

    def pick(self, pred=None, names=None):
        found = self.tensors(pred, names)
        return self.rng.choice(found) if found else (None, None)

    def literal(self, shape, dtype=None, requires_grad=False):
        rng = self.rng
        values = np.array([rng.randint(-20, 20) / 10 for _ in range(math.prod(shape))])
        text = repr(values.reshape(shape).tolist()) if shape else repr(float(values[0]))
        args = [text]
        if dtype == "float64":
            args.append("dtype=torch.float64")
        if requires_grad:
            args.append("requires_grad=True")
        return f"torch.tensor({', '.join(args)})"

    def shape(self, ndim=None):
        ndim = self.rng.choice((0, 1, 1, 2, 2, 3)) if ndim is None else ndim
        return tuple(self.rng.choice(SIZES) for _ in range(ndim))

    def dtype_of(self, t):
        return "float64" if str(t.dtype) == "torch.float64" else "float32"

    def dim(self, t, extra=0):
        """A dim for t: valid nearly always, out of range now and then (PyTorch's IndexError)."""
        n = max(t.dim() + extra, 1)
        if self.rng.random() < 0.05:
            return self.rng.choice((n, -n - 1))
        return self.rng.randint(-n, n - 1)

    # the features: each returns a statement, or None when it does not apply now
    def leaf(self):
        rg = self.rng.random() < 0.75
        dtype = self.rng.choice(("float32", "float32", "float64"))
        return f"{self.new('a')} = {self.literal(self.shape(), dtype, rg)}"

    def unary(self):
        name, x = self.pick()
        if name is None:
            return None
        fn = self.rng.choice(("exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt",
                              "abs", "neg", "reciprocal", "square", "sign"))
        if fn in ("sin", "cos") and x.numel() and not bool((x.detach().abs() < 10).all()):
            # sin hands x's absolute difference on as it is: an x of 81 that exp made from a
            # sum differing in the last bit differs by 4e-5 (from 41 million)
            fn = "tanh"
        if fn in POLES and self._near_zero(x):
            fn = "neg"
        form = self.rng.choice((f"{name}.{fn}()", f"torch.{fn}({name})")) if fn in (
            "exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt", "abs", "neg") \
            else f"{name}.{fn}()"
        return f"{self.new()} = {form}"

    def power(self):
        name, x = self.pick()
        if name is None:
            return None
        e = self.rng.choice(("2", "3", "0.5", "-1", "0", "2.0", "-0.5"))
        if e in ("0.5", "-1", "-0.5") and self._near_zero(x):
            e = "2"
        return f"{self.new()} = {name} ** {e}"

    def _near_zero(self, x):
        """Whether x (a tensor, or the name of one or a literal) holds a value at or next to 0,
        where a pole (1/x, log, sqrt, x ** -0.5) turns a rounding difference (a sum that is 0 in
        one library and 1e-8 in the other; a signed zero) into inf against a finite number."""
        torch = self.ns["torch"]
        if isinstance(x, str):
            x = self.ns[x] if x in self.ns else eval(x, dict(self.ns))       # a literal
        return (isinstance(x, torch.Tensor) and x.numel() > 0 and x.dtype.is_floating_point
                and bool((x.detach().abs() < 1e-5).any()))

    def _partner(self, x, fits):
        """Another tensor that ``fits`` with x (an existing one, often), or a new literal."""
        others = [k for k, v in self.tensors() if fits(tuple(v.shape))]
        if others and self.rng.random() < 0.6:
            return self.rng.choice(others)
        for _ in range(20):
            shape = self.shape()
            if fits(shape):
                rg = self.rng.random() < 0.5
                return self.literal(shape, self.rng.choice(("float32", self.dtype_of(x))), rg)
        return None

    def binary(self):
        name, x = self.pick()
        if name is None:
            return None
        xs = tuple(x.shape)
        op = self.rng.choice(("+", "-", "*", "/", "+", "*"))
        if self.rng.random() < 0.25:
            number = self.rng.choice(("2", "0.5", "-1.5", "3"))
            by_name = {"+": "add", "-": "sub", "*": "mul", "/": "div"}[op]
            form = self.rng.choice((f"{name} {op} {number}", f"{number} {op} {name}",
                                    f"torch.{by_name}({number}, {name})"))
            if op == "/" and not form.startswith(name) and self._near_zero(x):
                form = f"{name} {op} {number}"
            return f"{self.new()} = {form}"
        other = self._partner(x, lambda s: _broadcasts(xs, s))
        if other is None or (op == "/" and self._near_zero(other)):
            return None
        form = self.rng.choice((f"{name} {op} {other}",) * 3 + (
            f"torch.maximum({name}, {other})", f"{name}.add({other}, alpha=2)",
            f"{name}.sub({other}, alpha=0.5)"))
        if form.startswith("torch.maximum") and other != name and self._near_tie(x, other):
            return None
        return f"{self.new()} = {form}"

    def _near_tie(self, x, other):
        """Whether two operands of maximum hold equal or nearly equal values somewhere, where
        a last-bit difference between the libraries (a sum in another order) decides which
        one wins, or whether the gradient is split in half."""
        torch = self.ns["torch"]
        y = self.ns[other] if other in self.ns else eval(other, dict(self.ns))
        with torch.no_grad():
            gap = (x.detach().double() - y.detach().double()).abs()
        return gap.numel() > 0 and bool((gap < 1e-5).any())

    def pow_tensor(self):
        name, x = self.pick()
        other = name and self._partner(x, lambda s: _broadcasts(tuple(x.shape), s))
        if not other or self._near_zero(x) or other in self.ns and self._near_integer(other) \
                and bool((x.detach() < 0).any()):
            return None
        return f"{self.new()} = {name} ** {other}"

    def _near_integer(self, name):
        """Whether a computed tensor holds a value at or next to an integer: a negative number
        to that power is a number or nan, by a rounding difference (a sum that is -1.0 in one
        library and -0.9999999999999998 in the other)."""
        v = self.ns[name].detach()
        return v.numel() > 0 and bool(((v - v.round()).abs() < 1e-5).any())

    def mismatch(self):
        """Shapes that do not broadcast: PyTorch's RuntimeError."""
        name, x = self.pick(lambda v: v.dim() > 0)
        if name is None:
            return None
        other = self._partner(x, lambda s: not _broadcasts(tuple(x.shape), s))
        if other is None:
            return None
        return f"{self.new()} = {name} {self.rng.choice('+-*/')} {other}"

    def reduce(self):
        name, x = self.pick()
        if name is None:
            return None
        fn = self.rng.choice(("sum", "sum", "mean", "max", "min", "prod"))
        if self.rng.random() < 0.4:
            return f"{self.new()} = {name}.{fn}()"
        dim = self.dim(x)
        keep = self.rng.random() < 0.4
        call = f"{name}.{fn}({dim}, keepdim=True)" if keep else f"{name}.{fn}(dim={dim})"
        if fn in ("max", "min"):
            call += self.rng.choice((".values", "[0]"))
        return f"{self.new()} = {call}"

    def reduce_other(self):
        name, x = self.pick()
        if name is None:
            return None
        fn = self.rng.choice(("prod", "norm"))
        if fn == "norm" and x.numel() and bool((x.detach().abs() < 1e-5).all()):
            fn = "prod"     # norm's kink at the zero vector: a rounding difference flips its slope
        return f"{self.new()} = {name}.{fn}()"

    def _layout_differs(self, name):
        """Whether the tensor called ``name`` has other strides here than in PyTorch
        ("memory_layout"), so that a reshape may copy in one library and view in the other,
        or a matmul fold a batch in one and not the other."""
        if "memory_layout" not in KEPT_DIFFERENT or self.lab_ns is None:
            return False
        ours = self.lab_ns.get(name)
        if not hasattr(ours, "_data"):
            return False
        a = np.asarray(ours._data)
        return tuple(self.ns[name].stride()) != tuple(n // a.itemsize for n in a.strides)

    def matmul(self):
        name, x = self.pick(lambda v: v.dim() > 0, lambda k: not self._layout_differs(k))
        if name is None:
            return None
        other = self._partner(x, lambda s: len(s) > 0 and _matmuls(tuple(x.shape), s))
        if other is None or other in self.ns and self._layout_differs(other):
            return None
        return f"{self.new()} = {self.rng.choice((f'{name} @ {other}', f'torch.matmul({name}, {other})'))}"

    def matmul_named(self):
        name, x = self.pick(lambda v: v.dim() in (1, 2))
        if name is None:
            return None
        if x.dim() == 2:
            fn, want = self.rng.choice((("mm", 2), ("mv", 1)))
            other = self._partner(x, lambda s: len(s) == want and s[0] == x.shape[1])
        else:
            fn = "dot"
            other = self._partner(x, lambda s: s == tuple(x.shape))
        if other is None:
            return None
        return f"{self.new()} = {name}.{fn}({other})"

    def view(self):
        name, x = self.pick()
        if name is None:
            return None
        rng = self.rng
        kind = rng.choice(("view", "reshape", "t", "transpose", "permute", "squeeze",
                           "unsqueeze", "expand", "flatten", "T"))
        n = x.dim()
        if kind in ("view", "reshape"):
            shape = _factor(x.numel(), rng)
            if shape and rng.random() < 0.3:
                shape[rng.randrange(len(shape))] = -1
            call = f"{kind}({', '.join(map(str, shape))})" if shape else f"{kind}(())"
        elif kind == "t":
            if n > 2:
                return None
            call = "t()"
        elif kind == "T":
            if n != 2:
                return None
            call = "T"
        elif kind == "transpose":
            if n == 0:
                return None
            call = f"transpose({self.dim(x)}, {self.dim(x)})"
        elif kind == "permute":
            if n == 0:
                return None
            perm = list(range(n))
            rng.shuffle(perm)
            call = f"permute({', '.join(map(str, perm))})"
        elif kind == "squeeze":
            call = rng.choice(("squeeze()", f"squeeze({self.dim(x)})"))
        elif kind == "unsqueeze":
            call = f"unsqueeze({self.dim(x, extra=1)})"
        elif kind == "expand":
            lead = [rng.choice(SIZES) for _ in range(rng.choice((0, 0, 1)))]
            shape = lead + [rng.choice((s, -1, 2, 3)) if s == 1 else rng.choice((s, -1))
                            for s in x.shape]
            if not shape:
                return None
            call = f"expand({', '.join(map(str, shape))})"
        else:
            call = rng.choice(("flatten()", f"flatten({self.dim(x)})",
                               f"flatten({self.dim(x)}, {self.dim(x)})",
                               f"flatten(start_dim={self.dim(x)})", f"flatten(end_dim={self.dim(x)})"))
        if kind in ("view", "reshape", "flatten") and self._layout_differs(name):
            return None
        return f"{self.new()} = {name}.{call}"

    def index(self):
        name, x = self.pick(lambda v: v.dim() > 0 and v.numel() > 0)
        if name is None:
            return None
        rng = self.rng
        n = x.shape[0]
        i = rng.randint(-n, n - 1) if rng.random() > 0.05 else n
        kind = rng.choice(("int", "slice", "none", "ellipsis", "list", "mask", "pair"))
        if kind == "int":
            key = str(i)
        elif kind == "slice":
            key = rng.choice((f"{i}:", f":{i}", "::2", "1:", ":"))
        elif kind == "none":
            key = rng.choice(("None", f"None, {i}", f"{i}, None"))
        elif kind == "ellipsis":
            j = rng.randint(-x.shape[-1], x.shape[-1] - 1)
            key = f"..., {j}"
        elif kind == "list":
            key = f"[{i}, {rng.randint(-n, n - 1)}, {i}]"
        elif kind == "mask":
            if self._near_zero(x):      # (x > 0 jumps at 0 as sign does: POLES)
                return None
            key = f"{name} > 0"
        else:
            if x.dim() < 2:
                return None
            key = f"{i}, {rng.choice((':', '[0, -1]', '1:', str(rng.randint(0, x.shape[1] - 1))))}"
        return f"{self.new()} = {name}[{key}]"

    def join(self):
        name, x = self.pick()
        if name is None:
            return None
        rng = self.rng
        same = [k for k, v in self.tensors(lambda v: tuple(v.shape) == tuple(x.shape))]
        others = ", ".join(rng.choice(same) for _ in range(rng.randint(1, 2)))
        kind = rng.choice(("cat", "stack", "where"))
        if kind == "cat":
            return f"{self.new()} = torch.cat([{name}, {others}], {self.dim(x)})"
        if kind == "stack":
            return f"{self.new()} = torch.stack([{name}, {others}], {self.dim(x, extra=1)})"
        if self._near_zero(x):          # (x > 0 jumps at 0 as sign does: POLES)
            return None
        other = self._partner(x, lambda s: _broadcasts(tuple(x.shape), s))
        return other and f"{self.new()} = torch.where({name} > 0, {name}, {other})"

    def clone_detach(self):
        name, x = self.pick()
        if name is None:
            return None
        form = self.rng.choice(("clone()", "detach()", "detach().requires_grad_()",
                                "detach().clone()"))
        return f"{self.new()} = {name}.{form}"

    def _inplace_on(self, name, x):
        rng = self.rng
        kind = rng.choice(("add_", "mul_", "sub_", "div_", "zero_", "fill_", "setitem",
                           "copy_"))
        if kind == "zero_":
            return f"{name}.zero_()"
        if kind == "fill_":
            return f"{name}.fill_({rng.choice(('0.5', '2', '-1.0'))})"
        if kind == "setitem":
            return self._setitem(name, x)
        if rng.random() < 0.4:
            return f"{name}.{kind}({rng.choice(('2', '0.5', '-1.0'))})"
        other = self._partner(x, lambda s: _broadcasts(tuple(x.shape), s)
                              and np.broadcast_shapes(tuple(x.shape), s) == tuple(x.shape))
        if other and kind == "div_" and self._near_zero(other):
            return None
        if other in self.ns and "inplace_aliased_operand" in KEPT_DIFFERENT and \
                self._reads_what_it_writes(x, kind, self.ns[other]):
            return None
        return other and f"{name}.{kind}({other})"

    def _setitem(self, name, x):
        """``x[key] = value``: a number, a 0-d tensor, or a tensor of another shape that
        PyTorch's setitem expands to the part written (leading size-1 dimensions dropped)."""
        rng = self.rng
        if x.dim() == 0 or x.shape[0] == 0:
            return None
        n = x.shape[0]
        key = rng.choice((str(rng.randint(-n, n - 1)), "0:1", "..., 0", "::2"))
        try:
            target = tuple(eval(f"_x[{key}]", {"_x": x.detach()}).shape)
        except IndexError:                      # "..., 0" of a last dimension of size 0
            return None

        def fits(shape):                        # leading 1s dropped, then expandable
            while shape and shape[0] == 1:
                shape = shape[1:]
            return len(shape) <= len(target) and all(
                a in (1, b) for a, b in zip(shape[::-1], target[::-1]))
        value = rng.choice(("0.0", "1.5", self._partner(x, lambda s: len(s) == 0) or "2.0",
                            self._partner(x, lambda s: len(s) > 0 and fits(s)) or "2.0"))
        if value in self.ns and "inplace_aliased_operand" in KEPT_DIFFERENT and \
                self.ns[value].untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
            return None
        return f"{name}[{key}] = {value}"

    def _reads_what_it_writes(self, x, kind, other):
        """Whether ``x.kind(other)`` would read elements of x that it has already written
        (``t.mul_(t[..., 0])``): other shares x's memory, is not x itself element for element,
        and PyTorch does not refuse the overlap. Tried on a copy of the memory both share."""
        torch = self.ns["torch"]
        if x.untyped_storage().data_ptr() != other.untyped_storage().data_ptr():
            return False
        if (x.data_ptr(), x.shape, x.stride()) == (other.data_ptr(), other.shape, other.stride()):
            return False
        memory = x.untyped_storage().clone()

        def over(t):
            return torch.empty(0, dtype=t.dtype).set_(memory, t.storage_offset(), t.shape,
                                                      t.stride())
        try:
            getattr(over(x), kind)(over(other))
        except RuntimeError:
            return False        # refused as an overlap: both libraries say so
        return True

    # (``_base`` first: reading is_leaf of a view made under no_grad whose base changed since
    # raises, as the grad_fn it reads does)
    def inplace_leaf(self):
        name, x = self.pick(lambda v: v._base is None and v.is_leaf, _not_gradient)
        return name and self._inplace_on(name, x)

    def inplace_nonleaf(self):
        name, x = self.pick(lambda v: v._base is None and not v.is_leaf, _not_gradient)
        return name and self._inplace_on(name, x)

    def inplace_view(self):
        name, x = self.pick(lambda v: v._base is not None, _not_gradient)
        return name and self._inplace_on(name, x)

    def inplace_no_grad(self):
        name, x = self.pick(None, _not_gradient)
        stmt = name and self._inplace_on(name, x)
        return stmt and f"with torch.no_grad(): {stmt}"

    def inplace_gradient(self):
        """In place on what autograd.grad returned (g..., h...)."""
        name, x = self.pick(None, lambda k: not _not_gradient(k))
        return name and self._inplace_on(name, x)

    def no_grad(self):
        for _ in range(5):
            stmt = self.rng.choice((self.unary, self.binary, self.view, self.index, self.reduce))()
            if stmt:
                return f"with torch.no_grad(): {stmt}"
        return None

    def hook(self):
        kept = "hook_on_stale_view" in KEPT_DIFFERENT
        name, x = self.pick(lambda v: v.requires_grad and not (kept and _stale(v)))
        if name is None:
            return None
        fn = self.rng.choice(("lambda g: log.append(g.tolist())", "lambda g: g * 2",
                              f"lambda g: log.append(('{name}', g.tolist()))"))
        return f"{name}.register_hook({fn})"

    def retain_grad(self):
        name, x = self.pick(lambda v: v.requires_grad)
        return name and f"{name}.retain_grad()"

    def backward(self):
        name, x = self.pick(lambda v: v.requires_grad)
        if name is None:
            return None
        rng = self.rng
        kw = rng.choice(("", "", "retain_graph=True", "retain_graph=True", "create_graph=True"))
        if x.numel() == 1 and rng.random() < 0.7:
            return f"{name}.backward({kw})"
        if rng.random() < 0.3:
            return f"{name}.sum().backward({kw})"
        grad = self.literal(tuple(x.shape), self.dtype_of(x))
        return f"{name}.backward({', '.join(filter(None, (grad, kw)))})"

    def autograd_grad(self):
        name, x = self.pick(lambda v: v.requires_grad)
        if name is None:
            return None
        rng = self.rng
        wrt = self.tensors(lambda v: v.requires_grad)
        inputs = [k for k, v in rng.sample(wrt, min(len(wrt), rng.randint(1, 2)))]
        kws = ["allow_unused=True"]
        if x.numel() != 1 or rng.random() < 0.3:
            kws.append(f"grad_outputs={self.literal(tuple(x.shape), self.dtype_of(x))}")
        kws += [k for k in ("retain_graph=True", "create_graph=True") if rng.random() < 0.4]
        # what create_graph=True returns is called h..., plain gradients g...: see ASPECTS
        prefix = "h" if "create_graph=True" in kws else "g"
        targets = ", ".join(self.new(prefix) for _ in inputs)
        return (f"{targets}, = torch.autograd.grad({name}, [{', '.join(inputs)}], "
                f"{', '.join(kws)})")

    def double_grad(self):
        """A gradient of a gradient: autograd.grad of what create_graph=True returned (h...)
        or of an expression of it, again with create_graph now and then."""
        name, h = self.pick(lambda v: v.requires_grad, lambda k: k[0] == "h")
        if name is None:
            return None
        rng = self.rng
        wrt = [k for k, v in self.tensors(lambda v: v.requires_grad) if k != name]
        if not wrt:
            return None
        inputs = rng.sample(wrt, min(len(wrt), rng.randint(1, 2)))
        target = rng.choice((name, name, f"({name} * {name}).sum()", f"{name}.tanh().sum()"))
        kws = ["allow_unused=True"]
        if target == name and h.numel() != 1:
            kws.append(f"grad_outputs={self.literal(tuple(h.shape), self.dtype_of(h))}")
        create = rng.random() < 0.5
        kws += [k for k, on in (("retain_graph=True", rng.random() < 0.5),
                                ("create_graph=True", create)) if on]
        targets = ", ".join(self.new("h" if create else "g") for _ in inputs)
        return (f"{targets}, = torch.autograd.grad({target}, [{', '.join(inputs)}], "
                f"{', '.join(kws)})")

    def hooked_create_graph(self):
        """Hooks on a leaf or a result, then a backward pass that records its own graph
        (autograd.grad or backward with create_graph=True) through them: the hooks see
        gradients that have a graph, and may replace them."""
        name, x = self.pick(lambda v: v.requires_grad)
        if name is None:
            return None
        rng = self.rng
        fn = rng.choice(("lambda g: log.append(g.tolist())", "lambda g: g * 2",
                         "lambda g: log.append(type(g.grad_fn).__name__)",
                         "lambda g: log.append(g.requires_grad)"))
        hooked = self.pick(lambda v: v.requires_grad)[0]
        then = self.autograd_grad() if rng.random() < 0.6 else self.backward()
        if then is None or "create_graph=True" not in then:
            then = then and then.replace("allow_unused=True", "allow_unused=True, create_graph=True")
        return then and f"{hooked}.register_hook({fn}); {then}"

    def view_inplace(self):
        """An in-place change through a view, of a tensor that needs no gradient as often as
        not, with an operand that may need one."""
        name, x = self.pick(lambda v: v.dim() > 0 and v.numel() > 0, _not_gradient)
        if name is None:
            return None
        rng = self.rng
        views = [f"{name}[0]", f"{name}[..., :1]", f"{name}.unsqueeze(0)", f"{name}[::2]"]
        if x.dim() == 2:
            views.append(f"{name}.t()")
        view = rng.choice(views)
        try:
            v = eval(view, dict(self.ns))
        except Exception:
            return None
        target = self.new()
        change = self._inplace_on(target, v)
        return change and f"{target} = {view}; {change}"

    def reshape_copy(self):
        """reshape or flatten of a transposed or permuted tensor: a copy where its memory
        does not fit the new shape (UnsafeViewBackward0), a view where it does."""
        name, x = self.pick(lambda v: v.dim() >= 2, lambda k: not self._layout_differs(k))
        if name is None:
            return None
        rng = self.rng
        perm = list(range(x.dim()))
        rng.shuffle(perm)
        moved = rng.choice((f"{name}.transpose(0, 1)", f"{name}.mT",
                            f"{name}.permute({', '.join(map(str, perm))})"))
        shape = _factor(x.numel(), rng)
        call = rng.choice((f"reshape({', '.join(map(str, shape))})", "flatten()",
                           f"flatten({rng.randint(0, x.dim() - 2)})", "flatten(0, 1)",
                           "reshape(-1)", "contiguous().view(-1)"))
        return f"{self.new()} = {moved}.{call}"

    def call_node(self):
        """A node called by hand: a bare Tensor back for one input, a tuple for several."""
        name, x = self.pick(lambda v: v.grad_fn is not None)
        if name is None:
            return None
        grad = self.rng.choice((f"torch.ones_like({name})",
                                self.literal(tuple(x.shape), self.dtype_of(x))))
        return f"{self.new('n')} = {name}.grad_fn({grad})"

    def call_node_wrongly(self):
        """A node called with what it does not take: a number, a tuple or a list, None, two
        gradients or none, a keyword, a gradient of another dtype; a leaf's AccumulateGrad
        called by hand. (Not of a view whose grad_fn PyTorch refuses to read: ``_stale``.)"""
        name, x = self.pick(lambda v: v.requires_grad and not _stale(v))
        if name is None:
            return None
        ones = f"torch.ones_like({name})"
        args = ["1.0", f"({ones},)", f"[{ones}]", "None", "", f"{ones}, None", f"grad={ones}",
                f"{ones}.double()", f"{ones}.float()", f"{ones}[None]", f"{ones}.sum()"]
        if x.grad_fn is not None and x.grad_fn.name() in ("AsStridedBackward0",
                                                          "ExpandBackward0"):
            # as_strided_backward handed a gradient of another shape, and expand's sum_to one
            # of fewer dimensions, read memory outside it: what PyTorch returns then depends
            # on what was there before
            args = args[:-2]
        arg = self.rng.choice(args)
        node = f"{name}.grad_fn" if x.grad_fn is not None else \
            f"({name} * 1).grad_fn.next_functions[0][0]"
        return f"{self.new('n')} = {node}({arg})"

    def hook_result(self):
        """A hook on a tensor or on a node that returns something other than what it was
        given: a number, a tuple, another shape or dtype, None in a node hook's tuple."""
        kept = "hook_on_stale_view" in KEPT_DIFFERENT
        name, x = self.pick(lambda v: v.requires_grad and not (kept and _stale(v)))
        if name is None:
            return None
        rng = self.rng
        kind = rng.choice(("tensor", "tensor", "pre", "post"))
        if kind == "tensor" or x.grad_fn is None:
            fn = rng.choice(("lambda g: 1.0", "lambda g: (g,)", "lambda g: g.sum()",
                             "lambda g: g.double()", "lambda g: g.float()", "lambda g: g[None]",
                             "lambda g: None", "lambda g: g * 3"))
            return f"{name}.register_hook({fn})"
        if kind == "pre":
            fn = rng.choice(("lambda go: None", "lambda go: (go[0] * 2,)", "lambda go: go[0]",
                             "lambda go: (None,)", "lambda go: (go[0].sum(),)",
                             "lambda go: (go[0].double(),)", "lambda go: [go[0]]",
                             "lambda go: log.append(len(go))"))
            return f"{name}.grad_fn.register_prehook({fn})"
        fn = rng.choice(("lambda gi, go: None", "lambda gi, go: gi",
                         "lambda gi, go: tuple(None if g is None else g * 2 for g in gi)",
                         "lambda gi, go: gi[0]", "lambda gi, go: (None,) * len(gi)",
                         "lambda gi, go: gi[:1]",
                         "lambda gi, go: log.append([g is None for g in gi])"))
        return f"{name}.grad_fn.register_hook({fn})"

    def hooked_grad(self):
        """Hooks on a leaf or a result, then autograd.grad through them (as often as not
        without create_graph): the hooks run, and may replace what is returned."""
        hooked = self.pick(lambda v: v.requires_grad)[0]
        then = hooked and self.autograd_grad()
        if then is None:
            return None
        fn = self.rng.choice(("lambda g: log.append(g.tolist())", "lambda g: g * 2",
                              "lambda g: g + 1", f"lambda g: log.append(('{hooked}', g.shape))"))
        return f"{hooked}.register_hook({fn}); {then}"

    def reduction_double(self):
        """The second derivative through a reduction: autograd.grad with create_graph=True of
        (reduction) ** 2, then the gradient of what it returned."""
        name, x = self.pick(lambda v: v.requires_grad and v.numel() > 0)
        if name is None:
            return None
        rng = self.rng
        fn = rng.choice(("sum", "mean", "max", "min", "prod", "norm"))
        if fn == "norm" and bool((x.detach().abs() < 1e-5).all()):
            fn = "prod"     # norm's kink at the zero vector
        if fn == "norm" or rng.random() < 0.4:
            call = f"{name}.{fn}()"
        else:
            dim = self.dim(x)
            call = f"{name}.{fn}({dim}, keepdim=True)" if rng.random() < 0.4 else \
                f"{name}.{fn}(dim={dim})"
            if fn in ("max", "min"):
                call += ".values"
        h, g = self.new("h"), self.new("g")
        return (f"{h}, = torch.autograd.grad(({call} ** 2).sum(), [{name}], create_graph=True); "
                f"{g}, = torch.autograd.grad(({h} * {h}).sum(), [{name}], allow_unused=True)")

    def mixed_dtype_gradient(self):
        """A gradient of the other float dtype handed to backward or autograd.grad (float64
        into a float32 graph, and the other way), with create_graph now and then."""
        name, x = self.pick(lambda v: v.requires_grad and v.dtype.is_floating_point)
        if name is None:
            return None
        rng = self.rng
        other = "float32" if self.dtype_of(x) == "float64" else "float64"
        grad = self.literal(tuple(x.shape), other)
        kw = rng.choice(("", "retain_graph=True", "create_graph=True"))
        if rng.random() < 0.5:
            return f"{name}.backward({', '.join(filter(None, (grad, kw)))})"
        wrt = [k for k, v in self.tensors(lambda v: v.requires_grad)]
        inputs = rng.sample(wrt, min(len(wrt), rng.randint(1, 2)))
        prefix = "h" if kw == "create_graph=True" else "g"
        targets = ", ".join(self.new(prefix) for _ in inputs)
        kws = ", ".join(filter(None, ("allow_unused=True", f"grad_outputs={grad}", kw)))
        return f"{targets}, = torch.autograd.grad({name}, [{', '.join(inputs)}], {kws})"

    def freeze(self):
        """A leaf frozen after it was used (requires_grad_(False)): a backward through the
        graph it is in then gives it nothing. Or thawed again, if no view has it as its base
        (the views' own flags and their base's, which PyTorch keeps apart, are not modelled)."""
        views = {id(v._base) for k, v in self.tensors() if v._base is not None}
        name, x = self.pick(lambda v: v.is_leaf and v.dtype.is_floating_point and (
            v.requires_grad or id(v) not in views), lambda k: k[0] == "a")
        if name is None:
            return None
        return f"{name}.requires_grad_({not x.requires_grad})"

    def none_argument(self):
        """None where PyTorch's argument parser wants a tensor, an int or a shape."""
        name, x = self.pick()
        if name is None:
            return None
        forms = [f"{name}.reshape(None)", f"{name}.unsqueeze(None)", f"{name}.sum(None, True)",
                 f"{name}.sum(keepdim=None)", f"{name}.mean(None, True)", "torch.relu(None)",
                 "torch.sum(None)", "torch.exp(None)", f"{name}.transpose(None, 0)",
                 f"{name}.permute(None)", f"{name}.expand(None)", f"{name}.squeeze(None)",
                 f"{name}.max(None)", f"{name}.view(2, None)", f"torch.cat([{name}], None)",
                 f"{name}.softmax(None)", "torch.stack(None)", f"{name}.fill_(None)",
                 f"torch.where({name} > 0, {name}, None)", f"{name}.pow(None)",
                 f"torch.mul(None, {name})"]
        return f"{self.new()} = {self.rng.choice(forms)}"

    def invalid(self):
        name, x = self.pick()
        if name is None:
            return None
        rng = self.rng
        forms = [f"{name} + None", f"{name} * None", f"torch.cat([{name}, None])",
                 f"{name}.sum({x.dim() + 1})", f"{name}.view(None)"]
        other = self._partner(x, lambda s: len(s) > 0 and _matmuls(tuple(x.shape), s))
        if x.dim() and other and not self._layout_differs(name) and \
                not (other in self.ns and self._layout_differs(other)):
            forms.append(f"{name} @ {other}.double()" if self.dtype_of(x) == "float32"
                         else f"{name} @ {other}.float()")
        # a value that does not fit what it is written into (a copy of x first: the write
        # itself is refused, and x stays as it was)
        wrong = self._partner(x, lambda s: len(s) > 0 and not (
            _broadcasts(tuple(x.shape), s)
            and np.broadcast_shapes(tuple(x.shape), s) == tuple(x.shape)))
        if wrong:
            forms.append(f"{name}.detach().clone().copy_({wrong})")
            if x.dim() and rng.random() < 0.5:
                return f"{name}.detach().clone()[0:1] = {wrong}"
        return f"{self.new()} = {rng.choice(forms)}"


FEATURES = {
    # name: (proposer method, weight)
    "leaf": (Proposer.leaf, 3),
    "unary": (Proposer.unary, 4),
    "power": (Proposer.power, 1),
    "binary": (Proposer.binary, 5),
    "pow_tensor": (Proposer.pow_tensor, 0.5),
    "mismatch": (Proposer.mismatch, 0.5),
    "reduce": (Proposer.reduce, 3),
    "reduce_other": (Proposer.reduce_other, 1),
    "matmul": (Proposer.matmul, 2),
    "matmul_named": (Proposer.matmul_named, 0.5),
    "view": (Proposer.view, 3),
    "index": (Proposer.index, 2),
    "join": (Proposer.join, 1),
    "clone_detach": (Proposer.clone_detach, 1),
    "inplace_leaf": (Proposer.inplace_leaf, 1),
    "inplace_nonleaf": (Proposer.inplace_nonleaf, 1),
    "inplace_view": (Proposer.inplace_view, 1),
    "inplace_no_grad": (Proposer.inplace_no_grad, 0.5),
    "inplace_gradient": (Proposer.inplace_gradient, 0.3),
    "no_grad": (Proposer.no_grad, 1),
    "hook": (Proposer.hook, 1),
    "retain_grad": (Proposer.retain_grad, 1),
    "backward": (Proposer.backward, 2),
    "autograd_grad": (Proposer.autograd_grad, 1.5),
    "invalid": (Proposer.invalid, 0.5),
    "double_grad": (Proposer.double_grad, 1),
    "hooked_create_graph": (Proposer.hooked_create_graph, 0.7),
    "view_inplace": (Proposer.view_inplace, 0.7),
    "reshape_copy": (Proposer.reshape_copy, 0.5),
    "call_node": (Proposer.call_node, 0.5),
    "none_argument": (Proposer.none_argument, 0.3),
    "call_node_wrongly": (Proposer.call_node_wrongly, 0.4),
    "hook_result": (Proposer.hook_result, 0.5),
    "hooked_grad": (Proposer.hooked_grad, 0.5),
    "reduction_double": (Proposer.reduction_double, 0.7),
    "mixed_dtype_gradient": (Proposer.mixed_dtype_gradient, 0.5),
    "freeze": (Proposer.freeze, 0.4),
}

# Differences that are not a feature of their own but a part of what is compared.
ASPECTS = {
    "no_grad_view_read": "reading the grad_fn of a view made under no_grad after its base "
                         "changed in place (PyTorch raises)",
    "double_backward_names": "the grad_fn names of the gradients autograd.grad returns with "
                             "create_graph=True (the variables h...)",
    "inplace_aliased_operand": "an in-place operation whose operand is another view of the "
                               "memory it writes (Proposer._reads_what_it_writes)",
    "stale_view_invalid_op": "an operation that is invalid in itself, on a view made under "
                             "no_grad whose base changed since (stale_view_first)",
    "hook_on_stale_view": "register_hook on a view made under no_grad whose base changed "
                          "since (Proposer.hook)",
    "memory_layout": "a view, reshape, flatten or matmul of a tensor whose strides differ "
                     "between the libraries (Proposer._layout_differs)",
}

# Differences kept on purpose (docs/learners/pytorch.md, "Kept different"): feature or aspect -> why.
KEPT_DIFFERENT = {
    "inplace_aliased_operand": "computed from the operand's values before the change, as the "
                               "out-of-place operation would be; PyTorch's kernel reads "
                               "elements it has already overwritten, in an order of its own.",
    "stale_view_invalid_op": "the operation's own error (a shape that does not fit...) here; "
                             "PyTorch reads its inputs' history before it runs an operation's "
                             "kernel, and names the stale view. Both refuse. Checking history "
                             "first would put a test into every operation, the hot path.",
    "hook_on_stale_view": "refused every time here; PyTorch refuses the first register_hook "
                          "and lets a second one register (its Python register_hook makes the "
                          "tensor's hook dict before reading grad_fn), where it is never run.",
    "memory_layout": "strides follow numpy where PyTorch follows its inputs (an elementwise "
                     "result of a transposed and a contiguous tensor; the strides of size-1 "
                     "dimensions, which PyTorch's elementwise results and expand set otherwise): "
                     "a reshape may copy in one library and view in the other "
                     "(UnsafeViewBackward0 against ViewBackward0), and matmul's stride test fold "
                     "a batch in one and run a bmm in the other (other node names, or another "
                     "kernel's dtype error). Tracking layouts would put a check into every "
                     "elementwise operation, the hot path. Values and gradients agree.",
}

# Known differences still to fix (issue 13): feature -> what differs.
NOT_YET = {
}


# functions with a pole, a branch point or a jump at 0 (see Proposer._near_zero): sign jumps
# where a sum that is 0 in PyTorch is 1e-8 here (its order of summing is the CPU's:
# docs/learners/pytorch.md), relu's and abs's gradients jump there (from 77 million: a sum
# that cancels, 1 against 0),
# and so do the comparisons of a mask and of where (x > 0), which Proposer.index and
# Proposer.join leave out there
POLES = ("log", "sqrt", "reciprocal", "sign", "relu", "abs")


def _holds(pred, v):
    """Whether ``pred(v)``: never for a tensor PyTorch refuses to describe (a view made under
    no_grad whose base then changed in place raises on reading ``is_leaf`` or ``grad_fn``)."""
    try:
        return pred is None or pred(v)
    except RuntimeError:
        return False


def _not_gradient(name):
    return name[0] not in "gh"


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def _matmuls(a, b):
    try:
        np.matmul(np.zeros(a), np.zeros(b))
        return len(a) > 0
    except ValueError:
        return False


def _factor(n, rng):
    """A random shape with n elements (at most 3 dimensions)."""
    shape = []
    while n > 1 and len(shape) < 2:
        d = rng.choice([k for k in range(1, n + 1) if n % k == 0])
        shape.append(d)
        n //= d
    shape.append(n)
    rng.shuffle(shape)
    if rng.random() < 0.2:
        shape.insert(rng.randrange(len(shape) + 1), 1)
    return shape


# -- running and comparing ---------------------------------------------------------------

# Warnings PyTorch gives once per process: whether one shows depends on what ran before.
ONCE = re.compile(r"create_graph=True will create a reference cycle|x\.T|Tensor\.T is deprecated"
                  r"|gradient layout contract"
                  r"|Converting a tensor with requires_grad=True to a scalar")


def namespace(lib):
    return {"torch": lib, "log": [], "__builtins__": __builtins__}


_code = {}


def step(ns, stmt):
    """Run one statement; return (exception, warnings)."""
    code = _code.get(stmt)
    if code is None:
        code = _code[stmt] = compile(stmt, "<program>", "exec")
    error = None
    with warnings.catch_warnings(record=True) as caught, \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        try:
            exec(code, ns)
        except Exception as e:
            error = (type(e).__name__, _clean(str(e)))
    # (a ResourceWarning is the garbage collector finalizing something of another test's)
    warned = [(w.category.__name__, _clean(str(w.message))) for w in caught
              if not ONCE.search(str(w.message)) and not issubclass(w.category, ResourceWarning)]
    return error, warned


def state(ns):
    """What a program holds, in a form both libraries give alike."""
    out = {"log": _plain(ns["log"])}
    for k, v in ns.items():
        if k in ("torch", "log", "__builtins__", "__warningregistry__"):
            continue        # (the registry: where a warning pointing at the program was kept)
        try:
            out[k] = _value(v)
        except RuntimeError as e:
            if "created in no_grad mode" not in str(e):
                raise
            out[k] = NO_GRAD_VIEW_READ      # PyTorch refuses to read this view's grad_fn
        if k.startswith("h") and "double_backward_names" in KEPT_DIFFERENT and \
                isinstance(out[k], dict):
            out[k].pop("grad_fn")
    return out


NO_GRAD_VIEW_READ = "PyTorch: grad_fn unreadable (a no_grad view whose base changed)"


def _plain(x):
    if isinstance(x, (list, tuple)):
        return [_plain(i) for i in x]
    return x


def _value(v):
    if v is None or isinstance(v, (int, float, str, bool)):
        return v
    if hasattr(v, "grad_fn") and hasattr(v, "detach"):
        info = {"data": _array(v), "dtype": str(v.dtype), "shape": tuple(v.shape),
                "requires_grad": v.requires_grad, "is_leaf": v.is_leaf,
                "grad_fn": None if v.grad_fn is None else type(v.grad_fn).__name__,
                "zero_tensor": v._is_zerotensor()}
        if v.is_leaf or v.retains_grad:
            info["grad"] = _value(v.grad)
        return info
    if isinstance(v, (list, tuple)):
        return [_value(i) for i in v]
    return type(v).__name__


def _array(v):
    try:
        return v.detach().numpy()
    except RuntimeError:    # a ZeroTensor of PyTorch's (what abs's second derivative leaves)
        return v.detach().numpy(force=True)


# float64 results often come from float32 inputs, where PyTorch's and numpy's exp, log, sin
# may differ in the last bit: float64 is checked to float32's last bits, a little tighter.
# Near 0, a float32 sum that cancels (a float64 leaf's gradient, summed in its float32
# result's dtype, then cast) differs by the last bits of its terms, about 1e-7 each.
TOLERANCE = {"torch.float32": (1e-4, 1e-5), "torch.float64": (1e-6, 1e-6)}


def differences(a, b, path=""):
    """Where two states differ, as short texts."""
    if isinstance(a, dict) and isinstance(b, dict):
        diffs = []
        if a.keys() != b.keys():
            diffs.append(f"{path}: keys {sorted(a.keys() ^ b.keys())}")
        for k in a.keys() & b.keys():
            if NO_GRAD_VIEW_READ in [x for x in (a[k], b[k]) if isinstance(x, str)] and \
                    "no_grad_view_read" in set(NOT_YET) | set(KEPT_DIFFERENT):
                continue
            if k == "data":
                if not _close(a[k], b[k], a.get("dtype")):
                    diffs.append(f"{path}.data: torch {a[k].tolist()} lab {b[k].tolist()}")
            else:
                diffs += differences(a[k], b[k], f"{path}.{k}" if path else k)
        return diffs
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float):
        return [] if _close(np.array(a), np.array(b), "torch.float32") else [f"{path}: {a} != {b}"]
    return [] if a == b else [f"{path}: torch {a!r} lab {b!r}"]


def _close(x, y, dtype):
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype.kind != "f":
        return np.array_equal(x, y)
    rtol, atol = TOLERANCE.get(dtype, (1e-4, 1e-5))
    return bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))


def compare_step(torch_ns, lab_ns, stmt):
    """Run ``stmt`` under both; the differences after it (an empty list: the same)."""
    theirs = step(torch_ns, stmt)
    ours = step(lab_ns, stmt)
    if theirs[0] != ours[0] and ours[0] and "stale_view_invalid_op" in KEPT_DIFFERENT and \
            stale_view_first(torch_ns, stmt, theirs[0], ours[0]):
        theirs = (ours[0], theirs[1])
    diffs = []
    if theirs[0] != ours[0]:
        diffs.append(f"exception: torch {theirs[0]} lab {ours[0]}")
    if theirs[1] != ours[1]:
        diffs.append(f"warnings: torch {theirs[1]} lab {ours[1]}")
    if not diffs:
        try:
            diffs = differences(state(torch_ns), state(lab_ns))
        except Exception as e:          # reading the state failed on one side
            diffs = [f"state: {type(e).__name__}: {e}"]
    return diffs


STALE_VIEW = "its base or another view of its base has been modified inplace"


def stale_view_first(torch_ns, stmt, theirs, ours):
    """Whether PyTorch refused ``stmt`` for a view made under no_grad whose base changed since
    (``theirs``), where autograd_lab gave the operation's own error (``ours``): PyTorch, given
    the statement with every such view replaced by a plain alias of its memory, raises
    ``ours``. (The statement failed under both, so it changed nothing to run it again.)"""
    if theirs is None or theirs[0] != "RuntimeError" or STALE_VIEW not in theirs[1]:
        return False
    torch = torch_ns["torch"]
    # (requiring grad as the view did: whether an operation folds a product, and so which
    #  kernel's error it raises, depends on it)
    stale = {k: v.detach().requires_grad_(v.requires_grad) for k, v in torch_ns.items()
             if isinstance(v, torch.Tensor) and re.search(rf"\b{k}\b", stmt) and _stale(v)}
    return bool(stale) and step({**torch_ns, **stale}, stmt)[0] == ours


def _stale(v):
    """Whether v is a view made under no_grad whose base changed since (PyTorch refuses to
    read its grad_fn)."""
    try:
        _ = v.grad_fn
    except RuntimeError as e:
        return STALE_VIEW in str(e)
    return False


def libraries():
    import torch

    import autograd_lab
    return torch, autograd_lab


def replay(program, libs=None):
    """Run a whole program under both; (step index, differences) of the first difference."""
    torch, lab = libs or libraries()
    tns, lns = namespace(torch), namespace(lab)
    for i, stmt in enumerate(program):
        diffs = compare_step(tns, lns, stmt)
        if diffs:
            return i, diffs
    return None


FEATURE_OF = {}        # statement -> the feature that proposed it (for surveys)


def generate_and_check(seed, features, libs=None):
    """Generate program ``seed`` step by step, checking each step as it goes. Returns the
    program and (step, differences) of the first difference, or None."""
    torch, lab = libs or libraries()
    rng = random.Random(seed)
    tns, lns = namespace(torch), namespace(lab)
    proposer = Proposer(rng, tns, features, lns)
    names = sorted(features)
    weights = [FEATURES[n][1] for n in names]
    program = []
    for _ in range(rng.randint(3, 15)):
        stmt = None
        while stmt is None:
            name = "leaf" if not program else rng.choices(names, weights)[0]
            stmt = FEATURES[name][0](proposer)
        FEATURE_OF[stmt] = name
        program.append(stmt)
        diffs = compare_step(tns, lns, stmt)
        if diffs:
            return program, (len(program) - 1, diffs)
    return program, None


def shrink(program, libs=None):
    """The smallest program (dropping statements) that still differs."""
    program = list(program)
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(program))):
            candidate = program[:i] + program[i + 1:]
            if candidate and replay(candidate, libs):
                program = candidate
                changed = True
    return program


def report(seed, program, libs=None):
    small = shrink(program, libs)
    at, diffs = replay(small, libs)
    lines = [f"program {seed}, shrunk from {len(program)} to {len(small)} statements:"]
    lines += [f"    {s}" for s in small]
    lines += [f"differs after statement {at + 1}:"] + [f"    {d}" for d in diffs[:6]]
    return "\n".join(lines)


def ci_features():
    return set(FEATURES) - set(KEPT_DIFFERENT) - set(NOT_YET)


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--programs", type=int, default=20000)
    parser.add_argument("--start", type=int, default=1_000_000, help="first seed")
    parser.add_argument("--all", action="store_true", help="include the NOT_YET features")
    parser.add_argument("--show", type=int, default=3, help="shrunk differences to print")
    args = parser.parse_args(argv)
    libs = libraries()
    features = set(FEATURES) - set(KEPT_DIFFERENT) - (set() if args.all else set(NOT_YET))
    began = time.perf_counter()
    failed = []
    for seed in range(args.start, args.start + args.programs):
        program, diff = generate_and_check(seed, features, libs)
        if diff:
            failed.append((seed, program))
    took = time.perf_counter() - began
    agree = args.programs - len(failed)
    print(f"{agree} of {args.programs} programs agree ({100 * agree / args.programs:.2f}%), "
          f"{took:.0f} s, seeds {args.start}..{args.start + args.programs - 1}, "
          f"features: {'all' if args.all else 'CI set'}")
    for seed, program in failed[:args.show]:
        print(report(seed, program, libs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
