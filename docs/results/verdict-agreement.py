#!/usr/bin/env python3
"""Does the emulator's performance verdict agree with the H200's, hand-in by hand-in?

    GPULAB_VERDICT_REPORTS=EMU build/emu/grader/tests/grader_verdict_tests --gtest_filter='Submissions/*'
    python3 docs/results/verdict-agreement.py EMU > docs/results/verdict-agreement-table.md

For every hand-in of grader/tests/submissions/ (and every ladder step that states a verdict) the
emulator's performance verdict comes from its JSON report in EMU (the verdict suite writes one per
case when GPULAB_VERDICT_REPORTS is set). The H200's comes, in this order of preference, from:
  1. a kept H200 report of the same hand-in (a row of docs/results/verdicts-h200.tsv: the verdict
     suite's reports first, then a grade of the hand-in alone, then lab 01's class run);
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
# The H200's reports, one row each (written by verdicts-h200.py from the reports git keeps).
VERDICTS_TSV = os.path.join(RESULTS, "verdicts-h200.tsv")


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


def kept_reports():
    """(lab number, stem) -> (verdict, detail, source) from verdicts-h200.tsv: a suite report before a
    grade alone, before the class run (whose gradebook keeps only the first failing check: its
    kind gives the performance verdict, as a report lists correctness, sanitizer, performance, then
    portability checks)."""
    import csv
    rank = {"suite": 0, "alone": 1, "class": 2}
    found = {}
    with open(VERDICTS_TSV) as f:
        for row in csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t"):
            how = row["graded"].split()[1]
            failed = [] if row["failed"] == "-" else row["failed"].split(",")
            if how == "class":
                first = failed[0].split(".")[0] if failed else ""
                v = "not graded" if first in ("correctness", "sanitizer") else "fail" if first == "performance" else "pass"
                verdict = (v, failed[0] if v == "fail" else "", "H200 class run (%s)" % row["report"])
            else:
                checks = [(c.split(" ")[0], False, "not graded" if c.endswith("(not graded)") else "") for c in failed]
                names = {c[0] for c in checks}
                perf = [] if row["performance"] == "-" else row["performance"].split(",")
                checks += [("performance." + p.split("=")[0], True, "") for p in perf
                           if "performance." + p.split("=")[0] not in names]
                v, d = verdict_of(checks)
                verdict = (v, d, "H200 report (%s)" % row["report"])
            key = (row["lab"], row["hand_in"])
            if key not in found or rank[how] < found[key][0]:
                found[key] = (rank[how], verdict)
    return {k: v for k, (_, v) in found.items()}


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


def h200_verdict(lab, stem, source, kept):
    if (lab[:2], stem) in kept:
        return kept[(lab[:2], stem)]
    if lab in SUITE_PASSED_ON_H200:
        v = expected_performance(source)
        if v:
            return v, "", "expect line; suite passed on the H200 (%s)" % SUITE_PASSED_ON_H200[lab]
    return None, "", "no H200 verdict known"


def main():
    emu_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/emu-reports"
    rows, counts = [], {"agree": 0, "disagree": 0, "unknown": 0}
    kept = kept_reports()
    for lab, stem, source in cases():
        ev, ed = emu_verdict(os.path.join(emu_dir, "%s_%s.json" % (lab, stem)))
        hv, hd, how = h200_verdict(lab, stem, source, kept)
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
    print("from the emulator's reports of every verdict case and the H200's kept reports (one row each in")
    print("[verdicts-h200.tsv](verdicts-h200.tsv); a report named below: `git show d98f299:docs/results/REPORT`)")
    print("or stated verdicts. Verdict: pass, fail (the failing checks named), not graded (a correctness or")
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
