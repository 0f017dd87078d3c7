/* The trace runner: probes answered from a measurements CSV (docs/profiler.md
 * "The measurements CSV") with seeded multiplicative noise. Candidates are the symmetric
 * configurations in the file (every node runs the same number of GPUs), one
 * per (GPU, nodes, GPUs per node, per-GPU batch); the true step time of a
 * candidate is the median of its rows. Prices come from the catalog VM with
 * the same GPU model and GPU count (the cloud in the file's `profile`
 * column first), or --price GPU=USD_PER_GPU_HR. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/escape.h"
#include "cloudfit/common/number.h"
#include "cloudfit/profiler/measurements.h"
#include "cloudfit/profiler/runners.h"

static int symmetric_gpus_per_node(const cf_measurement *r)
{
    if (r->num_nodes < 1 || r->num_gpus < r->num_nodes || r->num_gpus % r->num_nodes)
        return 0;
    int g = r->num_gpus / r->num_nodes;
    size_t len = strlen(r->placement);
    if (len) {
        if ((int)len != r->num_nodes)
            return 0;
        for (size_t i = 0; i < len; i++)
            if (r->placement[i] - '0' != g)
                return 0;
    }
    return g;
}

/* Whether `name` is one of the n names (no names: any). */
static int in_list(const char (*names)[CF_CLOUD_NAME_MAX], int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (strcasecmp(names[k], name) == 0)
            return 1;
    return n == 0;
}

static int in_region_list(const cf_trace_runner_config *cfg, const char *region)
{
    for (int k = 0; k < cfg->n_regions; k++)
        if (strcmp(cfg->regions[k], region) == 0)
            return 1;
    return cfg->n_regions == 0;
}

static int in_gpu_list(const cf_trace_runner_config *cfg, const char *gpu)
{
    for (int k = 0; k < cfg->n_gpus; k++)
        if (strcasecmp(cfg->gpus[k], gpu) == 0)
            return 1;
    return cfg->n_gpus == 0;
}

