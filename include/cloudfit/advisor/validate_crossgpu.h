/* Scoring carry-over rules across GPU types (advisor/validate/validate_crossgpu.c,
 * `cloudfit validate --crossgpu`). */
#ifndef CLOUDFIT_ADVISOR_VALIDATE_CROSSGPU_H
#define CLOUDFIT_ADVISOR_VALIDATE_CROSSGPU_H
#include <stddef.h>
#include "cloudfit/advisor/carry.h"
#include "cloudfit/advisor/validate.h"
#include "cloudfit/status.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/profiler/types.h"

enum { CF_CARRY_PEAK, CF_CARRY_BANDWIDTH, CF_CARRY_GEOMEAN, CF_CARRY_CLOUDFIT, CF_CARRY_CLOUDFIT_LOMO, CF_CARRY_CLOUDFIT_LOGO,
       CF_CARRY_CROSS_PRECISION, CF_CARRY_CROSS_FP32, CF_CARRY_METHODS };

typedef struct {
    const char *name;          /* method */
    const char *description;
    cf_ape_stats stats;        /* interval_coverage < 0 for the methods without an interval */
} cf_carry_score;

/* One (from GPU, to GPU) pair of types, leaving the `to` type out. */
typedef struct {
    const char *from, *to;     /* GPU table names (point into the table) */
    size_t n;                  /* predictions: models, precisions and benchmark versions */
    double median_ape;
    double interval_coverage;  /* share inside the 80 % interval */
} cf_carry_gpu_pair;

typedef struct {
    cf_carry_score scores[CF_CARRY_METHODS];
    /* Leave one GPU type out over every pair, same and across precisions:
     * the rule and the interval's constants refitted without any pair
     * touching the predicted GPU type. The headline. */
    cf_ape_stats overall;
    /* The interval's constants fitted on every pair's leave-one-GPU-out
     * error (what bench/carry_sigma_lab.py prints; the shipped ones in
     * carry.h were chosen so). */
    cf_carry_sigma_rule sigma_fitted;
    cf_carry_gpu_pair *gpu_pairs;   /* malloc'd, ordered by (from, to) as in the table */
    size_t n_gpu_pairs;
    size_t n_pairs;            /* same-precision predictions */
    size_t n_cross_pairs;      /* predictions across precisions */
    size_t n_models;
} cf_carry_validation;

/* Predicts every GPU's single-GPU throughput from every other GPU's, per
 * (model, benchmark version), at the same precision and across precisions
 * (V100 FP32 → A100 TF32), SUSPECT rows out, GPUs without a GPU-table row
 * out. Methods on the same-precision pairs: peak FLOP/s ratio,
 * memory-bandwidth ratio, their geometric mean, cloudfit's rule
 * (cf_carry_throughput_ratio with the rule's own fixed share and GPU
 * memory size as the batch ratio), the same rule with its three
 * parameters refitted without the predicted model (leave one model out)
 * and without any pair that involves the predicted GPU type (leave one
 * GPU type out); on the pairs across precisions: cloudfit's rule with
 * each run's peak at its own precision, and with FP32 peaks on both sides
 * (what ignoring the precision does). cloudfit's rows carry the coverage
 * of the carry-over's 80 % interval (cf_carry_sigma): the shipped
 * constants for cloudfit, -lomo and cross-precision, constants refitted
 * leaving the GPU type out for -logo and `overall`. CF_ERR_INVALID when
 * the file gives no pair at all. Free with cf_carry_validation_free. */
cf_status cf_validate_crossgpu(const cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus, cf_carry_validation *out);
void cf_carry_validation_free(cf_carry_validation *v);
/* Renames every row's GPU as the GPU table spells it ("Tesla V100-SXM2-16GB"
 * → "V100"); rows of GPUs the table does not have keep their name and are
 * left out by cf_validate_crossgpu. Returns how many such rows there are;
 * `unknown` (size n, may be NULL) gets the first of their GPU names, each
 * once: "RTX 9999, X1, X2 and 4 more". */
size_t cf_crossgpu_resolve_gpus(cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus, char *unknown, size_t n);

#endif
