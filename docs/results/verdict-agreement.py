#!/usr/bin/env python3
"""Does the emulator's performance verdict agree with the H200's, hand-in by hand-in?

    GPULAB_VERDICT_REPORTS=EMU build/emu/grader/tests/grader_verdict_tests --gtest_filter='Submissions/*'
    python3 docs/results/verdict-agreement.py EMU > docs/results/verdict-agreement-table.md

For every hand-in of grader/tests/submissions/ (and every ladder step that states a verdict) the
emulator's performance verdict comes from its JSON report in EMU (the verdict suite writes one per
case when GPULAB_VERDICT_REPORTS is set). The H200's comes, in this order of preference, from:
  1. a kept H200 report of the same hand-in (docs/results/labNN-h200/verdicts-cuda/*.txt, and
     lab 04's graded versions in docs/results/lab04-h200/lab04-*.txt);
  2. the hand-in's own `expect` line for performance (untagged or [cuda]), for labs whose verdict
     suite passed on the H200 (the result pages say when): the line is then what the H200 gave;
     not for a file that says its cuda lines are "not yet graded on a GPU" (added since);
  3. otherwise: no H200 verdict known (listed as such, never guessed).
A performance verdict is "pass" (every performance check passed), "fail" (one failed on speed or
its metric), or "not graded" (a correctness or sanitizer check failed, so speed earns nothing: the
same rule on every back-end). Rows where both sides are known and differ are the disagreements.
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUBMISSIONS = os.path.join(ROOT, "grader", "tests", "submissions")
RESULTS = os.path.join(ROOT, "docs", "results")
# Labs whose whole verdict suite passed on the H200, and where that is recorded.
SUITE_PASSED_ON_H200 = {
    "01-coalescing": "grader-v2-h200.md, sanitizer-portability-h200.md",
    "06-sgemm": "grader-v2-h200.md, sgemm-h200.md",
}
# Kept H200 reports of lab 04 (graded one by one, not by the suite): report file -> case stem.
LAB04_REPORTS = {"lab04-student.txt": "student", "lab04-solution-1.txt": "solution",
                 "lab04-02_sequential_tree.txt": "02_sequential_tree",
                 "lab04-chunk_per_thread.txt": "chunk_per_thread", "lab04-single_block.txt": "single_block",
                 "lab04-03_wide_blocks.txt": "03_wide_blocks"}


def emu_verdict(path):
    """(verdict, detail) of an emulator JSON report."""
    try:
        with open(path) as f:
            lab = json.load(f)["labs"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None, "no report"
    # Performance runs at the first warp size (32); a failure at 64 only is the GPU grade's
    # portability check, which leaves its speed graded: compare like with like.
    return verdict_of([(c["name"].split(" [")[0], c.get("passed", False), c.get("message", ""))
                       for c in lab.get("checks", []) if not c["name"].endswith("[warp 64]")])


def verdict_of(checks):
    """checks: (name, passed, message) of every check of a grade. Speed is judged only for a kernel
    that is correct and clean (the grader's rule on every back-end): any failing correctness or
    sanitizer check makes the performance verdict "not graded"."""
    perf = [c for c in checks if c[0].startswith("performance.")]
    if not perf:
        return None, "no performance check"
    if any(not ok and name.split(".")[0] in ("correctness", "sanitizer") for name, ok, _ in checks):
        return "not graded", ""
    if any(not ok and msg.startswith(("not graded", "not run")) for _, ok, msg in perf):
        return "not graded", ""
    failed = [name.split(".", 1)[-1] for name, ok, _ in perf if not ok]
    return ("fail", ", ".join(failed)) if failed else ("pass", "")


def text_verdict(path):
    """(verdict, detail) of a grade's text report (the console report of ./gpulab grade)."""
    checks, last = [], None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"\s+(pass|FAIL)\s+((?:performance|correctness|sanitizer|portability)\.\S+)", line)
            if m:
                last = [m.group(2), m.group(1) == "pass", ""]
                checks.append(last)
                continue
            if last is not None and line.startswith("        ") and not last[2]:
                last[2] = line.strip()
            elif not line.startswith("        "):
                last = None
    return verdict_of([tuple(c) for c in checks])


def expected_performance(source):
    """The performance verdict a file states for cuda (untagged or [cuda] lines), or None; "not
    graded" where it states a correctness or sanitizer failure there (whether or not it states one
    for performance)."""
    try:
        text = open(source, errors="replace").read()
    except OSError:
        return None
    if "not yet graded on a GPU" in text:  # its cuda lines are a prediction: no H200 verdict
        return None
    verdict, broken = None, False
    for m in re.finditer(r"^// expect(?:\[(\w+)\])?: (\S+) (pass|fail)", text, re.M):
        backend, kind, what = m.groups()
        if backend not in (None, "cuda"):
            continue
        if kind.split(".")[0] in ("correctness", "sanitizer") and what == "fail":
            broken = True
        if kind.startswith("performance"):
            verdict = "fail" if what == "fail" or verdict == "fail" else "pass"
    # A stated correctness or sanitizer failure is enough: speed is then never graded.
    return "not graded" if broken else verdict


