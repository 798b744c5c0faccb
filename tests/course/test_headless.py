"""No lesson stalls when a runner executes it without a front end.

nbclient -- what nbconvert --execute, papermill and nbval run notebooks with -- executes every
solution notebook top to bottom in a fresh kernel, outside nbgrader, with a short timeout per
cell (tests/support/learner_code.py): once as it is, and once with every cell run twice, two runs in a
row of every lesson (the runs the other tests of the lessons' code read too). A cell that waits
on a front end that is not there (the step-through's slider, a widget: the accumulation lesson once took
181 s so) fails within the timeout instead of hanging the run, and no output is a widget that
nothing will ever draw.
"""
import pytest

import course
import learner_code as lc

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize("lesson", course.LESSONS)
@pytest.mark.parametrize("run", ["solution_run", "twice_run"], ids=["once", "twice"])
def test_every_lesson_runs_headless_without_stalling(lesson, run, lesson_runs):
    done = getattr(lesson_runs, run)(lesson)
    cells = [cell.source for _, cell in lc.code_cells(lesson)]
    stalled = [o for outputs in done.outputs for o in outputs
               if o.output_type == "error" and o.ename == "CellTimeoutError"]
    assert not stalled, f"{lesson}: a cell ran past {lc.CELL_TIMEOUT} s"
    widgets = [cells[i // (len(done.outputs) // len(cells))] for i, outputs
               in enumerate(done.outputs) for o in outputs if WIDGET in o.get("data", {})]
    assert not widgets, f"{lesson}: a widget with no front end to draw it: {widgets}"
    assert done.seconds < 60 * len(done.outputs) // len(cells), \
        f"{lesson} took {done.seconds:.0f} s"
