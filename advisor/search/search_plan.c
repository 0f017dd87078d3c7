/* Which runs profile one GPU type (include/cloudfit/search.h): the light
 * profile the search starts with, and the 2-node × 1-GPU probe that
 * `cloudfit profile --runner` adds. Pure selection over the candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/search.h"
#include "cloudfit/common/buf.h"
#include "../model/inputs_internal.h"
#include "../model/perf_internal.h"
#include "search_internal.h"

static int is_type(const cf_search_candidate *c, const char *gpu) { return strcasecmp(c->gpu, gpu) == 0; }

int cf_search_within_limits(const cf_constraints *limits, int nodes, int gpus_per_node, int local_batch)
{
    return nodes <= limits->max_nodes && (long)nodes * gpus_per_node <= limits->max_gpus &&
           (long)nodes * gpus_per_node * local_batch <= limits->max_global_batch;
}

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

size_t cf_search_spread(size_t n, int want, size_t out[3])
{
    if (n == 0)
        return 0;
    size_t pick[3] = {0, n - 1, n / 2}, k = 0;
    for (int i = 0; i < want && i < 3; i++) {
        if ((i == 1 && pick[1] == pick[0]) || (i == 2 && (pick[2] == pick[0] || pick[2] == pick[1])))
            continue;
        out[k++] = pick[i];
    }
    return k;
}

/* Smallest, largest, middle (up to `want`) of the sorted candidates. */
static size_t spread(const size_t *sorted, size_t n, int want, size_t *out, size_t n_out)
{
    size_t pos[3];
    size_t k = cf_search_spread(n, want, pos);
    for (size_t i = 0; i < k; i++)
        out[n_out++] = sorted[pos[i]];
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
    *n_out = spread(idx, one_per_batch(cands, n, gpu, excluded, 1, 1, idx), CF_SEARCH_PROFILE_BATCHES_ONE, out, 0);
    if (g_full > 1)
        *n_out = spread(idx, one_per_batch(cands, n, gpu, excluded, 1, g_full, idx), CF_SEARCH_PROFILE_BATCHES_FULL,
                        out, *n_out);
    free(idx);
    return CF_OK;
}

/* The probe's runs at `nodes` VMs × `gpus` GPUs (cf_search_two_node_probe: 2 × 1). */
static cf_status probe_of_shape(const cf_search_candidate *cands, size_t n, const char *gpu,
                                const unsigned char *excluded, int nodes, int gpus, size_t out[2], size_t *n_out)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    *n_out = 0;
    if (!idx)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    *n_out = spread(idx, one_per_batch(cands, n, gpu, excluded, nodes, gpus, idx), CF_SEARCH_PROBE_BATCHES, out, 0);
    free(idx);
    return CF_OK;
}

cf_status cf_search_two_node_probe(const cf_search_candidate *cands, size_t n, const char *gpu,
                                   const unsigned char *excluded, size_t out[2], size_t *n_out)
{
    /* 2 × 1 where it can run; else the fewest VMs above one, at the fewest
     * GPUs each, that can (a runner that offers only whole 8-GPU VMs, or a
     * trace without 2-VM rows): without any multi-node run the network is
     * the default, which can be 10× off either way, and no probe would be
     * bought to find out. */
    int nodes = 0, g = 0; /* the least multi-VM shape: fewest VMs, then fewest GPUs each */
    for (size_t c = 0; c < n; c++) {
        const cf_search_candidate *k = &cands[c];
        if ((excluded && excluded[c]) || k->nodes < 2 || !is_type(k, gpu))
            continue;
        if (!nodes || k->nodes < nodes || (k->nodes == nodes && k->gpus_per_node < g))
            nodes = k->nodes, g = k->gpus_per_node;
    }
    *n_out = 0;
    cf_status st = CF_OK;
    if (nodes)
        st = probe_of_shape(cands, n, gpu, excluded, nodes, g, out, n_out);
    return st;
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
            p->params = cf_perf_defaults(cf_gpu_resolve(gpus, n_gpus, cands[c].gpu));
    }
    return CF_OK;
}

/* ---- candidates from catalog offers ----------------------------------------------- */

static int same_offer(const cf_vm *a, const cf_vm *b)
{
    return !strcmp(a->cloud, b->cloud) && !strcmp(a->instance_type, b->instance_type) &&
           !strcasecmp(a->gpu_model, b->gpu_model) && a->gpu_count == b->gpu_count;
}

