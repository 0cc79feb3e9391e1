#!/usr/bin/env python3
"""Each performance threshold against the known hand-ins nearest to it, from a verdict suite's
reports (the JSON the grader writes per hand-in, kept by GPULAB_VERDICT_REPORTS).

    python3 docs/results/verdict-margins.py REPORTS_DIR... [--tsv OUT.tsv] [--markdown]

REPORTS_DIR holds <lab>_<hand-in>.json files (docs/results/gpu-queue.sh's verdicts:NN phases keep
them in DIR/verdicts:NN/reports). Only hand-ins that pass every correctness check count: a wrong
result fails whatever its speed. For each performance check the table gives the threshold the
report states, the slowest correct hand-in that passes it and the fastest that fails it, and each
one's margin to the threshold (value / threshold - 1). A margin under 5% either way is flagged:
a hand-in that close to the line passes or fails with the noise of a run.
"""
import glob
import json
import os
import sys


def rows_of(report_dirs):
    rows = []
    for d in report_dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.json"))):
            try:
                with open(path) as f:
                    report = json.load(f)
            except (OSError, ValueError):
                continue
            lab = report["labs"][0]
            stem = os.path.basename(path)[:-len(".json")]
            handin = stem.split("_", 1)[1] if "_" in stem else stem
            checks = lab.get("checks", [])
            correct = all(c["passed"] for c in checks if c["kind"] == "correctness")
            for c in checks:
                if c["kind"] != "performance" or c.get("value") is None or c.get("threshold") is None:
                    continue
                rows.append({"lab": lab["lab"], "handin": handin, "check": c["name"].split(".", 1)[1],
                             "value": float(c["value"]), "threshold": float(c["threshold"]),
                             "passed": bool(c["passed"]), "correct": correct,
                             "score": "%.2f/%g" % (lab["score"], lab["max_score"])})
    return rows


def margins(rows):
    out = []
    for key in sorted({(r["lab"], r["check"]) for r in rows}):
        mine = [r for r in rows if (r["lab"], r["check"]) == key and r["correct"]]
        if not mine:
            continue
        threshold = mine[0]["threshold"]
        above = [r for r in mine if r["value"] >= threshold]
        below = [r for r in mine if r["value"] < threshold]
        nearest_pass = min(above, key=lambda r: r["value"]) if above else None
        nearest_fail = max(below, key=lambda r: r["value"]) if below else None
        out.append((key[0], key[1], threshold, nearest_pass, nearest_fail))
    return out


def cell(r, threshold):
    if r is None:
        return "none", ""
    m = r["value"] / threshold - 1
    flag = " **(< 5%)**" if abs(m) < 0.05 else ""
    return "%s %.3f" % (r["handin"], r["value"]), "%+.1f%%%s" % (100 * m, flag)


def main(argv):
    dirs = [a for a in argv if not a.startswith("--") and not a.endswith(".tsv")]
    rows = rows_of(dirs)
    if "--tsv" in argv:
        with open(argv[argv.index("--tsv") + 1], "w") as f:
            f.write("lab\thandin\tcheck\tvalue\tthreshold\tpassed\tcorrect\tscore\n")
            for r in rows:
                f.write("%s\t%s\t%s\t%.6g\t%g\t%d\t%d\t%s\n" % (r["lab"], r["handin"], r["check"], r["value"],
                                                              r["threshold"], r["passed"], r["correct"], r["score"]))
    print("| lab | check | threshold | slowest correct hand-in that passes | margin | fastest correct hand-in that fails | margin |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for lab, check, threshold, p, f in margins(rows):
        print("| %s | %s | %g | %s | %s | %s | %s |" % ((lab, check, threshold) + cell(p, threshold) + cell(f, threshold)))


if __name__ == "__main__":
    main(sys.argv[1:])
