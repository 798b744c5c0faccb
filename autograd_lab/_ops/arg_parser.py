"""PyTorch's argument parser, for the calls it refuses.

PyTorch checks every call of a tensor method or ``torch.`` function against the signatures
the operation has (``sum(tuple of ints dim, bool keepdim = False, ...)``) before it runs it,
and a call that fits none raises a TypeError that names the argument, or lists the
signatures and marks what did not fit. The engine's operations are Python functions: they
take their arguments as Python does, so for such a call they would fail inside (an
AttributeError of ``None``) or take a None as "not given". ``checked`` wraps an operation so
that a call with a None argument, or one that fails with a TypeError, AttributeError or
ValueError, is first parsed as PyTorch parses it -- and refused with PyTorch's words if it
does not fit. The rules and texts are those of PyTorch's python_arg_parser.cpp and
invalid_arguments.cpp (a signature printed without "?" and "!" is the one PyTorch prints).
"""
import numpy as np

from .._core.dtype import dtype
from .._core.hooks import typename
from .._core.tensor import Tensor

# The signatures of the operations checked, as PyTorch prints them, with two marks of this
# table's own (not printed): "?" after a type, the parameter also takes None; "!" after
# "tuple of ints", it also takes one int (PyTorch's int[1]). A default of None takes None too.
_SUM = ["(*, torch.dtype dtype = None)",
        "(tuple of ints!? dim, bool keepdim = False, *, torch.dtype dtype = None)"]
_EXTREME = ["()", "(Tensor other)", "(int dim, bool keepdim = False)"]
_ONE_INPUT = ["(Tensor input)"]
_NEW = ("(tuple of ints size, *, torch.dtype dtype = None, torch.layout layout = None, "
        "torch.device device = None, bool pin_memory = False, bool requires_grad = False)")
_FACTORY = ("(tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, torch.layout "
            "layout = None, torch.device device = None, bool pin_memory = False, bool "
            "requires_grad = False)")
