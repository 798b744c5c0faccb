"""The ``autograd-lab`` command line (``cli``) and the course directory it reads (``course``).

Nothing is imported here: a step imports ``course`` without typer and rich.
"""
