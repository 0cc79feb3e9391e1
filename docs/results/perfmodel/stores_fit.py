#!/usr/bin/env python3
"""The L2's cost of global stores, fitted to docs/results/perfmodel/probes/stores.cu's timings.

    python3 docs/results/perfmodel/stores_fit.py docs/results/perfmodel-stores-h200.tsv

Each store request of W bytes per lane at a stride of S bytes (aligned) touches, as the emulator
counts per request, min(S, 32) 32-byte sectors and max(1, min(32, S / 4)) 128-byte lines. The
model: a launch's stores take  sectors * a + lines * b  seconds on the whole GPU. a and b are the
least-squares fit, in relative error, to the rows that write every byte with lanes further apart
than their width and at most 64 bytes apart (lab 02's strides; wider strides and the rows that
leave most of each sector unwritten also make the DRAM read what it writes, a cost of another
kind). Prints a and b, then every row with the model's error, as a Markdown table.
"""
import sys


def rows(path):
    for line in open(path):
        if not line[0].isdigit():
            continue
        w, s, mode, ms, written = line.split("\t")[:5]
        w, s, ms, written = int(w), int(s), float(ms), float(written)
        requests = written / w / 32
        sectors = 32 if s >= 32 else s
        lines = max(1, min(32, 32 * s // 128))
        yield dict(w=w, s=s, mode=mode, seconds=ms * 1e-3, requests=requests, sectors=sectors, lines=lines)


def fit(data):
    # minimise sum((u a + v b - y) / y)^2 with u = requests * sectors, v = requests * lines
    s11 = s12 = s22 = r1 = r2 = 0.0
    for d in data:
        u = d["requests"] * d["sectors"] / d["seconds"]
        v = d["requests"] * d["lines"] / d["seconds"]
        s11, s12, s22, r1, r2 = s11 + u * u, s12 + u * v, s22 + v * v, r1 + u, r2 + v
    det = s11 * s22 - s12 * s12
    return (r1 * s22 - r2 * s12) / det, (s11 * r2 - s12 * r1) / det


def main():
    data = list(rows(sys.argv[1]))
    fitted = [d for d in data if d["mode"] == "all" and d["w"] < d["s"] <= 64]
    a, b = fit(fitted)
    print(f"a = {a:.3e} s per store sector, b = {b:.3e} s per store line (fitted to {len(fitted)} rows)\n")
    print("| bytes per lane | stride | written | sectors / request | lines / request | measured ms | predicted ms | error | fitted |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in data:
        pred = d["requests"] * (d["sectors"] * a + d["lines"] * b)
        print(f"| {d['w']} | {d['s']} | {'every byte' if d['mode'] == 'all' else 'first W bytes'} | {d['sectors']} | "
              f"{d['lines']} | {d['seconds'] * 1e3:.3f} | {pred * 1e3:.3f} | {pred / d['seconds'] - 1:+.0%} | "
              f"{'yes' if d in fitted else ''} |")


if __name__ == "__main__":
    main()
