#!/usr/bin/env python3
"""autograd_lab against its floors and PyTorch (the oracle), measured in one run.

    python benchmarks/bench.py [--quick] [--only 2,4] [--json FILE] [--rounds N]

One row per workload: medians for torch, autograd_lab, a hand-written numpy version and the
least engine (least.py, where it has the operations); the median of the per-round ratios
autograd_lab / torch and autograd_lab / floor, each with its spread (min-max over the rounds);
the goal against the floor and PASS/FAIL. The floor is the least engine for the tiny ops, the
chain (time and memory) and the fan-in, and plain numpy for the import and the MLP step.
Exit status 0 even when a goal is missed (this is a report, not a test); 1 when an engine
crashes or its gradient disagrees with torch's. Workloads and method: benchmarks/README.md.
"""
import os
import sys

# Every workload runs on ONE thread. OpenBLAS (numpy) and OpenMP/MKL (torch) read these when
# they load, so they are set before numpy is imported; torch.set_num_threads(1) follows.
USER_ENV = dict(os.environ)          # the import-time subprocesses get the user's own settings
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS")
os.environ.update(dict.fromkeys(THREAD_VARS, "1"))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)             # benchmark this checkout's package, installed or not

import argparse
import compileall
import dataclasses
import datetime
import gc
import json
import math
import platform
import statistics
import subprocess
import time
import traceback

import numpy as np

pc = time.perf_counter
ENGINES = ("torch", "autograd_lab", "numpy", "least")
COOLDOWN = 0.15      # s of sleep before a sample: BLAS/OpenMP workers spin ~100 ms after a call
GRAD_RTOL = 1e-3     # float32: max |Δ| against torch, relative to the largest gradient entry


# ------------------------------------------------------------------------------------ workloads
# data() gives float32 numpy arrays (leaves, consts). fwd(leaves, consts) is the SAME code for
# torch and autograd_lab. np_fwd returns (loss, saved) and np_bwd(saved) the gradients: the
# numpy floor, same arithmetic with the backward written out by hand (no nodes, no graph walk).

def tiny_data():
    return [np.array([0.1, 0.5, -0.3, 0.9], np.float32)], []


def tiny_fwd(leaves, consts):
    x = y = leaves[0]
    for _ in range(500):
        y = y * 0.5
        y = y + x
        y = y.tanh()
        y = y ** 2
    return y.sum()


def tiny_np_fwd(leaves, consts):
    x = y = leaves[0]
    tanhs = []
    for _ in range(500):
        y = y * 0.5
        y = y + x
        y = np.tanh(y)
        tanhs.append(y)
        y = y ** 2
    return y.sum(), (x, tanhs)


def tiny_np_bwd(saved):
    x, tanhs = saved
    g, gx = np.ones_like(x), np.zeros_like(x)
    for t in reversed(tanhs):
        g = g * (2 * t)          # y**2
        g = g * (1 - t * t)      # tanh
        gx += g                  # y + x sends g to x as well
        g = g * 0.5              # y * 0.5
    return [gx + g]


B, D_IN, HIDDEN, CLASSES, LR = 128, 784, 256, 10, 0.01


def mlp_data():
    rng = np.random.default_rng(0)
    leaves = [rng.standard_normal((D_IN, HIDDEN)) / math.sqrt(D_IN),
              rng.uniform(-0.1, 0.1, HIDDEN),
              rng.standard_normal((HIDDEN, CLASSES)) / math.sqrt(HIDDEN),
              rng.uniform(-0.1, 0.1, CLASSES)]
    consts = [rng.standard_normal((B, D_IN)), np.eye(CLASSES)[rng.integers(0, CLASSES, B)]]
    return [a.astype(np.float32) for a in leaves], [a.astype(np.float32) for a in consts]


def mlp_fwd(leaves, consts):
    W1, b1, W2, b2 = leaves
    X, Y = consts
    z = (X @ W1 + b1).tanh() @ W2 + b2
    return ((z - Y) ** 2).mean()


def mlp_np_fwd(leaves, consts):
    W1, b1, W2, b2 = leaves
    X, Y = consts
    h = np.tanh(X @ W1 + b1)
    d = h @ W2 + b2 - Y
    return (d * d).mean(), (X, h, W2, d)


