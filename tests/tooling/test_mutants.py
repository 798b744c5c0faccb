"""The checks proven by mutation: each mutant of the checks (tests/support/mutants.py: a
``fail(...)`` skipped, the condition over it negated, an early pass negated) is killed by the
answers tests/checks/test_wrong_answers.py runs: the solution no longer passes, or a wrong
answer is no longer refused as it says. A mutant that survives gives points away, or takes
them, and no test would notice; one that cannot be killed because it changes nothing a learner
can reach is listed in EQUIVALENT, with the reason.

All the mutants take a few minutes; a run of the suite tries a sample of them (MUTANTS=N, 30
unless told; MUTANTS=all for every one), drawn with a seed it prints (MUTANT_SEED=S draws
that sample again)."""
import os
import random
import time


import course
import lesson_run
import mutants

#: mutant name (Mutant.name) -> why no answer can tell it from the check as written
EQUIVALENT = {
    "skip lesson08.my_backward_hidden: f\"{name}.grad held {np.asarray(b, np.float32)} before the ca":
        "only a walk that overwrites .grad on the engine's leaves and adds into it on the "
        "check's own reaches it hidden: the visible test's graph whose leaves hold a .grad "
        "already refuses every walk that overwrites; skipped, _check_grads still refuses it "
        "(with the general message), so no answer gains points",
}


def _lesson_of(mutant):
    if mutant.module == "__init__":
        return None
    number = mutant.module.removeprefix("lesson")
    return next(l for l in course.LESSONS if l.startswith(number))


_traced = {}


def _cases(lesson):
    """The lesson's answers to try on a mutant: (name, the lines of the checks it runs, how to
    tell whether it is still judged as it should be: a list of what is not)."""
    if lesson not in _traced:
        cases = [("solution", lambda: lesson_run.solution_problems(lesson))]
        cases += [(w.name, lambda w=w: lesson_run.judged(lesson, w))
                  for w in lesson_run.wrongs(lesson)]
        if lesson == course.LESSONS[0]:
            cases.append(("graded kernel", lambda: [
                cell.grade_id for cell in lesson_run.graded_kernel(lesson).values()
                if type(cell.visible.error).__name__ != "VerdictPending"]))
        traced = []
        for name, judge in cases:
            with lesson_run.lines_run() as seen:
                assert judge() == [], f"{lesson}: {name} is not judged as it says"
            traced.append((name, seen, judge))
        _traced[lesson] = traced
    return _traced[lesson]


def _killer(mutant):
    """The first answer that tells the mutant from the check (its name), or None."""
    lessons = [_lesson_of(mutant)] if mutant.module != "__init__" else course.LESSONS
    cases = [case for lesson in lessons for case in _cases(lesson)]
    # the answers that run the changed line first: one of them kills it, as a rule
    cases.sort(key=lambda case: (mutant.path, mutant.line) not in case[1])
    with mutants.applied(mutant):
        for name, seen, judge in cases:
            if (mutant.path, mutant.line) not in seen and mutant.kind == "skip":
                break       # (an answer that never runs the fail cannot see it skipped)
            if judge():
                return name
    return None


def test_every_mutant_of_the_checks_is_killed():
    every = mutants.mutants()
    names = {m.name for m in every}
    assert len(names) == len(every), "two mutants of one name: make a message start apart"
    assert set(EQUIVALENT) <= names, f"listed, but no such mutant: {set(EQUIVALENT) - names}"
    wanted = os.environ.get("MUTANTS", "30")
    seed = int(os.environ.get("MUTANT_SEED", random.randrange(10 ** 6)))
    chosen = every if wanted == "all" else random.Random(seed).sample(every, min(int(wanted),
                                                                                 len(every)))
    print(f"\n{len(chosen)} of {len(every)} mutants of the checks, MUTANT_SEED={seed}")
    started, survived, killed_but_listed = time.monotonic(), [], []
    for mutant in chosen:
        killer = _killer(mutant)
        if killer is None and mutant.name not in EQUIVALENT:
            survived.append(f"{mutant.path}:{mutant.line} {mutant.name}")
        if killer is not None and mutant.name in EQUIVALENT:
            killed_but_listed.append(f"{mutant.name} (killed by {killer})")
    print(f"{len(chosen) - len(survived)} killed or equivalent in "
          f"{time.monotonic() - started:.0f} s")
    assert survived == [], f"mutants no answer kills (MUTANT_SEED={seed})"
    assert killed_but_listed == [], "listed as equivalent, but an answer tells them apart"
