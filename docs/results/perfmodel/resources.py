#!/usr/bin/env python3
"""Registers and static shared memory of each kernel of lab 06's SGEMM ladder, as nvcc compiles it
for an H100/H200 (sm_90): the input the performance model needs for occupancy. Compile-only, so it
runs on any machine with nvcc (no GPU):

    python3 docs/results/perfmodel/resources.py > docs/results/perfmodel-ladder-resources.tsv
    python3 docs/results/perfmodel/resources.py NAME=FILE ...   (one row per file with one kernel)
    python3 docs/results/perfmodel/resources.py --arch sm_89    (another NVIDIA architecture)
    python3 docs/results/perfmodel/resources.py --hip gfx940    (hipcc for an AMD GPU, compile only)

With --hip the rows also give what AMD's compiler says of each kernel: the largest block it was
compiled for (max_threads: the kernel's launch bounds, else 1024) and the waves per SIMD it
computes for such a block (compiler_occupancy). docs/results/perfmodel/other_gpus.py sets the model's
occupancy against that number.

One row per step: the kernel the H200's ladder ran at 4096^3 (for step 10, the reference's
128 x 128 tiles without bounds checks), its registers per thread and static shared bytes per block
(ptxas's `--resource-usage` report, with the flags of the cuda preset's Release build: -O3).
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SOL = os.path.join(ROOT, "solutions", "06-sgemm")
# step -> (source file, a pattern of the demangled kernel name)
STEPS = [
    ("01", "steps/01_naive.cu", r"naive_kernel"),
    ("02", "steps/02_coalesced.cu", r"coalesced_kernel"),
    ("03", "steps/03_smem_tiling.cu", r"smem_tiling_kernel"),
    ("04", "steps/04_register_1d.cu", r"register_1d_kernel"),
    ("05", "steps/05_register_2d.cu", r"register_2d_kernel"),
    ("06", "steps/06_float4_loads.cu", r"float4_loads_kernel"),
    ("07", "steps/07_transposed_a.cu", r"transposed_a_kernel"),
    ("08", "steps/08_double_buffer.cu", r"double_buffer_kernel"),
    ("09", "steps/09_warp_tiling.cu", r"warp_tiling_kernel"),
    ("10", "sgemm.cu", r"sgemm_tiled<sgemm_ref::TileConfig<128, 128, .*>, \(sgemm_ref::Bounds\)0>"),
    ("10s", "sgemm.cu", r"sgemm_tiled<sgemm_ref::TileConfig<64, 64, .*>, \(sgemm_ref::Bounds\)0>"),
]


def kernels_of(path, arch="sm_90"):
    """{demangled kernel name: (registers, static shared bytes)} of one file."""
    cmd = ["nvcc", "-std=c++17", "-O3", f"-arch={arch}", "-c", "--resource-usage", "-o", os.devnull,
           "-I", os.path.join(ROOT, "common", "include"), "-I", os.path.join(ROOT, "labs", "06-sgemm"),
           "-I", SOL, "-I", os.path.join(SOL, "steps"), path]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    names = subprocess.run(["c++filt"], input=out, capture_output=True, text=True, check=True).stdout
    found, current = {}, None
    for line in names.splitlines():
        m = re.search(r"Compiling entry function '(.*)' for", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            smem = re.search(r"(\d+) bytes smem", line)  # sm_89 goes on with cmem after it
            found[current] = (int(m.group(1)), int(smem.group(1)) if smem else 0)
            current = None
    return found


def hip_kernels_of(path, arch):
    """{demangled kernel name: (VGPRs, LDS bytes, max threads per block, the compiler's waves per
    SIMD)} of one file, from hipcc's device assembly (its '; Kernel info' comments and metadata)."""
    cmd = ["hipcc", "-std=c++17", "-O3", f"--offload-arch={arch}", "--cuda-device-only", "-S", "-o", "-",
           "-I", os.path.join(ROOT, "common", "include"), "-I", os.path.join(ROOT, "labs", "06-sgemm"),
           "-I", SOL, "-I", os.path.join(SOL, "steps"), path]
    asm = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    info, flat, current, last_flat = {}, {}, None, None
    for line in asm.splitlines():
        m = re.match(r"\s*\.size\s+([^,\s]+),", line)
        if m:
            current = m.group(1)
            info[current] = {}
            continue
        m = re.match(r"; (TotalNumVgprs|LDSByteSize|Occupancy): (\d+)", line)
        if m and current:
            info[current][m.group(1)] = int(m.group(2))
            continue
        m = re.match(r"\s*\.max_flat_workgroup_size:\s*(\d+)", line)
        if m:
            last_flat = int(m.group(1))
            continue
        m = re.match(r"\s*\.name:\s*(\S+)", line)
        if m and last_flat is not None:
            flat[m.group(1)] = last_flat
            last_flat = None
    kernels = [k for k in info if k in flat and "Occupancy" in info[k]]
    names = subprocess.run(["c++filt"], input="\n".join(kernels), capture_output=True, text=True,
                           check=True).stdout.splitlines()
    return {name: (info[k]["TotalNumVgprs"], info[k].get("LDSByteSize", 0), flat[k], info[k]["Occupancy"])
            for name, k in zip(names, kernels)}


