"""Warm grading kernels: one process in one sandbox imports what a lesson's kernel imports, once,
and forks a kernel for each submission.

A kernel started cold spends most of a short lesson's grading on imports: Python, IPython's
kernel, numpy, matplotlib and autograd_lab cost about 0.85 s of CPU, of 1.5 s for a whole
notebook of lesson 03 (2026-11-25). A kernel forked from here starts with them in memory.

This file runs *inside* the bubblewrap sandbox (``python zygote.py SOCKET SPOOL``, started by
``warm.Server``), as root there, with only the capabilities to change user and to signal
(setpriv bounds them before this starts). Right after the fork, a kernel becomes a user of its
own (as ``sandbox.command``'s setpriv does for a cold kernel), in its private folder, under its
limits, with nothing of this process left open but the modules in memory. No kernel can write
the sandbox's /tmp: its temporary files are in its private folder, which its grader removes.
When a kernel ends, or its grader hangs up, every process of that user is killed and the
System V IPC objects it made are removed: nothing passes to the next learner. Nothing here
reads a file a kernel wrote, and whatever goes wrong with one kernel's request is that
kernel's failure, never this server's.

Protocol: JSON lines over a unix socket in a folder only root can open, one connection a kernel.
  grader -> here: {"uid", "cwd", "env", "limits": [[resource, soft, hard]...], "argv"}, with
                  the kernel's log passed as a file descriptor (its stdout and stderr: a
                  pipe the grading process copies into its log; never a file or a path)
  here -> grader: {"pid": n}         started (its pid in the sandbox), or {"error": "..."}
  grader -> here: {"signal": n}      sent to the kernel's process group
  here -> grader: {"exit": code, "left": "..."}  it ended (a negative code: the signal that
                                     ended it); what its user left, killed and removed
  the grader hangs up: the kernel and whatever its user started are killed.
Standard input is the grader's lifeline: when it closes, every kernel is killed and this ends.
"""
import ctypes
import json
import os
import resource
import selectors
import signal
import socket
import sys
import time
import traceback

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_MAX_REQUEST = 1024**2      # bytes of one request: a grader's, but bounded all the same


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


