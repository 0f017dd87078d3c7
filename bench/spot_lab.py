#!/usr/bin/python3
"""Spot preemption model lab (issue 15): fits the availability process of
real AWS GPU spot traces, replays fixed plans against the traces and
compares the model's predicted p50/p90 wall time with the replay.
The specification for the C side is /work/notes/issue15_spot.md.

Model ("LN-AR", docs in the notes): the cluster alternates between UP (at
least one node held) and DOWN (none). UP and DOWN run lengths are
lognormal, median and mean matched to the trace, with a shared slowly
varying log-scale factor across consecutive cycles (AR(1), PHI, weight
RHO) that makes good and bad stretches cluster. Inside an UP run the node
count follows a small Markov chain on 1..N: drop events (rate kd) to a
uniform lower level, recoveries (rate kr) to N with probability qr else to
a uniform higher level, runs starting at N with probability qf; kd, kr,
qf, qr from the trace when it has several nodes, else pooled over the
multi-node traces. PHI, RHO and the deadline quantile are chosen on the
single-node traces only (--select); the 4- and 16-node traces are the
report.

Replay ("trace replay of a fixed plan"): a job needing W hours of
full-cluster work on N nodes starts at every OFFSET_STEP_H along the trace
(circular). Elastic: it runs on the nodes it holds at n/N of full speed;
a drop in the count loses the work since the last checkpoint and costs a
restart; new nodes join at the next checkpoint (the job starts as soon as
one node is up). Gang: it runs only while all N are held. Checkpoints
every Young/Daly interval, each costing C of wall time.

Usage: bench/spot_lab.py [TRACES_DIR] [--select] [--all]
  TRACES_DIR  default ../shared/data/spot_traces (then examples/spot-traces)
  --select    also print the (PHI, RHO) grid on the 1-node traces (+~60 s)
  --all       also print the model against every 1-node trace
Sections: 1 fitted parameters; 2 model vs replay (acceptance) with the
single-trace noise band and the deadline check; 3 variants and out of
sample; 4 growth with the node count; 5 mixed plan; 6 LR rules; 7 the
table to embed. Needs numpy. Deterministic (seeded)."""
import csv
import math
import os
import sys
import time

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGS = [a for a in sys.argv[1:] if not a.startswith('--')]
FLAGS = {a for a in sys.argv[1:] if a.startswith('--')}
DATA = ARGS[0] if ARGS else os.path.join(SRC, '..', 'shared', 'data', 'spot_traces')
if not os.path.exists(os.path.join(DATA, 'index.csv')):
    DATA = os.path.join(SRC, 'examples', 'spot-traces')
if not os.path.exists(os.path.join(DATA, 'index.csv')):
    sys.exit("spot_lab: no traces (give the directory holding index.csv)")

# ---- structural constants (chosen on the 1-node traces by --select) ----
PHI = 0.8          # lag-1 autocorrelation of the shared cycle factor
RHO = 0.2          # share of each log run length's variance that is shared
SIGMA_FLOOR = 0.1  # lognormal shape floor when mean <= median

# ---- the plan used for the tables ----
PARAMS = 1.558e9            # GPT-2 XL
CKPT_BYTES_PER_PARAM = 12   # fp32 weights + two Adam moments
STORAGE_MB_S = 125.0        # storage bandwidth setting (EBS gp3 baseline)
STARTUP_MIN = 10.0          # search.startup_minutes
C_H = PARAMS * CKPT_BYTES_PER_PARAM / (STORAGE_MB_S * 1e6) / 3600.0   # checkpoint write
R_H = STARTUP_MIN / 60.0 + C_H                                          # restart: startup + read back
JOBS = (6.0, 24.0, 72.0)    # hours of full-cluster work
OFFSET_STEP_H = 0.25
MC_HOURS = 300000.0         # length of the Monte Carlo path
MC_STARTS = 3000            # Monte Carlo samples (start times)
NOISE_TRACES = 12           # synthetic traces for the single-trace noise band
SEED = 15
CONF = 0.9                  # deadline confidence
DEADLINE_QUANTILES = (0.90, 0.93, 0.95)
DEADLINE_Q = 0.95           # model quantile a 'meets D at confidence 0.9' claim uses (chosen on 1-node traces)
OD_CKPT_H = 1.0             # checkpoint interval on on-demand (mixed plan)
SPOT_OVER_OD = 0.30         # p3.2xlarge spot / on-demand price, for the mixed plan


def load(dirn):
    out = []
    for r in csv.DictReader(open(os.path.join(dirn, 'index.csv'))):
        d = np.loadtxt(os.path.join(dirn, r['file']), delimiter=',', skiprows=1)
        r = dict(r)
        r['N'] = int(r['nodes_requested'])
        r['gap'] = float(r['gap_s']) / 3600.0
        r['n'] = d[:, 1].astype(int)
        r['name'] = '%s %s %s %dn' % (r['zone'], r['gpu'] + ('x' + r['gpus_per_vm'] if r['gpus_per_vm'] != '1' else ''),
                                      r['start_date'][:7], r['N'])
        out.append(r)
    return out


def segments(n, gap):
    ch = np.nonzero(n[1:] != n[:-1])[0] + 1
    b = np.concatenate([[0], ch, [len(n)]])
    return np.diff(b) * gap, n[b[:-1]].copy()


# ======================================================================
# Replay
# ======================================================================
IDLE, RESTART, RUN, CKPT = 0, 1, 2, 3


