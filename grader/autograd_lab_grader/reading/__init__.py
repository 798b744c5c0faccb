"""The grader's side of the trust boundary: whatever a kernel hands back is read here, as
data, bounded, and never trusted (``kernel``, ``verdict``, ``page``)."""