SIGNATURES = {
    "Tensor.reshape": ["(tuple of ints shape)"],
    "Tensor.view": ["(torch.dtype dtype)", "(tuple of ints size)"],
    "Tensor.unsqueeze": ["(int dim)"],
    "Tensor.squeeze": ["()", "(int dim)", "(tuple of ints dim)"],
    "Tensor.sum": _SUM,
    "Tensor.mean": _SUM,
    "Tensor.prod": ["(*, torch.dtype dtype = None)",
                    "(int dim, bool keepdim = False, *, torch.dtype dtype = None)"],
    "Tensor.max": _EXTREME,
    "Tensor.min": _EXTREME,
    "Tensor.transpose": ["(int dim0, int dim1)"],
    "Tensor.permute": ["(tuple of ints dims)"],
    "Tensor.expand": ["(tuple of ints size, *, bool implicit = False)"],
    "Tensor.flatten": ["(int start_dim = 0, int end_dim = -1)"],
    "Tensor.softmax": ["(int dim, torch.dtype dtype = None)"],
    "Tensor.log_softmax": ["(int dim, torch.dtype dtype = None)"],
    "Tensor.pow": ["(Tensor exponent)", "(Number exponent)"],
    "Tensor.fill_": ["(Tensor value)", "(Number value)"],
    "Tensor.copy_": ["(Tensor other, bool non_blocking = False)"],
    "Tensor.requires_grad_": ["(bool requires_grad = True)"],
    "Tensor.mm": ["(Tensor mat2)"],
    "Tensor.bmm": ["(Tensor mat2)"],
    "Tensor.mv": ["(Tensor vec)"],
    "Tensor.dot": ["(Tensor tensor)"],
    "Tensor.expand_as": ["(Tensor other)"],
    "Tensor.movedim": ["(int source, int destination)",
                       "(tuple of ints source, tuple of ints destination)"],
    "Tensor.new_zeros": [_NEW],
    "Tensor.new_ones": [_NEW],
    **{f"Tensor.{name}": ["(Tensor other)", "(Number other)"]
       for name in ("eq", "ne", "lt", "le", "gt", "ge")},
    "torch.reshape": ["(Tensor input, tuple of ints shape)"],
    "torch.unsqueeze": ["(Tensor input, int dim)"],
    "torch.squeeze": ["(Tensor input)", "(Tensor input, int dim)", "(Tensor input, tuple of ints dim)"],
    "torch.sum": ["(Tensor input, *, torch.dtype dtype = None)",
                  "(Tensor input, tuple of ints!? dim, bool keepdim = False, *, "
                  "torch.dtype dtype = None, Tensor out = None)"],
    "torch.mean": ["(Tensor input, *, torch.dtype dtype = None, Tensor out = None)",
                   "(Tensor input, tuple of ints!? dim, bool keepdim = False, *, "
                   "torch.dtype dtype = None, Tensor out = None)"],
    "torch.max": ["(Tensor input, *, Tensor out = None)", "(Tensor input, Tensor other, *, Tensor out = None)",
                  "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)"],
    "torch.min": ["(Tensor input, *, Tensor out = None)", "(Tensor input, Tensor other, *, Tensor out = None)",
                  "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)"],
    "torch.prod": ["(Tensor input, *, torch.dtype dtype = None)",
                   "(Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, "
                   "Tensor out = None)"],
    "torch.add": ["(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)"],
    "torch.sub": ["(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)"],
    "torch.zeros": [_FACTORY],
    "torch.ones": [_FACTORY],
    "torch.transpose": ["(Tensor input, int dim0, int dim1)"],
    "torch.permute": ["(Tensor input, tuple of ints dims)"],
    "torch.flatten": ["(Tensor input, int start_dim = 0, int end_dim = -1)"],
    "torch.softmax": ["(Tensor input, int dim, torch.dtype dtype = None)"],
    "torch.log_softmax": ["(Tensor input, int dim, torch.dtype dtype = None)"],
    "torch.pow": ["(Tensor input, Tensor exponent, *, Tensor out = None)",
                  "(Number self, Tensor exponent, *, Tensor out = None)",
                  "(Tensor input, Number exponent, *, Tensor out = None)"],
    "torch.where": ["(Tensor condition)", "(Tensor condition, Tensor input, Tensor other, *, Tensor out = None)",
                    "(Tensor condition, Number self, Tensor other)",
                    "(Tensor condition, Tensor input, Number other)",
                    "(Tensor condition, Number self, Number other)"],
    "torch.cat": ["(tuple of Tensors tensors, int dim = 0, *, Tensor out = None)"],
    "torch.stack": ["(tuple of Tensors tensors, int dim = 0, *, Tensor out = None)"],
    "torch.mul": ["(Tensor input, Tensor other, *, Tensor out = None)"],
    "torch.matmul": ["(Tensor input, Tensor other, *, Tensor out = None)"],
    "torch.maximum": ["(Tensor input, Tensor other, *, Tensor out = None)"],
    "torch.mm": ["(Tensor input, Tensor mat2, *, Tensor out = None)"],
    "torch.mv": ["(Tensor input, Tensor vec, *, Tensor out = None)"],
    "torch.dot": ["(Tensor input, Tensor tensor, *, Tensor out = None)"],
    "torch.bmm": ["(Tensor input, Tensor mat2, *, Tensor out = None)"],
    "F.linear": ["(Tensor input, Tensor weight, Tensor bias = None)"],
    **{f"{owner}.{name}": _ONE_INPUT for owner, name in (
        *(("torch", n) for n in ("relu", "exp", "log", "sin", "cos", "tanh", "sigmoid",
                                 "sqrt", "abs", "neg", "t", "square", "sign", "reciprocal")),
        ("F", "relu"), ("F", "sigmoid"), ("F", "tanh"))},
}
# the numpy names PyTorch takes too: x.sum(axis=0, keepdims=True)
_NUMPY_NAMES = {"dim": "axis", "keepdim": "keepdims"}
# PyTorch lets these take a number where the signature says Tensor
_NUMBERS_AS_TENSORS = {"add", "sub", "mul", "div", "pow"}


class _Parameter:
    def __init__(self, text, keyword_only):
        text, default = (text.split(" = ") + [None])[:2]
        kind, self.name = text.rsplit(" ", 1)
        self.allow_none = kind.endswith("?") or default == "None"
        kind = kind.rstrip("?")
        self.one_int = kind.endswith("!")
        self.kind = kind.rstrip("!")
        self.optional = default is not None
        self.keyword_only = keyword_only

    def check(self, obj, numbers_as_tensors):
        kind = self.kind
        if kind == "Tensor":
            return isinstance(obj, Tensor) or numbers_as_tensors and _is_number(obj)
        if kind == "int":
            return _is_int(obj)
        if kind == "bool":
            return type(obj) is bool or type(obj).__name__ == "bool_"
        if kind == "Number":
            return _is_number(obj) or isinstance(obj, Tensor) and obj.dim() == 0
        if kind == "tuple of ints":         # (PyTorch looks at the first element only)
            if self.one_int and _is_int(obj):
                return True
            return isinstance(obj, (tuple, list)) and (not obj or _is_int(obj[0]))
        if kind == "tuple of Tensors":
            if not isinstance(obj, (tuple, list)):
                return False
            for i, v in enumerate(obj):     # PyTorch names a wrong element straight away
                if not isinstance(v, Tensor):
                    raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                                    f"{type(v).__name__}")
            return True
        if kind in ("torch.layout", "torch.device"):
            return True                     # (the factories check these themselves)
        if kind == "torch.dtype":
            return isinstance(obj, dtype)
        raise AssertionError(kind)


