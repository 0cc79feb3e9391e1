#!/usr/bin/env python3
"""The performance model's parameter sets for GPUs nothing was measured on (model.py's GPUS with
measured=False: a GeForce RTX 4090 and an Instinct MI300X), and the one part of them a compiler
can check here.

    python3 docs/results/perfmodel/other_gpus.py occupancy [RESOURCES.tsv]
        The model's occupancy on the MI300X against what AMD's compiler computes for each kernel
        of the SGEMM ladder (waves per SIMD, hipcc for gfx940: resources.py --hip gfx940; run live
        when no table is given). Exits 1 on any difference.
    python3 docs/results/perfmodel/other_gpus.py ladder
        The ladder predicted at 4096^3 on each GPU of GPUS, as a fraction of that GPU's FP32
        peak: the table of docs/results/perfmodel-other-gpus.md. Counts: the emulator's, at 256^3
        (the same on every GPU: the emulator counts memory requests per 32 lanes at either warp
        width); registers from each GPU's compiler (the kept resources tables).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402

RESULTS = os.path.join(model.ROOT, "docs", "results")
# Each GPU's compiler output for the ladder (resources.py; the header line of each says how).
RESOURCES = {"H200": "perfmodel-ladder-resources.tsv", "RTX4090": "perfmodel-ladder-resources-sm89.tsv",
             "MI300X": "perfmodel-ladder-resources-gfx940.tsv"}
COUNTS = "perfmodel-ladder-counts-256.tsv"


def waves_per_simd(gpu, threads, registers, shared_bytes):
    """The model's occupancy as AMD's compiler states it: waves on the busiest SIMD of a CU."""
    blocks, waves, limit = model.occupancy(gpu, threads, registers, shared_bytes)
    per_simd_limit = gpu["max_warps"] // gpu["simds"]
    return min(per_simd_limit, -(-blocks * waves // gpu["simds"])), blocks, limit


def occupancy(argv):
    if argv:
        text = open(argv[0]).read()
        source = argv[0]
    else:
        text = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "resources.py"),
                               "--hip", "gfx940"], capture_output=True, text=True, check=True).stdout
        source = "resources.py --hip gfx940, run now"
    gpu = model.GPUS["MI300X"]
    rows = model.read_tsv_text(text)
    print("The MI300X's occupancy: the model's (model.occupancy) against AMD's compiler's (%s)\n" % source)
    print("| step | VGPRs | LDS bytes | block (compiled for) | compiler: waves per SIMD | model: blocks per CU (limit) | model: waves per SIMD | |")
    print("|---|---|---|---|---|---|---|---|")
    bad = 0
    for r in rows:
        threads, regs, lds = int(r["max_threads"]), int(r["registers"]), int(r["shared_bytes"])
        want = int(r["compiler_occupancy"])
        got, blocks, limit = waves_per_simd(gpu, threads, regs, lds)
        same = got == want
        bad += not same
        print("| %s | %d | %d | %d | %d | %d (%s) | %d | %s |" % (
            r["step"], regs, lds, threads, want, blocks, limit, got, "same" if same else "DIFFERENT"))
    print("\n%d of %d the same" % (len(rows) - bad, len(rows)))
    return 1 if bad or not rows else 0


def peak_tflops(gpu):
    return 2 * gpu["fp32_lanes"] * gpu["sms"] * gpu["clock_hz"] / 1e12


def ladder(_argv, big_n=4096):
    counts = model.read_tsv(os.path.join(RESULTS, COUNTS))
    resources = {g: {r["step"]: r for r in model.read_tsv(os.path.join(RESULTS, f))} for g, f in RESOURCES.items()}
    measured = {r["step"]: float(r["tflops"]) for r in model.read_tsv(model.MEASURED) if int(r["n"]) == big_n}
    flops = 2.0 * big_n ** 3
    names = list(model.GPUS)
    print("| step | " + " | ".join("%s: TFLOP/s, of peak (bound; blocks per SM, limit)" % g for g in names) +
          " | H200 measured |")
    print("|---|" + "---|" * len(names) + "---|")
    predicted = {g: {} for g in names}
    for row in counts:
        cells = []
        for g in names:
            t, bound, d = model.predict_v1(row, resources[g][row["step"]], model.GPUS[g], big_n)
            tf = flops / t / 1e12
            predicted[g][row["step"]] = tf
            cells.append("%.1f, %.0f%% (%s; %d, %s)" % (tf, 100 * tf / peak_tflops(model.GPUS[g]), bound,
                                                      d["blocks_per_sm"], d["limit"]))
        m = measured.get(row["step"])
        print("| %s | %s | %s |" % (row["step"], " | ".join(cells), "%.2f" % m if m else "-"))
    print()
    for g in names:
        steps = [s for s in predicted[g] if s in measured]
        order = sorted(steps, key=lambda s: predicted[g][s])
        print("- %s (FP32 peak %.1f TFLOP/s): predicted order, slowest first: %s" % (
            g, peak_tflops(model.GPUS[g]), " ".join(order)))
    print("- H200 measured order, slowest first: %s" % " ".join(sorted(measured, key=measured.get)))
    return 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("occupancy", "ladder"):
        sys.exit(__doc__)
    return (occupancy if sys.argv[1] == "occupancy" else ladder)(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
