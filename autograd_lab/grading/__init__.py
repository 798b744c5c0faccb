"""The instructor's side of the course: grading a class over nbgrader (``autograd-lab``).

One module a step: ``roster`` (the class list), ``collect`` (submissions in, with ``lms``
reading Canvas's and Moodle's names), ``grade`` (one process per submission, running
``worker``'s autograde with ``kernel``'s grading kernel, sandboxed by ``sandbox``, forked warm
by ``zygote`` through ``warm`` where it can be), ``feedback`` (its page made safe by ``page``),
``export`` (and the LMSs' own files), ``report``, ``release`` (student notebooks, the
learners' repository), ``selftest``; ``status`` keeps what happened to each submission in the
gradebook; ``cli`` is the command line over them.
``import autograd_lab`` never imports this package (it needs nbgrader, typer, rich, matplotlib).
"""
import sys

# jsonschema imports rfc3987_syntax, when it is installed, for one string format ("iri") that
# no notebook schema uses, and building that package's grammar costs 1.2 s of CPU in every
# process that imports nbformat (the command, and the server its grading processes fork from).
# Marked missing, as jsonschema allows for.
sys.modules.setdefault("rfc3987_syntax", None)
