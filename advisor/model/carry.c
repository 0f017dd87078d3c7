/* The carry-over rule between GPU types (docs/model.md, "Other GPU types"). */
#include "cloudfit/advisor/carry.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/pricing/types.h"

#include <math.h>
#include <string.h>
#include <strings.h>
#include "carry_internal.h"

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

cf_carry_sigma_rule cf_carry_sigma_rule_default(void)
{
    return (cf_carry_sigma_rule){CF_CARRY_SIGMA_BASE,     CF_CARRY_SIGMA_HALF,        CF_CARRY_SIGMA_PER_GENERATION,
                                 CF_CARRY_SIGMA_PRECISION, CF_CARRY_SIGMA_PER_PEAK_LOG, CF_CARRY_SIGMA_VENDOR};
}

double cf_gpu_generation(const cf_gpu *gpu)
{
    static const struct {
        const char *prefix;
        double generation;
    } table[] = {{"Kepler", 1},   {"Maxwell", 2}, {"Pascal", 3}, {"Volta", 4},     {"Turing", 4.5},
                 {"Ampere", 5},   {"Ada", 5.5},   {"Hopper", 6}, {"Blackwell", 7}, {"CDNA 3", 6}};
    for (size_t i = 0; gpu && i < sizeof table / sizeof *table; i++)
        if (strncasecmp(gpu->architecture, table[i].prefix, strlen(table[i].prefix)) == 0)
            return table[i].generation;
    return -1;
}

/* The GPU table's AMD rows are the CDNA architectures. */
static int is_amd(const cf_gpu *gpu) { return strncasecmp(gpu->architecture, "CDNA", 4) == 0; }

static int is_half(cf_precision p) { return p == CF_PREC_FP16 || p == CF_PREC_BF16 || p == CF_PREC_AMP; }

double cf_carry_sigma(const cf_gpu *from, cf_precision from_precision, const cf_gpu *to, cf_precision to_precision,
                      const cf_carry_sigma_rule *rule)
{
    cf_carry_sigma_rule k = rule ? *rule : cf_carry_sigma_rule_default();
    double gen_from = cf_gpu_generation(from), gen_to = cf_gpu_generation(to);
    double gap = gen_from < 0 || gen_to < 0 ? 2.0 : fabs(gen_to - gen_from);
    double peak_from = cf_gpu_peak_tflops(from, from_precision), peak_to = cf_gpu_peak_tflops(to, to_precision);
    double peak_log = peak_from > 0 && peak_to > 0 ? fabs(log(peak_to / peak_from)) : 0;
    double var = k.base * k.base + (k.per_generation * gap) * (k.per_generation * gap) +
                 (k.per_peak_log * peak_log) * (k.per_peak_log * peak_log);
    if (is_half(from_precision) || is_half(to_precision))
        var += k.half * k.half;
    if (from_precision != to_precision)
        var += k.precision * k.precision;
    if (from && to && is_amd(from) != is_amd(to))
        var += k.vendor * k.vendor;
    return sqrt(var);
}
