"""Warm grading kernels: one process in one sandbox imports what a lesson's kernel imports, once,
and forks a kernel for each submission.

A kernel started cold spends most of a short lesson's grading on imports: Python, IPython's
kernel, numpy, matplotlib and autograd_lab cost about 0.85 s of CPU, of 1.5 s for a whole
notebook of lesson 03 (2026-11-25). A kernel forked from here starts with them in memory.

This file runs *inside* the bubblewrap sandbox (``python zygote.py SOCKET MODE``, started by
``warm.Server``). A kernel forked here starts in its private folder, under its limits, with
nothing of this process left open but the modules in memory, and kept apart from every other
kernel in one of two ways (MODE):

``users`` (a grader that is root, with users to spare): this server is root in the sandbox, with
  only the capabilities to change user and to signal (setpriv bounds them before this starts).
  Right after the fork, a kernel becomes a user of its own (as ``sandbox.command``'s setpriv
  does for a cold kernel). No kernel can write the sandbox's /tmp: its temporary files are in
  its private folder, which its grader removes. When a kernel ends, or its grader hangs up,
  every process of that user is killed and the System V IPC objects it made are removed.
``namespaces`` (any other grader: the instructor's own user, a pod's, a Slurm task's): this
  server has no privilege at all, and every kernel runs as its user. So each kernel gets
  namespaces of its own, which need none (an unprivileged user namespace owns them): its own
  processes (it sees, signals and traces no other kernel, and every process it starts dies
  with it), its own System V and POSIX IPC, its own network (no abstract socket between two
  kernels), and its own mounts, where /tmp, /dev/shm and the spool are covered by empty,
  read-only folders but for the kernel's private folder. Its capabilities in that user
  namespace are dropped before the kernel starts; the mounts it was given cannot be undone
  without them. A small init of its namespace waits for the kernel, relays the grader's
  signals to it, and says what it left running.

Either way nothing passes to the next learner. Nothing here reads a file a kernel wrote, and
whatever goes wrong with one kernel's request is that kernel's failure, never this server's.

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
In ``namespaces`` mode the request's "uid" is null: every kernel is this server's user.
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
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAPABILITY_VERSION_3 = 0x20080522
_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = (
    0x00020000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
# (the numbers of syscalls added after Linux 5.0 are the same on every architecture)
_SYS_OPEN_TREE, _SYS_MOVE_MOUNT = 428, 429
_AT_FDCWD, _AT_RECURSIVE, _OPEN_TREE_CLONE, _MOVE_MOUNT_F_EMPTY_PATH = -100, 0x8000, 1, 4
_MAX_REQUEST = 1024**2      # bytes of one request: a grader's, but bounded all the same


def warm_up():
    """Import what the lessons' kernels import; the forks share it. (None of it starts a
    thread: a fork copies only the thread that forks.) The lessons that plot import
    pyplot in the cell that first plots (their first cell imports only the engine): loaded
    here, it costs their forks nothing there, and the others nothing either (a fork with it
    in memory takes the 6 to 9 ms one without it takes, 2026-12-02)."""
    import sqlite3                   # noqa: F401  (the kernel's history, in memory)

    import IPython.core.debugger     # noqa: F401
    import ipykernel.debugger        # noqa: F401  (debugpy: half of a kernel's own start)
    import ipykernel.ipkernel        # noqa: F401
    import ipykernel.kernelapp       # noqa: F401
    import matplotlib.pyplot         # noqa: F401  (the lessons that plot; Agg: MPLBACKEND)
    import numpy                     # noqa: F401

    import autograd_lab.checks       # noqa: F401
    import autograd_lab.viz          # noqa: F401


def _become_kernel(request, log_fd):
    """In the forked child: drop to the kernel's user (``users``) or drop every capability it
    holds in its own namespaces (``namespaces``), and run the kernel. Never returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)      # the server's, about to be closed (and its number reused)
        os.setsid()        # its own process group: an interrupt reaches it and its children
        # (in its own user namespace the process limit counts this kernel's processes alone)
        for limit, soft, hard in request["limits"]:
            resource.setrlimit(limit, (soft, hard))
        libc = _libc()
        uid = request["uid"]
        if uid is None:
            _drop_capabilities(libc)
        else:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)        # and every capability is gone with root
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


