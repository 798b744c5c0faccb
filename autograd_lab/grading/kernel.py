"""The kernel a submission runs in, and the two nbgrader preprocessors that run it.

``kernel_manager(limits, sandboxed, server)`` is the one place that decides how a grading kernel
is started: forked by the grading run's warm-kernel server (``warm.py``, ``zygote.py``) when it
has one, else in a bubblewrap sandbox of its own (``sandbox.py``), or as a plain local process
with ``--no-sandbox``; always under limits, and dying with its grader. ``GradingExecute`` is
nbgrader's ``Execute`` with that kernel manager and an interrupt that must work;
``TruncateOutput`` keeps hundreds of megabytes of printed output out of the gradebook, the
autograded notebook and the feedback. What a sandbox refused or a limit stopped is collected in
``INCIDENTS`` for the grading process to report.
"""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from nbclient.util import ensure_async
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from nbgrader.preprocessors.execute import UnresponsiveKernelError
from traitlets import Bool, Float, Integer, Unicode, default

from . import sandbox, warm

_PR_SET_PDEATHSIG = 1

# what this grading process saw go wrong in its kernel (a limit, the output cut); the worker
# empties it before a submission and reports it after
INCIDENTS: list[str] = []


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


class GradingKernelClient(AsyncKernelClient):
    """jupyter_client's client, less a fifth of a second at every kernel's start."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        # jupyter_client's own waits 0.2 s after the kernel_info handshake for more startup
        # messages, with both processes idle; nbclient matches every message to its request
        # anyway, so what startup sent is drained without waiting for more
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                msg = await ensure_async(self.shell_channel.get_msg(timeout=1))
            except Empty:
                pass
            else:
                if msg["msg_type"] == "kernel_info_reply":
                    try:      # IOPub is connected once the reply's status message arrives
                        await ensure_async(self.iopub_channel.get_msg(timeout=1))
                    except Empty:
                        pass
                    else:
                        self._handle_kernel_info_reply(msg)
                        break
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")
        while True:
            try:
                await ensure_async(self.iopub_channel.get_msg(timeout=0))
            except Empty:
                return


def kernel_manager(limits: Limits, sandboxed: bool = True,
                   server: str = "") -> type[AsyncKernelManager]:
    """The kernel manager class for one submission's kernel: forked by the warm-kernel server
    listening at `server` (warm.py), or else started cold."""
    spool = Path(server).parent.parent if server else None     # warm.Server: SPOOL/control/

    class GradingKernelManager(AsyncKernelManager):
        _private = None
        _forked = None

        @default("client_factory")
        def _client_factory_default(self):
            return GradingKernelClient

        async def _async_pre_start_kernel(self, **kw):
            if sandboxed:
                # the kernel works in a private copy of nbgrader's folder, and is reached over
                # sockets in that copy (the sandbox has no network)
                self._private = sandbox.Private(kw.get("cwd"), sandbox._uid(), parent=spool)
                sandbox.copy_font_cache(self._private.home, self._private.uid)
                kw["cwd"] = str(self._private.work)
                self.transport = "ipc"
                self.ip = str(self._private.run / "kernel")
                self.connection_file = str(self._private.run / "connection.json")
            return await super()._async_pre_start_kernel(**kw)

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            env = dict(kw.get("env") or os.environ)
            # one BLAS thread: the grader runs one kernel per core already
            env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                       MPLBACKEND="Agg")
            if self._private is not None:
                self._private.give(self.connection_file)
                env = sandbox.kernel_env(self._private.home, env)
                if spool and kernel_cmd[1:3] == ["-m", "ipykernel_launcher"]:
                    try:
                        return self._fork(kernel_cmd, env)
                    except OSError as error:      # the server is gone: this kernel starts cold
                        print(f"[WARNING] {error}; the kernel starts cold", file=sys.stderr)
                kernel_cmd = sandbox.command(kernel_cmd, self._private, env)
            kw["env"] = env
            kw["preexec_fn"] = _limit_kernel(limits, sandboxed)
            await super()._async_launch_kernel(kernel_cmd, **kw)

        def _fork(self, kernel_cmd, env):
            """The kernel, forked by the warm-kernel server: the provisioner then handles it as
            the process it would have started."""
            self._forked = warm.Forked(server, dict(
                uid=self._private.uid, cwd=str(self._private.work), env=env,
                limits=_rlimits(limits, True), argv=["ipykernel_launcher", *kernel_cmd[3:]],
                log=str(self._private.run / "kernel.log")))
            provisioner = self.provisioner
            provisioner.process, provisioner.pid, provisioner.pgid = (
                self._forked, self._forked.pid, None)
            provisioner.cwd = str(self._private.work)
            self._reconcile_connection_info(provisioner.connection_info)

        async def _async_wait(self, pollinterval: float = 0.1) -> None:
            # (jupyter_client looks ten times a second whether a killed kernel has gone: a
            # tenth of a second of every grading, idle)
            await super()._async_wait(pollinterval=0.01)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            process = getattr(self.provisioner, "process", None) or self._forked
            incident = _exit_incident(process.poll() if process else None, limits)
            if incident and incident not in INCIDENTS:
                INCIDENTS.append(incident)
            await super()._async_cleanup_resources(restart=restart)
            if restart:
                return
            if self._forked is not None:
                self._forked.close()              # the server clears the kernel's user
                log = self._private.run / "kernel.log"
                if log.exists():                  # into the grading log, as a cold kernel's
                    print(log.read_text(errors="replace")[-20_000:], file=sys.stderr)
            if self._private is not None:
                self._private.remove()
            self._forked = self._private = None

        # (nbclient cleans up a kernel that died with cleanup_resources, which jupyter_client
        # binds to its own method, not to an override of it)
        cleanup_resources = _async_cleanup_resources

    return GradingKernelManager


class GradingExecute(Execute):
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

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.kernel_manager_class = kernel_manager(
            Limits(memory=self.memory_limit, cpu_seconds=self.cpu_limit), self.sandboxed,
            self.warm_server)

    async def _async_handle_timeout(self, timeout, cell=None):
        reply = await super()._async_handle_timeout(timeout, cell)
        # the shell channel answers in order: a kernel_info reply means the cell has stopped
        msg_id = self.kc.kernel_info()
        deadline = time.monotonic() + self.interrupt_grace
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=left))
            except Empty:
                break
            if msg["parent_header"].get("msg_id") == msg_id:
                return reply
        raise UnresponsiveKernelError(
            f"a cell ran past the {timeout} s limit and ignored the interrupt")


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
        for output in cell.get("outputs", []):
            if "text" in output:
                output.text = self._cut(output.text)
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/") and isinstance(value, (str, list)):
                    output.data[mime] = self._cut(value)
            if "evalue" in output:
                output.evalue = self._cut(output.evalue)
        return cell, resources
