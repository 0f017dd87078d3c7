/* Carrying a profile to another GPU type (advisor/carry.c, docs/model.md,
 * "Other GPU types"). */
#ifndef CLOUDFIT_ADVISOR_CARRY_H
#define CLOUDFIT_ADVISOR_CARRY_H
#include "cloudfit/types.h"

/* The carry-over rule. Both terms of
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
/* R when the two runs use different arithmetic (a V100 FP32 profile
 * carried to an A100 trained in TF32): each side's peak at its own
 * precision. */
double cf_gpu_time_ratio_between(const cf_gpu *from, cf_precision from_precision, const cf_gpu *to,
                                 cf_precision to_precision);
double cf_gpu_time_ratio_between_with(const cf_gpu *from, cf_precision from_precision, const cf_gpu *to,
                                      cf_precision to_precision, double peak_exponent, double bandwidth_exponent);
/* X_to/X_from above: throughput on `to` at its largest batch over the
 * reference's at its own, for a reference whose fixed per-step share is
 * `overhead_fraction` (>= 0) and a batch ratio m_to/m_from (> 0; 1 when
 * unknown). With overhead_fraction 0 or equal batches this is 1/R. */
double cf_carry_throughput_ratio(const cf_gpu *from, const cf_gpu *to, cf_precision precision,
                                 const cf_carry_rule *rule, double overhead_fraction, double batch_ratio_to_from);
#endif
