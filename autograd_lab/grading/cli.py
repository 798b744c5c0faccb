"""`autograd-lab`: the instructor's command line. Each command is a few lines over a step module
(collect, grade, feedback, export, report, release, selftest); tests call those modules directly."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .course import Course
from .sandbox import OFF

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="Grade the autograd-lab course over nbgrader: release, collect, grade, "
                       "feedback, export, report. nbgrader's own commands keep working.")
console = Console()


@app.callback()
def main(ctx: typer.Context,
         course: Path = typer.Option(Path("."), "--course", "-C",
                                     help="The course directory (it holds nbgrader_config.py)."),
         db_url: Optional[str] = typer.Option(
             None, "--db-url", envvar="AUTOGRAD_LAB_DB_URL",
             help="The gradebook, e.g. postgresql://grader@host/course for several graders "
                  "(default: the course's, else gradebook.db).")):
    ctx.obj = (course, db_url)      # opened by the command (so --help works anywhere)


def _course(ctx: typer.Context) -> Course:
    try:
        return Course(*ctx.obj)
    except FileNotFoundError as error:
        _fail(str(error))


def _fail(message: str):
    console.print(f"[red]{message}")
    raise typer.Exit(1)


_NO_SANDBOX = typer.Option(
    False, "--no-sandbox", help="Run learners' code unsandboxed, as you, with access to the "
                                "course directory (only where bubblewrap cannot run).")
_WARNING = ("WARNING: graded WITHOUT the sandbox (--no-sandbox). The learners' code ran as you, "
            "and could read solutions/ and the hidden tests and change the gradebook and other "
            "learners' files. The export marks these grades.")


def _sandbox(no_sandbox: bool) -> bool:
    """True when grading is sandboxed; stops with the reason when the sandbox cannot run."""
    if no_sandbox:
        console.print(f"[bold red]{_WARNING}")
        return False
    from .sandbox import Unavailable, check

    try:
        check()
    except Unavailable as error:
        _fail(f"Not grading: {error}")
    return True


@app.command()
def release(ctx: typer.Context, lessons: List[str] = typer.Argument(
        None, help="Lessons to release (default: all of solutions/).")):
    """Generate the student notebooks (nbgrader generate_assignment) into notebooks/."""
    from .release import release as run

    for lesson, ok, log in run(_course(ctx), lessons or None):
        console.print(f"{lesson}: {'released' if ok else '[red]FAILED[/]'}")
        if not ok:
            _fail(log)


@app.command("student-repo")
def student_repo(ctx: typer.Context, dest: Path = typer.Argument(
        ..., help="An empty or new folder for the learners' repository.")):
    """Write the learners' repository: package, notebooks/, binder/, README.

    No solutions/, no hidden test, no solution source."""
    from .release import student_repo as run

    written = run(_course(ctx), dest)
    console.print(f"wrote {len(written)} files to {dest}")


@app.command()
def roster(ctx: typer.Context, file: Path = typer.Argument(
        ..., exists=True, dir_okay=False,
        help="Canvas's gradebook export, Moodle's grading worksheet, or a CSV with id and name.")):
    """Put the class list into nbgrader's Student table (ids are the LMS's ids).

    A learner on the roster who hands nothing in is then `missing`, not absent, everywhere."""
    from .roster import roster as run

    try:
        kind, learners, added, updated = run(_course(ctx), file)
    except ValueError as error:
        _fail(str(error))
    console.print(f"{file.name}: a {kind}, {len(learners)} learners "
                  f"({added} new, {updated} updated, {len(learners) - added - updated} as before)")


@app.command()
def collect(ctx: typer.Context,
            source: Path = typer.Argument(..., exists=True, help=(
                "An LMS download (Canvas, Moodle: a zip or its unpacked folder), a folder of "
                "learner notebooks, or one notebook (with --student and --lesson).")),
            lesson: Optional[str] = typer.Option(
                None, "--lesson", "-l", help="The lesson this download is for (a file naming "
                                             "another lesson is placed here all the same, and "
                                             "said so). Without it, the lesson id in each name."),
            lms_kind: Optional[str] = typer.Option(
                None, "--lms", help="canvas or moodle: whose download it is (default: "
                                    "recognised from the names when they say so)."),
            student: Optional[str] = typer.Option(
                None, "--student", help="With one notebook as SOURCE: whose it is."),
            student_pattern: str = typer.Option(
                None, help="For a flat folder or zip of no LMS: a regular expression whose "
                           "group `student` is the id in a file name (default: up to the "
                           "first _)."),
            max_size: int = typer.Option(20, min=1, help="Megabytes a submitted file may have."),
            timezone_name: str = typer.Option(
                "UTC", "--timezone", help="The time zone of the LMS zip's file times (they "
                                          "become nbgrader's submission times).")):
    """Bring submissions into submitted/<student>/<lesson>/, naming every file not placed.

    Safe to run on every download: an identical submission is unchanged (not graded again),
    a changed one replaces the old, which is kept in submitted-history/."""
    from zoneinfo import ZoneInfo

    from . import collect as step
    from .lms import KINDS

    course = _course(ctx)
    limit = max_size * 1024**2
    try:
        if student is not None or source.is_file() and not zipfile_like(source):
            if student is None or lesson is None:
                _fail("one notebook is placed with --student ID --lesson LESSON")
            result = step.collect_file(course, source, student, lesson, max_bytes=limit)
        else:
            if lms_kind is not None and lms_kind not in KINDS:
                _fail(f"--lms is one of {', '.join(KINDS)}, not {lms_kind}")
            result = step.collect(course, source, lesson=lesson, kind=lms_kind,
                                  student_pattern=student_pattern or step.STUDENT_PATTERN,
                                  max_bytes=limit, tz=ZoneInfo(timezone_name))
    except (ValueError, OSError) as error:
        _fail(str(error))
    if result.lms:
        console.print(f"a {result.lms.capitalize()} download: student ids are its "
                      f"{'user' if result.lms == 'canvas' else 'participant'} ids")
    new = {(s, l) for s, l, _ in result.placed} - {(s, l) for s, l, _ in result.replaced}
    console.print(f"{len(new)} new, {len(result.replaced)} replaced, "
                  f"{len(result.unchanged)} unchanged, {len(result.not_placed)} not placed")
    for student_id, lesson_id, kept in result.replaced:
        console.print(f"replaced: {student_id} {lesson_id} (the old one is kept in {kept})")
    for name, note in result.notes:
        console.print(f"[yellow]check[/]: {name}: {note}")
    for name, why in result.not_placed:
        console.print(f"[yellow]not placed[/]: {name}: {why}")


def zipfile_like(path: Path) -> bool:
    import zipfile

    return zipfile.is_zipfile(path)


@app.command()
def grade(ctx: typer.Context,
          lesson: str = typer.Argument(..., help="The lesson (nbgrader assignment) to grade."),
          jobs: int = typer.Option(0, "--jobs", "-j", min=0, show_default=False,
                                   help="Submissions graded at once "
                                        "(default: one more than the cores)."),
          force: bool = typer.Option(False, help="Grade again submissions graded before."),
          timeout: Optional[int] = typer.Option(
              None, min=1, help="Seconds a cell may run (default: the course's Execute.timeout)."),
          memory: Optional[int] = typer.Option(None, min=1, help="Megabytes per grading kernel "
                                                                 "(default: 2048)."),
          shard: str = typer.Option("1/1", help="Grade part K of N of the class (K/N), for "
                                                "several graders sharing one gradebook."),
          cold: bool = typer.Option(False, "--cold", help="Start every kernel afresh instead "
                                    "of forking it from the run's warm server (slower)."),
          no_sandbox: bool = _NO_SANDBOX):
    """Autograde every submission of LESSON, each in a process of its own.

    Each kernel runs in a bubblewrap sandbox that sees no course file but its own submission;
    run as root, kernels are forked from one warm server per run, each as a user of its own.
    Shows a progress bar, then a summary; exits with status 1 when any submission failed."""
    from nbgrader.api import MissingEntry

    from . import grade as step

    course = _course(ctx)
    options = step.Options(jobs=jobs, force=force, timeout=timeout, shard=step.Shard.parse(shard),
                           memory=memory * 1024**2 if memory else None,
                           sandboxed=_sandbox(no_sandbox), warm=not cold)
    skipped = []

    def start(total, unchanged):
        progress.update(task, total=total)
        skipped.extend(unchanged)

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False) as progress:
        task = progress.add_task(f"grading {lesson}", total=None)
        try:
            rows = step.grade(course, lesson, options, on_start=start,
                              on_done=lambda row: progress.update(
                                  task, advance=1,
                                  description=f"grading {lesson}: {row['student']}"))
        except MissingEntry:
            _fail(f"{lesson} is not in the gradebook: release it first "
                  f"(autograd-lab release {lesson})")
    console.print(summary_table(rows, f"{lesson}: this run"))
    if not options.sandboxed:
        console.print(f"[bold red]{_WARNING}")
    if skipped:
        console.print(f"{len(skipped)} graded before and unchanged since, not graded again "
                      "(--force grades them again)")
    if any(row["status"] == "failed" for row in rows):
        raise typer.Exit(1)


def summary_table(rows, title) -> Table:
    counts = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    table = Table(title=title)
    for column in ("student", "status", "score", "note", "sandbox"):
        table.add_column(column)
    for row in rows:
        # (without the sandbox every row would say so: the warning below the table does)
        sandbox = "" if row.get("sandbox") == OFF else row.get("sandbox", "")
        if row["status"] != "graded" or row["reason"] or sandbox:
            score = "" if row["score"] is None else f"{row['score']:g}/{row['max_score']:g}"
            table.add_row(row["student"], row["status"], score, row["reason"], sandbox)
    table.caption = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing to grade"
    return table


@app.command()
def feedback(ctx: typer.Context, lesson: str = typer.Argument(...)):
    """Per-learner HTML feedback in feedback/.

    Each check's message (the misconception), no hidden test, no traceback."""
    from .feedback import feedback as run

    pages = run(_course(ctx), lesson)
    console.print(f"wrote {len(pages)} feedback pages")