def _become_kernel(request, log_fd):
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
        null = os.open(os.devnull, os.O_RDWR)
        log = null if log_fd is None else log_fd
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
        # (the server runs under PYTHONSAFEPATH: neither its folder nor the kernel's working
        # directory is on the import path, as for a cold `python -P -m ipykernel_launcher`)
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
    """The live processes of `uid` (a zombie is gone but for its exit code)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    with open(f"/proc/{name}/stat", "rb") as stat:
                        if stat.read().rpartition(b")")[2].split()[0] != b"Z":
                            found.append(int(name))
            except (OSError, IndexError):
                pass
    return found


# System V IPC objects (/proc/sysvipc/<kind>), each kind with the libc call that removes one
# (IPC_RMID): they outlive their maker, in the IPC namespace every kernel of this server shares
_IPC_RMID = 0
_IPC = {"shm": lambda libc, i: libc.shmctl(i, _IPC_RMID, None),
        "sem": lambda libc, i: libc.semctl(i, 0, _IPC_RMID),
        "msg": lambda libc, i: libc.msgctl(i, _IPC_RMID, None)}


def _ipc_of(uid):
    """(kind, id) of every System V IPC object `uid` made or owns."""
    found = []
    for kind in _IPC:
        try:
            with open(f"/proc/sysvipc/{kind}") as table:
                lines = table.read().splitlines()
        except OSError:
            continue
        header = lines[0].split() if lines else []
        for line in lines[1:]:
            row = dict(zip(header, line.split()))
            if str(uid) in (row.get("uid"), row.get("cuid")):
                found.append((kind, int(row[header[1]])))
    return found


# the real and saved user of the helper that clears a kernel's user (its effective user is
# the kernel's): no kernel's (those are 200000 + a process id, below 4.4 million), so that no
# process of the user it clears may signal or trace it
_CLEARER = 4_100_000_000


def _clear_user(uid):
    """Kill every process of `uid` (a daemon, a fork bomb's children) and remove the System V
    shared memory, semaphores and message queues it made or owns: nothing it leaves passes to
    the next learner. Returns what was left, for its grader ("" if nothing). (Its files are
    all in its private folder, which its grader removes: nothing else here is writable to it.)

    A helper forked for it takes `uid` as its effective user and calls kill(-1, SIGKILL):
    every process of the user is signalled at once, and one forking as the signal comes takes
    its child along (Linux refuses or signals the fork), where a listing of /proc and a kill
    each misses the child of a process that forks and exits in a loop. The helper's real and
    saved user are _CLEARER's, so none of those processes may stop it first. As their owner
    it may remove the user's IPC objects, which this server, without CAP_SYS_ADMIN, may not."""
    left = _processes_of(uid)
    objects = _ipc_of(uid)
    if not left and not objects:
        return ""
    helper = os.fork()
    if helper == 0:
        code = 1
        try:
            os.setgroups([])
            os.setresgid(_CLEARER, _CLEARER, _CLEARER)
            os.setresuid(_CLEARER, uid, _CLEARER)       # and every capability is gone
            for _ in range(3):
                try:
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:              # (none left to signal)
                    break
            libc = ctypes.CDLL(None, use_errno=True)
            for kind, ipc_id in _ipc_of(uid):
                _IPC[kind](libc, ipc_id)
            code = 0
        finally:
            os._exit(code)
    while True:
        try:
            os.waitpid(helper, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            pass
        break
    for _ in range(100):            # the kernel is this server's child: reaped here
        _reap()
        if not _processes_of(uid):
            break
        time.sleep(0.01)
    kinds = {"shm": "shared memory segment", "sem": "semaphore set", "msg": "message queue"}
    said = [f"{len(left)} process(es)"] if left else []
    said += [f"{n} System V {what}(s)" for kind, what in kinds.items()
             if (n := sum(k == kind for k, _ in objects))]
    return ", ".join(said)


class Kernel:
    def __init__(self, conn):
        self.conn, self.buffer, self.pid, self.uid, self.code = conn, b"", None, None, None
        self.log = None             # the log's file descriptor, as the grader passed it

    def send(self, message):
        try:
            self.conn.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            pass

    def close(self):
        if self.log is not None:
            os.close(self.log)
            self.log = None
        self.conn.close()


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


def _start(kernel, request, kernels):
    uid = int(request["uid"])
    if uid <= 0:
        kernel.send({"error": "a kernel's user must not be root"})
        return
    if any(k.uid == uid and k.code is None for k in kernels.values() if k is not kernel):
        kernel.send({"error": f"user {uid} is another live kernel's"})
        return
    kernel.uid = uid
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _become_kernel(request, kernel.log)
    kernel.pid = pid
    if kernel.log is not None:      # the kernel has it now; this server never writes there
        os.close(kernel.log)
        kernel.log = None
    kernel.send({"pid": pid})


def _handle(kernel, line, kernels):
    request = json.loads(line)
    if not isinstance(request, dict):
        raise ValueError("a request is a JSON object")
    if "uid" in request and kernel.pid is None and kernel.uid is None:
        _start(kernel, request, kernels)
    elif "signal" in request and kernel.pid is not None and kernel.code is None:
        try:
            os.killpg(kernel.pid, int(request["signal"]))
        except OSError:
            try:
                os.kill(kernel.pid, int(request["signal"]))
            except OSError:
                pass


def _receive(kernel):
    """Read what the kernel's grader sent (and the log's descriptor, sent with the request);
    False once the grader hung up."""
    data, fds, _, _ = socket.recv_fds(kernel.conn, 65536, 4)
    for fd in fds:                  # one log, passed once: anything more is closed
        if kernel.log is None and kernel.pid is None:
            kernel.log = fd
        else:
            os.close(fd)
    kernel.buffer += data
    if len(kernel.buffer) > _MAX_REQUEST:
        raise ValueError("a request larger than the server takes")
    return bool(data)


def _drop(kernel, kernels, selector):
    """The end of one kernel's connection: it and whatever its user started are killed."""
    try:
        selector.unregister(kernel.conn)
    except (KeyError, ValueError):
        pass
    kernels.pop(kernel.conn, None)
    if kernel.uid:
        _clear_user(kernel.uid)
    kernel.close()


def serve(path):
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
                try:
                    conn, _ = listener.accept()
                except OSError:
                    continue
                kernels[conn] = Kernel(conn)
                selector.register(conn, selectors.EVENT_READ)
            elif key.fileobj == sys.stdin.fileno():
                if not os.read(sys.stdin.fileno(), 4096):       # the grader is gone
                    for kernel in list(kernels.values()):
                        if kernel.uid:
                            _clear_user(kernel.uid)
                    return
            else:
                kernel = kernels[key.fileobj]
                # whatever goes wrong with one kernel's connection ends that kernel only
                try:
                    alive = _receive(kernel)
                    while b"\n" in kernel.buffer:
                        line, kernel.buffer = kernel.buffer.split(b"\n", 1)
                        _handle(kernel, line, kernels)
                except Exception as error:          # noqa: BLE001
                    traceback.print_exc()
                    kernel.send({"error": f"{type(error).__name__}: {error}"})
                    alive = False
                if not alive:                               # its grader hung up
                    _drop(kernel, kernels, selector)
        try:
            _reap()
            for kernel in list(kernels.values()):
                if kernel.pid is not None and kernel.code is None and kernel.pid in _exited:
                    kernel.code = _exited.pop(kernel.pid)
                    # what it left running or made, cleared before anyone waits
                    left = _clear_user(kernel.uid)
                    kernel.send({"exit": kernel.code, "left": left})
            # children that were no kernel (none are expected); a kernel's exit reaped while
            # another's user was cleared waits for the next round
            live = {k.pid for k in kernels.values()}
            for pid in [pid for pid in _exited if pid not in live]:
                del _exited[pid]
        except Exception:                           # noqa: BLE001 -- never the server's end
            traceback.print_exc()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # an interrupt is for a kernel, not for this
    warm_up()
    serve(sys.argv[1])
