#!/usr/bin/env python3
"""Turns measured tables under docs/results/ into the SVG figures the lessons show.

    python3 tools/figures.py            (or ./gpulab figures, or cmake --build B --target figures)

Each figure is one function below, registered in FIGURES with the table it reads and the SVG it
writes (under docs/figures/). The tables are tab-separated with a header row; lines starting
with '#' are comments (where the numbers came from). Output is deterministic for a given table
(fixed size, no dates in the SVG), so a regenerated figure only shows up in `git diff` when its
data changed.
"""
import csv
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_tsv(path):
    with open(path, newline="") as f:
        rows = [line for line in f if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(rows, delimiter="\t"))


def lab02_bytes_used(rows, plt):
    """Grouped bars: bytes used per byte moved, one group per kernel, one bar per layout."""
    kernels = []
    layouts = []
    for r in rows:
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
        if r["layout"] not in layouts:
            layouts.append(r["layout"])
    value = {(r["layout"], r["kernel"]): float(r["bytes_used_per_byte_moved"]) for r in rows}
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(layouts)
    for j, layout in enumerate(layouts):
        xs, ys = [], []
        for i, k in enumerate(kernels):
            if (layout, k) in value:
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(value[(layout, k)])
        bars = ax.bar(xs, ys, width, label=layout)
        for x, y in zip(xs, ys):
            ax.text(x, y + 0.02, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(kernels)))
    ax.set_xticklabels(kernels, fontsize=8)
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("bytes used per byte moved")
    ax.axhline(1.0, color="grey", linewidth=0.5)
    ax.set_title("Lab 02 on the emulator: 32-byte sectors per warp-wide request, n = 32768", fontsize=9)
    ax.legend(fontsize=7, ncol=len(layouts), loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    fig.tight_layout()
    return fig


def lab04_shared_work(rows, plt):
    """Horizontal bars (log scale): shared-memory wavefronts per 1024 elements, one per version."""
    names = [r["version"] for r in rows]
    values = [max(float(r["shared_wavefronts_per_1024"]), 0.001) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 2.8))
    ys = range(len(names))
    ax.barh(ys, values, color="tab:blue")
    for y, r, v in zip(ys, rows, values):
        ax.text(v * 1.2, y, f"{v:.3g}  ({r['atomic_requests']} atomics,"
                f" {r['launches']} launch{'es' if r['launches'] != '1' else ''})", va="center", fontsize=7)
    ax.set_yticks(list(ys))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(0.001, 200000)
    ax.set_xlabel("shared-memory wavefronts per 1024 elements (log scale)")
    ax.set_title("Lab 04 on the emulator: the work of combining, n = 4194307, warp 32", fontsize=9)
    fig.tight_layout()
    return fig


def lab04_warp64_error(rows, plt):
    """Relative error of 32-lane reductions against n, at warp 32 and 64."""
    fig, ax = plt.subplots(figsize=(8, 3.4))
    styles = {("shuffles_from_16", "32"): ("tab:blue", "o", ":"), ("shuffles_from_16", "64"): ("tab:blue", "o", "-"),
              ("volatile_tail", "32"): ("tab:red", "s", ":"), ("volatile_tail", "64"): ("tab:red", "s", "-")}
    labels = {"shuffles_from_16": "shuffle offsets from 16", "volatile_tail": "volatile warp tail"}
    for (col, warp), (color, marker, line) in styles.items():
        xs = [int(r["n"]) for r in rows if r["warp_size"] == warp]
        ys = [abs(float(r[col + "_error_pct"])) for r in rows if r["warp_size"] == warp]
        ax.plot(xs, ys, line, color=color, marker=marker, markersize=3, label=f"{labels[col]}, warp {warp}")
    ax.axhline(3, color="grey", linewidth=0.6, linestyle="--")
    ax.text(1.2, 3.5, "the \"off by ~3%\" claim", fontsize=7, color="grey")
    ax.set_xscale("log")
    ax.set_xlabel("n (integer values 1..4; the exact sum is known)")
    ax.set_ylabel("|error| in % of the sum")
    ax.set_ylim(-3, 100)
    ax.set_title("32-lane code on the emulator: shuffles at warp 64, the volatile tail at both", fontsize=9)
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    return fig


FIGURES = [
    # (table under docs/results, SVG under docs/figures, function)
    ("lab02-emu.tsv", "lab02-bytes-used.svg", lab02_bytes_used),
    ("lab04-emu.tsv", "lab04-shared-work.svg", lab04_shared_work),
    ("lab04-warp64.tsv", "lab04-warp64-error.svg", lab04_warp64_error),
]


def main():
    try:
        import matplotlib
    except ImportError:
        sys.exit("figures: python3-matplotlib is missing (sudo apt-get install python3-matplotlib;"
                 " tools/packages.txt, group docs)")
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "gpulab"  # stable ids in the SVG
    matplotlib.rcParams["svg.fonttype"] = "none"    # text stays text
    import matplotlib.pyplot as plt

    out_dir = os.path.join(ROOT, "docs", "figures")
    os.makedirs(out_dir, exist_ok=True)
    for table, svg, draw in FIGURES:
        rows = read_tsv(os.path.join(ROOT, "docs", "results", table))
        fig = draw(rows, plt)
        path = os.path.join(out_dir, svg)
        fig.savefig(path, format="svg", metadata={"Date": None, "Creator": "gpulab tools/figures.py"})
        plt.close(fig)
        print(f"figures: docs/results/{table} -> docs/figures/{svg}")


if __name__ == "__main__":
    main()
