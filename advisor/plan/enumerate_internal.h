/* Shared by advisor/plan/enumerate.c and advisor/spot/spot_advice.c only. */
#ifndef CLOUDFIT_ADVISOR_ENUMERATE_INTERNAL_H
#define CLOUDFIT_ADVISOR_ENUMERATE_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include "cloudfit/advisor.h"

/* A VM shape: everything the step time depends on. Rows of the catalog
 * that share a shape (same GPU, GPUs per VM and NIC) differ only in price,
 * so the model runs once per shape and node count. */
typedef struct {
    const cf_gpu_perf *perf;
    cf_perf_params params;     /* with inter_gbps set for this NIC */
    int gpus_per_vm;
    double network_gbps;
    int max_local_batch;
    cf_provenance memory_provenance;
    /* per node count n (index n-1): time-optimal batch and accumulation */
    int *best_m, *best_s;
    double *best_train_h, *best_step_s, *best_sigma, *best_sigma_up;
} shape;

typedef struct {
    uint32_t vm;      /* index into input->vms */
    uint32_t shape;
    uint16_t nodes;
    uint8_t spot;
    uint8_t mixed;    /* spot with an on-demand fallback near the deadline */
    int32_t spot_est; /* index into the spot estimates; -1 = not simulated */
    double hours;
    double usd;
    double hours_q, usd_q;   /* at the confidence the constraints are held to */
    int feasible;
} candidate;

/* Spot candidates (advisor/spot/spot_advice.c): the closed-form screen of one
 * candidate's hours, then the Monte Carlo for the most promising ones,
 * which replaces their hours and cost with the p50 and decides
 * feasibility at the stated confidence; spot candidates left out are
 * infeasible. *out_est (one per simulated candidate) is freed by the
 * caller. */
typedef struct spot_cache spot_cache;
cf_status cf__spot_cache_new(const cf_advisor_input *in, int max_nodes, spot_cache **out);
void cf__spot_cache_free(spot_cache *c);
double cf__spot_screen_hours(spot_cache *c, size_t vm_index, int nodes, double train_h);
/* 1 when two offers use the same row of the preemption model. */
int cf__spot_same_row(spot_cache *c, size_t vm_a, size_t vm_b);
/* Looks up the model rows of every evaluated VM (vm_shape[v] != SIZE_MAX)
 * with a spot price, on every core (each VM's rows are its own), so that
 * the calls above only read them. */
void cf__spot_rows_prefill(spot_cache *c, const size_t *vm_shape);
cf_status cf__spot_refine(spot_cache *c, const shape *shapes, candidate *cands, size_t n, cf_spot_estimate **out_est,
                          size_t *out_n_est);

#endif
