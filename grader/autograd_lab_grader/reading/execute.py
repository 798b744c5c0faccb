"""The two nbgrader preprocessors that run a submission in its grading kernel
(``kernel/start.py`` starts it) and read what it replies.

``GradingExecute`` is nbgrader's ``Execute`` with the grading kernel and an interrupt that must
work; ``TruncateOutput`` keeps hundreds of megabytes of printed output out of the gradebook,
the autograded notebook and the feedback. What a sandbox refused or a limit stopped is
collected in ``kernel.start.INCIDENTS`` for the grading process to report.

``GradingExecute`` never lets the kernel decide a test cell: the kernel runs the learner's view
of it (where every check only says the grader decides), and the grader judges the instructor's
copy itself (``verdict.py``), asking the kernel for the answers as data. Where the kernel's own
run of a test cell claimed more points than the grader gave (a forged verdict),
``VERDICT_CLAIMS`` says so. Every output of every kind is counted as it arrives, per cell and
per notebook, and dropped past a limit.
"""
from __future__ import annotations

import sys
import time
from queue import Empty

import ast
import copy

from nbclient.util import ensure_async, run_sync
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.preprocessors.execute import UnresponsiveKernelError
from traitlets import Bool, Dict, Float, Integer, Unicode

from autograd_lab import checks
from autograd_lab.checks.answers import MAX_BYTES, encode

from .. import patches
from ..kernel.start import DROPPED, INCIDENTS, Limits, kernel_manager
from . import outputs, verdict

# per test cell judged: (grade_id, points the kernel's own run claimed, points given, most)
VERDICT_CLAIMS: list[tuple[str, float, float, float]] = []
# per test cell whose check got a reply no unchanged kernel sends: (grade_id, what was wrong)
MALFORMED: list[tuple[str, str]] = []
# what the hidden tests found, in full, per test cell: (grade_id, text), for the instructor
# only (the notebook shows the learner which check failed and its misconception alone)
HIDDEN_FOUND: list[tuple[str, str]] = []


