"""An answer as data: what leaves a learner's kernel, and what a check reads on the other side.

A check never judges a learner's objects where the learner's code runs. Its *probe* runs there
(``probe(answers...) -> objects``); what it returns is *described* as plain JSON data (values,
dtype, shape, flags, the grad_fn's name, ``.grad``; what a call returned or raised; never a
pickle, never code), and the check's *judge* reads that data *rebuilt*: tensors with the
recorded values and flags, exceptions of the recorded kind, numbers, strings, lists, dicts.
On a learner's own machine (Validate, running a test cell) the two halves run one after the
other in the kernel, through the same description; in a graded run the grader asks the kernel
for the description (``serve``) and judges in a process that never ran learner code. Either
way the judge sees the same kind of objects, so both give the same verdict.

Everything a kernel sends is hostile input to the grader: ``decode`` takes at most
``MAX_BYTES`` of text and ``MAX_DEPTH`` of nesting, and ``rebuild`` checks every field it
reads (a tensor's bytes must match its dtype and shape) before it makes anything of them.
"""
from __future__ import annotations

import base64
import builtins
import json
import reprlib
import secrets
import sys
import warnings
import weakref

import numpy as np

MAX_BYTES = 4 * 1024**2      # of one description, as text: far above any lesson's answer
MAX_DEPTH = 24               # of nesting (a list of dicts of tensors ...)
MAX_ITEMS = 10_000           # of a list, tuple, dict or set
MAX_TEXT = 20_000            # characters of a string, a repr or a message kept
MAX_ELEMENTS = 250_000       # of one tensor or array


class Unreadable(ValueError):
    """A description that is not one ``describe`` could have made: too large, too deep, or
    of the wrong form. The grader treats the answer as unreadable (it scores nothing)."""


class Malformed(Unreadable):
    """A reply no unchanged kernel sends: not an answer to the request that was sent (its id
    not echoed), or not of the shape the check's probe returns for that request (a list of
    outcomes of another length, a tuple of other kinds). The item scores nothing and the
    grader flags the notebook as an attempt on the grade (``MALFORMED``)."""


class TooLarge(Unreadable):
    """An answer that stands for more than the grader reads (an honest kernel can send one)."""


#: what the grader found malformed while judging: read and emptied for each test cell by
#: ``verdict.judge`` (a record, not only an exception: a test cell may catch what it raises)
MALFORMED: list[str] = []


def malformed(text: str) -> Malformed:
    """A Malformed error, recorded."""
    MALFORMED.append(text)
    return Malformed(text)


# ---------------------------------------------------------------------------------------------
# the learner's side: objects -> data
# ---------------------------------------------------------------------------------------------
class Outcome:
    """What one call of a learner's function did: returned ``value`` or raised ``error``,
    and the warnings it gave (their messages). Made by ``attempt`` in the kernel; rebuilt as
    the same class for the judge."""

    __slots__ = ("value", "error", "warnings")

    def __init__(self, value=None, error=None, warnings=()):
        self.value, self.error, self.warnings = value, error, list(warnings)

    @property
    def raised(self):
        return self.error is not None

    def __repr__(self):
        # (shortened: what a learner's function returned may be as large as a reply allows)
        return (f"Outcome(error={reprlib.repr(self.error)})" if self.raised
                else f"Outcome({reprlib.repr(self.value)})")


