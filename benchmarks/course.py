#!/usr/bin/env python3
"""How long the whole course takes to execute: every solution notebook, top to bottom, each in a
fresh kernel, one after another (what nbval does in the test suite), with a progress line per
lesson and the total. A report, not a test (the target is under 60 s for all the lessons).

    python benchmarks/course.py [LESSON ...]
"""
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def main():
    lessons = sys.argv[1:] or sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
    total = 0.0
    print(f"{'lesson':28} {'seconds':>8}")
    for lesson in lessons:
        path = ROOT / "solutions" / lesson / f"{lesson}.ipynb"
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        NotebookClient(nb, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        seconds = time.perf_counter() - start
        total += seconds
        print(f"{lesson:28} {seconds:8.1f}", flush=True)
    print(f"{'all':28} {total:8.1f}")


if __name__ == "__main__":
    main()
