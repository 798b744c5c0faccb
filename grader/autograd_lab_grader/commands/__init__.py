"""The ``autograd-lab`` command line (``cli``): a thin command over each step.

Nothing is imported here: the package's commands import typer and rich, its steps never.
"""
