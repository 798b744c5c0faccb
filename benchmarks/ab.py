#!/usr/bin/env python3
"""Is a change to the engine faster? autograd_lab from two trees, on one workload of bench.py.

    python benchmarks/ab.py OLD NEW [--only 2] [--rounds 5] [--quick]

OLD and NEW are checkouts (directories holding ``autograd_lab/``) or git revisions of this
repository (checked out into a temporary worktree), e.g. ``ab.py HEAD .``. Each round runs
both, each in a fresh process with bench.py's set-up (one thread, the same GC isolation), so
both see the same heap and the same machine weather; which one goes first alternates. No
PyTorch here: a change of 1-2% is invisible in a ratio against an engine whose own time moves
by 10% between runs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SAMPLES, SAMPLE_S = 9, 0.2          # per process: samples of >= 0.2 s, as bench.py takes
QUICK = 3, 0.02                     # --quick: a smoke run


def child(root, w, rounds, sample_s):
    """Time workload ``w`` with the autograd_lab in ``root``, as bench.py times an engine."""
    sys.path.insert(0, HERE)
    import bench                     # sets the thread variables before numpy loads
    sys.path.insert(0, root)         # ahead of the repository root bench.py put first
    import gc

    lib = bench.load("autograd_lab")
    where = os.path.dirname(os.path.dirname(os.path.abspath(lib.__file__)))
    if where != os.path.abspath(root):
        sys.exit(f"imported autograd_lab from {where}, not from {root}")
    gc.collect()
    bench.isolate_gc(len(gc.get_objects()))
    gc.callbacks.append(bench.gc_timer)
    wl = bench.WORKLOADS[w]
    errors = {}
    samples, _ = bench.interleaved({"al": bench.autograd_case(lib, wl)[0]}, rounds, sample_s,
                                   errors)
    if errors:
        sys.exit(errors["al"])
    print(json.dumps({"where": where, "unit": wl.unit, "title": wl.title,
                      **{ph: statistics.median(s[ph] * wl.scale for s in samples["al"])
                         for ph in ("total", "gc")}}))


def tree(spec, tmp):
    """A directory holding autograd_lab/: ``spec`` itself, or a worktree of git revision spec."""
    if os.path.isdir(os.path.join(spec, "autograd_lab")):
        return os.path.abspath(spec)
    rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", "-q", spec + "^{commit}"],
                         capture_output=True, text=True).stdout.strip()
    if not rev:
        sys.exit(f"{spec}: neither a directory holding autograd_lab/ nor a git revision")
    path = os.path.join(tmp, rev)
    if not os.path.isdir(path):                 # ab.py HEAD main: one worktree serves both
        subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", "-q", path, rev],
                       check=True)
    return path


def measure(root, w, samples, sample_s):
    out = subprocess.run([sys.executable, __file__, "--child", root, str(w), str(samples),
                          str(sample_s)],
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{root}: the benchmark failed\n{out.stderr}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--only", type=int, default=2, choices=(2, 3, 4, 5),
                    help="the workload (numbers as in bench.py; default 2, the tiny ops)")
    ap.add_argument("--rounds", type=int, default=5, help="fresh processes per tree")
    ap.add_argument("--quick", action="store_true", help="smoke run: short samples")
    args = ap.parse_args()
    samples, sample_s = QUICK if args.quick else (SAMPLES, SAMPLE_S)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            roots = [tree(args.old, tmp), tree(args.new, tmp)]
            runs = [[], []]
            for r in range(args.rounds):
                for i in (0, 1) if r % 2 == 0 else (1, 0):  # who goes first alternates
                    runs[i].append(measure(roots[i], args.only, samples, sample_s))
                print(f"round {r + 1}/{args.rounds}: "
                      + "  ".join(f"{runs[i][-1]['total']:.4g}" for i in (0, 1)), flush=True)
        finally:
            for path in os.listdir(tmp):
                subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force",
                                os.path.join(tmp, path)])
    unit, title = runs[0][0]["unit"], runs[0][0]["title"]
    print(f"\n{args.only} {title}, {unit}; median of {args.rounds} processes, "
          f"{samples} samples each")
    for label, name, rs in zip(("old", "new"), (args.old, args.new), runs):
        print(f"  {label} {name:20s} {statistics.median(r['total'] for r in rs):8.4g}"
              f"   (range {min(r['total'] for r in rs):.4g}-{max(r['total'] for r in rs):.4g};"
              f" in cyclic GC {statistics.median(r['gc'] for r in rs):.3g})")
        print(f"      autograd_lab from {rs[0]['where']}")
    diffs = [b["total"] - a["total"] for a, b in zip(*runs)]
    print(f"  new - old, per round: median {statistics.median(diffs):+.3g} {unit}"
          f" (range {min(diffs):+.3g} to {max(diffs):+.3g})")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        main()
