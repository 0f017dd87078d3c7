#!/usr/bin/python3
"""Dynamic batching inside a real DistributedDataParallel loop, driven by
`cloudfit rebalance` (docs/spot.md "Dynamic batching").

Two worker processes train one model with PyTorch DDP over gloo on the CPU.
Rank 1 is throttled to SLOW times rank 0's time per sample: each rank's
compute (forward and backward) is paced to a device time
alpha + beta_i * batch_i, the rank sleeping what is left of it when its
gradients are ready, so the speeds are known and other load on a shared
machine hardly changes them (the real compute of the small model stays
well inside the pace). The global batch M stays fixed; each rank takes its
share b_i of every step's batch. Each phase's summary gives the share of
steps whose compute overran the pace by 30 % (pace_overrun_share): where
that is large the machine was too busy for the throttle, and the speed
ratio is not the one set.

What a loop must do for unequal batches under DDP:

* Feed the controller each rank's COMPUTE time, not its step time. DDP's
  all-reduce makes every rank's wall time per step the same (the fast rank
  waits for the slow one inside backward), so wall times show no
  imbalance. The compute time here is wall clock from the start of the
  forward pass to the moment DDP hands the last gradient bucket to the
  all-reduce: a communication hook (register_comm_hook) notes the time and
  then runs the default all-reduce. On a GPU, record a CUDA event in the
  hook and one before the forward pass instead (the host clock does not see
  the device's queue).
* Weight each rank's mean loss by n * b_i / M (n ranks). DDP averages the
  gradients over ranks, so the average of the weighted per-rank means is
  the mean over all M samples: the same gradient as equal batches. Plain
  means would give every sample of the small-batch rank more weight.

Each step draws the global batch from a seed of its own and each rank takes
its slice, so a run with rebalanced batches sees exactly the data of the run
with equal batches. Phases, in one launch: `equal` (equal batches, no
controller), `rebalance` (from equal batches, the controller on), and with
--noise a `noise` phase (the controller on, the paced times multiplied by
1 + noise * N(0, 1) every step). Rank 0 prints one JSON line per controller
window and a summary line per phase.

Usage: torch_rebalance.py [--cloudfit PATH] [--global-batch 512] [--slow 3] [--window 10]
                          [--steps 60] [--noise 0.15] [--noise-windows 35] [--signal compute|wall]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

IN, HIDDEN, OUT = 16, 64, 10
ALPHA_S, BETA_S = 0.002, 100e-6    # rank 0's device: 2 ms per step + 100 us per sample; rank 1: SLOW x the per-sample part
OVERRUN = 1.3                      # a step whose compute took this much longer than its pace: the real compute won


class HookClock:
    """The start of this step's forward pass, its paced compute time, and when DDP handed the last gradient
    bucket to the all-reduce (the end of this rank's compute: its gradients are ready)."""
    def __init__(self):
        self.start = self.pace = self.ready = 0.0


def timed_allreduce(clock, bucket):
    rest = clock.start + clock.pace - time.perf_counter()
    if rest > 0:
        time.sleep(rest)                      # the throttled device: its compute ends here
    clock.ready = time.perf_counter()         # the model has one bucket; with several, the last call counts
    return default_hooks.allreduce_hook(None, bucket)


def global_batch(step, phase_seed, m, teacher):
    g = torch.Generator().manual_seed(phase_seed * 100003 + step)
    x = torch.randn(m, IN, generator=g)
    return x, (x @ teacher).argmax(dim=1)


def run_phase(rank, world, args, name, controller, noise, steps, log):
    """One training run from the same initial weights; returns its loss per step (rank 0)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN),
                                torch.nn.ReLU(), torch.nn.Linear(HIDDEN, OUT))
    ddp = DDP(model)
    clock = HookClock()
    ddp.register_comm_hook(clock, timed_allreduce)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    teacher = torch.randn(IN, OUT, generator=torch.Generator().manual_seed(7))
    beta = BETA_S * (args.slow if rank == 1 else 1)
    rng = random.Random(1000 * rank + len(name))
    m = args.global_batch
    batches = [m // world + (1 if r < m % world else 0) for r in range(world)]
    proc = None
    if controller and rank == 0:
        proc = subprocess.Popen(rebalance_command(args, world), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True, bufsize=1)
    losses, window, answers, overruns = [], [], [], 0.0
    try:
        for step in range(steps):
            x, y = global_batch(step, 1, m, teacher)        # the same data in every phase
            lo = sum(batches[:rank])
            xb, yb = x[lo:lo + batches[rank]], y[lo:lo + batches[rank]]
            clock.pace = (ALPHA_S + beta * batches[rank]) * max(0.2, 1 + noise * rng.gauss(0, 1))
            t0 = clock.start = time.perf_counter()
            out = ddp(xb)
            loss = F.cross_entropy(out, yb) * (world * batches[rank] / m)   # n * b_i / M
            opt.zero_grad(set_to_none=True)
            loss.backward()                                # the all-reduce waits here for the slower rank
            compute_s = clock.ready - t0
            opt.step()
            wall_s = time.perf_counter() - t0
            signal = compute_s if args.signal == "compute" else wall_s
            overrun = float(compute_s > OVERRUN * clock.pace)
            info = torch.tensor([signal, float(loss) * m / world, wall_s, overrun], dtype=torch.float64)
            gathered = [torch.zeros(4, dtype=torch.float64) for _ in range(world)]
            dist.all_gather(gathered, info)
            new = torch.tensor(batches, dtype=torch.int64)
            if rank == 0:
                overruns += sum(float(g[3]) for g in gathered)
                losses.append(sum(float(g[1]) for g in gathered) / m)
                times = [float(g[0]) for g in gathered]
                window.append((times, [float(g[2]) for g in gathered]))
                if proc:
                    answer = ask(proc, times, m)
                    new = torch.tensor(answer["batches"], dtype=torch.int64)
                if len(window) == args.window:
                    mean = [sum(w[0][i] for w in window) / len(window) for i in range(world)]
                    wall = [sum(w[1][i] for w in window) / len(window) for i in range(world)]
                    row = {"phase": name, "step": step + 1, "batches": batches, "mean_signal_s": [round(t, 5) for t in mean],
                           "mean_wall_s": [round(t, 5) for t in wall], "loss": round(losses[-1], 5)}
                    if proc:
                        row.update(changed=answer["changed"], next_batches=answer["batches"], band=answer["band"],
                                   below_floor=answer.get("below_floor", []))
                        answers.append(row)
                    log(row)
                    window = []
            dist.broadcast(new, src=0)
            batches = [int(v) for v in new]
    finally:
        if proc:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass                               # it exited: ask() said so
            proc.wait(timeout=30)
    return losses, answers, batches, overruns / (world * steps)


def rebalance_command(args, world):
    return [args.cloudfit, "rebalance", "--global-batch", str(args.global_batch), "--workers", str(world),
            "--window", str(args.window)]


def check_cloudfit(args, world):
    """Runs `cloudfit rebalance` with the run's options on empty input, before any training: a cloudfit that is
    missing or refuses the options is said so at once (it was found after the whole equal phase). The message, or
    None."""
    try:
        p = subprocess.run(rebalance_command(args, world), input="", stdout=subprocess.DEVNULL, text=True,
                           timeout=60)
    except OSError as e:
        return f"cannot run cloudfit '{args.cloudfit}': {e.strerror or e} (give its path with --cloudfit)"
    except subprocess.TimeoutExpired:
        return f"'{args.cloudfit} rebalance' did not end on empty input within 60 s"
    if p.returncode != 0:
        return f"cloudfit rebalance exited with status {p.returncode} on the run's options (its message is above)"
    return None


def ask(proc, times, m):
    """Writes one line of compute times to `cloudfit rebalance` and reads its answer. When it has exited (an
    option it refused: its message is on stderr above) the loop stops saying so, not with a BrokenPipeError. An
    answer that is not a JSON object with one positive integer batch per worker summing to the global batch `m`
    stops it too, quoting the line (it was trained on: empty slices and a NaN loss, exit 0)."""
    try:
        proc.stdin.write(json.dumps({"compute_s": times}) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
    except BrokenPipeError:
        line = ""
    if not line:
        status = proc.wait(timeout=30)
        raise RuntimeError(f"cloudfit rebalance exited with status {status}"
                           + (" (its message is above)" if status else " without answering"))
    try:
        answer = json.loads(line)
    except ValueError:
        answer = None
    batches = answer.get("batches") if isinstance(answer, dict) else None
    if not (isinstance(batches, list) and len(batches) == len(times)
            and all(type(b) is int and b >= 1 for b in batches) and sum(batches) == m):
        raise RuntimeError(f"cloudfit rebalance answered {line.strip()[:300]!r}: expected a JSON object whose "
                           f"\"batches\" are {len(times)} positive integers summing to the global batch {m}")
    return answer


def worker(rank, world, args, store_path):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + store_path, rank=rank, world_size=world)

    def log(row):
        print(json.dumps(row), flush=True)

    def summary(name, losses, answers, batches, overrun_share):
        target = [args.global_batch * args.slow / (args.slow + 1), args.global_batch / (args.slow + 1)]
        tail = losses[-10:]
        out = {"summary": name, "steps": len(losses), "final_batches": batches,
               "target_batches": [round(t, 1) for t in target], "loss_last10": sum(tail) / len(tail),
               "loss_first": losses[0], "loss_curve": [round(v, 6) for v in losses],
               "pace_overrun_share": round(overrun_share, 4)}
        if answers:
            out["batches_by_update"] = [a["batches"] for a in answers]
            out["changed_by_update"] = [a["changed"] for a in answers]
            out["below_floor_updates"] = sum(1 for a in answers if a["below_floor"])
        print(json.dumps(out), flush=True)

    phases = [("equal", False, 0.0, args.steps), ("rebalance", True, 0.0, args.steps)]
    if args.noise > 0:
        phases.append(("noise", True, args.noise, args.noise_windows * args.window))
    for name, controller, noise, steps in phases:
        losses, answers, batches, overrun_share = run_phase(rank, world, args, name, controller, noise, steps, log)
        if rank == 0:
            summary(name, losses, answers, batches, overrun_share)
        dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cloudfit", default=shutil.which("cloudfit") or "cloudfit")
    ap.add_argument("--global-batch", type=int, default=512)
    ap.add_argument("--slow", type=float, default=3.0, help="rank 1's time per sample as a multiple of rank 0's")
    ap.add_argument("--window", type=int, default=10, help="iterations per controller update")
    ap.add_argument("--steps", type=int, default=60, help="steps of the equal and the rebalance phase")
    ap.add_argument("--noise", type=float, default=0.0, help="relative timing noise injected per step (noise phase)")
    ap.add_argument("--noise-windows", type=int, default=35)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--signal", choices=("compute", "wall"), default="compute",
                    help="what the controller is fed: compute time (forward to the last gradient bucket, the right "
                         "signal) or the whole step's wall time (equal on every rank under DDP: shown for contrast)")
    args = ap.parse_args()
    for name, value, low in (("--global-batch", args.global_batch, 2), ("--window", args.window, 1),
                             ("--steps", args.steps, 1), ("--noise-windows", args.noise_windows, 1)):
        if value < low:  # at once, not after a phase of training (--steps 0 divided by zero at its end)
            ap.error(f"{name} must be at least {low}, got {value}")
    if not args.slow > 0 or not args.noise >= 0 or not args.lr > 0:
        ap.error("--slow and --lr must be positive and --noise at least 0")
    refused = check_cloudfit(args, 2)
    if refused:
        print(f"torch_rebalance.py: {refused}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        try:
            mp.start_processes(worker, args=(2, args, os.path.join(tmp, "store")), nprocs=2, join=True,
                               start_method="fork")
        except mp.ProcessRaisedException as e:  # a rank's error, without torch's nested tracebacks
            lines = str(e).strip().splitlines()
            print(f"torch_rebalance.py: {lines[-1] if lines else e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