@app.command()
def export(ctx: typer.Context,
           out: Path = typer.Option(Path("grades"), help="Folder for the CSV files.")):
    """CSV grades per learner and per question, with a status column.

    grades.csv: a row per learner and lesson; questions.csv: per learner and question.
    Status: graded, failed, missing, needs manual grading (a failure is never a 0.0)."""
    from .export import export as run

    for path in run(_course(ctx), out):
        console.print(f"wrote {path}")


@app.command()
def report(ctx: typer.Context, lesson: str = typer.Argument(...),
           out: Path = typer.Option(None, help="The figure (default: reports/<lesson>.png).")):
    """Per exercise, learners who passed and who showed each misconception.

    A table here, and a PNG figure for a slide."""
    from .report import report as run, write_figure

    result = run(_course(ctx), lesson)
    table = Table(title=f"{lesson}: {result.learners} learners graded")
    for column in ("exercise", "passed", "misconception", "learners"):
        table.add_column(column)
    for exercise in result.exercises:
        first = True
        for misconception, n in exercise.misconceptions.most_common() or [("", "")]:
            table.add_row(exercise.name if first else "", str(exercise.passed) if first else "",
                          misconception, str(n))
            first = False
    console.print(table)
    path = write_figure(result, out or _course(ctx).root / "reports" / f"{lesson}.png")
    console.print(f"wrote {path}")


@app.command()
def selftest(ctx: typer.Context, lessons: List[str] = typer.Argument(
        None, help="Lessons to test (default: all of solutions/)."),
        no_sandbox: bool = _NO_SANDBOX):
    """Check the course grades its solutions full and its blank release zero.

    Runs in a scratch copy of the course, with its own gradebook, sandboxed as grade is."""
    from .grade import Options
    from .selftest import selftest as run

    course = _course(ctx)
    results = run(course, lessons or None, Options(sandboxed=_sandbox(no_sandbox)))
    table = Table(title="selftest")
    for column in ("lesson", "solution", "blank", "ok"):
        table.add_column(column)
    for r in results:
        table.add_row(r.lesson, r.solution, r.blank, "yes" if r.ok else "[red]NO")
    console.print(table)
    if not all(r.ok for r in results):
        raise typer.Exit(1)
