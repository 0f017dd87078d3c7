/* Carrying a profile to another GPU type (advisor/model/carry.c, docs/model.md,
 * "Other GPU types"). */
#ifndef CLOUDFIT_ADVISOR_CARRY_H
#define CLOUDFIT_ADVISOR_CARRY_H

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

/* A profile run in another memory format than the job trains in (the
 * spec's model.memory_format against the format the probe reported): no
 * rule moves the step — channels_last speeds a convolution net on tensor
 * cores and may slow another model — so the point stays and the
 * compute's log sd widens by this, in quadrature. Declared from one
 * measurement, not calibrated: ResNet-50 on one H100 trained 2,222
 * samples/s contiguous and 4,722 channels_last (issue 25, ×2.13);
 * ln(4722/2222)/1.2816 = 0.588, rounded up so that the 80 % interval just
 * holds that change (docs/model.md). */
#define CF_CARRY_SIGMA_MEMORY_FORMAT 0.59

#endif
