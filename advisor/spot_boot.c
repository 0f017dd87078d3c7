#include "cloudfit/advisor/spot_boot.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

cf_status cf_spot_path_block_bootstrap(const cf_spot_path *trace, double block_h, double hours, unsigned long seed,
                                       cf_spot_path *out)
{
    memset(out, 0, sizeof *out);
    out->n_types = trace->n_types;
    int k = trace->n_types > 0 ? trace->n_types : 1;
    double *cum = malloc((trace->n + 1) * sizeof *cum);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    cf_status st = cum && rng ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory");
    if (st == CF_OK) {
        gsl_rng_set(rng, seed);
        cum[0] = 0;
        for (size_t i = 0; i < trace->n; i++)
            cum[i + 1] = cum[i] + trace->d_h[i];
    }
    while (st == CF_OK && out->total_h < hours) {
        double s = gsl_rng_uniform(rng) * cum[trace->n];
        size_t lo = 0, hi = trace->n;
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (cum[mid] <= s)
                lo = mid;
            else
                hi = mid;
        }
        double need = block_h, left = cum[lo + 1] - s;
        size_t i = lo;
        while (need > 1e-12 && st == CF_OK) {
            double d = fmin(left, need);
            st = cf_spot_path_push(out, d, &trace->c[i * (size_t)k]);
            need -= d;
            if (++i == trace->n)
                i = 0;
            left = trace->d_h[i];
        }
    }
    free(cum);
    if (rng)
        gsl_rng_free(rng);
    if (st != CF_OK)
        cf_spot_path_free(out);
    return st;
}

static int up_at(const cf_spot_path *p, size_t i) { return p->c[i * (size_t)(p->n_types > 0 ? p->n_types : 1)] > 0; }

cf_status cf_spot_path_cycle_bootstrap(const cf_spot_path *trace, int cycles_per_block, double hours,
                                       unsigned long seed, cf_spot_path *out)
{
    memset(out, 0, sizeof *out);
    out->n_types = trace->n_types;
    int k = trace->n_types > 0 ? trace->n_types : 1;
    size_t n = trace->n;
    /* Cycle starts: an UP segment after a DOWN one (circularly). */
    size_t *starts = malloc((n + 1) * sizeof *starts), n_starts = 0;
    if (!starts)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (up_at(trace, i) && !up_at(trace, (i + n - 1) % n))
            starts[n_starts++] = i;
    if (n_starts < 1) {
        free(starts);
        return cf_error_set(CF_ERR_INVALID, "the trace has no complete UP/DOWN cycle");
    }
    /* Cycle j runs from starts[j] to starts[j + 1] (circular, all complete). */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    cf_status st = rng ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory");
    if (rng)
        gsl_rng_set(rng, seed);
    while (st == CF_OK && out->total_h < hours) {
        size_t j = gsl_rng_uniform_int(rng, n_starts);
        size_t block = cycles_per_block > 1 ? (size_t)cycles_per_block : 1;
        if (block > n_starts)
            block = n_starts;
        size_t i = starts[j], end = starts[(j + block) % n_starts];
        do {
            st = cf_spot_path_push(out, trace->d_h[i], &trace->c[i * (size_t)k]);
            i = (i + 1) % n;
        } while (i != end && st == CF_OK);
    }
    free(starts);
    if (rng)
        gsl_rng_free(rng);
    if (st != CF_OK)
        cf_spot_path_free(out);
    return st;
}
