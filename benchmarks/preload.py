"""What the grader's preload saves each submission: the CPU a grading process would spend, after
its fork, on what steps/preload.py does once in the forkserver of a grading run (grade.py).

    .venv/bin/python benchmarks/preload.py [--rounds 7]

A fresh interpreter stands for a grading process forked without the preload: it imports the
worker (nbgrader, nbconvert, jupyter_client, the gradebook's ORM) and does preload.warm()'s work
(nbformat's validators, nbgrader's metadata schema, the ORM's mappers). CPU time, not wall time:
the machine may be busy. Medians, and the spread over the rounds.
"""
import argparse
import statistics
import subprocess
import sys

PROCESS = """if True:
    import time
    t0 = time.process_time()
    import autograd_lab_grader.steps.worker
    t1 = time.process_time()
    from autograd_lab_grader.steps import preload
    preload.warm()
    t2 = time.process_time()
    print(t1 - t0, t2 - t1)
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    imports, warms = [], []
    for _ in range(rounds):
        done = subprocess.run([sys.executable, "-c", PROCESS], capture_output=True, text=True,
                              check=True)
        first, second = map(float, done.stdout.split())
        imports.append(first * 1000)
        warms.append(second * 1000)
    totals = [a + b for a, b in zip(imports, warms)]
    print(f"CPU a grading process is spared by the preload, {rounds} rounds (ms: median, spread)")
    for name, values in (("importing the worker", imports), ("preload.warm()", warms),
                         ("in all", totals)):
        print(f"  {name:22} {statistics.median(values):6.0f}   {min(values):.0f}-{max(values):.0f}")


if __name__ == "__main__":
    main()
