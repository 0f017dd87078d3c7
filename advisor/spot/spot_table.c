#include "cloudfit/advisor/spot_table.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/profiler/types.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "spot_model_internal.h"
#include "spot_table_internal.h"

/* BEGIN GENERATED: build/bench/spot_bench --table examples/spot-traces */
const cf_spot_table_row cf_spot_table[] = {
    {"aws", "K80", 1, "us-west-2", 1,
     {0.8289, 1.6263, 0.2681, 1.9886, 0.3269, 2.7671, 0.4730, 0.6633, 0.3835, 0.9261},
     179, 2, 0.505, 3.31, "us-west-2a 2022-10-26 1n; us-west-2b 2022-10-26 1n"},
    {"aws", "K80", 8, "us-west-2", 1,
     {0.5811, 1.2637, 0.5067, 1.7196, 0.3269, 2.7671, 0.4730, 0.6633, 0.3564, 0.8722},
     381, 2, 0.367, 7.04, "us-west-2a 2022-10-26 1n; us-west-2b 2022-10-26 1n"},
    {"aws", "V100", 1, "us-east-1", 1,
     {0.4506, 1.5186, 0.5494, 1.6185, 0.3269, 2.7671, 0.4730, 0.6633, 0.3147, 0.7640},
     1278, 6, 0.421, 6.49, "us-east-1a 2023-02-15 1n; us-east-1c 2023-02-15 1n; us-east-1c 2023-04-22 1n; us-east-1d 2023-02-15 1n; us-east-1f 2023-02-15 1n; us-east-1f 2023-04-22 1n"},
    {"aws", "V100", 1, "us-east-1", 4,
     {0.9583, 1.4277, 1.0833, 1.6582, 0.8440, 3.4583, 0.0682, 0.6024, 0.4688, 1.0696},
     44, 1, 0.383, 3.46, "us-east-1f 2023-08-03 4n"},
    {"aws", "V100", 1, "us-east-2", 1,
     {0.9774, 1.7894, 0.5293, 1.5955, 0.3269, 2.7671, 0.4730, 0.6633, 0.3681, 0.8662},
     321, 2, 0.721, 3.53, "us-east-2a 2023-02-15 1n; us-east-2b 2023-02-15 1n"},
    {"aws", "V100", 1, "us-east-2", 4,
     {0.7917, 2.5938, 1.2917, 1.8869, 0.1462, 3.2381, 0.0000, 0.7059, 0.7062, 1.2705},
     14, 1, 0.749, 0.79, "us-east-2a 2023-08-03 4n"},
    {"aws", "V100", 1, "us-east-2", 16,
     {0.5833, 1.8881, 0.5000, 1.6812, 0.5254, 2.1329, 0.2653, 0.6162, 0.4960, 1.0300},
     49, 1, 0.628, 4.35, "us-east-2b 2023-08-27 16n"},
    {"aws", "V100", 1, "us-west-2", 1,
     {0.8675, 1.6170, 0.3956, 1.4112, 0.3269, 2.7671, 0.4730, 0.6633, 0.3685, 0.8667},
     298, 2, 0.754, 5.51, "us-west-2a 2022-10-26 1n; us-west-2b 2022-10-26 1n"},
    {"aws", "V100", 1, "us-west-2", 16,
     {0.4172, 1.7267, 0.7313, 1.5212, 0.2335, 3.0236, 0.6561, 0.7812, 0.4991, 0.8867},
     189, 2, 0.443, 5.75, "us-west-2a 2023-08-27 16n; us-west-2c 2023-08-27 16n"},
    {"aws", "V100", 8, "us-west-2", 1,
     {0.3285, 1.4073, 0.2284, 1.7431, 0.3269, 2.7671, 0.4730, 0.6633, 0.3708, 0.8658},
     669, 2, 0.473, 12.37, "us-west-2a 2022-10-26 1n; us-west-2b 2022-10-26 1n"},
    {"aws", "K80", 1, "*", 1,
     {0.7461, 1.6263, 0.2681, 1.9886, 0.3269, 2.7671, 0.4730, 0.6633, 0.7733, 0.9261},
     179, 2, 0.505, 3.31, "2 traces"},
    {"aws", "K80", 8, "*", 1,
     {0.5840, 1.2637, 0.5067, 1.7196, 0.3269, 2.7671, 0.4730, 0.6633, 0.7571, 0.8722},
     381, 2, 0.367, 7.04, "2 traces"},
    {"aws", "V100", 1, "*", 1,
     {0.6223, 1.5831, 0.5015, 1.5838, 0.3269, 2.7671, 0.4730, 0.6633, 0.6476, 0.7397},
     1897, 10, 0.553, 5.55, "10 traces"},
    {"aws", "V100", 1, "*", 4,
     {1.2306, 1.7805, 1.2160, 1.7162, 0.3258, 3.3711, 0.0517, 0.6418, 0.8059, 0.9517},
     58, 2, 0.596, 1.90, "2 traces"},
    {"aws", "V100", 1, "*", 16,
     {0.5070, 1.7612, 0.6651, 1.5555, 0.3278, 2.4118, 0.5756, 0.6810, 0.7526, 0.8290},
     238, 3, 0.491, 5.39, "3 traces"},
    {"aws", "V100", 8, "*", 1,
     {0.3419, 1.4073, 0.2284, 1.7431, 0.3269, 2.7671, 0.4730, 0.6633, 0.7659, 0.8658},
     669, 2, 0.473, 12.37, "2 traces"},
    {"*", "*", 0, "*", 4,
     {1.2306, 1.7805, 1.2160, 1.7162, 0.3258, 3.3711, 0.0517, 0.6418, 0.8059, 0.9517},
     58, 2, 0.596, 1.90, "2 traces"},
    {"*", "*", 0, "*", 16,
     {0.5070, 1.7612, 0.6651, 1.5555, 0.3278, 2.4118, 0.5756, 0.6810, 0.7526, 0.8290},
     238, 3, 0.491, 5.39, "3 traces"},
    {"*", "*", 1, "*", 1,
     {0.6434, 1.5869, 0.4770, 1.6227, 0.3269, 2.7671, 0.4730, 0.6633, 0.6426, 0.7352},
     2076, 12, 0.547, 5.24, "12 traces"},
    {"*", "*", 8, "*", 1,
     {0.4377, 1.3569, 0.3356, 1.7346, 0.3269, 2.7671, 0.4730, 0.6633, 0.6922, 0.7905},
     1050, 4, 0.420, 9.70, "4 traces"},
};
/* END GENERATED */
const size_t cf_spot_table_count = sizeof cf_spot_table / sizeof *cf_spot_table;

