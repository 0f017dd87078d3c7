/* The advisor: per-GPU-type performance parameters (measured, fitted,
 * carried over or estimated), then an enumeration over VM type × nodes ×
 * per-GPU batch × accumulation × spot/on-demand with constraints, a Pareto
 * front of (time, cost) and a pick by objective (DESIGN.md §3.5, §3.7).
 * Pure computation: no files, no network, no database. */
#ifndef CLOUDFIT_ADVISOR_H
#define CLOUDFIT_ADVISOR_H
#include <stddef.h>
#include "cloudfit/catalog.h"
#include "cloudfit/perf.h"
#include "cloudfit/spec.h"
#include "cloudfit/stateff.h"
#include "cloudfit/status.h"

/* Performance parameters of one GPU type as the enumeration uses them. */
typedef struct {
    char gpu[32];
    cf_perf_params params;
    double reference_network_gbps;  /* nominal NIC of the VM the network was fitted on; 0 = none */
    char carried_from[32];          /* GPU type the compute profile was carried over from, "" if none */
    char note[160];                 /* how the numbers were obtained, one line */
    char network_note[200];         /* how inter_gbps was measured (e.g. "measured probe: ..."); "" = see
                                       params.network_provenance */
} cf_gpu_perf;

/* Defaults when nothing was measured (docs/model.md). Between VMs, NCCL
 * over TCP sockets is bound by the cloud's per-flow limits, not the NIC:
 * on AWS g4dn (50 Gbit/s NIC) all-reduce runs at ~6 Gbit/s. RDMA fabrics
 * (EFA, InfiniBand: the catalog's ≥ 400 Gbit/s aggregates) reach about
 * half their nominal rate. */
#define CF_DEFAULT_RDMA_EFFICIENCY 0.5
#define CF_RDMA_MIN_NOMINAL_GBPS 400.0
#define CF_DEFAULT_TCP_ALLREDUCE_GBPS 6.0
#define CF_DEFAULT_INTRA_EFFICIENCY 0.5
#define CF_DEFAULT_UNKNOWN_NETWORK_GBPS 10.0
#define CF_DEFAULT_GAMMA 2.0
#define CF_DEFAULT_ROOFLINE_EFFICIENCY 0.35
#define CF_DEFAULT_SPOT_INTERRUPTIONS_PCT_PER_MONTH 15.0

/* Effective all-reduce bandwidth between VMs with a NIC of `nominal_gbps`
 * (0 = unknown) when nothing was measured. */
double cf_default_inter_gbps(double nominal_gbps);
/* The effective inter-node bandwidth of `perf` on a VM whose NIC is
 * `vm_nominal_gbps`: a measured figure carried in proportion to the NIC,
 * a given effective figure as is, else the default; *out_prov says which. */
double cf_effective_inter_gbps(const cf_gpu_perf *perf, double vm_nominal_gbps, cf_provenance *out_prov);

/* Derives a GPU type's parameters without a profile of its own: carries
 * `ref` (a profiled type) over with the GPU table — a roofline per term —
 * or, when ref is NULL, estimates from model.flops_per_sample alone.
 * Fails with CF_ERR_INVALID when neither is possible. */
cf_status cf_gpu_perf_estimate(const cf_spec *spec, const cf_gpu *target, const cf_gpu_perf *ref,
                               const cf_gpu *ref_gpu, cf_gpu_perf *out);
/* Memory ceiling estimate (per-GPU batch) from model.memory_per_sample_mib
 * or, failing that, from a reference ceiling on another GPU. 0 = unknown. */
int cf_estimate_max_local_batch(const cf_spec *spec, double gpu_memory_gib, const cf_gpu_perf *ref,
                                double ref_memory_gib);

/* Spot preemption overhead (Young/Daly checkpointing): the factor by which
 * training time grows on `nodes` spot VMs with the given interruption rate. */
double cf_spot_time_factor(double interruptions_pct_per_month, int nodes, double checkpoint_hours,
                           double restart_hours, double *out_checkpoint_interval_hours);

typedef struct {
    const cf_vm *vm;
    int spot;
    int nodes;
    int gpus_per_node;
    int local_batch;
    int accumulation;
    long global_batch;
    cf_lr_choice lr;
    double step_time_s;
    double compute_s;             /* one micro-batch */
    double sync_s;                /* raw all-reduce time (before overlap) */
    double samples_per_s;
    double samples_to_target;
    double steps;
    double stat_efficiency;       /* E0 / E(M) */
    double parallel_efficiency;   /* throughput / (K × single-GPU throughput at the same m) */
    double train_hours;           /* without startup and preemption */
    double hours;                 /* total wall time */
    double spot_factor;           /* 1 for on-demand */
    double checkpoint_interval_hours; /* spot only */
    double usd_per_hour;          /* whole cluster */
    double total_usd;
    cf_provenance prov_throughput, prov_noise, prov_network, prov_price;
} cf_config;

