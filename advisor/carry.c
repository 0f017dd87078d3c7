/* The carry-over rule between GPU types (docs/model.md, "Other GPU types"). */
#include "cloudfit/advisor/carry.h"

#include <math.h>

double cf_gpu_time_ratio_with(const cf_gpu *from, const cf_gpu *to, cf_precision precision, double peak_exponent,
                              double bandwidth_exponent)
{
    return cf_gpu_time_ratio_between_with(from, precision, to, precision, peak_exponent, bandwidth_exponent);
}

double cf_gpu_time_ratio_between(const cf_gpu *from, cf_precision from_precision, const cf_gpu *to,
                                 cf_precision to_precision)
{
    return cf_gpu_time_ratio_between_with(from, from_precision, to, to_precision, CF_CARRY_PEAK_EXPONENT,
                                          CF_CARRY_BANDWIDTH_EXPONENT);
}

double cf_gpu_time_ratio_between_with(const cf_gpu *from, cf_precision from_precision, const cf_gpu *to,
                                      cf_precision to_precision, double peak_exponent, double bandwidth_exponent)
{
    double ratio = 1.0;
    double peak_from = cf_gpu_peak_tflops(from, from_precision), peak_to = cf_gpu_peak_tflops(to, to_precision);
    if (peak_from > 0 && peak_to > 0)
        ratio *= pow(peak_from / peak_to, peak_exponent);
    if (from->memory_bandwidth_gbs > 0 && to->memory_bandwidth_gbs > 0)
        ratio *= pow(from->memory_bandwidth_gbs / to->memory_bandwidth_gbs, bandwidth_exponent);
    return ratio;
}

cf_carry_rule cf_carry_rule_default(void)
{
    return (cf_carry_rule){CF_CARRY_PEAK_EXPONENT, CF_CARRY_BANDWIDTH_EXPONENT, CF_CARRY_OVERHEAD_FRACTION};
}

double cf_gpu_time_ratio(const cf_gpu *from, const cf_gpu *to, cf_precision precision)
{
    return cf_gpu_time_ratio_with(from, to, precision, CF_CARRY_PEAK_EXPONENT, CF_CARRY_BANDWIDTH_EXPONENT);
}

double cf_carry_throughput_ratio(const cf_gpu *from, const cf_gpu *to, cf_precision precision,
                                 const cf_carry_rule *rule, double overhead_fraction, double batch_ratio_to_from)
{
    double r = cf_gpu_time_ratio_with(from, to, precision, rule->peak_exponent, rule->bandwidth_exponent);
    double phi = overhead_fraction > 0 ? overhead_fraction : 0;
    double m = batch_ratio_to_from > 0 ? batch_ratio_to_from : 1;
    /* Step time per sample is R·beta·(1 + phi·m_from/m) on `to` against
     * beta·(1 + phi) on `from`: alpha and beta both scale by R. */
    return (1.0 + phi) / (r * (1.0 + phi / m));
}