int cf_spot_size_class(int gpus_per_vm) { return gpus_per_vm >= 4 ? 8 : 1; }

const char *cf_spot_row_kind_name(cf_spot_row_kind kind)
{
    switch (kind) {
    case CF_SPOT_ROW_REGION: return "region";
    case CF_SPOT_ROW_POOLED: return "pooled";
    case CF_SPOT_ROW_DEFAULT: return "default";
    }
    return "default";
}

/* ---- look-up ------------------------------------------------------------------------ */

static int is_any(const char *s) { return s[0] == '*' && s[1] == '\0'; }

/* Pass of a row for an offer: 0 region, 1 pooled, 2 default, 3 none. */
static int row_pass(const cf_spot_table_row *r, const char *cloud, const char *gpu, int size_class,
                    const char *region, int cluster)
{
    if ((r->nodes > 1) != cluster)
        return 3;
    if (is_any(r->cloud) && is_any(r->gpu) && is_any(r->region))
        return r->size_class == 0 || r->size_class == size_class ? 2 : 3;
    if (r->size_class != size_class || strcasecmp(r->cloud, cloud) != 0 || strcasecmp(r->gpu, gpu) != 0)
        return 3;
    return is_any(r->region) ? 1 : strcasecmp(r->region, region) == 0 ? 0 : 3;
}

