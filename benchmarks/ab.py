#!/usr/bin/env python3
"""Is a change to the engine faster? autograd_lab from two trees, on one workload of bench.py.

    python benchmarks/ab.py OLD NEW [--only 2] [--rounds 5] [--quick]

OLD and NEW are checkouts (directories holding ``autograd_lab/``) or git revisions of this
repository (checked out into a temporary worktree), e.g. ``ab.py HEAD .``. Each round runs
OLD then NEW, each in a fresh process with bench.py's set-up (one thread, the same GC
isolation), so both see the same heap and the same machine weather. No PyTorch here: a change
of 1-2% is invisible in a ratio against an engine whose own time moves by 10% between runs.
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
SAMPLES, SAMPLE_S = 9, 0.2          # per child; each sample after gc.collect()
QUICK = 3, 0.02                     # --quick: a smoke run


def child(root, w, samples, sample_s):
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
    step, _ = bench.autograd_case(lib, wl)
    step()
    k, spent = 0, 0.0
    while spent < sample_s / 4:
        spent += step()["total"]
        k += 1
    k = max(1, round(k * sample_s / spent))
    totals, gcs = [], []
    for _ in range(samples):
        gc.collect()
        gc0, t = bench.GC_SECONDS[0], 0.0
        for _ in range(k):
            t += step()["total"]
        totals.append(t / k * wl.scale)
        gcs.append((bench.GC_SECONDS[0] - gc0) / k * wl.scale)
    print(json.dumps({"total": statistics.median(totals), "gc": statistics.median(gcs),
                      "unit": wl.unit, "title": wl.title}))


def tree(spec, tmp):
    """A directory holding autograd_lab/: ``spec`` itself, or a worktree of git revision spec."""
    if os.path.isdir(os.path.join(spec, "autograd_lab")):
        return os.path.abspath(spec)
    path = os.path.join(tmp, spec.replace("/", "_"))
    subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", "-q", path, spec],
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
        roots = [tree(args.old, tmp), tree(args.new, tmp)]
        try:
            runs = [[], []]
            for r in range(args.rounds):
                for i, root in enumerate(roots):
                    runs[i].append(measure(root, args.only, samples, sample_s))
                print(f"round {r + 1}/{args.rounds}: "
                      + "  ".join(f"{runs[i][-1]['total']:.4g}" for i in (0, 1)), flush=True)
        finally:
            for root in roots:
                if root.startswith(tmp):
                    subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", root])
    unit, title = runs[0][0]["unit"], runs[0][0]["title"]
    print(f"\n{args.only} {title}, {unit}; median of {args.rounds} processes, "
          f"{samples} samples each")
    for name, rs in zip((args.old, args.new), runs):
        print(f"  {name:24s} {statistics.median(r['total'] for r in rs):8.4g}"
              f"   (range {min(r['total'] for r in rs):.4g}-{max(r['total'] for r in rs):.4g};"
              f" in cyclic GC {statistics.median(r['gc'] for r in rs):.3g})")
    diffs = [b["total"] - a["total"] for a, b in zip(*runs)]
    print(f"  new - old, per round: median {statistics.median(diffs):+.3g} {unit}"
          f" (range {min(diffs):+.3g} to {max(diffs):+.3g})")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        main()
