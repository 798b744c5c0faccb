"""A throwaway one-node Slurm on this machine, for tests and benchmarks/cluster.py: munged (as
the `munge` user), slurmctld and slurmd, all on loopback, free ports, in a temporary folder,
and all stopped at the end (``with SlurmCluster() as slurm: slurm.sbatch(...)``).

Debian's `slurm-wlm` and `munge` (scripts/setup.sh installs them as root). Needs root: slurmd
runs jobs as their owner, and the test's jobs are root's. `missing()` says why one cannot run.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol")


def missing() -> str | None:
    """Why a one-node Slurm cannot run here, or None."""
    if os.geteuid() != 0:
        return "a one-node Slurm needs root (slurmd runs each job as its owner)"
    absent = [p for p in PROGRAMS if not shutil.which(p) and not Path("/usr/sbin", p).exists()]
    if absent:
        return (f"Slurm is not installed ({', '.join(absent)} missing; scripts/setup.sh "
                f"installs slurm-wlm and munge when run as root)")
    try:
        import pwd
        pwd.getpwnam("munge")
    except KeyError:
        return "there is no `munge` user (Debian's munge package makes it)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _program(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin") / name)


CONF = """\
ClusterName=autogradlab
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# (a requeued job starts again only once slurmd has forgotten the credential it revoked:
#  cred_expire seconds, 120 by default, 5 at least; a job started sooner is killed, "Job
#  credential revoked")
AuthInfo=socket={munge_socket},cred_expire=5
CredType=cred/munge
StateSaveLocation={top}/state
SlurmdSpoolDir={top}/spool
SlurmctldPidFile={top}/slurmctld.pid
SlurmdPidFile={top}/slurmd.pid
SlurmctldLogFile={top}/slurmctld.log
SlurmdLogFile={top}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# the node's CPUs as configured here, whatever the machine has (a benchmark runs more tasks
# than this machine has cores, and says so)
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobRequeue=1
MinJobAge=600
KillWait=5
NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName=grading Nodes={node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""


class SlurmCluster:
    """munged, slurmctld and slurmd on loopback; `env` is the environment a Slurm command
    needs (SLURM_CONF). A context manager: leaving it stops all three and removes the folder."""

    def __init__(self, cpus: int = 2, node: str = "grader"):
        reason = missing()
        if reason:
            raise RuntimeError(reason)
        self.cpus, self.node = cpus, node
        self.processes: list[subprocess.Popen] = []
        self.top = Path(tempfile.mkdtemp(prefix="autograd-lab-slurm-"))

    def __enter__(self) -> "SlurmCluster":
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _start(self):
        top = self.top
        top.chmod(0o755)
        munge = top / "munge"
        munge.mkdir()
        munge.chmod(0o755)      # (munged: everyone must be able to reach its socket)
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        shutil.chown(munge, "munge", "munge")
        shutil.chown(key, "munge", "munge")
        self.munge_socket = munge / "munge.socket"
        for folder in ("state", "spool"):
            (top / folder).mkdir(mode=0o755)
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 1024**2 // 2
        self.conf = top / "slurm.conf"
        self.conf.write_text(CONF.format(
            host=socket.gethostname(), node=self.node, top=top, cpus=self.cpus,
            memory=memory, munge_socket=self.munge_socket, ctld_port=free_port(),
            d_port=free_port()))
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self._daemon(["setpriv", "--reuid=munge", "--regid=munge", "--init-groups",
                      _program("munged"), "--foreground",
                      f"--socket={self.munge_socket}", f"--key-file={key}",
                      f"--pid-file={munge}/munged.pid", f"--log-file={munge}/munged.log",
                      f"--seed-file={munge}/munged.seed"], munge / "munged.out")
        self._wait(lambda: self.munge_socket.exists(), "munged", munge / "munged.log")
        # -D: in the foreground, so that each is a child of this process, stopped by its pid
        self._daemon([_program("slurmctld"), "-D", "-i", "-f", str(self.conf)],
                     top / "slurmctld.out")
        self._wait(lambda: self._ok(["scontrol", "ping"], "UP"), "slurmctld",
                   top / "slurmctld.log")
        self._daemon([_program("slurmd"), "-D", "-N", self.node, "-f", str(self.conf)],
                     top / "slurmd.out")
        self._wait(lambda: self._ok(["sinfo", "-h", "-N", "-o", "%T"], "idle"), "slurmd",
                   top / "slurmd.log")

    def _daemon(self, argv, out: Path):
        with open(out, "wb") as f:
            self.processes.append(subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT,
                                                   env=self.env if hasattr(self, "env")
                                                   else None, start_new_session=True))

    def _ok(self, argv, expected: str) -> bool:
        result = subprocess.run(argv, env=self.env, capture_output=True, text=True)
        return result.returncode == 0 and expected in result.stdout

    def _wait(self, ready, what: str, log: Path, timeout: float = 60):
        deadline = time.monotonic() + timeout
        while not ready():
            dead = [p for p in self.processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                said = log.read_text(errors="replace")[-2000:] if log.exists() else "no log"
                raise RuntimeError(f"{what} did not start: {said}")
            time.sleep(0.2)

    def run(self, *argv: str, check: bool = True) -> str:
        """A Slurm command (sbatch, squeue, scontrol...) against this cluster; its output."""
        result = subprocess.run(list(argv), env=self.env, capture_output=True, text=True)
        if check and result.returncode:
            raise RuntimeError(f"{' '.join(argv)}: {result.stderr or result.stdout}")
        return result.stdout

    def states(self, job: str) -> dict[str, str]:
        """{job id (array tasks as JOB_TASK): state} of a job and its array's tasks, as
        slurmctld knows them (it keeps finished jobs MinJobAge seconds)."""
        out = self.run("scontrol", "-o", "show", "job", job, check=False)
        found = {}
        for line in out.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if "JobId" not in fields:
                continue
            name = fields["JobId"]
            if fields.get("ArrayTaskId") and fields.get("ArrayJobId"):
                name = f"{fields['ArrayJobId']}_{fields['ArrayTaskId']}"
            found[name] = fields.get("JobState", "")
        return found

    def wait(self, *jobs: str, timeout: float = 600) -> dict[str, str]:
        """Wait until every job (and array task) named has ended; their final states."""
        deadline = time.monotonic() + timeout
        while True:
            states = {}
            for job in jobs:
                states.update(self.states(job))
            if states and all(s in ENDED for s in states.values()):
                return states
            if time.monotonic() > deadline:
                raise TimeoutError(f"Slurm jobs still running after {timeout} s: {states}")
            time.sleep(0.5)

    def stop(self):
        # every job first (slurmd kills their processes), then the daemons, newest first
        if getattr(self, "env", None) and self.processes:
            subprocess.run(["scancel", "--full", "-u", "root"], env=self.env,
                           capture_output=True)
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        self.processes.clear()
        shutil.rmtree(self.top, ignore_errors=True)

    def log(self, name: str) -> str:
        path = self.top / name
        return path.read_text(errors="replace") if path.exists() else ""


ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
         "PREEMPTED", "BOOT_FAIL", "DEADLINE"}
