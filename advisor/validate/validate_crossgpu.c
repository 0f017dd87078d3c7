#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/carry.h"
#include "cloudfit/advisor/validate_crossgpu.h"
#include "../model/carry_internal.h"
#include "../model/perf_internal.h"
#include "validate_internal.h"

/* The shipped constants as text, for the method description. */
#define CF_STR_(x) #x
#define CF_STR(x) CF_STR_(x)

typedef struct {
    const char *model, *benchmark;
    cf_precision from_precision, to_precision;
    const cf_gpu *from, *to;
    double measured_ratio;      /* throughput_to / throughput_from */
    int model_index;
    int cross;                  /* the two runs' precisions differ */
    /* what the rule's fit reads, computed once: ln of the peak and bandwidth
     * ratios from/to, ln(1 / measured_ratio), the memory-size ratio */
    double log_peak, log_bandwidth, log_time, memory;
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
static double median_throughput(const cf_crossgpu_set *set, const char *gpu, const char *model, const char *precision,
                                const char *benchmark, double *tmp)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n_rows; i++) {
        const cf_crossgpu_row *r = &set->rows[i];
        if (r->gpu_count == 1 && !r->suspect && !strcmp(r->gpu, gpu) && !strcmp(r->model, model) &&
            !strcmp(r->precision, precision) && !strcmp(r->benchmark, benchmark))
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

static int touches(const carry_pair *p, const cf_gpu *gpu)
{
    return gpu && (p->from == gpu || p->to == gpu);
}

/* Whether pair i is left out of a fit: pairs across precisions (the rule
 * is fitted at one precision), pairs of model `skip_model`, or pairs
 * touching GPU `skip[0]` or `skip[1]` (NULL: none). */
static int left_out(const carry_pair *p, int skip_model, const cf_gpu *const skip[2])
{
    return p->cross || p->model_index == skip_model || touches(p, skip[0]) || touches(p, skip[1]);
}

/* For a fixed phi, least squares of log(measured time ratio) − the phi term
 * on the two log ratios without an intercept; returns the residual sum of
 * squares (HUGE_VAL when the two ratios are collinear). */
static double fit_exponents_at(const carry_pair *pairs, size_t n, int skip_model, const cf_gpu *const skip_gpu[2],
                               double phi, double *a, double *b)
{
    double sxx = 0, sxy = 0, syy = 0, sxz = 0, syz = 0, szz = 0;
    for (size_t i = 0; i < n; i++) {
        if (left_out(&pairs[i], skip_model, skip_gpu))
            continue;
        const carry_pair *p = &pairs[i];
        double x = p->log_peak, y = p->log_bandwidth;
        /* log(t_to/t_from) = a·x + b·y + log(1 + phi/m) − log(1 + phi) */
        double z = p->log_time - log1p(phi / p->memory) + log1p(phi);
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
static cf_carry_rule fit_rule(const carry_pair *pairs, size_t n, int skip_model, const cf_gpu *skip_a,
                              const cf_gpu *skip_b)
{
    const cf_gpu *const skip_gpu[2] = {skip_a, skip_b};
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

/* ln(predicted / measured) of pair p under `rule`. */
static double log_error(const carry_pair *p, const cf_carry_rule *rule)
{
    double r = cf_gpu_time_ratio_between_with(p->from, p->from_precision, p->to, p->to_precision, rule->peak_exponent,
                                              rule->bandwidth_exponent);
    double phi = rule->overhead_fraction > 0 ? rule->overhead_fraction : 0;
    return log((1.0 + phi) / (r * (1.0 + phi / memory_ratio(p))) / p->measured_ratio);
}

/* ---- the interval's constants (cf_carry_sigma) by maximum likelihood -------------------------- */

enum { SIGMA_TERMS = 5 };

/* The squared feature of each σ term of pair p (σ² = Σ θ_k²·f_k; the
 * vendor term is left out: the data has one vendor). */
static void sigma_features(const carry_pair *p, double f[SIGMA_TERMS])
{
    cf_carry_sigma_rule unit = {1, 0, 0, 0, 0, 0};
    f[0] = 1;
    unit = (cf_carry_sigma_rule){0, 1, 0, 0, 0, 0};
    f[1] = pow(cf_carry_sigma(p->from, p->from_precision, p->to, p->to_precision, &unit), 2);
    unit = (cf_carry_sigma_rule){0, 0, 1, 0, 0, 0};
    f[2] = pow(cf_carry_sigma(p->from, p->from_precision, p->to, p->to_precision, &unit), 2);
    unit = (cf_carry_sigma_rule){0, 0, 0, 1, 0, 0};
    f[3] = pow(cf_carry_sigma(p->from, p->from_precision, p->to, p->to_precision, &unit), 2);
    unit = (cf_carry_sigma_rule){0, 0, 0, 0, 1, 0};
    f[4] = pow(cf_carry_sigma(p->from, p->from_precision, p->to, p->to_precision, &unit), 2);
}

static double *theta_of(cf_carry_sigma_rule *r, int k)
{
    double *t[SIGMA_TERMS] = {&r->base, &r->half, &r->per_generation, &r->precision, &r->per_peak_log};
    return t[k];
}

/* Negative log-likelihood (up to a constant) of the errors `e2` (squared)
 * of the pairs `use` marks, with term k at value v and the other terms'
 * variance `rest`. */
static double nll_along(const double *features, const double *e2, const double *rest, const char *use, size_t n, int k,
                        double v)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!use[i])
            continue;
        double var = rest[i] + v * v * features[i * SIGMA_TERMS + k];
        sum += 0.5 * log(var) + 0.5 * e2[i] / var;
    }
    return sum;
}

/* The five constants by coordinate descent: each term on a grid of step
 * 0.02 over [0, 0.8] (the base from 0.02), refined in steps of 0.005 around
 * the best point; eight sweeps (bench/carry_sigma_lab.py does the same). */
static cf_status fit_sigma(const double *features, const double *e2, const char *use, size_t n,
                           cf_carry_sigma_rule *out)
{
    double *rest = malloc((n ? n : 1) * sizeof *rest);
    if (!rest)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_carry_sigma_rule r = {0.2, 0, 0, 0, 0, CF_CARRY_SIGMA_VENDOR};
    for (int sweep = 0; sweep < 8; sweep++) {
        for (int k = 0; k < SIGMA_TERMS; k++) {
            for (size_t i = 0; i < n; i++) {
                rest[i] = 0;
                for (int j = 0; j < SIGMA_TERMS; j++)
                    if (j != k)
                        rest[i] += *theta_of(&r, j) * *theta_of(&r, j) * features[i * SIGMA_TERMS + j];
            }
            double lo = k == 0 ? 0.02 : 0.0, best_v = lo;
            double best = nll_along(features, e2, rest, use, n, k, lo);
            for (double v = lo + 0.02; v <= 0.8 + 1e-9; v += 0.02) {
                double l = nll_along(features, e2, rest, use, n, k, v);
                if (l < best) {
                    best = l;
                    best_v = v;
                }
            }
            double centre = best_v;
            for (int step = -3; step <= 3; step++) {
                double v = centre + 0.005 * step;
                if (v < lo || v > 0.8 + 1e-9 || step == 0)
                    continue;
                double l = nll_along(features, e2, rest, use, n, k, v);
                if (l < best) {
                    best = l;
                    best_v = v;
                }
            }
            *theta_of(&r, k) = best_v;
        }
    }
    free(rest);
    *out = r;
    return CF_OK;
}

/* ---- the pairs ------------------------------------------------------------------------------ */

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

/* Every (from row, to GPU, to precision) of one model and benchmark whose
 * two GPUs are in the table with the rates the rule needs. */
static cf_status collect_pairs(const cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus, carry_pair **out,
                               size_t *n_out, size_t *n_models)
{
    static const char *const precisions[] = {"fp32", "tf32", "fp16", "bf16", "amp"};
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
        const cf_gpu *from = gpu_of(gpus, n_gpus, key->gpu);
        if (key->gpu_count != 1 || key->suspect || !from || !first_of_its_kind(set, i))
            continue;
        int model_index = -1;
        for (size_t m = 0; m < *n_models; m++)
            if (!strcmp(model_names[m], key->model))
                model_index = (int)m;
        if (model_index < 0) {
            model_names[*n_models] = key->model;
            model_index = (int)(*n_models)++;
        }
        double from_x = median_throughput(set, key->gpu, key->model, key->precision, key->benchmark, tmp);
        cf_precision p_from = precision_of(key->precision);
        for (size_t q = 0; q < sizeof precisions / sizeof *precisions; q++) {
            cf_precision p_to = precision_of(precisions[q]);
            for (size_t j = 0; j < n_gpus; j++) {
                const cf_gpu *to = &gpus[j];
                if (to == from || to->memory_bandwidth_gbs <= 0 || cf_gpu_peak_tflops(to, p_to) <= 0 ||
                    cf_gpu_peak_tflops(from, p_from) <= 0 || from->memory_bandwidth_gbs <= 0)
                    continue;
                double to_x = median_throughput(set, to->model, key->model, precisions[q], key->benchmark, tmp);
                if (to_x <= 0)
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
                carry_pair *p = &pairs[n++];
                *p = (carry_pair){key->model, key->benchmark, p_from, p_to, from, to, to_x / from_x,
                                  model_index, strcmp(precisions[q], key->precision) != 0, 0, 0, 0, 0};
                p->log_peak = log(cf_gpu_peak_tflops(from, p_from) / cf_gpu_peak_tflops(to, p_to));
                p->log_bandwidth = log(from->memory_bandwidth_gbs / to->memory_bandwidth_gbs);
                p->log_time = log(1.0 / p->measured_ratio);
                p->memory = memory_ratio(p);
            }
        }
    }
    free(tmp);
    free(model_names);
    *out = pairs;
    *n_out = n;
    return CF_OK;
}