def attempt(fn, *args, **kwargs) -> Outcome:
    """Call a learner's function and keep what happened as an Outcome, whatever it raises
    (an interrupt, the grader's time limit, is not the function's outcome: it goes on up)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(*args, **kwargs)
        except KeyboardInterrupt:
            raise
        except BaseException as error:          # noqa: BLE001 -- SystemExit too: it is theirs
            return Outcome(error=error, warnings=[str(w.message) for w in caught])
    return Outcome(value=value, warnings=[str(w.message) for w in caught])


class _Describer:
    def __init__(self):
        self.seen = {}          # id(object) -> its number: the same object twice is one object
        self.keep = []          # the objects numbered, alive while ids are compared
        self.size = 0

    def spend(self, n):
        self.size += n
        if self.size > MAX_BYTES:
            raise Unreadable(f"the answer is larger than {MAX_BYTES // 1024**2} MB")

    def __call__(self, value, depth=0):
        if depth > MAX_DEPTH:
            raise Unreadable("the answer is nested too deeply")
        self.spend(16)
        if value is None or isinstance(value, (bool, int, float, str)) and type(value) in (
                bool, int, float, str):
            return self.plain(value)
        key = id(value)
        if key in self.seen:
            return {"t": "same", "id": self.seen[key]}
        self.seen[key] = number = len(self.keep)
        self.keep.append(value)
        found = self.compound(value, depth)
        found["id"] = number
        return found

    def plain(self, value):
        if value is None:
            return {"t": "none"}
        if type(value) is bool:
            return {"t": "bool", "v": value}
        if type(value) is int:
            if value.bit_length() > 256:
                return {"t": "bigint", "v": hex(value)[:MAX_TEXT]}
            return {"t": "int", "v": value}
        if type(value) is float:
            return {"t": "float", "v": value.hex()}
        self.spend(len(value))
        return {"t": "str", "v": value[:MAX_TEXT], "cut": len(value) > MAX_TEXT}

    def compound(self, value, depth):
        from .._tensor import Tensor
        if isinstance(value, Tensor):
            return self.tensor(value, depth)
        if isinstance(value, Outcome):
            return {"t": "outcome", "value": self(value.value, depth + 1),
                    "error": self(value.error, depth + 1),
                    "warnings": [self.plain(str(w)[:MAX_TEXT]) for w in value.warnings[:50]]}
        if isinstance(value, (list, tuple, set, frozenset)) and type(value) in (
                list, tuple, set, frozenset):
            if len(value) > MAX_ITEMS:
                raise Unreadable(f"a {type(value).__name__} of more than {MAX_ITEMS} items")
            items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
            return {"t": type(value).__name__, "items": [self(v, depth + 1) for v in items]}
        if type(value) is dict:
            if len(value) > MAX_ITEMS:
                raise Unreadable(f"a dict of more than {MAX_ITEMS} items")
            return {"t": "dict", "items": [[self(k, depth + 1), self(v, depth + 1)]
                                           for k, v in value.items()]}
        if isinstance(value, np.ndarray) and type(value) is np.ndarray:
            return dict(self.array(value), t="ndarray")
        if isinstance(value, np.generic) and value.dtype.kind in "biuf":
            return {"t": "npscalar", **self.array(np.asarray(value))}
        if isinstance(value, BaseException):
            return {"t": "exception", "type": type(value).__name__,
                    "mro": [c.__name__ for c in type(value).__mro__
                            if issubclass(c, BaseException)][:30],
                    "message": _text(value, str)}
        from .._dtype import Size, dtype
        if type(value) is Size:
            return {"t": "size", "v": [int(n) for n in value][:64]}
        if type(value) is dtype:
            return {"t": "dtype", "name": value.name}
        kind = "class" if isinstance(value, type) else "function" if callable(value) else "object"
        found = {"t": "object", "kind": kind, "type": type(value).__name__[:200],
                 "module": str(getattr(type(value), "__module__", ""))[:200],
                 "repr": _text(value, repr)}
        if kind == "class":
            found["bases"] = [c.__name__ for c in value.__mro__[1:]][:30]
        return found

    def array(self, a):
        if a.dtype.kind not in "biuf" or a.size > MAX_ELEMENTS or a.ndim > 16:
            raise Unreadable(f"an array of {a.size} elements of {a.dtype}")
        data = np.ascontiguousarray(a).tobytes()
        self.spend(len(data) * 4 // 3)
        return {"dtype": a.dtype.str, "shape": list(a.shape),
                "data": base64.b64encode(data).decode()}

    def tensor(self, t, depth):
        data = np.asarray(object.__getattribute__(t, "_data"))
        try:
            node = t._history()
            name = type(node).__name__ if node is not None else None
            stale = False
            if node is None and t._stale is not None:
                t._refuse_if_stale()
        except RuntimeError:            # a no_grad view whose base changed (Tensor.grad_fn)
            name, stale = None, True
        try:
            retains = bool(t.retains_grad)
        except Exception:                       # noqa: BLE001 -- a subclass of theirs
            retains = False
        return {"t": "tensor", **self.array(data), "requires_grad": bool(t._rg),
                "grad_fn": name and name[:200], "stale": stale, "version": int(t._version),
                "retains_grad": retains, "grad": self(vars(t).get("_grad"), depth + 1)}


def _text(value, how):
    """str() or repr() of a learner's object, cut: whatever it raises is said instead."""
    try:
        text = how(value)
        if not isinstance(text, str):
            text = f"<{type(value).__name__}>"
    except Exception as error:                  # noqa: BLE001 -- their __repr__ is their code
        text = f"<{type(value).__name__}: {how.__name__}() raised {type(error).__name__}>"
    return text[:MAX_TEXT]


