#!/usr/bin/env python3
"""Lab 03: the emulator's memory metrics of every step of the ladder (and the shipped stub).

Grades each file with the emu grader at warp size 32 and prints, per function and access, the
sectors (global) or wavefronts (shared) per request and their ideal, from the report's metric rows
of the performance check `coalesced_global_access` (rows x cols of [performance.emu] in the rubric).

    python3 solutions/03-bank-conflicts/tools/emu_metrics.py [build/emu]
"""
import json
import os
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "emu")
grader = os.path.join(build, "grader", "gpulab-grade")
files = [
    ("stub (naive float, tiled [32][32] double)", "grader/tests/submissions/03-bank-conflicts/stub/transpose.cu"),
    ("1 naive", "solutions/03-bank-conflicts/steps/01_naive.cu"),
    ("2 tiled [32][32]", "solutions/03-bank-conflicts/steps/02_tiled_unpadded.cu"),
    ("3 padded [32][33]", "solutions/03-bank-conflicts/steps/03_padded.cu"),
    ("4 swizzled [32][32], x ^ k", "solutions/03-bank-conflicts/steps/04_swizzled.cu"),
    ("reference", "solutions/03-bank-conflicts/transpose.cu"),
]
print("| version | function | global load | global store | shared store | shared load | emu verdict |")
print("|---|---|---|---|---|---|---|")
for name, path in files:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        subprocess.run([grader, "grade", "03", "--submission", os.path.join(root, path), "--warp-size", "32",
                        "--seed", "1", "--json", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lab = json.load(open(out))["labs"][0]
    rows = [m for m in lab["metrics"] if m["check"] == "performance.coalesced_global_access"]
    launches = []
    for m in rows:
        if m["launch"] not in launches:
            launches.append(m["launch"])
    failed = [c["name"].split(" ")[0] for c in lab["checks"] if not c["passed"]]
    verdict = "pass" if not failed else "fails " + ", ".join(sorted(set(failed)))
    for i, launch in enumerate(launches):
        cells = {}
        for m in rows:
            if m["launch"] != launch:
                continue
            key = m["space"] + " " + m["access"]
            unit = "sectors" if m["space"] == "global" else "wavefronts"
            cells.setdefault(key, []).append("%.1f %s (ideal %.1f)" % (m["per_request"], unit, m["ideal_per_request"]))
        func = "transpose" if i == 0 else "transpose_double"
        cols = ["; ".join(cells.get(k, ["-"])) for k in ("global load", "global store", "shared store", "shared load")]
        print("| %s | %s | %s | %s |" % (name if i == 0 else "", func, " | ".join(cols), verdict if i == 0 else ""))
