#!/usr/bin/env python3
"""The SGEMM ladder predicted for the H200 against measured, as perfmodel-sgemm-h200.md shows it.
The model itself is the grader's, and has no other implementation: grader/harness/src/perfmodel.cpp
(its header explains each term; gpulab/grade/perfmodel.hpp). This script runs its command line,
gpulab-perfmodel-predict, and formats what it prints:

    build/emu/docs/results/perfmodel/ladder/perfmodel-ladder-counts 256 > COUNTS.tsv
    python3 docs/results/perfmodel/resources.py > RESOURCES.tsv      # nvcc, compile only
    python3 docs/results/perfmodel/model.py [--predict EXE] COUNTS.tsv RESOURCES.tsv [N] \\
        > docs/results/perfmodel-sgemm-h200.md

EXE: the built gpulab-perfmodel-predict (any preset builds it: cmake --build BUILD --target
gpulab-perfmodel-predict); without --predict, $GPULAB_PERFMODEL_PREDICT, else the first of
build/emu/grader/ and build/*/grader/ that has one. COUNTS.tsv: what the emulator counted for each
step at n^3 (perfmodel.md, "The ladder's counts"); RESOURCES.tsv: registers per thread and static
shared memory per block. N: the size predicted (4096, the H200's measured ladder).

The other scripts here read the model through this module's functions: predictor() (which binary),
gpus() (the GPU parameter sets), ladder() (each step's predictions) and occupancy().
"""
import csv
import glob
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MEASURED = os.path.join(ROOT, "docs", "results", "sgemm-h200-ladder.tsv")
EXE_NAME = "gpulab-perfmodel-predict"


def read_tsv(path):
    with open(path) as f:
        return read_tsv_text(f.read())


def read_tsv_text(text):
    return list(csv.DictReader((line for line in text.splitlines() if not line.startswith("#")), delimiter="\t"))


def predictor(argv):
    """(the gpulab-perfmodel-predict to run, argv without its --predict EXE)."""
    argv = list(argv)
    exe = os.environ.get("GPULAB_PERFMODEL_PREDICT")
    if "--predict" in argv:
        i = argv.index("--predict")
        if i + 1 >= len(argv):
            sys.exit("--predict needs the path of " + EXE_NAME)
        exe = argv[i + 1]
        del argv[i:i + 2]
    if not exe:
        found = [os.path.join(ROOT, "build", "emu", "grader", EXE_NAME)] + sorted(
            glob.glob(os.path.join(ROOT, "build", "*", "grader", EXE_NAME)))
        exe = next((p for p in found if os.access(p, os.X_OK)), None)
    if not exe or not os.access(exe, os.X_OK):
        sys.exit("no %s: build it (cmake --build BUILD --target %s) and pass --predict BUILD/grader/%s"
                 % (EXE_NAME, EXE_NAME, EXE_NAME))
    return exe, argv


def run(exe, *args):
    """The rows of the TSV one command of the binary prints."""
    return read_tsv_text(subprocess.run([exe] + [str(a) for a in args], capture_output=True, text=True,
                                        check=True).stdout)


def gpus(exe):
    """{name: parameters} of every GPU the model knows, the validated one first (numbers as floats)."""
    return {r["name"]: {k: (v if k == "name" else float(v)) for k, v in r.items()} for r in run(exe, "gpus")}


def ladder(exe, counts_path, resources_path, gpu="H200", big_n=4096, l2_latency=None):
    """One dict per step of COUNTS.tsv: v1's seconds, bound, blocks_per_sm, limit, warps_per_sm; v0's
    v0_seconds and v0_bound; warp_instructions (of the counts as counted)."""
    args = ["ladder", counts_path, resources_path, "--gpu", gpu, "--n", big_n]
    if l2_latency is not None:
        args += ["--l2-latency", l2_latency]
    rows = run(exe, *args)
    for r in rows:
        for k in ("seconds", "v0_seconds", "warp_instructions"):
            r[k] = float(r[k])
        for k in ("blocks_per_sm", "warps_per_sm"):
            r[k] = int(r[k])
    return rows