def mlp_np_bwd(saved):
    X, h, W2, d = saved
    dz = d * (2.0 / d.size)
    da = (dz @ W2.T) * (1 - h * h)
    return [X.T @ da, da.sum(0), h.T @ dz, dz.sum(0)]


CHAIN_N, CHAIN_C = 100_000, 1.0001


def scalar_leaf(value):
    return lambda: ([np.array(value, np.float32)], [])


def chain_fwd(leaves, consts):
    y = leaves[0]
    for _ in range(CHAIN_N):
        y = y * CHAIN_C
    return y


def chain_np_bwd(x):
    g = np.ones_like(x)
    for _ in range(CHAIN_N):
        g = g * CHAIN_C
    return [g]


FAN_CS = [((i % 97) + 1) / 97.0 for i in range(10_000)]


def fan_fwd(leaves, consts):
    terms = [leaves[0] * c for c in FAN_CS]
    while len(terms) > 1:                # pairwise tree: 14 levels, 9,999 additions
        paired = [terms[i] + terms[i + 1] for i in range(0, len(terms) - 1, 2)]
        if len(terms) % 2:
            paired.append(terms[-1])
        terms = paired
    return terms[0]


def fan_np_bwd(x):
    g, gx = np.ones_like(x), np.zeros_like(x)
    for c in FAN_CS:                     # the additions pass g through; x*c_i sends g*c_i to x
        gx = gx + g * c
    return [gx]


def with_leaf(fwd):
    """np_fwd for the workloads whose hand-written backward needs only the leaf."""
    return lambda leaves, consts: (fwd(leaves, consts), leaves[0])


@dataclasses.dataclass
class Workload:
    title: str
    about: str
    data: object
    fwd: object
    np_fwd: object
    np_bwd: object
    unit: str
    scale: float         # seconds per iteration -> unit
    floor: str           # the engine the goal is measured against: "least" or "numpy"
    goal: float          # autograd_lab / floor must be <= this
    lr: float = 0.0      # > 0: the step ends with an SGD update


# The goals (issue "The engine at its design's limit"): autograd_lab's time over its floor's in
# the same run. The least engine is the floor of an engine that keeps a Python object per node,
# so the gap above it is what behaving as PyTorch does costs; where it cannot run the workload
# (the MLP step) or has nothing to say (the import), plain numpy is the floor.
IMPORT_GOAL = ("numpy", 1.3)
CHAIN_MEMORY_GOAL = ("least", 1.2)
MIN_ROUNDS = 5           # a verdict from fewer rounds is marked as such (--quick)


WORKLOADS = {
    2: Workload("tiny ops", "2,000 ops, 500 x (y*0.5, y+x, y.tanh(), y**2) on a (4,) float32 "
                "leaf, then sum().backward()", tiny_data, tiny_fwd, tiny_np_fwd, tiny_np_bwd,
                "µs/op", 1e6 / 2000, "least", 1.25),
    3: Workload("MLP step", f"784-256-10 float32, batch {B}, tanh, MSE, backward, SGD under "
                "no_grad, grad=None", mlp_data, mlp_fwd, mlp_np_fwd, mlp_np_bwd,
                "ms", 1e3, "numpy", 1.15, LR),
    4: Workload("deep chain", f"y = y * {CHAIN_C} x {CHAIN_N:,} on a 0-dim leaf, y.backward()",
                scalar_leaf(1.0), chain_fwd, with_leaf(chain_fwd), chain_np_bwd, "ms", 1e3, "least",
                1.25),
    5: Workload("fan-in", f"{len(FAN_CS):,} terms x*c_i of one 0-dim leaf summed as a pairwise "
                "tree, backward", scalar_leaf(0.5), fan_fwd, with_leaf(fan_fwd), fan_np_bwd,
                "ms", 1e3, "least", 1.25),
}