def _processes_of(uid, but=()):
    """The live processes of `uid` (a zombie is gone but for its exit code), but those in `but`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in but:
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


def _ipc_of(uid=None):
    """(kind, id) of every System V IPC object `uid` made or owns (any, when uid is None: in a
    kernel's own IPC namespace every object is its)."""
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
            if uid is None or str(uid) in (row.get("uid"), row.get("cuid")):
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
    return _said(len(left), objects)


def _said(processes, objects):
    """What a kernel left, for its grader: "2 process(es), 1 System V semaphore set(s)"."""
    kinds = {"shm": "shared memory segment", "sem": "semaphore set", "msg": "message queue"}
    said = [f"{processes} process(es)"] if processes else []
    said += [f"{n} System V {what}(s)" for kind, what in kinds.items()
             if (n := sum(k == kind for k, _ in objects))]
    return ", ".join(said)


# -- namespaces mode: a kernel kept apart by namespaces of its own, no privilege needed --------

def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                           ctypes.c_char_p]
    return libc


def _checked(result, what):
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _mount(libc, source, target, fstype, flags, data=None):
    _checked(libc.mount(source and os.fsencode(source), os.fsencode(target),
                        fstype and fstype.encode(), flags, data and data.encode()),
             f"mount {target}")


def _own_namespaces(private_root, spool):
    """In a kernel's first process: namespaces of its own (user, mounts, processes, IPC,
    network), with /tmp, /dev/shm and the spool covered by empty read-only folders but for
    `private_root`, bound back where it was. The next process forked is its namespace's init."""
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    _checked(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWIPC
                          | _CLONE_NEWNET), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
    # the private folder, as a detached copy of its mount (Linux 5.2's open_tree), before it
    # is covered; moved back where it was after
    kept = libc.syscall(_SYS_OPEN_TREE, _AT_FDCWD, os.fsencode(private_root),
                        _OPEN_TREE_CLONE | _AT_RECURSIVE)
    if kept < 0:
        _checked(-1, "open_tree")
    covered = ["/tmp"] + [p for p in ("/dev/shm", spool)
                          if os.path.isdir(p) and not p.startswith("/tmp/")]
    for path in covered:
        _mount(libc, "tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=64k,mode=0755")
    os.makedirs(private_root)
    _checked(libc.syscall(_SYS_MOVE_MOUNT, kept, b"", _AT_FDCWD, os.fsencode(private_root),
                          _MOVE_MOUNT_F_EMPTY_PATH), "move_mount")
    os.close(kept)
    for path in covered:
        _mount(libc, None, path, None,
               _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)


def _drop_capabilities(libc):
    """Every capability the kernel holds in its user namespace, gone: the mounts it was given
    (the covers over the other kernels' folders) stay as they are."""
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for capability in range(last + 1):
        _checked(libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0), "PR_CAPBSET_DROP")
    _checked(libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient")
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    _checked(libc.capset(header, (ctypes.c_uint32 * 6)()), "capset")


def _close_all_but(*kept):
    kept = sorted(fd for fd in kept if fd is not None)
    start = 3
    for fd in kept:
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))


def _fork_in_namespaces(kernel, request, spool):
    """``namespaces`` mode's kernel: a first process (this server's child, outside the new
    namespaces: no kernel sees it) makes the namespaces and waits; its child is their init
    (``_init``), and the init's child the kernel. The grader's signals go to the init through
    `kernel.commands`, and what the kernel left comes back through `kernel.status`."""
    private_root = os.path.dirname(os.path.normpath(request["cwd"]))
    if os.path.dirname(private_root) != spool or os.path.islink(private_root):
        raise ValueError("a kernel's folder is in the spool")
    commands, kernel.commands = os.pipe()
    kernel.status, status = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            os.setsid()
            _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            _close_all_but(commands, status, kernel.log)
            _own_namespaces(private_root, spool)
            init = os.fork()
            if init == 0:
                _init(request, kernel.log, commands, status)
            _close_all_but()
            os.waitpid(init, 0)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(commands)
    os.close(status)
    return pid


