#!/usr/bin/env python3
"""The performance model's parameter sets for GPUs nothing was measured on (`gpulab-perfmodel-predict
gpus`, measured 0: a GeForce RTX 4090 and an Instinct MI300X; grader/harness/src/perfmodel.cpp's
gpu()), and the one part of them a compiler can check here. The model is run through
gpulab-perfmodel-predict (model.py's header: where it is found, or --predict EXE before the command).

    python3 docs/results/perfmodel/other_gpus.py [--predict EXE] occupancy [RESOURCES.tsv]
        The model's occupancy on the MI300X against what AMD's compiler computes for each kernel
        of the SGEMM ladder (waves per SIMD, hipcc for gfx940: resources.py --hip gfx940; run live
        when no table is given). Exits 1 on any difference.
    python3 docs/results/perfmodel/other_gpus.py [--predict EXE] ladder
        The ladder predicted at 4096^3 on each GPU the model knows, as a fraction of that GPU's FP32
        peak: the table of docs/results/perfmodel-other-gpus.md. Counts: the emulator's, at 256^3
        (the same on every GPU: the emulator counts memory requests per 32 lanes at either warp
        width); registers from each GPU's compiler (the kept resources tables).
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402

RESULTS = os.path.join(model.ROOT, "docs", "results")
# Each GPU's compiler output for the ladder (resources.py; the header line of each says how).
RESOURCES = {"H200": "perfmodel-ladder-resources.tsv", "RTX4090": "perfmodel-ladder-resources-sm89.tsv",
             "MI300X": "perfmodel-ladder-resources-gfx940.tsv"}
COUNTS = "perfmodel-ladder-counts-256.tsv"


def occupancy(exe, argv):
    if argv:
        path, source = argv[0], argv[0]
        tmp = None
    else:
        text = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "resources.py"),
                               "--hip", "gfx940"], capture_output=True, text=True, check=True).stdout
        source = "resources.py --hip gfx940, run now"
        tmp = tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False)
        tmp.write(text)
        tmp.close()
        path = tmp.name
    try:
        rows = model.read_tsv(path)
        got = {r["step"]: r for r in model.occupancy(exe, path, "MI300X")}
    finally:
        if tmp:
            os.unlink(tmp.name)
    print("The MI300X's occupancy: the model's (gpulab-perfmodel-predict occupancy) against AMD's compiler's (%s)\n"
          % source)
    print("| step | VGPRs | LDS bytes | block (compiled for) | compiler: waves per SIMD | model: blocks per CU (limit) | model: waves per SIMD | |")
    print("|---|---|---|---|---|---|---|---|")
    bad = 0
    for r in rows:
        m = got[r["step"]]
        want, per_simd = int(r["compiler_occupancy"]), int(m["waves_per_simd"])
        same = per_simd == want
        bad += not same
        print("| %s | %s | %s | %s | %d | %s (%s) | %d | %s |" % (
            r["step"], r["registers"], r["shared_bytes"], r["max_threads"], want, m["blocks_per_sm"], m["limit"],
            per_simd, "same" if same else "DIFFERENT"))
    print("\n%d of %d the same" % (len(rows) - bad, len(rows)))
    return 1 if bad or not rows else 0


def ladder(exe, _argv, big_n=4096):
    counts_path = os.path.join(RESULTS, COUNTS)
    counts = model.read_tsv(counts_path)
    params = model.gpus(exe)
    names = list(params)
    predicted = {g: {r["step"]: r for r in model.ladder(exe, counts_path, os.path.join(RESULTS, RESOURCES[g]), g, big_n)}
                 for g in names}
    measured = {r["step"]: float(r["tflops"]) for r in model.read_tsv(model.MEASURED) if int(r["n"]) == big_n}
    flops = 2.0 * big_n ** 3
    peak = {g: params[g]["fp32_peak_flops"] / 1e12 for g in names}
    tflops = {g: {s: flops / r["seconds"] / 1e12 for s, r in predicted[g].items()} for g in names}
    print("| step | " + " | ".join("%s: TFLOP/s, of peak (bound; blocks per SM, limit)" % g for g in names) +
          " | H200 measured |")
    print("|---|" + "---|" * len(names) + "---|")
    for row in counts:
        step = row["step"]
        cells = ["%.1f, %.0f%% (%s; %d, %s)" % (tflops[g][step], 100 * tflops[g][step] / peak[g], predicted[g][step]["bound"],
                                               predicted[g][step]["blocks_per_sm"], predicted[g][step]["limit"])
                 for g in names]
        m = measured.get(step)
        print("| %s | %s | %s |" % (step, " | ".join(cells), "%.2f" % m if m else "-"))
    print()
    for g in names:
        steps = [s for s in tflops[g] if s in measured]
        order = sorted(steps, key=lambda s: tflops[g][s])
        print("- %s (FP32 peak %.1f TFLOP/s): predicted order, slowest first: %s" % (g, peak[g], " ".join(order)))
    print("- H200 measured order, slowest first: %s" % " ".join(sorted(measured, key=measured.get)))
    return 0


def main():
    exe, argv = model.predictor(sys.argv)
    if len(argv) < 2 or argv[1] not in ("occupancy", "ladder"):
        sys.exit(__doc__)
    return (occupancy if argv[1] == "occupancy" else ladder)(exe, argv[2:])


if __name__ == "__main__":
    sys.exit(main())
