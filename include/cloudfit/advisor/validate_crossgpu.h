/* Scoring carry-over rules across GPU types (advisor/validate_crossgpu.c,
 * `cloudfit validate --crossgpu`). */
#ifndef CLOUDFIT_ADVISOR_VALIDATE_CROSSGPU_H
#define CLOUDFIT_ADVISOR_VALIDATE_CROSSGPU_H
#include <stddef.h>
#include "cloudfit/advisor/validate.h"
#include "cloudfit/status.h"
#include "cloudfit/types.h"

enum { CF_CARRY_PEAK, CF_CARRY_BANDWIDTH, CF_CARRY_GEOMEAN, CF_CARRY_CLOUDFIT, CF_CARRY_CLOUDFIT_LOMO, CF_CARRY_CLOUDFIT_LOGO,
       CF_CARRY_CROSS_PRECISION, CF_CARRY_CROSS_FP32, CF_CARRY_METHODS };

typedef struct {
    const char *name;          /* method */
    const char *description;
    cf_ape_stats stats;
} cf_carry_score;

/* Predicts every GPU's single-GPU throughput from every other GPU's, per
 * (model, precision, benchmark version), SUSPECT rows out, GPUs without a
 * GPU-table row out. Methods: peak FLOP/s ratio, memory-bandwidth ratio,
 * their geometric mean, cloudfit's rule (cf_carry_throughput_ratio with
 * the rule's own fixed share and GPU memory size as the batch ratio), and
 * the same rule with its three parameters refitted without the predicted
 * model (leave one model out), and without any pair that involves the
 * predicted GPU type (leave one GPU type out). The last two score pairs
 * across precisions (one GPU's run at one precision predicts another GPU's
 * run of the same model and benchmark at another, e.g. V100 FP32 → A100
 * TF32; their own count in stats.n): cloudfit's rule with each run's peak
 * rate at its own precision, and the same rule with FP32 peaks on both
 * sides (what ignoring the precision does). CF_ERR_INVALID when the file
 * gives no pair at all. */
cf_status cf_validate_crossgpu(const cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus,
                               cf_carry_score scores[CF_CARRY_METHODS], size_t *out_pairs, size_t *out_models);
/* Renames every row's GPU as the GPU table spells it ("Tesla V100-SXM2-16GB"
 * → "V100"); rows of GPUs the table does not have keep their name and are
 * left out by cf_validate_crossgpu. Returns how many such rows there are. */
size_t cf_crossgpu_resolve_gpus(cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus);

#endif
