import sys
from pathlib import Path

import pytest

# tests/ holds shared helpers (dual.py, seed_snippets.py) that test modules import directly
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def torch():
    """Real PyTorch, the oracle. CI installs it; elsewhere its tests are skipped."""
    return pytest.importorskip("torch")
