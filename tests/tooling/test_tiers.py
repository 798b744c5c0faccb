"""The test tiers are the folders, and nothing else: tests/conftest.py derives a test's tier
marker (and `fast`) from its folder, its need markers from the fixtures it uses, and its xdist
group from the module- or session-wide work it shares, so that a new test file is in its
tier, `--fast` and its group without a list to edit.

Shown on a copy of tests/conftest.py in a throwaway tree with new test files, run by pytest in
a process of its own; and on this repository: every test file is in a tier folder, under a
name no other test file has (pytest imports test files by their bare names)."""
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
import conftest  # noqa: E402  (tests/conftest.py, for its TIERS)

NEW_FILES = {
    # a test of the engine: engine and fast, no group, no need
    "engine/test_new_engine.py": """
        def test_engine(request):
            marks = {m.name for m in request.node.iter_markers()}
            assert {"engine", "fast"} <= marks, marks
            assert not marks & {"grader", "xdist_group", "needs_root", "needs_postgres"}, marks
    """,
    # a grading test: grader, not fast; its tests share a module-scoped fixture (one group,
    # named after the file) but the test that does not use it is free
    "grader/test_new_grader.py": """
        import pytest

        @pytest.fixture(scope="module")
        def graded_once():
            return object()

        def _group(request):
            return [m.args[0] for m in request.node.iter_markers("xdist_group")]

        @pytest.mark.parametrize("n", range(3))
        def test_shares(graded_once, n, request):
            marks = {m.name for m in request.node.iter_markers()}
            assert "grader" in marks and "fast" not in marks, marks
            assert _group(request) == ["test_new_grader"]

        def test_alone(request):
            assert _group(request) == []

        def test_on_postgres(postgresql):
            pass

        @pytest.mark.parametrize("lesson", ["a", "b"], scope="module")
        def test_per_lesson(lesson, request):
            assert _group(request) == [f"test_new_grader-{lesson}"]
    """,
    # a file declaring what cannot be derived
    "deploy/test_new_deploy.py": """
        import pytest

        pytestmark = pytest.mark.needs_root

        def test_as_root():
            pass
    """,
}


@pytest.fixture
def tree(tmp_path):
    """A copy of tests/conftest.py with the new test files, in tmp_path/tests."""
    tests = tmp_path / "tests"
    (tests / "support").mkdir(parents=True)
    shutil.copy(TESTS / "conftest.py", tests)
    for name, text in NEW_FILES.items():
        (tests / name).parent.mkdir(exist_ok=True)
        (tests / name).write_text(textwrap.dedent(text))
    return tmp_path


def _pytest(tree, *args):
    done = subprocess.run([sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider",
                           "--strict-markers", "--rootdir", str(tree), "-c", "/dev/null", *args],
                          cwd=tree, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


def _selected(tree, expression):
    code, out = _pytest(tree, "--collect-only", "-m", expression)
    assert code in (0, 5), out            # 5: nothing selected
    return sorted(line.split("::")[1] for line in out.splitlines() if "::" in line)


def test_new_test_files_get_their_folders_markers_and_groups(tree):
    code, out = _pytest(tree, "-m", "not needs_postgres and not needs_root")
    assert code == 0, out
    assert "7 passed" in out, out


def test_need_markers_come_from_fixtures_and_declarations(tree):
    assert _selected(tree, "needs_postgres") == ["test_on_postgres"]
    assert _selected(tree, "needs_root") == ["test_as_root"]
    assert _selected(tree, "fast") == ["test_engine"]
    assert _selected(tree, "deploy") == ["test_as_root"]


def test_every_test_file_is_in_a_tier_folder_under_a_name_of_its_own():
    files = sorted(TESTS.rglob("test_*.py"))
    outside = [str(f.relative_to(TESTS)) for f in files if conftest.tier_of(f) is None]
    assert not outside, f"test files outside tests/<tier>/ ({', '.join(conftest.TIERS)}): {outside}"
    twice = [name for name, n in Counter(f.name for f in files).items() if n > 1]
    assert not twice, f"test files of the same name (pytest imports them by name): {twice}"
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert folders <= set(conftest.TIERS) | {"support"}, folders


def test_every_collected_test_has_one_tier(request):
    for item in request.session.items:
        tiers = [m.name for m in item.iter_markers() if m.name in conftest.TIERS]
        assert len(tiers) == 1, (item.nodeid, tiers)
