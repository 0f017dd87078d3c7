#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/validate.h"

typedef struct {
    const char *model, *precision, *benchmark;
    const cf_gpu *from, *to;
    double measured_ratio;      /* throughput_to / throughput_from */
    int model_index;
} carry_pair;

static cf_precision precision_of(const char *p)
{
    if (!strcmp(p, "fp16") || !strcmp(p, "amp"))
        return CF_PREC_FP16;
    if (!strcmp(p, "tf32"))
        return CF_PREC_TF32;
    return CF_PREC_FP32;
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

/* Least squares of log(measured time ratio) on the two log ratios, without
 * an intercept, leaving out pairs of `skip_model` (−1: use all). */
static void fit_exponents(const carry_pair *pairs, size_t n, int skip_model, double *a, double *b)
{
    double sxx = 0, sxy = 0, syy = 0, sxz = 0, syz = 0;
    for (size_t i = 0; i < n; i++) {
        if (pairs[i].model_index == skip_model)
            continue;
        cf_precision prec = precision_of(pairs[i].precision);
        double x = log(cf_gpu_peak_tflops(pairs[i].from, prec) / cf_gpu_peak_tflops(pairs[i].to, prec));
        double y = log(pairs[i].from->memory_bandwidth_gbs / pairs[i].to->memory_bandwidth_gbs);
        double z = log(1.0 / pairs[i].measured_ratio); /* time ratio to/from */
        sxx += x * x; sxy += x * y; syy += y * y; sxz += x * z; syz += y * z;
    }
    double det = sxx * syy - sxy * sxy;
    if (fabs(det) < 1e-12) {
        *a = CF_CARRY_PEAK_EXPONENT;
        *b = CF_CARRY_BANDWIDTH_EXPONENT;
        return;
    }
    *a = (sxz * syy - syz * sxy) / det;
    *b = (syz * sxx - sxz * sxy) / det;
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
        /* Each (model, precision, benchmark, from-GPU) once: at its first row. */
        int first = 1;
        for (size_t k = 0; k < i && first; k++) {
            const cf_crossgpu_row *o = &set->rows[k];
            if (o->gpu_count == 1 && !o->suspect && !strcmp(o->gpu, key->gpu) && !strcmp(o->model, key->model) &&
                !strcmp(o->precision, key->precision) && !strcmp(o->benchmark, key->benchmark))
                first = 0;
        }
        if (!first)
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

cf_status cf_validate_crossgpu(const cf_crossgpu_set *set, const cf_gpu *gpus, size_t n_gpus,
                               cf_carry_score scores[CF_CARRY_METHODS], size_t *out_pairs, size_t *out_models)
{
    static const char *const names[] = {"peak", "bandwidth", "geomean", "cloudfit", "cloudfit-lomo"};
    static const char *const descriptions[] = {
        "peak FLOP/s ratio at the run's precision", "memory-bandwidth ratio", "geometric mean of the two",
        "cloudfit: peak^0.302 · bandwidth^0.588", "cloudfit's rule refitted without the predicted model"};
    carry_pair *pairs = NULL;
    size_t n = 0;
    cf_status st = collect_pairs(set, gpus, n_gpus, &pairs, &n, out_models);
    if (st != CF_OK)
        return st;
    double *errors = malloc((n ? n : 1) * CF_CARRY_METHODS * sizeof *errors);
    double *lomo_a = malloc((*out_models ? *out_models : 1) * sizeof *lomo_a);
    double *lomo_b = malloc((*out_models ? *out_models : 1) * sizeof *lomo_b);
    if (!errors || !lomo_a || !lomo_b) {
        free(pairs); free(errors); free(lomo_a); free(lomo_b);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    for (size_t m = 0; m < *out_models; m++)
        fit_exponents(pairs, n, (int)m, &lomo_a[m], &lomo_b[m]);
    for (size_t i = 0; i < n; i++) {
        const carry_pair *p = &pairs[i];
        cf_precision prec = precision_of(p->precision);
        double peak = cf_gpu_peak_tflops(p->to, prec) / cf_gpu_peak_tflops(p->from, prec);
        double bw = p->to->memory_bandwidth_gbs / p->from->memory_bandwidth_gbs;
        double predicted[CF_CARRY_METHODS] = {
            peak, bw, sqrt(peak * bw), 1.0 / cf_gpu_time_ratio(p->from, p->to, prec),
            1.0 / cf_gpu_time_ratio_with(p->from, p->to, prec, lomo_a[p->model_index], lomo_b[p->model_index])};
        for (int k = 0; k < CF_CARRY_METHODS; k++)
            errors[(size_t)k * n + i] = predicted[k] / p->measured_ratio - 1.0;
    }
    for (int k = 0; k < CF_CARRY_METHODS; k++) {
        scores[k].name = names[k];
        scores[k].description = descriptions[k];
        scores[k].stats = cf_ape_summarise(&errors[(size_t)k * n], n);
    }
    *out_pairs = n;
    free(pairs); free(errors); free(lomo_a); free(lomo_b);
    return CF_OK;
}