def _init(request, log_fd, commands, status):
    """The init of a kernel's process namespace (pid 1 there, which nothing in it can kill or,
    undumpable, trace): starts the kernel, relays the grader's signals to its process group,
    and when the kernel ends or the grader hangs up kills whatever is left in the namespace
    and says what that was. Never returns."""
    report = {"exit": -signal.SIGKILL, "left": ""}
    try:
        libc = _libc()
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        _mount(libc, "proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        kernel = os.fork()
        if kernel == 0:
            os.close(commands)
            os.close(status)
            _become_kernel(request, log_fd)
        if log_fd is not None:
            os.close(log_fd)
        ended = os.pidfd_open(kernel)
        selector = selectors.DefaultSelector()
        selector.register(commands, selectors.EVENT_READ)
        selector.register(ended, selectors.EVENT_READ)
        while True:
            events = {key.fd for key, _ in selector.select(timeout=1.0)}
            if commands in events:
                asked = os.read(commands, 64)
                if not asked:                    # the grader hung up
                    break
                for signum in asked:
                    try:
                        os.killpg(kernel, signum)
                    except OSError:
                        try:
                            os.kill(kernel, signum)
                        except OSError:
                            pass
            if ended in events:
                _, waited = os.waitpid(kernel, 0)
                report["exit"] = os.waitstatus_to_exitcode(waited)
                break
            _reap_orphans(kernel)
        report["left"] = _said(len(_processes_of(os.getuid(), but=(1,))), _ipc_of())
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            try:
                os.kill(-1, signal.SIGKILL)      # every process of the namespace but this
            except OSError:                      # (none)
                pass
            os.write(status, json.dumps(report).encode())
        finally:
            os._exit(0)


def _reap_orphans(kernel):
    """The namespace's orphans are its init's children: reaped, but never the kernel."""
    while True:
        try:
            found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if found is None or found.si_pid == kernel:
            return
        os.waitpid(found.si_pid, 0)


def _ended_in_namespaces(kernel, code):
    """What the init reported when the kernel's first process ended: its exit and what it
    left (a first process that failed before there was an init: its own exit code)."""
    try:
        said = json.loads(os.read(kernel.status, 65536) or b"null")
    except (OSError, ValueError):
        said = None
    if isinstance(said, dict) and isinstance(said.get("exit"), int):
        return said["exit"], str(said.get("left") or "")
    return code, ""


def probe_namespaces(spool):
    """Whether a kernel could be given its namespaces here (a machine or container may forbid
    unprivileged user namespaces): raises OSError, saying why, if not."""
    trial = os.path.join(spool, "namespaces-probe")
    os.mkdir(trial, 0o700)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            _own_namespaces(trial, spool)
            init = os.fork()
            if init == 0:               # (what the init of a kernel's namespaces mounts)
                try:
                    _mount(_libc(), "proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
                    os._exit(0)
                except BaseException:
                    traceback.print_exc()
                    os._exit(1)
            code = os.waitstatus_to_exitcode(os.waitpid(init, 0)[1])
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, waited = os.waitpid(pid, 0)
    os.rmdir(trial)
    if os.waitstatus_to_exitcode(waited) != 0:
        raise OSError("a kernel cannot have namespaces of its own here (unprivileged user "
                      "namespaces are off?)")


class Kernel:
    def __init__(self, conn):
        self.conn, self.buffer, self.pid, self.uid, self.code = conn, b"", None, None, None
        self.log = None             # the log's file descriptor, as the grader passed it
        # (namespaces mode) the pipes to and from the init of the kernel's namespaces
        self.commands = self.status = None

    def send(self, message):
        try:
            self.conn.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            pass

    def close(self):
        for name in ("log", "commands", "status"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)        # (the commands' end: the init kills what is left)
                setattr(self, name, None)
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


def _start(kernel, request, kernels, spool):
    if spool is not None:                   # namespaces mode: every kernel is this user
        sys.stdout.flush()
        sys.stderr.flush()
        kernel.pid = _fork_in_namespaces(kernel, dict(request, uid=None), spool)
        if kernel.log is not None:
            os.close(kernel.log)
            kernel.log = None
        kernel.send({"pid": kernel.pid})
        return
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


def _handle(kernel, line, kernels, spool):
    request = json.loads(line)
    if not isinstance(request, dict):
        raise ValueError("a request is a JSON object")
    if "uid" in request and kernel.pid is None and kernel.uid is None:
        _start(kernel, request, kernels, spool)
    elif "signal" in request and kernel.pid is not None and kernel.code is None:
        signum = int(request["signal"])
        if kernel.commands is not None:     # namespaces mode: its init relays it
            if 0 < signum < signal.NSIG:
                try:
                    os.write(kernel.commands, bytes([signum]))
                except OSError:
                    pass
            return
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


def serve(path, spool=None):
    """Serve kernels at the socket `path`; `spool` (namespaces mode): where their folders are."""
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
                        kernel.close()
                    return
            else:
                kernel = kernels[key.fileobj]
                # whatever goes wrong with one kernel's connection ends that kernel only
                try:
                    alive = _receive(kernel)
                    while b"\n" in kernel.buffer:
                        line, kernel.buffer = kernel.buffer.split(b"\n", 1)
                        _handle(kernel, line, kernels, spool)
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
                    if kernel.status is not None:
                        kernel.code, left = _ended_in_namespaces(kernel, kernel.code)
                    else:
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
    # (the spool is the working directory bwrap starts this in)
    spool = os.getcwd() if sys.argv[2:] == ["namespaces"] else None
    if spool is not None:
        probe_namespaces(spool)
    warm_up()
    serve(sys.argv[1], spool)
