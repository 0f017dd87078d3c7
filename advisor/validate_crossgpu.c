#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/carry.h"
#include "cloudfit/advisor/validate_crossgpu.h"

/* The shipped constants as text, for the method description. */
#define CF_STR_(x) #x
#define CF_STR(x) CF_STR_(x)

typedef struct {
    const char *model, *precision, *benchmark;
    const cf_gpu *from, *to;
    double measured_ratio;      /* throughput_to / throughput_from */
    int model_index;
} carry_pair;

static cf_precision precision_of(const char *p)
{
    cf_precision v = CF_PREC_FP32;
    cf_precision_parse(p, &v);
    return v;
}

static const cf_gpu *gpu_of(const cf_gpu *gpus, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(gpus[i].model, name) == 0)
            return &gpus[i];
    return NULL;
}

static int double_order(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Median single-GPU throughput of `gpu` in one (model, precision, benchmark). */
static double median_throughput(const cf_crossgpu_set *set, const char *gpu, const cf_crossgpu_row *key, double *tmp)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n_rows; i++) {
        const cf_crossgpu_row *r = &set->rows[i];
        if (r->gpu_count == 1 && !r->suspect && !strcmp(r->gpu, gpu) && !strcmp(r->model, key->model) &&
            !strcmp(r->precision, key->precision) && !strcmp(r->benchmark, key->benchmark))
            tmp[n++] = r->throughput;
    }
    if (n == 0)
        return 0;
    qsort(tmp, n, sizeof *tmp, double_order);
    return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

/* Memory-size ratio to/from: the proxy for the batch ratio (a row's own
 * batch is in the data, but `recommend` only has its memory-ceiling
 * estimate, and no spec here says how much of the memory the weights take). */
static double memory_ratio(const carry_pair *p)
{
    return p->from->memory_gib > 0 && p->to->memory_gib > 0 ? p->to->memory_gib / p->from->memory_gib : 1.0;
}

/* Whether pair i is left out of a fit: pairs of model `skip_model`, or
 * pairs touching GPU `skip_gpu` (-1: none). */
static int left_out(const carry_pair *p, int skip_model, const cf_gpu *skip_gpu)
{
    return p->model_index == skip_model || (skip_gpu && (p->from == skip_gpu || p->to == skip_gpu));
}

/* For a fixed phi, least squares of log(measured time ratio) − the phi term
 * on the two log ratios without an intercept; returns the residual sum of
 * squares (HUGE_VAL when the two ratios are collinear). */
static double fit_exponents_at(const carry_pair *pairs, size_t n, int skip_model, const cf_gpu *skip_gpu,
                               double phi, double *a, double *b)
{
    double sxx = 0, sxy = 0, syy = 0, sxz = 0, syz = 0, szz = 0;
    for (size_t i = 0; i < n; i++) {
        if (left_out(&pairs[i], skip_model, skip_gpu))
            continue;
        cf_precision prec = precision_of(pairs[i].precision);
        double x = log(cf_gpu_peak_tflops(pairs[i].from, prec) / cf_gpu_peak_tflops(pairs[i].to, prec));
        double y = log(pairs[i].from->memory_bandwidth_gbs / pairs[i].to->memory_bandwidth_gbs);
        /* log(t_to/t_from) = a·x + b·y + log(1 + phi/m) − log(1 + phi) */
        double z = log(1.0 / pairs[i].measured_ratio) - log1p(phi / memory_ratio(&pairs[i])) + log1p(phi);
        sxx += x * x; sxy += x * y; syy += y * y; sxz += x * z; syz += y * z; szz += z * z;
    }
    double det = sxx * syy - sxy * sxy;
    if (fabs(det) < 1e-12)
        return HUGE_VAL;
    *a = (sxz * syy - syz * sxy) / det;
    *b = (syz * sxx - sxz * sxy) / det;
    return szz - *a * sxz - *b * syz;
}

/* The rule's three parameters by least squares in log space: a and b in
 * closed form for each phi, phi on a grid of log phi (step 0.01 from e^-8
 * to e^1, plus phi = 0) refined by golden section. Leaves out pairs as
 * left_out() says; falls back to the shipped rule when nothing is left. */
