#!/usr/bin/python3
"""Variants of the GPU carry-over rule tried for issue 7 (docs/model.md,
"Other GPU types"), scored like `cloudfit validate --crossgpu`: every
single-GPU (model, precision, benchmark) throughput of a GPU in
data/gpus.csv predicted from every other one (SUSPECT rows out), least
squares in log space, in-sample / leave-one-model-out / leave-one-GPU-out
(fit without any pair touching the GPU, predict the pairs *to* it).
Prints median / p90 absolute percentage error, then two in-sample floors
(per-model exponents; the shipped rule on same-PyTorch-build pairs).
Needs python3-numpy and python3-scipy (Debian). Rows marked ORACLE use each row's measured batch,
which `recommend` does not have; they are upper bounds, not candidates.
Usage: bench/crossgpu_variants.py [THROUGHPUT.csv] (default
../shared/data/crossgpu/throughput.csv)"""
import csv
import math
import os
import re
import statistics as st
import sys

import numpy as np
from scipy.optimize import least_squares

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "..", "shared", "data", "crossgpu", "throughput.csv")
if not os.path.exists(DATA):
    sys.exit(f"crossgpu_variants: no '{DATA}' (the shared data is not here)")
G = {}
for r in csv.DictReader(open('' + os.path.join(SRC, 'data', 'gpus.csv') + '')):
    f = lambda k: float(r[k]) if r[k] else 0.0
    G[r['gpu_model']] = dict(mem=f('memory_gib'), bw=f('memory_bandwidth_gbs'), fp32=f('fp32_tflops'),
        tf32=f('tf32_tensor_tflops_dense') or f('fp32_tflops'), fp16=f('fp16_tensor_tflops_dense') or f('fp32_tflops'))
def peak(g, p):
    return G[g]['fp16' if p in ('fp16','amp') else p]
rows = {}
build = {}  # (model, precision, benchmark, gpu) -> PyTorch builds of its rows
for r in csv.DictReader(open(DATA)):
    if r['gpu_count'] != '1' or 'SUSPECT' in r['notes'] or r['gpu'] not in G: continue
    b = re.search(r'benchmark (v\d+)', r['notes']).group(1)
    key = (r['model'], r['precision'], b)
    rows.setdefault(key, {}).setdefault(r['gpu'], []).append((float(r['throughput']), float(r['batch_size_per_gpu'] or 'nan')))
    torch_build = re.search(r'PyTorch ([^;]+)', r['notes'])
    build.setdefault(key + (r['gpu'],), set()).add(torch_build.group(1) if torch_build else '?')
models = sorted({k[0] for k in rows})
pairs = []
for key, d in rows.items():
    med = {g: (st.median([x[0] for x in v]), st.median([x[1] for x in v])) for g, v in d.items()}
    for f in med:
        for t in med:
            if f == t: continue
            p = key[1]
            pairs.append(dict(model=key[0], prec=p, bench=key[2], f=f, t=t, meas=med[t][0]/med[f][0],
                lpk=math.log(peak(f,p)/peak(t,p)), lbw=math.log(G[f]['bw']/G[t]['bw']),
                lmem=math.log(G[f]['mem']/G[t]['mem']), lbatch=math.log(med[f][1]/med[t][1]),
                mi=models.index(key[0]), mixed=p in ('fp16','amp'), bf=med[f][1], bt=med[t][1]))
print(f"{len(pairs)} predictions over {len(models)} models")

N = len(pairs)
A = {k: np.array([p[k] for p in pairs], dtype=float) for k in ('lpk','lbw','lmem','lbatch','meas','mi','mixed','bf','bt')}
mf = np.array([G[p['f']]['mem'] for p in pairs]); mt = np.array([G[p['t']]['mem'] for p in pairs])
gi = {g:i for i,g in enumerate(sorted(G))}
fi = np.array([gi[p['f']] for p in pairs]); ti = np.array([gi[p['t']] for p in pairs])
y = -np.log(A['meas'])   # log time ratio to/from
mixed = A['mixed'].astype(bool)
def stats(pred_logt, idx=slice(None)):
    e = np.abs(np.exp(-pred_logt[idx]) / A['meas'][idx] - 1) * 100
    return np.median(e), np.percentile(e, 90)
# each model: (nparams, x0, f(theta, sel) -> predicted log time ratio for selection mask)
def fit(model, mask, loss):
    n, x0, f = model
    if n == 0: return x0
    res = least_squares(lambda th: f(th)[mask] - y[mask], x0, loss=loss, f_scale=0.1)
    return res.x