def occupancy(exe, resources_path, gpu):
    """One dict per row of RESOURCES.tsv (max_threads, registers, shared_bytes): blocks_per_sm,
    warps_per_block, limit and, on a GPU with SIMDs, waves_per_simd."""
    return run(exe, "occupancy", resources_path, "--gpu", gpu)


def main():
    exe, argv = predictor(sys.argv)
    if len(argv) < 3:
        sys.exit("usage: model.py [--predict EXE] COUNTS.tsv RESOURCES.tsv [N]")
    counts_path, resources_path = argv[1], argv[2]
    counts = read_tsv(counts_path)
    big_n = int(argv[3]) if len(argv) > 3 else 4096
    gpu_name = "H200"
    latency = gpus(exe)[gpu_name]["l2_latency_cycles"]
    measured = {r["step"]: float(r["tflops"]) for r in read_tsv(MEASURED) if int(r["n"]) == big_n}
    flops = 2.0 * big_n ** 3

    def predicted(l2_latency=None):
        return [(r["step"], flops / r["seconds"] / 1e12, measured.get(r["step"]), r["bound"], r,
                 flops / r["v0_seconds"] / 1e12, r["v0_bound"])
                for r in ladder(exe, counts_path, resources_path, gpu_name, big_n, l2_latency)]

    rows = predicted()
    print("# Performance model v1: the SGEMM ladder, predicted for the %s against measured\n" % gpu_name)
    print("Written by `python3 docs/results/perfmodel/model.py COUNTS.tsv RESOURCES.tsv` (its header: the commands")
    print("that make both inputs); the model is the grader's (grader/harness/src/perfmodel.cpp, run through")
    print("`gpulab-perfmodel-predict`). Counts from one %s^3 product per step on the emulator," % counts[0]["n"])
    print("scaled to %d^3; registers and shared memory per block from nvcc (compile only); measured:" % big_n)
    print("`sgemm-h200-ladder.tsv` (NVIDIA H200, the same steps). Error = predicted / measured - 1.")
    print("The L2 latency is the H200's, measured by `docs/results/perfmodel/probes/latency.cu` (%d cycles).\n" % latency)
    print("| step | predicted TFLOP/s | measured TFLOP/s | error | bound by | blocks per SM (limit) | warps per SM | v0 predicted | v0 error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for step, pred, meas, bound, d, pred0, bound0 in rows:
        err = "%+.0f%%" % (100 * (pred / meas - 1)) if meas else "-"
        err0 = "%+.0f%%" % (100 * (pred0 / meas - 1)) if meas else "-"
        print("| %s | %.1f | %s | %s | %s | %d (%s) | %d | %.1f | %s |" % (
            step, pred, "%.2f" % meas if meas else "-", err, bound, d["blocks_per_sm"], d["limit"], d["warps_per_sm"],
            pred0, err0))

    def verdict(rows):
        known = [r for r in rows if r[2]]
        within = [r[0] for r in known if abs(r[1] / r[2] - 1) <= 0.30]
        order_pred = [r[0] for r in sorted(known, key=lambda x: x[1])]
        order_meas = [r[0] for r in sorted(known, key=lambda x: x[2])]
        worst = max(known, key=lambda r: abs(r[1] / r[2] - 1))
        return within, known, order_pred, order_meas, worst

    within, known, order_pred, order_meas, worst = verdict(rows)
    print("\nWithin +-30%%: %d of %d steps; largest error %s (%+.0f%%). Order of the steps by predicted speed %s the"
          % (len(within), len(known), worst[0], 100 * (worst[1] / worst[2] - 1),
             "matches" if order_pred == order_meas else "does not match"))
    print("measured order (predicted, slowest first: %s; measured: %s)." % (" ".join(order_pred), " ".join(order_meas)))
    print("\nThe same with other L2 latencies (the model's one latency parameter):\n")
    print("| L2 latency (cycles) | errors, steps in order | within +-30% | order |")
    print("|---|---|---|---|")
    for cycles in (200, latency, 400, 562):
        w, k, op, om, _ = verdict(predicted(cycles))
        print("| %d | %s | %d of %d | %s |" % (cycles, " ".join("%+.0f%%" % (100 * (r[1] / r[2] - 1)) for r in k),
                                               len(w), len(k), "right" if op == om else "wrong"))


if __name__ == "__main__":
    main()
