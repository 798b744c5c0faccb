"""The kernel a submission runs in, and the two nbgrader preprocessors that run it.

``kernel_manager(limits)`` is the one place that decides how a grading kernel is started: today
a plain local kernel under a memory limit that dies with its grader; a sandbox (bubblewrap) is a
different launch command in the same place. ``GradingExecute`` is nbgrader's ``Execute`` with
that kernel manager and an interrupt that must work; ``TruncateOutput`` keeps hundreds of
megabytes of printed output out of the gradebook, the autograded notebook and the feedback.
"""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import time
from dataclasses import dataclass
from queue import Empty

from jupyter_client.manager import AsyncKernelManager
from nbclient.util import ensure_async
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from nbgrader.preprocessors.execute import UnresponsiveKernelError
from traitlets import Float, Integer

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Limits:
    memory: int = 2 * 1024**3       # bytes of address space for the kernel process


def _limit_kernel(limits: Limits):
    """Runs in the kernel's process between fork and exec."""
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory, limits.memory))
        if sys.platform == "linux":
            # a kernel outlives a grader that was killed (wall-clock limit) unless told to die
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    return apply


def kernel_manager(limits: Limits) -> type[AsyncKernelManager]:
    """The kernel manager class for one submission's kernel."""

    class GradingKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            env = dict(kw.get("env") or os.environ)
            # one BLAS thread: the grader runs one kernel per core already
            env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                       MPLBACKEND="Agg")
            kw["env"] = env
            kw["preexec_fn"] = _limit_kernel(limits)
            await super()._async_launch_kernel(kernel_cmd, **kw)

    return GradingKernelManager


class GradingExecute(Execute):
    """nbgrader's Execute, with the grading kernel, and a timeout that either stops the cell or
    fails the submission at once (nbgrader would wait out every later cell's timeout against a
    kernel that swallowed the KeyboardInterrupt)."""

    interrupt_grace = Float(5.0, help="Seconds a kernel gets to stop after the interrupt.").tag(
        config=True)
    memory_limit = Integer(Limits.memory, help="Bytes of address space per kernel.").tag(
        config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.kernel_manager_class = kernel_manager(Limits(memory=self.memory_limit))

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
