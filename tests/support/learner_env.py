"""The learner's environment: what Binder installs (binder/requirements.txt, then binder/postBuild),
built the same way into a fresh virtual environment, and Jupyter processes run in it with their own
temporary settings, so that nothing of this machine's environments or settings leaks in.

Used by tests/browser/test_binder.py (the environment itself) and tests/browser/test_browser.py (JupyterLab in it).
"""
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def uv_path():
    """uv, where the test tools have it (the dev extra), else None."""
    return shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")


def installer(python, *, compile_bytecode=False):
    """The command that installs packages into the environment of `python`: uv where the test
    tools have it (dev extra; scripts/setup.sh filled its cache, so an environment takes seconds,
    against a minute and more for pip, most of it resolving), else that environment's pip. Both
    install the same versions: every requirements file they are given is uv.lock's export,
    pinned (scripts/export-locks.sh).
    compile_bytecode: write every module's bytecode now (an environment the sandbox mounts
    read-only cannot write it later)."""
    uv = uv_path()
    if uv:
        return [uv, "pip", "install", "-q", "--python", str(python)] + (
            ["--compile-bytecode"] if compile_bytecode else [])
    return [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"] + (
        [] if compile_bytecode else ["--no-compile"])


def python_of(venv_dir):
    return str(Path(venv_dir) / "bin" / "python")


def jupyter_environ(venv_dir, home):
    """os.environ for a process of the learner's environment: its bin/ first on PATH (postBuild and
    nbgrader call `jupyter`, `alembic` by name), Jupyter's and IPython's settings under `home`, and
    no PYTHONPATH, so `autograd_lab` comes from the environment's own `-e .` install."""
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONPATH" and not k.startswith(("JUPYTER", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv_dir)
    for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"), ("IPYTHONDIR", "ipython")]:
        env[var] = str(home / sub)
        (home / sub).mkdir(parents=True, exist_ok=True)
    return env


def _run(args, **kw):
    """Run a setup step; when it fails, the error shows what it printed."""
    done = subprocess.run(args, capture_output=True, text=True, **kw)
    assert done.returncode == 0, f"{' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}"


def build(venv_dir, home):
    """Binder's steps in a fresh virtual environment on this Python; returns the environ of
    jupyter_environ(). Binder installs the requirements with pip; here installer() does (uv
    where it can), without bytecode, which Python writes later for what it imports; the
    environment gets pip only where pip is what installs (ensurepip: 6 CPU-seconds)."""
    venv.EnvBuilder(with_pip=uv_path() is None).create(venv_dir)
    env = jupyter_environ(venv_dir, home)
    python = python_of(venv_dir)
    # from the project root: requirements.txt's `-e .` is relative to the working directory, as in
    # repo2docker, which installs it from there
    _run(installer(python) + ["-r", BINDER / "requirements.txt"], cwd=ROOT, env=env)
    _run(["bash", BINDER / "postBuild"], cwd=ROOT, env=env)
    # matplotlib's first import builds its font cache and says so on stderr: not in a lesson's output
    _run([python, "-c", "import matplotlib.pyplot"], env=env)
    return env


def size_mb(path):
    """Bytes of all files under path (what the environment adds to an image), in MB."""
    total = sum(f.lstat().st_size for f in Path(path).rglob("*") if f.is_file() or f.is_symlink())
    return total / 1e6


if __name__ == "__main__":  # build one by hand: python tests/support/learner_env.py DIR
    target = Path(sys.argv[1]).resolve()
    build(target / "venv", target / "home")
    print(f"{target / 'venv'}: {size_mb(target / 'venv'):.0f} MB")