void cf_spot_offer_rows_in(const cf_spot_table_row *rows, size_t n_rows, const char *cloud, const char *gpu,
                           int gpus_per_vm, const char *region, cf_spot_offer_rows *out)
{
    memset(out, 0, sizeof *out);
    int size_class = cf_spot_size_class(gpus_per_vm);
    int best[2] = {3, 3};
    for (size_t i = 0; i < n_rows; i++) {
        for (int cluster = 0; cluster < 2; cluster++) {
            int pass = row_pass(&rows[i], cloud, gpu, size_class, region, cluster);
            if (pass >= best[cluster])
                continue;
            best[cluster] = pass;
            if (cluster) {
                out->cluster = &rows[i];
                out->n_cluster = 0;
            } else {
                out->single = &rows[i];
            }
        }
        /* the rows of the best cluster pass: contiguous, by size */
        if (out->cluster && &rows[i] >= out->cluster &&
            row_pass(&rows[i], cloud, gpu, size_class, region, 1) == best[1] &&
            (size_t)(&rows[i] - out->cluster) == out->n_cluster)
            out->n_cluster++;
    }
    /* A table without that VM size (a user's traces): another size's default. */
    for (size_t i = 0; i < n_rows && !out->single; i++)
        if (rows[i].nodes == 1 && is_any(rows[i].cloud) && is_any(rows[i].gpu) && is_any(rows[i].region))
            out->single = &rows[i];
    out->single_kind = (cf_spot_row_kind)(best[0] < 3 ? best[0] : 2);
    out->cluster_kind = (cf_spot_row_kind)(best[1] < 3 ? best[1] : 2);
}

const cf_spot_table_row *cf_spot_offer_row(const cf_spot_offer_rows *o, int nodes, cf_spot_row_kind *kind)
{
    if (nodes <= 1 || !o->cluster) {
        if (kind)
            *kind = nodes <= 1 ? o->single_kind : CF_SPOT_ROW_DEFAULT;
        return o->single;
    }
    const cf_spot_table_row *best = o->cluster;
    double best_d = INFINITY;
    for (size_t i = 0; i < o->n_cluster; i++) {
        double d = fabs(log((double)o->cluster[i].nodes / nodes));
        if (d <= best_d + 1e-12) { /* by size: the larger wins a tie */
            best_d = d;
            best = &o->cluster[i];
        }
    }
    if (kind)
        *kind = o->cluster_kind;
    return best;
}

const cf_spot_table_row *cf_spot_model_row(const char *cloud, const char *gpu, int gpus_per_vm, const char *region,
                                           int nodes, cf_spot_row_kind *out_kind)
{
    cf_spot_offer_rows o;
    cf_spot_offer_rows_in(cf_spot_table, cf_spot_table_count, cloud, gpu, gpus_per_vm, region, &o);
    return cf_spot_offer_row(&o, nodes, out_kind);
}

void cf_spot_model_lookup_in(const cf_spot_table_row *rows, size_t n_rows, const char *cloud, const char *gpu,
                             int gpus_per_vm, const char *region, int nodes, cf_spot_lookup *out)
{
    memset(out, 0, sizeof *out);
    if (!rows) {
        rows = cf_spot_table;
        n_rows = cf_spot_table_count;
    }
    cf_spot_offer_rows o;
    cf_spot_offer_rows_in(rows, n_rows, cloud, gpu, gpus_per_vm, region, &o);
    out->row = cf_spot_offer_row(&o, nodes, &out->kind);
    const cf_spot_table_row *r = out->row;
    if (!r) { /* a fitted table without a default for this size */
        out->kind = CF_SPOT_ROW_DEFAULT;
        out->provenance = CF_PROV_DEFAULT;
        snprintf(out->text, sizeof out->text, "no trace fits %s %s VMs", cloud, gpu);
        return;
    }
    char what[64];
    if (r->nodes > 1)
        snprintf(what, sizeof what, "%d-VM clusters", r->nodes);
    else
        snprintf(what, sizeof what, "single VMs");
    const char *size = r->size_class == 8 ? "multi-GPU" : r->size_class == 1 ? "1-GPU" : "any";
    switch (out->kind) {
    case CF_SPOT_ROW_REGION:
        out->provenance = CF_PROV_FITTED;
        snprintf(out->text, sizeof out->text, "fitted to spot traces of %s %s %s VMs in %s, %s (%s)", r->cloud,
                 r->gpu, size, r->region, what, r->traces);
        break;
    case CF_SPOT_ROW_POOLED:
        out->provenance = CF_PROV_FITTED;
        snprintf(out->text, sizeof out->text, "pooled over the spot traces of %s %s %s VMs in every region, %s (%s); "
                 "none in %s", r->cloud, r->gpu, size, what, r->traces, region);
        break;
    case CF_SPOT_ROW_DEFAULT:
        out->provenance = CF_PROV_DEFAULT;
        snprintf(out->text, sizeof out->text, "every spot trace of %s VMs, %s (%s); no traces for %s %s",
                 size, what, r->traces, cloud, gpu);
        break;
    }
}

