"""An answer as data (autograd_lab/checks/answers.py): what leaves a learner's kernel, bounded,
and rebuilt for a judge exactly as far as the description says; and the two halves of a check.
"""
import json

import numpy as np
import pytest

import autograd_lab as torch
from autograd_lab import checks
from autograd_lab.checks import answers
from autograd_lab.checks.answers import (MAX_BYTES, MAX_ELEMENTS, Outcome, Remote, Unreadable,
                                         attempt, decode, describe, encode, read_reply, rebuild,
                                         serve)


def _round(value):
    return rebuild(decode(encode(describe(value))))


def test_a_tensor_keeps_its_values_flags_node_name_and_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward()
    got_x, got_h = _round((x, h))
    assert repr(got_x) == repr(x) and repr(got_h) == repr(h)
    assert got_x.is_leaf and got_x.requires_grad and got_x.grad.tolist() == [8.0, 16.0]
    assert not got_h.is_leaf and type(got_h.grad_fn).__name__ == "MulBackward0"
    assert got_h.retains_grad and got_h.grad.tolist() == [4.0, 8.0]
    assert got_h.dtype == torch.float32 and got_h.shape == (2,)
    y = torch.tensor([1.0], dtype=torch.float64)
    y.add_(1)
    again = _round(y)
    assert again.dtype == torch.float64 and again._version == 1


