"""`autograd-lab`: the instructor's command line. Each command is a few lines over a step module
(collect, grade, feedback, export, report, release, selftest); tests call those modules directly.

What it prints holds a learner's text (a name from the LMS, a file's name, a reason quoting the
notebook): each such text goes into a line through ``said``, its brackets escaped (rich reads
``[...]`` as markup: a style, a link, or an error that stops the command) and its control
characters escaped (``plain.printable``: a terminal obeys them); and whatever reaches the
terminal all the same has its control characters escaped there (``_Printable``)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console, RenderHook
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.segment import Segment
from rich.table import Table

from ..course import Course
from ..reading.plain import printable
from ..sandbox.sandbox import OFF

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="Grade the autograd-lab course over nbgrader, a term from an LMS: roster, "
                       "release, student-repo, collect, grade, feedback, export, report. "
                       "nbgrader's own commands keep working.")
console = Console(soft_wrap=True)     # (a message or a path is never broken into lines)


def said(value) -> str:
    """A learner's text, to go into a line of rich markup: as plain text."""
    return escape(printable(value))


class _Shown:
    """A renderable as the terminal gets it: the control characters of its text escaped (the
    sequences rich writes for its own styles and moves are not text: they stay)."""

    def __init__(self, renderable):
        self.renderable = renderable

    def __rich_console__(self, console, options):
        for segment in console.render(self.renderable, options):
            yield segment if segment.control else Segment(printable(segment.text),
                                                          segment.style)


class _Printable(RenderHook):
    def process_renderables(self, renderables):
        return [_Shown(r) for r in renderables]


console.push_render_hook(_Printable())


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
        course = Course(*ctx.obj)
    except FileNotFoundError as error:
        _fail(str(error))
    if (course.root / "gradebook.db").is_file() and \
            not course.gradebook_url.startswith("sqlite"):
        # (nbgrader, its formgrader say, opened a gradebook of its own beside the shared one)
        console.print(f"[yellow]{course.root / 'gradebook.db'} is a gradebook of its own[/]: "
                      "autograd-lab grades in another database, so hand grades given in a "
                      "formgrader that opened it reach no export. Hand grade in "
                      f"`autograd-lab -C {course.root} formgrader`, and move gradebook.db "
                      "away once you have copied what it holds.")
    return course


def _fail(message: str):
    console.print(f"[red]{said(message)}")
    raise typer.Exit(1)


def _lesson(course: Course, spec: str) -> str:
    """A lesson by its number (``02``) or id (``02_scalar_backward``): Course.lesson."""
    try:
        return course.lesson(spec)
    except ValueError as error:
        _fail(str(error))


def _lessons(course: Course, specs) -> list[str] | None:
    try:
        return course.resolve(specs) or None
    except ValueError as error:
        _fail(str(error))


def _zone(name: str):
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name)
    except (ValueError, KeyError):
        _fail(f"--timezone: no time zone {name!r} (e.g. UTC, Europe/Berlin)")


_TIMEZONE = typer.Option("UTC", "--timezone", help="The time zone of the dates given "
                                                   "(unless a date names its own offset).")


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
    from ..sandbox.sandbox import Unavailable, check

    try:
        check()
    except Unavailable as error:
        _fail(f"Not grading: {error}")
    return True


@app.command()
def release(ctx: typer.Context, lessons: List[str] = typer.Argument(
        None, help="Lessons to release, by number or id (default: all of solutions/)."),
        due: Optional[str] = typer.Option(
            None, "--due", help="The due date of the lessons released (2026-11-20 23:59; "
                                "default: the course's c.AutogradLab.due, if any)."),
        timezone_name: str = _TIMEZONE):
    """Generate the student notebooks (nbgrader generate_assignment) into notebooks/."""
    from ..gradebook import late
    from ..steps.release import release as run

    course = _course(ctx)
    chosen = _lessons(course, lessons)
    try:
        when = late.parse_when(due, _zone(timezone_name)) if due else None
        for lesson, ok, log, due_date in run(course, chosen, due=when, tz=_zone(timezone_name)):
            console.print(f"{lesson}: {'released' if ok else '[red]FAILED[/]'}"
                          + (f", due {late.show(due_date)}" if ok and due_date else ""))
            if not ok:
                _fail(log)
    except ValueError as error:
        _fail(str(error))


@app.command()
def due(ctx: typer.Context,
        lesson: str = typer.Argument(..., help="The lesson, by number or id."),
        when: Optional[str] = typer.Argument(
            None, help="Its due date (2026-11-20 23:59); without it, the one it has is shown."),
        timezone_name: str = _TIMEZONE,
        clear: bool = typer.Option(False, "--clear", help="Take the due date away.")):
    """Set a lesson's due date (nbgrader's duedate), also after learners handed in."""
    from ..gradebook import late

    course = _course(ctx)
    lesson = _lesson(course, lesson)
    try:
        if clear or when:
            late.set_due(course, lesson, None if clear else late.parse_when(when,
                                                                          _zone(timezone_name)))
    except ValueError as error:
        _fail(str(error))
    shown = late.dues(course).get(lesson)
    console.print(f"{lesson}: due {late.show(shown)}" if shown else f"{lesson}: no due date")
    if clear or when:
        _stale_pages(course, [(lesson, s) for s in course.students_with(lesson)])