typedef struct {
    const cf_spec *spec;
    const cf_vm *const *vms;      /* candidate rows (already filtered) */
    size_t n_vms;
    const cf_gpu_perf *perf;      /* one per GPU type appearing in vms */
    size_t n_perf;
    const cf_noise_model *noise;
    size_t top;                   /* alternatives to keep (ranked), e.g. 10 */
} cf_advisor_input;

typedef struct {
    cf_config *ranked;            /* best first; ranked[0] is the pick; deduplicated by (cloud, instance, spot) */
    size_t n_ranked;
    cf_config *pareto;            /* (hours, total_usd) front over all feasible configs, by hours */
    size_t n_pareto;
    size_t n_evaluated;           /* model evaluations (shape × nodes × batch × accumulation) */
    size_t n_candidates;          /* priced (VM × nodes × spot) points */
    size_t n_feasible;
    cf_config fastest;            /* fastest within all limits but deadline/budget (for messages) */
    cf_config cheapest;           /* cheapest likewise */
    int have_extremes;
} cf_advice;

/* Runs the enumeration. CF_ERR_INFEASIBLE when no configuration meets the
 * deadline and budget; advice->fastest / cheapest are filled then, so the
 * caller can say how far off the constraints are. */
cf_status cf_advise(const cf_advisor_input *input, cf_advice *advice);
void cf_advice_free(cf_advice *advice);

/* Pareto front of points (x, y), both minimised: indices of the
 * non-dominated points sorted by x (of equal points, the first); returns
 * their count, 0 for n == 0 or when memory runs out. `order` needs n slots.
 * O(n log n). */
size_t cf_pareto_front(const double *x, const double *y, size_t n, size_t *order);

#endif

#ifndef CLOUDFIT_ADVISOR_CARRY_H
#define CLOUDFIT_ADVISOR_CARRY_H
/* The carry-over rule (docs/model.md, "Other GPU types"). Both terms of
 * the reference's step time, alpha and beta, are scaled by
 *     R = t_to/t_from = (peak_from/peak_to)^a · (bw_from/bw_to)^b
 * and each GPU runs its own largest fitting batch m, so the single-GPU
 * throughput at that batch changes by
 *     X_to/X_from = (1/R) · (1 + phi) / (1 + phi · m_from/m_to),
 * phi = alpha/(beta · m_from), the fixed per-step share of the reference's
 * step at its largest batch (measured by a profile). a, b and the phi used
 * when the reference's phi is unknown were fitted together on published
 * single-GPU training throughput (11 models, 13 GPU types) with GPU memory
 * size standing in for the batch ratio; `cloudfit validate --crossgpu`
 * refits all three leaving out one model, and one GPU type. */
#define CF_CARRY_PEAK_EXPONENT 0.283
#define CF_CARRY_BANDWIDTH_EXPONENT 0.499
#define CF_CARRY_OVERHEAD_FRACTION 0.148

typedef struct {
    double peak_exponent;       /* a */
    double bandwidth_exponent;  /* b */
    double overhead_fraction;   /* phi assumed when the reference's is unknown */
} cf_carry_rule;

/* The shipped rule (the three constants above). */
cf_carry_rule cf_carry_rule_default(void);
/* R: predicted ratio of per-sample (and per-step fixed) compute time on
 * `to` over `from`, at equal batch. Terms the GPU table lacks count as 1. */
double cf_gpu_time_ratio(const cf_gpu *from, const cf_gpu *to, cf_precision precision);
double cf_gpu_time_ratio_with(const cf_gpu *from, const cf_gpu *to, cf_precision precision, double peak_exponent,
                              double bandwidth_exponent);
/* X_to/X_from above: throughput on `to` at its largest batch over the
 * reference's at its own, for a reference whose fixed per-step share is
 * `overhead_fraction` (>= 0) and a batch ratio m_to/m_from (> 0; 1 when
 * unknown). With overhead_fraction 0 or equal batches this is 1/R. */
double cf_carry_throughput_ratio(const cf_gpu *from, const cf_gpu *to, cf_precision precision,
                                 const cf_carry_rule *rule, double overhead_fraction, double batch_ratio_to_from);
#endif