def replay(d, c, i0, off, N, W, C, R, tau, gang=False, rate=None, tmax=20000.0):
    """One job on the circular trace (d durations h, c counts) from `off` h into
    segment i0. rate[n]: full-cluster work per hour on n nodes (default n/N).
    Returns (wall h, node-hours held, preemptions, checkpoints, lost work h)."""
    nseg = len(d)
    t = 0.0; i = i0; left = d[i] - off
    phase = IDLE; nrun = 0; w = 0.0; ws = 0.0; since = 0.0; phl = 0.0; wck = 0.0
    npre = 0; nck = 0; lost = 0.0; nh = 0.0
    while True:
        nav = c[i]
        if gang and nav < N:
            nav = 0
        if nav < nrun:                                   # preemption
            npre += 1; lost += w - ws; w = ws; since = 0.0; nrun = nav
            if nav == 0:
                phase = IDLE
            else:
                phase = RESTART; phl = R
        elif nav > nrun:
            if phase == IDLE:
                phase = RESTART; phl = R; nrun = nav
            elif phase == RESTART:
                nrun = nav
        t_seg0 = t
        while left > 1e-12:
            if phase == IDLE:
                t += left; left = 0.0
            elif phase == RESTART:
                dt = min(left, phl); t += dt; left -= dt; phl -= dt
                if phl <= 1e-12:
                    phase = RUN
            elif phase == RUN:
                rr = nrun / N if rate is None else rate[nrun]
                if rr <= 0.0:                      # no progress on this many nodes (LR rule diverges)
                    t += left; left = 0.0
                    continue
                tf = (W - w) / rr
                if since == 0.0 and left > tau + C and tf > tau:   # whole checkpoint cycles at once
                    k = int(min(left // (tau + C), tf // tau))
                    if k >= 1 and k * tau < tf:
                        t += k * (tau + C); left -= k * (tau + C); w += k * tau * rr; ws = w; nck += k
                        if nav > nrun:
                            phase = RESTART; phl = R; nrun = nav
                        continue
                dt = min(left, tf, tau - since)
                t += dt; left -= dt; w += rr * dt; since += dt
                if dt == tf or w >= W - 1e-9:
                    nh += (t - t_seg0) * c[i]
                    return t, nh, npre, nck, lost
                if since >= tau - 1e-12:
                    phase = CKPT; phl = C; wck = w
            else:
                dt = min(left, phl); t += dt; left -= dt; phl -= dt
                if phl <= 1e-12:
                    ws = wck; since = 0.0; nck += 1
                    if nav > nrun:
                        phase = RESTART; phl = R; nrun = nav
                    else:
                        phase = RUN
        nh += (t - t_seg0) * c[i]
        if t > tmax:
            return math.inf, nh, npre, nck, lost
        i += 1
        if i == nseg:
            i = 0
        left = d[i]


def starts_grid(d, step):
    L = d.sum(); cum = np.concatenate([[0], np.cumsum(d)])
    s = np.arange(0, L, step)
    idx = np.searchsorted(cum, s, side='right') - 1
    return idx, s - cum[idx]


def starts_random(d, m, rng, frac=0.9):
    L = d.sum(); cum = np.concatenate([[0], np.cumsum(d)])
    s = rng.uniform(0, L * frac, m)
    idx = np.searchsorted(cum, s, side='right') - 1
    return idx, s - cum[idx]


def replay_many(d, c, starts, N, W, tau, gang=False, rate=None, full=False):
    out = [replay(d, c, i, o, N, W, C_H, R_H, tau, gang, rate) for i, o in zip(*starts)]
    a = np.array(out)
    return a if full else a[:, 0]


def young_daly(C, M):
    """Daly's interval (compute time between checkpoints) for checkpoint cost C and MTBF M."""
    if not M < math.inf:
        return math.inf
    if C >= 2 * M:
        return M
    x = C / (2 * M)
    return math.sqrt(2 * C * M) * (1 + math.sqrt(x) / 3 + x / 9) - C


# ======================================================================
# The model
# ======================================================================
def up_down_runs(n, gap):
    """Circular UP (n>=1) / DOWN (n==0) runs, paired as cycles (UP then DOWN).
    Returns up h, down h, UP runs as (start tick, ticks) of the rotated series, rotated series."""
    pos = n > 0
    ch = np.nonzero(pos[1:] != pos[:-1])[0] + 1
    if len(ch) == 0:
        return None
    s0 = ch[pos[ch]][0] if np.any(pos[ch]) else 0
    x = np.roll(n, -s0); p = x > 0
    ch = np.nonzero(p[1:] != p[:-1])[0] + 1
    b = np.concatenate([[0], ch, [len(x)]])
    L = np.diff(b); st = p[b[:-1]]
    up = L[st] * gap; dn = L[~st] * gap
    m = min(len(up), len(dn))
    runs = [(b[k], L[k]) for k in range(len(L)) if st[k]][:m]
    return up[:m], dn[:m], runs, x


def ln_fit(x):
    """median/mean-matched lognormal: mu = ln median, sigma = sqrt(2 ln(mean/median))"""
    med = float(np.median(x)); mean = float(np.mean(x))
    return math.log(med), math.sqrt(max(2 * math.log(mean / med), SIGMA_FLOOR ** 2)) if mean > med else SIGMA_FLOOR


def fit(n, N, gap, inner=None):
    """Fits the model to one trace of counts n (requested N). inner: None = the
    trace's own within-UP chain, or a dict of pooled default constants."""
    up, dn, runs, x = up_down_runs(n, gap)
    mu_u, s_u = ln_fit(up); mu_d, s_d = ln_fit(dn)
    p = dict(N=N, mu_u=mu_u, s_u=s_u, mu_d=mu_d, s_d=s_d, cycles=len(up),
             mean_up=float(up.mean()), mean_down=float(dn.mean()))
    if N > 1:
        if inner is None:
            Q = np.zeros((N + 1, N + 1)); tin = np.zeros(N + 1); first = np.zeros(N + 1)
            for (b, L) in runs:
                seg = x[b:b + L]
                first[seg[0]] += 1
                np.add.at(tin, seg, gap)
                a, cc = seg[:-1], seg[1:]
                mv = a != cc
                np.add.at(Q, (a[mv], cc[mv]), 1)
            G = np.where(tin[:, None] > 0, Q / np.maximum(tin[:, None], 1e-12), 0.0)
            p.update(G=G, first=first / first.sum(), inner='trace')
        else:
            p.update(default_inner(N, inner))
    return p


def default_inner(N, k):
    """Pooled within-UP chain for N nodes: at n>=2 a drop event at rate kd to a level
    uniform on 1..n-1; at n<N a recovery event at rate kr, to N with probability qr, else to a
    level uniform on n+1..N;
    an UP run starts at N with probability qf, else uniform on 1..N-1."""
    G = np.zeros((N + 1, N + 1))
    for n in range(1, N + 1):
        if n >= 2:
            G[n, 1:n] = k['kd'] / (n - 1)
        if n < N:
            G[n, n + 1:N + 1] = k['kr'] * (1 - k['qr']) / (N - n)
            G[n, N] += k['kr'] * k['qr']
    first = np.zeros(N + 1); first[N] = k['qf']
    if N > 1:
        first[1:N] += (1 - k['qf']) / (N - 1)
    return dict(G=G, first=first, inner='default')


def fit_scaled(r, n, inner):
    """Model for n nodes from trace r: the trace's own fit when n is its node count,
    else UP/DOWN from the trace (UP = at least one node) and the pooled within-UP default."""
    if n == r['N']:
        return fit(r['n'], n, r['gap'])
    p = fit((r['n'] > 0).astype(int), 1, r['gap'])
    p['N'] = n
    if n > 1:
        p.update(default_inner(n, inner))
    return p


def pooled_inner(traces):
    """kd, kr, qf, qr pooled over multi-node traces (sums of events over sums of exposure)."""
    ev_d = ev_r = t_d = t_r = 0.0; nf = nstart = 0; ev_rN = 0
    for r in traces:
        N = r['N']; gap = r['gap']
        up, dn, runs, x = up_down_runs(r['n'], gap)
        for (b, L) in runs:
            seg = x[b:b + L]
            nstart += 1; nf += seg[0] == N
            a, cc = seg[:-1], seg[1:]
            ev_d += np.sum(cc < a); ev_r += np.sum(cc > a); ev_rN += np.sum((cc > a) & (cc == N))
            t_d += np.sum(seg >= 2) * gap; t_r += np.sum(seg < N) * gap
    return dict(kd=ev_d / t_d, kr=ev_r / t_r, qf=nf / nstart, qr=ev_rN / ev_r)


def synth(p, L, rng):
    """A path of the model of length >= L hours: (durations, counts), merged."""
    N = p['N']
    au, bu = p['s_u'] * math.sqrt(RHO), p['s_u'] * math.sqrt(1 - RHO)
    ad, bd = p['s_d'] * math.sqrt(RHO), p['s_d'] * math.sqrt(1 - RHO)
    cyc = math.exp(p['mu_u'] + p['s_u'] ** 2 / 2) + math.exp(p['mu_d'] + p['s_d'] ** 2 / 2)
    m = int(L / cyc * 1.3) + 200
    eta = rng.standard_normal(m)
    s = np.empty(m); s[0] = eta[0]; k = math.sqrt(1 - PHI * PHI)
    for j in range(1, m):
        s[j] = PHI * s[j - 1] + k * eta[j]
    U = np.exp(p['mu_u'] + au * s + bu * rng.standard_normal(m))
    D = np.exp(p['mu_d'] - ad * s + bd * rng.standard_normal(m))
    if N == 1:
        d = np.empty(2 * m); c = np.empty(2 * m, int)
        d[0::2] = U; d[1::2] = D; c[0::2] = 1; c[1::2] = 0
        return d, c
    G = p['G']; q = G.sum(1)
    cum = np.cumsum(G / np.maximum(q[:, None], 1e-300), 1)
    fcum = np.cumsum(p['first'])
    ds = []; cs = []
    u01 = rng.random; ex = rng.exponential
    for j in range(m):
        left = U[j]
        lv = min(int(np.searchsorted(fcum, u01() * fcum[-1], side='right')), N)
        lv = max(lv, 1)
        while left > 0:
            h = ex(1 / q[lv]) if q[lv] > 0 else left
            if h >= left:
                ds.append(left); cs.append(lv); break
            ds.append(h); cs.append(lv); left -= h
            lv = max(1, min(int(np.searchsorted(cum[lv], u01() * cum[lv, -1], side='right')), N))
        ds.append(D[j]); cs.append(0)
    d = np.array(ds); c = np.array(cs)
    keep = np.concatenate([[True], c[1:] != c[:-1]])
    idx = np.cumsum(keep) - 1
    return np.bincount(idx, weights=d), c[keep]


def synth_exact(p, L, rng):
    """Path cut to exactly L hours (for synthetic traces of a real trace's length)."""
    d, c = synth(p, L, rng)
    cs = np.cumsum(d); j = int(np.searchsorted(cs, L))
    d = d[:j + 1].copy(); c = c[:j + 1]; d[-1] -= cs[j] - L
    if d[-1] <= 1e-9:
        d = d[:-1]; c = c[:-1]
    return d, c


def trace_stats(d, c, N):
    """availability (all N held), mean n/N, drops per node-day held, cluster MTBF while running."""
    T = d.sum()
    held = (d * c).sum()
    drops = np.clip(c[:-1] - c[1:], 0, None).sum()
    ev = np.sum(c[1:] < c[:-1]); up = d[c > 0].sum()
    ev_full = np.sum((c[:-1] == N) & (c[1:] < N)); full = d[c == N].sum()
    return dict(avail=full / T, mean_frac=held / T / N, rate=drops / held * 24 if held else 0.0,
                mtbf=up / ev if ev else math.inf, mtbf_gang=full / ev_full if ev_full else math.inf,
                ev_day=ev / T * 24)


def model_stats(p, rng, L=100000.0):
    d, c = synth(p, L, rng)
    return trace_stats(d, c, p['N'])


# ======================================================================
# Today's model (advisor band), for contrast
# ======================================================================
def band_model(N, W, pct_month=15.0):
    lam = pct_month / 100 / 730 * N
    c = C_H; tau = math.sqrt(2 * c / lam)
    ov = c / tau + lam * (tau / 2 + R_H)
    return R_H + W / (1 - ov)


# ======================================================================
# Mixed plan: spot with on-demand fallback (uniform progress + safety net)
# ======================================================================
def replay_mixed(d, c, i0, off, N, W, tau, D, hyst, uniform=True):
    """Elastic spot run with on-demand fallback (Can't Be Late's uniform
    progress plus a safety net). Line(t) = W*(t - R)/(D - R) (no work is
    expected during the first start). On spot it switches to
    on-demand (N nodes, never preempted; restart R, unsaved work lost) when
    (a) it is idle or restarting with saved work below the line, (b) a
    checkpoint completes below the line, or (c) the safety net is reached:
    D - t <= (W - saved)(1 + C/tau_od) + R + C (tau_od = max(tau, OD_CKPT_H), the
    checkpoint interval on on-demand). On on-demand it returns to spot at
    a checkpoint completion when all N spot nodes are held, saved work is
    >= line + hyst and the safety net is not within 2 R. uniform=False is
    the greedy policy: spot until the safety net, then on-demand to the end.
    Returns (wall h, spot node-hours, on-demand node-hours)."""
    nseg = len(d); t = 0.0; i = i0; left = d[i] - off
    C, R = C_H, R_H
    mode = 0                                 # 0 spot, 1 on-demand
    phase = IDLE; nrun = 0; w = ws = since = phl = wck = 0.0
    sp = od = 0.0
    tau_od = max(tau, OD_CKPT_H)            # on-demand is not preempted: checkpoint rarely
    t_safe = lambda: D - ((W - ws) * (1 + C / tau_od) + R + C)
    big = 1e18
    line = (lambda: W * (t - R) / (D - R)) if uniform else (lambda: -big)
    t_line = (lambda: R + ws * (D - R) / W) if uniform else (lambda: big)

    def go_od():
        nonlocal mode, phase, phl, nrun, w, since
        mode = 1; w = ws; since = 0.0; phase = RESTART; phl = R; nrun = N

    def back_to_spot(nav):
        return uniform and nav >= N and ws >= line() + hyst and t_safe() - t > 2 * R

    while True:
        nav = c[i]
        if mode == 0:
            if nav < nrun:
                w = ws; since = 0.0; nrun = nav
                phase, phl = (IDLE, 0.0) if nav == 0 else (RESTART, R)
            elif nav > nrun:
                if phase == IDLE:
                    phase = RESTART; phl = R; nrun = nav
                elif phase == RESTART:
                    nrun = nav
            if (phase in (IDLE, RESTART) and ws < line()) or t >= t_safe():
                go_od()
        while left > 1e-12:
            hold = N if mode else c[i]
            if mode == 0 and phase == IDLE:
                dt = min(left, max(0.0, min(t_line(), t_safe()) - t))
                t += dt; left -= dt; sp += dt * hold
                if left > 1e-12:
                    go_od()
                continue
            if phase == RESTART:
                dt = min(left, phl)
                if mode == 0:
                    dt = min(dt, max(0.0, t_safe() - t))
                t += dt; left -= dt; phl -= dt
                if mode: od += dt * N
                else: sp += dt * hold
                if mode == 0 and t >= t_safe() and phl > 1e-12:
                    go_od(); continue
                if phl <= 1e-12:
                    phase = RUN
            elif phase == RUN:
                rr = nrun / N
                tf = (W - w) / rr
                tcur = tau_od if mode else tau
                dt = min(left, tf, tcur - since)
                if mode == 0:
                    dt = min(dt, max(0.0, t_safe() - t))
                t += dt; left -= dt; w += rr * dt; since += dt
                if mode: od += dt * N
                else: sp += dt * hold
                if dt == tf or w >= W - 1e-9:
                    return t, sp, od
                if mode == 0 and t >= t_safe():
                    go_od(); continue
                if since >= tcur - 1e-12:
                    phase = CKPT; phl = C; wck = w
            else:   # CKPT
                dt = min(left, phl); t += dt; left -= dt; phl -= dt
                if mode: od += dt * N
                else: sp += dt * hold
                if phl <= 1e-12:
                    ws = wck; since = 0.0; phase = RUN
                    if mode == 0:
                        if ws < line() or t >= t_safe():
                            go_od()
                        elif nav > nrun:
                            phase = RESTART; phl = R; nrun = nav
                    elif back_to_spot(nav):
                        mode = 0; phase = RESTART; phl = R; nrun = nav
        if t > 20000:
            return math.inf, sp, od
        i += 1
        if i == nseg:
            i = 0
        left = d[i]


# ======================================================================
# LR rules: statistical progress while nodes are missing
# ======================================================================
def lr_progress_rate(rule, N, B, M0, MN, optimizer='sgd'):
    """Full-cluster-work-equivalent progress per hour on n nodes (index n) when
    the global batch shrinks to M_n = MN*n/N (no accumulation) under `rule`
    ('fixed','linear','sqrt','gain'), or 'accumulate' (batch held at MN).
    Progress per sample at batch M with LR deviation x = lr/lr_opt:
    (B+M0)/(B+M) * max(0, x(2-x)); lr_opt(M) = lr0*r(M), r = (B+M0)M/((B+M)M0)."""
    r = lambda M: (B + M0) * M / ((B + M) * M0)
    opt = (lambda M: r(M)) if optimizer == 'sgd' else (lambda M: math.sqrt(r(M)))
    eff = lambda M, x: (B + M0) / (B + M) * max(0.0, x * (2 - x))
    full = eff(MN, 1.0) * 1.0                      # plan at full size runs at the optimum
    out = np.zeros(N + 1)
    for n in range(1, N + 1):
        if rule == 'accumulate':
            out[n] = n / N; continue
        M = MN * n / N; s = M / MN
        lr_rel = {'fixed': 1.0, 'linear': s, 'sqrt': math.sqrt(s), 'gain': opt(M) / opt(MN)}[rule]
        x = lr_rel * opt(MN) / opt(M)
        out[n] = (n / N) * eff(M, x) / full      # samples/h ∝ n (perf model: linear here)
    return out


# ======================================================================
def pct(a, q):
    a = np.asarray(a)
    return float(np.percentile(a[np.isfinite(a)], q)) if np.isfinite(a).any() else math.inf


def main():
    t_start = time.time()
    rng = np.random.default_rng(SEED)
    T = load(DATA)
    multi = [r for r in T if r['N'] > 1]
    single = [r for r in T if r['N'] == 1]
    print('spot_lab: %d traces from %s' % (len(T), os.path.relpath(DATA)))
    print('plan: checkpoint C = %.2f min (%.2g params x %d B at %.0f MB/s), restart R = %.2f min; '
          'PHI = %.2f, RHO = %.2f; MC %d samples on a %.0f h path, seed %d'
          % (C_H * 60, PARAMS, CKPT_BYTES_PER_PARAM, STORAGE_MB_S, R_H * 60, PHI, RHO, MC_STARTS, MC_HOURS, SEED))

    # ---------------- 1. per-trace parameters ----------------
    print('\n1. Fitted parameters (UP = >=1 node held; medians/means in hours; rate = node drops per node-day held)')
    print('%-28s %3s %6s %5s %6s %6s %5s %6s %6s %5s %6s %6s %6s' % (
        'trace', 'N', 'cycles', 'upMed', 'upMean', 'sig_u', 'dnMed', 'dnMean', 'sig_d', 'avail', 'n/N', 'rate/d', 'MTBF'))
    fits = {}
    for r in T:
        p = fit(r['n'], r['N'], r['gap'])
        d, c = segments(r['n'], r['gap'])
        st = trace_stats(d, c, r['N'])
        fits[r['file']] = (p, st)
        print('%-28s %3d %6d %5.2f %6.2f %6.2f %5.2f %6.2f %6.2f %5.2f %6.2f %6.1f %6.2f' % (
            r['name'], r['N'], p['cycles'], math.exp(p['mu_u']), p['mean_up'], p['s_u'], math.exp(p['mu_d']),
            p['mean_down'], p['s_d'], st['avail'], st['mean_frac'], st['rate'], st['mtbf']))

    inner_all = pooled_inner(multi)
    print('pooled within-UP default (all multi-node traces): kd = %.3f /h, kr = %.3f /h, qf = %.2f, qr = %.2f'
          % (inner_all['kd'], inner_all['kr'], inner_all['qf'], inner_all['qr']))
    for r in multi:
        k = pooled_inner([r])
        print('   %-27s kd = %.3f /h, kr = %.3f /h, qf = %.2f, qr = %.2f' % (r['name'], k['kd'], k['kr'], k['qf'], k['qr']))

    # ---------------- 2. acceptance: model vs replay on 4- and 16-node traces ----------------
    print('\n2. Fixed plan (W h of full-cluster work on the trace\'s N nodes; tau by Young/Daly from the model\'s MTBF):')
    print('   predicted by the model fitted on the trace (compact form: UP/DOWN lognormals + kd, kr, qf, qr; Monte Carlo)')
    print('   vs the replay (a start every %.2f h).' % OFFSET_STEP_H)
    print('   node-h = node-hours held (billed) p50; band = 10-90 %% range of the replay p50 / p90 over %d synthetic'
          % NOISE_TRACES)
    print('   traces of the same length drawn from the model; P(bars) = share of those synthetic traces whose replay')
    print('   p50 is within 15 % AND p90 within 25 % of the model: the chance the acceptance holds if the model is exactly right.')
    print('   W flag: the replay p90 exceeds half the trace, so the replays reuse most of the trace (not scored).')
    hdr = '%-27s %-5s %4s | %5s %6s %6s %6s | %5s %6s %6s %6s | %5s %5s | %-11s %-11s %5s | %s'
    print(hdr % ('trace', 'mode', 'W h', 'rp10', 'rp50', 'rp90', 'node-h', 'mp10', 'mp50', 'mp90', 'node-h',
                 'e50', 'e90', 'band p50', 'band p90', 'P(bars)', 'met@q90 met@q95'))
    score = []; rows = {}
    for r in multi:
        N = r['N']
        p = fit(r['n'], N, r['gap'], inner=pooled_inner([r]))     # the compact form the C table stores
        d, c = segments(r['n'], r['gap']); Ltr = d.sum()
        sd, sc = synth(p, MC_HOURS, rng)
        ms = trace_stats(sd, sc, N)
        mst = starts_random(sd, MC_STARTS, rng)
        noise = [synth_exact(p, Ltr, rng) for _ in range(NOISE_TRACES)]
        for gang in (False, True):
            tau = young_daly(C_H, ms['mtbf_gang'] if gang else ms['mtbf'])
            for W in JOBS:
                repf = replay_many(d, c, starts_grid(d, OFFSET_STEP_H), N, W, tau, gang, full=True)
                modf = replay_many(sd, sc, mst, N, W, tau, gang, full=True)
                rep, mod = repf[:, 0], modf[:, 0]
                rp = (pct(rep, 10), pct(rep, 50), pct(rep, 90)); mp = (pct(mod, 10), pct(mod, 50), pct(mod, 90))
                e = (mp[1] / rp[1] - 1, mp[2] / rp[2] - 1)
                wrap = rp[2] > 0.5 * Ltr
                band = ('', ''); pbars = ''
                if not gang:
                    nb = []
                    for (xd, xc) in noise:
                        x = replay_many(xd, xc, starts_grid(xd, 1.0), N, W, tau, gang)
                        nb.append((pct(x, 50), pct(x, 90)))
                    nb = np.array(nb)
                    band = tuple('%4.0f-%-5.0f' % (np.percentile(nb[:, k], 10), np.percentile(nb[:, k], 90)) for k in (0, 1))
                    pbars = '%.2f' % np.mean((abs(nb[:, 0] / mp[1] - 1) <= .15) & (abs(nb[:, 1] / mp[2] - 1) <= .25))
                q95 = pct(mod, 100 * DEADLINE_Q)
                meet = (float(np.mean(rep <= mp[2])), float(np.mean(rep <= q95)))
                rows[(r['file'], gang, W)] = dict(rep=rep, mod=mod, tau=tau, rp=rp, mp=mp, q95=q95)
                if not wrap:
                    score.append((gang, e[0], e[1], meet[0], meet[1]))
                print(hdr % (r['name'], 'gang' if gang else 'elast', '%3.0f%s' % (W, 'W' if wrap else ' '),
                             '%5.1f' % rp[0], '%6.1f' % rp[1], '%6.1f' % rp[2], '%6.0f' % pct(repf[:, 1], 50),
                             '%5.1f' % mp[0], '%6.1f' % mp[1], '%6.1f' % mp[2], '%6.0f' % pct(modf[:, 1], 50),
                             '%+4.0f%%' % (100 * e[0]), '%+4.0f%%' % (100 * e[1]), band[0], band[1], pbars,
                             '%.2f    %.2f' % meet), flush=True)
    for g in (False, True):
        e = np.array([x[1:] for x in score if x[0] == g])
        print('   %s, %d scored rows: |e50| median %.0f%%, within 15%% in %d; |e90| median %.0f%%, within 25%% in %d; '
              'replays meeting the model p90: median %.2f min %.2f; meeting its q%.0f: median %.2f min %.2f'
              % ('gang' if g else 'elastic', len(e), 100 * np.median(abs(e[:, 0])), np.sum(abs(e[:, 0]) <= .15),
                 100 * np.median(abs(e[:, 1])), np.sum(abs(e[:, 1]) <= .25), np.median(e[:, 2]), np.min(e[:, 2]),
                 100 * DEADLINE_Q, np.median(e[:, 3]), np.min(e[:, 3])))
    print('   today\'s model (advisor band 15 %%/month, N x rate): %s' % ', '.join(
        '%dn %.0f h -> %.1f h' % (N, W, band_model(N, W)) for N in (4, 16) for W in JOBS))

    # ---------------- 3. out of sample ----------------
    print('\n3. Variants and out of sample (elastic; error of the model p50 / p90 vs the replay of table 2)')
    print('   a) within-UP chain = the trace\'s full empirical generator on 1..N (instead of the compact kd, kr, qf, qr)')
    print('   b) within-UP default pooled on the OTHER multi-node traces (UP/DOWN from this trace)')
    print('   c) fitted on the first half of the trace, replayed on the second half (the half-trace replay is shown)')
    print('%-27s %4s | %-13s | %-13s | %-30s' % ('trace', 'W h', 'a) e50  e90', 'b) e50  e90', 'c) rep p50 p90 -> e50  e90'))
    for r in multi:
        N = r['N']
        variants = []
        for inner in (None, pooled_inner([x for x in multi if x is not r])):
            pv = fit(r['n'], N, r['gap'], inner=inner)
            sdv, scv = synth(pv, MC_HOURS / 2, rng)
            variants.append((sdv, scv, young_daly(C_H, trace_stats(sdv, scv, N)['mtbf'])))
        half = len(r['n']) // 2
        pb = fit(r['n'][:half], N, r['gap'])
        sdb, scb = synth(pb, MC_HOURS / 2, rng)
        taub = young_daly(C_H, trace_stats(sdb, scb, N)['mtbf'])
        d2, c2 = segments(r['n'][half:], r['gap'])
        for W in JOBS:
            base = rows[(r['file'], False, W)]
            cells = []
            for (sdv, scv, tv) in variants:
                m = replay_many(sdv, scv, starts_random(sdv, MC_STARTS, rng), N, W, tv)
                cells.append('%+4.0f%% %+4.0f%%' % (100 * (pct(m, 50) / base['rp'][1] - 1), 100 * (pct(m, 90) / base['rp'][2] - 1)))
            rb = replay_many(d2, c2, starts_grid(d2, OFFSET_STEP_H), N, W, taub)
            mb = replay_many(sdb, scb, starts_random(sdb, MC_STARTS, rng), N, W, taub)
            rbp = (pct(rb, 50), pct(rb, 90))
            print('%-27s %3.0f%s | %-13s | %-13s | %6.1f %6.1f%s -> %+5.0f%% %+5.0f%%' % (
                r['name'], W, 'W' if base['rp'][2] > 0.5 * segments(r['n'], r['gap'])[0].sum() else ' ',
                cells[0], cells[1], rbp[0], rbp[1], 'W' if rbp[1] > 0.5 * d2.sum() else ' ',
                100 * (pct(mb, 50) / rbp[0] - 1), 100 * (pct(mb, 90) / rbp[1] - 1)), flush=True)
    print('   availability (all N held) by quarter of each trace: ' + '; '.join(
        '%s %s' % (r['name'].split()[0] + ' ' + r['name'].split()[-1],
                   ' '.join('%.2f' % np.mean(q == r['N']) for q in np.array_split(r['n'], 4))) for r in multi))

    # ---------------- 4. node-count scaling ----------------
    print('\n4. Growth with the node count (model: UP/DOWN from the trace, pooled within-UP default)')
    print('%-24s | %s' % ('trace (N of its own)', '  '.join('N=%-2d avail / rate/d / events/d' % n for n in (1, 4, 16))))
    for r in multi + [x for x in single if x['gpus_per_vm'] == '1' and x['gpu'] == 'V100'][:3]:
        cells = []
        for n in (1, 4, 16):
            s = model_stats(fit_scaled(r, n, inner_all), rng, 40000.0)
            cells.append('%4.2f / %4.1f / %4.1f' % (s['avail'], s['rate'], s['ev_day']))
        print('%-24s | %s' % (r['name'], '    '.join(cells)), flush=True)
    print('   (trace values: see table 1; events/d = cluster preemption events per day)')

    # ---------------- 5. deadline at confidence 0.9 and the mixed plan ----------------
    print('\n5. Mixed plan: elastic spot with on-demand fallback (uniform progress + safety net) and greedy (safety net only),')
    print('   replayed from a start every 1 h; D = the model\'s q%.0f of spot-only time, and a tight D = 1.25 W + R.' % (100 * DEADLINE_Q))
    print('   cost = spot node-h x %.2f + on-demand node-h, relative to on-demand for the whole job ((W + R) x N).' % SPOT_OVER_OD)
    print('%-27s %4s | %7s | %-17s | %-17s | %-17s | %-17s' % ('trace', 'W h', 'D h', 'spot: met / cost', 'uniform: met/cost',
                                                          'greedy: met/cost', '@1.25W unif/greedy'))
    for r in multi:
        N = r['N']; d, c = segments(r['n'], r['gap']); Ltr = d.sum()
        st = starts_grid(d, 1.0)
        for W in JOBS:
            base = rows[(r['file'], False, W)]
            if base['rp'][2] > 0.5 * Ltr:
                continue
            od_cost = (W + R_H) * N
            cells = []
            sp = replay_many(d, c, st, N, W, base['tau'], full=True)
            for DD in (base['q95'], 1.25 * W + R_H):
                cells.append('%4.2f / %4.2f' % (np.mean(sp[:, 0] <= DD), np.mean(sp[:, 1]) * SPOT_OVER_OD / od_cost))
                for uni in (True, False):
                    mx = np.array([replay_mixed(d, c, i, o, N, W, base['tau'], DD, hyst=2 * (R_H + C_H), uniform=uni)
                                   for i, o in zip(*st)])
                    cells.append('%4.2f / %4.2f' % (np.mean(mx[:, 0] <= DD + 1e-6),
                                                    np.mean(mx[:, 1] * SPOT_OVER_OD + mx[:, 2]) / od_cost))
            print('%-27s %4.0f | %7.1f | %-17s | %-17s | %-17s | %s, %s (spot %s)' % (
                r['name'], W, base['q95'], cells[0], cells[1], cells[2], cells[4], cells[5], cells[3]), flush=True)

    # ---------------- 6. LR rules while nodes are missing ----------------
    r = [x for x in multi if x['N'] == 16][0]
    d, c = segments(r['n'], r['gap'])
    N = 16; B, M0, MN = 2000.0, 256.0, 4096.0
    print('\n6. LR rules on %s (elastic, W = 24 h of full-cluster work; B = %.0f, M0 = %.0f, full batch %.0f, SGD):' % (r['name'], B, M0, MN))
    tau = rows[(r['file'], False, 24.0)]['tau']; stg = starts_grid(d, 1.0)
    for rule in ('accumulate', 'gain', 'sqrt', 'linear', 'fixed'):
        rate = lr_progress_rate(rule, N, B, M0, MN)
        x = replay_many(d, c, stg, N, 24.0, tau, rate=rate)
        print('   %-10s progress on 8 of 16 nodes %.3f, on 2 of 16 %.3f (full = 1) -> replay p50 %.1f h, p90 %.1f h'
              % (rule, rate[8], rate[2], pct(x, 50), pct(x, 90)))

    # ---------------- 7. the table to embed ----------------
    print('\n7. Parameter table to embed (C: include/cloudfit/spot_model.h). UP/DOWN lognormals from the pooled runs of the')
    print('   listed traces (mu = ln median, sigma = sqrt(2 ln(mean/median))); kd, kr, qf from the multi-node traces of the')
    print('   row when it has any, else the pool of all multi-node traces. avail1 / rate1 = one node: availability and')
    print('   preemptions per node-day held; avail16 = model availability of all 16 nodes (Monte Carlo).')
    print('cloud,gpu,gpus_per_vm,region,up_median_h,up_sigma,down_median_h,down_sigma,kd_per_h,kr_per_h,qf,qr,avail1,rate1_per_node_day,avail16,cycles,source')
    groups = {}
    for r in T:
        region = r['zone'][:-1]
        groups.setdefault((r['cloud'], r['gpu'], r['gpus_per_vm'], region), []).append(r)
        groups.setdefault((r['cloud'], r['gpu'], r['gpus_per_vm'], '*'), []).append(r)
    default1 = [r for r in T if r['gpus_per_vm'] == '1']
    groups[('*', '*', '1', '*')] = default1
    groups[('*', '*', '8', '*')] = [r for r in T if r['gpus_per_vm'] == '8']
    for key in sorted(groups, key=lambda k: (k[0] == '*', k[1] == '*', k[3] == '*', k)):
        rs = groups[key]
        ups = []; dns = []
        for r in rs:
            up, dn, _, _ = up_down_runs(r['n'], r['gap']); ups.append(up); dns.append(dn)
        up = np.concatenate(ups); dn = np.concatenate(dns)
        mu_u, s_u = ln_fit(up); mu_d, s_d = ln_fit(dn)
        mrs = [r for r in rs if r['N'] > 1]
        inner = pooled_inner(mrs) if mrs else inner_all
        p1 = dict(N=1, mu_u=mu_u, s_u=s_u, mu_d=mu_d, s_d=s_d)
        p16 = dict(p1, N=16, **default_inner(16, inner))
        s16 = model_stats(p16, rng, 30000.0)
        src = '; '.join(sorted('%s %s %dn' % (r['zone'], r['start_date'], r['N']) for r in rs))
        if key[3] == '*':
            src = '%d traces (%s)' % (len(rs), 'all %s-GPU-VM traces' % key[2] if key[0] == '*' else 'all regions')
        print('%s,%s,%s,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,%.2f,%.1f,%.2f,%d,%s%s' % (
            key[0], key[1], key[2], key[3], math.exp(mu_u), s_u, math.exp(mu_d), s_d, inner['kd'], inner['kr'], inner['qf'], inner['qr'],
            up.mean() / (up.mean() + dn.mean()), 24 / up.mean(), s16['avail'], len(up), src,
            '' if mrs else ' [kd,kr,qf,qr pooled]'))

    if '--all' in FLAGS or '--select' in FLAGS:
        select(single, rng)
    print('\nspot_lab: %.0f s' % (time.time() - t_start))


def select(single, rng):
    global PHI, RHO
    grid = [(0.0, 0.0), (0.5, 0.2), (0.5, 0.4), (0.8, 0.1), (0.8, 0.2), (0.8, 0.3), (0.9, 0.1), (0.9, 0.2)]
    if '--select' not in FLAGS:
        grid = [(PHI, RHO)]
    print('\n8. Single-node traces (where PHI, RHO are chosen): elastic, median |error| over the non-wrapping rows')
    reps = {}
    for r in single:
        d, c = segments(r['n'], r['gap'])
        for W in JOBS:
            x = replay_many(d, c, starts_grid(d, 0.5), 1, W, young_daly(C_H, trace_stats(d, c, 1)['mtbf']))
            reps[(r['file'], W)] = (pct(x, 50), pct(x, 90), pct(x, 90) > 0.5 * d.sum(), x)
    keep = (PHI, RHO)
    for (PHI, RHO) in grid:
        e = []; meet = {q: [] for q in DEADLINE_QUANTILES}
        for r in single:
            p = fit(r['n'], 1, r['gap'])
            sd, sc = synth(p, 120000.0, rng); ms = trace_stats(sd, sc, 1)
            stt = starts_random(sd, 1500, rng)
            for W in JOBS:
                rp50, rp90, wrap, _ = reps[(r['file'], W)]
                if wrap:
                    continue
                x = replay_many(sd, sc, stt, 1, W, young_daly(C_H, ms['mtbf']))
                e.append((pct(x, 50) / rp50 - 1, pct(x, 90) / rp90 - 1))
                for q in DEADLINE_QUANTILES:
                    meet[q].append(np.mean(reps[(r['file'], W)][3] <= pct(x, 100 * q)))
        e = np.array(e)
        print('   PHI %.1f RHO %.1f: rows %d, p50 median err %+.0f%% |err| %.0f%%, p90 median err %+.0f%% |err| %.0f%%, '
              'p50 within 15%%: %d, p90 within 25%%: %d' % (PHI, RHO, len(e), 100 * np.median(e[:, 0]), 100 * np.median(abs(e[:, 0])),
                                                         100 * np.median(e[:, 1]), 100 * np.median(abs(e[:, 1])),
                                                         np.sum(abs(e[:, 0]) <= .15), np.sum(abs(e[:, 1]) <= .25)), flush=True)
        print('      deadline at the model quantile q: fraction of replays meeting it, median [min] over rows, rows >= 0.85: ' +
              '; '.join('q=%.2f %.2f [%.2f] %d/%d' % (q, np.median(meet[q]), np.min(meet[q]), np.sum(np.array(meet[q]) >= .85), len(meet[q]))
                        for q in DEADLINE_QUANTILES), flush=True)
    PHI, RHO = keep


if __name__ == '__main__':
    main()
