"""The grader's side of warm kernels (``zygote.py`` is the other): the server of a grading run,
and the handle of one kernel it forked.

``Server()`` starts zygote.py in a sandbox over a spool folder of its own (the kernels' private
folders are made there), for the length of a grading run; ``Forked`` stands for one kernel as
the ``Popen`` that jupyter_client's provisioner expects, so that nbclient interrupts, kills and
waits for it as for any kernel. A root grader's server makes each kernel a user of its own;
a grader that is not root has its server give each kernel namespaces of its own (zygote.py
says how), so that kernels start warm wherever the sandbox runs but under a root that has no
users to spare (``unshare -r``), which grades cold.
"""
from __future__ import annotations

import ctypes
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from . import sandbox

_PR_SET_PDEATHSIG = 1
START_TIMEOUT = 120          # seconds: the first import of matplotlib may build its font list


class Unavailable(RuntimeError):
    pass


class Server:
    """zygote.py in its sandbox; `socket` is where kernels are asked for, `spool` where their
    private folders go. It starts importing at once; `ready()` waits until it has. A context
    manager: leaving it kills every kernel and removes the spool."""

    def __init__(self):
        if os.geteuid() == 0 and sandbox._uid() is None:
            # (a kernel of namespaces mode would be the machine's root, less its capabilities,
            # under a /proc of its own that bwrap has not made read-only where root may write)
            raise Unavailable("the grader is root without users to spare for its kernels "
                              "(a user namespace that maps one user): run it as a user")
        self.spool = Path(tempfile.mkdtemp(prefix="autograd-lab-spool-"))
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self):
        # a kernel passes through to its own folder, lists nothing (a root grader's: a kernel
        # of namespaces mode sees no spool but its own folder)
        self.spool.chmod(0o711)
        (self.spool / "control").mkdir(mode=0o700)
        self.socket = self.spool / "control" / "zygote.sock"
        home = self.spool / "server-home"
        home.mkdir(mode=0o755)
        # the server imports matplotlib once for every kernel: its font list, readable by all
        sandbox.copy_font_cache(home, None)
        for path in [home, *home.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        env = sandbox.kernel_env(home, {"NBGRADER_EXECUTION": "autograde"})
        self.log = self.spool / "control" / "server.log"
        argv, options = sandbox.hide_options(sandbox.zygote_command(self.spool, self.socket, env))
        argv[0] = shutil.which(argv[0]) or argv[0]
        try:
            with open(self.log, "wb") as log:
                # (bwrap's own environment, which its init keeps: nothing of the grader's)
                self.process = subprocess.Popen(
                    argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                    preexec_fn=_die_with_grader, env={"LANG": "C.UTF-8"},
                    pass_fds=() if options is None else (options,))
        finally:
            if options is not None:
                os.close(options)

    def ready(self) -> str:
        """Wait until the server has imported what kernels import; returns its socket."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout=START_TIMEOUT)
        line = self.process.stdout.readline() if ready else b""
        if line.strip() != b"ready":
            said = self.log.read_text(errors="replace").strip().splitlines() or ["no message"]
            raise Unavailable(f"the warm-kernel server did not start ({said[-1]})")
        return str(self.socket)

    def stop(self):
        process = getattr(self, "process", None)
        if process is not None:
            process.stdin.close()          # its lifeline: every kernel is killed, and it ends
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            process.stdout.close()
        shutil.rmtree(self.spool, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _die_with_grader():
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class Forked:
    """One kernel the server forked, with the methods of subprocess.Popen that a provisioner
    uses. Its connection is its life: closing it (or the grader's end) kills the kernel's user.
    ``left``: what the kernel's user left running or made (System V IPC) when it ended, which
    the server killed and removed. ``log``: a file descriptor the kernel's output goes to (the
    write end of the pipe the grading process copies into its log, as for a cold kernel)."""

    stdin = stdout = stderr = None

    def __init__(self, server_socket: str | os.PathLike, request: dict, log: int | None = None):
        self.returncode = None
        self.left = ""          # what the kernel's user left behind, as the server found it
        self._buffer = b""
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.connect(str(server_socket))
            message = json.dumps(request).encode() + b"\n"
            if log is None:
                self._sock.sendall(message)
            else:
                sent = socket.send_fds(self._sock, [message], [log])
                self._sock.sendall(message[sent:])
        except OSError as error:
            self.close()
            raise OSError(f"the warm-kernel server is not there ({error})") from None
        reply = self._next(timeout=60)
        if not reply or "pid" not in reply:
            self.close()
            raise OSError(f"the warm-kernel server did not start a kernel: {reply}")
        self.pid = reply["pid"]

    def _send(self, message):
        self._sock.sendall(json.dumps(message).encode() + b"\n")

    def _next(self, timeout: float | None):
        """The server's next message; None when there is none within `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._sock.settimeout(left)
            try:
                data = self._sock.recv(4096)
            except (BlockingIOError, TimeoutError):
                return None
            except OSError:
                data = b""
            if not data:          # the server is gone, and its kernels with it
                return {"exit": -signal.SIGKILL}
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def _read(self, timeout):
        message = self._next(timeout)
        if message and "exit" in message:
            self.returncode = message["exit"]
            self.left = str(message.get("left") or "")[:500]
        return message

    def poll(self):
        while self.returncode is None and self._sock.fileno() >= 0 and self._read(0):
            pass
        return self.returncode

    def wait(self, timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired("kernel", timeout)
            self._read(left)
        return self.returncode

    def send_signal(self, signum: int):
        if self.returncode is None:
            try:
                self._send({"signal": int(signum)})
            except OSError:
                pass

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def close(self):
        self._sock.close()