/* Errors and coverage of one method over the pairs `use` marks. */
static cf_status score_of(const double *log_errors, const double *sigmas, const char *use, size_t n, cf_ape_stats *out)
{
    double *rel = malloc((n ? n : 1) * sizeof *rel);
    if (!rel)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    double z80 = cf_normal_two_sided_z(CF_INTERVAL_LEVEL);
    size_t k = 0, covered = 0;
    for (size_t i = 0; i < n; i++) {
        if (!use[i])
            continue;
        rel[k++] = expm1(log_errors[i]);
        if (sigmas)
            covered += fabs(log_errors[i]) <= z80 * sigmas[i];
    }
    *out = cf_ape_summarise(rel, k);
    out->interval_coverage = sigmas && k ? (double)covered / (double)k : -1;
    free(rel);
    return CF_OK;
}

/* Whether some pair predicts GPU `to` without touching `other` (NULL: any). */
static int predicts(const carry_pair *pairs, size_t n, const cf_gpu *to, const cf_gpu *other)
{
    for (size_t i = 0; i < n; i++)
        if (pairs[i].to == to && !touches(&pairs[i], other))
            return 1;
    return 0;
}

/* Leave one GPU type out over every pair: each pair's error under the rule
 * fitted without its `to` GPU (logo_error), and the σ constants fitted on
 * every pair's such error (fitted_all, what the shipped ones were chosen
 * on). The interval of a pair into GPU g (logo_sigma) has σ constants
 * fitted on the other pairs' errors under rules fitted without g as well
 * (nested): the errors of logo_error itself come from fits that saw g's
 * pairs, and would carry g's own rows into the interval that predicts it. */
