#!/usr/bin/python3
"""DistributedDataParallel through the cloudfit_probe helper: a small
classifier on a fixed synthetic data set, one process per device, started
by torchrun:

    "command": ["torchrun", "--standalone", "--nproc_per_node", "2", "examples/ddp_probe.py"]

(the backend is nccl on GPUs, gloo on a CPU). Without torchrun,
`--nproc N` starts the N workers itself on this machine (torch.multiprocessing;
they meet through a file store in a temporary folder, not a TCP port that
another program could take between its choice and its use, and gloo talks
over the loopback interface): Debian's PyTorch 1.13 torchrun fails under
Python 3.11. A worker that waits on the others longer than
CLOUDFIT_DIST_TIMEOUT_S (default 300) fails with gloo's error instead of
hanging. Rank 0 speaks the
protocol; every worker trains. In cloudfit's noise run each worker takes
its share of the k micro-batches and the step reports their squared norms
(with k = workers: the per-worker norms) and the all-reduced gradient's.

The data stream is cut into micro-batches c = 0, 1, 2, ... of the batch
size cloudfit asks for, and worker r takes every c with c mod W = r: the
same samples in the same order whatever the number of workers — how a
DistributedSampler splits a data set, written out so that a test can
recompute each worker's gradient (tests/profiler/test_probe_helper.py)."""
import argparse
import datetime
import gc
import os
import sys

import torch
import torch.distributed as dist

here = os.path.dirname(os.path.abspath(__file__))
try:
    import cloudfit_probe
except ImportError:
    sys.path.append(os.path.join(here, "..", "python"))
    import cloudfit_probe

FEATURES, HIDDEN, CLASSES, SAMPLES = 32, 64, 4, 4096


def build_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES))


def make_data(seed):
    """Inputs ~ N(0, I), labels from a random linear teacher."""
    g = torch.Generator()
    g.manual_seed(seed + 1)
    x = torch.randn(SAMPLES, FEATURES, generator=g)
    teacher = torch.randn(FEATURES, CLASSES, generator=g)
    return x, (x @ teacher).argmax(dim=1)


def micro_batch(x, y, c, batch_size):
    """Micro-batch c of the stream (the data set repeats)."""
    idx = torch.arange(c * batch_size, (c + 1) * batch_size) % x.shape[0]
    return x[idx], y[idx]


def worker_batches(x, y, rank, world):
    def batches(batch_size):
        c = rank
        while True:
            yield micro_batch(x, y, c, batch_size)
            c += world
    return batches


def worker(local_rank, args, store_path=None):
    """One worker; under torchrun local_rank comes from LOCAL_RANK."""
    timeout = datetime.timedelta(seconds=float(os.environ.get("CLOUDFIT_DIST_TIMEOUT_S", "300")))
    if store_path:  # started by --nproc
        os.environ.update(RANK=str(local_rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(args.nproc))
        dist.init_process_group(args.backend, init_method="file://" + store_path, rank=local_rank,
                                world_size=args.nproc, timeout=timeout)
    else:  # torchrun: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the environment
        dist.init_process_group(args.backend, timeout=timeout)
    rank, world = dist.get_rank(), dist.get_world_size()
    if torch.cuda.is_available():
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    seed = int(os.environ.get("CLOUDFIT_SEED", "1"))
    model = build_model(seed).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    x, y = make_data(seed)
    code = cloudfit_probe.run(ddp, torch.nn.CrossEntropyLoss(), worker_batches(x, y, rank, world), optimizer,
                              precision="fp32")
    # DDP's reducer goes while the group still exists: left to the worker's
    # exit, after destroy_process_group, its teardown hung a worker now and
    # then under gloo (1 exit in about 25 on a loaded 2-core machine).
    del optimizer, ddp, model
    gc.collect()
    dist.barrier()  # no worker leaves while another still talks to the group (gloo can hang at exit)
    dist.destroy_process_group()
    if code and store_path:  # mp.spawn reads a worker's failure from its exit status
        sys.exit(code)
    return code


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="nccl" if torch.cuda.is_available() else "gloo")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--nproc", type=int, default=0, help="start this many workers here (instead of torchrun)")
    args = ap.parse_args()
    if "RANK" in os.environ:  # one of torchrun's workers
        args.nproc = 0
        return worker(int(os.environ.get("LOCAL_RANK", "0")), args)
    if args.nproc < 1:
        ap.error("run under torchrun, or give --nproc N")
    import tempfile
    import torch.multiprocessing as mp
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # every worker is on this machine
    with tempfile.TemporaryDirectory(prefix="cloudfit-ddp-") as folder:
        try:
            mp.spawn(worker, args=(args, os.path.join(folder, "store")), nprocs=args.nproc, join=True)
        except mp.ProcessExitedException as e:
            return e.exit_code or 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
