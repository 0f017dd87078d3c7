/* Throughput model (advisor/perf.c, advisor/fit.c; DESIGN.md §3.1–3.2):
 * compute, gradient all-reduce within and across nodes, overlap,
 * accumulation, and its fit to measured step times. Pure functions. */
#ifndef CLOUDFIT_ADVISOR_PERF_H
#define CLOUDFIT_ADVISOR_PERF_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "cloudfit/types.h"

typedef struct {
    double alpha_s;        /* fixed compute time of one micro-batch on one GPU, s */
    double beta_s;         /* compute time per sample, s */
    double contention;     /* compute slows by (1 + contention·(g−1)) with g GPUs busy in a node */
    double intra_gbps;     /* effective all-reduce bus bandwidth inside a node, Gbit/s */
    double inter_gbps;     /* effective all-reduce bandwidth between nodes, Gbit/s */
    double latency_s;      /* fixed cost of one all-reduce across nodes, s */
    double gamma;          /* overlap exponent, 1 (none) .. 10 (almost full) */
    int max_local_batch;   /* memory ceiling; 0 = unknown, < 0 = the model does not fit */
    cf_provenance compute_provenance;
    cf_provenance network_provenance;
    cf_provenance memory_provenance;
} cf_perf_params;

/* Defaults when nothing was measured (docs/model.md); the only place they
 * are written down. Inside a VM, NCCL's ring reaches about half the
 * nominal NVLink/PCIe rate (PCIe 3.0 x16 when the GPU's is unknown); each extra busy GPU slows compute by 2 %
 * (shared host, PCIe and memory); one all-reduce across VMs costs 1 ms
 * before bandwidth. */
#define CF_DEFAULT_INTRA_EFFICIENCY 0.5
#define CF_DEFAULT_UNKNOWN_INTERCONNECT_GBS 16.0 /* PCIe 3.0 x16, GB/s per GPU */
#define CF_DEFAULT_CONTENTION 0.02
#define CF_DEFAULT_LATENCY_S 0.001
#define CF_DEFAULT_GAMMA 2.0

/* The parameters before anything is measured, for a GPU of the table
 * (NULL = unknown GPU): no compute figures (alpha = beta = 0), the
 * defaults above, intra-node bandwidth from the GPU's interconnect, the
 * inter-node bandwidth 0 (set per VM from its NIC), every provenance
 * `default`. */
cf_perf_params cf_perf_defaults(const cf_gpu *gpu);

/* Compute time of one micro-batch of `local_batch` samples with
 * `gpus_in_node` GPUs busy on the same node. */
double cf_perf_compute_s(const cf_perf_params *p, double local_batch, int gpus_in_node);
/* PyTorch DDP all-reduces gradients in buckets of 25 MiB as the backward
 * pass produces them; the last bucket (the first layers' gradients) is
 * ready only when the backward pass ends, so it can never overlap. */
#define CF_DDP_BUCKET_BYTES (25.0 * 1024 * 1024)
/* All-reduce time of `gradient_bytes` S over K = `nodes` × `gpus_per_node`
 * GPUs: a ring inside the node plus a ring through all K GPUs whose node
 * crossings share each VM's NIC:
 *   2(g−1)/g · S/BW_intra + [N > 1] (2(K−1)/K · S/BW_inter + latency). */
double cf_perf_sync_s(const cf_perf_params *p, double gradient_bytes, int nodes, int gpus_per_node);
/* Iteration time with `accumulation` micro-batches per optimizer step:
 *   (s−1)·t_c + (t_c^γ + ((1−f)·t_sync)^γ)^(1/γ) + f·t_sync,
 * f = min(1, bucket / S): Pollux's overlap for all but the last bucket. */
double cf_perf_step_s(const cf_perf_params *p, double gradient_bytes, int nodes, int gpus_per_node,
                      double local_batch, int accumulation);

/* GPUs per node of a measured configuration: the busiest node of its
 * placement, else num_gpus spread evenly. */
int cf_measurement_gpus_per_node(const cf_measurement *row);
/* The model's step time for a measured configuration (no accumulation). */
double cf_perf_predict_measurement(const cf_perf_params *p, const cf_measurement *row, double gradient_bytes);

/* Which parameters a fit may change; the others keep their start values. */
typedef struct {
    double rel_rmse;       /* root mean square relative residual over the rows */
    double r2_single_gpu;  /* R² of the linear compute fit on single-GPU rows (NaN if < 3 rows) */
    size_t n_rows;
    size_t n_single_gpu, n_multi_gpu_node, n_multi_node;
    int fitted_contention, fitted_intra, fitted_inter, fitted_gamma;
} cf_perf_fit_report;

/* Fits the model to measurement rows of one GPU type (GSL: linear least
 * squares for alpha/beta on single-GPU rows, then nonlinear least squares on
 * relative errors for every parameter the rows identify). `start` gives the
 * values of parameters the rows cannot identify (e.g. inter_gbps without
 * multi-node rows). Needs at least 2 single-GPU rows with distinct batches. */
cf_status cf_perf_fit(const cf_measurement *rows, size_t n_rows, double gradient_bytes,
                      const cf_perf_params *start, cf_perf_params *out, cf_perf_fit_report *report);

#endif