# -------------------------------------------------------------------------- one step per engine
def autograd_case(lib, wl):
    """(step, grads) for torch or autograd_lab. step() times forward, backward, the update,
    clearing .grad and freeing the graph (`del loss`), which a training loop pays too."""
    leaves_np, consts_np = wl.data()
    leaves = [lib.tensor(a, requires_grad=True) for a in leaves_np]
    consts = [lib.tensor(a) for a in consts_np]

    def step():
        t0 = pc()
        loss = wl.fwd(leaves, consts)
        t1 = pc()
        loss.backward()
        t2 = pc()
        if wl.lr:
            with lib.no_grad():
                for p in leaves:
                    p.add_(p.grad * -wl.lr)
        for p in leaves:
            p.grad = None
        del loss
        return {"fwd": t1 - t0, "bwd": t2 - t1, "total": pc() - t0}

    def grads():                         # fresh leaves: the check ignores the steps already taken
        fresh = [lib.tensor(a, requires_grad=True) for a in wl.data()[0]]
        wl.fwd(fresh, consts).backward()
        return [p.grad.detach().numpy().astype(np.float64) for p in fresh]
    return step, grads


def numpy_case(wl):
    leaves, consts = wl.data()

    def step():
        t0 = pc()
        loss, saved = wl.np_fwd(leaves, consts)
        t1 = pc()
        grads = wl.np_bwd(saved)
        t2 = pc()
        if wl.lr:
            for p, g in zip(leaves, grads):
                p += g * -wl.lr
        del loss, saved, grads
        return {"fwd": t1 - t0, "bwd": t2 - t1, "total": pc() - t0}

    def grads():
        fresh, consts_ = wl.data()
        return [np.asarray(g, np.float64) for g in wl.np_bwd(wl.np_fwd(fresh, consts_)[1])]
    return step, grads


def make_case(engine, lib, wl):
    return numpy_case(wl) if engine == "numpy" else autograd_case(lib, wl)


def load(engine):
    if engine == "torch":
        import torch
        torch.set_num_threads(1)
        return torch
    if engine == "autograd_lab":
        import autograd_lab
        return autograd_lab
    if engine == "least":
        import least                             # (this script's folder is on sys.path)
        return least
    return np


# ---------------------------------------------------------------------------------- measurement
GC_SECONDS = [0.0, 0.0]   # seconds spent in the cyclic GC so far; start of the running collection


def gc_timer(phase, info):
    """gc.callbacks hook. A step's time in the cyclic GC is the engine's own cost (the engine's
    allocations trigger the collections), but it is worth seeing on its own line."""
    if phase == "start":
        GC_SECONDS[1] = pc()
    else:
        GC_SECONDS[0] += pc() - GC_SECONDS[1]


def paired_ratio(mine, ref):
    """Median, spread (min-max) and IQR of the per-round ratios: both engines ran in the same
    round, so a slow spell of the shared machine shows up on both sides of a ratio instead of
    in one median."""
    rs = [a / b for a, b in zip(mine, ref)]
    q1, _, q3 = statistics.quantiles(rs, n=4, method="inclusive") if len(rs) > 1 else rs * 3
    return {"median": statistics.median(rs), "min": min(rs), "max": max(rs), "q1": q1,
            "q3": q3, "rounds": len(rs)}


def verdict(ratio, goal):
    """PASS or FAIL of a median ratio against its goal; "(n<5)" after it when it rests on
    fewer than MIN_ROUNDS rounds, and "?" when the spread straddles the goal (noise: run
    again)."""
    if ratio is None:
        return "n/a"
    result = "PASS" if ratio["median"] <= goal else "FAIL"
    if ratio["min"] <= goal < ratio["max"]:
        result += "?"
    if ratio["rounds"] < MIN_ROUNDS:
        result += f"(n<{MIN_ROUNDS})"
    return result


def interleaved(steps, rounds, target, errors):
    """Per-round samples {engine: [{phase: s per iteration}]}. The engines take turns, in an order
    that rotates each round; a sample is k iterations, k calibrated so it lasts >= target s."""
    k, per_iter = {}, {}
    for e, step in list(steps.items()):
        try:
            step()                                        # warm-up
            n, spent = 0, 0.0
            while n == 0 or spent < target / 4:           # one 1 ms iteration is a noisy guide
                spent += step()["total"]
                n += 1
            per_iter[e] = spent / n
            k[e] = max(1, math.ceil(target / per_iter[e]))
        except Exception as ex:
            errors[e] = short(ex)
            del steps[e]
    names = list(steps)
    samples = {e: [] for e in names}
    for r in range(rounds):
        for e in names[r % len(names):] + names[:r % len(names)]:
            if e in errors:
                continue
            gc.collect()
            time.sleep(COOLDOWN)
            try:
                if per_iter[e] < 0.1:
                    steps[e]()                            # untimed: caches back to this engine
                acc, gc0 = {}, GC_SECONDS[0]
                for _ in range(k[e]):
                    for phase, s in steps[e]().items():
                        acc[phase] = acc.get(phase, 0.0) + s
                acc["gc"] = GC_SECONDS[0] - gc0
            except Exception as ex:
                errors[e] = short(ex)
                continue
            samples[e].append({phase: s / k[e] for phase, s in acc.items()})
    return {e: v for e, v in samples.items() if e not in errors}, k