static const cf_vm *catalog_vm(const cf_trace_runner_config *cfg, const char *gpu, int g, const char *prefer_cloud)
{
    const cf_vm *best = NULL;
    int best_pref = 0;
    for (size_t i = 0; i < cfg->n_vms; i++) {
        const cf_vm *vm = &cfg->vms[i];
        if (strcasecmp(vm->gpu_model, gpu) || vm->gpu_count != g || !(vm->price_ondemand_usd_per_hr > 0))
            continue;
        if (!in_list(cfg->clouds, cfg->n_clouds, vm->cloud) || !in_region_list(cfg, vm->region))
            continue;
        int pref = strcasecmp(vm->cloud, prefer_cloud) == 0;
        if (!best || pref > best_pref ||
            (pref == best_pref && vm->price_ondemand_usd_per_hr < best->price_ondemand_usd_per_hr)) {
            best = vm;
            best_pref = pref;
        }
    }
    return best;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The --price entry of a GPU model: its name read in the GPU table as the
 * rows' are ("--price 'Tesla T4=0.5'" prices T4 rows). */
static const cf_search_price *price_for(const cf_trace_runner_config *cfg, const char *gpu)
{
    for (size_t i = 0; i < cfg->n_prices; i++)
        if (strcasecmp(cf_gpu_model_name(cfg->gpu_table, cfg->n_gpu_table, cfg->prices[i].gpu), gpu) == 0)
            return &cfg->prices[i];
    return NULL;
}

/* Every --price names a GPU of the model's rows, at one price: a second,
 * other price of the same GPU ("T4=0.5" and "Tesla T4=0.7") was ignored,
 * the first one winning, and a price of a GPU the trace has no row of
 * priced nothing; both without a word. CF_ERR_USAGE naming the entry. */
static cf_status check_prices(const cf_trace_runner_config *cfg, const cf_measurement *rows, size_t n_rows)
{
    for (size_t i = 0; i < cfg->n_prices; i++) {
        const char *gpu = cf_gpu_model_name(cfg->gpu_table, cfg->n_gpu_table, cfg->prices[i].gpu);
        char shown[CF_GPU_NAME_MAX * 4];
        cf_escape_into(cfg->prices[i].gpu, shown, sizeof shown);
        for (size_t j = 0; j < i; j++)
            if (strcasecmp(cf_gpu_model_name(cfg->gpu_table, cfg->n_gpu_table, cfg->prices[j].gpu), gpu) == 0 &&
                cfg->prices[j].usd_per_gpu_hr != cfg->prices[i].usd_per_gpu_hr) {
                char shown_gpu[CF_GPU_NAME_MAX * 4];
                cf_escape_into(gpu, shown_gpu, sizeof shown_gpu);
                cf_error_set(CF_ERR_USAGE, "option '--price' prices %s twice ($%g and $%g per GPU-hour)", shown_gpu,
                             cfg->prices[j].usd_per_gpu_hr, cfg->prices[i].usd_per_gpu_hr);
                cf_error_hint("give one --price per GPU type");
                return CF_ERR_USAGE;
            }
        size_t k = 0;
        while (k < n_rows && strcasecmp(rows[k].gpu, gpu) != 0)
            k++;
        if (k == n_rows) {
            char shown_path[256], shown_model[256];
            cf_escape_into(cfg->path, shown_path, sizeof shown_path);
            cf_escape_into(cfg->model, shown_model, sizeof shown_model);
            cf_error_set(CF_ERR_USAGE, "option '--price' names GPU '%s', but %s has no row of it for model '%s'",
                         shown, shown_path, shown_model);
            char gpus[256] = "";
            for (size_t r = 0; r < n_rows; r++) {
                size_t q = 0;
                while (q < r && strcasecmp(rows[q].gpu, rows[r].gpu) != 0)
                    q++;
                if (q == r && strlen(gpus) + strlen(rows[r].gpu) + 3 < sizeof gpus)
                    snprintf(gpus + strlen(gpus), sizeof gpus - strlen(gpus), "%s%s", gpus[0] ? ", " : "",
                             rows[r].gpu);
            }
            char shown_gpus[512];
            cf_escape_into(gpus, shown_gpus, sizeof shown_gpus);
            cf_error_hint("--price prices the GPUs of the trace's gpu column (here: %s)", shown_gpus);
            return CF_ERR_USAGE;
        }
    }
    return CF_OK;
}

static cf_status fail(cf_trace_runner *t, cf_status st)
{
    cf_trace_runner_close(t);
    return st;
}

cf_status cf_search_price_parse(const char *text, cf_search_price *out)
{
    const char *eq = strchr(text, '=');
    double v = 0;
    char why[96] = "", shown[128];
    memset(out, 0, sizeof *out);
    cf_escape_into(text, shown, sizeof shown);
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof out->gpu)
        return cf_error_set(CF_ERR_INVALID, "expects GPU=USD_PER_GPU_HR (e.g. T4=0.53 or T4=$0.53), got '%s'", shown);
    /* the price as every money option takes it: 0.53 or $0.53; below $1e5 an hour, as a price override's
     * (pricing/price_overrides.c): --price T4=1e300 made every cost a 300-digit number */
    cf_number_result r = cf_number_usd(eq + 1, 0, HUGE_VAL, &v, why, sizeof why);
    if (r == CF_NUMBER_OK && !(v > 0))
        snprintf(why, sizeof why, "a price of 0");
    else if (r == CF_NUMBER_OK && !(v < CF_SEARCH_PRICE_MAX)) {
        snprintf(why, sizeof why, "not below $%g per GPU-hour", CF_SEARCH_PRICE_MAX);
        r = CF_NUMBER_RANGE;
    }
    if (r != CF_NUMBER_OK || !(v > 0))
        return cf_error_set(CF_ERR_INVALID, "expects GPU=USD_PER_GPU_HR (e.g. T4=0.53 or T4=$0.53), got '%s' (%s)",
                            shown, why);
    snprintf(out->gpu, sizeof out->gpu, "%.*s", (int)(eq - text), text);
    out->usd_per_gpu_hr = v;
    return CF_OK;
}