def _stale_pages(course, changed):
    """A due date changed: the feedback pages of ``changed`` (lesson, student) say a grade that
    is no longer theirs; they are removed, and said (``feedback`` writes them again)."""
    from ..steps.feedback import remove_page

    removed = [(lesson, student) for lesson, student in changed
               if remove_page(course, lesson, student)]
    for lesson in sorted({lesson for lesson, _ in removed}):
        who = sorted(student for l, student in removed if l == lesson)
        console.print(f"removed the feedback pages of {', '.join(who)} for {lesson}: their "
                      f"grade changed with the due date; `autograd-lab feedback {lesson}` "
                      "writes them again")


@app.command()
def extend(ctx: typer.Context,
           lesson: Optional[str] = typer.Argument(None, help="The lesson, by number or id."),
           students: Optional[List[str]] = typer.Argument(None, help="The learners' ids."),
           until: Optional[str] = typer.Option(None, "--until", help="Their own due date."),
           days: Optional[float] = typer.Option(None, "--days", help="Days after the lesson's "
                                                                     "due date."),
           csv_file: Optional[Path] = typer.Option(
               None, "--csv", exists=True, dir_okay=False,
               help="A CSV of extensions: student, lesson, due (a date, or days after the "
                    "lesson's due date; empty takes one back)."),
           clear: bool = typer.Option(False, "--clear", help="Take their extension back."),
           timezone_name: str = _TIMEZONE):
    """Give learners a due date of their own for a lesson (an extension).

    Export, grade's summary and report judge lateness by it; nbgrader's submission gets it as
    its extension where it has one."""
    from datetime import timedelta

    from ..gradebook import late

    course = _course(ctx)
    zone = _zone(timezone_name)
    try:
        if csv_file is not None:
            grants = late.read_csv(course, csv_file, zone)
        else:
            if lesson is None or not students or (until is None and days is None and not clear):
                _fail("extend LESSON STUDENT... --until DATE (or --days N, or --clear), "
                      "or extend --csv FILE")
            lesson = _lesson(course, lesson)
            if clear:
                when = None
            elif until is not None:
                when = late.parse_when(until, zone)
            else:
                base = late.dues(course).get(lesson)
                if base is None:
                    _fail(f"{lesson} has no due date to extend: set it with "
                          f"`autograd-lab due {lesson} DATE`, or give --until")
                when = base + timedelta(days=days)
            grants = [(lesson, student, when) for student in students]
    except ValueError as error:
        _fail(str(error))
    late.extend(course, grants)
    for lesson_id, student, when in grants:
        console.print(f"{said(student)} {lesson_id}: " + (f"due {late.show(when)}" if when
                                                     else "no extension"))
    _stale_pages(course, [(lesson_id, student) for lesson_id, student, _ in grants])


@app.command("student-repo")
def student_repo(ctx: typer.Context,
                 dest: Path = typer.Argument(..., help="A new or empty folder, or a learners' "
                                                       "repository written here before."),
                 more: Optional[List[str]] = typer.Argument(None, hidden=True),
                 binder: Optional[str] = typer.Option(
                     None, help="OWNER/REPO: the learners' GitHub repository, for the Binder "
                                "and Colab links in its README and the lessons' install cell "
                                "(Colab installs the course from it)."),
                 lessons: Optional[List[str]] = typer.Option(
                     None, help="The lessons to hand out, by id or number (--lessons 00 01); "
                                "default: every released one. Run again with more to add "
                                "them."),
                 self_study: bool = typer.Option(
                     False, "--self-study", help="A repository for learners on their own: "
                     "hand out the written answers' model answers and rubrics, which a "
                     "lesson reveals once the learner has written their own. Without it "
                     "(a class whose written answers you grade) there are none in it."),
                 no_model_answers: bool = typer.Option(
                     False, "--no-model-answers", hidden=True),     # (the default now)
                 model_answers: bool = typer.Option(False, "--model-answers", hidden=True)):
    """Write the learners' repository: package, notebooks/, binder/, README, a git commit.

    No solutions/, no hidden test, no solution source, no instructor command, and no model
    answer unless --self-study."""
    from ..steps.release import student_repo as run

    if model_answers:
        _fail("--model-answers is now --self-study: model answers and rubrics go out only in "
              "a repository for learners on their own (`student-repo DIR --self-study`)")
    if self_study and no_model_answers:
        _fail("--self-study hands out the model answers, --no-model-answers leaves them out: "
              "choose one (without either, they are left out)")
    course = _course(ctx)
    released = sorted(p.name for p in course.directory("release").iterdir() if p.is_dir())
    chosen = []
    for spec in [*(lessons or []), *(more or [])]:
        found = _lesson(course, spec)
        if found not in released:
            _fail(f"{found} is not released (released: {', '.join(released)})")
        chosen.append(found)
    try:
        written = run(course, dest, binder=binder, lessons=chosen or None,
                      self_study=self_study)
    except ValueError as error:
        _fail(str(error))
    console.print(f"wrote {len(written)} files to {dest}, committed; "
                  + ("with the model answers and rubrics (--self-study)" if self_study else
                     "no model answer in it (--self-study hands them out)"))
    if binder is None:
        console.print("[yellow]no Binder or Colab links: --binder OWNER/REPO names the "
                      "repository learners will open (and Colab installs the course from)")


