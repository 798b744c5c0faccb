"""The instructor's side of the course: grading a class over nbgrader (``autograd-lab``).

One module a step: ``collect`` (submissions in), ``grade`` (one process per submission, running
``worker``'s autograde with ``kernel``'s grading kernel), ``feedback``, ``export``, ``report``,
``release`` (student notebooks, the learners' repository), ``selftest``; ``status`` keeps what
happened to each submission in the gradebook; ``cli`` is the command line over them.
``import autograd_lab`` never imports this package (it needs nbgrader, typer, rich, matplotlib).
"""