def evaluate(name, model, loss='linear'):
    n, x0, f = model
    th_all = fit(model, np.ones(N, bool), loss)
    insample = stats(f(th_all))
    pred = np.zeros(N)
    for m in range(len(models)):
        te = A['mi'] == m
        th = fit(model, ~te, loss); pred[te] = f(th)[te]
    lomo = stats(pred)
    pred2 = np.zeros(N); cnt = np.zeros(N)
    # leave one GPU out: train without any pair touching g, predict pairs touching g (average if touched twice: use from/to)
    errs = []
    for g in range(len(gi)):
        te = (fi == g) | (ti == g)
        if not te.any(): continue
        th = fit(model, ~te, loss)
        pr = ti == g
        errs.append(np.abs(np.exp(-f(th)[pr]) / A['meas'][pr] - 1) * 100)
    e = np.concatenate(errs)
    logo = (np.median(e), np.percentile(e, 90))
    print(f"{name:58s} {insample[0]:5.1f}/{insample[1]:5.1f}  LOMO {lomo[0]:5.1f}/{lomo[1]:5.1f}  LOGO {logo[0]:5.1f}/{logo[1]:5.1f}  θ={np.round(th_all,3)}")
    return th_all

lpk, lbw, lmem, lb = A['lpk'], A['lbw'], A['lmem'], A['lbatch']
sig = lambda x: 1 / (1 + np.exp(-x))
lpk_f = np.log(np.array([peak(p['f'], p['prec']) for p in pairs]) / 100.0)
lpk_t = np.log(np.array([peak(p['t'], p['prec']) for p in pairs]) / 100.0)
lbw_f = np.log(np.array([G[p['f']]['bw'] for p in pairs]) / 1000.0)
lbw_t = np.log(np.array([G[p['t']]['bw'] for p in pairs]) / 1000.0)


def ovh(t, R, ratio):
    """R · (1 + φ·m_from/m_to) / (1 + φ) in logs, φ = e^t."""
    phi = np.exp(t)
    return R + np.log1p(phi * ratio) - np.log1p(phi)


def absT(a, b, lp, lbw_, extra=0):
    return np.exp(-a * lp - b * lbw_) + extra


def add(w, Rp, Rb):
    return np.log(w * np.exp(Rp) + (1 - w) * np.exp(Rb))


def Tadd(w, lp, lbw_, s):
    return w * np.exp(-lp) + (1 - w) * np.exp(-lbw_) + s


# Parameter counts (millions) and optimizer-state bytes per parameter, only
# for the "memory-ceiling batch ratio" variant (not shipped). Approximate,
# from the model papers / NVIDIA DeepLearningExamples model cards.
PARAMS = dict(resnet50=(25.6, 4), ssd300=(22.9, 4), maskrcnn=(44.4, 4), bert_base_squad=(110, 8),
              bert_large_squad=(340, 8), gnmt=(160, 8), transformerxl_base=(151, 8), transformerxl_large=(257, 8),
              tacotron2=(28.2, 8), waveglow=(87.9, 8), ncf=(31.8, 8))


def static_gib(p):
    n, opt = PARAMS[p['model']]
    g = 2 if p['prec'] in ('fp16', 'amp') else 4
    return n * 1e6 * (4 + g + opt + (g if g < 4 else 0)) / 2**30 + 1.5


ceil_ratio = (np.array([0.92 * G[p['f']]['mem'] - static_gib(p) for p in pairs]) /
              np.array([0.92 * G[p['t']]['mem'] - static_gib(p) for p in pairs]))

V = {}
V['peak ratio (no parameters)'] = (0, np.array([]), lambda t: lpk)
V['bandwidth ratio (no parameters)'] = (0, np.array([]), lambda t: lbw)
V['power a·peak + b·bw (previous rule)'] = (2, np.array([.3, .6]), lambda t: t[0] * lpk + t[1] * lbw)
V['power + c·log(memory ratio)'] = (3, np.array([.3, .6, 0]), lambda t: t[0] * lpk + t[1] * lbw + t[2] * lmem)
V['power, mixed/full precision exponents'] = (4, np.array([.3, .6, .3, .6]),
                                              lambda t: np.where(mixed, t[0] * lpk + t[1] * lbw, t[2] * lpk + t[3] * lbw))
V['power + mem, mixed/full precision'] = (6, np.array([.3, .6, 0, .3, .6, 0]),
                                          lambda t: np.where(mixed, t[0] * lpk + t[1] * lbw + t[2] * lmem,
                                                             t[3] * lpk + t[4] * lbw + t[5] * lmem))
V['power · fixed share φ, memory ratio  [SHIPPED]'] = (3, np.array([.3, .6, -1]),
                                                        lambda t: ovh(t[2], t[0] * lpk + t[1] * lbw, mf / mt))
V['power · fixed share φ, usable-memory ratio'] = (3, np.array([.3, .6, -1]),
                                                   lambda t: ovh(t[2], t[0] * lpk + t[1] * lbw,
                                                                 (0.92 * mf - 1.5) / (0.92 * mt - 1.5)))
V['power · fixed share φ, memory-ceiling batch ratio'] = (3, np.array([.3, .6, -1]),
                                                          lambda t: ovh(t[2], t[0] * lpk + t[1] * lbw, ceil_ratio))
V['power · fixed share φ, memory ratio^k'] = (4, np.array([.3, .6, -1, 1]),
                                              lambda t: ovh(t[2], t[0] * lpk + t[1] * lbw, (mf / mt)**t[3]))
