"""Warm grading kernels: one process in one sandbox imports what a lesson's kernel imports, once,
and forks a kernel for each submission.

A kernel started cold spends most of a short lesson's grading on imports: Python, IPython's
kernel, numpy, matplotlib and autograd_lab cost about 0.85 s of CPU, of 1.5 s for a whole
notebook of lesson 03 (2026-11-25). A kernel forked from here starts with them in memory.

This file runs *inside* the bubblewrap sandbox (``python zygote.py SOCKET SPOOL``, started by
``warm.Server``), as root there, with only the capabilities to change user and to signal. Right
after the fork, a kernel becomes a user of its own (as ``sandbox.command``'s setpriv does for a
cold kernel), in its private folder, under its limits, with nothing of this process left open
but the modules in memory. When a kernel ends, or its grader hangs up, every process of that
user is killed and its files in /tmp removed: nothing passes to the next learner.

Protocol: JSON lines over a unix socket in a folder only root can open, one connection a kernel.
  grader -> here: {"uid", "cwd", "env", "limits": [[resource, soft, hard]...], "argv", "log"}
  here -> grader: {"pid": n}         started (its pid in the sandbox), or {"error": "..."}
  grader -> here: {"signal": n}      sent to the kernel's process group
  here -> grader: {"exit": code}     it ended (a negative code: the signal that ended it)
  the grader hangs up: the kernel and whatever its user started are killed.
Standard input is the grader's lifeline: when it closes, every kernel is killed and this ends.
"""
import ctypes
import json
import os
import resource
import selectors
import shutil
import signal
import socket
import sys
import time
import traceback

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_SHARED = "/tmp"       # the one place every kernel of this sandbox may write (bwrap's /dev is not)
_spool = None          # the spool folder (serve() sets it): under /tmp, never cleared here


def warm_up():
    """Import what the lessons' kernels import; the forks share it. (None of it starts a
    thread: a fork copies only the thread that forks.)"""
    import sqlite3                   # noqa: F401  (the kernel's history, in memory)

    import IPython.core.debugger     # noqa: F401
    import ipykernel.debugger        # noqa: F401  (debugpy: half of a kernel's own start)
    import ipykernel.ipkernel        # noqa: F401
    import ipykernel.kernelapp       # noqa: F401
    import matplotlib.pyplot         # noqa: F401  (the backend is Agg: MPLBACKEND)
    import numpy                     # noqa: F401

    import autograd_lab.checks       # noqa: F401
    import autograd_lab.viz          # noqa: F401


def _become_kernel(request):
    """In the forked child: drop to the kernel's user and run the kernel. Never returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)      # the server's, about to be closed (and its number reused)
        os.setsid()        # its own process group: an interrupt reaches it and its children
        for limit, soft, hard in request["limits"]:
            resource.setrlimit(limit, (soft, hard))
        uid = request["uid"]
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)        # and every capability is gone with root
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)     # (a change of user cleared it)
        os.umask(0o077)
        os.chdir(request["cwd"])
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))    # the server's sockets, the lifeline
        os.environ.clear()
        os.environ.update(request["env"])
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT
                          else signal.SIG_DFL)
        import numpy
        numpy.random.seed()          # a process of its own would have drawn its own seed
        sys.argv = list(request["argv"])
        sys.path[0] = os.getcwd()    # as `python -m ipykernel_launcher` has it
        from ipykernel import kernelapp
        kernelapp.launch_new_instance(argv=sys.argv[1:])
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _processes_of(uid):
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    found.append(int(name))
            except OSError:
                pass
    return found


def _clear_user(uid):
    """Kill every process of `uid` (a daemon, a fork bomb's children) and remove its files from
    the /tmp that kernels share."""
    for _ in range(20):             # a process may fork while the others are killed
        pids = _processes_of(uid)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()
        time.sleep(0.01)
    for folder, dirs, files in os.walk(_SHARED):
        if folder == _SHARED:
            # not the spool, mounted in /tmp too: the kernels' private folders are the
            # grader's to read (the kernel's log) and remove
            dirs[:] = [d for d in dirs if os.path.join(folder, d) != _spool]
        for name in files + dirs:
            path = os.path.join(folder, name)
            try:
                if os.lstat(path).st_uid == uid:
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        os.unlink(path)
            except OSError:
                pass


class Kernel:
    def __init__(self, conn):
        self.conn, self.buffer, self.pid, self.uid, self.code = conn, b"", None, None, None

    def send(self, message):
        try:
            self.conn.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            pass


_exited = {}      # pid -> exit code, of children reaped before their kernel was looked up


def _reap():
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _exited[pid] = os.waitstatus_to_exitcode(status)


def _start(kernel, request):
    kernel.uid = int(request["uid"])
    if kernel.uid <= 0:
        kernel.send({"error": "a kernel's user must not be root"})
        return
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _become_kernel(request)
    kernel.pid = pid
    kernel.send({"pid": pid})


def _handle(kernel, line):
    request = json.loads(line)
    if "uid" in request and kernel.pid is None:
        _start(kernel, request)
    elif "signal" in request and kernel.pid is not None and kernel.code is None:
        try:
            os.killpg(kernel.pid, int(request["signal"]))
        except OSError:
            try:
                os.kill(kernel.pid, int(request["signal"]))
            except OSError:
                pass


def serve(path, spool):
    global _spool
    _spool = spool
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ)
    # a kernel's end wakes the loop at once (the grader is waiting for it)
    woken, wake = socket.socketpair()
    woken.setblocking(False)
    wake.setblocking(False)
    signal.set_wakeup_fd(wake.fileno(), warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector.register(woken, selectors.EVENT_READ)
    kernels = {}                     # connection -> Kernel
    print("ready", flush=True)
    while True:
        for key, _ in selector.select(timeout=1.0):
            if key.fileobj is woken:
                while True:
                    try:
                        woken.recv(4096)
                    except BlockingIOError:
                        break
            elif key.fileobj is listener:
                conn, _ = listener.accept()
                kernels[conn] = Kernel(conn)
                selector.register(conn, selectors.EVENT_READ)
            elif key.fileobj == sys.stdin.fileno():
                if not os.read(sys.stdin.fileno(), 4096):       # the grader is gone
                    for kernel in kernels.values():
                        if kernel.uid:
                            _clear_user(kernel.uid)
                    return
            else:
                kernel = kernels[key.fileobj]
                data = key.fileobj.recv(65536)
                kernel.buffer += data
                while b"\n" in kernel.buffer:
                    line, kernel.buffer = kernel.buffer.split(b"\n", 1)
                    _handle(kernel, line)
                if not data:                                 # its grader hung up
                    selector.unregister(key.fileobj)
                    key.fileobj.close()
                    del kernels[key.fileobj]
                    if kernel.uid:
                        _clear_user(kernel.uid)
        _reap()
        for kernel in kernels.values():
            if kernel.pid is not None and kernel.code is None and kernel.pid in _exited:
                kernel.code = _exited.pop(kernel.pid)
                _clear_user(kernel.uid)           # what it left running, before anyone waits
                kernel.send({"exit": kernel.code})
        _exited.clear()       # children that were no kernel (none are expected)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # an interrupt is for a kernel, not for this
    warm_up()
    serve(sys.argv[1], sys.argv[2])
