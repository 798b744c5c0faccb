"""What the grader records in the gradebook beside nbgrader's own tables: ``status``,
``leases``, ``late``."""