class GradingExecute(patches.ExecuteHooks):
    """nbgrader's Execute, with the grading kernel, and a timeout that either stops the cell or
    fails the submission at once (nbgrader would wait out every later cell's timeout against a
    kernel that swallowed the KeyboardInterrupt)."""

    interrupt_grace = Float(5.0, help="Seconds a kernel gets to stop after the interrupt.").tag(
        config=True)
    memory_limit = Integer(Limits.memory, help="Bytes of address space per kernel.").tag(
        config=True)
    cpu_limit = Integer(Limits.cpu_seconds, help="Seconds of CPU time per kernel process.").tag(
        config=True)
    sandboxed = Bool(True, help="Run the kernel in the bubblewrap sandbox.").tag(config=True)
    warm_server = Unicode("", help="The socket of the warm-kernel server of this grading run "
                                   "(warm.py); empty: kernels start cold.").tag(config=True)
    test_sources = Dict(help="grade_id -> the instructor's source of each test cell (from the "
                             "gradebook): the cells the grader judges itself.").tag(config=True)
    lesson_dir = Unicode("", help="The lesson's folder in the source directory: importable "
                                  "while a test cell is judged.").tag(config=True)
    judge_key = Unicode("", help="The key (hex) hidden tests draw their inputs with: the "
                                 "grader's own for this learner and lesson.").tag(config=True)
    own_run = Unicode("", help="The notebook as the learner handed it in, with the outputs of "
                               "their own run: what their cells show once a hidden test has "
                               "been asked.").tag(config=True)
    cell_output_limit = Integer(2 * 1024**2, help="Bytes of output one cell may show.").tag(
        config=True)
    # A flood past the limits above can cost a cell its last messages (its "idle" among them):
    # its outputs are then what arrived, and grading goes on (nbgrader would fail the whole
    # submission)
    raise_on_iopub_timeout = Bool(False).tag(config=True)
    notebook_output_limit = Integer(12 * 1024**2, help="Bytes of output a notebook may "
                                                       "show.").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.kernel_manager_class = kernel_manager(
            Limits(memory=self.memory_limit, cpu_seconds=self.cpu_limit), self.sandboxed,
            self.warm_server)

    # -- test cells: judged here ----------------------------------------------------------
    def preprocess(self, nb, resources=None, km=None):
        self._verdicts, self._shown, self._dropped = {}, {}, {}
        self._hidden_asked = False
        self._after_hidden = []             # the learner's code cells run after a hidden test
        key = bytes.fromhex(self.judge_key) if self.judge_key else checks.JUDGING.key
        with checks.judging(key):
            nb, resources = super().preprocess(nb, resources, km)
        # the grader's verdicts are the last word: nothing the kernel sent after a test cell
        # (an update of a display it showed there) may change them
        for index, judged in self._verdicts.items():
            nb.cells[index].outputs = copy.deepcopy(judged)
        # once the kernel has been asked a hidden test's question (its inputs, the functions
        # it passes), the learner's code has seen them and may print them: the learner's cells
        # from there on show what they showed in the learner's own run, never this one's
        own = self._own_outputs(nb)
        for index in self._after_hidden:
            # (what the grader itself says of the cell, that the time limit stopped it, stays)
            stopped = [o.node for o in outputs.of_cell(nb.cells[index])
                       if o.is_error("CellTimeoutError")]
            nb.cells[index].outputs = own.get(index, []) + stopped
        for index, dropped in sorted(self._dropped.items()):
            name = nb.cells[index].metadata.get("nbgrader", {}).get("grade_id") or f"cell {index}"
            _incident(f"output limit: {dropped / 1024**2:.1f} MB of output dropped from {name}")
        return nb, resources

    def _own_outputs(self, nb) -> dict:
        """index -> the outputs of that code cell in the notebook as handed in, for the cells
        whose source is the same there as here (nothing else is shown from it)."""
        import nbformat
        try:
            handed = nbformat.read(self.own_run, as_version=4) if self.own_run else None
        except Exception:                       # noqa: BLE001 -- staged and read before
            handed = None
        if handed is None or len(handed.cells) != len(nb.cells):
            return {}
        return {i: copy.deepcopy(mine.get("outputs", [])) for i, (mine, here)
                in enumerate(zip(handed.cells, nb.cells))
                if here.cell_type == "code" and mine.get("cell_type") == "code"
                and mine.get("source") == here.source}

    def preprocess_cell(self, cell, resources, index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type != "code" or grade_id not in self.test_sources:
            if cell.cell_type == "code" and self._hidden_asked:
                self._after_hidden.append(index)
            return super().preprocess_cell(cell, resources, index)
        trusted = self.test_sources[grade_id]
        self._hidden_asked = self._hidden_asked or bool(verdict.HIDDEN.search(trusted))
        # the kernel runs the learner's view of the cell, where a check only says we decide:
        # what it shows is its claim, kept for comparison, never scored
        claim = copy.deepcopy(cell)
        claim.source = verdict.visible(trusted)
        super().preprocess_cell(claim, resources, index)
        self.clear_display_id_mapping(index)
        judged = verdict.judge(trusted, run_sync(self._ask), self.lesson_dir or None)
        cell.source, cell.outputs = trusted, judged.outputs
        self.nb.cells[index] = cell
        self._verdicts[index] = copy.deepcopy(judged.outputs)
        most = float(cell.metadata["nbgrader"].get("points", 0))
        VERDICT_CLAIMS.append((grade_id, verdict.points(cell, claim.outputs),
                       verdict.points(cell, judged.outputs), most))
        MALFORMED.extend((grade_id, what) for what in judged.malformed[:1])
        HIDDEN_FOUND.extend((grade_id, text) for text in judged.hidden)
        if claim.outputs:
            print(f"[kernel's own run of {grade_id}]", *map(_one_line, outputs.of_cell(claim)),
                  sep="\n  ", file=sys.stderr)
        return cell, self.resources

    async def _ask(self, request: str) -> str:
        """One request to the kernel (answers.serve), answered in its execute_reply's
        user_expressions; the reply text. A kernel past the cell time limit is interrupted,
        and one that ignores the interrupt fails the submission, as in a cell."""
        call = f"__import__('autograd_lab.checks.answers', fromlist=['serve']).serve({request!r})"
        msg_id = self.kc.execute("", silent=True, store_history=False,
                                 user_expressions={"reply": call})
        reply = await self._reply_to(msg_id, self.timeout)
        if reply is None:
            await ensure_async(self.km.interrupt_kernel())
            reply = await self._reply_to(msg_id, self.interrupt_grace)
            if reply is None:
                raise UnresponsiveKernelError(
                    f"a check's call ran past the {self.timeout} s limit and ignored the "
                    "interrupt")
        found = reply["content"].get("user_expressions", {}).get("reply", {})
        text = found.get("data", {}).get("text/plain", "") if found.get("status") == "ok" else ""
        try:
            if not isinstance(text, str) or len(text) > 2 * MAX_BYTES:
                raise ValueError("too large")
            answer = ast.literal_eval(text)
            if not isinstance(answer, str):
                raise ValueError("not text")
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            status = reply["content"].get("status")
            said = found.get("evalue") or reply["content"].get("evalue") or status
            return encode({"unreadable": f"the kernel did not answer ({str(said)[:300]})"})
        return answer

    async def _reply_to(self, msg_id, timeout):
        """The shell reply to ``msg_id``, or None after ``timeout`` seconds."""
        deadline = time.monotonic() + (timeout or 60)
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=left))
            except Empty:
                return None
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg
        return None

    # -- outputs: counted as they arrive ------------------------------------------------
    def output_lost(self, cell):
        name = cell.metadata.get("nbgrader", {}).get("grade_id") or "a cell"
        _incident(f"output limit: the output of {name} overflowed and its end was lost")
        # what overflowed once may again: the cells after it wait less for their ends
        self.iopub_timeout = min(self.iopub_timeout, 2)

    def process_message(self, msg, cell, cell_index):
        if msg["msg_type"] == DROPPED:
            self._dropped[cell_index] = self._dropped.get(cell_index, 0) + msg["content"]["size"]
            return None
        if msg["msg_type"] not in ("status", "execute_input") and not self._room(msg, cell_index):
            return None
        return super().process_message(msg, cell, cell_index)

    def _room(self, msg, index) -> bool:
        """Count a message's size against the cell's and the notebook's limits; False (and
        the message dropped) once either is reached."""
        size = _size(msg.get("content")) + sum(len(b) for b in msg.get("buffers") or ())
        shown = self._shown.get(index, 0)
        total = sum(self._shown.values())
        if shown + size > self.cell_output_limit or total + size > self.notebook_output_limit:
            self._dropped[index] = self._dropped.get(index, 0) + size
            return False
        self._shown[index] = shown + size
        return True

    async def interrupted(self, timeout, cell):
        # the shell channel answers in order: a kernel_info reply means the cell has stopped
        msg_id = self.kc.kernel_info()
        deadline = time.monotonic() + self.interrupt_grace
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=left))
            except Empty:
                break
            if msg["parent_header"].get("msg_id") == msg_id:
                return
        raise UnresponsiveKernelError(
            f"a cell ran past the {timeout} s limit and ignored the interrupt")


