#!/usr/bin/python3
"""A cluster the project does not have, made from one it has: the T4 measurements
with the inter-node sync of every row on three or more VMs rescaled so that it
grows with the node count N as (ring(N)/ring(2))^EXPONENT, ring(n) = 2(n-1)/n,
from the 2-node rows (which stay as measured, like the 2-node probe the model
starts from). EXPONENT 1.7 is the growth NCCL's own benchmark shows on AWS p4dn
over EFA (NVIDIA/nccl issue #527: about 1.8x the 2-node time on 3 nodes, 2.0x on
4), where T4's sync falls from 2 to 4 VMs. step_time_s = step - sync + sync*f;
sync_time_s and samples_per_s follow. Used to check that the search and the
model's claims hold where the node-count growth is not T4's (docs/search.md).
Writes OUT_DIR/groundtruth/pollux_aws_t4/throughput.csv (and links the DGX file
beside it) so that CLOUDFIT_SHARED_DATA=OUT_DIR bench/search.sh runs on it.
Usage: bench/perturb_growth.py T4_CSV OUT_DIR [EXPONENT] [DGX_CSV]"""
import csv
import os
import sys


def ring(n):
    return 2.0 * (n - 1) / n


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, out_dir = sys.argv[1], sys.argv[2]
    exponent = float(sys.argv[3]) if len(sys.argv) > 3 else 1.7
    t4_dir = os.path.join(out_dir, "groundtruth", "pollux_aws_t4")
    os.makedirs(t4_dir, exist_ok=True)
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    changed = 0
    with open(os.path.join(t4_dir, "throughput.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        for r in rows:
            n = int(r["num_nodes"])
            if n >= 3 and r["sync_time_s"]:
                sync, step = float(r["sync_time_s"]), float(r["step_time_s"])
                factor = (ring(n) / ring(2)) ** exponent
                step = step - sync + sync * factor
                r["step_time_s"], r["sync_time_s"] = "%.9g" % step, "%.9g" % (sync * factor)
                r["samples_per_s"] = "%.9g" % (int(r["global_bsz"]) / step)
                changed += 1
            w.writerow(r)
    if len(sys.argv) > 4:
        dgx_dir = os.path.join(out_dir, "groundtruth", "sia_dgx_a100")
        os.makedirs(dgx_dir, exist_ok=True)
        link = os.path.join(dgx_dir, "throughput.csv")
        if not os.path.exists(link):
            os.symlink(os.path.abspath(sys.argv[4]), link)
    print("%d of %d rows rescaled (growth exponent %g) into %s" % (changed, len(rows), exponent, t4_dir))


if __name__ == "__main__":
    main()
