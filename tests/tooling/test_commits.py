"""Commit subjects stay readable in `git log --oneline`: at most 72 characters, details in the
body. Checked for every commit since the habit began (HABIT; older subjects ran longer)."""
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HABIT = "a814e2b"          # "LICENSE: MIT, as pyproject.toml says", the first of them
LIMIT = 72


def test_commit_subjects_are_at_most_72_characters():
    known = subprocess.run(["git", "cat-file", "-e", f"{HABIT}^{{commit}}"], cwd=ROOT,
                           capture_output=True)
    if known.returncode:
        pytest.skip("not a git checkout with the project's history (a shallow clone?)")
    subjects = subprocess.run(["git", "log", "--format=%h %s", f"{HABIT}^..HEAD"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.splitlines()
    assert subjects
    long = [line for line in subjects if len(line.split(" ", 1)[1]) > LIMIT]
    assert not long, "subjects over 72 characters:\n" + "\n".join(long)
