"""An inert notebook: what a learner handed in, as something no renderer can run.

The autograded notebook is what nbgrader's formgrader shows the instructor, in a page the
instructor's own Jupyter server serves (a script there would act with the instructor's session:
kernels and terminals on the instructor's machine). The formgrader renders it with nbconvert,
raw HTML kept (Markdown through mistune, ``text/html``, SVG and JavaScript outputs as they are,
MathJax over the text); JupyterLab opens it too ("open live notebook"). So the grader writes it
inert, by the allowlist of ``page.py``, after nbgrader has scored it (``InertNotebook``, the
last of the autograde preprocessors), and the feedback page makes the same pass:

- every output is one nbformat knows, with the fields it allows: a stream is stdout or stderr,
  an execution count an integer; its data is ``page.safe_data``'s (text, clean HTML, a base64
  PNG or JPEG; SVG as a ``data:`` image; JavaScript, widgets and other types dropped with a
  note); its text has no control character but a colour sequence (``plain.output_text``);
- every Markdown cell is stored rendered and cleaned, as one HTML block that every Markdown
  renderer passes on as it is and MathJax skips (``page.stored``), or shown as written past
  the bounds; a raw cell is shown as written, in a Markdown cell; attachments are dropped;
- cell metadata is nbgrader's (its own keys, of their types), tags that are plain names, and
  the editing flags; the notebook's is its kernel and language, as short strings (no widget
  state, no title); every cell id is one nbformat allows.

The pass is a function of the notebook alone (the same notebook gives the same bytes): a hand
grade is kept while its answer is unchanged (``worker.answers``), and the report, the
sandbox's refusals and the time limits read the outputs' text, which it keeps.
"""
from __future__ import annotations

import re

from nbgrader.preprocessors import NbGraderPreprocessor

from . import outputs, page
from .plain import output_text

_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")          # nbformat 4.5's cell id
_TAG = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_NAME = re.compile(r"[A-Za-z0-9_.+ ()-]{0,64}")   # a kernel's or a language's name
_NBGRADER = {"schema_version": int, "grade": bool, "solution": bool, "locked": bool,
             "task": bool, "points": (int, float), "grade_id": str, "checksum": str,
             "cell_type": str}
_GRADE_ID = re.compile(r"[a-zA-Z0-9_-]{0,256}")
MAX_TRACEBACK = 200          # lines of an error's traceback kept (its first and last ones)
MAX_FRAME = 2_000            # characters of a line of a traceback
MAX_LINE = 20_000            # characters of an error's name or value (as TruncateOutput's)


def _short(value) -> str | None:
    return value if isinstance(value, str) and _NAME.fullmatch(value) else None


def notebook_metadata(metadata) -> dict:
    """The kernel and language a notebook names, as short strings; nothing else."""
    kept = {}
    spec = metadata.get("kernelspec")
    if isinstance(spec, dict) and _short(spec.get("name")):
        spec = {k: _short(spec.get(k)) for k in ("name", "display_name", "language")}
        spec["display_name"] = spec["display_name"] or spec["name"]    # (nbformat needs both)
        kept["kernelspec"] = {k: v for k, v in spec.items() if v is not None}
    info = metadata.get("language_info")
    if isinstance(info, dict):
        info = {k: _short(info.get(k)) for k in ("name", "version", "pygments_lexer",
                                                  "file_extension", "mimetype",
                                                  "nbconvert_exporter")}
        mode = metadata["language_info"].get("codemirror_mode")
        if _short(mode) is not None:
            info["codemirror_mode"] = mode
        elif isinstance(mode, dict) and _short(mode.get("name")) is not None:
            info["codemirror_mode"] = {"name": mode["name"]} | (
                {"version": mode["version"]} if isinstance(mode.get("version"), int) else {})
        kept["language_info"] = {k: v for k, v in info.items() if v is not None}
        kept["language_info"].setdefault("name", "python")     # (nbformat requires a name)
    return kept


