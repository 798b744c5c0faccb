"""Random programs agree under PyTorch and autograd_lab, step by step (tests/support/random_programs.py
generates and compares them; its docstring gives the command for the long block).

The CI block is a fixed range of seeds over every feature except those named in
``KEPT_DIFFERENT`` (docs/learners/pytorch.md says why) and ``NOT_YET`` (still to fix). A
failure prints the program shrunk to the statements that still make the difference."""
import re

import pytest

import random_programs as rp

BLOCKS = 8              # the CI block, in parametrized chunks so that a failure says where
PROGRAMS = 400          # per chunk
FIRST_SEED = 0


@pytest.fixture
def libs(torch):
    import autograd_lab
    return torch, autograd_lab


@pytest.mark.parametrize("block", range(BLOCKS))
def test_random_programs_agree(block, libs):
    features = rp.ci_features()
    start = FIRST_SEED + block * PROGRAMS
    for seed in range(start, start + PROGRAMS):
        program, diff = rp.generate_and_check(seed, features, libs)
        if diff:
            pytest.fail(rp.report(seed, program, libs), pytrace=False)


def test_exclusions_name_features():
    """Features are left out by name only, and every name is a feature."""
    assert set(rp.KEPT_DIFFERENT) <= set(rp.FEATURES) | set(rp.ASPECTS)
    assert set(rp.NOT_YET) <= set(rp.FEATURES) | set(rp.ASPECTS)


def test_a_difference_is_shrunk_and_printed(libs, monkeypatch):
    """The shrinker keeps only the statements the difference needs."""
    program = ["a1 = torch.tensor([1., 2.], requires_grad=True)", "t2 = a1 * 2",
               "t3 = a1.exp()", "t4 = t3.sum()"]
    original = rp.state

    def state(ns):                      # a stand-in bug: exp of autograd_lab is off by one
        out = original(ns)
        if ns["torch"] is libs[1] and "t3" in out:
            out["t3"]["data"] = out["t3"]["data"] + 1
        return out
    monkeypatch.setattr(rp, "state", state)
    small = rp.shrink(program, libs)
    assert small == program[:1] + program[2:3]
    assert "t3.data" in rp.report(0, program, libs)


STALE_VIEW_PROGRAM = [
    "a1 = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)",
    "t2 = a1 * 1",
    "with torch.no_grad(): t3 = t2.t()",       # a view made under no_grad, not contiguous
    "t2.mul_(2)",                               # its base changes: t3 is stale
    "t4 = t3.view(4)",                          # invalid in itself: the memory does not fit
]


def test_a_stale_view_in_an_invalid_operation_is_kept_different_by_name(libs, monkeypatch):
    assert rp.replay(STALE_VIEW_PROGRAM, libs) is None
    # the difference is real: without the name, the last statement differs
    monkeypatch.delitem(rp.KEPT_DIFFERENT, "stale_view_invalid_op")
    at, diffs = rp.replay(STALE_VIEW_PROGRAM, libs)
    assert at == 4 and "exception" in diffs[0] and "no_grad mode" in diffs[0]


def test_the_stale_view_exclusion_takes_only_the_operations_own_error(libs):
    torch = libs[0]
    ns = rp.namespace(torch)
    for stmt in STALE_VIEW_PROGRAM[:-1]:
        assert rp.step(ns, stmt)[0] is None
    theirs = rp.step(ns, STALE_VIEW_PROGRAM[-1])[0]
    assert rp.STALE_VIEW in theirs[1]
    ours = ("RuntimeError", "view size is not compatible with input tensor's size and stride "
                            "(at least one dimension spans across two contiguous subspaces). "
                            "Use .reshape(...) instead.")
    assert rp.stale_view_first(ns, STALE_VIEW_PROGRAM[-1], theirs, ours)
    # another error, or an operation PyTorch would run on the plain view, is a difference
    assert not rp.stale_view_first(ns, STALE_VIEW_PROGRAM[-1], theirs, ("RuntimeError", "other"))
    assert not rp.stale_view_first(ns, "t5 = t3.reshape(4)", theirs, ours)
    # PyTorch raised nothing: a difference
    assert not rp.stale_view_first(ns, STALE_VIEW_PROGRAM[-1], None, ours)
    # no stale view in the statement: a difference
    assert not rp.stale_view_first(ns, "t5 = t2.view(3)", theirs, ours)


def test_an_in_place_operand_aliasing_its_target_is_kept_different_by_name(libs):
    program = ["a1 = torch.tensor([[1., 2.], [3., 4.]])", "a1.add_(a1[..., 0])"]
    at, diffs = rp.replay(program, libs)          # the difference is real
    assert at == 1 and "a1.data" in diffs[0]
    torch = libs[0]
    import random
    ns = rp.namespace(torch)
    proposer = rp.Proposer(random.Random(0), ns, rp.ci_features())
    t = torch.tensor([[1., 2.], [3., 4.]])
    a = torch.arange(3.)
    assert proposer._reads_what_it_writes(t, "mul_", t[..., 0])
    assert proposer._reads_what_it_writes(t[1:], "add_", t[0])
    assert not proposer._reads_what_it_writes(t, "add_", t.t())          # refused by both
    assert not proposer._reads_what_it_writes(t, "mul_", t)              # element for element
    assert not proposer._reads_what_it_writes(t, "mul_", t.clone())      # other memory
    assert not proposer._reads_what_it_writes(a[:2], "add_", a[1:])      # refused by both
    # and the proposer never proposes such a change while the name is kept different
    for seed in range(300):
        rng = random.Random(seed)
        ns = rp.namespace(torch)
        ns.update(t1=torch.tensor([[1., 2.], [3., 4.]]))
        ns["t2"] = ns["t1"][..., 0]
        stmt = rp.Proposer(rng, ns, rp.ci_features())._inplace_on("t1", ns["t1"])
        assert stmt != "t1.mul_(t2)" and "(t2)" not in (stmt or ""), stmt


LAYOUT_PROGRAM = [
    "a1 = torch.tensor([[-2.0, 0.8], [0.6, 1.6]], requires_grad=True)",
    "with torch.no_grad(): t2 = a1.t()",
    "t3 = torch.where(t2 > 0, t2, a1)",         # transposed in PyTorch, row-major here
    "t4 = t3.reshape(4, 1)",
]


def test_a_reshape_of_memory_laid_out_otherwise_is_kept_different_by_name(libs, monkeypatch):
    import random
    torch, lab = libs
    at, diffs = rp.replay(LAYOUT_PROGRAM, libs)          # the difference is real
    assert at == 3 and "grad_fn" in diffs[0]
    tns, lns = rp.namespace(torch), rp.namespace(lab)
    for stmt in LAYOUT_PROGRAM[:-1]:
        rp.compare_step(tns, lns, stmt)
    proposer = rp.Proposer(random.Random(0), tns, rp.ci_features(), lns)
    assert proposer._layout_differs("t3") and not proposer._layout_differs("a1")
    # the proposer never reshapes or multiplies t3 while the name is kept different
    for seed in range(200):
        proposer.rng = random.Random(seed)
        for stmt in (proposer.view(), proposer.matmul()):
            assert not stmt or not re.search(r"t3\.(view|reshape|flatten)|t3 @|\(t3, ", stmt), stmt
    monkeypatch.delitem(rp.KEPT_DIFFERENT, "memory_layout")
    assert not proposer._layout_differs("t3")
