#!/usr/bin/env python3
"""Grading a class: serial `nbgrader autograde` against `autograd-lab grade` as it runs by
default (sandboxed, kernels forked warm), with every kernel started cold, and without the
sandbox, in one run.

    python benchmarks/grading.py [--count 60] [--lessons 01_x,02_y] [--jobs N] [--before REV]

For every lesson, a scratch copy of the course gets `count` submissions (the solution and the
blank release, alternately) and each grades all of them (--force): nbgrader first, then the
three autograd-lab runs, in turns (which goes first rotates by lesson). Each time is wall-clock
from the command's start to its end, imports included. Columns: seconds per notebook for each;
the default run's seconds per notebook per core (wall x cores / notebooks: the machine's core
time a notebook takes; the target is at most 1.5); its speed-up over nbgrader; and what the
sandbox costs a notebook per core, cold kernels against unsandboxed ones, which start alike
((cold - unsandboxed) x cores / notebooks: the target is at most 0.3). With ``--before REV``,
autograd-lab as it was at the git revision REV (checked out into a temporary worktree) grades
the same submissions in a course of its own, in the same turns, and the last column is what
the changes since cost a notebook per core ((now - before) x cores / notebooks): against the
revision before test cells were judged outside the kernel, the cost of doing so (the target is
at most 0.2).
A report, not a test: exit status 0 whatever the times.
"""
import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograd_lab_grader.course import CONFIG_FILE, Course  # noqa: E402


def timed(args, cwd, env) -> float:
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    # autograd-lab exits 1 when a submission failed: a blank release never fails
    if proc.returncode:
        sys.exit(f"{' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=60, help="submissions per lesson")
    parser.add_argument("--lessons", help="comma-separated lesson ids (default: all)")
    parser.add_argument("--jobs", type=int, default=0,
                        help="autograd-lab --jobs (default: its own default)")
    parser.add_argument("--before", metavar="REV",
                        help="also grade with autograd-lab as it was at this git revision")
    args = parser.parse_args()
    with _worktree(args.before) as before:
        _bench(args, before)


@contextlib.contextmanager
def _worktree(rev):
    """The package as it was at ``rev``, in a temporary git worktree (removed afterwards)."""
    if not rev:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="autograd-lab-before-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), rev],
                   check=True, capture_output=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)],
                       capture_output=True)
        shutil.rmtree(folder.parent, ignore_errors=True)


def _bench(args, before):
    course = Course(ROOT)
    lessons = args.lessons.split(",") if args.lessons else course.lessons()
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PYTHONPATH=str(ROOT),
               PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    print(f"{args.count} submissions per lesson, {os.cpu_count()} cores, autograd-lab "
          f"--jobs {args.jobs or 'default'}; seconds per notebook (wall clock, imports included)")
    head = (f"{'lesson':28} {'nbgrader':>9} {'autograd-lab':>13} {'cold':>6} {'no sandbox':>11} "
            f"{'per core':>9} {'speed-up':>9} {'sandbox cost':>13}")
    print(head + (f" {'before':>7} {'cost since':>11}" if before else ""))
    totals = [0.0, 0.0, 0.0, 0.0, 0.0, 0]
    with tempfile.TemporaryDirectory(prefix="autograd-lab-bench-") as tmp:
        scratch, old = Path(tmp) / "now", Path(tmp) / "before"
        copies = [_scratch_course(course, scratch)]
        if before:
            copies.append(_scratch_course(course, old))
        for index, lesson in enumerate(lessons):
            for copy in copies:
                assert copy.api().generate_assignment(lesson, force=True)["success"], lesson
                notebooks = [copy.root / "solutions" / lesson / f"{lesson}.ipynb",
                             copy.root / "notebooks" / lesson / f"{lesson}.ipynb"]
                for i in range(args.count):
                    folder = copy.submission(lesson, f"learner{i:03d}")
                    folder.mkdir(parents=True)
                    shutil.copy2(notebooks[i % 2], folder / f"{lesson}.ipynb")
            serial = timed([str(bin_dir / "nbgrader"), "autograde", lesson, "--force"],
                           scratch, env)
            grade = [sys.executable, "-m", "autograd_lab_grader", "grade", lesson, "--force"]
            grade += ["--jobs", str(args.jobs)] if args.jobs else []
            kinds = {"warm": [], "cold": ["--cold"], "plain": ["--no-sandbox"]}
            if before:
                kinds["before"] = []
            order = list(kinds)[index % len(kinds):] + list(kinds)[:index % len(kinds)]
            runs = {kind: timed(grade + kinds[kind], old if kind == "before" else scratch,
                                dict(env, PYTHONPATH=str(before)) if kind == "before" else env)
                    for kind in order}
            row(lesson, serial, runs["warm"], runs["cold"], runs["plain"], runs.get("before"),
                args.count)
            totals = [totals[0] + serial, totals[1] + runs["warm"], totals[2] + runs["cold"],
                      totals[3] + runs["plain"], totals[4] + runs.get("before", 0.0),
                      totals[5] + args.count]
    row("all", *totals[:4], totals[4] if before else None, totals[5])


def _scratch_course(course, folder):
    folder.mkdir()
    shutil.copy2(ROOT / CONFIG_FILE, folder / CONFIG_FILE)
    shutil.copytree(course.directory("source"), folder / "solutions")
    return Course(folder)


def row(name, serial, warm, cold, plain, before, n):
    cores = os.cpu_count()
    line = (f"{name:28} {serial / n:9.2f} {warm / n:13.2f} {cold / n:6.2f} {plain / n:11.2f} "
            f"{warm * cores / n:9.2f} {serial / warm:8.1f}x {(cold - plain) * cores / n:12.2f}s")
    if before is not None:
        line += f" {before / n:7.2f} {(warm - before) * cores / n:10.2f}s"
    print(line, flush=True)


if __name__ == "__main__":
    main()
