#!/usr/bin/env python3
"""A performance model: the time of each step of lab 06's SGEMM ladder on a named GPU, predicted
from what the emulator counts, against the H200's measured ladder.

    build/emu/docs/results/perfmodel/ladder/perfmodel-ladder-counts 256 > COUNTS.tsv
    python3 docs/results/perfmodel/resources.py > RESOURCES.tsv      # nvcc, compile only
    python3 docs/results/perfmodel/model.py COUNTS.tsv RESOURCES.tsv > docs/results/perfmodel-sgemm-h200.md

Inputs per step (COUNTS.tsv, one n^3 product on the emulator): instructions the emulated threads
executed by class (the compiler pass common/emu/passes/count_pass.cpp), global load/store requests,
32-byte sectors and 128-byte lines, shared-memory requests and wavefronts (the emulator's access
tracing), the launch's blocks and threads per block, barriers per block, and the share of shared
loads a thread issues while one of its global loads is on its way to shared memory. The counts
grow as n^3 (a K loop per output tile) and are scaled by (N / n)^3 to the measured size N = 4096,
except the global stores (C, written once) and the blocks, scaled by (N / n)^2, and the barriers
per block, by N / n. RESOURCES.tsv: registers per thread and static shared memory per block.

v0 (predict): the slowest of five ceilings for the whole GPU:
  issue   warp instructions / (SMs x 4 schedulers x clock): a warp instruction per scheduler per
          clock. Warp instructions = the threads' non-memory instructions / 32 (lanes of a warp run
          together in these kernels) + one per warp-level memory request (global and shared).
  fp32    fused multiply-adds / 32 / (SMs x FP32 lanes / 32 x clock).
  shared  shared-memory wavefronts / (SMs x 1 per clock): 32 banks of 4 bytes per clock.
  l1      global sectors / (SMs x L1 sectors per clock).
  dram    the three matrices once (the compulsory traffic) / DRAM bandwidth.
v1 (predict_v1), per SM rather than for the whole GPU:
  - the busiest SM's whole blocks (ceil(blocks / SMs)), so a partial last wave counts;
  - the L1 also handles at most one 128-byte line per clock (a request touching 32 lines takes 32);
  - occupancy: blocks resident per SM from registers, shared memory, warps and the block limit;
  - latency: each barrier interval of a block ends only after the global loads that feed its
    shared-memory tile have returned (the L2's latency, measured on the GPU by
    docs/results/perfmodel/probes/latency.cu), less the work the block does while they are in flight
    (a double-buffered loop: its shared loads issued before it stores the loaded values). The
    resident blocks share the SM as a closed queue (b blocks, each alternating a service of the
    SM's pipes and a wait), solved exactly by mean-value analysis; one block alone pays the whole
    latency every interval, many blocks hide it.
No cache model beyond the L1's sectors and lines (every sector a request touches is counted, hit
or miss), and the instruction count is the optimised x86 IR's, not the GPU's (perfmodel.md).
"""
import csv
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MEASURED = os.path.join(ROOT, "docs", "results", "sgemm-h200-ladder.tsv")

# Public specifications. H200 SXM: 132 SMs (GH100 as in the H100 SXM5), 1,980 MHz boost, 128 FP32
# lanes per SM (67 TFLOP/s FP32), 4.8 TB/s HBM3e (NVIDIA H200 datasheet; H100 whitepaper for the
# SM: 4 schedulers, 32 shared-memory banks of 4 bytes, a 128-byte L1 data path per clock).
# v1 adds the SM's limits on resident blocks (CUDA programming guide, compute capability 9.0:
# 64 K 32-bit registers allocated per warp in units of 256, 64 warps, 32 blocks, 228 KB of shared
# memory of which 1 KB is reserved per block), the L1's tag stage (one 128-byte line per clock) and
# the latency of a global load served by the L2 (L2_LATENCY_CYCLES below).
GPUS = {
    "H200": dict(sms=132, clock_hz=1.98e9, schedulers=4, fp32_lanes=128, shared_wavefronts=1,
                 l1_sectors=4, l1_lines=1, dram_bytes_per_s=4.8e12, regs_per_sm=65536, reg_unit=256,
                 max_warps=64, max_blocks=32, shared_per_sm=233472, shared_reserved=1024,
                 l2_latency_cycles=288, warp=32, simds=0, measured=True),
    # Public specifications only, nothing measured on these GPUs (the grader's gpu() in
    # grader/harness/src/perfmodel.cpp gives each number's source; docs/results/perfmodel.md,
    # "Other GPUs"). The L2 latency: the H200's 145 ns at this GPU's clock, assumed.
    "RTX4090": dict(sms=128, clock_hz=2.52e9, schedulers=4, fp32_lanes=128, shared_wavefronts=1,
                    l1_sectors=4, l1_lines=1, dram_bytes_per_s=1.008e12, regs_per_sm=65536, reg_unit=256,
                    max_warps=48, max_blocks=24, shared_per_sm=102400, shared_reserved=1024,
                    l2_latency_cycles=288 / 1.98e9 * 2.52e9, warp=32, simds=0, measured=False),
    # CDNA 3: wave64, 4 SIMDs per CU whose registers are allocated per wave in units of 8 x 64.
    "MI300X": dict(sms=304, clock_hz=2.1e9, schedulers=1, fp32_lanes=128, shared_wavefronts=1,
                   l1_sectors=2, l1_lines=1, dram_bytes_per_s=5.3e12, regs_per_sm=131072, reg_unit=512,
                   max_warps=32, max_blocks=16, shared_per_sm=65536, shared_reserved=0,
                   l2_latency_cycles=288 / 1.98e9 * 2.1e9, warp=64, simds=4, measured=False),
}