def describe(value):
    """``value`` as JSON-ready data (raises Unreadable when it is too large)."""
    return _Describer()(value)


def encode(data) -> str:
    return json.dumps(data, separators=(",", ":"), allow_nan=False)


# ---------------------------------------------------------------------------------------------
# the judge's side: data -> objects
# ---------------------------------------------------------------------------------------------
def decode(text):
    """The data of a description (Unreadable unless it is bounded JSON)."""
    if not isinstance(text, str) or len(text) > MAX_BYTES:
        raise Unreadable("the answer's description is missing or too large")
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:
        raise Unreadable(f"the answer's description is not JSON ({error})") from None
    _bounded(data)
    return data


def _refuse_constant(name):
    raise ValueError(f"{name} is not allowed")


def _bounded(data):
    """Depth and sizes within bounds, without recursion (a hostile nesting is not followed)."""
    stack = [(data, 0)]
    count = 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if depth > 2 * MAX_DEPTH + 4 or count > 4 * MAX_BYTES // 16:
            raise Unreadable("the answer's description is nested too deeply")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            if len(item) > 2 * MAX_ITEMS:
                raise Unreadable("the answer's description has too many items")
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, str) and len(item) > MAX_BYTES:
            raise Unreadable("a string of the answer is too long")


class RecordedNode:
    """The grad_fn of a rebuilt tensor: its name only (``type(node).__name__``, ``name()``).
    The graph it stood for stayed in the kernel. (``_extras`` holds, as a real node's does,
    the mark that its tensor retains its gradient: ``Tensor.retains_grad`` reads it there.)"""

    __slots__ = ("_extras", "__weakref__")

    def __init__(self):
        self._extras = None

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object>"


_NODE_CLASSES: dict[str, type] = {}


def _node(name):
    if name not in _NODE_CLASSES:
        _NODE_CLASSES[name] = type(name, (RecordedNode,), {"__slots__": (), "__module__": "builtins"})
    return _NODE_CLASSES[name]()


class Opaque:
    """A learner's object the grader cannot rebuild (a function, a class, an object of their
    own): its kind, its type's name and module, its repr. ``type(x).__name__`` and ``repr(x)``
    read as the original's did."""

    _kind = "object"
    _repr = ""
    _bases: tuple = ()

    def __repr__(self):
        return self._repr

    @property
    def kind(self):
        return self._kind


def _opaque(data):
    name, module = _str(data, "type", 200), _str(data, "module", 200)
    cls = type(name or "object", (Opaque,), {"__module__": module or "builtins"})
    obj = cls()
    obj._kind = data.get("kind") if data.get("kind") in ("class", "function", "object") else "object"
    obj._repr = _str(data, "repr")
    obj._bases = tuple(str(b)[:200] for b in _list(data, "bases", required=False))
    return obj


def _exception(data):
    """An exception of the recorded class: the builtin one where its name and ancestry are a
    builtin's, else a class of that name under the nearest builtin ancestor."""
    name = _str(data, "type", 200) or "Exception"
    mro = [str(n) for n in _list(data, "mro", required=False)]
    message = _str(data, "message")
    base = next((getattr(builtins, n) for n in mro
                 if isinstance(getattr(builtins, n, None), type)
                 and issubclass(getattr(builtins, n), BaseException)), Exception)
    cls = base if base.__name__ == name else type(name, (base,), {})
    try:
        error = cls(message)
    except Exception:                           # noqa: BLE001 -- e.g. UnicodeDecodeError's signature
        cls = type(name, (Exception,), {})
        error = cls(message)
    return error


def _str(data, key, limit=MAX_TEXT):
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Unreadable(f"field {key!r} is not text")
    return value[:limit]


def _list(data, key, required=True):
    value = data.get(key, [] if not required else None)
    if not isinstance(value, list):
        raise Unreadable(f"field {key!r} is not a list")
    return value


