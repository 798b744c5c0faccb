#!/usr/bin/env python3
"""What each lesson's first code cell costs in a fresh kernel, against `import numpy,
autograd_lab` in one: the kernel's CPU seconds (its process_time, every thread) over the cell,
after the install cell has run (it only looks for the engine). Each is measured ROUNDS times,
each time in a new kernel, the median kept. A report, not a test
(tests/course/test_first_cell.py holds what makes the cost: no heavy import in that cell).

    python benchmarks/first_cell.py [--rounds N] [--root DIR] [LESSON ...]

--root reads the released notebooks of another checkout (the engine imported is the one on
the path: this checkout's, as a kernel started here finds it).
"""
import argparse
import statistics
from pathlib import Path

import nbformat
from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "import numpy, autograd_lab"
INSTALL_TAG = "course-install"


def cpu_seconds(install, cell):
    """The kernel's CPU seconds over ``cell``, in a new kernel that has run ``install``."""
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(ROOT))
    try:
        seen = []

        def execute(code):
            reply = client.execute_interactive(code, store_history=False, timeout=120,
                                               output_hook=seen.append)
            if reply["content"]["status"] != "ok":
                raise RuntimeError(f"{code!r}: {reply['content'].get('evalue')}")

        for code in install:
            execute(code)
        execute("import time as _t\n_before = _t.process_time()")
        execute(cell)                        # as a learner runs it: a cell of its own
        seen.clear()
        execute("print(repr(_t.process_time() - _before))")
        text = "".join(m["content"].get("text", "") for m in seen
                       if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")
        return float(text.split()[-1])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def opening(path):
    """(the install cells, the first other code cell) of a notebook."""
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    install = [c.source for c in cells if INSTALL_TAG in c.metadata.get("tags", [])]
    return install, next(c.source for c in cells if INSTALL_TAG not in c.metadata.get("tags", []))


def median(rounds, install, cell):
    return statistics.median(cpu_seconds(install, cell) for _ in range(rounds))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()
    notebooks = args.root / "notebooks"
    lessons = args.lessons or sorted(p.name for p in notebooks.iterdir()
                                     if (p / f"{p.name}.ipynb").exists())
    install, _ = opening(notebooks / lessons[0] / f"{lessons[0]}.ipynb")
    floor = median(args.rounds, install, BASELINE)
    print(f"{'`' + BASELINE + '`':30} {floor:6.3f} CPU-s")
    print(f"{'lesson':30} {'CPU-s':>6} {'ratio':>6}")
    for lesson in lessons:
        install, cell = opening(notebooks / lesson / f"{lesson}.ipynb")
        seconds = median(args.rounds, install, cell)
        print(f"{lesson:30} {seconds:6.3f} {seconds / floor:6.2f}", flush=True)


if __name__ == "__main__":
    main()