@app.command()
def roster(ctx: typer.Context, file: Path = typer.Argument(
        ..., exists=True, dir_okay=False,
        help="Canvas's gradebook export, Moodle's grading worksheet, or a CSV with id and name.")):
    """Put the class list into nbgrader's Student table (ids are the LMS's ids).

    A learner on the roster who hands nothing in is then `missing`, not absent, everywhere."""
    from ..steps.roster import roster as run

    try:
        kind, learners, added, updated, left_out = run(_course(ctx), file)
    except ValueError as error:
        _fail(str(error))
    console.print(f"{file.name}: a {kind}, {len(learners)} learners "
                  f"({added} new, {updated} updated, {len(learners) - added - updated} as before)")
    for learner in left_out:
        console.print(f"left out: {said(repr(learner.name))} (id {said(learner.student)}), "
                      "Canvas's Test Student (its student view), not a learner")


@app.command()
def drop(ctx: typer.Context,
         students: Optional[List[str]] = typer.Argument(
             None, help="The learners' ids (without: the learners taken out, listed)."),
         undo: bool = typer.Option(False, "--undo", help="Bring them back into the term."),
         note: str = typer.Option("", "--note", help="Why, for you (kept with the drop).")):
    """Take learners out of the term (they dropped the course), or bring them back (--undo).

    A learner taken out is in no grades.csv, LMS file, report count or warning, and is not
    graded; their files, history and grades stay, and --undo brings them back with them."""
    from ..gradebook import status

    course = _course(ctx)
    if not students:
        dropped = status.read_dropped(course)
        for student, info in sorted(dropped.items()):
            console.print(f"{student}: taken out {info['at']:%Y-%m-%d %H:%M} UTC"
                          + (f" ({info['note']})" if info["note"] else ""),
                          markup=False, highlight=False)
        if not dropped:
            console.print("no learner is taken out of the term")
        return
    if undo:
        back = status.undrop(course, students)
        for student in students:
            console.print(f"{student}: back in the term" if student in back
                          else f"{student}: was not taken out", markup=False, highlight=False)
        return
    with course.gradebook() as gb:
        known = {s.id for s in gb.students}
    submitted = course.directory("submitted")
    known |= {p.name for p in submitted.iterdir()} if submitted.is_dir() else set()
    unknown = sorted(set(students) - known)
    if unknown:
        _fail(f"no learner {', '.join(unknown)} in the course (its roster or submitted/)")
    status.drop(course, students, note)
    for student in students:
        console.print(f"{student}: taken out of the term (files and grades kept; "
                      f"`autograd-lab drop --undo {student}` brings them back)",
                      markup=False, highlight=False)


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
            when: Optional[str] = typer.Option(
                None, "--time", help="With one notebook as SOURCE: when it was handed in, as "
                                     "the LMS shows it (in --timezone); needed for a lesson "
                                     "with a due date (the file's own time is not read)."),
            student_pattern: str = typer.Option(
                None, help="For a flat folder or zip of no LMS: a regular expression whose "
                           "group `student` is the id in a file name (default: up to the "
                           "first _)."),
            homes: Optional[str] = typer.Option(
                None, "--homes", help="SOURCE is a hub's home folders (one learner a home, "
                                      "e.g. /home): this is where the learners' repository "
                                      "is in each (e.g. autograd-class); with --lesson."),
            exchange: bool = typer.Option(
                False, "--exchange", help="SOURCE is nbgrader's exchange (c.Exchange.root, or "
                                          "its inbound folder of this course), where `nbgrader "
                                          "submit` puts submissions."),
            ids_file: Optional[Path] = typer.Option(
                None, "--ids", exists=True, dir_okay=False,
                help="With --homes or --exchange: a CSV of user (the hub's user name) and id "
                     "(the learner's id in the course, e.g. the LMS's)."),
            max_size: int = typer.Option(20, min=1, help="Megabytes a submitted file may have."),
            timezone_name: str = typer.Option(
                "UTC", "--timezone", help="The time zone of the LMS zip's file times (they "
                                          "become nbgrader's submission times) and of "
                                          "--time.")):
    """Bring submissions into submitted/<student>/<lesson>/, naming every file not placed.

    Safe to run on every download: an identical submission is unchanged (not graded again),
    a changed one replaces the old, which is kept in submitted-history/."""
    from ..steps import collect as step
    from ..lms import KINDS

    course = _course(ctx)
    limit = max_size * 1024**2
    zone = _zone(timezone_name)
    if lesson is not None:
        lesson = _lesson(course, lesson)
    try:
        if homes is not None or exchange:
            if homes is not None and exchange:
                _fail("--homes and --exchange are two places a hub keeps work: one at a time")
            if when is not None or student is not None:
                _fail("--time and --student are for one notebook placed by hand: a hub's "
                      "times are the ones this machine recorded")
            ids = step.read_ids(ids_file) if ids_file is not None else None
            if homes is not None:
                if lesson is None:
                    _fail("--homes needs --lesson: which lesson's notebook to take from "
                          "each home")
                result = step.collect_homes(course, source, lesson, homes, ids=ids,
                                            max_bytes=limit)
            else:
                result = step.collect_exchange(course, source, lesson=lesson, ids=ids,
                                               max_bytes=limit)
        elif student is not None or source.is_file() and not zipfile_like(source):
            if student is None or lesson is None:
                _fail("one notebook is placed with --student ID --lesson LESSON")
            from ..gradebook import late

            result = step.collect_file(course, source, student, lesson, max_bytes=limit,
                                       when=late.parse_when(when, zone) if when else None)
        else:
            if when is not None:
                _fail("--time is for one notebook placed by hand: a download's times are "
                      "the LMS's")
            if lms_kind is not None and lms_kind not in KINDS:
                _fail(f"--lms is one of {', '.join(KINDS)}, not {lms_kind}")
            result = step.collect(course, source, lesson=lesson, kind=lms_kind,
                                  student_pattern=student_pattern or step.STUDENT_PATTERN,
                                  max_bytes=limit, tz=zone)
    except (ValueError, OSError) as error:
        _fail(str(error))
    if result.hint:
        console.print(f"[yellow]{said(result.hint)}")
    if result.lms:
        console.print(f"a {result.lms.capitalize()} download: student ids are its "
                      f"{'user' if result.lms == 'canvas' else 'participant'} ids")
    new = {(s, l) for s, l, _ in result.placed} - {(s, l) for s, l, _ in result.replaced}
    console.print(f"{len(new)} new, {len(result.replaced)} replaced, "
                  f"{len(result.unchanged)} unchanged, {len(result.not_placed)} not placed")
    for student_id, lesson_id, kept in result.replaced:
        console.print(f"replaced: {said(student_id)} {said(lesson_id)} (the old one is kept in "
                      f"{said(kept)})")
    for name, note in result.notes:
        console.print(f"[yellow]check[/]: {said(name)}: {said(note)}")
    for name, why in result.not_placed:
        console.print(f"[yellow]not placed[/]: {said(name)}: {said(why)}")


