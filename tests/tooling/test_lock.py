"""One lock, uv.lock, for every environment the project installs: it is up to date with both
pyproject.toml files (`uv lock --check`), and the requirements files that Binder and the
grader's container image install are its exports (scripts/export-locks.sh)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UV = Path(sys.executable).parent / "uv"


@pytest.fixture(scope="module")
def uv():
    if not UV.exists():
        pytest.skip("uv is not installed (the dev extra brings it)")
    return UV


def test_the_lock_is_up_to_date_with_the_pyprojects(uv):
    done = subprocess.run([str(uv), "lock", "--check", "--offline"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_binder_and_the_grader_image_install_the_locks_exports(uv):
    done = subprocess.run(["bash", str(ROOT / "scripts" / "export-locks.sh"), "--check"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "UV": str(uv)})
    assert done.returncode == 0, done.stderr
    assert "-r /src/requirements.txt" in (ROOT / "deploy" / "k8s" / "Containerfile").read_text()


def test_the_check_notices_an_export_that_is_not_the_locks(uv, tmp_path):
    """A copy of the repository's lock files where Binder pins another numpy."""
    for name in ("pyproject.toml", "uv.lock", "README.md", "grader/pyproject.toml",
                 "grader/README.md", "binder/requirements.txt", "deploy/k8s/requirements.txt",
                 "scripts/export-locks.sh"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((ROOT / name).read_text())
    binder = tmp_path / "binder" / "requirements.txt"
    binder.write_text(binder.read_text().replace("numpy==2.4.6", "numpy==2.4.5"))
    done = subprocess.run(["bash", str(tmp_path / "scripts" / "export-locks.sh"), "--check"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "UV": str(uv)})
    assert done.returncode == 1
    assert "binder/requirements.txt is not uv.lock's export" in done.stderr