def read_tsv(path):
    with open(path) as f:
        return read_tsv_text(f.read())


def read_tsv_text(text):
    return list(csv.DictReader((line for line in text.splitlines() if not line.startswith("#")), delimiter="\t"))


def warp_instructions(c, warp=32):
    """Warp instructions of counts c (a row, scaled or not): the threads' non-memory instructions
    / the warp's width (lanes of a warp run together in these kernels) + one per warp-level memory
    instruction (the emulator counts requests per 32 lanes: a 64-wide one counts two)."""
    mem_thread_instr = float(c["load"]) + float(c["store"])
    return (float(c["total"]) - mem_thread_instr) / warp + 32 / warp * (
        float(c["global_load_requests"]) + float(c["global_store_requests"]) + float(c["shared_requests"]))


def predict(row, gpu, big_n):
    n = int(row["n"])
    scale = (big_n / n) ** 3
    g = {k: float(row[k]) * scale for k in row if k not in ("step", "n")}
    # Global stores write C once: they grow as n^2, not n^3.
    for k in ("global_store_requests", "global_store_sectors"):
        g[k] = float(row[k]) * (big_n / n) ** 2
    warp_instr = warp_instructions(g, gpu["warp"])
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


def occupancy(gpu, threads, registers, shared_bytes):
    """Blocks of `threads` threads resident on one SM, the warps per block, and what limits them.
    With SIMDs (AMD CDNA) a wave's registers come from one SIMD: whole waves per SIMD, then whole
    blocks per CU; a block of one wave is not held by max_blocks (it needs no barrier)."""
    warp = gpu["warp"]
    warps = -(-threads // warp)
    per_warp = -(-registers * warp // gpu["reg_unit"]) * gpu["reg_unit"]
    limits = {"warps": gpu["max_warps"] // warps, "blocks": gpu["max_blocks"],
              "registers": gpu["regs_per_sm"] // (max(1, per_warp) * warps)}
    if gpu["simds"]:
        per_simd = gpu["regs_per_sm"] // gpu["simds"]
        limits["registers"] = per_simd // max(1, per_warp) * gpu["simds"] // warps
        if warps == 1:
            limits["blocks"] = gpu["max_warps"]
    if shared_bytes:
        limits["shared memory"] = gpu["shared_per_sm"] // (shared_bytes + gpu["shared_reserved"])
    limit = min(limits, key=limits.get)
    return limits[limit], warps, limit


def predict_v1(row, resources, gpu, big_n):
    """v1: v0's pipes per SM for the busiest SM's blocks (whole blocks: the last wave counts), the L1's
    tag stage (a 128-byte line per clock), and a latency term: a block cannot finish a barrier
    interval before the global loads that feed its shared-memory tile return, unless it has other
    work to do meanwhile; the other resident blocks (occupancy from registers, shared memory and
    block size) fill that time where they can. Returns (seconds, what bounds it, details)."""
    n = int(row["n"])
    s1, s2, s3 = big_n / n, (big_n / n) ** 2, (big_n / n) ** 3
    g = {k: float(row[k]) * s3 for k in row if k not in ("step", "n")}
    for k in ("global_store_requests", "global_store_sectors"):
        g[k] = float(row[k]) * s2
    blocks = float(row["blocks"]) * s2
    threads = int(row["threads_per_block"])
    intervals = float(row["barriers_per_block"]) * s1 + 1
    hidden = float(row["shared_loads_under_global_load"])
    regs, smem = int(resources["registers"]), int(resources["shared_bytes"])
    b, warps, limit = occupancy(gpu, threads, regs, smem)
    per_sm = -(-blocks // gpu["sms"])  # the busiest SM's blocks
    # Cycles of one block's work on each pipe of an SM.
    lines = g["global_load_lines"] + g["global_store_requests"]
    sectors = g["global_load_sectors"] + g["global_store_sectors"]
    pipes = {
        "fp32": g["fma"] / (gpu["fp32_lanes"]) / blocks,
        "shared": g["shared_wavefronts"] / gpu["shared_wavefronts"] / blocks,
        "l1": max(sectors / gpu["l1_sectors"], lines / gpu["l1_lines"]) / blocks,
    }
    warp_instr = warp_instructions(g, gpu["warp"]) / blocks
    issue = warp_instr / min(gpu["schedulers"], b * warps)  # the resident blocks share the schedulers
    service = max(issue, *pipes.values()) / intervals  # SM cycles of one block's barrier interval
    # Latency a block waits per interval: the L2's, less the work it does while its tile's loads
    # are in flight (the shared loads it issues before storing them: a double-buffered loop).
    exposed = max(0.0, gpu["l2_latency_cycles"] - hidden * service)
    # b resident blocks share the SM: a closed queue of b customers, each alternating one service
    # at the SM (service cycles) and one wait (exposed cycles); exact mean-value analysis.
    queue = 0.0
    for k in range(1, b + 1):
        response = service * (1 + queue)
        rate = k / (response + exposed)  # intervals per cycle
        queue = rate * response
    sm_cycles = per_sm * intervals / rate
    throughput = per_sm * intervals * service
    dram = 3 * big_n * big_n * 4 / gpu["dram_bytes_per_s"]
    t = max(sm_cycles / gpu["clock_hz"], dram)
    if t == dram:
        bound = "dram"
    elif sm_cycles > 1.05 * throughput:
        bound = "latency"
    else:
        bound = max({"issue": issue, **pipes}.items(), key=lambda kv: kv[1])[0]
    return t, bound, dict(blocks_per_sm=b, limit=limit, warps=b * warps, throughput_ms=1e3 * throughput / gpu["clock_hz"],
                          exposed=exposed, intervals=intervals, service=service)

def main():
    if len(sys.argv) < 3:
        sys.exit("usage: model.py COUNTS.tsv RESOURCES.tsv [N]")
    counts = read_tsv(sys.argv[1])
    resources = {r["step"]: r for r in read_tsv(sys.argv[2])}
    big_n = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    gpu_name = "H200"
    gpu = GPUS[gpu_name]
    measured = {r["step"]: float(r["tflops"]) for r in read_tsv(MEASURED) if int(r["n"]) == big_n}
    flops = 2.0 * big_n ** 3

    def run(g):
        rows = []
        for r in counts:
            t, bound, d = predict_v1(r, resources[r["step"]], g, big_n)
            t0, bound0, _, _ = predict(r, g, big_n)
            rows.append((r["step"], flops / t / 1e12, measured.get(r["step"]), bound, d, flops / t0 / 1e12, bound0))
        return rows

    rows = run(gpu)
    print("# Performance model v1: the SGEMM ladder, predicted for the %s against measured\n" % gpu_name)
    print("Written by `python3 docs/results/perfmodel/model.py COUNTS.tsv RESOURCES.tsv` (its header: the model")
    print("and the commands that make both inputs). Counts from one %s^3 product per step on the emulator," % counts[0]["n"])
    print("scaled to %d^3; registers and shared memory per block from nvcc (compile only); measured:" % big_n)
    print("`sgemm-h200-ladder.tsv` (NVIDIA H200, the same steps). Error = predicted / measured - 1.")
    print("The L2 latency is the H200's, measured by `docs/results/perfmodel/probes/latency.cu` (%d cycles).\n" % gpu["l2_latency_cycles"])
    print("| step | predicted TFLOP/s | measured TFLOP/s | error | bound by | blocks per SM (limit) | warps per SM | v0 predicted | v0 error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for step, pred, meas, bound, d, pred0, bound0 in rows:
        err = "%+.0f%%" % (100 * (pred / meas - 1)) if meas else "-"
        err0 = "%+.0f%%" % (100 * (pred0 / meas - 1)) if meas else "-"
        print("| %s | %.1f | %s | %s | %s | %d (%s) | %d | %.1f | %s |" % (
            step, pred, "%.2f" % meas if meas else "-", err, bound, d["blocks_per_sm"], d["limit"], d["warps"],
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
    for cycles in (200, gpu["l2_latency_cycles"], 400, 562):
        g = dict(gpu, l2_latency_cycles=cycles)
        rs = run(g)
        w, k, op, om, _ = verdict(rs)
        print("| %d | %s | %d of %d | %s |" % (cycles, " ".join("%+.0f%%" % (100 * (r[1] / r[2] - 1)) for r in k),
                                               len(w), len(k), "right" if op == om else "wrong"))


if __name__ == "__main__":
    main()
