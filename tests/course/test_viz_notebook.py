"""viz in a real Jupyter kernel: what a learner's notebook receives when a cell ends with a
drawing or a trace, or shows a plot: the picture, an <img> of it whose alt is the picture in
words, and those words as its text. (tests/engine/test_viz.py checks the drawings and the
words themselves.)"""
import base64
import html.parser
import os
import queue
import tempfile
import time
import warnings
import xml.etree.ElementTree as ET

import nbformat
import pytest
from nbclient import NotebookClient

CELLS = [
    "import autograd_lab as torch\nfrom autograd_lab import viz",
    "x = torch.tensor([2.0, 2.0], requires_grad=True)\n"
    "z = torch.tensor([4.0, 4.0], requires_grad=True)\n"
    "y = x ** 2 + z ** 3",
    "viz.draw(y, names={x: 'x', z: 'z'}, show_saved=True)",
    "trace = viz.trace_backward(y, torch.tensor([1.0, 1.0]))\ntrace",
    "print(x.grad, z.grad)",
    "import matplotlib.pyplot as plt\n"
    "plt.plot([0.0, 1.0], [1.0, 0.0], label='falling')\nplt.legend()\nplt.show()",
]


SLOW = 10      # s: the whole run normally takes under 3
CELL_TIMEOUT = 60


class _Client(NotebookClient):
    """nbclient, looking at the shell channel again every second while it waits for a reply.

    Under load, after the cell that shows the trace's widget (and only there), nbclient missed
    the kernel's reply until its whole cell timeout ran out: 60 s, then 15 s, in 5 of 13
    whole-suite runs, and 3 of 8 runs of this notebook beside three busy processes, while the
    kernel's own clock had its reply sent after 0.13 to 0.27 s. The reply was in the socket all
    along: pyzmq's poll, when its wait ends, looks once more without waiting and finds it. So
    the wakeup was lost, not the reply; waiting in one-second slices bounds what that costs.
    (JupyterLab does not use this client.)"""

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        shell = kc.shell_channel
        get_msg = shell.get_msg

        async def sliced(timeout=None):
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                try:
                    return await get_msg(timeout=1.0 if left is None else min(1.0, max(left, 0)))
                except queue.Empty:
                    if left is not None and left <= 1.0:
                        raise
        shell.get_msg = sliced
        return kc


def run(env=None):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    # Where the time goes, kept in case a run is slow. Marks: kernel ready, each cell's end, shut
    # down; and for each cell, when the kernel itself sent its reply.
    marks = [("start", time.perf_counter())]

    def mark(name):
        return lambda **kw: marks.append((f"{name}{kw.get('cell_index', '')}", time.perf_counter()))
    client = _Client(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                     on_notebook_start=mark("ready"), on_cell_executed=mark("cell"),
                     on_notebook_complete=mark("shut down"))
    with tempfile.TemporaryFile("w+") as stderr:
        client.execute(env=env, stderr=stderr)
        if marks[-1][1] - marks[0][1] > SLOW:
            stderr.seek(0)
            steps = ", ".join(f"{name} +{t - before:.1f} s"
                              for (_, before), (name, t) in zip(marks, marks[1:]))
            warnings.warn(f"the viz kernel was slow: {steps}; the kernel's replies: "
                          f"{_reply_times(nb)}; its stderr: {stderr.read()[-2000:]!r}",
                          stacklevel=2)
    return [cell.outputs for cell in nb.cells]


def _reply_times(nb):
    """Seconds from each cell's start in the kernel to the reply it sent (its own clock)."""
    from datetime import datetime
    times = []
    for cell in nb.cells:
        ex = cell.metadata.get("execution", {})
        start, reply = ex.get("iopub.execute_input"), ex.get("shell.execute_reply")
        times.append(None if not (start and reply) else round(
            (datetime.fromisoformat(reply.replace("Z", "+00:00"))
             - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds(), 2))
    return times


@pytest.fixture(scope="module")
def outputs():
    """The notebook's outputs in a kernel started as Jupyter Server starts one for a notebook
    session (JupyterLab, Notebook): JPY_SESSION_NAME in its environment, not in ours."""
    return run(dict(os.environ, JPY_SESSION_NAME="lesson.ipynb"))


def test_a_drawing_shows_inline_as_svg(outputs):
    (out,) = outputs[2]
    svg = ET.fromstring(out["data"]["image/svg+xml"])
    lines = {t.text.replace("\xa0", " ") for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    for label in ("PowBackward0 #1", "AddBackward0", "x  (2,)", "[2., 2.]", "z  (2,)",
                  "saved self = x  (2,)"):
        assert label in lines


def _img(markup):
    class Img(html.parser.HTMLParser):
        found = []

        def handle_starttag(self, tag, attrs):
            self.found.append((tag, dict(attrs)))
    parser = Img()
    parser.feed(markup)
    ((tag, attrs),) = parser.found
    assert tag == "img"
    return attrs


def test_a_drawing_comes_with_its_description(outputs):
    """JupyterLab shows the text/html (an <img> whose alt is the description): it would show
    the bare SVG as an <img> with no text alternative at all."""
    (out,) = outputs[2]
    data = out["data"]
    assert data["text/plain"].startswith("The backward graph of t0.")
    for told in ("AddBackward0 sends gradients to PowBackward0 #1 and PowBackward0 #2",
                 "x: a leaf, shape (2,)", "saved self = x (shape (2,))"):
        assert told in data["text/plain"]
    img = _img(data["text/html"])
    assert img["alt"] == data["text/plain"]
    assert base64.b64decode(img["src"].split(",", 1)[1]).decode() == data["image/svg+xml"]
    svg = ET.fromstring(data["image/svg+xml"])
    assert svg.find("{http://www.w3.org/2000/svg}desc").text == data["text/plain"]


def test_a_plot_comes_with_a_sentence_of_what_it_shows(outputs):
    """Once viz is imported, a matplotlib figure shows as an <img> whose alt says what it
    plots; its PNG and its text stay matplotlib's own (as under PyTorch alone)."""
    (out,) = [o for o in outputs[5] if o["output_type"] == "display_data"]
    data = out["data"]
    assert data["text/plain"].startswith("<Figure size")
    img = _img(data["text/html"])
    assert img["alt"].startswith("A plot of falling (a line); x from ")
    assert img["src"].startswith("data:image/png;base64,")
    assert base64.b64decode(img["src"].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_trace_shows_a_slider_through_its_frames(outputs):
    kinds = [kind for out in outputs[3] for kind in out.get("data", {})]
    assert "application/vnd.jupyter.widget-view+json" in kinds


def test_run_headless_a_trace_shows_its_table():
    """nbclient's own kernel (nbconvert, papermill, nbval): no front end, no widget."""
    env = {k: v for k, v in os.environ.items() if k != "JPY_SESSION_NAME"}
    kinds = [kind for out in run(env)[3] for kind in out.get("data", {})]
    assert "text/html" in kinds and "application/vnd.jupyter.widget-view+json" not in kinds


def test_the_trace_ran_a_real_backward(outputs):
    (out,) = outputs[4]
    assert out["text"] == "tensor([4., 4.]) tensor([48., 48.])\n"
