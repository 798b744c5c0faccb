"""The grader's own red team, at the protocol: every test cell of every lesson judged as the
grader judges it (``verdict.judge``, the learner's names as Remotes), against a kernel that
ran the solution and then answers each probe with a reply of another shape than the one its
probe returns: the tuple emptied, cut short, made longer or turned around, and each list or
tuple inside it the same way. An unchanged kernel never sends one, so every such reply fails
its cell (what a blank notebook's cell scores) and is recorded as malformed, for the grader
to flag the notebook.

What an attacker who has read answers.py can send is any well-formed description: these
replies are built from the honest one, so that everything but their shape is right.
(A check added to a lesson is covered here without a change: the test walks every test cell.)
"""
import copy
import importlib
import json

import nbformat
import pytest

import course as lessons
from autograd_lab import checks
from autograd_lab.checks import answers
from autograd_lab_grader.reading import verdict

LESSONS = [lesson for lesson in lessons.LESSONS if lesson != "00_start_here"]


def _solution(lesson):
    """The solution's cells in order: ("code", source) and ("test", grade_id, source)."""
    nb = nbformat.read(lessons.solution_path(lesson), as_version=4)
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            cells.append(("test", meta["grade_id"], cell.source))
        else:
            cells.append(("code", cell.source))
    return cells


def _run(source, namespace):
    """A code cell, as a kernel runs it (one that raises, as some lessons show on purpose,
    and IPython's magics, are passed over)."""
    if source.lstrip().startswith(("%", "!")):
        return
    try:
        exec(compile(source, "<cell>", "exec"), namespace)
    except Exception:                           # noqa: BLE001 -- a cell that raises on purpose
        pass


def _structure(data, shape, path=()):
    """The paths of every list or tuple of a reply's description that the probe itself
    makes (the shape the check says), outermost first: what is inside a learner's answer
    (ANY, an Outcome's value) is theirs, of any kind, and judged as such."""
    if shape is checks.ANY or isinstance(shape, type) or data.get("t") == "same":
        return []
    if isinstance(shape, checks.Maybe):
        return [] if data.get("t") == "none" else _structure(data, shape.item, path)
    items = data.get("items", [])
    if isinstance(shape, checks.Shape):
        shape = shape.expand(items)
    found = [path] if items else []
    for i, (item, part) in enumerate(zip(items, shape)):
        found += _structure(item, part, (*path, "items", i))
    return found


def _at(data, path):
    for key in path:
        data = data[key]
    return data


MUTATIONS = {
    "empty": lambda items: [],
    "short": lambda items: items[:-1],
    "extra": lambda items: items + [copy.deepcopy(items[-1])],
    "reordered": lambda items: items[::-1],
}


def _forged(reply, path, how):
    """The honest reply with the list or tuple at ``path`` of its answer changed ``how``;
    None when that changes nothing (a tuple of one turned around)."""
    reply = json.loads(reply)
    node = _at(reply["answer"], path)
    items = MUTATIONS[how](node["items"])
    if items == node["items"]:
        return None
    # a shared object's later references would point at nothing described: keep them valid
    node["items"] = items
    return answers.encode(reply)