def grad_check(got, ref):
    if [np.shape(a) for a in got] != [np.shape(b) for b in ref]:
        return {"max_abs": None, "ok": False}
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(got, ref))
    scale = max(float(np.max(np.abs(b))) for b in ref) or 1.0
    return {"max_abs": diff, "ok": diff <= GRAD_RTOL * scale}


def run_timed(w, libs, args):
    wl = WORKLOADS[w]
    steps, checks, errors, ref = {}, {}, {}, None
    for e in ENGINES:                             # torch first: its gradient is the reference
        if e == "least" and w not in libs[e].WORKLOADS:
            continue
        try:
            step, grads = make_case(e, libs[e], wl)
            g = grads()
        except Exception as ex:
            errors[e] = short(ex)
            continue
        steps[e] = step
        if e == "torch":
            ref = g
        elif ref is not None:
            checks[e] = grad_check(g, ref)
    samples, k = interleaved(steps, args.rounds, args.target, errors)
    phases = [(label + wl.unit, {e: fmt(statistics.median(s[ph] for s in v) * wl.scale)
                                 for e, v in samples.items()})
              for ph, label in (("fwd", "fwd "), ("bwd", "bwd "), ("total", "total "),
                                ("gc", "in cyclic GC "))]
    totals = {e: [s["total"] * wl.scale for s in v] for e, v in samples.items()}
    return report(f"{w} {wl.title}", wl.about, wl.unit, totals, wl.floor, wl.goal, errors,
                  checks, phases, [("iterations per sample", k)])


def import_times(args):
    """Net import time of each module: a fresh `python -c "import X"` minus a bare `python -c
    pass` of the same round. The package is byte-compiled first, as an installed one would be."""
    compileall.compile_dir(os.path.join(ROOT, "autograd_lab"), quiet=1)
    stmts = {"bare": "pass", "numpy": "import numpy", "autograd_lab": "import autograd_lab",
             "torch": "import torch"}

    def run(stmt):
        t0 = pc()
        subprocess.run([sys.executable, "-c", stmt], cwd=ROOT, env=USER_ENV, check=True,
                       capture_output=True)
        return pc() - t0
    errors = {}
    for name, stmt in stmts.items():              # fills the page cache; finds failures
        try:
            run(stmt)
        except subprocess.CalledProcessError as ex:
            errors[name] = ex.stderr.decode().strip().splitlines()[-1]
    names = [n for n in stmts if n not in errors]
    net = {n: [] for n in names if n != "bare"}
    for r in range(args.import_rounds):
        t = {n: run(stmts[n]) for n in names[r % len(names):] + names[:r % len(names)]}
        for n in net:
            net[n].append((t[n] - t["bare"]) * 1e3)
    return report("1 import (net)", f'fresh `python -c "import X"` minus bare `python -c pass`, '
                  f"{args.import_rounds} rounds, package byte-compiled first", "ms", net,
                  *IMPORT_GOAL, errors)


def status_kb(field):
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith(field + ":"))


def memory_child(engine):
    """In a fresh process that imports only `engine`: RSS growth of one deep-chain step."""
    step, _ = make_case(engine, load(engine), WORKLOADS[4])
    gc.collect()
    base = status_kb("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")                              # resets the peak (VmHWM) to the current RSS
    step()
    print(json.dumps({"base_mb": base / 1024, "growth_mb": (status_kb("VmHWM") - base) / 1024}))