def _named(prefix: str, name: str) -> str:
    """An output's name: `prefix` and the LMS file's name, its prefix not doubled (a file
    already named canvas-gradebook.csv is written as canvas-gradebook.csv, not
    canvas-canvas-gradebook.csv)."""
    head = prefix.split("-")[0] + "-"
    while name.lower().startswith(prefix.lower()) or name.lower().startswith(head):
        name = name[len(prefix):] if name.lower().startswith(prefix.lower()) else name[len(head):]
    return prefix + name


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
          students: Optional[List[str]] = typer.Option(
              None, "--student", "-s", help="Grade (again) only this learner (repeat it)."),
          failed_only: bool = typer.Option(False, "--failed-only",
                                           help="The summary lists only failed submissions."),
          timeout: Optional[int] = typer.Option(
              None, min=1, help="Seconds a cell may run (default: the course's Execute.timeout)."),
          memory: Optional[int] = typer.Option(None, min=1, help="Megabytes per grading kernel "
                                                                 "(default: 2048)."),
          grader_memory: Optional[int] = typer.Option(
              None, min=1, help="Megabytes per grading process, which reads the kernel's "
                                "answers outside the sandbox; past it, only that submission "
                                "fails (default: 3072)."),
          shard: str = typer.Option("1/1", help="Grade part K of N of the class (K/N), for "
                                                "several graders sharing one gradebook."),
          run: Optional[str] = typer.Option(
              None, "--run", envvar="AUTOGRAD_LAB_RUN",
              help="The grading run this grader belongs to, shared by every grader of a "
                   "Slurm array or Kubernetes Job: a grader of the run started again grades "
                   "nothing the run graded (default: a run of its own)."),
          warm: Optional[bool] = typer.Option(
              None, "--warm/--cold",
              help="Fork every kernel from the run's warm server, or start every kernel afresh "
                   "(default: warm when the run grades 3 submissions or more, where it "
                   "costs less)."),
          no_sandbox: bool = _NO_SANDBOX):
    """Autograde every submission of LESSON, each in a process of its own.

    Each kernel runs in a bubblewrap sandbox that sees no course file but its own submission,
    forked from one warm server per run: as root each as a user of its own, otherwise each in
    namespaces of its own.
    Shows a progress bar naming the submissions being graded, then every learner's status
    (sorted); exits with status 1 when any submission failed."""
    from nbgrader.api import MissingEntry

    from ..steps import grade as step

    course = _course(ctx)
    lesson = _lesson(course, lesson)
    options = step.Options(jobs=jobs, force=force, timeout=timeout, shard=step.Shard.parse(shard),
                           memory=memory * 1024**2 if memory else None,
                           sandboxed=_sandbox(no_sandbox), warm=warm,
                           students=tuple(students or ()), run=run or "",
                           **({"grader_memory": grader_memory * 1024**2} if grader_memory
                              else {}))
    skipped = []

    def start(total, unchanged):
        progress.update(task, total=total, refresh=True)
        skipped.extend(unchanged)

    def running(now):
        # the longest-running first: a slow submission stays in sight
        names = ", ".join(f"{said(student)} {seconds:.0f}s" for student, seconds in now[:4])
        more = f" +{len(now) - 4}" if len(now) > 4 else ""
        progress.update(task, description=f"grading {lesson}: {names}{more}" if now
                        else f"grading {lesson}", refresh=True)

    failure = None
    # (redrawn by the run, about once a second: a progress bar's own thread would keep a
    # regrade from forking its grading process from this one: grade._context)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False,
                  auto_refresh=False) as progress:
        task = progress.add_task(f"grading {lesson}", total=None)
        try:
            rows = step.grade(course, lesson, options, on_start=start,
                              on_done=lambda row: progress.update(task, advance=1,
                                                                  refresh=True),
                              on_running=running)
        except MissingEntry:
            failure = (f"{lesson} is not in the gradebook: release it first "
                       f"(autograd-lab release {lesson.split('_')[0]})")
        except ValueError as error:
            failure = str(error)
        if failure is None:
            progress.update(task, description=f"graded {lesson}")
        else:
            # (an error is the last line said: no progress line is drawn after it)
            progress.update(task, visible=False)
    if failure is not None:
        _fail(failure)
    from ..gradebook.late import Policy
    from ..gradebook.outcome import late_summary, outcomes

    # every learner of the lesson, as export sees them (hand grades included); what this run
    # did is marked, with its reason and what the sandbox saw
    everyone = outcomes(course, [lesson])
    console.print(summary_table(everyone, lesson, rows, failed_only))
    if any(out.late is not None for out in everyone):
        console.print(late_summary(everyone, Policy(course)), markup=False, highlight=False)
    if not options.sandboxed:
        console.print(f"[bold red]{_WARNING}")
    if skipped:
        console.print(f"{len(skipped)} graded before and unchanged since, not graded again "
                      "(--force grades them again)")
    if any(row.status == "failed" for row in rows):
        raise typer.Exit(1)