void cf_spot_model_lookup(const char *cloud, const char *gpu, int gpus_per_vm, const char *region, int nodes,
                          cf_spot_lookup *out)
{
    cf_spot_model_lookup_in(NULL, 0, cloud, gpu, gpus_per_vm, region, nodes, out);
}

/* ---- fitting the table ------------------------------------------------------------- */

enum { LEVEL_REGION, LEVEL_POOLED, LEVEL_DEFAULT, N_LEVELS };

typedef struct {
    char cloud[CF_CLOUD_NAME_MAX], gpu[CF_GPU_NAME_MAX], region[CF_REGION_NAME_MAX];
    int size_class, nodes;
} group_key;

/* A trace's key at a level: the row it belongs to there. */
static group_key key_at(const cf_spot_trace_vm *vm, int level)
{
    group_key k;
    memset(&k, 0, sizeof k);
    k.nodes = vm->requested > 1 ? vm->requested : 1;
    k.size_class = cf_spot_size_class(vm->gpus_per_vm ? vm->gpus_per_vm : 1);
    snprintf(k.cloud, sizeof k.cloud, "%s", level == LEVEL_DEFAULT ? "*" : vm->cloud);
    snprintf(k.gpu, sizeof k.gpu, "%s", level == LEVEL_DEFAULT ? "*" : vm->gpu);
    snprintf(k.region, sizeof k.region, "%s", level == LEVEL_REGION ? vm->region : "*");
    if (level == LEVEL_DEFAULT && k.nodes > 1)
        k.size_class = 0; /* cluster defaults: any VM size */
    return k;
}

static int key_level(const group_key *k)
{
    return is_any(k->cloud) ? LEVEL_DEFAULT : is_any(k->region) ? LEVEL_POOLED : LEVEL_REGION;
}

static int group_order(const void *pa, const void *pb)
{
    const group_key *a = pa, *b = pb;
    int c = key_level(a) - key_level(b);
    if (!c) c = strcmp(a->cloud, b->cloud);
    if (!c) c = strcmp(a->gpu, b->gpu);
    if (!c) c = a->size_class - b->size_class;
    if (!c) c = strcmp(a->region, b->region);
    if (!c) c = a->nodes - b->nodes;
    return c;
}

static int same_key(const group_key *a, const group_key *b) { return group_order(a, b) == 0; }

typedef struct {
    const cf_spot_trace *t;
    cf_spot_runs runs;
    cf_spot_trace_summary sum;
    group_key key[N_LEVELS];
    double up_h, total_h;
} trace_fit;

/* τ² of UP and DOWN log-means at a level: the spread of traces about their
 * group's mean (groups of ≥ 2 traces), less the traces' own sampling
 * variance; -1 when no group has two traces. */
