/* The advisor's own half of cloudfit/advisor/carry.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_CARRY_INTERNAL_H
#define CLOUDFIT_ADVISOR_CARRY_INTERNAL_H
#include "cloudfit/advisor/carry.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/pricing/types.h"

/* The shipped constants (CF_CARRY_SIGMA_*, cloudfit/advisor/carry.h). */
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

/* The shipped rule (CF_CARRY_PEAK_EXPONENT, CF_CARRY_BANDWIDTH_EXPONENT,
 * CF_CARRY_OVERHEAD_FRACTION in cloudfit/advisor/carry.h). */
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

/* X_to/X_from (cloudfit/advisor/carry.h): throughput on `to` at its largest batch over the
 * reference's at its own, for a reference whose fixed per-step share is
 * `overhead_fraction` (>= 0) and a batch ratio m_to/m_from (> 0; 1 when
 * unknown). With overhead_fraction 0 or equal batches this is 1/R. */
double cf_carry_throughput_ratio(const cf_gpu *from, const cf_gpu *to, cf_precision precision,
                                 const cf_carry_rule *rule, double overhead_fraction, double batch_ratio_to_from);

#endif
