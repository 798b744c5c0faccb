"""Every code example of the two seed documents is in the course, printing its numbers.

The lessons rewrite the examples in their own cells (new names, split over several cells, with
explanations in between), so this looks for what the examples print rather than their code:
the lines each example prints (PyTorch 2.13's text, as tests/engine/test_seeds.py pins it) must appear,
in order, among the outputs of one lesson's torch-parity cells, in the run of its solution.
"""
import re

import pytest

import autograd_lab
import course
import dual
import learner_code
import seed_snippets

EXPECTED = sorted(name for name in seed_snippets.ALL if name != "BLITZ_FIXED")


def _lines(text):
    return [line.strip() for line in re.sub(r"stdout: |stderr: ", "", text).splitlines()
            if line.strip()]


def _in_order(wanted, lines):
    it = iter(lines)
    return all(any(w == line for line in it) for w in wanted)


@pytest.mark.skipif(len(course.LESSONS) < 8, reason="the course is not complete yet")
@pytest.mark.parametrize("name", EXPECTED)
def test_seed_example_is_in_a_lesson(name, lesson_runs):
    # The blitz example starts from random numbers: a lesson picks its own seed, and the
    # gradient the blog printed (v * 2**9) is the fact to find.
    code = seed_snippets.BLITZ_FIXED if name == "BLITZ" else seed_snippets.ALL[name]
    printed, error, _ = dual.run(code, autograd_lab)
    wanted = _lines(dual.ADDRESS.sub("0x…", printed))
    if name == "BLITZ":
        wanted = wanted[-1:]
    assert wanted and error is None
    for lesson in course.LESSONS:
        tagged = [course.PARITY_TAG in cell.metadata.get("tags", [])
                  for _, cell in learner_code.code_cells(lesson)]
        lines = [line for text, is_tagged in zip(lesson_runs.solution_run(lesson).texts, tagged)
                 if is_tagged for line in _lines(text)]
        if _in_order(wanted, lines):
            return
    pytest.fail(f"no lesson prints the seed example {name}:\n" + "\n".join(wanted))
