"""Starting a grading kernel, and the limits it runs under.

``kernel_manager(limits, sandboxed, server)`` is the one place that decides how a grading kernel
is started, through its kernel provisioner (``GradingProvisioner``, jupyter_client's extension
point for it): forked by the grading run's warm-kernel server (``sandbox/warm.py``,
``sandbox/inside/zygote.py``) when it has one, else in a bubblewrap sandbox of its own
(``sandbox/sandbox.py``), or as a plain local process with ``--no-sandbox``; always under
limits (``Limits``), and dying with its grader. Its client's channels read no message larger
than ``MAX_MESSAGE``. What the grader changes of jupyter_client's private parts is in
``patches.py``. What a limit stopped is collected in ``INCIDENTS`` for the grading process to
report; ``reading/execute.py``, which runs the notebook in this kernel, adds what it cut.
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
from dataclasses import dataclass
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from traitlets import Type, default

from autograd_lab.checks import VERDICTS_ENV

from .. import patches
from ..sandbox import sandbox, warm

_PR_SET_PDEATHSIG = 1

# what this grading process saw go wrong in its kernel (a limit, the output cut); the worker
# empties it before a submission and reports it after
INCIDENTS: list[str] = []

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
        # counted per user: it holds for the kernel's own user in the sandbox (root is exempt),
        # or in the kernel's own user namespace; set once that namespace exists (the warm
        # server's fork, sandbox.command's prlimit), never before it
        found.append((resource.RLIMIT_NPROC, limits.processes, limits.processes))
        # no POSIX message queue: one outlives its maker in the IPC namespace that warm
        # kernels share, and, unlike System V's objects (zygote.py), none can be listed to
        # be removed
        found.append((resource.RLIMIT_MSGQUEUE, 0, 0))
    return found


def _limit_kernel(limits: Limits, sandboxed: bool):
    """Runs in the kernel's process (or bwrap's) between fork and exec. (Not the process
    limit of a sandboxed kernel: the sandbox sets it inside, sandbox.command says why.)"""
    def apply():
        for limit, soft, hard in _rlimits(limits, sandboxed):
            if limit != resource.RLIMIT_NPROC:
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
                sandbox.command(kernel_cmd, self._private, env, self.limits.processes))
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
