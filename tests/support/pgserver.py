"""A throwaway PostgreSQL server for the grading tests and benchmarks/cluster.py: on loopback,
a free port, a temporary folder, stopped and removed at the end.

    with PostgresServer() as pg:
        url = pg.create("course")          # postgresql://grader@127.0.0.1:PORT/course

initdb refuses to run as root: as root, the server's programs run as `postgres` (Debian's
postgresql package makes that user; scripts/setup.sh installs it when run as root).
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
MISSING = None if BIN else ("PostgreSQL is not installed (scripts/setup.sh installs it when "
                            "run as root)")


def _as_server_user(args, **kw):
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run(prefix + args, check=True, capture_output=True, text=True, **kw)


class PostgresServer:
    def __init__(self, max_connections: int = 100):
        self.bin = Path(BIN[-1])
        self.max_connections = max_connections
        self.top = Path(tempfile.mkdtemp(prefix="autograd-lab-pg-"))
        self.data = self.top / "data"
        self.started = False

    def __enter__(self) -> "PostgresServer":
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _start(self):
        self.data.mkdir()
        if os.geteuid() == 0:
            self.top.chmod(0o755)
            shutil.chown(self.data, "postgres", "postgres")
        with socket.socket() as s:            # a free port on loopback
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        _as_server_user([str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust",
                         "-U", "grader"])
        _as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l",
                         str(self.data / "log"), "-w", "-o",
                         f"-k {self.data} -c listen_addresses=127.0.0.1 -p {self.port} "
                         f"-c max_connections={self.max_connections}", "start"])
        self.started = True

    def url(self, database: str) -> str:
        return f"postgresql://grader@127.0.0.1:{self.port}/{database}"

    def create(self, database: str) -> str:
        """A new database; its URL."""
        _as_server_user([str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port),
                         "-U", "grader", database])
        return self.url(database)

    def sql(self, database: str, statement: str) -> list[tuple[str, ...]]:
        """Run SQL with psql; the rows it returns, each a tuple of strings."""
        out = _as_server_user([str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port),
                               "-U", "grader", "-d", database, "-v", "ON_ERROR_STOP=1",
                               "-At", "-F", "\t", "-c", statement]).stdout
        return [tuple(line.split("\t")) for line in out.splitlines() if line]

    def stop(self):
        if self.started:
            _as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast",
                             "stop"])
            self.started = False
        shutil.rmtree(self.top, ignore_errors=True)