cf_status cf_trace_runner_open(const cf_trace_runner_config *cfg, cf_trace_runner *t)
{
    memset(t, 0, sizeof *t);
    const char *path = cfg->path, *model = cfg->model;
    snprintf(t->path, sizeof t->path, "%s", path);
    snprintf(t->model, sizeof t->model, "%s", model);
    t->noise_sd = cfg->noise_sd;
    cf_measurement_set set;
    cf_status st = cf_measurements_load(path, &set);
    if (st != CF_OK)
        return st;
    size_t n_rows = 0;
    cf_measurement *rows = malloc((set.n_rows ? set.n_rows : 1) * sizeof *rows);
    t->cands = calloc(set.n_rows ? set.n_rows : 1, sizeof *t->cands);
    t->true_step_s = calloc(set.n_rows ? set.n_rows : 1, sizeof *t->true_step_s);
    t->synthetic = calloc(set.n_rows ? set.n_rows : 1, sizeof *t->synthetic);
    double *times = malloc((set.n_rows ? set.n_rows : 1) * sizeof *times);
    t->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rows || !t->cands || !t->true_step_s || !t->synthetic || !times || !t->rng) {
        free(rows);
        free(times);
        cf_measurements_free(&set);
        return fail(t, cf_error_set(CF_ERR_NOMEM, "out of memory"));
    }
    gsl_rng_set(t->rng, cfg->seed);
    /* Each row's GPU as the GPU table names it: a trace spelt as a tool
     * prints the GPU ("Tesla T4", "Quadro RTX 6000") was priced from no
     * catalog VM, and --gpu and --price never matched its rows. */
    for (size_t i = 0; i < set.n_rows; i++)
        if (strcmp(set.rows[i].model, model) == 0) {
            cf_measurement *r = &rows[n_rows++];
            *r = set.rows[i];
            snprintf(r->gpu, sizeof r->gpu, "%s", cf_gpu_model_name(cfg->gpu_table, cfg->n_gpu_table, set.rows[i].gpu));
        }
    if (n_rows == 0) {
        free(rows);
        free(times);
        cf_measurements_free(&set);
        cf_error_set(CF_ERR_INVALID, "%s: no rows whose model column is '%s'", path, model);
        cf_error_hint("name the model with --trace-model NAME (default: the spec's name)");
        return fail(t, CF_ERR_INVALID);
    }
    st = check_prices(cfg, rows, n_rows);
    if (st != CF_OK) {
        free(rows);
        free(times);
        cf_measurements_free(&set);
        return fail(t, st);
    }
    unsigned char *used = calloc(n_rows, 1);
    for (size_t i = 0; used && i < n_rows; i++) {
        if (used[i])
            continue;
        const cf_measurement *r = &rows[i];
        int g = symmetric_gpus_per_node(r);
        if (!g) {
            t->n_asymmetric++;
            continue;
        }
        size_t n_times = 0;
        for (size_t j = i; j < n_rows; j++) {
            const cf_measurement *q = &rows[j];
            if (!used[j] && strcasecmp(q->gpu, r->gpu) == 0 && q->num_nodes == r->num_nodes &&
                symmetric_gpus_per_node(q) == g && q->local_bsz == r->local_bsz) {
                used[j] = 1;
                times[n_times++] = q->step_time_s;
            }
        }
        qsort(times, n_times, sizeof *times, cmp_double);
        double median = n_times % 2 ? times[n_times / 2] : 0.5 * (times[n_times / 2 - 1] + times[n_times / 2]);
        cf_search_candidate *c = &t->cands[t->n];
        snprintf(c->gpu, sizeof c->gpu, "%s", r->gpu);
        c->nodes = r->num_nodes;
        c->gpus_per_node = g;
        c->local_batch = r->local_bsz;
        if (!in_gpu_list(cfg, r->gpu)) {
            t->n_filtered++; /* the spec's (or --gpu's) GPU filter */
            continue;
        }
        const cf_search_price *p = price_for(cfg, r->gpu);
        /* a --price VM is the trace's own cluster: its cloud is the row's, and it has no region */
        const char *trace_cloud = r->profile[0] ? r->profile : "trace";
        if (p && (!in_list(cfg->clouds, cfg->n_clouds, trace_cloud) || cfg->n_regions)) {
            t->n_filtered++;
            continue;
        }
        const cf_vm *vm = p ? NULL : catalog_vm(cfg, r->gpu, g, r->profile);
        if (!p && !vm) {
            /* unpriced, or priced only outside the cloud or region filter */
            if ((cfg->n_clouds || cfg->n_regions) && catalog_vm(&(cf_trace_runner_config){.vms = cfg->vms,
                                                                    .n_vms = cfg->n_vms}, r->gpu, g, r->profile))
                t->n_filtered++;
            else
                t->n_unpriced++;
            continue;
        }
        if (p) {
            /* one VM per shape, as the catalog has one: a VM per configuration made every configuration an offer */
            cf_vm *s = NULL;
            for (size_t k = 0; k < t->n_synthetic && !s; k++)
                if (t->synthetic[k].gpu_count == g && strcasecmp(t->synthetic[k].gpu_model, r->gpu) == 0 &&
                    strcmp(t->synthetic[k].cloud, trace_cloud) == 0)
                    s = &t->synthetic[k];
            if (!s) {
                s = &t->synthetic[t->n_synthetic++];
                snprintf(s->cloud, sizeof s->cloud, "%s", trace_cloud);
                snprintf(s->region, sizeof s->region, "%s", "-");
                snprintf(s->instance_type, sizeof s->instance_type, "%d×%s (--price)", g, r->gpu);
                snprintf(s->gpu_model, sizeof s->gpu_model, "%s", r->gpu);
                s->gpu_count = g;
                s->price_ondemand_usd_per_hr = g * p->usd_per_gpu_hr;
                s->interruptions_pct_per_month = -1;
            }
            vm = s;
        }
        c->vm = vm;
        c->usd_per_node_hr = vm->price_ondemand_usd_per_hr;
        c->network_gbps = cfg->nic_gbps > 0 ? cfg->nic_gbps : vm->network_gbps;
        t->true_step_s[t->n++] = median;
        t->n_rows_used += n_times;
    }
    free(used);
    free(times);
    cf_measurements_free(&set);
    t->rows.rows = rows;
    t->rows.n_rows = n_rows;
    if (t->n == 0 && t->n_filtered) {
        cf_error_set(CF_ERR_INVALID, "%s: no configuration of model '%s' passes the GPU, cloud and region filters "
                     "(%zu left out)", path, model, t->n_filtered);
        cf_error_hint("the trace's GPUs and the clouds and regions that sell them are what a trace can answer for: "
                      "widen search.gpus, search.clouds or search.regions (--gpu, --cloud, --region)");
        return fail(t, CF_ERR_INVALID);
    }
    if (t->n == 0) {
        cf_error_set(CF_ERR_INVALID, "%s: no priced symmetric configuration of model '%s'", path, model);
        cf_error_hint(t->n_unpriced ? "give a price for the GPU with --price GPU=USD_PER_GPU_HR"
                                    : "the search needs rows where every node runs the same number of GPUs");
        return fail(t, CF_ERR_INVALID);
    }
    return CF_OK;
}

