"""The steps of a term, one module each; ``commands.cli`` is a few lines over each."""