def memory(args):
    errors, growth = {}, {e: [] for e in ENGINES}
    for r in range(args.mem_rounds):
        for e in ENGINES[r % len(ENGINES):] + ENGINES[:r % len(ENGINES)]:
            p = subprocess.run([sys.executable, __file__, "--memory-child", e],
                               capture_output=True, text=True)
            if p.returncode:
                errors[e] = (p.stderr.strip().splitlines() or ["?"])[-1]
            else:
                growth[e].append(json.loads(p.stdout.splitlines()[-1])["growth_mb"])
    return report("4 deep chain memory", "peak RSS minus RSS after setup (VmHWM) for one step, "
                  f"fresh process per engine, {args.mem_rounds} round(s)", "MB",
                  {e: v for e, v in growth.items() if e not in errors}, *CHAIN_MEMORY_GOAL,
                  errors)


# ------------------------------------------------------------------------------------ reporting
def report(name, about, unit, samples, floor, goal, errors, checks=None, lines=(), notes=()):
    """Print a workload's block and return its row of the summary table. samples holds one value
    per round for each engine that ran; the ratios pair the values of the same round. The
    verdict is autograd_lab's ratio to ``floor`` against ``goal``; its ratio to torch is shown
    beside it."""
    medians = {e: statistics.median(v) for e, v in samples.items()}
    ratios = {ref: {e: paired_ratio(v, samples[ref]) for e, v in samples.items()
                    if e != ref and ref in samples}
              for ref in dict.fromkeys(("torch", floor))}
    block = list(lines) or [(f"{unit} (median)", {e: fmt(m) for e, m in medians.items()})]
    for ref, rs in ratios.items():
        if rs:
            block.append((f"÷ {ref}, per round (min-max)",
                          {e: fmt_ratio(r) for e, r in rs.items()}))
    if checks is not None:
        block.append(("grad max|Δ| vs torch",
                      {"torch": "ref", **{e: fmt_check(c) for e, c in checks.items()}}))
    block += [(label, {e: str(v) for e, v in cells.items() if e in samples})
              for label, cells in notes]
    print(f"\n[{name}] {about}")
    print_block(block)
    for e, msg in errors.items():
        print(f"  ERROR {e}: {msg}")
    ratio = ratios[floor].get("autograd_lab")
    grads_ok = all(c["ok"] for c in (checks or {}).values())
    # (an engine without the workload is no error: the least engine has no MLP)
    result = ("ERROR" if errors else "GRAD FAIL" if not grads_ok else verdict(ratio, goal))
    return {"workload": name, "unit": unit, "medians": medians, "ratio": ratio,
            "torch_ratio": ratios["torch"].get("autograd_lab"), "ref": floor, "goal": goal,
            "result": result, "grad_checks": checks or {}, "errors": errors,
            "samples": samples}


def short(ex):
    """The exception and where it was raised, so that an engine bug can be found."""
    s = f"{type(ex).__name__}: {ex}".replace("\n", " ")
    s = s if len(s) < 120 else s[:117] + "..."
    tb = traceback.extract_tb(ex.__traceback__)
    return f"{s} (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else s


def fmt(v):
    return "" if v is None else f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def fmt_ratio(r):
    """A median ratio and its spread over the rounds (min-max)."""
    if r["median"] < 0.01:
        return "< 0.01"
    if r["median"] >= 10:
        return f"{r['median']:.0f}"
    return f"{r['median']:.3f} ({r['min']:.2f}-{r['max']:.2f})"


def fmt_check(c):
    if c["max_abs"] is None:
        return "shape FAIL"
    return f"{c['max_abs']:.1e} {'ok' if c['ok'] else 'FAIL'}"


def print_block(lines):
    print(" " * 26 + "".join(e.rjust(22) for e in ENGINES))
    for label, cells in lines:
        print("  " + label.ljust(24) + "".join(cells.get(e, "").rjust(22) for e in ENGINES))


