#!/usr/bin/env python3
"""Plot bench/device_bench's CSV (--csv FILE): speed-up over CUB and share of the bandwidth.

Usage: scripts/plot_device_bench.py device_bench.csv docs/device_bench.png   (needs matplotlib)
       scripts/plot_device_bench.py device_bench_histogram_even.csv docs/histogram_even.png
The first (reduce and the scans) per n, the second (histogram_even) per bin count.
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def histogram(rows, dst):
    series = []  # (samples, data) in the order of the table
    for r in rows:
        if (r["samples"], r["data"]) not in series:
            series.append((r["samples"], r["data"]))
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for i, (samples, data) in enumerate(series):
        pts = sorted((int(r["bins"]), r) for r in rows if r["samples"] == samples and r["data"] == data)
        x = [math.log2(b) for b, _ in pts]
        label, color = f"{samples} {data}", f"C{i}"
        vs = [(xi, r) for xi, (_, r) in zip(x, pts) if r["cub_us"] != "-"]  # CUB ran
        axes[0].plot([a for a, _ in vs], [float(r["speedup"]) for _, r in vs], marker="o", color=color, label=label)
        axes[1].plot(x, [float(r["ours_pct_read"]) for _, r in pts], marker="o", color=color, label=f"{label} ours")
        axes[1].plot([a for a, _ in vs], [float(r["cub_pct_read"]) for _, r in vs], linestyle="--", color=color,
                     label=f"{label} CUB")
    axes[0].axhline(1.0, color="gray", linewidth=0.8)
    axes[0].set_yscale("log")
    axes[0].set_title("histogram_even: CUB time / tilewise time (CUB does not run at 2^24 bins)")
    axes[1].set_title("histogram_even: % of the read bandwidth")
    for ax in axes:
        ax.set_xlabel("log2(bins)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(f"tilewise histogram_even vs CUB HistogramEven, 2^28 samples "
                 f"(read {rows[0]['read_gbs']} GB/s measured in the same run)")
    fig.tight_layout()
    fig.savefig(dst, dpi=90)


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
    if rows and "bins" in rows[0]:
        histogram(rows, dst)
        return
    algos = sorted({r["algorithm"] for r in rows}, key=["reduce", "inclusive_scan", "exclusive_scan"].index)
    types = ["int32", "int64", "float", "double"]
    fig, axes = plt.subplots(2, len(algos), figsize=(5 * len(algos), 8), squeeze=False)
    for col, algo in enumerate(algos):
        for t in types:
            pts = sorted((int(r["n"]), r) for r in rows if r["algorithm"] == algo and r["type"] == t)
            if not pts:
                continue
            x = [math.log2(n) for n, _ in pts]
            axes[0][col].plot(x, [float(r["speedup"]) for _, r in pts], marker="o", label=t)
            axes[1][col].plot(x, [float(r["ours_pct_copy"]) for _, r in pts], marker="o", label=f"{t} ours")
            axes[1][col].plot(x, [float(r["cub_pct_copy"]) for _, r in pts], linestyle="--", label=f"{t} CUB")
        axes[0][col].axhline(1.0, color="gray", linewidth=0.8)
        axes[0][col].set_title(f"{algo}: CUB time / tilewise time")
        axes[1][col].set_title(f"{algo}: % of device-to-device copy bandwidth")
        for row in (0, 1):
            axes[row][col].set_xlabel("log2(n)")
            axes[row][col].grid(True, alpha=0.3)
            axes[row][col].legend(fontsize=7)
    copy = rows[0].get("copy_gbs", "?")
    fig.suptitle(f"tilewise device-wide algorithms vs CUB (H200, copy {copy} GB/s measured in the same run)")
    fig.tight_layout()
    fig.savefig(dst, dpi=90)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