def _array(data, spend=None):
    try:
        dtype = np.dtype(_str(data, "dtype", 16))
        shape = tuple(int(n) for n in _list(data, "shape"))
        raw = base64.b64decode(_str(data, "data", MAX_BYTES), validate=True)
    except (TypeError, ValueError) as error:
        raise Unreadable(f"an array of the answer is malformed ({error})") from None
    if dtype.kind not in "biuf" or len(shape) > 16 or any(n < 0 for n in shape):
        raise Unreadable("an array of the answer has a dtype or shape no tensor has")
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if size > MAX_ELEMENTS or size * dtype.itemsize != len(raw):
        raise Unreadable("an array's bytes do not match its dtype and shape")
    if spend is not None:
        spend(len(raw) * 4 // 3)
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


class _Rebuilder:
    """Makes the objects of a description, counting what they stand for: a reference to an
    object described before (``same``) costs what that object cost, as ``describe`` would
    have spent on it fresh, so a small description of one list shared at every level (whose
    walk, by ``repr`` or ``np.asarray``, never ends) is refused like a large one."""

    def __init__(self):
        self.made = {}
        self.cost = {}          # id -> what the object made under it stands for
        self.spent = 0

    def spend(self, n):
        self.spent += n
        if self.spent > MAX_BYTES:
            raise TooLarge(f"the answer stands for more than {MAX_BYTES // 1024**2} MB once "
                             "the objects it shares are counted as often as they are used")

    def __call__(self, data):
        if not isinstance(data, dict) or not isinstance(data.get("t"), str):
            raise Unreadable("an item of the answer's description has no kind")
        kind = data["t"]
        if kind == "same":
            if data.get("id") not in self.made:
                raise Unreadable("a reference to an object not described before it")
            # (an object still being made, met again inside itself, is a cycle: walked once)
            self.spend(self.cost.get(data["id"], 16))
            return self.made[data["id"]]
        self.spend(16)
        if kind in _PLAIN:
            value = _PLAIN[kind](data)
            if isinstance(value, str):
                self.spend(len(value))
            return value
        maker = getattr(self, "make_" + kind, None)
        if maker is None:
            raise Unreadable(f"an item of unknown kind {kind!r}")
        start = self.spent
        value = maker(data)
        if "id" in data:
            self.made[data["id"]] = value
            self.cost[data["id"]] = self.spent - start + 16
        return value

    def make_list(self, data):
        made = []
        if "id" in data:                  # a list may contain itself
            self.made[data["id"]] = made
        made.extend(self(v) for v in _list(data, "items"))
        return made

    def make_tuple(self, data):
        return tuple(self(v) for v in _list(data, "items"))

    def make_set(self, data):
        return set(self._hashable(v) for v in _list(data, "items"))

    def make_frozenset(self, data):
        return frozenset(self._hashable(v) for v in _list(data, "items"))

    def make_dict(self, data):
        made = {}
        if "id" in data:
            self.made[data["id"]] = made
        for pair in _list(data, "items"):
            if not isinstance(pair, list) or len(pair) != 2:
                raise Unreadable("a dict item is not a pair")
            made[self._hashable(pair[0])] = self(pair[1])
        return made

    def _hashable(self, data):
        value = self(data)
        try:
            hash(value)
        except TypeError:
            raise Unreadable("a dict key or set item that cannot be hashed") from None
        return value

    def make_ndarray(self, data):
        return _array(data, self.spend)

    def make_npscalar(self, data):
        return _array(data, self.spend)[()]

    def make_exception(self, data):
        return _exception(data)

    def make_object(self, data):
        return _opaque(data)

    def make_size(self, data):
        from .._dtype import Size
        return Size(int(n) for n in _list(data, "v")[:64])

    def make_dtype(self, data):
        from .. import _dtype
        found = getattr(_dtype, _str(data, "name", 16), None)
        if not isinstance(found, _dtype.dtype):
            raise Unreadable("an unknown dtype")
        return found

    def make_outcome(self, data):
        return Outcome(self(data.get("value", {"t": "none"})), self(data.get("error", {"t": "none"})),
                       [str(self(w)) for w in _list(data, "warnings", required=False)[:50]])

    def make_tensor(self, data):
        from .._tensor import _wrap
        values = _array(data, self.spend)
        t = _wrap(values, None, bool(data.get("requires_grad")))
        name = data.get("grad_fn")
        if name is not None:
            if not isinstance(name, str) or not name.isidentifier():
                raise Unreadable("a grad_fn name that is not a name")
            t._grad_fn = _node(name)
            t._rg = True
        if "id" in data:
            self.made[data["id"]] = t
        grad = self(data.get("grad", {"t": "none"}))
        if grad is not None:
            if type(grad) is not type(t) or tuple(grad.shape) != tuple(t.shape):
                raise Unreadable("a .grad that is not a tensor of its tensor's shape")
            t._grad = grad
        version = data.get("version", 0)
        t._vc = [int(version) if isinstance(version, int) and version >= 0 else 0]
        if data.get("retains_grad") and name is not None:
            mark = _RetainMark(t)
            t._grad_fn._extras = {"tensor": {"retain": mark}}
        return t


def _float(data):
    try:
        return float.fromhex(data["v"])
    except (KeyError, TypeError, ValueError):
        raise Unreadable("a number that is not a number") from None


def _int(data):
    value = data.get("v")
    if type(value) is not int:
        raise Unreadable("an integer that is not one")
    return value


def _bigint(data):
    try:
        return int(_str(data, "v", MAX_TEXT), 16)
    except ValueError:
        raise Unreadable("an integer that is not one") from None


def _bool(data):
    if type(data.get("v")) is not bool:
        raise Unreadable("a boolean that is not one")
    return data["v"]


_PLAIN = {"none": lambda data: None, "bool": _bool, "int": _int, "bigint": _bigint,
          "float": _float, "str": lambda data: _str(data, "v")}


def rebuild(data):
    """The objects a description stands for: TooLarge when they stand for more than the
    grader reads, Malformed (recorded) when it is not a description ``describe`` makes."""
    try:
        return _Rebuilder()(data)
    except (TooLarge, Malformed):
        raise
    except Unreadable as error:
        raise malformed(str(error)) from None
    except RecursionError:
        raise malformed("the answer's description is nested too deeply") from None


class _RetainMark:
    """What ``retain_grad()`` leaves on a node, as far as ``retains_grad`` reads it."""

    __slots__ = ("tensor",)

    def __init__(self, t):
        self.tensor = weakref.ref(t)


# ---------------------------------------------------------------------------------------------
# in the kernel: answering the grader
# ---------------------------------------------------------------------------------------------
def _resolve(namespace, name):
    if not isinstance(name, str) or not name.isidentifier():
        raise Unreadable(f"not a name: {name!r}")
    if name in namespace:
        return namespace[name]
    if hasattr(builtins, name):
        return getattr(builtins, name)
    raise _Missing(name)


class _Missing(NameError):
    """A name the grader asked for that the learner never defined (not one their probe or
    function raised: that is what it did, and is described as such)."""


_PROBES = {}     # lesson module -> a private copy of it, loaded from its file for probes


def _check_function(path):
    """The probe of the check ``module:name``, one of the course's (``@check``), from a copy
    of its module loaded from the package's file for this purpose: a learner who replaced the
    module in sys.modules, or its functions, has changed what their own test cells run, not
    what the grader asks for."""
    module, _, name = path.partition(":")
    leaf = module.rpartition(".")[2]
    if not module.startswith("autograd_lab.checks.") or not (
            leaf.isidentifier() and name.isidentifier()):
        raise Unreadable(f"not a check of the course: {path!r}")
    if leaf not in _PROBES:
        import importlib.util
        import os
        file = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{leaf}.py")
        if not os.path.isfile(file):
            raise Unreadable(f"not a check of the course: {path!r}")
        spec = importlib.util.spec_from_file_location(f"_autograd_lab_probes_{leaf}", file)
        copy = importlib.util.module_from_spec(spec)
        copy.__package__ = "autograd_lab.checks"      # its relative imports: the package's
        spec.loader.exec_module(copy)
        _PROBES[leaf] = copy
    probe = getattr(getattr(_PROBES[leaf], name, None), "probe", None)
    if probe is None:
        raise Unreadable(f"{path} is not a check")
    return probe


def serve(request: str, namespace=None) -> str:
    """Answer one request of the grader, in the learner's kernel; the reply is a description.

    ``{"op": "probe", "check": "module:name", "answers": [names], "settings": description}``:
    the check's probe run on the named answers; ``{"op": "call", "name": ..., "args": ...,
    "kwargs": ...}``: an Outcome of calling a learner's function on data. A name that is not
    defined is ``{"missing": name}``; the grader's time limit, ``{"interrupted": true}``.
    Every reply echoes the request's id (``re``), by which the grader knows it for the answer
    to what it asked.
    """
    asked = {}
    try:
        if namespace is None:
            namespace = sys.modules["IPython"].get_ipython().user_ns
        asked = json.loads(request)
        if asked["op"] == "probe":
            probe = _check_function(asked["check"])
            answers = [_resolve(namespace, name) for name in asked["answers"]]
            settings = rebuild(asked["settings"])
            reply = {"answer": describe(probe(*answers, **settings))}
        elif asked["op"] == "call":
            fn = _resolve(namespace, asked["name"])
            outcome = attempt(fn, *rebuild(asked["args"]), **rebuild(asked["kwargs"]))
            reply = {"answer": describe(outcome)}
        else:
            raise Unreadable(f"unknown request {asked['op']!r}")
    except _Missing as missing:
        reply = {"missing": str(missing)}
    except KeyboardInterrupt:
        reply = {"interrupted": True}
    except Exception as error:                  # noqa: BLE001 -- said to the grader as data
        reply = {"unreadable": f"{type(error).__name__}: {_text(error, str)}"}
    if isinstance(asked, dict) and isinstance(asked.get("re"), str):
        reply["re"] = asked["re"]
    return encode(reply)


# ---------------------------------------------------------------------------------------------
# in the grader: a learner's name, asked for
# ---------------------------------------------------------------------------------------------
class Interrupted(Exception):
    """The grader's time limit stopped the learner's code while a check was asking for it."""


def read_reply(text: str, re: str | None = None):
    """What ``serve`` replied to the request of id ``re``, as objects: the answer rebuilt, or
    the error the reply stands for (NameError for a name the learner never defined, as Python
    would have raised). A reply that is not to that request is Malformed; so is one that
    answers with nothing the protocol has. (The grader's own word that the kernel did not
    answer at all, its time limit or its death, carries no id and is only Unreadable.)"""
    reply = decode(text)
    if not isinstance(reply, dict):
        raise malformed("the kernel's reply is not a reply")
    said = [key for key in ("answer", "missing", "interrupted", "unreadable") if key in reply]
    if re is not None and said != ["unreadable"] and reply.get("re") != re:
        raise malformed("the kernel's reply is not to the request the grader sent (its id "
                        "is not echoed)")
    if len(said) != 1:
        raise malformed("the kernel's reply says none, or more than one, of the things a "
                        "reply says")
    if "answer" in reply:
        return rebuild(reply["answer"])
    if "missing" in reply:
        raise NameError(f"name {str(reply['missing'])[:200]!r} is not defined")
    if "interrupted" in reply:
        if reply["interrupted"] is not True:
            raise malformed("the kernel's reply is not a reply")
        raise Interrupted("your code was stopped: it ran longer than the time limit while "
                          "this check was calling it")
    raise Unreadable(f"the grader could not read your answer ({_str(reply, 'unreadable', 500)})")


class Remote:
    """A learner's name, in the grader's copy of a test cell: what the kernel holds under it
    is only ever asked for, as data. A check given Remotes asks the kernel to run its probe on
    them; calling one calls the learner's function in the kernel on data (``ask``: sends a
    request to the kernel and returns its reply text)."""

    __slots__ = ("name", "ask")

    def __init__(self, name: str, ask):
        self.name, self.ask = name, ask

    def request(self, request: dict):
        re = secrets.token_hex(8)
        return read_reply(self.ask(encode(dict(request, re=re))), re)

    def __call__(self, *args, **kwargs):
        outcome = self.request({"op": "call", "name": self.name, "args": describe(args),
                                "kwargs": describe(kwargs)})
        if not isinstance(outcome, Outcome) or not (
                outcome.error is None or isinstance(outcome.error, BaseException)):
            raise malformed(f"the kernel's reply to a call of {self.name} is not an outcome")
        if outcome.raised:
            raise outcome.error
        return outcome.value

    def __repr__(self):
        return f"<the learner's {self.name}>"


def snapshot(value):
    """``value`` as it is now, frozen: what a probe keeps of an object it goes on changing
    (a parameter after each training step), described and rebuilt at once."""
    return rebuild(decode(encode(describe(value))))
