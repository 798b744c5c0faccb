"""`./run check`, the one command that says a change is ready for its pull request: ruff, the
import contracts and the fast tests, in that order, stopping at the first that fails; the
testing guide names it first.

The commands are stand-ins that record how they were called (a real run is the fast tests'
minute and a half; tests/tooling/test_ruff.py and tests/engine/test_layers.py run the real ruff
and lint-imports)."""
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def stand_ins(tmp_path, failing=()):
    """A copy of `run` whose set-up does nothing and whose venv's ruff, lint-imports and python
    write their arguments to calls.txt (and those in ``failing`` exit 1)."""
    shutil.copy(ROOT / "run", tmp_path / "run")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "setup.sh").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "scripts" / "setup.sh").chmod(0o755)
    bin_ = tmp_path / "venv" / "bin"
    bin_.mkdir(parents=True)
    for name in ("ruff", "lint-imports", "python"):
        code = 1 if name in failing else 0
        (bin_ / name).write_text(f'#!/bin/sh\necho "{name} $*" | sed "s/ $//" >> "$CALLS"\nexit {code}\n')
        (bin_ / name).chmod(0o755)
    return tmp_path


def check(where, *args):
    calls = where / "calls.txt"
    done = subprocess.run([str(where / "run"), "check", *args], cwd=where, timeout=30,
                          env={"PATH": "/usr/bin:/bin", "VENV": str(where / "venv"),
                               "CALLS": str(calls)}, capture_output=True, text=True)
    return done, calls.read_text().splitlines() if calls.exists() else []


def test_check_runs_ruff_then_the_contracts_then_the_fast_tests(tmp_path):
    done, calls = check(stand_ins(tmp_path), "-q")
    assert done.returncode == 0, done.stderr
    assert calls[:2] == ["ruff check .", "lint-imports"]
    assert len(calls) == 3 and calls[2].startswith("python -m pytest -n ")
    assert calls[2].endswith("--dist loadgroup -m fast -q"), calls[2]


def test_check_stops_at_the_first_that_fails(tmp_path):
    for failing, ran in (("ruff", 1), ("lint-imports", 2), ("python", 3)):
        (tmp_path / failing).mkdir()
        done, calls = check(stand_ins(tmp_path / failing, failing={failing}))
        assert done.returncode != 0 and len(calls) == ran, (failing, calls)
        assert calls[-1].startswith(failing)


def test_run_lists_check_and_the_testing_guide_names_it_first():
    run = (ROOT / "run").read_text()
    assert re.search(r"^# \./run check ", run, re.M)
    usage = re.search(r'echo "usage: (.*?)"', run).group(1)
    assert "check" in usage.split(" | ")[0], usage
    guide = (ROOT / "docs" / "maintainers" / "tests.md").read_text()
    commands = re.findall(r"^\| `([^`]+)` \|", guide, re.M)
    assert commands[0] == "./run check", commands