def _is_int(obj):
    if isinstance(obj, Tensor):         # a 0-d integer tensor is an int to PyTorch
        return obj.dim() == 0 and obj._data.dtype.kind in "iu"
    return isinstance(obj, int) and not isinstance(obj, bool) or \
        type(obj).__module__ == "numpy" and type(obj).__name__.startswith(("int", "uint"))


def _is_number(obj):
    return isinstance(obj, (int, float, complex, np.number, np.bool_))


class _Signature:
    def __init__(self, name, text):
        self.name, self.params, keyword_only = name, [], False
        for part in filter(None, text[1:-1].split(", ")):
            if part == "*":
                keyword_only = True
            else:
                self.params.append(_Parameter(part, keyword_only))
        self.printed = text.replace("?", "").replace("!", "")
        self.min_args = sum(not p.optional for p in self.params)
        self.max_args = len(self.params)
        self.max_pos_args = sum(not p.keyword_only for p in self.params)
        self.numbers_as_tensors = name in _NUMBERS_AS_TENSORS

    def parse(self, args, kwargs, raise_error):
        """Whether the call fits; with ``raise_error``, PyTorch's TypeError if not."""
        name = self.name
        # a lone list of ints may come as the ints themselves (x.view(2, 3)), if the first
        # argument is one
        varargs = (self.max_pos_args == 1 and self.params[0].kind == "tuple of ints"
                   and len(args) > 0 and _is_int(args[0]))
        if len(args) > self.max_pos_args and not varargs:
            return _fail(raise_error, self._extra_args(len(args)))
        remaining = dict(kwargs)
        position = 0
        for i, param in enumerate(self.params):
            keyword = False
            if position < len(args):
                if param.keyword_only:
                    return _fail(raise_error, self._extra_args(len(args)))
                obj, present = args[position], True
            else:
                key = param.name if param.name in remaining else _NUMPY_NAMES.get(param.name)
                present = key in remaining
                obj, keyword = remaining.pop(key, None), True
            if not present and param.optional or present and obj is None and param.allow_none:
                pass
            elif not present:
                missing = [p.name for p in self.params[i:] if not p.optional]
                return _fail(raise_error, TypeError(
                    f"{name}() missing {len(missing)} required positional argument"
                    f"{'s' if len(missing) == 1 else ''}: "
                    + ", ".join(f'"{m}"' for m in missing)))
            elif param.check(obj, self.numbers_as_tensors):
                if param.kind == "tuple of ints" and isinstance(obj, (tuple, list)):
                    self._unpack(param, obj)
            elif varargs and i == 0 and not keyword:
                self._unpack(param, args)   # x.view(2, 3): the sizes given one by one
                return True
            elif keyword:
                return _fail(raise_error, TypeError(
                    f"{name}(): argument '{param.name}' must be {param.kind}, not "
                    f"{typename(obj)}"))
            else:
                return _fail(raise_error, self._wrong_type(param, obj, position))
            if not keyword:
                position += 1
        if remaining:
            key = next(iter(remaining))
            names = [p.name for p in self.params]
            text = (f"{name}() got multiple values for argument '{key}'"
                    if key in names and names.index(key) < len(args) else
                    f"{name}() got an unexpected keyword argument '{key}'")
            return _fail(raise_error, TypeError(text))
        return True

    def _unpack(self, param, ints):
        """A list of ints PyTorch took by its first element: the others are read when the
        operation runs, and one that is no int fails then."""
        for j, v in enumerate(ints):
            if not _is_int(v):
                raise TypeError(
                    f"{self.name}(): argument '{param.name}' failed to unpack the object at "
                    f"pos {j + 1} with error \"type must be tuple of ints,but got "
                    f"{type(v).__name__}\"")

    def _wrong_type(self, param, obj, position):
        return TypeError(f"{self.name}(): argument '{param.name}' (position {position + 1}) "
                         f"must be {param.kind}, not {typename(obj)}")

    def _extra_args(self, n):
        low, high = self.min_args, self.max_pos_args
        if low != high:
            return TypeError(f"{self.name}() takes from {low} to {high} positional arguments "
                             f"but {n} were given")
        return TypeError(f"{self.name}() takes {high} positional argument"
                         f"{'' if high == 1 else 's'} but {n} {'was' if n == 1 else 'were'} "
                         "given")


