#!/usr/bin/env python3
"""Grading a large class with the Slurm job array (deploy/slurm/) on this machine: a one-node
Slurm and a PostgreSQL gradebook of its own, a class of `count` submissions of one lesson
(its solution and its blank release, alternately), graded by 1, 2 and 4 array tasks in turn.

    python benchmarks/cluster.py [--count 500] [--lesson 02_scalar_backward] [--tasks 1,2,4]

For each task count: a fresh gradebook database (the lesson released into it), the class
submitted with deploy/slurm/submit.sh, timed from submission until every task has ended
(Slurm's scheduling included), then the dependent job (what is left, export, report) timed
alone. Each task gets max(1, cores / tasks) CPUs and grades with one more process than that;
more tasks than cores share them (the node is declared with as many CPUs as the most tasks).
PostgreSQL's load is read from pg_stat_database for that database (sessions opened,
transactions, rows written) and pg_stat_wal (bytes of WAL, the server's), with the most
connections open at once sampled every half second. A report, not a test: exit status 0.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from autograd_lab_grader.course import CONFIG_FILE, Course  # noqa: E402
from pgserver import PostgresServer  # noqa: E402
from slurmcluster import ENDED, SlurmCluster  # noqa: E402

STATS = ("sessions", "xact_commit", "xact_rollback", "tup_inserted", "tup_updated",
         "tup_deleted", "tup_returned", "tup_fetched")


def stats(pg, database):
    row = pg.sql("postgres", f"SELECT {', '.join(STATS)} FROM pg_stat_database "
                             f"WHERE datname = '{database}'")[0]
    found = dict(zip(STATS, map(int, row)))
    found["wal_bytes"] = int(float(pg.sql("postgres", "SELECT wal_bytes FROM pg_stat_wal")[0][0]))
    return found


class Peak(threading.Thread):
    """The most connections to `database` open at once, sampled every half second."""

    def __init__(self, pg, database):
        super().__init__(daemon=True)
        self.pg, self.database, self.most, self.done = pg, database, 0, threading.Event()

    def run(self):
        while not self.done.wait(0.5):
            n = int(self.pg.sql("postgres", "SELECT count(*) FROM pg_stat_activity "
                                            f"WHERE datname = '{self.database}'")[0][0])
            self.most = max(self.most, n)


def wait_for(slurm, job, every=0.25):
    while True:
        states = slurm.states(job)
        if states and all(s in ENDED for s in states.values()):
            return states
        time.sleep(every)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=500, help="submissions in the class")
    parser.add_argument("--lesson", default="02_scalar_backward")
    parser.add_argument("--tasks", default="1,2,4", help="array sizes, comma-separated")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    sizes = [int(t) for t in args.tasks.split(",")]
    cores = os.cpu_count() or 1
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200",
               PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    started = datetime.now().astimezone()
    print(f"{started:%Y-%m-%d %H:%M %Z}: {args.count} submissions of {args.lesson}, "
          f"{cores} cores, load average {os.getloadavg()[0]:.1f} at the start")
    results = []
    with tempfile.TemporaryDirectory(prefix="autograd-lab-cluster-") as tmp, \
            PostgresServer(max_connections=200) as pg, \
            SlurmCluster(cpus=max(max(sizes), cores)) as slurm:
        env["SLURM_CONF"] = str(slurm.conf)
        source = Course(ROOT)
        for size in sizes:
            scratch = Path(tmp) / f"course-{size}"
            scratch.mkdir()
            shutil.copy2(ROOT / CONFIG_FILE, scratch / CONFIG_FILE)
            shutil.copytree(source.directory("source") / args.lesson,
                            scratch / "solutions" / args.lesson)
            database = f"tasks{size}"
            url = pg.create(database)
            course = Course(scratch, url)
            assert course.api().generate_assignment(args.lesson, force=True)["success"]
            notebooks = [scratch / "solutions" / args.lesson / f"{args.lesson}.ipynb",
                         scratch / "notebooks" / args.lesson / f"{args.lesson}.ipynb"]
            for i in range(args.count):
                folder = course.submission(args.lesson, f"learner{i:05d}")
                folder.mkdir(parents=True)
                shutil.copy2(notebooks[i % 2], folder / f"{args.lesson}.ipynb")
            cpus = max(1, cores // size)
            before = stats(pg, database)
            peak = Peak(pg, database)
            peak.start()
            load = os.getloadavg()[0]
            start = time.monotonic()
            said = subprocess.run([str(ROOT / "deploy" / "slurm" / "submit.sh"), args.lesson,
                                   str(size), f"--cpus-per-task={cpus}"], cwd=scratch,
                                  env=dict(env, AUTOGRAD_LAB_DB_URL=url), capture_output=True,
                                  text=True, check=True).stdout.split()
            array, report = said[3], said[8]
            states = wait_for(slurm, array)
            seconds = time.monotonic() - start
            peak.done.set()
            peak.join()
            time.sleep(2)          # (backends flush their statistics when they end)
            after = stats(pg, database)
            report_start = time.monotonic()
            report_state = wait_for(slurm, report)
            report_seconds = time.monotonic() - report_start
            graded = pg.sql(database, "SELECT status, count(*) FROM autograd_lab_submission "
                                      "GROUP BY status")
            delta = {k: after[k] - before[k] for k in after}
            written = delta["tup_inserted"] + delta["tup_updated"] + delta["tup_deleted"]
            results.append(dict(
                tasks=size, cpus_per_task=cpus, jobs_per_task=cpus + 1,
                notebooks=args.count, seconds=round(seconds, 1),
                notebooks_per_second=round(args.count / seconds, 3),
                core_seconds_per_notebook=round(min(size * cpus, cores) * seconds / args.count,
                                                2),
                load_average_at_start=round(load, 1), load_average_at_end=round(
                    os.getloadavg()[0], 1),
                task_states=sorted(set(states.values())), statuses=dict(graded),
                sessions=delta["sessions"], peak_connections=peak.most,
                transactions=delta["xact_commit"] + delta["xact_rollback"],
                rows_written=written, rows_read=delta["tup_returned"] + delta["tup_fetched"],
                wal_bytes=delta["wal_bytes"],
                report_seconds=round(report_seconds, 1), report_state=report_state[report]))
            print(json.dumps(results[-1]), flush=True)
            shutil.rmtree(scratch, ignore_errors=True)
    print()
    print(f"{'tasks':>5} {'CPUs/task':>9} {'seconds':>8} {'nb/s':>6} {'core-s/nb':>9} "
          f"{'sessions':>8} {'peak conn':>9} {'xacts':>7} {'rows written':>12} "
          f"{'xacts/nb':>8} {'rows/nb':>7} {'WAL kB/nb':>9} {'load':>9}")
    for r in results:
        n = r["notebooks"]
        print(f"{r['tasks']:>5} {r['cpus_per_task']:>9} {r['seconds']:>8.1f} "
              f"{r['notebooks_per_second']:>6.2f} {r['core_seconds_per_notebook']:>9.2f} "
              f"{r['sessions']:>8} {r['peak_connections']:>9} {r['transactions']:>7} "
              f"{r['rows_written']:>12} {r['transactions'] / n:>8.1f} "
              f"{r['rows_written'] / n:>7.1f} {r['wal_bytes'] / n / 1024:>9.1f} "
              f"{r['load_average_at_start']:>4.1f}-{r['load_average_at_end']:<4.1f}")
    ended = datetime.now().astimezone()
    print(f"{ended:%Y-%m-%d %H:%M %Z}: done in {(ended - started).total_seconds() / 60:.0f} min")
    if args.json:
        args.json.write_text(json.dumps(dict(started=started.isoformat(), cores=cores,
                                             lesson=args.lesson, results=results), indent=1))


if __name__ == "__main__":
    main()