int cf_trace_runner_hw_gpus(const cf_trace_runner *t, const char *gpu, int nodes, int gpus_per_node, int local_batch,
                            const char **cloud)
{
    for (size_t k = 0; k < t->rows.n_rows; k++) {
        const cf_measurement *m = &t->rows.rows[k];
        if (!strcasecmp(m->gpu, gpu) && m->num_nodes == nodes && m->num_gpus == nodes * gpus_per_node &&
            m->local_bsz == local_batch) {
            if (cloud)
                *cloud = m->profile;
            return m->hw_gpus_per_node;
        }
    }
    return 0;
}

/* The candidate of the trace with c's configuration: c itself when it is
 * one of the runner's own, else the one with the same GPU, shape and batch
 * (callers may run copies). */
static long find_candidate(const cf_trace_runner *t, const cf_search_candidate *c)
{
    if (c >= t->cands && c < t->cands + t->n)
        return (long)(c - t->cands);
    for (size_t i = 0; i < t->n; i++) {
        const cf_search_candidate *k = &t->cands[i];
        if (!strcasecmp(k->gpu, c->gpu) && k->nodes == c->nodes && k->gpus_per_node == c->gpus_per_node &&
            k->local_batch == c->local_batch)
            return (long)i;
    }
    return -1;
}

static cf_status trace_probe(void *ctx, const cf_search_candidate *c, int steps, double *out)
{
    cf_trace_runner *t = ctx;
    (void)steps;
    long i = find_candidate(t, c);
    if (i < 0)
        return cf_error_set(CF_ERR_INVALID, "trace runner: %s has no %d × %d %s rows at batch %d", t->path, c->nodes,
                            c->gpus_per_node, c->gpu, c->local_batch);
    *out = t->true_step_s[i] * exp(gsl_ran_gaussian((gsl_rng *)t->rng, t->noise_sd));
    return CF_OK;
}

cf_search_runner cf_trace_runner_iface(cf_trace_runner *t)
{
    return (cf_search_runner){t, trace_probe, NULL};
}

void cf_trace_runner_close(cf_trace_runner *t)
{
    free(t->cands);
    free(t->true_step_s);
    free(t->synthetic);
    free(t->rows.rows);
    if (t->rng)
        gsl_rng_free((gsl_rng *)t->rng);
    memset(t, 0, sizeof *t);
}
