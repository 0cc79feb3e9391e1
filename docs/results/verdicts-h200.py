#!/usr/bin/env python3
"""The H200's grade reports, one row each: writes docs/results/verdicts-h200.tsv.

    python3 docs/results/verdicts-h200.py [REV] > docs/results/verdicts-h200.tsv

Reads the console reports of `./gpulab grade` (backend cuda) as git kept them at REV (default
d98f299, the last commit with the raw folders docs/results/labNN-h200/): every verdict-suite report
(labNN-h200/verdicts-cuda/*.txt), every hand-in or variant graded alone (lab04-h200/lab04-*.txt,
lab04-h200/variants-2026-12-01/*-runN.txt, lab05-h200/lab05-*.txt), and the gradebook of the class
run (class-gpu-h200/gradebook.csv: only each hand-in's first failing check; its performance ratio
from that run's summary.md). A report itself: `git show REV:docs/results/REPORT`.
"""
import csv
import io
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The class run's hand-ins (docs/results/class-gpu.sh's pool, s00..s09).
CLASS_POOL = ["solution", "student", "good_warp_shuffle", "launch_syntax", "wrong_answer", "crash",
              "caches_results", "race_missing_syncthreads", "hard_coded_warp_size", "solution"]


def git(*args):
    return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True, check=True).stdout


def date_of(rev, path):
    """The day of the last commit that changed the file before REV (REV itself renamed steps)."""
    out = git("log", "-1", "--format=%ad", "--date=short", rev + "~1", "--", path)
    return out.strip() or "-"


def parse(text):
    """(score, failed checks, performance values) of a console report."""
    score, failed, perf, last = "-", [], [], None
    for line in text.splitlines():
        m = re.search(r"\]\s+([0-9.]+ / [0-9.]+) points", line)
        if m and score == "-":
            score = m.group(1).replace(" ", "")
        m = re.match(r"\s+(pass|FAIL)\s+((?:performance|correctness|sanitizer|portability)\.\S+)(.*)", line)
        if m:
            ok, name, rest = m.group(1) == "pass", m.group(2), m.group(3)
            last = None if ok else [name, ""]
            if not ok:
                failed.append(last)
            if name.startswith("performance."):
                v = re.match(r"\s+(-?[0-9.]+(?:e[-+]?[0-9]+)?|inf|-?nan)\s", rest)
                perf.append("%s=%s" % (name[len("performance."):], v.group(1) if v else "-"))
            continue
        if last is not None and line.startswith("        ") and not last[1]:
            last[1] = line.strip()
        elif not line.startswith("        "):
            last = None
    marked = [n + (" (not graded)" if n.startswith("performance.") and msg.startswith(("not graded", "not run")) else "")
              for n, msg in failed]
    return score, ",".join(marked) or "-", ",".join(perf) or "-"


def main():
    rev = sys.argv[1] if len(sys.argv) > 1 else "d98f299"
    files = git("ls-tree", "-r", "--name-only", rev, "docs/results/").split()
    print("# The H200's grade reports (NVIDIA H200, driver 580.159.04, CUDA 13.0, backend cuda), one row")
    print("# each. Written by `python3 docs/results/verdicts-h200.py` (its header) from the reports git keeps:")
    print("# `git show d98f299:docs/results/REPORT`. graded: the day the report was recorded, and how (suite:")
    print("# the verdict suite; alone: ./gpulab grade; class: grade-class, only the first failing check kept).")
    print("# failed: the failing checks in report order, \"(not graded)\" where speed was not graded or not run.")
    print("# performance: each performance check's value (- where none), fail or pass as failed says.")
    print("lab\thand_in\tgraded\tscore\tfailed\tperformance\treport")
    rows = []
    for f in files:
        rel = f[len("docs/results/"):]
        m = re.match(r"lab(\d\d)-h200/verdicts-cuda/(\w+)\.txt$", rel)
        m2 = re.match(r"lab(\d\d)-h200/(?:lab\d\d-|variants-[0-9-]+/)(\w+?)(?:-(run)?(\d))?\.txt$", rel)
        if m and m.group(2) != "summary":
            lab, stem, how = m.group(1), m.group(2), "suite"
        elif m2 and m2.group(2) not in ("calibrate",) and not m2.group(2).startswith("queue"):
            lab, stem = m2.group(1), m2.group(2)
            how = "alone" + (" run%s" % m2.group(4) if m2.group(4) else "")
        else:
            continue
        stem = re.sub(r"^(\d)_", r"0\1_", stem)  # ladder steps are numbered NN_ since d98f299
        score, failed, perf = parse(git("show", "%s:%s" % (rev, f)))
        rows.append((lab, stem, "%s %s" % (date_of(rev, f), how), score, failed, perf, rel))
    book = "docs/results/class-gpu-h200/gradebook.csv"
    ratios = {}
    for line in git("show", "%s:docs/results/class-gpu-h200/summary.md" % rev).splitlines():
        m = re.match(r"\| (s\d\d) \|.*\| (\w+): ([0-9.]+) / [0-9.]+ \|$", line)
        if m:
            ratios[m.group(1)] = "%s=%s" % (m.group(2), m.group(3))
    day = date_of(rev, book)
    for r in csv.DictReader(io.StringIO(git("show", "%s:%s" % (rev, book)))):
        s = r["student"]
        rows.append(("01", CLASS_POOL[int(s[1:])], "%s class %s" % (day, s), "%s/%s" % (r["score"], r["max"]),
                     r["first_failing_check"] or "-", ratios.get(s, "-"), "class-gpu-h200/gradebook.csv"))
    for row in rows:
        print("\t".join(row))


if __name__ == "__main__":
    main()
