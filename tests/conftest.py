import os
import sys
from pathlib import Path

import pytest

# tests/ holds shared helpers (dual.py, seed_snippets.py) that test modules import directly
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def torch():
    """Real PyTorch, the oracle. CI installs it; elsewhere its tests are skipped."""
    return pytest.importorskip("torch")


@pytest.fixture(scope="session")
def learner_env(tmp_path_factory):
    """The learner's environment (tests/learner_env.py), built fresh once per test session:
    (venv dir, environ for its Jupyter processes). AUTOGRAD_LAB_LEARNER_ENV=DIR reuses one built
    by `python tests/learner_env.py DIR` instead, to iterate on the browser test."""
    import learner_env as le
    if os.environ.get("AUTOGRAD_LAB_LEARNER_ENV"):
        base = Path(os.environ["AUTOGRAD_LAB_LEARNER_ENV"]).resolve()
        return base / "venv", le.jupyter_environ(base / "venv", base / "home")
    base = tmp_path_factory.mktemp("learner")
    return base / "venv", le.build(base / "venv", base / "home")