cf_status cf_search_catalog_candidates(const cf_constraints *limits, const int *local_batches, int n_local_batches,
                                       const cf_vm *const *rows, size_t n_rows, cf_search_candidate **out,
                                       size_t *n_out)
{
    int batches[CF_SPEC_MAX_BATCHES], n_batches = 0;
    for (int i = 0; i < n_local_batches && i < CF_SPEC_MAX_BATCHES; i++)
        batches[n_batches++] = local_batches[i];
    if (n_batches == 0)
        for (int b = 8; b <= 256; b *= 2)
            batches[n_batches++] = b;
    size_t cap = n_rows * 10 * (size_t)n_batches + 1, n = 0;
    cf_search_candidate *c = calloc(cap, sizeof *c);
    if (!c)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t r = 0; r < n_rows; r++) {
        const cf_vm *vm = rows[r];
        int cheapest = vm->price_ondemand_usd_per_hr > 0;
        for (size_t q = 0; q < n_rows && cheapest; q++)
            if (q != r && same_offer(vm, rows[q]) && rows[q]->price_ondemand_usd_per_hr > 0 &&
                (rows[q]->price_ondemand_usd_per_hr < vm->price_ondemand_usd_per_hr ||
                 (rows[q]->price_ondemand_usd_per_hr == vm->price_ondemand_usd_per_hr && q < r)))
                cheapest = 0;
        if (!cheapest)
            continue;
        /* The profile needs single-GPU runs: without a 1-GPU VM of this GPU
         * model, one GPU of this VM (paid in full) is a candidate too. */
        int has_single = 0;
        for (size_t q = 0; q < n_rows; q++)
            has_single |= rows[q]->gpu_count == 1 && !strcasecmp(rows[q]->gpu_model, vm->gpu_model);
        for (int single = 0; single <= (!has_single && vm->gpu_count > 1); single++) {
            int g = single ? 1 : vm->gpu_count;
            for (int nodes = 1; nodes <= (single ? 1 : limits->max_nodes) && nodes * g <= limits->max_gpus; nodes *= 2)
                for (int b = 0; b < n_batches && n < cap; b++) {
                    long global = (long)nodes * g * batches[b];
                    if (global > limits->max_global_batch)
                        continue;
                    cf_search_candidate *k = &c[n++];
                    k->vm = vm;
                    snprintf(k->gpu, sizeof k->gpu, "%s", vm->gpu_model);
                    k->nodes = nodes;
                    k->gpus_per_node = g;
                    k->local_batch = batches[b];
                    k->usd_per_node_hr = vm->price_ondemand_usd_per_hr;
                    k->network_gbps = vm->network_gbps;
                }
        }
    }
    *out = c;
    *n_out = n;
    return CF_OK;
}

/* ---- the plan of a profile through a runner ------------------------------------- */

/* Out of the plan: other GPU types, with an instance type the multi-GPU
 * shapes of other VMs (1-GPU runs may use a 1-GPU VM of the same GPU), and
 * shapes beyond the limits (a trace's rows are not held to them as the
 * catalog's candidates are). */
