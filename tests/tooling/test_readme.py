"""README is the course's front page, and the guides in docs/ are where its sections went:
checked like code. Every link of README resolves (a relative path exists, an anchor names a
heading of its file as GitHub makes it); README stays a front page (at most about 150 lines) and
holds the two set-up commands, which ./run implements; every section heading README had before
the guides has a home (the same heading in a guide, or where MOVED says it went); no guide, nor
README, names a folder of the development machine. (The site's build with -W and its link check
are tests/browser/test_site.py's.)"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs").glob("*/*.md")) + [ROOT / "docs" / "index.md"]
GUIDES = [p for p in GUIDES if "node_modules" not in p.parts and "_build" not in p.parts]

# README's "##"/"###" headings before the guides (commit 42eb792), each of which must have a home
HEADINGS_BEFORE = [
    "Open the course",
    "What Binder builds",
    "The lessons",
    "How long a lesson takes",
    "The engine in one example",
    "Seeing the graph",
    "What runs unchanged",
    "Instructors: grading a class",
    "Setting up",
    "A term, step by step",
    "What each step guarantees",
    "Grades a learner's code cannot forge",
    "The grading sandbox",
    "Grading a large class",
    "Tests",
    "Kept different from PyTorch, on purpose",
    "Speed and memory",
]
# where a heading went under another name: heading -> (file, a heading there)
MOVED = {
    "Open the course": ("docs/learners/start.md", "Opening the course"),
    "Instructors: grading a class": ("docs/instructors/term.md", "A term, step by step"),
}
DEVELOPMENT_MACHINE = re.compile(r"/work/|/root/|/tmp/pytest")


def headings(path):
    text = re.sub(r"^(```|~~~).*?^\1", "", path.read_text(), flags=re.M | re.S)
    return [m[2].strip() for m in re.finditer(r"^(#{1,6})\s+(.*?)\s*#*\s*$", text, re.M)]


def slug(heading):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped but - and _,
    spaces as -."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def test_readme_is_a_front_page_with_the_two_set_up_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    assert re.search(r"^\./run lab\b", text, re.M) and re.search(r"^\./run test\b", text, re.M)
    run = (ROOT / "run").read_text()
    assert re.search(r"^\s*lab\)", run, re.M) and re.search(r"^\s*test\)", run, re.M)
    assert "./run test" in (ROOT / ".ci" / "run").read_text()
    assert "docs/lesson01-in-jupyterlab.png" in text


def links(text):
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.M | re.S)
    return re.findall(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text)


def test_every_link_of_readme_resolves():
    found = links(README.read_text())
    assert len(found) >= 20
    broken = []
    for link in found:
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = (README.parent / path).resolve() if path else README
        if not target.exists() or ROOT not in target.parents:
            broken.append(link)
        elif anchor and anchor not in {slug(h) for h in headings(target)}:
            broken.append(link)
    assert broken == []


def test_the_guides_readme_links_to_are_the_sites_pages():
    """Every guide README names is a page of the site's toctrees (docs/index.md), and every
    guide page is named in README."""
    index = (ROOT / "docs" / "index.md").read_text()
    named = {l.partition("#")[0] for l in links(README.read_text()) if l.startswith("docs/")}
    pages = {f"docs/{p.relative_to(ROOT / 'docs').with_suffix('')}.md" for p in GUIDES
             if p.parent.name in ("learners", "instructors", "maintainers", "measurements")}
    assert named - {"docs/lesson01-in-jupyterlab.png"} == pages
    for page in pages:
        assert re.search(rf"^{re.escape(page[5:-3])}$", index, re.M), page


@pytest.mark.parametrize("heading", HEADINGS_BEFORE)
def test_each_section_readme_had_has_a_home_in_a_guide(heading):
    if heading in MOVED:
        path, heading = MOVED[heading]
        assert heading in headings(ROOT / path), (path, heading)
    else:
        homes = [p for p in GUIDES if heading in headings(p)]
        assert homes, f"README's section {heading!r} is in no guide: add it, or say in MOVED"


def test_no_guide_names_a_folder_of_the_development_machine():
    for path in [README, ROOT / "CHANGELOG.md", *GUIDES]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            assert not DEVELOPMENT_MACHINE.search(line), f"{path.relative_to(ROOT)}:{number}: {line}"
