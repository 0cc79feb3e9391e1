#!/usr/bin/env python3
"""Lab 06's hand-ins (grader/tests/submissions/06-sgemm) through the performance model: each
hand-in's fraction of cuBLAS on the H200 at 4096^3 as predicted from the emulator's counts, against
the fraction the H200 measured when its verdict suite ran (lab 06's suite rows of
docs/results/verdicts-h200.tsv), and the verdict each gives at the rubric's threshold (0.75).

    python3 docs/results/perfmodel/handins.py [--predict EXE] [BUILD_DIR] > docs/results/perfmodel-lab06-handins.md

The model is gpulab-perfmodel-predict's (model.py's header: EXE, found in BUILD_DIR/grader/ when
not given).

Needs the emu build's perfmodel-handin-NAME programs (docs/results/perfmodel/ladder/CMakeLists.txt: the
count pass, llvm-14-dev) and nvcc (registers: compile only). The reference is taken from
perfmodel-ladder-counts (its row 10: the 128 x 128 tiles it runs at 4096^3). Exits 1 when the
model's verdict and the H200's differ for a hand-in whose speed both graded.
"""
import csv
import glob
import io
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model  # noqa: E402
import resources  # noqa: E402

ROOT = model.ROOT
HANDINS = os.path.join(ROOT, "grader", "tests", "submissions", "06-sgemm")
H200_VERDICTS = os.path.join(ROOT, "docs", "results", "verdicts-h200.tsv")
THRESHOLD = 0.75  # grader/labs/06-sgemm/rubric.ini, [performance.cuda] min_fraction_of_vendor
N = 4096


def counts_row(binary, name, n=256):
    run = subprocess.run([binary, str(n), name], capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "failed"
    rows = model.read_tsv_text(run.stdout)
    return rows[-1], None


def h200_fraction(name):
    """(fraction or None, note) from the H200's verdict-suite report of the hand-in."""
    # The untouched stub is graded as the hand-in "student" (student.expect).
    handin = "student" if name == "stub" else name
    rows = [r for r in model.read_tsv(H200_VERDICTS)
            if r["lab"] == "06" and r["hand_in"] == handin and r["graded"].endswith(" suite")]
    if not rows:
        return None, "no H200 report"
    m = re.search(r"fraction_of_vendor_library=([0-9][0-9.e+-]*)", rows[0]["performance"])
    if m:
        return float(m.group(1)), ""
    return None, "speed not graded (a correctness or sanitizer check failed)"


def predict(exe, entries):
    """{name: (seconds, bound)} of the entries with counts, through gpulab-perfmodel-predict."""
    rows = [dict(row, step=name) for name, row, res, _ in entries if row]
    with tempfile.TemporaryDirectory() as tmp:
        counts, resources = os.path.join(tmp, "counts.tsv"), os.path.join(tmp, "resources.tsv")
        with open(counts, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        with open(resources, "w") as f:
            f.write("step\tregisters\tshared_bytes\n")
            for name, row, res, _ in entries:
                if row:
                    f.write("%s\t%s\t%s\n" % (name, res["registers"], res["shared_bytes"]))
        return {r["step"]: (r["seconds"], r["bound"]) for r in model.ladder(exe, counts, resources, "H200", N)}


def main():
    rest = [a for i, a in enumerate(sys.argv) if a != "--predict" and sys.argv[i - 1:i] != ["--predict"]]
    build = rest[1] if len(rest) > 1 else os.path.join(ROOT, "build", "emu")
    argv = list(sys.argv)
    if "--predict" not in argv and "GPULAB_PERFMODEL_PREDICT" not in os.environ:
        argv += ["--predict", os.path.join(build, "grader", model.EXE_NAME)]
    exe, _ = model.predictor(argv)
    ladder_dir = os.path.join(build, "docs", "results", "perfmodel", "ladder")
    bins = sorted(glob.glob(os.path.join(ladder_dir, "perfmodel-handin-*")))
    if not bins:
        sys.exit(f"no perfmodel-handin-* programs in {ladder_dir} (the emu build with llvm-14-dev)")
    cublas = {r["step"]: float(r["tflops"]) for r in model.read_tsv(model.MEASURED) if int(r["n"]) == N}["cuBLAS"]
    entries = []
    for b in bins:
        name = os.path.basename(b)[len("perfmodel-handin-"):]
        src = os.path.join(HANDINS, "stub", "sgemm.cu") if name == "stub" else os.path.join(HANDINS, name + ".cu")
        row, why = counts_row(b, name)
        res = None
        if row:
            regs, smem, kernel = resources.file_row(src)
            res = {"registers": regs, "shared_bytes": smem}
        entries.append((name, row, res, why))
    # The reference: the ladder's row 10 and its resources.
    ladder = subprocess.run([os.path.join(ladder_dir, "perfmodel-ladder-counts"), "256"],
                            capture_output=True, text=True, check=True)
    ref_row = next(r for r in model.read_tsv_text(ladder.stdout) if r["step"] == "10")
    ref_res = {"registers": 0, "shared_bytes": 0}
    for step, src, pattern in resources.STEPS:
        if step == "10":
            found = resources.kernels_of(os.path.join(resources.SOL, src))
            (k, (regs, smem)), = [(k, v) for k, v in found.items() if re.search(pattern, k)]
            ref_res = {"registers": regs, "shared_bytes": smem}
    entries.append(("solution", ref_row, ref_res, None))
    predicted = predict(exe, entries)

    out = io.StringIO()
    out.write("# Lab 06's hand-ins: the performance model's verdict against the H200's\n\n")
    out.write("Written by `python3 docs/results/perfmodel/handins.py` (its header says how). Predicted: the model v1\n")
    out.write("(perfmodel.md) from each hand-in's counts at 256^3 on the emulator, scaled to %d^3, over\n" % N)
    out.write("cuBLAS's measured %.2f TFLOP/s (`sgemm-h200-ladder.tsv`). Measured: the H200's report of the\n" % cublas)
    out.write("hand-in (lab 06's suite rows of `verdicts-h200.tsv`). Threshold: %.2f of cuBLAS.\n\n" % THRESHOLD)
    out.write("| hand-in | predicted TFLOP/s | predicted of cuBLAS | measured of cuBLAS | error | model verdict | H200 verdict | bound by |\n")
    out.write("|---|---|---|---|---|---|---|---|\n")
    disagree, compared = [], 0
    for name, row, res, why in entries:
        meas, note = h200_fraction(name)
        if row is None:
            out.write("| %s | - | - | %s | - | none: %s | %s | - |\n" % (
                name, "%.3f" % meas if meas is not None else "-", why,
                ("pass" if meas >= THRESHOLD else "fail") if meas is not None else note))
            continue
        t, bound = predicted[name]
        tflops = 2.0 * N ** 3 / t / 1e12
        frac = tflops / cublas
        verdict = "pass" if frac >= THRESHOLD else "fail"
        if meas is None:
            h200 = note
            err = "-"
        else:
            h200 = "pass" if meas >= THRESHOLD else "fail"
            err = "%+.0f%%" % (100 * (frac / meas - 1))
            compared += 1
            if h200 != verdict:
                disagree.append(name)
        out.write("| %s | %.1f | %.3f | %s | %s | %s | %s | %s |\n" % (
            name, tflops, frac, "%.3f" % meas if meas is not None else "-", err, verdict, h200, bound))
    out.write("\n%d hand-ins with a speed verdict on both sides: %d agree, %d disagree%s.\n" % (
        compared, compared - len(disagree), len(disagree), (" (" + ", ".join(disagree) + ")") if disagree else ""))
    print(out.getvalue(), end="")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