def cell_metadata(metadata) -> dict:
    """nbgrader's metadata (its keys, of their types), plain tags, the editing flags and a
    short highlighting language; nothing else."""
    kept = {}
    meta = metadata.get("nbgrader")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k in _NBGRADER
                and isinstance(v, _NBGRADER[k]) and not (k == "points" and isinstance(v, bool))}
        if not _GRADE_ID.fullmatch(meta.get("grade_id", "")):
            meta.pop("grade_id")
        if meta.get("cell_type") not in (None, "code", "markdown"):
            meta.pop("cell_type")
        if not re.fullmatch(r"[0-9a-f]{0,128}", meta.get("checksum", "")):
            meta.pop("checksum")
        kept["nbgrader"] = meta
    tags = metadata.get("tags")
    if isinstance(tags, list):
        kept["tags"] = [t for t in tags if isinstance(t, str) and _TAG.fullmatch(t)]
    for flag in ("editable", "deletable"):
        if isinstance(metadata.get(flag), bool):
            kept[flag] = metadata[flag]
    if _short(metadata.get("magics_language")):
        kept["magics_language"] = metadata["magics_language"]
    return kept


def _text(value) -> str:
    return value if isinstance(value, str) else outputs._text(value)


def _traceback(lines: list[str]) -> list[str]:
    if len(lines) > MAX_TRACEBACK:
        # (MAX_TRACEBACK lines in all, the note among them: cut once, it is not cut again)
        head = MAX_TRACEBACK // 2
        tail = MAX_TRACEBACK - head - 1
        lines = [*lines[:head], f"[... {len(lines) - head - tail} lines of the traceback not "
                                "kept ...]", *lines[-tail:]]
    return [output_text(line[:MAX_FRAME]) for line in lines]


def output(node: outputs.Output, budget: page.Budget) -> dict | None:
    """One output as an inert notebook holds it (None: an output of no kind nbformat has)."""
    kind = node.kind
    if kind == "stream":
        return {"output_type": "stream", "name": "stderr" if node.name == "stderr" else "stdout",
                "text": output_text(node.text)}
    if kind == "error":
        return {"output_type": "error", "ename": output_text(node.ename[:MAX_LINE]),
                "evalue": output_text(node.evalue[:MAX_LINE]),
                "traceback": _traceback(node.traceback)}
    if kind not in ("display_data", "execute_result"):
        return None
    data = page.safe_data(node.data, budget)
    if "text/plain" in data:
        data["text/plain"] = output_text(data["text/plain"])
    # (the page's images say what they are, in the output's own words where it has some;
    #  SVG drawings are `<img>`s already)
    image = {"image/png", "image/jpeg"} & set(data)
    kept = {"output_type": kind, "data": data, "metadata": {
        "alt": page.alt_text(data, "an image the notebook showed")} if image else {}}
    if kind == "execute_result":
        count = node.node.get("execution_count")
        kept["execution_count"] = count if type(count) is int else None
    return kept


def cell(original, budget: page.Budget) -> dict:
    """One cell as an inert notebook holds it."""
    kind = original.get("cell_type")
    source = _text(original.get("source", ""))
    metadata = original.get("metadata")
    new = {"cell_type": "markdown", "metadata": cell_metadata(
        metadata if isinstance(metadata, dict) else {})}
    if kind == "code":
        count = original.get("execution_count")
        new.update(cell_type="code", source=source,
                   execution_count=count if type(count) is int else None,
                   outputs=[o for o in (output(o, budget) for o in outputs.of_cell(original))
                            if o is not None])
    elif kind == "markdown":
        new["source"] = page.stored(source, budget)
    else:
        new["source"] = page.stored_as_text(
            source, "a raw cell: shown as written" if kind == "raw"
            else "a cell of a kind the notebook format does not have: shown as written")
    return new


def notebook(nb) -> None:
    """Make ``nb`` (a NotebookNode) inert, in place."""
    import nbformat

    budget = page.Budget()
    cells = nb.get("cells") if isinstance(nb.get("cells"), list) else []
    kept, seen = [], set()
    for index, original in enumerate(c for c in cells if isinstance(c, dict)):
        new = cell(original, budget)
        if "id" in original or nb.get("nbformat_minor", 0) >= 5:
            cell_id = original.get("id")
            if not isinstance(cell_id, str) or not _ID.fullmatch(cell_id) or cell_id in seen:
                cell_id = f"cell-{index}"
                while cell_id in seen:
                    cell_id += "-"
            seen.add(cell_id)
            new["id"] = cell_id
        kept.append(nbformat.from_dict(new))
    metadata = nb.get("metadata")
    nb["metadata"] = nbformat.from_dict(notebook_metadata(
        metadata if isinstance(metadata, dict) else {}))
    nb["cells"] = kept


class InertNotebook(NbGraderPreprocessor):
    """The notebook made inert (the module's docstring): the last autograde preprocessor,
    after nbgrader has saved the scores, and the feedback page's first word on its outputs."""

    def preprocess(self, nb, resources):
        notebook(nb)
        return nb, resources