def _judge(source, ask, lesson):
    # (one submission's key, the same for every judging: a hidden test draws the same cases)
    with checks.judging(b"the red team's learner"):
        return verdict.judge(source, ask, str(lessons.ROOT / "solutions" / lesson))


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_reply_of_the_wrong_shape_fails_its_cell_and_is_recorded(lesson):
    import matplotlib
    matplotlib.use("Agg")
    namespace = {"__name__": "__main__"}
    forged_cells = 0
    for cell in _solution(lesson):
        if cell[0] == "code":
            _run(cell[1], namespace)
            continue
        _, grade_id, source = cell
        honest_replies = []

        def honest(request, honest_replies=honest_replies):
            reply = answers.serve(request, namespace)
            honest_replies.append((request, reply))
            return reply

        judged = _judge(source, honest, lesson)
        assert not judged.raised and not judged.malformed, (grade_id, judged.outputs)
        probes = [(json.loads(q), r) for q, r in honest_replies
                  if json.loads(q)["op"] == "probe" and "answer" in json.loads(r)]
        for index, (asked, reply) in enumerate(probes):
            check = _check(asked["check"])
            default = check.probe is checks._the_answers
            shape = (check.reply(**answers.rebuild(asked["settings"])) if check.reply
                     else (checks.ANY,) * len(asked["answers"]))
            for path in _structure(json.loads(reply)["answer"], shape):
                for how in MUTATIONS:
                    forged = _forged(reply, path, how)
                    if forged is None or default and path == () and how == "reordered":
                        # (the learner's own answers, in another order: what a learner who
                        # swapped them scores, which is nothing the grader could tell)
                        continue
                    seen = []

                    def attacker(request, forged=forged, seen=seen, index=index,
                                 honest_replies=honest_replies):
                        # the kernel answers this probe (the index-th asked) forged, the rest
                        # as it answered them honestly (the same request, the same reply),
                        # echoing the id as an unchanged kernel does
                        asked_now = json.loads(request)
                        reply = _replayed(honest_replies, asked_now, namespace)
                        if asked_now["op"] == "probe":
                            seen.append(1)
                            if len(seen) == index + 1:
                                forged_reply = json.loads(forged)
                                forged_reply["re"] = asked_now["re"]
                                return answers.encode(forged_reply)
                        return reply

                    judged = _judge(source, attacker, lesson)
                    where = (grade_id, index, path, how)
                    kinds = _kinds(json.loads(reply)["answer"], path)
                    if how != "reordered" or len(set(kinds)) > 1:
                        assert judged.raised, where
                        assert verdict.points(_cell(), judged.outputs) == 0, where
                        assert judged.malformed, where
                    # (items of one kind turned around are each judged against their own
                    # case: from right answers they may still be right, or not)
                    forged_cells += 1
    assert forged_cells or lesson in ("01_tensors_that_remember",), lesson


def _replayed(honest_replies, asked, namespace):
    """What the honest kernel replied to the same request (its id aside), with this one's id;
    served afresh where it was never asked."""
    key = {k: v for k, v in asked.items() if k != "re"}
    for request, reply in honest_replies:
        if {k: v for k, v in json.loads(request).items() if k != "re"} == key:
            found = json.loads(reply)
            found["re"] = asked.get("re")
            return answers.encode(found)
    return answers.serve(json.dumps(asked), namespace)


def _check(path):
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _kinds(answer, path):
    return [item.get("t") for item in _at(answer, path)["items"]]


def _cell():
    return nbformat.v4.new_code_cell(metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "points": 1, "grade_id": "t",
        "schema_version": 3}})


def test_a_reply_to_another_request_is_malformed_and_recorded():
    from autograd_lab.checks import lesson02

    kernel = {"dy_dx": lambda x: 6 * x * (x ** 2 + 1) ** 2}
    kept = []

    def replaying(request):
        reply = json.loads(answers.serve(request, kernel))
        kept.append(reply)
        return answers.encode(dict(kept[0], re="0" * 16))     # not this request's id
    answers.MALFORMED.clear()
    with pytest.raises(answers.Malformed, match="not to the request"):
        lesson02.chain_rule_formula(answers.Remote("dy_dx", replaying), points=[1.5])
    assert answers.MALFORMED


def test_a_shared_list_counts_as_often_as_it_is_used():
    """A reply of a few hundred bytes standing for 10**18 floats is refused as it is rebuilt,
    before anything walks it."""
    level = {"t": "list", "id": 0, "items": [{"t": "float", "v": "0x0p+0"}] * 1000}
    data = level
    for depth in range(1, 7):
        data = {"t": "list", "id": depth, "items": [data] + [{"t": "same", "id": depth - 1}] * 999}
    text = answers.encode(data)
    assert len(text) < 1024**2
    with pytest.raises(answers.Unreadable, match="counted as often"):
        answers.rebuild(answers.decode(text))
    # an honest answer that shares a little is rebuilt as it was
    a = [1.0, 2.0]
    assert answers.rebuild(answers.decode(answers.encode(answers.describe([a, a, a])))) == [a] * 3


# -- what a kernel reports of itself ------------------------------------------------------------
def _test_cell(lesson, grade_id):
    return next(cell[2] for cell in _solution(lesson) if cell[0] == "test" and cell[1] == grade_id)