V['power mixed/full · fixed share φ, memory ratio'] = (5, np.array([.3, .6, .3, .6, -1]),
                                                       lambda t: ovh(t[4], np.where(mixed, t[0] * lpk + t[1] * lbw,
                                                                                    t[2] * lpk + t[3] * lbw), mf / mt))
V['saturation T = S^-1 + σ'] = (3, np.array([.3, .6, -1]),
                                lambda t: np.log(absT(t[0], t[1], lpk_t, lbw_t, np.exp(t[2])) /
                                                 absT(t[0], t[1], lpk_f, lbw_f, np.exp(t[2]))))
V['saturation T = S^-1·(1 + φ/mem) + σ'] = (4, np.array([.3, .6, -1, 0]),
                                            lambda t: np.log(absT(t[0], t[1], lpk_t, lbw_t) * (1 + np.exp(t[3]) / mt)
                                                             + np.exp(t[2])) -
                                            np.log(absT(t[0], t[1], lpk_f, lbw_f) * (1 + np.exp(t[3]) / mf)
                                                   + np.exp(t[2])))
V['T = S^-1·(1 + φ/mem)'] = (3, np.array([.3, .6, 0]),
                             lambda t: np.log(absT(t[0], t[1], lpk_t, lbw_t) * (1 + np.exp(t[2]) / mt)) -
                             np.log(absT(t[0], t[1], lpk_f, lbw_f) * (1 + np.exp(t[2]) / mf)))
V['T = S^-1 + φ/mem (GPU-independent overhead)'] = (3, np.array([.3, .6, 0]),
                                                    lambda t: np.log(absT(t[0], t[1], lpk_t, lbw_t) + np.exp(t[2]) / mt) -
                                                    np.log(absT(t[0], t[1], lpk_f, lbw_f) + np.exp(t[2]) / mf))
V['additive roofline w/peak + (1-w)/bw'] = (1, np.array([0.]), lambda t: add(sig(t[0]), lpk, lbw))
V['additive roofline, mixed/full w'] = (2, np.array([0., 0.]),
                                        lambda t: np.where(mixed, add(sig(t[0]), lpk, lbw), add(sig(t[1]), lpk, lbw)))
V['additive roofline + σ'] = (2, np.array([0., -1]),
                              lambda t: np.log(Tadd(sig(t[0]), lpk_t, lbw_t, np.exp(t[1])) /
                                               Tadd(sig(t[0]), lpk_f, lbw_f, np.exp(t[1]))))
V['additive roofline·(1 + φ/mem) + σ'] = (3, np.array([0., -1, 0]),
                                          lambda t: np.log((Tadd(sig(t[0]), lpk_t, lbw_t, 0) * (1 + np.exp(t[2]) / mt)
                                                            + np.exp(t[1])) /
                                                           (Tadd(sig(t[0]), lpk_f, lbw_f, 0) * (1 + np.exp(t[2]) / mf)
                                                            + np.exp(t[1]))))
V['ORACLE power + c·log(measured batch ratio)'] = (3, np.array([.3, .6, 0]),
                                                   lambda t: t[0] * lpk + t[1] * lbw + t[2] * lb)
V['ORACLE power · fixed share φ, measured batch ratio'] = (3, np.array([.3, .6, -1]),
                                                          lambda t: ovh(t[2], t[0] * lpk + t[1] * lbw, A['bf'] / A['bt']))
print("median / p90 APE, %: in-sample, leave one model out, leave one GPU type out; θ fitted on all rows")
for k, v in V.items():
    evaluate(k, v, 'linear')

# Floors: what no rule over these GPU features can beat on this data.
# (1) every model gets its own exponents and φ (per-model constants, which
# issue 7 rules out), fitted in-sample: the fit error of the rule's family
# when it may bend to each model; (2) the shipped rule on the pairs whose two
# rows ran the same PyTorch build, i.e. without software-version differences.
M = len(models)
mi = A['mi'].astype(int)


def per_model(t):
    a, b, ph = t[0:M][mi], t[M:2 * M][mi], t[2 * M:3 * M][mi]
    return a * lpk + b * lbw + np.log1p(np.exp(ph) * mf / mt) - np.log1p(np.exp(ph))


th_pm = least_squares(lambda t: per_model(t) - y, np.r_[np.full(M, .3), np.full(M, .5), np.full(M, -1.)]).x
bset = lambda p, g: build[(p['model'], p['prec'], p['bench'], g)]
same = np.array([bset(p, p['f']) == bset(p, p['t']) and len(bset(p, p['f'])) == 1 for p in pairs])
n_s, x_s, f_s = V['power · fixed share φ, memory ratio  [SHIPPED]']
pred_s = f_s(fit((n_s, x_s, f_s), np.ones(N, bool), 'linear'))
print("floors (in-sample, not predictions):")
print("%-58s %5.1f/%5.1f" % ("FLOOR per-model a, b, φ (%d parameters)" % (3 * M), *stats(per_model(th_pm))))
print("%-58s %5.1f/%5.1f  (%d pairs; other pairs %.1f/%.1f)" % (
    "shipped rule, pairs with one PyTorch build on both sides", *stats(pred_s, same), same.sum(),
    *stats(pred_s, ~same)))
