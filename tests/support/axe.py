"""axe-core, the accessibility checker, run inside a page Chromium shows (Playwright): what it
finds against WCAG 2.1 A and AA and axe's best practices, of serious or critical impact.

axe-core comes from npm (tests/support/package.json, installed by scripts/setup.sh into
tests/support/node_modules). It is handed to the page through Playwright's evaluate, which
Chromium runs whatever the page's content security policy says (a feedback page's runs no
script of its own): nothing of axe is fetched from anywhere.

Rules tagged experimental are run too: label-content-name-mismatch (a control whose visible
text is not in its accessible name, WCAG 2.5.3) is one of them.
"""
from pathlib import Path

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice", "experimental"]
SERIOUS = ("serious", "critical")


def source():
    if not AXE.is_file():
        raise FileNotFoundError(f"no axe-core at {AXE}: scripts/setup.sh installs it (npm ci "
                                "--prefix tests/support)")
    return AXE.read_text()


def run(page, within=None):
    """Every violation axe finds in ``page`` (in ``within``, a CSS selector, when given):
    [{"id", "impact", "help", "nodes": [{"target", "html", "failureSummary"}]}]."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(source() + "\n;undefined")
    return page.evaluate(
        """async ([within, tags]) => {
               const found = await axe.run(within ? document.querySelector(within) : document,
                                           {runOnly: {type: "tag", values: tags},
                                            resultTypes: ["violations"]});
               return found.violations.map(v => ({
                   id: v.id, impact: v.impact, help: v.help,
                   nodes: v.nodes.map(n => ({target: n.target, html: n.html.slice(0, 300),
                                             failureSummary: n.failureSummary}))}));
           }""", [within, TAGS])


def serious(page, within=None):
    """The violations of run() that are serious or critical."""
    return [v for v in run(page, within) if v["impact"] in SERIOUS]


def report(violations):
    """The violations, one block each, for an assertion's message."""
    return "\n".join(f"{v['impact']} {v['id']}: {v['help']}\n" + "\n".join(
        f"    {n['target']}: {n['html']}\n      {n['failureSummary']}" for n in v["nodes"][:5])
        for v in violations)
