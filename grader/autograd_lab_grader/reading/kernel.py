"""The kernel a submission runs in, and the two nbgrader preprocessors that run it.

``kernel_manager(limits, sandboxed, server)`` is the one place that decides how a grading kernel
is started, through its kernel provisioner (``GradingProvisioner``, jupyter_client's extension
point for it): forked by the grading run's warm-kernel server (``warm.py``, ``zygote.py``) when
it has one, else in a bubblewrap sandbox of its own (``sandbox.py``), or as a plain local
process with ``--no-sandbox``; always under limits, and dying with its grader. What the grader
changes of jupyter_client's and nbclient's private parts is in ``patches.py``. ``GradingExecute`` is
nbgrader's ``Execute`` with that kernel manager and an interrupt that must work;
``TruncateOutput`` keeps hundreds of megabytes of printed output out of the gradebook, the
autograded notebook and the feedback. What a sandbox refused or a limit stopped is collected in
``INCIDENTS`` for the grading process to report.

``GradingExecute`` never lets the kernel decide a test cell: the kernel runs the learner's view
of it (where every check only says the grader decides), and the grader judges the instructor's
copy itself (``verdict.py``), asking the kernel for the answers as data. Where the kernel's own
run of a test cell claimed more points than the grader gave (a forged verdict),
``VERDICT_CLAIMS`` says so. Every output of every kind is counted as it arrives, per cell and
per notebook, and dropped past a limit.
"""
from __future__ import annotations

import asyncio
import ctypes
import os
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from queue import Empty

import ast
import copy

from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from nbclient.util import ensure_async, run_sync
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.preprocessors.execute import UnresponsiveKernelError
from traitlets import Bool, Dict, Float, Integer, Type, Unicode, default

from autograd_lab import checks
from autograd_lab.checks import VERDICTS_ENV
from autograd_lab.checks.answers import MAX_BYTES, encode

from .. import patches
from ..sandbox import sandbox, warm
from . import outputs, verdict

_PR_SET_PDEATHSIG = 1

# what this grading process saw go wrong in its kernel (a limit, the output cut); the worker
# empties it before a submission and reports it after
INCIDENTS: list[str] = []
# per test cell judged: (grade_id, points the kernel's own run claimed, points given, most)
VERDICT_CLAIMS: list[tuple[str, float, float, float]] = []
# per test cell whose check got a reply no unchanged kernel sends: (grade_id, what was wrong)
MALFORMED: list[tuple[str, str]] = []
# what the hidden tests found, in full, per test cell: (grade_id, text), for the instructor
# only (the notebook shows the learner which check failed and its misconception alone)
HIDDEN_FOUND: list[tuple[str, str]] = []

# What one message from a kernel may hold. A larger one is not read (its content is never
# parsed: the grader keeps its header, and counts it as output dropped); one larger than
# MAX_RECEIVED is not even received (ZeroMQ drops it, and the connection with it, which it
# then makes again: a flood that large may lose its cell's last messages).
MAX_MESSAGE = 4 * 1024**2
MAX_RECEIVED = 64 * 1024**2
DROPPED = "autograd_lab_dropped"    # the msg_type of a message too large to read
# a kernel's stdout and stderr (sandbox/inside/: the one folder of the grader a kernel sees)
OUTSTREAM = "autograd_lab_grader.sandbox.inside.streams.BoundedOutStream"


@dataclass(frozen=True)
class Limits:
    memory: int = 2 * 1024**3          # bytes of address space, per process
    processes: int = 64                # processes and threads of the kernel's own user (sandbox)
    cpu_seconds: int = 900             # CPU time, per process
    file_size: int = 64 * 1024**2      # bytes, per file written