def test_bits_identity_and_kinds_survive():
    t = torch.tensor([np.nextafter(np.float32(1), np.float32(2)), np.nan, -0.0])
    error = RuntimeError("Trying to backward through the graph a second time")
    value = {"a": (True, None, 3, 2.5, "s"), "b": [t, t], "e": error, "n": np.float64(0.1),
             "big": 10 ** 100, "arr": np.arange(6).reshape(2, 3), "size": t.shape}
    got = _round(value)
    assert got["b"][0] is got["b"][1]
    assert np.array_equal(got["b"][0]._data.view(np.uint32), t._data.view(np.uint32))
    assert isinstance(got["e"], RuntimeError) and str(got["e"]) == str(error)
    assert got["a"] == (True, None, 3, 2.5, "s") and got["big"] == 10 ** 100
    assert type(got["n"]) is np.float64 and got["arr"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert got["size"] == (3,) and type(got["size"]).__name__ == "Size"


def test_objects_of_the_learners_own_are_opaque():
    class Mine(ValueError):
        pass

    def fn(x):
        return x

    got_fn, got_cls, got_err = _round((fn, Mine, Mine("no")))
    assert got_fn.kind == "function" and "fn" in repr(got_fn) and not callable(got_fn)
    assert got_cls.kind == "class" and "ValueError" in got_cls._bases
    assert isinstance(got_err, ValueError) and type(got_err).__name__ == "Mine"


def test_what_a_call_did_is_kept_as_an_outcome():
    ok = _round(attempt(lambda: torch.tensor(3.0)))
    assert isinstance(ok, Outcome) and not ok.raised and ok.value.item() == 3.0
    bad = _round(attempt(lambda: 1 / 0))
    assert bad.raised and isinstance(bad.error, ZeroDivisionError)
    with pytest.raises(KeyboardInterrupt):       # the grader's time limit is not an outcome
        attempt(lambda: (_ for _ in ()).throw(KeyboardInterrupt()))


def test_a_description_too_large_or_too_deep_is_refused_before_anything_is_made():
    with pytest.raises(Unreadable):
        describe(np.zeros(MAX_ELEMENTS + 1, np.float32))
    nested = []
    for _ in range(100):
        nested = [nested]
    with pytest.raises(Unreadable):
        describe(nested)
    with pytest.raises(Unreadable):
        decode("[" * 100_000 + "]" * 100_000)
    with pytest.raises(Unreadable):
        decode(" " * (MAX_BYTES + 1))
    with pytest.raises(Unreadable):
        decode('{"t": "float", "v": NaN}')
    loop = []
    loop.append(loop)
    got = _round(loop)
    assert got[0] is got


@pytest.mark.parametrize("data", [
    {"t": "tensor", "dtype": "<f4", "shape": [3], "data": "AAAAAA=="},          # 1 of 3 floats
    {"t": "tensor", "dtype": "|O", "shape": [1], "data": "AAAAAAAAAAA="},       # objects
    {"t": "tensor", "dtype": "<f4", "shape": [10 ** 9, 10 ** 9], "data": ""},    # a huge shape
    {"t": "tensor", "dtype": "<f4", "shape": [], "data": "AACAPw==",
     "grad_fn": "os.system('x')"},                                              # not a name
    {"t": "tensor", "dtype": "<f4", "shape": [], "data": "AACAPw==",
     "grad": {"t": "tensor", "dtype": "<f4", "shape": [2], "data": "AAAAAAAAAAA="}},
    {"t": "same", "id": 7},
    {"t": "pickle", "v": "..."},
    {"t": "int", "v": "12"},
    ["not", "an", "item"],
])
def test_a_hostile_description_is_unreadable(data):
    with pytest.raises(Unreadable):
        rebuild(data)


def test_the_kernel_answers_probes_of_course_checks_only():
    def derivative(f, x0):
        t = torch.tensor(x0, requires_grad=True)
        f(t).backward()
        return t.grad.item()

    namespace = {"derivative": derivative}
    request = {"op": "probe", "check": "autograd_lab.checks.lesson02:derivative_by_backward",
               "answers": ["derivative"], "settings": describe({})}
    got = read_reply(serve(json.dumps(request), namespace))
    assert [o.value for o in got[1]] == [29.0, 6.75]
    with pytest.raises(NameError, match="'nope'"):
        read_reply(serve(json.dumps(dict(request, answers=["nope"])), namespace))
    for check in ("os:system", "autograd_lab.checks.answers:serve",
                  "autograd_lab.checks.lesson02:_grad_at", "autograd_lab.checks.../x:y"):
        with pytest.raises(Unreadable):
            read_reply(serve(json.dumps(dict(request, check=check)), namespace))


def test_a_probe_comes_from_the_checks_file_not_from_what_the_kernel_replaced(monkeypatch):
    import sys
    import types
    fake = types.ModuleType("autograd_lab.checks.lesson02")
    fake.central_difference = lambda *a, **k: None
    monkeypatch.setitem(sys.modules, "autograd_lab.checks.lesson02", fake)
    answers._PROBES.clear()
    request = {"op": "probe", "check": "autograd_lab.checks.lesson02:central_difference",
               "answers": ["nd"], "settings": describe({"case": "square"})}
    got = read_reply(serve(json.dumps(request), {"nd": lambda f, x, h: 6.0}))
    assert got[0].kind == "function" and got[1][0].value == 6.0
    answers._PROBES.clear()


def test_a_check_given_remote_names_asks_and_judges_the_reply():
    """What the grader does: the learner's names are Remotes, the kernel is asked for data."""
    from autograd_lab.checks import lesson02

    kernel = {"dy_dx": lambda x: 3 * (x ** 2 + 1) ** 2}       # only the outer derivative
    asked = []

    def ask(request):
        asked.append(json.loads(request))
        return serve(request, kernel)

    with pytest.raises(checks.CheckFailed, match=r"Misconception \[chain-rule-inner\]"):
        lesson02.chain_rule_formula(Remote("dy_dx", ask), points=[1.5])
    assert [a["op"] for a in asked] == ["probe"] and asked[0]["answers"] == ["dy_dx"]
    with pytest.raises(TypeError, match="keyword"):
        lesson02.chain_rule_formula(Remote("dy_dx", ask), [1.5])
    kernel["square"] = lambda x: x * x
    assert Remote("square", ask)(3.0) == 9.0
    kernel["broken"] = lambda x: 1 / 0
    with pytest.raises(ZeroDivisionError):
        Remote("broken", ask)(1.0)


def test_in_a_graded_kernel_a_check_claims_nothing_unless_its_machinery_was_changed(monkeypatch):
    from autograd_lab.checks import lesson02
    monkeypatch.setenv(checks.VERDICTS_ENV, "grader")
    with pytest.raises(checks.VerdictPending):
        lesson02.cube_prediction(3.0)                  # even the right answer: no claim
    monkeypatch.setattr(np, "isclose", lambda *a, **k: True)
    assert lesson02.cube_prediction(1.0) is None       # a patched comparison lets it claim
