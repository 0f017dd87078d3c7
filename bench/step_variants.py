#!/usr/bin/python3
"""Variants of the multi-node communication term tried for issue 7
(docs/model.md, "How accurate it is"), scored like `cloudfit validate` on
the Pollux T4 step times: per model, fit the throughput model on the
training subset (single node; + the 2 × 1 probe; ≤ 2 nodes) and predict
every other row. A Python re-implementation of cf_perf_step_s and
cf_perf_fit (soft-L1 loss at 5 %, several starts) — its shipped-model line
agrees with the C numbers to about a point; the variants multiply the
inter-node ring term 2(K−1)/K·S/BW:
  eta   (1 + η) for rings over exactly two VMs (the T4 two-VM anomaly)
  alpha a per-hop latency 2(K−1)·α or 2(N−1)·α instead of the fixed 1 ms
  zeta  growth (N/2)^ζ with the node count
Prints median / p90 absolute percentage error per setting. Needs Debian's
python3-numpy and python3-scipy. Takes a few minutes.
Usage: bench/step_variants.py [THROUGHPUT.csv] (default
../shared/data/groundtruth/pollux_aws_t4/throughput.csv)"""
import csv
import math
import os
import sys

import numpy as np
from scipy.optimize import least_squares

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "..", "shared", "data", "groundtruth",
                                                          "pollux_aws_t4", "throughput.csv")
if not os.path.exists(DATA):
    sys.exit(f"step_variants: no '{DATA}' (the shared data is not here)")
# parameter counts as in advisor/model/model_sizes.c
SIZES = {'cifar10': 11173962, 'imagenet': 25557032, 'bert': 109483778, 'yolov3': 61949149, 'ncf': 1602657,
         'deepspeech2': 41187968}
BUCKET = 25 * 1024 * 1024
ROWS = []
for x in csv.DictReader(open(DATA)):
    if x['model'] not in SIZES:
        continue
    pl = x['placement']
    gpn = max(int(c) for c in pl) if pl else -(-int(x['num_gpus']) // int(x['num_nodes']))
    ROWS.append(dict(model=x['model'], N=int(x['num_nodes']), K=int(x['num_gpus']), g=gpn, m=float(x['local_bsz']),
                     t=float(x['step_time_s']), pl=pl))
SUBSETS = {'single node': lambda r: r['N'] == 1, '+ 2-node probe': lambda r: r['N'] == 1 or r['pl'] == '11',
           '<= 2 nodes': lambda r: r['N'] <= 2}


def q(a, p):
    a = sorted(a)
    return a[min(len(a) - 1, max(0, math.ceil(p * len(a)) - 1))]


def step(P, r, S, v):
    g, N, K = r['g'], r['N'], r['K']
    tc = (P['a'] + P['b'] * r['m']) * (1 + P['c'] * (g - 1))
    if K <= 1:
        return tc
    bits = S * 32
    ts = 2 * (g - 1) / g * bits / (P['intra'] * 1e9) if g > 1 else 0.0
    if N > 1:
        ts += v['ring'](N, g, K) * bits / (P['inter'] * 1e9) + v['latency'](N, K)
    f = min(1, BUCKET / (4 * S))
    hi, lo = max(tc, (1 - f) * ts), min(tc, (1 - f) * ts)
    gm = P['gamma']
    return (hi * (1 + (lo / hi) ** gm) ** (1 / gm) if hi > 0 else 0) + f * ts


def fit(tr, S, v, free, start):
    def unpack(x):
        P = dict(start)
        for i, k in enumerate(free):
            P[k] = 1 + 9 / (1 + math.exp(-x[i])) if k == 'gamma' else math.exp(x[i])
        P['inter'], P['intra'] = min(P['inter'], 1e5), min(P['intra'], 1e5)
        return P

    def res(x):
        P = unpack(x)
        return np.array([step(P, r, S, v) / r['t'] - 1 for r in tr])
    best = None
    for gs in (1.5, 3, 6):
        for isc in ((1, 0.2, 5) if 'inter' in free else (1,)):
            x0 = [math.log((gs - 1) / 9 / (1 - (gs - 1) / 9)) if k == 'gamma' else
                  math.log(start[k] * (isc if k == 'inter' else 1)) for k in free]
            s = least_squares(res, x0, loss='soft_l1', f_scale=0.05, max_nfev=400)
            if best is None or s.cost < best.cost:
                best = s
    return unpack(best.x)


def evaluate(sel, v):
    errs = []
    for model, S in SIZES.items():
        mr = [r for r in ROWS if r['model'] == model]
        tr = [r for r in mr if sel(r)]
        one = [r for r in tr if r['K'] == 1]
        a, b = np.linalg.lstsq(np.array([[1, r['m']] for r in one]), np.array([r['t'] for r in one]), rcond=None)[0]
        start = dict(a=max(a, 1e-6), b=max(b, 1e-9), c=0.02, intra=64, inter=6.0, gamma=2.0)
        free = ['a', 'b', 'c', 'intra'] + (['inter'] if any(r['N'] > 1 for r in tr) else []) + ['gamma']
        P = fit(tr, S, v, free, start)
        errs += [abs(step(P, r, S, v) / r['t'] - 1) for r in mr if not sel(r)]
    return 100 * np.median(errs), 100 * q(errs, .9)


def variant(eta=0.0, alpha=None, hops='K', zeta=0.0):
    ring = lambda N, g, K: 2 * (K - 1) / K * (1 + eta * (N == 2)) * (max(N, 2) / 2) ** zeta
    if alpha is None:
        latency = lambda N, K: 0.001
    else:
        latency = lambda N, K: alpha * (2 * (K - 1) if hops == 'K' else 2 * (N - 1))
    return dict(ring=ring, latency=latency)


VARIANTS = [('shipped: ring 2(K-1)/K, 1 ms', variant())]
VARIANTS += [('two-VM factor eta=%.1f' % e, variant(eta=e)) for e in (0.6, 1.0)]
VARIANTS += [('eta=0.6, latency 2(%s-1)*%.0fus' % (h, a * 1e6), variant(eta=0.6, alpha=a, hops=h))
             for a in (50e-6, 200e-6) for h in ('K', 'N')]
VARIANTS += [('growth (N/2)^%.2f' % z, variant(zeta=z)) for z in (0.15, 0.3)]
VARIANTS += [('eta=0.6, growth (N/2)^0.15', variant(eta=0.6, zeta=0.15))]
print('%-36s' % 'variant' + ''.join('%22s' % k for k in SUBSETS))
for name, v in VARIANTS:
    print('%-36s' % name + ''.join('%12.1f / %5.1f' % evaluate(sel, v) for sel in SUBSETS.values()), flush=True)
