"""No lesson stalls when a runner executes it without a front end.

nbclient -- what nbconvert --execute, papermill and nbval run notebooks with -- executes every
solution notebook top to bottom in a fresh kernel, outside nbgrader, several times in a row,
with a short timeout per cell. A cell that waits on a front end that is not there (the
step-through's slider, a widget: lesson 04 once took 181 s so) fails within the timeout
instead of hanging the run, and no output is a widget that nothing will ever draw.
"""
import os
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted(p.name for p in (ROOT / "solutions").iterdir()
                 if (p / f"{p.name}.ipynb").exists())
ROUNDS = 3              # the stall came in about one run in three
CELL_TIMEOUT = 20       # seconds; the slowest cell (lesson 08 trains a network) takes about 2
WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_lesson_runs_headless_without_stalling(lesson, tmp_path, monkeypatch):
    from nbclient import NotebookClient
    for name in ("NBGRADER_EXECUTION", "NBGRADER_VALIDATING", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    # the kernel imports this checkout's package
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    path = ROOT / "solutions" / lesson / f"{lesson}.ipynb"
    for _ in range(ROUNDS):
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
        took = time.perf_counter() - start
        widgets = [cell.source for cell in nb.cells for out in cell.get("outputs", [])
                   if WIDGET in out.get("data", {})]
        assert not widgets, f"{lesson}: a widget with no front end to draw it: {widgets}"
        assert took < 60, f"{lesson} took {took:.0f} s"
