"""`ruff check .` passes under ruff.toml: CI runs this through README's test command
(`./run test`)."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUFF = Path(sys.executable).parent / "ruff"


def test_ruff_check_is_clean():
    if not RUFF.exists():
        pytest.skip("ruff is not installed (the dev extra brings it)")
    done = subprocess.run([str(RUFF), "check", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
