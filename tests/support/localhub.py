"""A real JupyterHub on loopback for the hub test (tests/deploy/test_hub.py): JupyterHub from the
lock (the dev extra), its proxy npm's configurable-http-proxy (tests/support/package.json,
installed by scripts/setup.sh), learners as real users of this machine (``useradd``, as root) logging in with
JupyterHub's DummyAuthenticator and a password, each single-user server started by JupyterHub's
LocalProcessSpawner as that user, from the learners' environment given.

    with Learners(["alab-ada", "alab-ben"], homes) as users, Hub(users, env, workdir) as hub:
        session = hub.login("alab-ada")
        session.save(path, notebook)

Everything is stopped after: the hub (which stops the proxy and the servers it spawned), then
any process still running as a learner (by its id), then the users and their homes.
"""
from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from lab_browser import _free_port

ROOT = Path(__file__).resolve().parents[2]
PROXY = ROOT / "tests" / "support" / "node_modules" / ".bin" / "configurable-http-proxy"
PASSWORD = "a-class-password"


def missing() -> str | None:
    """Why the hub test cannot run here, or None."""
    if os.geteuid() != 0:
        return "the hub test creates learners' accounts (useradd): it runs as root"
    if not PROXY.exists():
        return "JupyterHub's proxy is not installed (scripts/setup.sh: npm ci in tests/support)"
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        return "JupyterHub is not installed (the dev extra brings it)"
    return None


def _processes_of(uid: int) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                found.append(int(pid))
        except OSError:
            continue
    return found


class Learners:
    """Accounts of this machine, their homes under `homes`; removed after, with every process
    still running as one of them."""

    def __init__(self, names: list[str], homes: Path):
        self.names, self.homes = names, Path(homes)

    def __enter__(self):
        self.homes.mkdir(parents=True, exist_ok=True)
        self.homes.chmod(0o755)
        for name in self.names:
            self._remove(name)          # (one a killed run left behind)
            subprocess.run(["useradd", "-m", "-d", str(self.homes / name), "-s", "/bin/bash",
                            name], check=True, capture_output=True)
        return self

    def home(self, name) -> Path:
        return self.homes / name

    def run(self, name, args, cwd, env=None, check=True):
        """A command as the learner, in `cwd`, with only `env` (and HOME, USER) set."""
        base = {"HOME": str(self.home(name)), "USER": name, "LANG": "C.UTF-8",
                "PATH": "/usr/local/bin:/usr/bin:/bin"}
        base.update(env or {})
        done = subprocess.run(["runuser", "-u", name, "--", "env", "-i",
                               *[f"{k}={v}" for k, v in base.items()], *map(str, args)],
                              cwd=cwd, capture_output=True, text=True, timeout=300)
        if check and done.returncode:
            raise RuntimeError(f"{name}: {' '.join(map(str, args))} failed:\n{done.stdout}\n"
                               f"{done.stderr}")
        return done

    def _remove(self, name):
        try:
            uid = pwd.getpwnam(name).pw_uid
        except KeyError:
            return
        for pid in _processes_of(uid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["userdel", "-r", "-f", name], capture_output=True)

    def __exit__(self, *exc):
        for name in self.names:
            self._remove(name)


class Session:
    """One learner logged in to the hub through its login page, their server running."""

    def __init__(self, hub, name):
        self.hub, self.name = hub, name
        self.http = requests.Session()
        self.base = f"{hub.url}/user/{name}"

    def login(self):
        page = self.http.get(f"{self.hub.url}/hub/login", timeout=30)
        page.raise_for_status()
        done = self.http.post(f"{self.hub.url}/hub/login", timeout=120,
                              data={"username": self.name, "password": PASSWORD,
                                    "_xsrf": self.http.cookies.get("_xsrf", "")})
        done.raise_for_status()
        deadline = time.monotonic() + 120
        while True:     # the server spawned, and this browser let in (the hub's OAuth)
            lab = self.http.get(f"{self.base}/lab", timeout=30)
            if lab.status_code == 200 and "/user/" in lab.url and "jupyter" in lab.text.lower():
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}'s server did not start: {lab.status_code} "
                                   f"{lab.url}\n{self.hub.log()}")
            time.sleep(0.5)
        return self

    def _xsrf(self):
        return next((c.value for c in self.http.cookies if c.name == "_xsrf"
                     and c.path.startswith(f"/user/{self.name}")), "")

    def api(self, method, path, body=None):
        response = self.http.request(method, f"{self.base}/api/{path}", timeout=60,
                                     data=None if body is None else json.dumps(body),
                                     headers={"X-XSRFToken": self._xsrf(),
                                              "Content-Type": "application/json"})
        response.raise_for_status()
        return response.json() if response.content else None

    def open(self, path):
        """A notebook as JupyterLab loads it (the contents API)."""
        return self.api("GET", f"contents/{path}?type=notebook&content=1")["content"]

    def save(self, path, notebook):
        """Save a notebook as JupyterLab saves it (the contents API's PUT)."""
        return self.api("PUT", f"contents/{path}",
                        {"type": "notebook", "format": "json", "content": notebook})


class Hub:
    """JupyterHub on 127.0.0.1, a free port, its state in `workdir`; learners' servers from
    the environment `venv` (its jupyterhub-singleuser)."""

    def __init__(self, learners: Learners, venv: Path, workdir: Path):
        self.learners, self.venv, self.workdir = learners, Path(venv), Path(workdir)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def _config(self) -> str:
        venv_bin = self.venv / "bin"
        return f"""\
c = get_config()
c.JupyterHub.bind_url = {self.url + '/'!r}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {_free_port()}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{_free_port()}"
c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]
c.ConfigurableHTTPProxy.pid_file = {str(self.workdir / 'proxy.pid')!r}
c.JupyterHub.db_url = "sqlite:///{self.workdir / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(self.workdir / 'cookie_secret')!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.Authenticator.allowed_users = {set(self.learners.names)!r}
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = [{str(venv_bin / 'jupyterhub-singleuser')!r}]
c.Spawner.default_url = "/lab"
c.Spawner.environment = {{"PATH": {str(venv_bin) + ':/usr/local/bin:/usr/bin:/bin'!r},
                          "VIRTUAL_ENV": {str(self.venv)!r}}}
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
"""

    def __enter__(self):
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "jupyterhub_config.py").write_text(self._config())
        self._log = open(self.workdir / "hub.log", "w")
        env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(self.workdir / "jupyterhub_config.py")],
            cwd=self.workdir, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self._previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    if requests.get(f"{self.url}/hub/api/", timeout=5).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterHub did not start:\n{self.log()}")
                time.sleep(0.3)
        except BaseException:
            self.__exit__()
            raise
        return self

    def log(self) -> str:
        return (self.workdir / "hub.log").read_text(errors="replace")[-20000:]

    def login(self, name) -> Session:
        return Session(self, name).login()

    def __exit__(self, *exc):
        self.proc.terminate()           # the hub stops the proxy and the servers it spawned
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        signal.signal(signal.SIGTERM, self._previous)
