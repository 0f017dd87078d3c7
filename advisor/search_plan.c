/* Which runs profile one GPU type (include/cloudfit/search.h): the light
 * profile the search starts with, and the 2-node × 1-GPU probe that
 * `cloudfit profile --runner` adds. Pure selection over the candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/search.h"

static int is_type(const cf_search_candidate *c, const char *gpu) { return strcasecmp(c->gpu, gpu) == 0; }

/* Of the candidates of `gpu` with this shape (nodes, GPUs per node), one per
 * per-GPU batch — the cheapest VM, then the lowest index — in ascending
 * batch order. Returns the count written to out (room for n). */
static size_t one_per_batch(const cf_search_candidate *cands, size_t n, const char *gpu,
                            const unsigned char *excluded, int nodes, int gpus_per_node, size_t *out)
{
    size_t k = 0;
    for (size_t c = 0; c < n; c++) {
        const cf_search_candidate *a = &cands[c];
        if ((excluded && excluded[c]) || !is_type(a, gpu) || a->nodes != nodes || a->gpus_per_node != gpus_per_node)
            continue;
        size_t i;
        for (i = 0; i < k && cands[out[i]].local_batch != a->local_batch; i++)
            ;
        if (i < k) {
            if (a->usd_per_node_hr < cands[out[i]].usd_per_node_hr)
                out[i] = c; /* c > out[i]: the lower index wins ties */
            continue;
        }
        /* Insert keeping the batches ascending. */
        for (i = k; i > 0 && cands[out[i - 1]].local_batch > a->local_batch; i--)
            out[i] = out[i - 1];
        out[i] = c;
        k++;
    }
    return k;
}

/* Smallest, largest, middle (up to `want`), without repeats. */
static size_t spread(const size_t *sorted, size_t n, int want, size_t *out, size_t n_out)
{
    if (n == 0)
        return n_out;
    size_t pick[3] = {0, n - 1, n / 2};
    for (int i = 0; i < want && i < 3; i++) {
        if ((i == 1 && pick[1] == pick[0]) || (i == 2 && (pick[2] == pick[0] || pick[2] == pick[1])))
            continue;
        out[n_out++] = sorted[pick[i]];
    }
    return n_out;
}

cf_status cf_search_light_profile(const cf_search_candidate *cands, size_t n, const char *gpu,
                                  const unsigned char *excluded, size_t out[CF_SEARCH_PROFILE_MAX_RUNS], size_t *n_out)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    *n_out = 0;
    if (!idx)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    int g_full = 1;
    for (size_t c = 0; c < n; c++)
        if ((!excluded || !excluded[c]) && is_type(&cands[c], gpu) && cands[c].nodes == 1 &&
            cands[c].gpus_per_node > g_full)
            g_full = cands[c].gpus_per_node;
    *n_out = spread(idx, one_per_batch(cands, n, gpu, excluded, 1, 1, idx), 3, out, 0);
    if (g_full > 1)
        *n_out = spread(idx, one_per_batch(cands, n, gpu, excluded, 1, g_full, idx), 2, out, *n_out);
    free(idx);
    return CF_OK;
}

cf_status cf_search_two_node_probe(const cf_search_candidate *cands, size_t n, const char *gpu,
                                   const unsigned char *excluded, size_t out[2], size_t *n_out)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    *n_out = 0;
    if (!idx)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    *n_out = spread(idx, one_per_batch(cands, n, gpu, excluded, 2, 1, idx), 2, out, 0);
    free(idx);
    return CF_OK;
}

cf_status cf_search_prior(const cf_inputs *inputs, const cf_gpu *gpus, size_t n_gpus, const cf_search_candidate *cands,
                          size_t n, cf_gpu_perf **out, size_t *n_out)
{
    *n_out = 0;
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t c = 0; c < n; c++) {
        size_t k;
        for (k = 0; k < *n_out; k++)
            if (!strcasecmp((*out)[k].gpu, cands[c].gpu))
                break;
        if (k < *n_out)
            continue;
        cf_gpu_perf *p = &(*out)[(*n_out)++];
        const cf_gpu_perf *known = inputs ? cf_inputs_perf(inputs, cands[c].gpu) : NULL;
        if (known)
            *p = *known;
        snprintf(p->gpu, sizeof p->gpu, "%s", cands[c].gpu);
        if (p->params.beta_s <= 0)
            p->params = cf_perf_defaults(cf_gpu_find(gpus, n_gpus, cands[c].gpu));
    }
    return CF_OK;
}