@app.command()
def regrade(ctx: typer.Context,
            lesson: str = typer.Argument(..., help="The lesson whose tests changed."),
            jobs: int = typer.Option(0, "--jobs", "-j", min=0, show_default=False,
                                     help="Submissions graded at once "
                                          "(default: one more than the cores)."),
            no_sandbox: bool = _NO_SANDBOX):
    """Grade every submission of LESSON again after its tests changed in solutions/.

    Releases the lesson again (nbgrader grades the tests the gradebook holds from the last
    release), grades every learner by force, keeping hand grades of written answers, and
    writes again the feedback pages there were, with the new scores."""
    from ..steps import regrade as step

    course = _course(ctx)
    lesson = _lesson(course, lesson)
    had = step.pages_of(course, lesson)
    try:
        changed = step.release_again(course, lesson)
    except ValueError as error:
        _fail(str(error))
    console.print(f"{lesson}: released again from "
                  f"{course.directory('source').relative_to(course.root)}/; the gradebook "
                  "holds its tests as they are now")
    if changed:
        console.print(f"[yellow]the learners' notebook of {lesson} changed too[/]: write the "
                      "learners' repository again (`autograd-lab student-repo DIR`)")
    code = 0
    try:
        ctx.invoke(grade, ctx=ctx, lesson=lesson, jobs=jobs, force=True, students=None,
                   failed_only=False, timeout=None, memory=None, grader_memory=None,
                   shard="1/1", run=None, warm=None, no_sandbox=no_sandbox)
    except typer.Exit as stop:
        code = stop.exit_code
    written = step.refresh_pages(course, lesson, had)
    if written is not None:
        console.print(f"wrote again {len(written.pages)} of the {len(had)} feedback pages "
                      "there were")
        for student, why in written.not_written:
            console.print(f"no page for {student}: {why}", markup=False, highlight=False)
    if code:
        raise typer.Exit(code)


