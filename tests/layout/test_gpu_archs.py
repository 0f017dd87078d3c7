#!/usr/bin/python3
"""Every GPU of the catalog (data/gpus.csv, data/gpus_added.csv) has a row
in data/gpu_compute_capability.csv, which decides the CUDA architectures the
engine is built for (cmake/cuda_architectures.cmake): a GPU added to the
catalog without one would silently get no machine code. NVIDIA rows need a
compute capability MAJOR.MINOR; others an empty one.
Usage: test_gpu_archs.py SOURCE_DIR"""
import csv
import os
import re
import sys

src = sys.argv[1]


def rows(name):
    with open(os.path.join(src, "data", name), newline="") as f:
        return list(csv.DictReader(f))


catalog = {r["gpu_model"]: r["vendor"] for r in rows("gpus.csv") + rows("gpus_added.csv")}
cc = {r["gpu_model"]: r["compute_capability"] for r in rows("gpu_compute_capability.csv")}
missing = sorted(set(catalog) - set(cc))
unknown = sorted(set(cc) - set(catalog))
bad = sorted(m for m, v in catalog.items() if m in cc and
             (not re.fullmatch(r"\d+\.\d", cc[m]) if v == "NVIDIA" else cc[m] != ""))
for what, names in (("GPUs of the catalog without a compute capability row", missing),
                    ("rows for GPUs that are not in the catalog", unknown),
                    ("rows whose compute capability is not MAJOR.MINOR (NVIDIA) or empty (others)", bad)):
    if names:
        print(f"data/gpu_compute_capability.csv: {what}: {', '.join(names)}")
archs = sorted({int(v.replace(".", "")) for v in cc.values() if v})
print(f"{len(catalog)} GPUs, compute capabilities {archs}")
print(f"{0 if missing or unknown or bad else 1} passed, {1 if missing or unknown or bad else 0} failed")
sys.exit(1 if missing or unknown or bad else 0)
