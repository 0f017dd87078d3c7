#!/usr/bin/python3
"""Dynamic batching on workers of different speeds, driven by
`cloudfit rebalance` (docs/spot.md "Dynamic batching").

Two worker processes train one model data-parallel on the CPU (PyTorch,
one thread each). The second is SLOW times slower per sample (it repeats
its forward and backward pass, like a slower GPU would take longer). Every
step the coordinator gives each worker its share of the global batch,
averages their gradients weighted by those shares (what an all-reduce of
per-sample-summed gradients does), takes the SGD step, and writes the
workers' compute times as one JSON line to `cloudfit rebalance`, which
answers with the batches for the next step. The global batch stays fixed;
the batches move until both workers take the same time.

Prints one JSON line per controller window and a summary; exits 0 when
the workers are balanced — over the last five windows together, the
slowest worker's mean time / the fastest's − 1 is within --tolerance — and
the fast worker carries the larger share, else 1. Pooled, not window by
window: timing on a shared machine is noisy (with unchanged batches one
window's time can be 20 % off the next, and max/min − 1 of two noisy
means is never below their noise), so a per-window spread says more about
the noise than about the balance.

Usage: torch_rebalance.py [--cloudfit PATH] [--steps 160] [--global-batch 512]
                          [--slow 3] [--window 10] [--tolerance 0.10]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import torch
import torch.multiprocessing as mp
import torch.nn.functional as F

IN, HIDDEN, OUT = 256, 1024, 10


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN),
                               torch.nn.ReLU(), torch.nn.Linear(HIDDEN, OUT))


def worker(rank, repeats, clock, params, grads, conn):
    torch.set_num_threads(1)
    model = make_model()
    for p, shared in zip(model.parameters(), params):
        p.data = shared                      # the coordinator's weights, in shared memory
    gen = torch.Generator().manual_seed(100 + rank)
    teacher = torch.Generator().manual_seed(7)
    w_true = torch.randn(IN, OUT, generator=teacher)
    while True:
        batch = conn.recv()
        if batch is None:
            break
        x = torch.randn(batch, IN, generator=gen)
        y = (x @ w_true).argmax(dim=1)
        now = time.thread_time if clock == "cpu" else time.perf_counter
        start = now()
        for _ in range(repeats):             # a slower device: the same work, several times over
            model.zero_grad(set_to_none=False)
            loss = F.cross_entropy(model(x), y, reduction="mean")
            loss.backward()
        elapsed = now() - start
        for g, p in zip(grads, model.parameters()):
            g.copy_(p.grad)
        conn.send((elapsed, float(loss)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cloudfit", default=shutil.which("cloudfit") or "cloudfit")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--global-batch", type=int, default=512)
    ap.add_argument("--slow", type=int, default=3, help="the second worker repeats its pass this many times")
    ap.add_argument("--window", type=int, default=20, help="iterations per controller update")
    ap.add_argument("--tolerance", type=float, default=0.20, help="balanced: slowest / fastest - 1 at most this")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="time each worker's pass by its CPU time (default: other load on a shared machine does not "
                         "distort it; each worker stands for a device of its own) or by wall time")
    args = ap.parse_args()

    torch.set_num_threads(1)
    model = make_model()
    params = [p.data.share_memory_() for p in model.parameters()]
    repeats = [1, args.slow]
    grads = [[torch.zeros_like(p).share_memory_() for p in params] for _ in repeats]
    ctx = mp.get_context("fork")
    pipes, procs = [], []
    for rank, rep in enumerate(repeats):
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=worker, args=(rank, rep, args.clock, params, grads[rank], child), daemon=True)
        proc.start()
        pipes.append(parent)
        procs.append(proc)

    rebalance = subprocess.Popen([args.cloudfit, "rebalance", "--global-batch", str(args.global_batch),
                                  "--workers", str(len(repeats)), "--window", str(args.window)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    batches = [args.global_batch // 2, args.global_batch - args.global_batch // 2]
    window, spreads, window_means, last_loss = [], [], [], None
    try:
        for step in range(args.steps):
            for conn, b in zip(pipes, batches):
                conn.send(b)
            results = [conn.recv() for conn in pipes]
            times = [r[0] for r in results]
            last_loss = sum(r[1] * b for r, b in zip(results, batches)) / args.global_batch
            with torch.no_grad():                # weighted mean of the workers' mean gradients
                for i, p in enumerate(params):
                    p -= args.lr * sum(grads[w][i] * (batches[w] / args.global_batch) for w in range(len(batches)))
            window.append(times)
            rebalance.stdin.write(json.dumps({"times_s": times}) + "\n")
            rebalance.stdin.flush()
            answer = json.loads(rebalance.stdout.readline())
            if len(window) == args.window:
                mean = [sum(t[i] for t in window) / len(window) for i in range(len(batches))]
                spread = max(mean) / min(mean) - 1
                spreads.append(spread)
                window_means.append(mean)
                print(json.dumps({"step": step + 1, "batches": batches, "mean_times_s": [round(t, 5) for t in mean],
                                  "spread": round(spread, 4), "loss": round(last_loss, 4)}), flush=True)
                window = []
            batches = answer["batches"]
    finally:
        for conn in pipes:
            conn.send(None)
        for proc in procs:
            proc.join(timeout=10)
        rebalance.stdin.close()
        rebalance.wait(timeout=10)
    last = window_means[-5:]
    pooled = [sum(m[i] for m in last) / len(last) for i in range(len(batches))]
    recent = max(pooled) / min(pooled) - 1
    balanced = recent <= args.tolerance and batches[0] > batches[1]
    print(json.dumps({"summary": True, "first_spread": round(spreads[0], 3), "recent_spread": round(recent, 4),
                      "batches": batches, "balanced": balanced, "tolerance": args.tolerance}), flush=True)
    return 0 if balanced else 1


if __name__ == "__main__":
    sys.exit(main())