def _error(judged):
    return " ".join(" ".join(o.get("evalue", "") for o in judged.outputs).split())


def _judged_with(lesson, grade_id, code, forge=lambda request, answer: None):
    """The test cell judged against a kernel that ran ``code``, whose probe replies ``forge``
    changes (in place, as a kernel changed to report what it likes would send them)."""
    namespace = {"__name__": "__main__"}
    exec("import autograd_lab as torch\n" + code, namespace)

    def ask(request):
        reply = json.loads(answers.serve(request, namespace))
        if json.loads(request)["op"] == "probe" and "answer" in reply:
            forge(json.loads(request), reply["answer"])
        return answers.encode(reply)
    return _judge(_test_cell(lesson, grade_id), ask, lesson)


def test_the_right_numbers_for_the_visible_cases_earn_nothing():
    """A derivative that knows the visible cases' answers: the hidden test's functions are
    drawn at grading, and its cell fails, saying only which check."""
    code = "def derivative(f, x0):\n    return {2.0: 29.0, 1.5: 6.75}[x0]\n"
    judged = _judged_with("02_scalar_backward", "autograd_derivative_test", code)
    assert judged.raised and verdict.points(_cell(), judged.outputs) == 0
    assert "A hidden test failed: derivative_by_backward." in _error(judged)
    assert "KeyError" not in _error(judged) and judged.hidden


def test_one_backward_of_the_whole_batch_reported_per_batch_earns_nothing():
    """One loss of the whole batch backwarded once per micro-batch: the count of passes is
    right, what each pass sends w is not. A kernel that reports four passes of the whole
    batch's share fails the same way: only the batches' own shares pass."""
    code = ("def accumulate_grad(w, x, y, batch_size):\n    w.grad = None\n"
            "    n = len(x) // batch_size\n"
            "    for _ in range(n):\n        (((w * x - y) ** 2).mean() / n).backward()\n")
    honest = _judged_with("05_accumulation", "microbatches_test", code)
    assert honest.raised and "did not each go through one micro-batch" in _error(honest)

    def four_equal(request, answer):      # (accumulate_grad, outcome, w, passes)
        passes = answer["items"][3]["items"]
        answer["items"][3]["items"] = passes[:1] * 4
    judged = _judged_with("05_accumulation", "microbatches_test", code, four_equal)
    assert judged.raised and verdict.points(_cell(), judged.outputs) == 0


def test_the_engine_under_another_name_walks_no_graph_of_the_checks():
    """my_backward that hands the graph to the engine's backward, bound under another name
    before any check could refuse it: the graphs of the checks' own making have no part the
    engine can walk."""
    code = ("from autograd_lab._core.backward import backward as engine_backward\n"
            "def my_backward(root, gradient):\n    engine_backward(root, gradient)\n")
    judged = _judged_with("08_backward_by_hand", "my_backward_test", code)
    assert judged.raised and "handed the graph to the engine" in _error(judged)
    code = ("from autograd_lab.autograd.functional import jacobian as whole\n"
            "def jacobian_by_rows(f, x):\n    return whole(f, x)\n")
    judged = _judged_with("04_jacobian_rows", "jacobian_by_rows_test", code)
    assert judged.raised and "went backward through one graph of f twice" in _error(judged)


def test_hidden_inputs_are_the_graders_own():
    """What a hidden test draws comes from the judging key: another learner's key draws other
    cases, the same key the same ones, and nothing of them is in the package."""
    from autograd_lab.checks import lesson02, lesson04, lesson05, lesson07, lesson08

    drawn = {}
    for key in (b"learner one", b"learner two", b"learner one"):
        found = []
        for check in (lesson02.derivative_by_backward, lesson04.jacobian_of_other_functions,
                      lesson05.microbatches, lesson07.by_hand, lesson08.my_backward_hidden):
            with checks.judging(key):
                found.append(check.draw(checks._drawn(check.__name__)))
        drawn.setdefault(key, []).append(found)
    (one, again), (two,) = drawn[b"learner one"], drawn[b"learner two"]
    assert one == again
    assert all(a != b for a, b in zip(one, two))