def _fail(raise_error, error):
    if raise_error:
        raise error
    return False


class Parser:
    """The signatures of one operation (``SIGNATURES[key]``), parsed on first use."""

    def __init__(self, key):
        self.key, self._signatures = key, None

    @property
    def signatures(self):
        if self._signatures is None:
            name = self.key.split(".", 1)[1]
            self._signatures = [_Signature(name, text) for text in SIGNATURES[self.key]]
        return self._signatures

    def check(self, args, kwargs):
        """Raise PyTorch's TypeError if the call does not fit any signature."""
        __tracebackhide__ = True     # IPython shows the learner's line, not this one
        signatures = self.signatures
        if len(signatures) == 1:
            signatures[0].parse(args, kwargs, True)
            return
        if any(s.parse(args, kwargs, False) for s in signatures):
            return
        n = len(args) + len(kwargs)
        plausible = [s for s in signatures if s.min_args <= n <= s.max_args]
        if len(plausible) == 1:
            plausible[0].parse(args, kwargs, True)
        raise TypeError(_invalid_combination(signatures[0].name + "()",
                                             [s.printed for s in signatures], args, kwargs))


# -- invalid_arguments.cpp: the text that lists the signatures --------------------------
def _invalid_combination(function, options, args, kwargs):
    message = f"{function} received an invalid combination of arguments - got "
    message += _arg_desc(args, kwargs) + ", but expected one of:\n"
    for printed in options:
        option = _option(printed)
        message += f" * {printed}\n"
        if len(option) == len(args) + len(kwargs):
            start = max(len(option) - len(kwargs), 0)
            unmatched = [k for k in kwargs if k not in [n for _, n in option[start:]]]
            if unmatched:
                message += ("      didn't match because some of the keywords were incorrect: "
                            + ", ".join(unmatched) + "\n")
            else:
                message += ("      didn't match because some of the arguments have invalid "
                            "types: " + _formatted_desc(option, args, kwargs) + "\n")
    return message


def _option(printed):
    """A printed signature's (type, name) pairs, split as PyTorch's _parseOption splits them:
    at ", " and at the last space ("bool keepdim = False" is the type "bool keepdim =" named
    "False"; "()" has one argument with no type)."""
    out = []
    for part in printed[1:-1].split(", "):
        space = part.rfind(" ")
        out.append((part[:space] if space >= 0 else part, part[space + 1:]))
    return out


def _type_name(obj):
    name = typename(obj)
    if isinstance(obj, (tuple, list)):
        inner = ", ".join(type(v).__name__ for v in obj)
        return (f"{name} of ({inner}{',' if len(obj) == 1 else ''})" if isinstance(obj, tuple)
                else f"{name} of [{inner}]")
    return name


def _matches(kind, obj):
    name = type(obj).__name__
    if kind == "float":
        return name in ("float", "int", "long")
    if kind == "int":
        return name in ("int", "long")
    return name == kind


def _formatted_desc(option, args, kwargs):
    parts = []
    values = list(args) + [kwargs.get(n) for _, n in option[len(args):len(args) + len(kwargs)]]
    for i, obj in enumerate(values):
        keyword = i >= len(args)
        mark = "" if _matches(option[i][0], obj) else "!"
        parts.append(f"{mark}{option[i][1] + '=' if keyword else ''}{_type_name(obj)}{mark}")
    text = ", ".join(parts) + (", " if not args and parts else "")
    return f"({text})"


def _arg_desc(args, kwargs):
    parts = [typename(a) for a in args] + [f"{k}={typename(v)}"
                                                for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + (", " if not args and kwargs else "") + ")"


def checked(fn, key, method):
    """``fn`` (a method when ``method``: its first argument is the tensor) with PyTorch's
    argument checks for the calls PyTorch refuses: one with None in it is parsed first, one
    that fails is parsed before its error is let through."""
    parser = Parser(key)

    def call(*args, **kwargs):
        __tracebackhide__ = True     # IPython shows the learner's line, not this one
        given = args[1:] if method else args
        for a in given:
            if a is None:
                parser.check(given, kwargs)
                break
        else:
            for a in kwargs.values():
                if a is None:
                    parser.check(given, kwargs)
                    break
        try:
            return fn(*args, **kwargs)
        except (TypeError, AttributeError, ValueError):
            parser.check(given, kwargs)
            raise
    call.__name__ = call.__qualname__ = key.split(".")[1]
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn
    return call