static cf_carry_rule fit_rule(const carry_pair *pairs, size_t n, int skip_model, const cf_gpu *skip_gpu)
{
    cf_carry_rule best = cf_carry_rule_default();
    double a, b, best_sse = fit_exponents_at(pairs, n, skip_model, skip_gpu, 0.0, &a, &b);
    double best_log_phi = -8.0;
    if (best_sse < HUGE_VAL)
        best = (cf_carry_rule){a, b, 0.0};
    for (int k = 0; k <= 900; k++) {
        double log_phi = -8.0 + 0.01 * k;
        double sse = fit_exponents_at(pairs, n, skip_model, skip_gpu, exp(log_phi), &a, &b);
        if (sse < best_sse) {
            best_sse = sse;
            best_log_phi = log_phi;
            best = (cf_carry_rule){a, b, exp(log_phi)};
        }
    }
    if (best.overhead_fraction <= 0 || best_sse == HUGE_VAL)
        return best;
    double lo = best_log_phi - 0.01, hi = best_log_phi + 0.01;
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    for (int it = 0; it < 40; it++) {
        double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
        double s1 = fit_exponents_at(pairs, n, skip_model, skip_gpu, exp(m1), &a, &b);
        double s2 = fit_exponents_at(pairs, n, skip_model, skip_gpu, exp(m2), &a, &b);
        if (s1 < s2)
            hi = m2;
        else
            lo = m1;
    }
    double log_phi = 0.5 * (lo + hi);
    if (fit_exponents_at(pairs, n, skip_model, skip_gpu, exp(log_phi), &a, &b) <= best_sse)
        best = (cf_carry_rule){a, b, exp(log_phi)};
    return best;
}

/* Each (model, precision, benchmark, from-GPU) single-GPU row counts once:
 * at its first row. */
static int first_of_its_kind(const cf_crossgpu_set *set, size_t i)
{
    const cf_crossgpu_row *key = &set->rows[i];
    for (size_t k = 0; k < i; k++) {
        const cf_crossgpu_row *o = &set->rows[k];
        if (o->gpu_count == 1 && !o->suspect && !strcmp(o->gpu, key->gpu) && !strcmp(o->model, key->model) &&
            !strcmp(o->precision, key->precision) && !strcmp(o->benchmark, key->benchmark))
            return 0;
    }
    return 1;
}