def summary_table(outcomes, title, rows=(), failed_only=False):
    """Every learner, sorted by student id, zeros included (only failures when failed_only);
    `rows` are this run's status rows. One line a learner in the table (id, name, status,
    score: what is graded so far, `+?` for what waits for a hand grade), then a line for each
    learner with a note (the reason, what to grade by hand, the sandbox). The caption counts
    them all."""
    from rich.console import Group
    from rich.text import Text

    ran = {row.student: row for row in rows}
    counts = {}
    for out in outcomes:
        counts[out.status] = counts.get(out.status, 0) + 1
    table = Table(title=title)
    table.add_column("student", no_wrap=True)
    table.add_column("name", no_wrap=True, overflow="ellipsis", max_width=22)
    table.add_column("status", no_wrap=True)
    table.add_column("score", no_wrap=True)
    table.add_column("late", no_wrap=True)
    notes = []
    for out in sorted(outcomes, key=lambda out: out.student):
        if failed_only and out.status != "failed":
            continue
        row = ran.get(out.student)
        # (without the sandbox every row would say so: the warning below the table does)
        sandbox = "" if out.sandbox == OFF else out.sandbox
        score = "" if out.score is None else f"{out.score:g}/{out.max_score:g}"
        if out.status == "needs manual grading":
            so_far = sum(q.score or 0 for q in out.questions if q.score is not None)
            score = f"{so_far:g}+?/{out.max_score:g}" if out.max_score is not None else ""
            note = "to grade by hand: " + ", ".join(out.awaiting)
            note += f"; {out.reason}" if out.reason else ""
        else:
            note = out.reason if out.status != "missing" else ""
        if row is None and out.status not in ("missing", "failed"):
            note = "unchanged since graded" + (f"; {note}" if note else "")
        table.add_row(said(out.student), said(out.name), out.status, score,
                      {True: "late", False: ""}.get(out.late, ""))
        forgery = f" [FORGERY: {out.forgery_reason or 'flagged'}]" if out.forgery else ""
        if note or sandbox or forgery:
            notes.append(Text(printable(f"  {out.student}: {note}" + (
                f" [sandbox: {sandbox}]" if sandbox else "") + forgery)))
    table.caption = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing to grade"
    return Group(table, *notes)


@app.command()
def feedback(ctx: typer.Context, lesson: str = typer.Argument(...),
             partial: bool = typer.Option(
                 False, "--partial", help="Also write the pages of submissions whose written "
                                          "answers are not hand-graded yet (they say so)."),
             students: Optional[List[str]] = typer.Option(
                 None, "--student", "-s", help="Only this learner (repeat it)."),
             zip_path: Optional[Path] = typer.Option(
                 None, "--zip", help="Also pack the pages into this zip, for the LMS to take "
                                     "back in one upload: Canvas's \"Re-upload "
                                     "Submissions\", Moodle's \"upload multiple feedback "
                                     "files in a zip\"."),
             lms_kind: Optional[str] = typer.Option(
                 None, "--lms", help="canvas or moodle: whose zip --zip writes (default: the "
                                     "LMS whose download the lesson was collected from).")):
    """Per-learner HTML feedback in feedback/.

    Each check's message (the misconception), no hidden test, no traceback; the page runs no
    script and loads nothing from the internet. A submission waiting for hand grading waits
    (listed) unless --partial."""
    from ..lms import CANVAS, KINDS, MOODLE
    from ..steps.feedback import feedback as run, lms_zip

    course = _course(ctx)
    lesson = _lesson(course, lesson)
    if lms_kind is not None and lms_kind not in KINDS:
        _fail(f"--lms is one of {', '.join(KINDS)}, not {lms_kind}")
    written = run(course, lesson, partial=partial, students=students or None)
    console.print(f"wrote {len(written.pages)} feedback pages")
    if written.partial:
        console.print(f"{len(written.partial)} of them say some written answers are not graded "
                      f"yet: {said(', '.join(written.partial))}")
    if written.waiting:
        console.print(f"[yellow]waiting for hand grading[/] (no page yet; --partial writes "
                      f"them): {said(', '.join(written.waiting))}")
    for student, why in written.not_written:        # (a page from before is removed)
        console.print(f"no page for {said(student)}: {said(why)}", highlight=False)
    if written.removed:
        console.print(f"removed the pages from before of: {said(', '.join(written.removed))}")
    if zip_path is not None:
        from ..gradebook import status

        if lms_kind is None:
            kinds = {kind for kind, _ in status.read_lms_files(course, lesson).values()}
            lms_kind = CANVAS if kinds == {CANVAS} else MOODLE
        packed = lms_zip(course, lesson, written.pages, zip_path, lms_kind)
        where = ("Canvas: the assignment's page > Re-upload Submissions" if lms_kind == CANVAS
                 else "Moodle: the assignment's View all submissions > Grading action > "
                      "Upload multiple feedback files in a zip")
        console.print(f"wrote {zip_path}: {len(packed.pages)} pages, for {where}")
        for student, why in packed.not_in_zip:
            console.print(f"[yellow]not in the zip[/]: {said(student)}: {said(why)}")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def formgrader(ctx: typer.Context,
               port: int = typer.Option(8888, help="The port JupyterLab listens on."),
               ip: str = typer.Option("127.0.0.1", help="The address it listens on."),
               no_browser: bool = typer.Option(False, "--no-browser",
                                               help="Open no browser (print the address).")):
    """Hand grading: JupyterLab at the course with nbgrader's formgrader on the gradebook
    autograd-lab grades in (--db-url, AUTOGRAD_LAB_DB_URL, or the course's).

    Refuses to start a formgrader that would open another gradebook (it would show nothing
    to grade, and its hand grades would reach no export), saying what to change. Any further
    option goes to `jupyter lab` (--IdentityProvider.token=..., say)."""
    import os
    import sys

    from ..steps import handgrading

    course = _course(ctx)
    environ = handgrading.environ_for(course)
    why = handgrading.refusal(course, environ)
    if why:
        _fail(why)
    args = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={course.root}",
            f"--port={port}", f"--ip={ip}", "--ServerApp.port_retries=0"]
    if no_browser:
        args.append("--no-browser")
    if os.geteuid() == 0:
        args.append("--allow-root")
    console.print(f"the formgrader, on {handgrading.normal(course.gradebook_url)}: open "
                  f"Nbgrader > Formgrader in JupyterLab (http://{ip}:{port}/formgrader)",
                  markup=False, highlight=False)
    # (this process becomes the server: a signal to stop it reaches JupyterLab itself)
    os.chdir(course.root)
    os.execve(sys.executable, args + list(ctx.args), environ)