def _size(content, depth=0) -> int:
    """About how many bytes a message's content holds (its strings, every MIME type)."""
    if isinstance(content, str):
        return len(content)
    if depth > 32:
        return 0
    if isinstance(content, dict):
        return sum(len(str(k)) + _size(v, depth + 1) for k, v in content.items())
    if isinstance(content, (list, tuple)):
        return sum(_size(v, depth + 1) for v in content) + len(content)
    return 8


def _incident(text):
    if text not in INCIDENTS:
        INCIDENTS.append(text)


def _one_line(output: outputs.Output) -> str:
    """An output, in a line of the grading log."""
    if output.kind == "error":
        return f"{output.ename}: {output.evalue[:200]}"
    if output.kind == "stream":
        return f"{output.name}: {output.text[:200]!r}"
    return f"{output.kind}: {sorted(output.data)}"


class TruncateOutput(NbGraderPreprocessor):
    """Cut every text output to max_chars (nbgrader's LimitOutput counts lines, not bytes)."""

    max_chars = Integer(20_000).tag(config=True)

    def _cut(self, text):
        if isinstance(text, list):
            text = "".join(text)
        if len(text) <= self.max_chars:
            return text
        incident = f"printed output cut to {self.max_chars} characters"
        if incident not in INCIDENTS:
            INCIDENTS.append(incident)
        return (text[: self.max_chars]
                + f"\n... [{len(text) - self.max_chars} more characters cut by the grader]\n")

    def preprocess_cell(self, cell, resources, index):
        for output in outputs.of_cell(cell, index):
            output.rewrite(self._cut, outputs.text_mimes)
        return cell, resources
