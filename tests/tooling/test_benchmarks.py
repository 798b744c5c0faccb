"""The benchmark scripts still run against this engine. These are not tests of speed (timed
tests are flaky here): a script that has rotted is found here rather than by whoever needs it
next. Each runs in its shortest mode."""
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"


def run(*args):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_bench_quick_runs_every_engine_and_agrees_with_torch(torch):
    out = run(BENCH / "bench.py", "--quick", "--rounds", "2", "--only", "2,5")
    assert out.returncode == 0, out.stderr + out.stdout
    lines = out.stdout.splitlines()
    rows = [line for line in lines if line.startswith(("2 tiny ops ", "5 fan-in "))]
    assert len(rows) == 2, out.stdout
    # a verdict against the least engine, marked as resting on too few rounds; not ERROR
    assert all(row.split()[-1].rstrip("?(n<5)") in ("PASS", "FAIL") for row in rows), rows
    assert all(row.split()[-1].endswith("(n<5)") for row in rows), rows
    assert all("<= 1.25 x least" in row for row in rows), rows
    assert "GRAD FAIL" not in out.stdout
    checks = [line.split() for line in lines if line.lstrip().startswith("grad max|Δ| vs torch")]
    # one line per workload: torch is the reference, autograd_lab, numpy and the least engine
    # agree with it
    assert [(c[-7], c[-5], c[-3], c[-1]) for c in checks] == [("ref", "ok", "ok", "ok")] * 2, \
        checks
    # the summary gives the ratio to torch and to the floor, each with its spread
    assert all(len(row.split(" x least")[0].split(")")) == 3 for row in rows), rows
    assert any(line.startswith("goals met: ") for line in lines), out.stdout


def row(bench, median, lo, hi, rounds=7, floor="least", goal=1.25):
    ratio = {"median": median, "min": lo, "max": hi, "q1": lo, "q3": hi, "rounds": rounds}
    return {"workload": "2 tiny ops", "unit": "µs/op",
            "medians": {"torch": 5.0, "autograd_lab": 2.4, "numpy": 0.9, "least": 2.0},
            "ratio": ratio, "torch_ratio": {**ratio, "median": 0.48}, "ref": floor, "goal": goal,
            "result": bench.verdict(ratio, goal)}


@pytest.fixture(scope="module")
def bench():
    """bench.py as a module (it sets the one-thread variables on import: put back after)."""
    env = dict(os.environ)
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("bench")
    finally:
        sys.path.remove(str(BENCH))
        os.environ.clear()
        os.environ.update(env)


@pytest.mark.parametrize("ratio, verdict", [
    ((1.20, 1.15, 1.24), "PASS"),
    ((1.30, 1.26, 1.40), "FAIL"),
    ((1.25, 1.20, 1.30), "PASS?"),          # the spread straddles the goal: noise, run again
    ((1.27, 1.20, 1.30), "FAIL?"),
])
def test_a_verdict_is_the_median_ratio_against_the_goal(bench, ratio, verdict):
    median, lo, hi = ratio
    assert bench.verdict({"median": median, "min": lo, "max": hi, "rounds": 7}, 1.25) == verdict
    assert bench.verdict({"median": median, "min": lo, "max": hi, "rounds": 3}, 1.25) \
        == verdict + "(n<5)"


def test_the_goals_are_the_issues(bench):
    goals = {w: (wl.floor, wl.goal) for w, wl in bench.WORKLOADS.items()}
    assert goals == {2: ("least", 1.25), 3: ("numpy", 1.15), 4: ("least", 1.25),
                     5: ("least", 1.25)}
    assert bench.IMPORT_GOAL == ("numpy", 1.3) and bench.CHAIN_MEMORY_GOAL == ("least", 1.2)
    assert bench.MIN_ROUNDS >= 5 and "least" in bench.ENGINES


def test_the_table_shows_both_ratios_the_goal_and_the_verdict(bench):
    header, line = bench.table_lines([row(bench, 1.20, 1.15, 1.24)])
    assert header.split()[-4:] == ["al/floor", "(min-max)", "goal", "result"]
    assert line.startswith("2 tiny ops") and line.split()[-5:] == ["<=", "1.25", "x", "least", "PASS"]
    assert "0.480 (1.15-1.24)" in line and "1.200 (1.15-1.24)" in line


def worktrees():
    return subprocess.run(["git", "-C", ROOT, "worktree", "list"], capture_output=True,
                          text=True).stdout


def head():
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


@pytest.mark.parametrize("old", ["a directory", "a git revision"])
def test_ab_measures_each_tree_it_is_given(old):
    if old == "a git revision" and not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    before = worktrees()
    out = run(BENCH / "ab.py", ROOT if old == "a directory" else "HEAD", ROOT, "--quick",
              "--rounds", "2")
    assert out.returncode == 0, out.stderr + out.stdout
    lines = out.stdout.splitlines()
    assert "2 tiny ops, µs/op; median of 2 processes, 3 samples each" in lines, out.stdout
    where = [line.split(" from ", 1)[1] for line in lines
             if line.startswith("      autograd_lab from ")]
    if old == "a directory":
        assert where == [str(ROOT), str(ROOT)], out.stdout
    else:                                   # HEAD checked out on its own, beside this tree
        assert Path(where[0]).name == head() and where[1] == str(ROOT), out.stdout
    medians = [float(line.split()[2]) for line in lines
               if line.startswith(("  old ", "  new ")) and " - " not in line]
    assert len(medians) == 2 and all(m > 0 for m in medians), out.stdout
    assert any(line.startswith("  new - old, per round: median ") for line in lines)
    assert worktrees() == before            # a revision's temporary worktree is gone again


def test_ab_names_a_tree_it_cannot_find():
    out = run(BENCH / "ab.py", "no-such-revision", ROOT, "--quick", "--rounds", "1")
    assert out.returncode == 1
    assert "no-such-revision: neither a directory holding autograd_lab/ nor a git revision" \
        in out.stderr