static void level_tau2(const trace_fit *tf, size_t n, int level, double *tau2_up, double *tau2_down)
{
    double ss_u = 0, ss_d = 0, samp_u = 0, samp_d = 0;
    size_t df = 0, members = 0;
    for (size_t i = 0; i < n; i++) {
        int first = 1;
        for (size_t j = 0; j < i && first; j++)
            first = !same_key(&tf[j].key[level], &tf[i].key[level]);
        if (!first)
            continue;
        double su = 0, sd = 0;
        size_t k = 0;
        for (size_t j = i; j < n; j++)
            if (same_key(&tf[j].key[level], &tf[i].key[level])) {
                su += tf[j].sum.log_mean_up;
                sd += tf[j].sum.log_mean_down;
                k++;
            }
        if (k < 2)
            continue;
        for (size_t j = i; j < n; j++)
            if (same_key(&tf[j].key[level], &tf[i].key[level])) {
                ss_u += pow(tf[j].sum.log_mean_up - su / (double)k, 2);
                ss_d += pow(tf[j].sum.log_mean_down - sd / (double)k, 2);
                samp_u += tf[j].sum.var_log_mean_up;
                samp_d += tf[j].sum.var_log_mean_down;
                members++;
            }
        df += k - 1;
    }
    if (df == 0) {
        *tau2_up = *tau2_down = -1;
        return;
    }
    *tau2_up = fmax(0, ss_u / (double)df - samp_u / (double)members);
    *tau2_down = fmax(0, ss_d / (double)df - samp_d / (double)members);
}

static void label_of(const trace_fit *t, char *out, size_t n)
{
    const cf_spot_trace_vm *vm = &t->t->vm[0];
    snprintf(out, n, "%s %s %dn", vm->zone[0] ? vm->zone : vm->region, vm->start_date, vm->requested);
}

static int label_order(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* One row from its member traces (mask) at a level's τ². */
static cf_status fit_row(const group_key *g, trace_fit *tf, size_t n, const double *tau2, const cf_spot_process *inner,
                         cf_spot_table_row *row)
{
    memset(row, 0, sizeof *row);
    memcpy(row->cloud, g->cloud, sizeof row->cloud);
    memcpy(row->gpu, g->gpu, sizeof row->gpu);
    memcpy(row->region, g->region, sizeof row->region);
    row->size_class = g->size_class;
    row->nodes = g->nodes;
    int level = key_level(g);
    double wu = 0, wd = 0, lu = 0, ld = 0, s2u = 0, s2d = 0, up_h = 0, total_h = 0;
    size_t cycles = 0, members = 0;
    cf_spot_runs inner_runs = {0};
    cf_status st = CF_OK;
    char (*labels)[64] = calloc(n ? n : 1, sizeof *labels);
    if (!labels)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n && st == CF_OK; i++) {
        if (!same_key(&tf[i].key[level], g))
            continue;
        const cf_spot_trace_summary *s = &tf[i].sum;
        double a = 1 / (tau2[0] + s->var_log_mean_up), b = 1 / (tau2[1] + s->var_log_mean_down);
        wu += a;
        wd += b;
        lu += a * s->log_mean_up;
        ld += b * s->log_mean_down;
        s2u += (double)s->cycles * s->sigma_up * s->sigma_up;
        s2d += (double)s->cycles * s->sigma_down * s->sigma_down;
        cycles += s->cycles;
        up_h += tf[i].up_h;
        total_h += tf[i].total_h;
        label_of(&tf[i], labels[members], sizeof labels[members]);
        members++;
        if (g->nodes > 1)
            st = cf_spot_runs_add(&inner_runs, tf[i].t);
    }
    if (st == CF_OK && members > 0) {
        double sigma_u = sqrt(s2u / (double)cycles), sigma_d = sqrt(s2d / (double)cycles);
        cf_spot_process *p = &row->process;
        cf_spot_process_fit(&inner_runs, inner, p); /* kd, kr, qf, qr */
        p->up_sigma = fmax(sigma_u, CF_SPOT_SIGMA_FLOOR);
        p->down_sigma = fmax(sigma_d, CF_SPOT_SIGMA_FLOOR);
        p->up_median_h = exp(lu / wu - p->up_sigma * p->up_sigma / 2);
        p->down_median_h = exp(ld / wd - p->down_sigma * p->down_sigma / 2);
        p->regime_sd_up = sqrt(tau2[0] + 1 / wu);
        p->regime_sd_down = sqrt(tau2[1] + 1 / wd);
        row->cycles = (int)cycles;
        row->n_traces = (int)members;
        row->availability = total_h > 0 ? up_h / total_h : 0;
        row->runs_per_day = total_h > 0 ? (double)cycles / total_h * 24 : 0;
        if (level == LEVEL_REGION) {
            qsort(labels, members, sizeof *labels, label_order);
            size_t len = 0;
            for (size_t i = 0; i < members && len + 1 < sizeof row->traces; i++) {
                int w = snprintf(row->traces + len, sizeof row->traces - len, "%s%s", i ? "; " : "", labels[i]);
                len = w < 0 ? len : len + (size_t)w;
            }
        } else {
            snprintf(row->traces, sizeof row->traces, "%zu trace%s", members, members == 1 ? "" : "s");
        }
    }
    cf_spot_runs_free(&inner_runs);
    free(labels);
    return st;
}