_LESSONS = typer.Option(None, "--lesson", "-l", help="A lesson to include (repeat it; default: "
                                                    "every lesson collected or graded).")


@app.command()
def export(ctx: typer.Context,
           out: Optional[Path] = typer.Option(
               None, help="Folder for the CSV files (default: the course's grades/)."),
           lessons: Optional[List[str]] = _LESSONS,
           canvas: Optional[Path] = typer.Option(
               None, exists=True, dir_okay=False,
               help="Canvas's gradebook export (Grades > Export): fill in the lessons' columns "
                    "and write it to OUT/canvas-<its name> for Grades > Import."),
           moodle: Optional[Path] = typer.Option(
               None, exists=True, dir_okay=False,
               help="Moodle's grading worksheet of one lesson's assignment: fill in Grade and "
                    "Feedback comments and write it to OUT/moodle-<lesson>-<its name>."),
           column: Optional[List[str]] = typer.Option(
               None, help="LESSON=COLUMN TITLE: the Canvas column of a lesson, where its "
                          "title does not say.")):
    """CSV grades: a row per learner (roster or submitted) and lesson, with a status.

    grades.csv: a row per learner and lesson; questions.csv: per learner and question.
    Status: graded, needs manual grading, failed (the reason), missing, not graded yet; a
    failure is never a 0.0. Hand grades from nbgrader's formgrader count at once."""
    from ..gradebook.late import Policy
    from ..gradebook.outcome import lessons as chosen_lessons
    from ..steps import export as step

    course = _course(ctx)
    late_policy = Policy(course)
    out = course.root / "grades" if out is None else out
    lessons = _lessons(course, lessons)
    try:
        for path in step.export(course, out, lessons or None):
            console.print(f"wrote {path}")
        filled = []
        if canvas is not None:
            columns = {_lesson(course, k): v for k, v in (c.split("=", 1) for c in column or [])}
            filled.append(step.fill_canvas(
                course, canvas, out / _named("canvas-", canvas.name), lessons or None, columns))
        if moodle is not None:
            chosen = chosen_lessons(course, lessons or None)
            if len(chosen) != 1:
                _fail(f"a Moodle worksheet is one assignment's: say which lesson with --lesson "
                      f"(of {', '.join(chosen)})")
            filled.append(step.fill_moodle(
                course, moodle, out / _named(f"moodle-{chosen[0]}-", moodle.name), chosen[0]))
    except ValueError as error:
        _fail(str(error))
    for result in filled:
        console.print(f"wrote {result.path}: {result.filled} grades filled in "
                      f"({', '.join(f'{l}: {c!r}' for l, c in result.columns.items())})")
        for lesson, (ours, theirs) in result.scaled.items():
            console.print(f"  {lesson}: scores out of {ours:g} scaled to the LMS's {theirs:g}")
        if result.left_empty:
            table = Table(title="left empty (the LMS keeps what it has)")
            for name in ("student", "name", "lesson", "why"):
                table.add_column(name)
            for row in result.left_empty:
                table.add_row(*map(said, row))
            console.print(table)
        if result.late:
            table = Table(title=f"late (late policy: {late_policy.name})")
            for name in ("student", "name", "lesson", "how late"):
                table.add_column(name)
            for row in result.late:
                table.add_row(*map(said, row))
            console.print(table)
        for student, lesson in result.not_in_file:
            console.print(f"[yellow]not in {said(result.path.name)}[/]: {said(student)} "
                          f"({said(lesson)})")


