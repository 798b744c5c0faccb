"""The benchmark scripts still run against this engine. These are not tests of speed (timed
tests are flaky here): a script that has rotted is found here rather than by whoever needs it
next. Each runs in its shortest mode."""
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
    out = run(BENCH / "bench.py", "--quick", "--rounds", "2", "--only", "2,5", "--least")
    assert out.returncode == 0, out.stderr + out.stdout
    lines = out.stdout.splitlines()
    rows = [line for line in lines if line.startswith(("2 tiny ops ", "5 fan-in "))]
    assert len(rows) == 2, out.stdout
    assert all(row.split()[-1] in ("PASS", "FAIL") for row in rows), rows   # not ERROR
    assert "GRAD FAIL" not in out.stdout
    checks = [line.split() for line in lines if line.lstrip().startswith("grad max|Δ| vs torch")]
    # one line per workload: torch is the reference, autograd_lab, numpy and the least engine
    # agree with it
    assert [(c[-7], c[-5], c[-3], c[-1]) for c in checks] == [("ref", "ok", "ok", "ok")] * 2, \
        checks
    # the summary gives the least engine's ratio beside autograd_lab's
    assert all(len(row.split(" x torch")[0].split(")")) == 3 for row in rows), rows


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