static cf_status mark_excluded(const cf_search_candidate *cands, size_t n, const char *gpu, const char *instance_type,
                               const cf_constraints *limits, int from_trace, unsigned char *excluded)
{
    size_t n_type = 0, n_instance = 0;
    for (size_t c = 0; c < n; c++) {
        const cf_search_candidate *k = &cands[c];
        int other_type = strcasecmp(k->gpu, gpu) != 0;
        int other_vm = instance_type && k->gpus_per_node > 1 && (!k->vm || strcmp(k->vm->instance_type, instance_type));
        int beyond = !cf_search_within_limits(limits, k->nodes, k->gpus_per_node, k->local_batch);
        excluded[c] = (unsigned char)(other_type || other_vm || beyond);
        n_type += !other_type;
        n_instance += !other_type && instance_type && k->vm && strcmp(k->vm->instance_type, instance_type) == 0;
    }
    if (n_type == 0) {
        cf_error_set(CF_ERR_INVALID, "no configuration of GPU '%s'", gpu);
        cf_error_hint(from_trace ? "the trace has no priced rows of this GPU for this model (see --trace-model)"
                                 : "the catalog has no on-demand VM of this GPU within the spec's clouds/regions");
        return CF_ERR_INVALID;
    }
    if (instance_type && n_instance == 0) {
        cf_error_set(CF_ERR_INVALID, "no configuration of GPU '%s' on instance type '%s'", gpu, instance_type);
        /* A trace is priced on the cheapest VM of each GPU count only:
         * 'prices' lists every VM of the GPU, also the ones refused here
         * (g4dn.2xlarge of a T4 trace priced on g4dn.xlarge). */
        cf_buf types = CF_BUF_INIT;
        size_t listed = 0;
        for (size_t c = 0; from_trace && c < n && listed < 8; c++) {
            const cf_vm *vm = cands[c].vm;
            int seen = !vm || strcasecmp(cands[c].gpu, gpu) != 0;
            for (size_t q = 0; q < c && !seen; q++)
                seen = cands[q].vm && strcasecmp(cands[q].gpu, gpu) == 0 &&
                       strcmp(cands[q].vm->instance_type, vm->instance_type) == 0;
            if (!seen)
                cf_buf_printf(&types, "%s%s", listed++ ? ", " : "", vm->instance_type);
        }
        if (listed && !cf_buf_failed(&types))
            cf_error_hint("the trace runner prices each configuration on the cheapest catalog VM of its GPU count: "
                          "%s; name one of these, or leave --instance-type out", cf_buf_cstr(&types));
        else
            cf_error_hint("'cloudfit prices %s' lists the instance types of this GPU", gpu);
        cf_buf_free(&types);
        return CF_ERR_INVALID;
    }
    return CF_OK;
}

/* A runner that starts VMs runs the probe as `gpus` GPUs on each of
 * `nodes` VMs (by default one GPU on each of two, placement 11, as in the
 * Pollux data): that shape of every one-VM candidate of `gpus` GPUs not
 * already there is appended. */
static cf_status add_probe_shapes(cf_search_candidate **cands, size_t *n, unsigned char **excluded, int nodes,
                                  int gpus, const cf_constraints *limits)
{
    size_t extra = 0, n0 = *n;
    for (size_t c = 0; c < n0; c++)
        extra += (*cands)[c].nodes == 1 && (*cands)[c].gpus_per_node == gpus && !(*excluded)[c];
    cf_search_candidate *grown = realloc(*cands, (n0 + extra + 1) * sizeof *grown);
    if (grown)
        *cands = grown;
    unsigned char *ex = realloc(*excluded, n0 + extra + 1);
    if (ex)
        *excluded = ex;
    if (!grown || !ex)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t c = 0; c < n0; c++) {
        const cf_search_candidate *k = &(*cands)[c];
        if (k->nodes != 1 || k->gpus_per_node != gpus || (*excluded)[c])
            continue;
        int have = 0;
        for (size_t q = 0; q < *n && !have; q++)
            have = (*cands)[q].nodes == nodes && (*cands)[q].gpus_per_node == gpus && (*cands)[q].vm == k->vm &&
                   (*cands)[q].local_batch == k->local_batch;
        if (have)
            continue;
        (*cands)[*n] = *k;
        (*cands)[*n].nodes = nodes;
        (*excluded)[(*n)++] = (unsigned char)!cf_search_within_limits(limits, nodes, gpus, k->local_batch);
    }
    return CF_OK;
}