@app.command()
def report(ctx: typer.Context,
           lessons: Optional[List[str]] = typer.Argument(
               None, help="Lessons to report (default: every lesson collected or graded)."),
           out: Path = typer.Option(None, help="The figure, for one lesson (default: "
                                               "reports/<lesson>.png).")):
    """Per exercise, the share of learners who passed and who showed each misconception.

    A table here, and one PNG figure per lesson for a slide: percentages of the learners who
    handed in, misconceptions by name, wrong answers, not attempted, could not be graded."""
    from ..gradebook.outcome import lessons as chosen
    from ..steps.report import (question_table, report as run, segments, titles,
                                write_figure)
    from ..steps.written import write_hidden_page, write_pages

    course = _course(ctx)
    try:
        lessons = chosen(course, _lessons(course, lessons))
    except ValueError as error:
        _fail(str(error))
    if out is not None and len(lessons) != 1:
        _fail("--out names one figure: give one lesson")
    explanations = titles()
    for lesson in lessons:
        result = run(course, lesson)
        table = Table(title=f"{lesson}: {result.handed_in} handed in, {result.learners} graded, "
                            f"{result.could_not_grade + result.waiting} could not be graded, "
                            f"{result.missing} did not hand in")
        for column in ("exercise", "learners", "share", "what they did"):
            table.add_column(column)
        for exercise, parts in segments(result, explanations):
            for i, (category, n) in enumerate(parts):
                table.add_row(exercise.title if i == 0 else "", str(n),
                              f"{result.share(n):.0f}%", category)
        if result.forgeries:
            # (scored on their answers all the same: the grader judged outside their kernel)
            table.caption = (f"[bold red]{len(result.forgeries)} flagged for forging a "
                             f"grade[/]: {said(', '.join(result.forgeries))} (see the forgery "
                             f"notes of grade's summary, or the forgery_reason column of "
                             f"export)")
        console.print(table)
        path = write_figure(result, out or course.root / "reports" / f"{lesson}.png",
                            explanations)
        console.print(f"wrote {path}")
        console.print(question_table(result))
        for written in write_pages(course, lesson):     # a page per hand-graded question
            console.print(f"wrote {written}")
        console.print(f"wrote {write_hidden_page(course, lesson)} (what the hidden tests "
                      "found: yours, not the learners')")


@app.command()
def similarity(ctx: typer.Context,
               lesson: str = typer.Argument(..., help="The lesson, by number or id."),
               out: Optional[Path] = typer.Option(
                   None, help="The page (default: reports/<lesson>-similarity.html)."),
               top: int = typer.Option(10, min=1, help="Pairs listed here.")):
    """Pairs of learners whose answer cells are alike beyond the class's chance.

    The lesson's given code and the model solution's code are left out, renamed variables
    count as the same; a page shows each pair's shared code side by side. Evidence to read,
    not a verdict; the page is yours, do not hand it out."""
    from ..steps import similarity as step
    from ..steps.roster import names

    course = _course(ctx)
    lesson = _lesson(course, lesson)
    result = step.similarity(course, lesson)
    known = names(course)
    table = Table(title=f"{lesson}: {len(result.learners)} learners, {len(result.pairs)} "
                        f"pairs; beyond chance from {result.threshold:.0%} (half the pairs "
                        f"share {result.median:.0%} or less)")
    for column in ("learners", "names", "alike", ""):
        table.add_column(column)
    from rich.text import Text

    for pair in result.pairs[:max(top, len(result.named))]:
        # (ids and names are the learners' own: shown as text, never read as markup)
        table.add_row(Text(f"{pair.a}, {pair.b}"),
                      Text(f"{known.get(pair.a, '')}, {known.get(pair.b, '')}"),
                      f"{pair.similarity:.0%}", "beyond chance" if pair.beyond else "")
    console.print(table)
    for student, why in result.unread:
        console.print(f"not read: {student}: {why}", markup=False, highlight=False)
    path = step.write_page(course, result, out)
    console.print(f"wrote {path} (yours: evidence to read with the learners, not a verdict)")


@app.command()
def selftest(ctx: typer.Context, lessons: List[str] = typer.Argument(
        None, help="Lessons to test (default: all of solutions/)."),
        no_sandbox: bool = _NO_SANDBOX):
    """Check the course grades its solutions full and its blank release zero.

    Runs in a scratch copy of the course, with its own gradebook, sandboxed as grade is."""
    from ..steps.grade import Options
    from ..steps.selftest import selftest as run

    course = _course(ctx)
    results = run(course, _lessons(course, lessons), Options(sandboxed=_sandbox(no_sandbox)))
    table = Table(title="selftest")
    for column in ("lesson", "solution", "blank", "ok"):
        table.add_column(column)
    for r in results:
        table.add_row(r.lesson, r.solution, r.blank, "yes" if r.ok else "[red]NO")
    console.print(table)
    if not all(r.ok for r in results):
        raise typer.Exit(1)
