#!/usr/bin/python3
"""The carry-over interval (docs/model.md, "Intervals", issue 25): how wide
the 80 % interval of a GPU type carried over from another must be, chosen
on Lambda's published single-GPU training throughput
(../shared/data/crossgpu/throughput.csv) leaving one GPU type out.

Every single-GPU (model, benchmark) throughput of a GPU in data/gpus.csv
predicts every other GPU's of the same model and benchmark, at the same
precision (1,640 pairs) and across precisions (2,280: V100 FP32 -> A100
TF32), with cloudfit's carry rule (advisor/model/carry.c). The log error
e = ln(predicted / measured) is modelled as normal with

    sigma^2 = s0^2 + s_half^2 [a half-precision run on either side]
            + (k_gen * generation gap)^2 + s_x^2 [the two runs' precisions differ]
            + (k_peak * |ln(peak_to / peak_from)|)^2

(generation gap: architecture steps, Turing and Ada half a step; peak:
dense FLOP/s at each run's precision). The five constants maximise the
normal likelihood of the leave-one-GPU-out errors (the rule refitted
without any pair touching the predicted GPU). Printed: the constants, and
the share of pairs inside the 80 % interval in-sample (shipped rule,
constants on every pair) and leaving one GPU type out (rule and constants
refitted without the GPU), overall and by feature.
Needs Debian's python3-numpy. Usage: bench/carry_sigma_lab.py [THROUGHPUT.csv]
"""
import csv
import math
import os
import re
import statistics as st
import sys

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "..", "shared", "data", "crossgpu", "throughput.csv")
if not os.path.exists(DATA):
    sys.exit(f"carry_sigma_lab: no '{DATA}' (the shared data is not here)")
G = {}
for fn in ("gpus.csv", "gpus_added.csv"):
    for r in csv.DictReader(open(os.path.join(SRC, "data", fn))):
        f = lambda k: float(r[k]) if r.get(k) else 0.0
        G[r["gpu_model"]] = dict(mem=f("memory_gib"), bw=f("memory_bandwidth_gbs"), fp32=f("fp32_tflops"),
                                 tf32=f("tf32_tensor_tflops_dense") or f("fp32_tflops"),
                                 fp16=f("fp16_tensor_tflops_dense") or f("fp32_tflops"),
                                 bf16=f("bf16_tensor_tflops_dense") or f("fp32_tflops"), arch=r["architecture"])
# as advisor/model/carry.c cf_gpu_generation
GEN = [("Kepler", 1), ("Maxwell", 2), ("Pascal", 3), ("Volta", 4), ("Turing", 4.5), ("Ampere", 5),
       ("Ada", 5.5), ("Hopper", 6), ("Blackwell", 7), ("CDNA 3", 6)]
def gen(g):
    return next(v for k, v in GEN if G[g]["arch"].startswith(k))
def peak(g, p):
    return G[g]["fp16" if p in ("fp16", "amp") else p]
HALF = ("fp16", "amp", "bf16")
A, B, PHI = 0.283, 0.499, 0.148   # the shipped rule (advisor/carry.h)

rows = {}
for r in csv.DictReader(open(DATA)):
    if r["gpu_count"] != "1" or "SUSPECT" in r["notes"] or r["gpu"] not in G:
        continue
    b = re.search(r"benchmark (v\d+)", r["notes"]).group(1)
    rows.setdefault((r["model"], b), {}).setdefault(r["precision"], {}).setdefault(r["gpu"], []).append(
        float(r["throughput"]))
P = []
for (model, bench), by_prec in rows.items():
    for pf, df in by_prec.items():
        for pt, dt in by_prec.items():
            for f in df:
                for t in dt:
                    if f != t:
                        P.append((f, t, pf, pt, st.median(dt[t]) / st.median(df[f])))
N = len(P)
x = np.array([math.log(peak(f, pf) / peak(t, pt)) for f, t, pf, pt, _ in P])
y = np.array([math.log(G[f]["bw"] / G[t]["bw"]) for f, t, *_ in P])
mem = np.array([G[t]["mem"] / G[f]["mem"] for f, t, *_ in P])
meas = np.array([m for *_, m in P])
cross = np.array([pf != pt for _, _, pf, pt, _ in P])
half = np.array([pf in HALF or pt in HALF for _, _, pf, pt, _ in P]).astype(float)
gap = np.array([abs(gen(t) - gen(f)) for f, t, *_ in P])
dpeak = np.abs(x)
names = sorted(G)
fi = np.array([names.index(f) for f, *_ in P])
ti = np.array([names.index(t) for _, t, *_ in P])

def errors(a, b, phi):
    r = np.exp(a * x + b * y)
    return np.log((1 + phi) / (r * (1 + phi / mem)) / meas)