def file_row(path, arch="sm_90"):
    """(registers, shared bytes, kernel) of the one kernel of a hand-in file; exits if it has none
    or several (the model would not know which one the 4096^3 product runs)."""
    found = kernels_of(path, arch)
    if len(found) != 1:
        sys.exit(f"{path}: {len(found)} kernels (one expected)")
    (name, (regs, smem)), = found.items()
    return regs, smem, name[:name.rfind("(")]


def main():
    arch, hip = "sm_90", None
    if len(sys.argv) > 1 and sys.argv[1] in ("--arch", "--hip"):
        if len(sys.argv) < 3 or sys.argv[2].startswith("-") or "=" in sys.argv[2]:
            sys.exit(f"{sys.argv[1]} needs an architecture (e.g. --arch sm_89, --hip gfx940)")
        if sys.argv[1] == "--arch":
            arch = sys.argv[2]
        else:
            hip = sys.argv[2]
        del sys.argv[1:3]
    if len(sys.argv) > 1 and hip:
        sys.exit("--hip reads the ladder's steps only, not NAME=FILE hand-ins")
    if len(sys.argv) > 1:  # resources.py NAME=FILE ...: one row per hand-in
        print("step\tregisters\tshared_bytes\tkernel")
        for arg in sys.argv[1:]:
            name, path = arg.split("=", 1)
            regs, smem, kernel = file_row(path, arch)
            print(f"{name}\t{regs}\t{smem}\t{kernel}")
        return
    if hip:
        version = subprocess.run(["hipcc", "--version"], capture_output=True, text=True).stdout
        m = re.search(r"HIP version: (\S+)", version)
        print("# python3 docs/results/perfmodel/resources.py --hip %s (hipcc, HIP %s, -O3, compile only)" %
              (hip, m.group(1) if m else "?"))
        print("step\tregisters\tshared_bytes\tmax_threads\tcompiler_occupancy\tkernel")
    else:
        print("# python3 docs/results/perfmodel/resources.py%s (nvcc %s, %s, -O3, compile only)" % (
            "" if arch == "sm_90" else " --arch " + arch,
            subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.split("release ")[-1].split(",")[0],
            arch))
        print("step\tregisters\tshared_bytes\tkernel")
    cache = {}
    for step, src, pattern in STEPS:
        path = os.path.join(SOL, src)
        if path not in cache:
            cache[path] = hip_kernels_of(path, hip) if hip else kernels_of(path, arch)
        hits = [(k, v) for k, v in cache[path].items() if re.search(pattern, k)]
        if len(hits) != 1:
            sys.exit(f"step {step}: {len(hits)} kernels match {pattern!r} in {src}")
        (name, fields), = hits
        kernel = name[:name.rfind('(')]
        if hip:
            regs, smem, threads, occupancy = fields
            print(f"{step}\t{regs}\t{smem}\t{threads}\t{occupancy}\t{kernel}")
        else:
            regs, smem = fields
            print(f"{step}\t{regs}\t{smem}\t{kernel}")


if __name__ == "__main__":
    main()
