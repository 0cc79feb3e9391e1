#!/usr/bin/env python3
"""Grades a whole class: every hand-in of a folder, in parallel, resumably, into one gradebook.

    ./gpulab grade-class DIR [--lab LAB ...] [--jobs N] [--out OUT] [--force] [--seed N]
                             [--only STUDENT ...] [--merge-only] [--slurm [--partition P]]
                             [--timeout S] [--lab-timeout S]

DIR holds one entry per student: a folder (laid out like the repository, labs/NN-name/FILE, or
flat, FILE) or a single file; the entry's name (a file's without its extension) is the student
id. Each (student, lab) is graded by its own grader process (`gpulab-grade LAB --submission
ENTRY`), which stages and builds the hand-in in its own sandbox and work folder, so hand-ins run
in parallel (--jobs); on a GPU back-end the graders take turns at the GPU for the lab processes
(the grader's own lock), while compiling and the emulator's portability run go on in parallel.

Output (OUT, default DIR/../<DIR name>-grades):
  students/<id>/<lab>.json, .xml, .txt   the grader's JSON and JUnit reports and its printed feedback
  gradebook.csv                          one row per (student, lab), rebuilt from the JSON reports
  errors/<id>-<lab>.txt                  what happened when the grader itself did not finish
A finished (student, lab) is not graded again unless --force: a killed run continues where it
stopped. Each row records the grader version, the rubric's hash, back-end, device, isolation and
seed, and the command that re-grades that student alone with the same inputs.
"""
import argparse
import concurrent.futures
import csv
import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLUMNS = ["student", "lab", "score", "max", "passed", "status", "first_failing_check", "message", "seed",
           "backend", "device", "isolation", "grader_version", "rubric_sha256", "regrade"]


def course_labs():
    """{lab id: [files the student edits]} from labs/NN-name/ (the sources are the .cu files)."""
    labs = {}
    base = os.path.join(ROOT, "labs")
    for name in sorted(os.listdir(base)):
        d = os.path.join(base, name)
        if os.path.isdir(d) and name[:2].isdigit():
            labs[name] = sorted(f for f in os.listdir(d) if f.endswith(".cu"))
    return labs


def lab_id(arg, labs):
    """'1', '01', '01-coalescing' or 'coalescing' -> '01-coalescing'."""
    for lab in labs:
        if arg in (lab, lab[:2], lab[3:]) or (arg.isdigit() and int(arg) == int(lab[:2])):
            return lab
    sys.exit(f"grade-class: no lab '{arg}' (labs: {', '.join(labs)})")


def labs_of(entry, labs):
    """The labs an entry hands in: those whose files it has where the grader looks for them."""
    found = []
    for lab, files in labs.items():
        if os.path.isfile(entry):
            if os.path.basename(entry) in files:
                found.append(lab)
        elif any(os.path.isfile(os.path.join(entry, *p))
                 for f in files for p in (("labs", lab, f), (lab, f), (f,))):
            found.append(lab)
    return found


def student_of(entry):
    name = os.path.basename(entry.rstrip("/"))
    return os.path.splitext(name)[0] if os.path.isfile(entry) else name


