"""autograd-lab-grader: the instructor's side of the course, grading a class over nbgrader
(the ``autograd-lab`` command; ``python -m autograd_lab_grader`` is the same).

Organised by role:
- ``commands``: the command line (``cli``) and the course directory it reads (``course``);
- ``steps``: one module a step of a term: ``roster`` (the class list), ``release`` (student
  notebooks, the learners' repository), ``collect`` (submissions in), ``grade`` (the class,
  one process per submission, each running ``worker``'s autograde of one; ``preload`` is what
  their forkserver loads), ``regrade`` (after a lesson's tests change), ``feedback``,
  ``written`` (hand grading's pages), ``handgrading`` (the formgrader on grade's gradebook),
  ``export``, ``report``, ``similarity`` (answers alike), ``selftest``;
- ``gradebook``: the grader's own records beside nbgrader's: ``status`` (what became of each
  submission, collect's refusals and LMS file names, the learners taken out of the term),
  ``leases`` (who is grading what, for graders sharing a gradebook), ``late``
  (due dates, extensions, the late policy);
- ``lms``: Canvas (``canvas``) and Moodle (``moodle``), each LMS's formats read and written;
- ``reading``: the grader's side of the trust boundary, what reads what a kernel hands back:
  ``kernel`` (the kernel a submission runs in, and the bounds on its output), ``verdict`` (the
  test cells judged outside it), ``outputs`` (the one walk over a notebook's outputs), ``page``
  (a learner's HTML made safe for feedback pages);
- ``sandbox``: the bubblewrap sandbox (``sandbox``) and warm kernels (``warm``); its
  ``inside`` folder is what runs *in* the sandbox (``zygote``, the warm-kernel server;
  ``streams``, the kernel's bounded output), the one part of the grader a kernel can see;
- ``templates``: the feedback page's template;
- ``patches``: every override, replacement or call of a library's private parts (jupyter_client,
  nbclient, nbgrader, nbconvert), with the version it was written against and why.

It imports the engine's ``autograd_lab.checks`` (the checks' answers, the verdict protocol);
``autograd_lab`` never imports this package.
"""
import importlib.machinery
import importlib.util
import sys

# jsonschema imports rfc3987_syntax, when it is installed, for one string format ("iri") that
# no notebook schema uses, and building that package's grammar costs 1.2 s of CPU in every
# process that imports nbformat (the command, and the server its grading processes fork from).
# Marked missing, as jsonschema allows for.
sys.modules.setdefault("rfc3987_syntax", None)

# What the grader's libraries import when they are imported, for what grading never runs:
# each is imported when first used instead (importlib.util.LazyLoader), which spares every
# command and grading run 0.05 CPU-seconds (docs/measurements/grading.md). The name's
# module only; its submodules import as ever, once it runs.
LAZY = {
    "requests": "nbgrader.auth's JupyterHub authenticator",
    "yaml": "nbgrader's instantiatetests preprocessor",
}


class _ImportedWhenUsed:
    """A finder that hands each module of LAZY to the import system as a lazy one: bound
    where it is imported, run at its first attribute looked up."""

    def find_spec(self, name, path, target=None):
        if name not in LAZY:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


if not any(isinstance(finder, _ImportedWhenUsed) for finder in sys.meta_path):
    sys.meta_path.insert(0, _ImportedWhenUsed())


def _nbgrader_without_its_server_extensions() -> None:
    """Import nbgrader's package without running its ``__init__`` until something asks for
    what only that defines. It imports nbgrader's four Jupyter server extensions, and with
    them jupyter_server, tornado and the exchange: half a CPU-second in every grading command,
    none of which grading uses (a regrade of one learner must cost no more than nbgrader's
    own: docs/measurements/grading.md). Its submodules import as ever; ``__version__`` is
    read from where ``__init__`` reads it; any other name (a Jupyter server loading the
    extensions, as the formgrader does) runs the real ``__init__`` first, in this module."""
    import importlib

    if "nbgrader" in sys.modules:
        return
    spec = importlib.util.find_spec("nbgrader")
    if spec is None:
        return
    module = importlib.util.module_from_spec(spec)

    def __getattr__(name):
        # (a submodule not imported yet is looked up here first, by `from nbgrader import x`)
        if name.startswith("__") or importlib.util.find_spec(f"nbgrader.{name}") is not None:
            raise AttributeError(name)
        del module.__getattr__
        spec.loader.exec_module(module)
        return getattr(module, name)

    module.__getattr__ = __getattr__
    sys.modules["nbgrader"] = module
    module.__version__ = importlib.import_module("nbgrader._version").__version__


_nbgrader_without_its_server_extensions()
