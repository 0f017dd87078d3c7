/* Elastic plans (advisor/plan/elastic.c, docs/spot.md "Elastic plans"): what a
 * plan does as spot VMs come and go — the node counts it stays valid for,
 * the global batch at each count (accumulation holds the batch while it
 * can; the LR rule applies when it cannot), the LR as a function of the
 * global batch, warm-up after a large jump, and the statistical progress
 * per hour at each count under each LR rule. Pure computation. */
#ifndef CLOUDFIT_ADVISOR_ELASTIC_H
#define CLOUDFIT_ADVISOR_ELASTIC_H
#include "cloudfit/advisor.h"
#include "cloudfit/advisor/perf.h"
#include "cloudfit/status.h"
#include "cloudfit/spec/types.h"

/* An LR that grows by this factor or more at a node-count change is
 * reached by a linear warm-up over CF_ELASTIC_WARMUP_STEPS optimizer steps
 * from the previous LR. */
#define CF_ELASTIC_WARMUP_FACTOR 2.0
#define CF_ELASTIC_WARMUP_STEPS 100
#define CF_ELASTIC_MAX_NODES 1024
/* "Holds the global batch": within this fraction of the plan's (integer
 * per-GPU batches cannot always hit it exactly). */
#define CF_ELASTIC_HOLD_TOLERANCE 0.05

/* How the global batch follows the node count: hold it (the per-GPU
 * batch and accumulation, within the memory ceiling, max_accumulation and
 * max_global_batch, whose product on n nodes comes closest to the plan's
 * global batch; when
 * even the largest falls short, the batch shrinks and the LR rule
 * applies), or let it shrink with the nodes. */
typedef enum { CF_ELASTIC_HOLD = 0, CF_ELASTIC_SHRINK = 1 } cf_elastic_batch;

/* The LR as a function of the global batch M, from the recipe (lr0, M0)
 * and the noise scale: lr(M) = lr0·g(M) with g the rule's factor:
 * gain: r(M) = (B + M0)·M/((B + M)·M0), to the power `exponent` (1 for
 * SGD and momentum, ½ for Adam-family optimizers); linear: M/M0; sqrt:
 * √(M/M0); none: 1. The gain rule is AdaScale's: with a noise-scale trace
 * B is B(p) at the current training progress p (cf_lr_function_eval_at;
 * B grows as training goes on, so a constant B, the run's effective one,
 * sets too high an LR early on); b_noise is the effective constant, for
 * cf_lr_function_eval. */
typedef struct {
    cf_lr_rule rule;           /* never AUTO */
    double lr0, m0, b_noise;
    double exponent;           /* gain rule: 1 or 0.5 */
    const cf_noise_model *noise; /* B(p); not owned */
} cf_lr_function;

typedef struct {
    int nodes;
    int local_batch;           /* per GPU */
    int accumulation;
    long global_batch;
    double lr;                 /* at the effective noise scale (cf_lr_function_eval) */
    double lr_start, lr_end;   /* at progress 0 and 1 (cf_lr_function_eval_at) */
    double x;                  /* the largest lr / lr_opt(M, p) over training */
    double samples_per_s;      /* throughput at this count (perf model) */
    double progress_rate;      /* hours of the full plan's work per hour at this count
                                  (cf_stat_efficiency_lr: recommend's statistical efficiency) */
    int valid;                 /* expected progress here (x < 2 throughout) */
} cf_elastic_point;

typedef struct {
    int max_nodes;             /* the plan's N */
    int min_nodes;             /* smallest count from which every count up to N is valid */
    int hold_min_nodes;        /* smallest count at which accumulation holds the global batch */
    cf_elastic_batch batch;
    cf_lr_function lr;
    double warmup_factor;
    int warmup_steps;
    cf_elastic_point points[CF_ELASTIC_MAX_NODES]; /* points[n-1] for n = 1..max_nodes */
} cf_elastic_plan;

/* The plan for N = nodes VMs of g GPUs with per-GPU batch m and
 * accumulation s, throughput from `perf` (gradient_bytes on the wire). */
typedef struct {
    const cf_job *job;
    const cf_perf_params *perf;
    double gradient_bytes;
    int nodes, gpus_per_node, local_batch, accumulation;
    int max_accumulation;
    int max_local_batch;       /* memory ceiling per GPU; 0 = the plan's local batch is the most */
    long max_global_batch;     /* search.max_global_batch: no count's batch goes above it; 0 = no limit */
    const cf_noise_model *noise; /* the advisor's (recommend's) noise model */
    cf_elastic_batch batch;
} cf_elastic_request;

#endif