def grader_version():
    try:
        return subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--tags"],
                              capture_output=True, text=True, timeout=30).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def rubric_hash(lab):
    with open(os.path.join(ROOT, "grader", "labs", lab, "rubric.ini"), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


class Progress:
    """One line on stderr: done / total, percentage, ETA from the mean time per finished job."""

    def __init__(self, total, jobs):
        self.total, self.jobs, self.done, self.start = total, jobs, 0, time.monotonic()
        self.lock = threading.Lock()
        self.tty = sys.stderr.isatty()

    def finished(self, what):
        with self.lock:
            self.done += 1
            elapsed = time.monotonic() - self.start
            left = (self.total - self.done) * elapsed / self.done
            bar = "#" * (20 * self.done // max(self.total, 1))
            line = (f"[{bar:<20}] {self.done}/{self.total} {100 * self.done // max(self.total, 1)}%"
                    f"  elapsed {elapsed:.0f} s  ETA {left:.0f} s  {what}")
            sys.stderr.write(("\r\033[K" if self.tty else "") + line + ("" if self.tty else "\n"))
            sys.stderr.flush()

    def close(self):
        if self.tty:
            sys.stderr.write("\n")


# The graders running now: a class run that is stopped (Ctrl-C, SIGTERM, a job scheduler's time
# limit) stops them too, so that nothing keeps writing into the output folder; their hand-ins have
# no report and the next run grades them.
RUNNING = set()
RUNNING_LOCK = threading.Lock()  # held by a worker across the start of a grader and its adding here
STOPPING = False


def stop(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def on_stop_signal(signum, _frame):
    # Runs in the main thread between two of its bytecodes, which may be inside a lock or a
    # buffered write: so no buffered I/O here. RUNNING_LOCK is only ever taken by the workers: a
    # worker starting a grader holds it until the grader is in RUNNING, so waiting for it here
    # means no grader starts unseen after the stop (under load, a grader started in that window
    # outlived the class run). Then no worker starts another.
    global STOPPING
    RUNNING_LOCK.acquire(timeout=10)
    STOPPING = True
    # A copy of the set may still race a worker's discard: try again.
    for _ in range(100):
        try:
            running = list(RUNNING)
            break
        except RuntimeError:
            continue
    else:
        running = []
    for p in running:
        stop(p)
    os.write(2, f"\ngrade-class: stopped by signal {signum}; run the same command again to finish\n".encode())
    os._exit(128 + signum)



def report_path(out, student, lab, ext):
    return os.path.join(out, "students", student, f"{lab}.{ext}")


def complete_report(path):
    """A report the grader finished (docs/report-format.md: it writes "complete": false first)."""
    try:
        with open(path) as f:
            return json.load(f).get("complete") is True
    except (OSError, ValueError, AttributeError):
        return False


def finished(out, student, lab):
    return complete_report(report_path(out, student, lab, "json"))


def grade_one(args, entry, student, lab):
    """Runs the grader on one (student, lab); the JSON appears only when it finished."""
    os.makedirs(os.path.join(args.out, "students", student), exist_ok=True)
    final = report_path(args.out, student, lab, "json")
    partial = final + ".part"
    cmd = [args.grader, "grade", lab, "--submission", os.path.abspath(entry), "--json", partial,
           "--junit", report_path(args.out, student, lab, "xml")]
    if args.seed:
        cmd += ["--seed", str(args.seed)]
    if args.lab_timeout:
        cmd += ["--timeout", str(args.lab_timeout)]
    t = time.monotonic()
    with RUNNING_LOCK:
        if STOPPING:
            return False, 0.0
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        RUNNING.add(p)
    try:
        out, _ = p.communicate(timeout=args.timeout)
        output, status = out.decode("utf-8", "replace"), f"exit {p.returncode}"
    except subprocess.TimeoutExpired:
        stop(p)
        out, _ = p.communicate()
        output = out.decode("utf-8", "replace")
        status = f"the grader did not finish within {args.timeout} s"
    finally:
        with RUNNING_LOCK:
            RUNNING.discard(p)
    with open(report_path(args.out, student, lab, "txt"), "w") as f:
        f.write(output)
    # Finished: the grader exited by itself (a stop signal kills it) and completed its report.
    ok = p.returncode is not None and p.returncode >= 0 and complete_report(partial)
    err = os.path.join(args.out, "errors", f"{student}-{lab}.txt")
    if ok:
        os.replace(partial, final)
        if os.path.exists(err):
            os.remove(err)
    else:
        # The grader itself failed (not the hand-in: that is a graded 0). Kept for a re-run.
        os.makedirs(os.path.dirname(err), exist_ok=True)
        with open(err, "w") as f:
            f.write(f"{' '.join(shlex.quote(c) for c in cmd)}\n{status}\n\n{output[-20000:]}")
    return ok, time.monotonic() - t


def row_of(out, student, lab, entry, version):
    base = {"student": student, "lab": lab, "grader_version": version, "rubric_sha256": rubric_hash(lab)}
    try:
        with open(report_path(out, student, lab, "json")) as f:
            d = json.load(f)
    except (OSError, ValueError):
        err = os.path.join(out, "errors", f"{student}-{lab}.txt")
        why = "not graded yet"
        if os.path.exists(err):
            with open(err) as f:
                why = "grader error: " + (f.read().splitlines()[1:2] or ["?"])[0]
        return dict(base, score="", max="", passed="", status=why)
    lab_report = next((l for l in d.get("labs", []) if l.get("lab") == lab), {})
    failing = next((c for c in lab_report.get("checks", []) if not c.get("passed")), None)
    # The message's first line, and the next one when the first only announces it ("...:").
    lines = [l.strip() for l in (failing or {}).get("message", "").strip().splitlines() if l.strip()]
    message = [" ".join(lines[:2]) if lines and lines[0].endswith(":") else (lines[0] if lines else "")]
    regrade = f"./gpulab --backend {d.get('backend', '')} grade {lab[:2]} --submission {shlex.quote(entry)} --seed {d.get('seed', '')}"
    return dict(base, score=lab_report.get("score", d.get("score")), max=lab_report.get("max_score", d.get("max_score")),
                passed=str(bool(lab_report.get("passed"))).lower(), status=lab_report.get("status", "graded"),
                first_failing_check=(failing or {}).get("name", ""), message=message[0][:300],
                seed=d.get("seed", ""), backend=d.get("backend", ""), device=d.get("device", ""),
                isolation=(lab_report.get("isolation", "").split(" (")[0]), regrade=regrade)


def write_gradebook(out, work, version):
    path = os.path.join(out, "gradebook.csv")
    with open(path + ".part", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for entry, student, lab in work:
            w.writerow(row_of(out, student, lab, entry, version))
    os.replace(path + ".part", path)
    return path


def slurm_script(args, students):
    """An sbatch array: one task per student (graded with --only), then a task merging the gradebook."""
    gpu = args.backend in ("cuda", "rocm")
    path = os.path.join(args.out, "grade-class.sbatch")
    ids = os.path.join(args.out, "students.txt")
    with open(ids, "w") as f:
        f.write("".join(s + "\n" for s in students))
    common = f"cd {shlex.quote(ROOT)}"
    labs = " ".join(f"--lab {l}" for l in args.lab)
    with open(path, "w") as f:
        f.write(f"""#!/bin/bash
# Grades {len(students)} hand-ins of {args.dir}: one array task per student, then a merge task.
# Submit: sbatch {path}   (it submits the merge itself, after every array task has ended)
#SBATCH --job-name=gpulab-class
#SBATCH --array=1-{len(students)}
#SBATCH --cpus-per-task={2 if gpu else args.jobs}
#SBATCH --time={max(10, args.timeout // 60 + 5)}
{'#SBATCH --gres=gpu:1' if gpu else '# (emulator: no GPU)'}
{f'#SBATCH --partition={args.partition}' if args.partition else '# #SBATCH --partition=...'}
set -euo pipefail
{common}
student="$(sed -n "${{SLURM_ARRAY_TASK_ID}}p" {shlex.quote(ids)})"
if [[ "${{SLURM_ARRAY_TASK_ID}}" == 1 ]]; then
  sbatch --dependency=afterany:"${{SLURM_ARRAY_JOB_ID}}" --job-name=gpulab-class-merge --time=10 \\
    --wrap "{common} && ./gpulab --backend {args.backend} grade-class {shlex.quote(args.dir)} {labs} --out {shlex.quote(args.out)} --merge-only"
fi
./gpulab --backend {args.backend} grade-class {shlex.quote(args.dir)} {labs} --out {shlex.quote(args.out)} --jobs 1 --only "$student"
""")
    return path


def main():
    ap = argparse.ArgumentParser(prog="gpulab grade-class", description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="one folder or file per student")
    ap.add_argument("--lab", action="append", default=[], help="grade this lab (repeatable; default: each hand-in's labs)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="hand-ins graded at once")
    ap.add_argument("--out", help="output folder (default: <DIR>-grades beside DIR)")
    ap.add_argument("--force", action="store_true", help="grade again what is already graded")
    ap.add_argument("--seed", type=int, help="the same random inputs for everyone (default: fresh per hand-in)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds one grader process may take")
    ap.add_argument("--lab-timeout", type=int, help="seconds each lab process may run (default: the rubric's)")
    ap.add_argument("--only", action="append", default=[], help="grade these students only")
    ap.add_argument("--merge-only", action="store_true", help="only rebuild gradebook.csv from the reports")
    ap.add_argument("--slurm", action="store_true", help="write an sbatch array script instead of grading")
    ap.add_argument("--partition", help="--slurm: the partition")
    ap.add_argument("--grader", default=os.environ.get("GPULAB_GRADER", ""), help=argparse.SUPPRESS)
    ap.add_argument("--backend", default=os.environ.get("GPULAB_BACKEND", "emu"), help=argparse.SUPPRESS)
    args = ap.parse_args()

    args.dir = os.path.abspath(args.dir)
    if not os.path.isdir(args.dir):
        sys.exit(f"grade-class: {args.dir} is not a folder (one folder or file per student)")
    args.out = os.path.abspath(args.out or args.dir.rstrip("/") + "-grades")
    os.makedirs(args.out, exist_ok=True)
    labs = course_labs()
    args.lab = [lab_id(l, labs) for l in args.lab]

    work = []  # (entry, student, lab)
    students = []
    for name in sorted(os.listdir(args.dir)):
        entry = os.path.join(args.dir, name)
        if name.startswith(".") or not (os.path.isdir(entry) or os.path.isfile(entry)):
            continue
        student = student_of(entry)
        if args.only and student not in args.only:
            continue
        handed_in = labs_of(entry, labs)
        for lab in args.lab or handed_in or ["(none)"]:
            work.append((entry, student, lab))
        students.append(student)
    if not work:
        sys.exit(f"grade-class: no hand-in in {args.dir}")
    unknown = [(e, s) for e, s, l in work if l == "(none)"]
    for e, s in unknown:
        print(f"grade-class: {s}: no file of any lab found in {e} (pass --lab to grade it anyway)", file=sys.stderr)
    work = [w for w in work if w[2] != "(none)"]
    version = grader_version()

    if args.slurm:
        print(slurm_script(args, students))
        return 0
    if not args.merge_only:
        signal.signal(signal.SIGINT, on_stop_signal)
        signal.signal(signal.SIGTERM, on_stop_signal)
        if not args.grader or not os.access(args.grader, os.X_OK):
            sys.exit("grade-class: run it as ./gpulab grade-class (it builds the grader first)")
        todo = [w for w in work if args.force or not finished(args.out, w[1], w[2])]
        skipped = len(work) - len(todo)
        if skipped:
            print(f"grade-class: {skipped} of {len(work)} already graded (--force grades them again)", file=sys.stderr)
        progress = Progress(len(todo), args.jobs)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {pool.submit(grade_one, args, e, s, l): (s, l) for e, s, l in todo}
            pending = set(futures)
            while pending:
                # Short waits: a stop signal that the kernel hands to a worker thread is run by the
                # main thread (Python runs handlers there) at its next wake-up, within half a second.
                done, pending = concurrent.futures.wait(pending, timeout=0.5,
                                                        return_when=concurrent.futures.FIRST_COMPLETED)
                for fut in done:
                    s, l = futures[fut]
                    try:
                        ok, secs = fut.result()
                        progress.finished(f"{s} {l}: {'graded' if ok else 'GRADER ERROR'} in {secs:.0f} s")
                    except Exception as e:  # one broken hand-in never stops the class
                        progress.finished(f"{s} {l}: {e}")
        progress.close()
    path = write_gradebook(args.out, work, version)
    with open(path) as f:
        rows = list(csv.DictReader(f))
    graded = [r for r in rows if r["score"] != ""]
    print(f"grade-class: {len(graded)} of {len(rows)} graded, {sum(r['passed'] == 'true' for r in graded)} passed;"
          f" gradebook: {path}")
    return 0 if len(graded) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