cf_status cf_spot_table_fit(const cf_spot_trace *traces, size_t n, cf_spot_table_row **rows, size_t *n_rows)
{
    *rows = NULL;
    *n_rows = 0;
    trace_fit *tf = calloc(n ? n : 1, sizeof *tf);
    group_key *groups = calloc(N_LEVELS * n + 1, sizeof *groups);
    cf_spot_table_row *out = NULL;
    cf_status st = tf && groups ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t m = 0, n_groups = 0;
    cf_spot_runs all_cluster = {0};
    for (size_t i = 0; i < n && st == CF_OK; i++) {
        if (traces[i].n_types != 1)
            continue;
        trace_fit *f = &tf[m];
        f->t = &traces[i];
        if ((st = cf_spot_runs_add(&f->runs, &traces[i])) != CF_OK)
            break;
        m++;
        cf_spot_trace_summary_of(&f->runs, &f->sum);
        for (size_t c = 0; c < f->runs.n_cycles; c++) {
            f->up_h += f->runs.up_h[c];
            f->total_h += f->runs.up_h[c] + f->runs.down_h[c];
        }
        if (traces[i].vm[0].requested > 1)
            st = cf_spot_runs_add(&all_cluster, &traces[i]);
        for (int level = 0; level < N_LEVELS; level++) {
            f->key[level] = key_at(&traces[i].vm[0], level);
            size_t g = 0;
            while (g < n_groups && !same_key(&groups[g], &f->key[level]))
                g++;
            if (g == n_groups)
                groups[n_groups++] = f->key[level];
        }
    }
    /* τ² per level; a level without two traces in a group borrows the
     * next finer one, then the coarser, then the prior; never less than a
     * finer level's (a row that knows less is not more certain). */
    double tau2[N_LEVELS][2];
    for (int level = 0; level < N_LEVELS && st == CF_OK; level++)
        level_tau2(tf, m, level, &tau2[level][0], &tau2[level][1]);
    for (int k = 0; k < 2 && st == CF_OK; k++) {
        double known = -1;
        for (int level = 0; level < N_LEVELS; level++)
            if (tau2[level][k] >= 0)
                known = known < 0 ? tau2[level][k] : known;
        if (known < 0)
            known = CF_SPOT_REGIME_SD_PRIOR * CF_SPOT_REGIME_SD_PRIOR;
        double floor = 0;
        for (int level = 0; level < N_LEVELS; level++) {
            if (tau2[level][k] < 0)
                tau2[level][k] = known;
            tau2[level][k] = fmax(tau2[level][k], floor);
            floor = tau2[level][k];
            known = tau2[level][k];
        }
    }
    cf_spot_process inner_all;
    cf_spot_process_fit(&all_cluster, NULL, &inner_all);
    int have_cluster = all_cluster.multi_node;
    cf_spot_runs_free(&all_cluster);
    if (st == CF_OK) {
        qsort(groups, n_groups, sizeof *groups, group_order);
        out = calloc(n_groups ? n_groups : 1, sizeof *out);
        if (!out)
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    for (size_t g = 0; g < n_groups && st == CF_OK; g++)
        st = fit_row(&groups[g], tf, m, tau2[key_level(&groups[g])], have_cluster ? &inner_all : NULL, &out[g]);
    for (size_t i = 0; i < m; i++)
        cf_spot_runs_free(&tf[i].runs);
    free(tf);
    free(groups);
    if (st != CF_OK) {
        free(out);
        return st;
    }
    *rows = out;
    *n_rows = n_groups;
    return CF_OK;
}
