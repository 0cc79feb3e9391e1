#!/usr/bin/env python3
"""A first performance model: the time of each step of lab 06's SGEMM ladder on a named GPU,
predicted from what the emulator counts, against the H200's measured ladder.

    build/emu/tools/perfmodel/ladder/perfmodel-ladder-counts 256 > COUNTS.tsv
    python3 tools/perfmodel/model.py COUNTS.tsv > docs/results/perfmodel-sgemm-h200.md

Inputs per step (COUNTS.tsv, one n^3 product on the emulator): instructions the emulated threads
executed by class (the compiler pass tools/perfmodel/count_pass.cpp), global load/store requests
and 32-byte sectors, shared-memory requests and wavefronts (the emulator's access tracing). All of
them grow as n^3 for these kernels (a K loop per output tile), so they are scaled by (N / n)^3 to
the measured size N = 4096, except the global stores (C, written once), scaled by (N / n)^2.

The model: the kernel takes as long as its slowest ceiling, each from the GPU's public
specifications (GPUS below):
  issue   warp instructions / (SMs x 4 schedulers x clock): a warp instruction per scheduler per
          clock. Warp instructions = the threads' non-memory instructions / 32 (lanes of a warp run
          together in these kernels) + one per warp-level memory request (global and shared).
  fp32    fused multiply-adds / 32 / (SMs x FP32 lanes / 32 x clock).
  shared  shared-memory wavefronts / (SMs x 1 per clock): 32 banks of 4 bytes per clock.
  l1      global sectors / (SMs x L1 sectors per clock).
  dram    the three matrices once (the compulsory traffic) / DRAM bandwidth.
No latency term yet, and no cache model beyond the L1's sectors (every sector a request touches is
counted, hit or miss): both are named where the errors point at them.
"""
import csv
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEASURED = os.path.join(ROOT, "docs", "results", "sgemm-h200-ladder.tsv")

# Public specifications. H200 SXM: 132 SMs (GH100 as in the H100 SXM5), 1,980 MHz boost, 128 FP32
# lanes per SM (67 TFLOP/s FP32), 4.8 TB/s HBM3e (NVIDIA H200 datasheet; H100 whitepaper for the
# SM: 4 schedulers, 32 shared-memory banks of 4 bytes, a 128-byte L1 data path per clock).
GPUS = {
    "H200": dict(sms=132, clock_hz=1.98e9, schedulers=4, fp32_lanes=128, shared_wavefronts=1,
                 l1_sectors=4, dram_bytes_per_s=4.8e12),
}


def read_tsv(path):
    with open(path) as f:
        return list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"))


def warp_instructions(c):
    """Warp instructions of counts c (a row, scaled or not): the threads' non-memory instructions
    / 32 (lanes of a warp run together in these kernels) + one per warp-level memory request."""
    mem_thread_instr = float(c["load"]) + float(c["store"])
    return (float(c["total"]) - mem_thread_instr) / 32 + float(c["global_load_requests"]) + \
        float(c["global_store_requests"]) + float(c["shared_requests"])


def predict(row, gpu, big_n):
    n = int(row["n"])
    scale = (big_n / n) ** 3
    g = {k: float(row[k]) * scale for k in row if k not in ("step", "n")}
    # Global stores write C once: they grow as n^2, not n^3.
    for k in ("global_store_requests", "global_store_sectors"):
        g[k] = float(row[k]) * (big_n / n) ** 2
    warp_instr = warp_instructions(g)
    clock = gpu["clock_hz"] * gpu["sms"]
    ceilings = {
        "issue": warp_instr / (clock * gpu["schedulers"]),
        "fp32": g["fma"] / (clock * gpu["fp32_lanes"]),
        "shared": g["shared_wavefronts"] / (clock * gpu["shared_wavefronts"]),
        "l1": (g["global_load_sectors"] + g["global_store_sectors"]) / (clock * gpu["l1_sectors"]),
        "dram": 3 * big_n * big_n * 4 / gpu["dram_bytes_per_s"],
    }
    bound = max(ceilings, key=ceilings.get)
    return ceilings[bound], bound, ceilings, warp_instr


def main():
    counts = read_tsv(sys.argv[1])
    big_n = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    gpu_name = "H200"
    gpu = GPUS[gpu_name]
    measured = {r["step"]: float(r["tflops"]) for r in read_tsv(MEASURED) if int(r["n"]) == big_n}
    rows = []
    for r in counts:
        t, bound, ceil, warp_instr = predict(r, gpu, big_n)
        flops = 2.0 * big_n ** 3
        pred = flops / t / 1e12
        meas = measured.get(r["step"])
        rows.append((r["step"], pred, meas, bound, ceil, warp_instr, r))
    print("# Performance model v0: the SGEMM ladder, predicted for the %s against measured\n" % gpu_name)
    print("Written by `python3 tools/perfmodel/model.py COUNTS.tsv` (its header: the model and the")
    print("command that makes COUNTS.tsv). Counts from one %s^3 product per step on the emulator," % counts[0]["n"])
    print("scaled to %d^3; measured: `sgemm-h200-ladder.tsv` (NVIDIA H200, the same steps)." % big_n)
    print("Error = predicted / measured - 1. The ceilings are times in ms at %d^3.\n" % big_n)
    print("| step | predicted TFLOP/s | measured TFLOP/s | error | bound by | issue | fp32 | shared | l1 | dram | warp instr. per FMA |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    errors = []
    for step, pred, meas, bound, ceil, warp_instr, r in rows:
        err = pred / meas - 1 if meas else None
        if err is not None:
            errors.append((step, err))
        fma = float(r["fma"]) * (big_n / int(r["n"])) ** 3
        print("| %s | %.1f | %s | %s | %s | %s | %.2f |" % (
            step, pred, "%.2f" % meas if meas else "-", "%+.0f%%" % (100 * err) if err is not None else "-",
            bound, " | ".join("%.3f" % (1e3 * ceil[k]) for k in ("issue", "fp32", "shared", "l1", "dram")),
            warp_instr / (fma / 32) if fma else float("nan")))
    known = [r for r in rows if r[2]]  # steps the H200 measured
    order_pred = [s for s, *_ in sorted(known, key=lambda x: x[1])]
    order_meas = [s for s, *_ in sorted(known, key=lambda x: x[2])]
    within = [s for s, e in errors if abs(e) <= 0.30]
    print("\nWithin +-30%%: %d of %d steps (%s). Order of the steps by predicted speed %s the measured order"
          % (len(within), len(errors), ", ".join(within) or "none",
             "matches" if order_pred == order_meas else "does not match"))
    print("(predicted, slowest first: %s; measured: %s)." % (" ".join(order_pred), " ".join(order_meas)))


if __name__ == "__main__":
    main()
