"""JupyterLab in the learner's environment, driven in Debian's Chromium by Playwright: the course
as a learner's browser shows it. Used by tests/browser/test_browser.py through the fixtures in conftest.py.

- ``jupyter_lab(venv, environ, root)`` starts JupyterLab on loopback in ``root`` (the Validate
  button reads nbgrader_config.py from the server's working directory) and stops it after;
- ``Notebook`` drives one open notebook the way a learner does (menus, typing, the Validate
  button) and reads what the page shows.

Why the waits are what they are: "Run All" clicked before the kernel is really there is dropped
silently, the status can read idle while the toolbar still says "No Kernel", and a notebook's
cells are only all in the page with windowingMode "none".
"""
import base64
import contextlib
import json
import re
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"       # screenshots kept for people to look at (git ignores it)
CHROMIUM = "/usr/bin/chromium"            # Debian's; Playwright's own browser download is not used

# JupyterLab settings that make pages testable: every cell in the page (not only those scrolled
# to), no empty space after the last cell, and no news pop-up over every screenshot
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none", "scrollPastEnd": False},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, port, token):
        self.port, self.token = port, token

    def url(self, path=""):
        sep = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}/{path}{sep}token={self.token}"

    def get(self, path):
        """(status, body) of a GET to the server's REST API."""
        try:
            with urllib.request.urlopen(self.url(path), timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()


@contextlib.contextmanager
def jupyter_lab(python, environ, root, log_path, command=None):
    """JupyterLab of ``python``'s environment, serving ``root``, its settings in ``environ``'s
    JUPYTERLAB_SETTINGS_DIR; its log goes to ``log_path``. ``command``: what starts it, if not
    ``python -m jupyter lab``: a command that serves ``root`` itself, and passes JupyterLab's
    other options on."""
    settings = Path(environ["JUPYTERLAB_SETTINGS_DIR"])
    for plugin, values in SETTINGS.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    server = Server(_free_port(), secrets.token_hex(16))
    args = [*(command or [python, "-m", "jupyter", "lab", f"--ServerApp.root_dir={root}"]),
            "--no-browser", "--ip=127.0.0.1", f"--port={server.port}",
            f"--IdentityProvider.token={server.token}"]
    if os.getuid() == 0 and command is None:
        args.append("--allow-root")
    # a test runner stopped with SIGTERM still runs the finally below, so no server outlives it
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    with open(log_path, "w") as log:
        proc = subprocess.Popen(args, cwd=root, env=environ, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not _ready(server):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not start:\n{Path(log_path).read_text()}")
            time.sleep(0.2)
        yield server
    finally:
        proc.terminate()            # the server shuts its kernels down itself
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        signal.signal(signal.SIGTERM, previous)


def _ready(server):
    try:
        return server.get("api/status")[0] == 200
    except OSError:             # not listening yet
        return False


class Notebook:
    """One notebook open in JupyterLab, driven as a learner would."""

    def __init__(self, page, server, path):
        self.page, self.path = page, path
        page.goto(server.url(f"lab/tree/{path}?reset"))
        self.panel = page.locator(".jp-NotebookPanel:visible")
        self.panel.locator(".jp-Cell").first.wait_for()
        self.wait_for_kernel()

    # -- waiting ---------------------------------------------------------------------------
    def _kernel_state(self):
        name = self.panel.locator(".jp-KernelName").first.inner_text()
        status = self.panel.locator(".jp-Notebook-ExecutionIndicator").first.get_attribute(
            "data-status")
        return name.strip(), status

    def wait_for_kernel(self, timeout=120):
        """Until a kernel is named in the toolbar, idle, and no cell waits to run ([*]), steadily
        for half a second (a queued Run All can leave a moment of idle between cells)."""
        deadline, steady_since = time.monotonic() + timeout, None
        while True:
            name, status = self._kernel_state()
            ready = (name not in ("", "No Kernel") and status == "idle"
                     and not self.panel.locator(".jp-InputPrompt", has_text="[*]").count())
            now = time.monotonic()
            if not ready:
                steady_since = None
            elif steady_since is None:
                steady_since = now
            elif now - steady_since >= 0.5:
                return
            if now > deadline:
                raise TimeoutError(f"{self.path}: kernel {name!r} is {status!r}")
            time.sleep(0.1)

    # -- doing what a learner does ---------------------------------------------------------
    def menu(self, *labels):
        """Click through the menu bar: menu("Run", "Run All Cells")."""
        items = [".lm-MenuBar-itemLabel"] + [".lm-Menu:visible .lm-Menu-itemLabel"] * len(labels)
        for css, label in zip(items, labels):
            exact = re.compile(rf"^{re.escape(label)}$")
            self.page.locator(css).filter(has_text=exact).first.click()

    def run_all(self, timeout=60):
        """Run → Run All Cells, and wait until the kernel has run what it will (Run All stops at
        the first error: in a released lesson, the first unanswered exercise)."""
        before = self._last_count()
        self.menu("Run", "Run All Cells")
        deadline = time.monotonic() + timeout
        while self._last_count() == before:     # started: a cell got a new execution count
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.path}: Run All ran nothing")
            time.sleep(0.1)
        self.wait_for_kernel()

    def _last_count(self):
        prompts = self.panel.locator(".jp-InputPrompt").all_inner_texts()
        return max((int(n) for p in prompts for n in re.findall(r"\[(\d+)\]", p)), default=0)

    def type_into(self, index, text):
        """Replace cell ``index``'s text with ``text``, as typed (inserted: typed key by key, code
        would be auto-indented by the editor, which a learner would have fixed by hand). A
        markdown cell is opened for editing by a double click, and shown again after."""
        cell = self.cell(index)
        markdown = "jp-MarkdownCell" in cell.get_attribute("class")
        if markdown:
            cell.locator(".jp-MarkdownOutput").dblclick()
        cell.locator(".cm-content").click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.insert_text(text)
        if markdown:
            self.page.keyboard.press("Control+Enter")       # render it
        self.page.keyboard.press("Escape")

    def move_slider(self, index, fraction, timeout=30):
        """Drag the handle of the first slider in cell ``index``'s output with the mouse, to
        ``fraction`` (0 to 1) of its track, and wait until the widget output under it changed
        (the kernel redraws it); the slider's value after."""
        cell = self.cell(index)
        handle, shown = cell.locator(".noUi-handle").first, cell.locator(".widget-output").first
        before = shown.inner_html()
        track, box = cell.locator(".noUi-base").first.bounding_box(), handle.bounding_box()
        y = box["y"] + box["height"] / 2
        self.page.mouse.move(box["x"] + box["width"] / 2, y)
        self.page.mouse.down()
        self.page.mouse.move(track["x"] + fraction * track["width"], y, steps=10)
        self.page.mouse.up()
        deadline = time.monotonic() + timeout
        while shown.inner_html() == before:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.path}: the slider's output did not change")
            time.sleep(0.1)
        self.wait_for_kernel()
        return int(float(handle.get_attribute("aria-valuenow")))

    def validate(self, timeout=120):
        """Press nbgrader's Validate button; the text of the dialog it opens (closed after)."""
        self.panel.locator(".validate-button").click()
        dialog = self.page.locator(".jp-Dialog")
        dialog.wait_for(timeout=timeout * 1000)
        body = dialog.locator(".jp-Dialog-body")
        text = body.inner_text()
        return text

    def close_dialog(self):
        self.page.locator(".jp-Dialog").get_by_role("button").last.click()
        self.page.locator(".jp-Dialog").wait_for(state="detached")

    # -- reading the page ------------------------------------------------------------------
    def cells(self):
        return self.panel.locator(".jp-Cell")

    def cell(self, index):
        return self.cells().nth(index)

    def outputs(self, index):
        """[(mime type, text)] of cell ``index``'s outputs, as rendered."""
        outs = self.cell(index).locator(".jp-OutputArea-output")
        return [(o.get_attribute("data-mime-type"), o.inner_text()) for o in outs.all()]

    def images(self, index):
        """The SVG documents shown as <img> in cell ``index``'s outputs (JupyterLab shows an
        image/svg+xml output as an <img> with a data: URL; viz's drawings come as HTML, an
        <img> of that kind with its alt text)."""
        srcs = self.cell(index).locator(".jp-OutputArea-output img").evaluate_all(
            "imgs => imgs.map(i => i.src)")
        return [_data_url_text(s) for s in srcs if s.startswith("data:image/svg+xml")]

    def image_names(self, index):
        """The accessible name of each picture in cell ``index``'s outputs (what a screen reader
        reads): None for a picture that has none. Found through the page's roles, as
        assistive technology finds it: an <img> named by its alt."""
        area = self.cell(index).locator(".jp-OutputArea-output")
        alts = area.locator("img").evaluate_all("imgs => imgs.map(i => i.getAttribute('alt'))")
        return [alt if alt and area.get_by_role("img", name=alt, exact=True).count() else None
                for alt in alts]

    def screenshot(self, name, cell=None, show=None):
        """A PNG in test-artifacts/ of what the learner sees: cell ``cell`` scrolled to the top
        of the notebook, or the text ``show`` scrolled into view (in a dialog, say)."""
        if cell is not None:
            self.cell(cell).evaluate("c => c.scrollIntoView({block: 'start'})")
        if show is not None:
            self.page.get_by_text(show).last.scroll_into_view_if_needed()
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=path)
        return path


def _data_url_text(url):
    head, _, data = url.partition(",")
    return base64.b64decode(data).decode() if head.endswith(";base64") else \
        urllib.parse.unquote(data)
