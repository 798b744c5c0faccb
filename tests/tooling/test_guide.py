"""The testing guide (docs/maintainers/tests.md) and the tree agree: it names every test file
under tests/ by its path, every path it names is there (or made by the tools: what .gitignore
lists, `.venv/`, `test-artifacts/`), and its layout lists the folders tests/ has."""
import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "maintainers" / "tests.md"
# a word of a `code span` that is a path: parts of letters, digits, . _ - * and /, one / at
# least (`tests/grader/test_lms.py`, `deploy/k8s/`, `tests/grader/test_*.py`); a pytest node
# id's test after `::` aside; a placeholder in capitals (`--shard K/N`, `OWNER/REPO`) is none
PATH = re.compile(r"^(?![A-Z/_]+$)\.?/?[\w.*-]+(?:/[\w.*-]+)*/?$")


def spans(text):
    """The guide's code spans, but a Sphinx role's target ({doc}`../learners/pytorch`)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return [m[2] for m in re.finditer(r"(\{[a-z]+\})?`([^`]+)`", text) if not m[1]]


def named_paths(text):
    for span in spans(text):
        for word in span.split():
            word = word.split("::")[0].strip("(),;")
            if "/" in word and PATH.match(word) and not word.startswith("../"):
                yield word.removeprefix("./")


def ignored():
    return [line.strip().strip("/") for line in (ROOT / ".gitignore").read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def exists(path):
    if any(fnmatch.fnmatch(path.rstrip("/"), pattern) or path.startswith(pattern + "/")
           for pattern in ignored()):
        return True             # made by a run, never committed
    found = list(ROOT.glob(path.rstrip("/"))) if "*" in path else [ROOT / path]
    return any(p.exists() for p in found) and (not path.endswith("/") or found[0].is_dir())


def test_the_guide_names_every_test_file_by_its_path():
    named = set(named_paths(GUIDE.read_text()))
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py"))
    assert len(files) >= 60
    assert [f for f in files if f not in named] == []


def test_every_path_the_guide_names_exists():
    named = sorted(set(named_paths(GUIDE.read_text())))
    assert len(named) >= 80 and "scripts/setup.sh" in named and "tests/conftest.py" in named
    assert [p for p in named if not exists(p)] == []


def test_the_layout_lists_the_folders_of_tests():
    layout = re.search(r"^```\ntests/\n(.*?)^```", GUIDE.read_text(), re.M | re.S)[1]
    listed = set(re.findall(r"^  (\w+)/", layout, re.M))
    folders = {p.name for p in (ROOT / "tests").iterdir()
               if p.is_dir() and not p.name.startswith((".", "_"))}
    assert listed == folders


def test_the_check_sees_a_file_gone_and_a_file_unnamed(tmp_path):
    assert list(named_paths("`tests/no_such/test_x.py`, {doc}`../elsewhere`, `OWNER/REPO`, "
                            "`./run test tests/grader/test_lms.py::test_a`")) == [
        "tests/no_such/test_x.py", "run", "tests/grader/test_lms.py"]
    assert not exists("tests/no_such/test_x.py") and exists("test-artifacts/")
    assert exists("tests/grader/test_*.py") and not exists("tests/grader/test_nothing_*.py")