def class_gradebook_verdicts():
    """Lab 01: the H200 class run's gradebook (docs/results/class-gpu-h200/, hand-ins as listed in
    docs/results/class-gpu.sh). A report lists correctness, sanitizer, performance, then
    portability checks, so the first failing check's kind gives the performance verdict."""
    pool = ["solution", "student", "good_warp_shuffle", "launch_syntax", "wrong_answer", "crash",
            "caches_results", "race_missing_syncthreads", "hard_coded_warp_size", "solution"]
    out = {}
    path = os.path.join(RESULTS, "class-gpu-h200", "gradebook.csv")
    if not os.path.exists(path):
        return out
    import csv
    for row in csv.DictReader(open(path)):
        i = int(row["student"][1:])
        first = row["first_failing_check"].split(".")[0]
        v = "not graded" if first in ("correctness", "sanitizer") else "fail" if first == "performance" else "pass"
        out[pool[i]] = (v, row["first_failing_check"] if v == "fail" else "")
    return out


def cases():
    """(lab, stem, source file) of every verdict case, as the verdict suite names them."""
    for lab_dir in sorted(glob.glob(os.path.join(SUBMISSIONS, "*"))):
        if not os.path.isdir(lab_dir):
            continue
        lab = os.path.basename(lab_dir)
        for f in sorted(glob.glob(os.path.join(lab_dir, "*.cu")) + glob.glob(os.path.join(lab_dir, "*.expect"))):
            yield lab, os.path.splitext(os.path.basename(f))[0], f
        for f in sorted(glob.glob(os.path.join(ROOT, "solutions", lab, "steps", "*.cu"))):
            if "// expect" in open(f, errors="replace").read():
                yield lab, os.path.splitext(os.path.basename(f))[0], f


def h200_verdict(lab, stem, source):
    num = lab[:2]
    kept = os.path.join(RESULTS, "lab%s-h200" % num, "verdicts-cuda", stem + ".txt")
    if os.path.exists(kept):
        v, d = text_verdict(kept)
        return v, d, "H200 report (%s)" % os.path.relpath(kept, RESULTS)
    if num == "04":
        for name, s in LAB04_REPORTS.items():
            if s == stem:
                path = os.path.join(RESULTS, "lab04-h200", name)
                v, d = text_verdict(path)
                return v, d, "H200 report (%s)" % os.path.relpath(path, RESULTS)
    if num == "01":
        book = class_gradebook_verdicts()
        if stem in book:
            return book[stem][0], book[stem][1], "H200 class run (class-gpu-h200/gradebook.csv)"
    if lab in SUITE_PASSED_ON_H200:
        v = expected_performance(source)
        if v:
            return v, "", "expect line; suite passed on the H200 (%s)" % SUITE_PASSED_ON_H200[lab]
    return None, "", "no H200 verdict known"


def main():
    emu_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/emu-reports"
    rows, counts = [], {"agree": 0, "disagree": 0, "unknown": 0}
    for lab, stem, source in cases():
        ev, ed = emu_verdict(os.path.join(emu_dir, "%s_%s.json" % (lab, stem)))
        hv, hd, how = h200_verdict(lab, stem, source)
        if ev is None or hv is None:
            state = "unknown"
        elif ev == hv:
            state = "agree"
        else:
            state = "disagree"
        counts[state] += 1
        rows.append((lab, stem, ev or "-", ed, hv or "-", hd, how, state))
    print("# Performance verdicts, hand-in by hand-in: the emulator against the H200\n")
    print("The reasons for each disagreement, and what is missing: [verdict-agreement.md](verdict-agreement.md).\n")
    print("Written by `python3 docs/results/verdict-agreement.py EMU` (its header says how EMU is made)")
    print("from the emulator's reports of every verdict case and the H200's kept reports or stated")
    print("verdicts. Verdict: pass, fail (the failing checks named), not graded (a correctness or")
    print("sanitizer check failed at the warp size speed is graded at, so speed earns nothing on either")
    print("back-end). Emulator reports of this table: the verdict suite on this repository's tree.\n")
    print("Known on both sides: %d agree, %d disagree; %d without an H200 verdict.\n"
          % (counts["agree"], counts["disagree"], counts["unknown"]))
    print("| lab | hand-in | emulator | H200 | H200 source | |")
    print("|---|---|---|---|---|---|")
    for lab, stem, ev, ed, hv, hd, how, state in rows:
        e = ev + (" (" + ed + ")" if ed and ev == "fail" else "")
        h = hv + (" (" + hd + ")" if hd and hv == "fail" else "")
        mark = {"agree": "", "disagree": "**differs**", "unknown": "?"}[state]
        print("| %s | %s | %s | %s | %s | %s |" % (lab[:2], stem, e, h, how, mark))


if __name__ == "__main__":
    main()