def table_lines(rows):
    """The summary table: per workload the medians, autograd_lab / torch and autograd_lab /
    floor (median of the per-round ratios, min-max), the goal against the floor, the verdict."""
    # the first two columns are left-aligned
    widths = [22, 6, *(13 if e == "autograd_lab" else 9 for e in ENGINES), 22, 22, 18, 12]

    def line(cells):
        return "".join(c.ljust(w) if i < 2 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    out = [line(["workload", "unit", *ENGINES, "al/torch (min-max)", "al/floor (min-max)",
                 "goal", "result"])]
    for r in rows:
        out.append(line([r["workload"], r["unit"], *(fmt(r["medians"].get(e)) for e in ENGINES),
                         fmt_ratio(r["torch_ratio"]) if r["torch_ratio"] else "",
                         fmt_ratio(r["ratio"]) if r["ratio"] else "",
                         f"<= {r['goal']} x {r['ref']}", r["result"]]))
    return out


def print_table(rows):
    print("\n" + "\n".join(table_lines(rows)))
    missed = [r["workload"] for r in rows if not r["result"].startswith("PASS")]
    print(f"goals met: {len(rows) - len(missed)} of {len(rows)}"
          + (f"; missed: {', '.join(missed)}" if missed else ""))


_BALLAST = []


def isolate_gc(tracked_without_torch):
    """Importing torch leaves ~150k GC-tracked objects; every full collection walks them all and
    bills the engine that triggered it. gc.freeze() takes everything imported so far out of the
    collector's sight, and a ballast of as many empty lists as a torch-free process tracks gives
    the collector that process's heap size, hence its full-collection schedule and cost."""
    gc.collect()
    tracked = len(gc.get_objects())
    gc.freeze()
    _BALLAST.extend([] for _ in range(tracked_without_torch))
    return (f"gc.freeze() of the {tracked:,} objects tracked after all imports, then a ballast "
            f"of {tracked_without_torch:,} (the count before torch was imported)")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run of well under a minute")
    ap.add_argument("--only", default="1,2,3,4,5", help="workloads to run, e.g. 2,4")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 7, --quick 3)")
    ap.add_argument("--json", help="also write the results, raw samples included, to this file")
    ap.add_argument("--least", action="store_true",
                    help="(the least engine, least.py, now always runs: it is the floor of the "
                    "goals; the option is kept for old command lines)")
    ap.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        return memory_child(args.memory_child)
    args.rounds = args.rounds or (3 if args.quick else 7)
    args.target = 0.05 if args.quick else 0.2
    args.import_rounds = 5 if args.quick else 11
    args.mem_rounds = 1 if args.quick else MIN_ROUNDS
    only = sorted({int(w) for w in args.only.split(",") if w.strip()})
    if not set(only) <= {1, 2, 3, 4, 5}:
        ap.error("--only takes workload numbers 1 to 5, e.g. --only 2,4")

    libs = {e: load(e) for e in ENGINES if e not in ("torch", "autograd_lab")}
    try:
        libs["autograd_lab"] = load("autograd_lab")
    except Exception as ex:
        sys.exit(f"autograd_lab does not import: {short(ex)}")
    gc.collect()
    tracked_without_torch = len(gc.get_objects())
    torch = libs["torch"] = load("torch")
    gc_note = isolate_gc(tracked_without_torch)
    gc.callbacks.append(gc_timer)

    load_avg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"autograd_lab benchmark {datetime.datetime.now():%Y-%m-%d %H:%M}"
          f"{' (--quick)' if args.quick else ''}; python {platform.python_version()}, "
          f"torch {torch.__version__}, numpy {np.__version__}; {os.cpu_count()} cpus, "
          f"load {load_avg}")
    print(f"one thread: {', '.join(THREAD_VARS)}=1 before numpy and torch load, "
          f"torch.set_num_threads({torch.get_num_threads()}); checked at the end")
    print(f"gc isolation from torch's heap: {gc_note}")
    print(f"method: {args.rounds} interleaved rounds (order rotates), sample >= {args.target}s, "
          f"gc.collect() + {COOLDOWN}s sleep before each; cells are medians, ratios the median "
          f"of per-round ratios with their spread (min-max)")

    rows, t0 = [], pc()
    for w in only:
        if w == 1:
            rows.append(import_times(args))
        else:
            rows.append(run_timed(w, libs, args))
            if w == 4:
                rows.append(memory(args))
    print_table(rows)
    threads = len(os.listdir("/proc/self/task"))
    load_avg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\n{pc() - t0:.0f}s; load at end {load_avg}; threads in this process: {threads}"
          + ("  WARNING: a library ignored the one-thread setting" if threads > 1 else ""))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"date": datetime.datetime.now().isoformat(timespec="seconds"),
                       "argv": sys.argv[1:], "torch": torch.__version__, "numpy": np.__version__,
                       "rounds": args.rounds, "sample_s": args.target, "gc_isolation": gc_note,
                       "rows": rows}, f, indent=1)
    return 1 if any(r["result"] in ("ERROR", "GRAD FAIL") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