def _rlimits(limits: Limits, sandboxed: bool) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) for setrlimit, in a kernel's process or bwrap's before it."""
    found = [(resource.RLIMIT_AS, limits.memory, limits.memory),
             # SIGXCPU at the soft limit, which ends the kernel and names the limit; a hard limit
             # equal to it would SIGKILL instead, and the report could not say why
             (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5),
             (resource.RLIMIT_FSIZE, limits.file_size, limits.file_size),
             (resource.RLIMIT_CORE, 0, 0)]
    if sandboxed:
        # counted per user: it holds for the kernel's own user in the sandbox (root is exempt)
        found.append((resource.RLIMIT_NPROC, limits.processes, limits.processes))
        # no POSIX message queue: one outlives its maker in the IPC namespace that warm
        # kernels share, and, unlike System V's objects (zygote.py), none can be listed to
        # be removed
        found.append((resource.RLIMIT_MSGQUEUE, 0, 0))
    return found


def _limit_kernel(limits: Limits, sandboxed: bool):
    """Runs in the kernel's process (or bwrap's) between fork and exec."""
    def apply():
        for limit, soft, hard in _rlimits(limits, sandboxed):
            resource.setrlimit(limit, (soft, hard))
        if sandboxed:
            # the interrupt goes to the whole process group: bwrap must not die of it (and take
            # the kernel along); the kernel sets its own SIGINT handler while it runs a cell
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if sys.platform == "linux":
            # a kernel outlives a grader that was killed (wall-clock limit) unless told to die
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    return apply


def _exit_incident(code: int | None, limits: Limits) -> str | None:
    """What a kernel's exit code says about a limit (bwrap exits 128 + the signal that killed
    its command; a plain kernel has a negative code). Only the CPU limit kills: Python ignores
    SIGXFSZ, so a file past the size limit is an OSError the notebook shows."""
    if code is None:
        return None
    signum = -code if code < 0 else code - 128 if code > 128 else 0
    if signum == signal.SIGXCPU:
        return f"the CPU-time limit ({limits.cpu_seconds} s) ended the kernel"
    return None


class BoundedChannel(patches.HeaderOnlyChannel):
    """A channel that reads a message larger than MAX_MESSAGE no further than its header."""

    max_bytes = MAX_MESSAGE
    dropped_type = DROPPED


class GradingKernelClient(patches.BoundedClient):
    """jupyter_client's client, less a fifth of a second at every kernel's start, whose
    channels do not read a message larger than MAX_MESSAGE (nor receive one larger than
    MAX_RECEIVED)."""

    max_received = MAX_RECEIVED
    shell_channel_class = Type(BoundedChannel)
    iopub_channel_class = Type(BoundedChannel)


class KernelLog:
    """The kernel's stdout and stderr: a pipe whose other end a thread of this process copies
    into its own stderr (the grading log), `limit` bytes at most, then closes. A kernel never
    holds the log file itself: its descriptor names the course's folder (/proc/self/fd/1), and,
    for a kernel that runs as the grader's own user (a grader that is not root), opening it
    again there would read the log or rewrite it from its start."""

    def __init__(self, limit: int):
        self.limit = limit
        self.read_end, self.write_end = os.pipe()
        self._thread = threading.Thread(target=self._copy, daemon=True, name="kernel-log")
        self._thread.start()

    def _copy(self):
        copied = 0
        try:
            while copied < self.limit:
                data = os.read(self.read_end, 1 << 16)
                if not data:
                    return
                data = data[:self.limit - copied]
                copied += len(data)
                while data:
                    data = data[os.write(2, data):]
            os.write(2, f"\n[autograd-lab: the kernel's output past {self.limit // 1024**2} MB "
                        "is not kept]\n".encode())
        except OSError:
            pass
        finally:
            os.close(self.read_end)       # (past the limit, the kernel's writes fail)

    def handed_over(self):
        """The kernel has its copy of the write end: this process keeps none."""
        if self.write_end is not None:
            os.close(self.write_end)
            self.write_end = None

    def close(self, timeout: float = 5.0):
        """Wait until the kernel's last output is in the log (its end closes the pipe)."""
        self.handed_over()
        self._thread.join(timeout)


