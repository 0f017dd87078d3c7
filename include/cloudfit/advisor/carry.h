/* Carrying a profile to another GPU type (advisor/model/carry.c, docs/model.md,
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

/* The carry-over's uncertainty: the log error of a carried prediction is
 * normal with
 *     σ² = s0² + s_half²·[a half-precision run on either side]
 *        + (k_gen · generation gap)² + s_x²·[the two precisions differ]
 *        + (k_peak · |ln(peak_to/peak_from)|)²  (+ s_vendor² across vendors)
 * (generation gap in architecture steps, Turing and Ada half a step; peak:
 * dense FLOP/s at each side's precision). The five constants maximise the
 * likelihood of the carry rule's leave-one-GPU-out errors on Lambda's
 * published single-GPU throughput (3,920 pairs, 14 GPU types, same and
 * across precisions; bench/carry_sigma_lab.py, docs/model.md); the
 * 80 % interval then covers 81.9 % of the pairs in-sample and 80.8 %
 * leaving one GPU type out (constants refitted without it). s_vendor
 * (NVIDIA ↔ AMD) has no data behind it: declared, as wide as a roofline
 * estimate's σ. */
#define CF_CARRY_SIGMA_BASE 0.170
#define CF_CARRY_SIGMA_HALF 0.190
#define CF_CARRY_SIGMA_PER_GENERATION 0.105
#define CF_CARRY_SIGMA_PRECISION 0.305
#define CF_CARRY_SIGMA_PER_PEAK_LOG 0.090
#define CF_CARRY_SIGMA_VENDOR 0.50

typedef struct {
    double base, half, per_generation, precision, per_peak_log, vendor;
} cf_carry_sigma_rule;

/* The shipped constants above. */
cf_carry_sigma_rule cf_carry_sigma_rule_default(void);
/* Architecture generation of a GPU table row from its `architecture`
 * column (Kepler 1, Maxwell 2, Pascal 3, Volta 4, Turing 4.5, Ampere 5,
 * Ada Lovelace 5.5, Hopper 6, Blackwell 7; AMD CDNA 3 6); < 0 when the
 * column names none of them. */
double cf_gpu_generation(const cf_gpu *gpu);
/* σ of carrying a run on `from` at `from_precision` to `to` at
 * `to_precision` (the same GPU across precisions too), by `rule` (NULL:
 * the shipped one). An unknown generation counts as two steps apart. */
double cf_carry_sigma(const cf_gpu *from, cf_precision from_precision, const cf_gpu *to, cf_precision to_precision,
                      const cf_carry_sigma_rule *rule);

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