def fit_rule(mask):   # as advisor/validate/validate_crossgpu.c fit_rule: same-precision pairs, a b by least squares per phi
    best = None
    for lphi in np.arange(-8, 1.0001, 0.01):
        phi = math.exp(lphi)
        z = np.log(1 / meas) - np.log1p(phi / mem) + np.log1p(phi)
        X = np.stack([x, y], 1)[mask]
        th = np.linalg.lstsq(X, z[mask], rcond=None)[0]
        sse = float(np.sum((X @ th - z[mask]) ** 2))
        if best is None or sse < best[0]:
            best = (sse, th[0], th[1], phi)
    return best[1:]

FEATURES = np.stack([np.ones(N), half, gap ** 2, cross.astype(float), dpeak ** 2], 1)

def sigma(th):
    return np.sqrt(FEATURES @ (np.asarray(th) ** 2))

def nll(th, e, mask):
    s = sigma(th)[mask]
    return float(np.sum(np.log(s) + 0.5 * (e[mask] / s) ** 2))

def fit_sigma(e, mask):   # coordinate descent on a 0.005 grid, as advisor/validate/validate_crossgpu.c fit_sigma
    th = [0.2, 0.0, 0.0, 0.0, 0.0]
    grid = np.arange(0, 0.8001, 0.005)
    for _ in range(8):
        for k in range(5):
            vals = grid[grid >= 0.02] if k == 0 else grid
            th[k] = float(min(vals, key=lambda v: nll(th[:k] + [v] + th[k + 1:], e, mask)))
    return th

same = ~cross
e_in = errors(A, B, PHI)
e_logo = np.zeros(N)
for g in range(len(names)):
    to_g = ti == g
    if to_g.any():
        e_logo[to_g] = errors(*fit_rule(same & (fi != g) & (ti != g)))[to_g]
th = fit_sigma(e_logo, np.ones(N, bool))
z = 1.2815515655446004
cov_in = np.abs(e_in) <= z * sigma(th)
cov_logo = np.zeros(N, bool)
for g in range(len(names)):
    to_g = ti == g
    if to_g.any():
        # nested, as validate_crossgpu.c leave_gpu_out: the other pairs' errors under rules fitted without g
        # as well as without their own `to` type, so that nothing of g reaches the interval that predicts it
        out_g = (fi != g) & (ti != g)
        e_g = np.zeros(N)
        for h in range(len(names)):
            to_h = out_g & (ti == h)
            if h != g and to_h.any():
                e_g[to_h] = errors(*fit_rule(same & out_g & (fi != h) & (ti != h)))[to_h]
        th_g = fit_sigma(e_g, out_g)
        cov_logo[to_g] = (np.abs(e_logo) <= z * sigma(th_g))[to_g]
print(f"{N} pairs ({same.sum()} same precision, {cross.sum()} across precisions), {len(set(fi))} GPU types")
print("constants (chosen on the leave-one-GPU-out errors, maximum likelihood):")
for k, v in zip(("s0", "s_half", "k_gen", "s_x", "k_peak"), th):
    print(f"  {k:7s} {v:.3f}")
print(f"{'pairs':34s} {'n':>5s}  {'in-sample':>9s}  {'leave one GPU out':>17s}")
def line(label, m):
    print(f"{label:34s} {m.sum():5d}  {100 * cov_in[m].mean():8.1f}%  {100 * cov_logo[m].mean():16.1f}%")
line("all", np.ones(N, bool))
line("same precision", same)
line("across precisions", cross)
line("same generation", gap == 0)
line("1 generation apart or more", gap >= 1)
line("1.5 generations apart or more", gap >= 1.5)
line("half precision on a side", half > 0)
line("fp32/tf32 on both sides", half == 0)
line("peak ratio > e^2 (7.4x)", dpeak > 2)
w = np.abs(e_in)
print(f"for scale: a constant sigma 0.20 (the previous rule) covers {100 * np.mean(w <= z * 0.2):.1f}% in-sample "
      f"({100 * np.mean(w[same] <= z * 0.2):.1f}% same precision, {100 * np.mean(w[cross] <= z * 0.2):.1f}% across)")
# GPU types that entered the table after the shipped constants were chosen (on the 14 types before them):
# the pairs that touch one are out of sample for the shipped rule and constants (advisor/carry.h).
SHIPPED = (0.170, 0.190, 0.105, 0.305, 0.090)
LATER = [g for g in ("RTX6000-Ada", "A100-40GB-PCIE", "H200-NVL") if g in names and names.index(g) in set(fi)]
late = np.isin(fi, [names.index(g) for g in LATER]) | np.isin(ti, [names.index(g) for g in LATER])
if late.any():
    cov_shipped = np.abs(e_in) <= z * sigma(SHIPPED)
    print(f"pairs touching {', '.join(LATER)} (added after the shipped constants were chosen): n {late.sum()}, "
          f"shipped rule and constants cover {100 * cov_shipped[late].mean():.1f}% "
          f"(same precision {100 * cov_shipped[late & same].mean():.1f}%, across {100 * cov_shipped[late & cross].mean():.1f}%), "
          f"median |error| {100 * np.median(np.abs(np.expm1(e_in[late & same]))):.1f}% same precision; "
          f"the other pairs {100 * cov_shipped[~late].mean():.1f}%")