class GradingProvisioner(LocalProvisioner):
    """How a grading kernel is launched, waited for and cleaned up (jupyter_client's kernel
    provisioner, its documented extension point): in a private folder reached over Unix
    sockets, under limits, forked by the run's warm-kernel server where there is one; its exit
    read for a limit that ended it, its folder removed after it."""

    limits: Limits = Limits()
    sandboxed: bool = True
    server: str = ""          # the warm-kernel server's socket ("": kernels start cold)
    _private = None
    _forked = None
    _sockets = None
    _log = None

    @property
    def _spool(self):
        return Path(self.server).parent.parent if self.server else None   # SPOOL/control/

    async def pre_launch(self, **kw):
        km = self.parent
        if self.sandboxed:
            # the kernel works in a private copy of nbgrader's folder, and is reached over
            # sockets in that copy (the sandbox has no network)
            self._private = sandbox.Private(kw.get("cwd"), sandbox._uid(), parent=self._spool)
            sandbox.copy_font_cache(self._private.home, self._private.uid)
            kw["cwd"] = str(self._private.work)
            km.transport = "ipc"
            km.ip = str(self._private.run / "kernel")
            km.connection_file = str(self._private.run / "connection.json")
        else:
            # Unix sockets here too: TCP ports found free by one grading job can be taken
            # by another job's connections before its kernel binds them ("Address already
            # in use", and a learner's kernel "died")
            self._sockets = tempfile.mkdtemp(prefix="autograd-lab-kernel-")
            km.transport = "ipc"
            km.ip = os.path.join(self._sockets, "kernel")
        return await super().pre_launch(**kw)

    async def launch_kernel(self, cmd, **kw):
        kernel_cmd = cmd
        if kernel_cmd[1:3] == ["-m", "ipykernel_launcher"]:
            kernel_cmd = [*kernel_cmd, f"--IPKernelApp.outstream_class={OUTSTREAM}"]
        env = dict(kw.get("env") or os.environ)
        # one BLAS thread: the grader runs one kernel per core already
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   MPLBACKEND="Agg")
        env[VERDICTS_ENV] = "grader"       # a check in the kernel only says we decide
        options = None
        if self._private is not None:
            self._private.give(self.parent.connection_file)
            env = sandbox.kernel_env(self._private.home, env, self._private.tmp)
            self._log = KernelLog(self.limits.file_size)
            if self._spool and kernel_cmd[1:3] == ["-m", "ipykernel_launcher"]:
                try:
                    return self._fork(kernel_cmd, env)
                except OSError as error:      # the server is gone: this kernel starts cold
                    print(f"[WARNING] {error}; the kernel starts cold", file=sys.stderr)
            kernel_cmd, options = sandbox.hide_options(
                sandbox.command(kernel_cmd, self._private, env))
            kw.update(stdout=self._log.write_end, stderr=self._log.write_end,
                      pass_fds=() if options is None else (options,))
        kw["env"] = env
        kw["preexec_fn"] = _limit_kernel(self.limits, self.sandboxed)
        try:
            return await super().launch_kernel(kernel_cmd, **kw)
        finally:
            if options is not None:
                os.close(options)
            if self._log is not None:
                self._log.handed_over()

    def _fork(self, kernel_cmd, env):
        """The kernel, forked by the warm-kernel server: this provisioner then handles it as
        the process it would have started (its process, pid, pgid and cwd, as
        LocalProvisioner.launch_kernel sets them)."""
        # its output goes to this process's own (the grading log), as a cold kernel's
        # does: the grader never reads a file the kernel could have replaced
        self._forked = warm.Forked(self.server, dict(
            uid=self._private.uid, cwd=str(self._private.work), env=env,
            limits=_rlimits(self.limits, True), argv=["ipykernel_launcher", *kernel_cmd[3:]]),
            log=self._log.write_end)
        self._log.handed_over()
        self.process, self.pid, self.pgid = self._forked, self._forked.pid, None
        self.cwd = str(self._private.work)
        return self.connection_info

    async def kill(self, restart: bool = False) -> None:
        await super().kill(restart=restart)
        # the kernel manager then looks whether the kernel has gone ten times a second
        # (jupyter_client 8.10.0): waited for here a hundred times a second, its first look
        # finds it gone (shutdown_kernel(now=True), a plain kernel: 0.11 s, 0.02 s so). At
        # most 5 s, as the manager's own wait
        for _ in range(500):
            if await self.poll() is not None:
                return
            await asyncio.sleep(0.01)

    async def cleanup(self, restart: bool = False) -> None:
        # (reached by every cleanup of the kernel: its shutdown, and nbclient's of a kernel
        # that died)
        process = self.process or self._forked
        incident = _exit_incident(process.poll() if process else None, self.limits)
        if incident and incident not in INCIDENTS:
            INCIDENTS.append(incident)
        left = getattr(process, "left", "")
        if left:
            left = (f"the kernel left {left} behind, killed and removed before the next "
                    "kernel")
            if left not in INCIDENTS:
                INCIDENTS.append(left)
        await super().cleanup(restart=restart)
        if restart:
            return
        if self._forked is not None:
            self._forked.close()              # the server clears the kernel's user
        if self._log is not None:
            self._log.close()
        if self._private is not None:
            self._private.remove()
        if self._sockets is not None:
            shutil.rmtree(self._sockets, ignore_errors=True)
        self._forked = self._private = self._sockets = self._log = None


def kernel_manager(limits: Limits, sandboxed: bool = True,
                   server: str = "") -> type[AsyncKernelManager]:
    """The kernel manager class for one submission's kernel: forked by the warm-kernel server
    listening at `server` (warm.py), or else started cold (GradingProvisioner)."""

    class GradingKernelManager(patches.ProvisionedKernelManager):
        @default("client_factory")
        def _client_factory_default(self):
            return GradingKernelClient

        def make_provisioner(self):
            provisioner = GradingProvisioner(kernel_id=self.kernel_id,
                                             kernel_spec=self.kernel_spec, parent=self)
            provisioner.limits, provisioner.sandboxed, provisioner.server = (
                limits, sandboxed, server)
            return provisioner

    return GradingKernelManager


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