cf_status cf_search_plan_profile(const cf_search_profile_request *rq, cf_search_candidate **cands, size_t *n,
                                 cf_search_profile_plan *out)
{
    memset(out, 0, sizeof *out);
    unsigned char *excluded = calloc(*n ? *n : 1, 1);
    if (!excluded)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_status st = mark_excluded(*cands, *n, rq->gpu, rq->instance_type, rq->constraints, rq->from_trace, excluded);
    int nodes = rq->probe_nodes > 1 ? rq->probe_nodes : 2, gpus = rq->probe_gpus > 0 ? rq->probe_gpus : 1;
    int can_probe = 0;
    /* the limits first, for every runner: a trace holds rows of shapes the
     * spec forbids, an exec runner could start any */
    if (st == CF_OK && (rq->constraints->max_nodes < nodes || rq->constraints->max_gpus < nodes * gpus)) {
        snprintf(out->probe_skipped_why, sizeof out->probe_skipped_why,
                 "the spec allows %d node%s and %d GPUs (search.max_nodes / max_gpus), the probe needs %d × %d",
                 rq->constraints->max_nodes, rq->constraints->max_nodes == 1 ? "" : "s", rq->constraints->max_gpus,
                 nodes, gpus);
    } else if (st == CF_OK && rq->from_trace) {
        for (size_t c = 0; c < *n && !can_probe; c++)
            can_probe = !excluded[c] && (*cands)[c].nodes == nodes && (*cands)[c].gpus_per_node == gpus;
        if (!can_probe)
            snprintf(out->probe_skipped_why, sizeof out->probe_skipped_why,
                     "the trace has no %d-node × %d-GPU rows%s of %s for this model", nodes, gpus,
                     nodes == 2 && gpus == 1 ? " (placement 11)" : "", rq->gpu);
    } else if (st == CF_OK) {
        if (!rq->runner_multi_node)
            snprintf(out->probe_skipped_why, sizeof out->probe_skipped_why,
                     "the exec template has no {nodes} placeholder, so it cannot start %d nodes", nodes);
        else if ((st = add_probe_shapes(cands, n, &excluded, nodes, gpus, rq->constraints)) == CF_OK)
            can_probe = 1;
    }
    if (st == CF_OK)
        st = cf_search_light_profile(*cands, *n, rq->gpu, excluded, out->light, &out->n_light);
    if (st == CF_OK && can_probe)
        st = probe_of_shape(*cands, *n, rq->gpu, excluded, nodes, gpus, out->probe, &out->n_probe);
    if (st == CF_OK && !can_probe && rq->from_trace && rq->probe_nodes <= 1 && rq->probe_gpus <= 0) {
        /* the default shape missing from the trace: the search's own
         * fallback (the fewest VMs, then GPUs each, that it has) */
        st = cf_search_two_node_probe(*cands, *n, rq->gpu, excluded, out->probe, &out->n_probe);
        if (st == CF_OK && out->n_probe > 0) {
            const cf_search_candidate *k = &(*cands)[out->probe[0]];
            snprintf(out->probe_instead, sizeof out->probe_instead, "%s; it runs as %d nodes × %d GPUs instead",
                     out->probe_skipped_why, k->nodes, k->gpus_per_node);
            out->probe_skipped_why[0] = '\0';
        }
    }
    if (st == CF_OK && can_probe && out->n_probe == 0)
        snprintf(out->probe_skipped_why, sizeof out->probe_skipped_why,
                 "no %d-node × %d-GPU configuration of %s within the spec's limits", nodes, gpus, rq->gpu);
    if (st == CF_OK && out->probe_skipped_why[0] && (rq->probe_nodes > 1 || rq->probe_gpus > 0)) {
        /* a shape asked for by name (a next measurement's command) that
         * cannot run: refused, not a profile without it stored over one
         * whose measured probe it would drop */
        st = cf_error_set(CF_ERR_USAGE, "--probe-nodes %d --probe-gpus %d: %s", nodes, gpus, out->probe_skipped_why);
        cf_error_hint("nothing was run or stored; give a shape the runner can start, or leave --probe-nodes and "
                      "--probe-gpus out for the 2-node × 1-GPU probe");
    }
    free(excluded);
    return st;
}

cf_status cf_search_check_gpu_types(const cf_search_candidate *cands, size_t n)
{
    size_t n_types = 0;
    const char *types[CF_SEARCH_MAX_PROFILED_GPU_TYPES + 1];
    for (size_t c = 0; c < n && n_types <= CF_SEARCH_MAX_PROFILED_GPU_TYPES; c++) {
        size_t k;
        for (k = 0; k < n_types && !is_type(&cands[c], types[k]); k++)
            ;
        if (k == n_types)
            types[n_types++] = cands[c].gpu;
    }
    if (n_types <= CF_SEARCH_MAX_PROFILED_GPU_TYPES)
        return CF_OK;
    cf_error_set(CF_ERR_USAGE, "the exec runner would profile more than %d GPU types (each costs a profile)",
                 CF_SEARCH_MAX_PROFILED_GPU_TYPES);
    cf_error_hint("name the GPU types with --gpu (or search.gpus), and the clouds with --cloud");
    return CF_ERR_USAGE;
}