static cf_status collect_pairs(const cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus, carry_pair **out,
                               size_t *n_out, size_t *n_models)
{
    size_t cap = 1024, n = 0;
    carry_pair *pairs = malloc(cap * sizeof *pairs);
    double *tmp = malloc((set->n_rows ? set->n_rows : 1) * sizeof *tmp);
    const char **model_names = calloc(set->n_rows ? set->n_rows : 1, sizeof *model_names);
    if (!pairs || !tmp || !model_names) {
        free(pairs); free(tmp); free(model_names);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    *n_models = 0;
    for (size_t i = 0; i < set->n_rows; i++) {
        const cf_crossgpu_row *key = &set->rows[i];
        if (key->gpu_count != 1 || key->suspect || !gpu_of(gpus, n_gpus, key->gpu))
            continue;
        if (!first_of_its_kind(set, i))
            continue;
        int model_index = -1;
        for (size_t m = 0; m < *n_models; m++)
            if (!strcmp(model_names[m], key->model))
                model_index = (int)m;
        if (model_index < 0) {
            model_names[*n_models] = key->model;
            model_index = (int)(*n_models)++;
        }
        double from_x = median_throughput(set, key->gpu, key, tmp);
        for (size_t j = 0; j < n_gpus; j++) {
            if (strcasecmp(gpus[j].model, key->gpu) == 0)
                continue;
            double to_x = median_throughput(set, gpus[j].model, key, tmp);
            if (to_x <= 0 || cf_gpu_peak_tflops(&gpus[j], precision_of(key->precision)) <= 0 ||
                gpus[j].memory_bandwidth_gbs <= 0)
                continue;
            if (n == cap) {
                carry_pair *grown = realloc(pairs, 2 * cap * sizeof *pairs);
                if (!grown) {
                    free(pairs); free(tmp); free(model_names);
                    return cf_error_set(CF_ERR_NOMEM, "out of memory");
                }
                pairs = grown;
                cap *= 2;
            }
            pairs[n++] = (carry_pair){key->model, key->precision, key->benchmark, gpu_of(gpus, n_gpus, key->gpu),
                                      &gpus[j], to_x / from_x, model_index};
        }
    }
    free(tmp);
    free(model_names);
    *out = pairs;
    *n_out = n;
    return CF_OK;
}

/* Errors of the cross-precision pairs: for each (model, benchmark, GPU,
 * precision) key at its first row, every other GPU's median throughput of
 * the same model and benchmark at another precision. */
static cf_status cross_precision(const cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus, double **err_own,
                                 double **err_fp32, size_t *n_out)
{
    size_t cap = 1024, n = 0;
    double *own = malloc(cap * sizeof *own), *fp32 = malloc(cap * sizeof *fp32);
    double *tmp = malloc((set->n_rows ? set->n_rows : 1) * sizeof *tmp);
    if (!own || !fp32 || !tmp) {
        free(own); free(fp32); free(tmp);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    static const char *const precisions[] = {"fp32", "tf32", "fp16", "bf16", "amp"};
    cf_carry_rule rule = cf_carry_rule_default();
    for (size_t i = 0; i < set->n_rows; i++) {
        const cf_crossgpu_row *key = &set->rows[i];
        const cf_gpu *from = gpu_of(gpus, n_gpus, key->gpu);
        if (key->gpu_count != 1 || key->suspect || !from)
            continue;
        if (!first_of_its_kind(set, i))
            continue;
        double from_x = median_throughput(set, key->gpu, key, tmp);
        cf_precision p_from = precision_of(key->precision);
        for (size_t q = 0; q < sizeof precisions / sizeof *precisions; q++) {
            if (!strcmp(precisions[q], key->precision))
                continue;
            cf_crossgpu_row other = *key;
            snprintf(other.precision, sizeof other.precision, "%s", precisions[q]);
            cf_precision p_to = precision_of(precisions[q]);
            for (size_t j = 0; j < n_gpus; j++) {
                const cf_gpu *to = &gpus[j];
                if (to == from || to->memory_bandwidth_gbs <= 0 || cf_gpu_peak_tflops(to, p_to) <= 0)
                    continue;
                double to_x = median_throughput(set, to->model, &other, tmp);
                if (to_x <= 0)
                    continue;
                if (n == cap) {
                    double *g1 = realloc(own, 2 * cap * sizeof *own), *g2 = g1 ? realloc(fp32, 2 * cap * sizeof *fp32) : NULL;
                    if (g1)
                        own = g1;
                    if (g2)
                        fp32 = g2;
                    if (!g1 || !g2) {
                        free(own); free(fp32); free(tmp);
                        return cf_error_set(CF_ERR_NOMEM, "out of memory");
                    }
                    cap *= 2;
                }
                double mem = from->memory_gib > 0 && to->memory_gib > 0 ? to->memory_gib / from->memory_gib : 1.0;
                double phi = rule.overhead_fraction, measured = to_x / from_x;
                double r_own = cf_gpu_time_ratio_between(from, p_from, to, p_to);
                double r_fp32 = cf_gpu_time_ratio_between(from, CF_PREC_FP32, to, CF_PREC_FP32);
                own[n] = (1 + phi) / (r_own * (1 + phi / mem)) / measured - 1;
                fp32[n] = (1 + phi) / (r_fp32 * (1 + phi / mem)) / measured - 1;
                n++;
            }
        }
    }
    free(tmp);
    *err_own = own;
    *err_fp32 = fp32;
    *n_out = n;
    return CF_OK;
}

cf_status cf_validate_crossgpu(const cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus,
                               cf_carry_score scores[CF_CARRY_METHODS], size_t *out_pairs, size_t *out_models)
{
    static const char *const names[] = {"peak",          "bandwidth",       "geomean",   "cloudfit", "cloudfit-lomo",
                                        "cloudfit-logo", "cross-precision", "cross-fp32"};
    static const char *const descriptions[] = {
        "peak FLOP/s ratio at the run's precision", "memory-bandwidth ratio", "geometric mean of the two",
        "cloudfit: peak^" CF_STR(CF_CARRY_PEAK_EXPONENT) " · bandwidth^" CF_STR(CF_CARRY_BANDWIDTH_EXPONENT)
        ", fixed share " CF_STR(CF_CARRY_OVERHEAD_FRACTION) " at memory-size batch ratio",
        "cloudfit's rule, its 3 parameters refitted without the predicted model",
        "cloudfit's rule, its 3 parameters refitted without the predicted pair's GPU types",
        "pairs across precisions: cloudfit's rule, each run's peak at its own precision",
        "pairs across precisions: cloudfit's rule with FP32 peaks on both sides (precision ignored)"};
    carry_pair *pairs = NULL;
    size_t n = 0;
    cf_status st = collect_pairs(set, gpus, n_gpus, &pairs, &n, out_models);
    if (st != CF_OK)
        return st;
    if (n == 0) {
        free(pairs);
        cf_error_set(CF_ERR_INVALID, "no pair to score: no model has single-GPU throughput at one precision on two "
                                     "GPU types of the GPU table");
        cf_error_hint("the file needs rows with gpu_count 1 of one model, precision and benchmark on at least two "
                      "known GPU types");
        return CF_ERR_INVALID;
    }
    double *cross_own = NULL, *cross_fp32 = NULL;
    size_t n_cross = 0;
    if ((st = cross_precision(set, gpus, n_gpus, &cross_own, &cross_fp32, &n_cross)) != CF_OK) {
        free(pairs);
        return st;
    }
    double *errors = malloc(n * CF_CARRY_METHODS * sizeof *errors);
    cf_carry_rule *lomo = malloc((*out_models ? *out_models : 1) * sizeof *lomo);
    cf_carry_rule *logo = malloc((n_gpus ? n_gpus : 1) * sizeof *logo);
    if (!errors || !lomo || !logo) {
        free(pairs); free(errors); free(lomo); free(logo); free(cross_own); free(cross_fp32);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    for (size_t m = 0; m < *out_models; m++)
        lomo[m] = fit_rule(pairs, n, (int)m, NULL);
    for (size_t g = 0; g < n_gpus; g++)
        logo[g] = fit_rule(pairs, n, -1, &gpus[g]);
    cf_carry_rule shipped = cf_carry_rule_default();
    for (size_t i = 0; i < n; i++) {
        const carry_pair *p = &pairs[i];
        cf_precision prec = precision_of(p->precision);
        double peak = cf_gpu_peak_tflops(p->to, prec) / cf_gpu_peak_tflops(p->from, prec);
        double bw = p->to->memory_bandwidth_gbs / p->from->memory_bandwidth_gbs;
        double mem = memory_ratio(p);
        /* Leave one GPU type out: a pair touches two; the fit without
         * either is the one that never saw the GPU being predicted (`to`). */
        const cf_carry_rule *held = &logo[p->to - gpus];
        double predicted[CF_CARRY_METHODS] = {
            peak, bw, sqrt(peak * bw),
            cf_carry_throughput_ratio(p->from, p->to, prec, &shipped, shipped.overhead_fraction, mem),
            cf_carry_throughput_ratio(p->from, p->to, prec, &lomo[p->model_index],
                                      lomo[p->model_index].overhead_fraction, mem),
            cf_carry_throughput_ratio(p->from, p->to, prec, held, held->overhead_fraction, mem)};
        for (int k = 0; k < CF_CARRY_METHODS; k++)
            errors[(size_t)k * n + i] = predicted[k] / p->measured_ratio - 1.0;
    }
    for (int k = 0; k < CF_CARRY_METHODS; k++) {
        scores[k].name = names[k];
        scores[k].description = descriptions[k];
        if (k == CF_CARRY_CROSS_PRECISION || k == CF_CARRY_CROSS_FP32)
            scores[k].stats = cf_ape_summarise(k == CF_CARRY_CROSS_PRECISION ? cross_own : cross_fp32, n_cross);
        else
            scores[k].stats = cf_ape_summarise(&errors[(size_t)k * n], n);
    }
    *out_pairs = n;
    free(pairs); free(errors); free(lomo); free(logo); free(cross_own); free(cross_fp32);
    return CF_OK;
}

size_t cf_crossgpu_resolve_gpus(cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus)
{
    size_t n_unknown = 0;
    for (size_t i = 0; i < set->n_rows; i++) {
        const cf_gpu *g = cf_gpu_resolve(gpus, n_gpus, set->rows[i].gpu);
        if (g)
            snprintf(set->rows[i].gpu, sizeof set->rows[i].gpu, "%s", g->model);
        else
            n_unknown++;
    }
    return n_unknown;
}
