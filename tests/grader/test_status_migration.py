"""The status row's forgery flag, on a gradebook an older grader wrote: the columns are added
where missing (SQLite and PostgreSQL), and a row that grader marked ``ATTEMPT`` in its
sandbox column reads as a forgery, once, at the migration; every other row reads as before."""
from sqlalchemy import Column, DateTime, Float, MetaData, String, Table, Text, create_engine

from autograd_lab_grader.course import Course
from autograd_lab_grader.gradebook import status

OLD = {   # student -> the sandbox column an older grader wrote
    "forged": "ATTEMPT: the kernel's own run of 1 test cell(s) claimed 2 point(s) the grader "
              "did not give (test_square); the memory limit stopped an allocation",
    "shadow": "ATTEMPT: code handed in beside the notebook, left out: stack_data.py",
    "refused": "a read or write outside its folder was refused",
    "honest": "",
    "lower": "it made an attempt to read /etc",   # not the mark (SQLite's LIKE ignores case)
}


def _old_gradebook(url: str) -> None:
    """The status table as the grader wrote it before the forgery flag, with rows."""
    from datetime import datetime

    metadata = MetaData()
    old = Table(status.submissions.name, metadata,
                Column("lesson", String(128), primary_key=True),
                Column("student", String(128), primary_key=True),
                Column("status", String(32), nullable=False),
                Column("reason", Text, nullable=False, default=""),
                Column("score", Float), Column("max_score", Float), Column("seconds", Float),
                Column("graded_at", DateTime, nullable=False),
                Column("sandbox", Text, nullable=False, default=""))
    engine = create_engine(url)
    metadata.create_all(engine)
    with engine.begin() as db:
        for student, sandbox in OLD.items():
            db.execute(old.insert().values(lesson="01", student=student, status=status.GRADED,
                                           reason="", score=1.0, max_score=5.0, seconds=1.0,
                                           graded_at=datetime(2026, 1, 1), sandbox=sandbox))
    engine.dispose()


def _course(root, db_url=None) -> Course:
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text("c = get_config()\n"
                                             "c.CourseDirectory.course_id = 'migration'\n")
    return Course(root, db_url)


def _check(course: Course) -> None:
    course.gradebook().close()              # nbgrader's tables first, as a real gradebook has
    _old_gradebook(course.gradebook_url)
    rows = {s: r for (_, s), r in status.read(course).items()}
    assert {s for s, r in rows.items() if r.forgery} == {"forged", "shadow"}, rows
    assert rows["forged"].forgery_reason.startswith("the kernel's own run of 1 test cell")
    assert rows["forged"].sandbox == "the memory limit stopped an allocation"
    assert rows["shadow"].forgery_reason == ("code handed in beside the notebook, left "
                                               "out: stack_data.py")
    assert rows["shadow"].sandbox == ""
    for student in ("refused", "honest", "lower"):
        assert (rows[student].forgery, rows[student].forgery_reason,
                rows[student].sandbox) == (False, "", OLD[student]), rows[student]
    # once: a row written since is what its grader said, whatever its text
    status.record(course, [status.Row("01", "honest", status.GRADED,
                                      sandbox="ATTEMPT: printed by a learner?")])
    status.record(course, [status.Row("01", "forged", status.GRADED,
                                      forgery=True, forgery_reason="the grader's words")])
    rows = {s: r for (_, s), r in status.read(course).items()}
    assert rows["honest"].forgery is False
    assert (rows["forged"].forgery, rows["forged"].forgery_reason) == (
        True, "the grader's words")


def test_an_old_sqlite_gradebook_gets_the_flag(tmp_path):
    _check(_course(tmp_path / "course"))


def test_an_old_postgresql_gradebook_gets_the_flag(postgresql, tmp_path):
    _check(_course(tmp_path / "course", postgresql.create("course")))
