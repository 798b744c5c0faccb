"""Every document the code sends a reader to is in this repository: a path to a Markdown file
named in a module, script or test (``docs/maintainers/lms-formats.md``) is a file of the
checkout, never one beside it (a folder of the machine it was written on)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("autograd_lab", "grader", "tests", "scripts", "benchmarks")
# a path of a Markdown file from the checkout's root (a folder of the repository first) or
# from beside it (``..`` first); a bare `README.md` is too vague to check
TOP = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith("."))
NAMED = re.compile(rf"(?<![\w./-])((?:\.\./)+[\w-]+(?:/[\w.-]+)*\.md|(?:{'|'.join(TOP)})"
                   r"(?:/[\w.-]+)+\.md)\b")


def named_documents():
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == Path(__file__):      # (its own examples)
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                for named in NAMED.findall(line):
                    yield f"{path.relative_to(ROOT)}:{number}", named


def test_the_check_finds_paths_to_documents():
    found = [named for _, named in named_documents()]
    assert "docs/maintainers/lms-formats.md" in found and "docs/maintainers/tests.md" in found
    assert NAMED.findall("(see ../elsewhere/notes.md)") == ["../elsewhere/notes.md"]


def test_every_document_the_code_names_is_a_file_of_the_repository():
    wrong = [(where, named) for where, named in named_documents()
             if named.startswith("../") or not (ROOT / named).is_file()]
    assert wrong == []
