"""What runs *inside* the grading sandbox: ``zygote.py`` (the warm-kernel server, run as a
script) and ``streams`` (a kernel's stdout and stderr). This folder, alone of the grader, is
bound into every sandbox (``sandbox.GRADER_INSIDE_AT``), so nothing here may import the rest
of the grader: a kernel sees only the standard library, the environment's packages and the
engine.
"""
