#!/usr/bin/env python3
"""Plot bench/device_bench's CSV (--csv FILE): speed-up over CUB and share of copy bandwidth per n.

Usage: scripts/plot_device_bench.py device_bench.csv docs/device_bench.png   (needs matplotlib)
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
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