static cf_status leave_gpu_out(const carry_pair *pairs, size_t n, const cf_gpu *gpus, size_t n_gpus,
                               const double *features, double *logo_error, double *logo_sigma,
                               cf_carry_sigma_rule *fitted_all)
{
    double *e2 = calloc(n ? n : 1, sizeof *e2);
    char *use = calloc(n ? n : 1, 1);
    if (!e2 || !use) {
        free(e2); free(use);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    for (size_t g = 0; g < n_gpus; g++) {
        if (!predicts(pairs, n, &gpus[g], NULL))
            continue;
        cf_carry_rule rule = fit_rule(pairs, n, -1, &gpus[g], NULL);
        for (size_t i = 0; i < n; i++)
            if (pairs[i].to == &gpus[g])
                logo_error[i] = log_error(&pairs[i], &rule);
    }
    for (size_t i = 0; i < n; i++) {
        e2[i] = logo_error[i] * logo_error[i];
        use[i] = 1;
    }
    cf_status st = fit_sigma(features, e2, use, n, fitted_all);
    for (size_t g = 0; g < n_gpus && st == CF_OK; g++) {
        const cf_gpu *held = &gpus[g];
        if (!predicts(pairs, n, held, NULL))
            continue;
        for (size_t i = 0; i < n; i++)
            use[i] = !touches(&pairs[i], held);
        for (size_t h = 0; h < n_gpus; h++) {
            if (&gpus[h] == held || !predicts(pairs, n, &gpus[h], held))
                continue;
            cf_carry_rule rule = fit_rule(pairs, n, -1, held, &gpus[h]);
            for (size_t i = 0; i < n; i++)
                if (use[i] && pairs[i].to == &gpus[h]) {
                    double e = log_error(&pairs[i], &rule);
                    e2[i] = e * e;
                }
        }
        cf_carry_sigma_rule r;
        st = fit_sigma(features, e2, use, n, &r);
        for (size_t i = 0; i < n && st == CF_OK; i++)
            if (pairs[i].to == held)
                logo_sigma[i] = cf_carry_sigma(pairs[i].from, pairs[i].from_precision, pairs[i].to,
                                               pairs[i].to_precision, &r);
    }
    free(e2);
    free(use);
    return st;
}

/* Per (from, to) GPU types: the leave-one-GPU-out errors and coverage. */
static cf_status score_gpu_pairs(const carry_pair *pairs, size_t n, const cf_gpu *gpus, size_t n_gpus,
                                 const double *logo_error, const double *logo_sigma, cf_carry_validation *out)
{
    char *use = malloc(n ? n : 1);
    out->gpu_pairs = malloc((n_gpus > 0 ? n_gpus * n_gpus : 1) * sizeof *out->gpu_pairs);
    if (!use || !out->gpu_pairs) {
        free(use);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    out->n_gpu_pairs = 0;
    cf_status st = CF_OK;
    for (size_t a = 0; a < n_gpus && st == CF_OK; a++) {
        for (size_t b = 0; b < n_gpus && st == CF_OK; b++) {
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                use[i] = pairs[i].from == &gpus[a] && pairs[i].to == &gpus[b];
                k += use[i];
            }
            if (!k)
                continue;
            cf_ape_stats s;
            st = score_of(logo_error, logo_sigma, use, n, &s);
            out->gpu_pairs[out->n_gpu_pairs++] = (cf_carry_gpu_pair){gpus[a].model, gpus[b].model, s.n, s.median_ape,
                                                                     s.interval_coverage};
        }
    }
    free(use);
    return st;
}

void cf_carry_validation_free(cf_carry_validation *v)
{
    free(v->gpu_pairs);
    v->gpu_pairs = NULL;
    v->n_gpu_pairs = 0;
}

cf_status cf_validate_crossgpu(const cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus, cf_carry_validation *out)
{
    static const char *const names[] = {"peak",          "bandwidth",       "geomean",   "cloudfit", "cloudfit-lomo",
                                        "cloudfit-logo", "cross-precision", "cross-fp32"};
    static const char *const descriptions[] = {
        "peak FLOP/s ratio at the run's precision", "memory-bandwidth ratio", "geometric mean of the two",
        "cloudfit: peak^" CF_STR(CF_CARRY_PEAK_EXPONENT) " · bandwidth^" CF_STR(CF_CARRY_BANDWIDTH_EXPONENT)
        ", fixed share " CF_STR(CF_CARRY_OVERHEAD_FRACTION) " at memory-size batch ratio",
        "cloudfit's rule, its 3 parameters refitted without the predicted model",
        "cloudfit's rule and interval refitted without the predicted pair's GPU types",
        "pairs across precisions: cloudfit's rule, each run's peak at its own precision",
        "pairs across precisions: cloudfit's rule with FP32 peaks on both sides (precision ignored)"};
    memset(out, 0, sizeof *out);
    carry_pair *pairs = NULL;
    size_t n = 0;
    cf_status st = collect_pairs(set, gpus, n_gpus, &pairs, &n, &out->n_models);
    if (st != CF_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        pairs[i].cross ? out->n_cross_pairs++ : out->n_pairs++;
    if (out->n_pairs == 0) {
        free(pairs);
        cf_error_set(CF_ERR_INVALID, "no pair to score: no model has single-GPU throughput at one precision on two "
                                     "GPU types of the GPU table");
        cf_error_hint("the file needs rows with gpu_count 1 of one model, precision and benchmark on at least two "
                      "known GPU types");
        return CF_ERR_INVALID;
    }
    double *errors = malloc(n * CF_CARRY_METHODS * sizeof *errors);
    double *features = malloc(n * SIGMA_TERMS * sizeof *features);
    double *shipped_sigma = malloc(n * sizeof *shipped_sigma), *logo_sigma = malloc(n * sizeof *logo_sigma);
    double *logo_error = malloc(n * sizeof *logo_error);
    char *same = malloc(n), *cross = malloc(n), *all = malloc(n);
    cf_carry_rule *lomo = malloc((out->n_models ? out->n_models : 1) * sizeof *lomo);
    if (!errors || !features || !shipped_sigma || !logo_sigma || !logo_error || !same || !cross || !all || !lomo) {
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t m = 0; m < out->n_models; m++)
        lomo[m] = fit_rule(pairs, n, (int)m, NULL, NULL);
    cf_carry_rule shipped = cf_carry_rule_default();
    for (size_t i = 0; i < n; i++) {
        const carry_pair *p = &pairs[i];
        same[i] = !p->cross;
        cross[i] = (char)p->cross;
        all[i] = 1;
        sigma_features(p, &features[i * SIGMA_TERMS]);
        shipped_sigma[i] = cf_carry_sigma(p->from, p->from_precision, p->to, p->to_precision, NULL);
        double peak = cf_gpu_peak_tflops(p->to, p->to_precision) / cf_gpu_peak_tflops(p->from, p->from_precision);
        double bw = p->to->memory_bandwidth_gbs / p->from->memory_bandwidth_gbs;
        cf_carry_rule fp32 = shipped;
        carry_pair as_fp32 = *p;
        as_fp32.from_precision = as_fp32.to_precision = CF_PREC_FP32;
        double predicted[] = {peak, bw, sqrt(peak * bw)};
        for (int k = 0; k < 3; k++)
            errors[(size_t)k * n + i] = log(predicted[k] / p->measured_ratio);
        errors[(size_t)CF_CARRY_CLOUDFIT * n + i] = log_error(p, &shipped);
        errors[(size_t)CF_CARRY_CLOUDFIT_LOMO * n + i] = log_error(p, &lomo[p->model_index]);
        errors[(size_t)CF_CARRY_CROSS_PRECISION * n + i] = log_error(p, &shipped);
        errors[(size_t)CF_CARRY_CROSS_FP32 * n + i] = log_error(&as_fp32, &fp32);
    }
    if ((st = leave_gpu_out(pairs, n, gpus, n_gpus, features, logo_error, logo_sigma, &out->sigma_fitted)) != CF_OK)
        goto done;
    memcpy(&errors[(size_t)CF_CARRY_CLOUDFIT_LOGO * n], logo_error, n * sizeof *logo_error);
    for (int k = 0; k < CF_CARRY_METHODS && st == CF_OK; k++) {
        out->scores[k].name = names[k];
        out->scores[k].description = descriptions[k];
        const char *use = k == CF_CARRY_CROSS_PRECISION || k == CF_CARRY_CROSS_FP32 ? cross : same;
        const double *sigmas = k == CF_CARRY_CLOUDFIT || k == CF_CARRY_CLOUDFIT_LOMO || k == CF_CARRY_CROSS_PRECISION
                                   ? shipped_sigma
                                   : k == CF_CARRY_CLOUDFIT_LOGO ? logo_sigma : NULL;
        st = score_of(&errors[(size_t)k * n], sigmas, use, n, &out->scores[k].stats);
    }
    if (st == CF_OK)
        st = score_of(logo_error, logo_sigma, all, n, &out->overall);
    if (st == CF_OK)
        st = score_gpu_pairs(pairs, n, gpus, n_gpus, logo_error, logo_sigma, out);
done:
    if (st != CF_OK)
        cf_carry_validation_free(out);
    free(pairs); free(errors); free(features); free(shipped_sigma); free(logo_sigma); free(logo_error);
    free(same); free(cross); free(all); free(lomo);
    return st;
}

size_t cf_crossgpu_resolve_gpus(cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus, char *unknown, size_t n)
{
    enum { NAMED = 3 }; /* GPU names said; the others counted */
    size_t n_unknown = 0, n_names = 0, len = 0;
    if (unknown && n)
        unknown[0] = '\0';
    for (size_t i = 0; i < set->n_rows; i++) {
        const cf_gpu *g = cf_gpu_resolve(gpus, n_gpus, set->rows[i].gpu);
        if (g) {
            snprintf(set->rows[i].gpu, sizeof set->rows[i].gpu, "%s", g->model);
            continue;
        }
        n_unknown++;
        int seen = 0; /* an earlier row of the name (unresolved too: a resolved one was renamed) */
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(set->rows[j].gpu, set->rows[i].gpu) == 0;
        if (seen)
            continue;
        if (n_names++ < NAMED && unknown && len < n)
            len += (size_t)snprintf(unknown + len, n - len, "%s%s", n_names > 1 ? ", " : "", set->rows[i].gpu);
    }
    if (n_names > NAMED && unknown && len < n)
        snprintf(unknown + len, n - len, " and %zu more", n_names - NAMED);
    return n_unknown;
}
