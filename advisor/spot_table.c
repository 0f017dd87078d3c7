#include "cloudfit/advisor/spot_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* BEGIN GENERATED: build/bench/spot_bench --table examples/spot-traces */
const cf_spot_table_row cf_spot_table[] = {
    {"aws", "V100", 1, "us-east-1", 1, {0.9583, 1.4277, 1.0833, 1.6582, 0.8440, 3.4583, 0.0682, 0.6024}, 44, 0.383, 9.04, 0,
     "us-east-1f 2023-08-03 4n"},
    {"aws", "V100", 1, "us-east-2", 1, {0.5833, 2.2763, 0.7500, 1.7214, 0.2770, 2.4129, 0.2063, 0.6467}, 63, 0.702, 3.08, 0,
     "us-east-2a 2023-08-03 4n; us-east-2b 2023-08-27 16n"},
    {"aws", "V100", 1, "us-west-2", 1, {0.4167, 1.7272, 0.7500, 1.5041, 0.2335, 3.0236, 0.6561, 0.7812}, 189, 0.443, 12.96, 0,
     "us-west-2a 2023-08-27 16n; us-west-2c 2023-08-27 16n"},
    {"aws", "V100", 1, "*", 1, {0.5000, 1.9322, 0.7500, 1.6283, 0.3269, 2.7671, 0.4730, 0.6633}, 296, 0.534, 7.42, 0,
     "5 multi-node traces: all regions"},
    {"aws", "K80", 1, "us-west-2", 0, {0.8333, 1.7204, 0.1667, 2.4782, 0.3269, 2.7671, 0.4730, 0.6633}, 179, 0.505, 6.56, 1,
     "us-west-2a 2022-10-26 1n; us-west-2b 2022-10-26 1n [kd, kr, qf, qr pooled]"},
    {"aws", "K80", 8, "us-west-2", 0, {0.6667, 1.1220, 0.5000, 1.7098, 0.3269, 2.7671, 0.4730, 0.6633}, 381, 0.367, 19.18, 1,
     "us-west-2a 2022-10-26 1n; us-west-2b 2022-10-26 1n [kd, kr, qf, qr pooled]"},
    {"aws", "V100", 1, "us-east-1", 0, {0.4875, 1.5379, 0.5417, 1.6776, 0.8440, 3.4583, 0.0682, 0.6024}, 1322, 0.418, 15.09, 0,
     "us-east-1a 2023-02-15 1n; us-east-1c 2023-02-15 1n; us-east-1c 2023-04-22 1n; us-east-1d 2023-02-15 1n; us-east-1f 2023-02-15 1n; us-east-1f 2023-04-22 1n; us-east-1f 2023-08-03 4n"},
    {"aws", "V100", 1, "us-east-2", 0, {0.8667, 1.9105, 0.5417, 1.6547, 0.2770, 2.4129, 0.2063, 0.6467}, 384, 0.716, 4.46, 0,
     "us-east-2a 2023-02-15 1n; us-east-2a 2023-08-03 4n; us-east-2b 2023-02-15 1n; us-east-2b 2023-08-27 16n"},
    {"aws", "V100", 1, "us-west-2", 0, {0.5833, 1.7567, 0.5000, 1.5075, 0.2335, 3.0236, 0.6561, 0.7812}, 487, 0.637, 8.79, 0,
     "us-west-2a 2022-10-26 1n; us-west-2a 2023-08-27 16n; us-west-2b 2022-10-26 1n; us-west-2c 2023-08-27 16n"},
    {"aws", "V100", 8, "us-west-2", 0, {0.3333, 1.4231, 0.3333, 1.4977, 0.3269, 2.7671, 0.4730, 0.6633}, 669, 0.473, 26.16, 1,
     "us-west-2a 2022-10-26 1n; us-west-2b 2022-10-26 1n [kd, kr, qf, qr pooled]"},
    {"aws", "K80", 1, "*", 0, {0.8333, 1.7204, 0.1667, 2.4782, 0.3269, 2.7671, 0.4730, 0.6633}, 179, 0.505, 6.56, 1,
     "2 traces: all regions [kd, kr, qf, qr pooled]"},
    {"aws", "K80", 8, "*", 0, {0.6667, 1.1220, 0.5000, 1.7098, 0.3269, 2.7671, 0.4730, 0.6633}, 381, 0.367, 19.18, 1,
     "2 traces: all regions [kd, kr, qf, qr pooled]"},
    {"aws", "V100", 1, "*", 0, {0.5417, 1.7504, 0.5417, 1.6323, 0.3269, 2.7671, 0.4730, 0.6633}, 2193, 0.550, 9.58, 0,
     "15 traces: all regions"},
    {"aws", "V100", 8, "*", 0, {0.3333, 1.4231, 0.3333, 1.4977, 0.3269, 2.7671, 0.4730, 0.6633}, 669, 0.473, 26.16, 1,
     "2 traces: all regions [kd, kr, qf, qr pooled]"},
    {"*", "*", 1, "*", 0, {0.5417, 1.7698, 0.4875, 1.7278, 0.3269, 2.7671, 0.4730, 0.6633}, 2372, 0.545, 9.25, 0,
     "17 traces: all 1-GPU VMs"},
    {"*", "*", 8, "*", 0, {0.3333, 1.5076, 0.3333, 1.7084, 0.3269, 2.7671, 0.4730, 0.6633}, 1050, 0.420, 23.11, 1,
     "4 traces: all multi-GPU VMs [kd, kr, qf, qr pooled]"},
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

static int key_match(const char *row, const char *want) { return strcasecmp(row, want) == 0; }

/* Index of the row for an offer in a table of n rows given by accessors. */
typedef struct {
    const char *cloud, *gpu, *region;
    int size_class, multi_node;
} key;

/* The first row by pass, then by index. Passes 0–1: multi-node rows (plans
 * of ≥ 2 VMs only): 0 the region's row, 1 the offer's pooled row (region
 * "*"); 2–4 the rest: 2 the region's, 3 the pooled, 4 the default row (all
 * "*"). One walk over the rows: each row's first pass is found, each name
 * compared at most once (recommend looks up two rows of every offer). */
static int find(const key *rows, size_t n, const char *cloud, const char *gpu, int size_class, const char *region,
                int nodes, cf_spot_row_kind *kind)
{
    int best = -1, best_pass = 5;
    for (size_t i = 0; i < n && best_pass > 0; i++) {
        const key *k = &rows[i];
        if (k->size_class != size_class || (k->multi_node && nodes < 2))
            continue;
        int base = k->multi_node ? 0 : 2, pass = 5;
        if (key_match(k->cloud, cloud) && key_match(k->gpu, gpu)) {
            if (key_match(k->region, region))
                pass = base;
            else if (strcmp(k->region, "*") == 0)
                pass = base + 1;
        }
        if (pass == 5 && !k->multi_node && strcmp(k->cloud, "*") == 0 && strcmp(k->gpu, "*") == 0 &&
            strcmp(k->region, "*") == 0)
            pass = 4;
        if (pass < best_pass) {
            best_pass = pass;
            best = (int)i;
        }
    }
    if (best >= 0)
        *kind = best_pass % 2 == 0 && best_pass < 4 ? CF_SPOT_ROW_REGION
                : best_pass < 4                    ? CF_SPOT_ROW_POOLED
                                                   : CF_SPOT_ROW_DEFAULT;
    return best;
}

const cf_spot_table_row *cf_spot_model_row(const char *cloud, const char *gpu, int gpus_per_vm, const char *region,
                                           int nodes, cf_spot_row_kind *out_kind)
{
    key keys[64];
    size_t n = cf_spot_table_count < 64 ? cf_spot_table_count : 64;
    for (size_t i = 0; i < n; i++)
        keys[i] = (key){cf_spot_table[i].cloud, cf_spot_table[i].gpu, cf_spot_table[i].region,
                        cf_spot_table[i].size_class, cf_spot_table[i].multi_node};
    cf_spot_row_kind kind = CF_SPOT_ROW_DEFAULT;
    int i = find(keys, n, cloud, gpu, cf_spot_size_class(gpus_per_vm), region, nodes, &kind);
    if (i < 0)
        i = find(keys, n, "*", "*", 1, "*", 1, &kind); /* the table always has it */
    if (out_kind)
        *out_kind = kind;
    return &cf_spot_table[i < 0 ? 0 : i];
}

void cf_spot_model_lookup(const char *cloud, const char *gpu, int gpus_per_vm, const char *region, int nodes,
                          cf_spot_lookup *out)
{
    memset(out, 0, sizeof *out);
    int cls = cf_spot_size_class(gpus_per_vm);
    out->row = cf_spot_model_row(cloud, gpu, gpus_per_vm, region, nodes, &out->kind);
    const cf_spot_table_row *r = out->row;
    const char *clusters = r->multi_node ? "multi-node " : "";
    switch (out->kind) {
    case CF_SPOT_ROW_REGION:
        out->provenance = CF_PROV_FITTED;
        snprintf(out->text, sizeof out->text, "fitted to %sspot traces of %s %s %s VMs in %s (%s)", clusters,
                 r->cloud, r->gpu, cls == 8 ? "multi-GPU" : "1-GPU", r->region, r->traces);
        break;
    case CF_SPOT_ROW_POOLED:
        out->provenance = CF_PROV_FITTED;
        snprintf(out->text, sizeof out->text, "pooled over the %sspot traces of %s %s %s VMs in every region (%s); "
                 "none in %s", clusters, r->cloud, r->gpu, cls == 8 ? "multi-GPU" : "1-GPU", r->traces, region);
        break;
    case CF_SPOT_ROW_DEFAULT:
        out->provenance = CF_PROV_DEFAULT;
        snprintf(out->text, sizeof out->text, "every shipped spot trace of %s VMs (%s); no traces for %s %s",
                 cls == 8 ? "multi-GPU" : "1-GPU", r->traces, cloud, gpu);
        break;
    }
}

void cf_spot_model_lookup_in(const cf_spot_fitted_row *rows, size_t n_rows, const char *cloud, const char *gpu,
                             int gpus_per_vm, const char *region, int nodes, cf_spot_process *out_process,
                             cf_spot_row_kind *out_kind)
{
    key *keys = malloc((n_rows ? n_rows : 1) * sizeof *keys);
    cf_spot_row_kind kind = CF_SPOT_ROW_DEFAULT;
    int i = -1;
    if (keys) {
        for (size_t j = 0; j < n_rows; j++)
            keys[j] = (key){rows[j].cloud, rows[j].gpu, rows[j].region, rows[j].size_class, rows[j].multi_node};
        i = find(keys, n_rows, cloud, gpu, cf_spot_size_class(gpus_per_vm), region, nodes, &kind);
        free(keys);
    }
    if (out_kind)
        *out_kind = kind;
    if (i >= 0)
        *out_process = rows[i].process;
    else
        memset(out_process, 0, sizeof *out_process);
}

/* ---- fitting the table ------------------------------------------------------------- */

typedef struct {
    char cloud[8], gpu[32], region[32];
    int size_class, multi_node;
} group_key;

static int key_rank(const group_key *k)
{
    return !k->multi_node * 8 + (strcmp(k->cloud, "*") == 0) * 4 + (strcmp(k->gpu, "*") == 0) * 2 +
           (strcmp(k->region, "*") == 0);
}

static int group_order(const void *pa, const void *pb)
{
    const group_key *a = pa, *b = pb;
    int c = key_rank(a) - key_rank(b);
    if (!c) c = strcmp(a->cloud, b->cloud);
    if (!c) c = strcmp(a->gpu, b->gpu);
    if (!c) c = a->size_class - b->size_class;
    if (!c) c = strcmp(a->region, b->region);
    return c;
}

static int in_group(const group_key *g, const cf_spot_trace *t)
{
    const cf_spot_trace_vm *vm = &t->vm[0];
    return g->size_class == cf_spot_size_class(vm->gpus_per_vm ? vm->gpus_per_vm : 1) &&
           (!g->multi_node || vm->requested > 1) &&
           (strcmp(g->cloud, "*") == 0 || strcmp(g->cloud, vm->cloud) == 0) &&
           (strcmp(g->gpu, "*") == 0 || strcmp(g->gpu, vm->gpu) == 0) &&
           (strcmp(g->region, "*") == 0 || strcmp(g->region, vm->region) == 0);
}

static int trace_label_order(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

cf_status cf_spot_table_fit(const cf_spot_trace *traces, size_t n, cf_spot_fitted_row **rows, size_t *n_rows)
{
    *rows = NULL;
    *n_rows = 0;
    cf_spot_runs all_multi = {0};
    cf_status st = CF_OK;
    for (size_t i = 0; i < n && st == CF_OK; i++)
        if (traces[i].n_types == 1 && traces[i].vm[0].requested > 1)
            st = cf_spot_runs_add(&all_multi, &traces[i]);
    cf_spot_process inner_all;
    cf_spot_process_fit(&all_multi, NULL, &inner_all);
    int have_multi = all_multi.multi_node;
    cf_spot_runs_free(&all_multi);
    group_key *groups = calloc(5 * n + 2, sizeof *groups);
    size_t n_groups = 0;
    if (!groups)
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n && st == CF_OK; i++) {
        const cf_spot_trace_vm *vm = &traces[i].vm[0];
        if (traces[i].n_types != 1)
            continue;
        int cls = cf_spot_size_class(vm->gpus_per_vm ? vm->gpus_per_vm : 1);
        group_key cand[5];
        memset(cand, 0, sizeof cand);
        snprintf(cand[0].cloud, sizeof cand[0].cloud, "%s", vm->cloud);
        snprintf(cand[0].gpu, sizeof cand[0].gpu, "%s", vm->gpu);
        snprintf(cand[0].region, sizeof cand[0].region, "%s", vm->region);
        cand[1] = cand[0];
        snprintf(cand[1].region, sizeof cand[1].region, "*");
        snprintf(cand[2].cloud, sizeof cand[2].cloud, "*");
        snprintf(cand[2].gpu, sizeof cand[2].gpu, "*");
        snprintf(cand[2].region, sizeof cand[2].region, "*");
        cand[3] = cand[0];
        cand[4] = cand[1];
        cand[3].multi_node = cand[4].multi_node = 1;
        for (int k = 0; k < (vm->requested > 1 ? 5 : 3); k++) {
            cand[k].size_class = cls;
            size_t g;
            for (g = 0; g < n_groups; g++)
                if (group_order(&groups[g], &cand[k]) == 0)
                    break;
            if (g == n_groups)
                groups[n_groups++] = cand[k];
        }
    }
    if (st == CF_OK)
        qsort(groups, n_groups, sizeof *groups, group_order);
    cf_spot_fitted_row *out = st == CF_OK ? calloc(n_groups ? n_groups : 1, sizeof *out) : NULL;
    char **labels = st == CF_OK ? calloc(n ? n : 1, sizeof *labels) : NULL;
    if (st == CF_OK && (!out || !labels))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t g = 0; g < n_groups && st == CF_OK; g++) {
        cf_spot_fitted_row *row = &out[g];
        cf_spot_runs runs = {0};
        size_t members = 0;
        for (size_t i = 0; i < n && st == CF_OK; i++) {
            if (traces[i].n_types != 1 || !in_group(&groups[g], &traces[i]))
                continue;
            st = cf_spot_runs_add(&runs, &traces[i]);
            const cf_spot_trace_vm *vm = &traces[i].vm[0];
            labels[members] = malloc(96);
            if (labels[members])
                snprintf(labels[members], 96, "%s %s %dn", vm->zone, vm->start_date, vm->requested);
            members++;
        }
        if (st == CF_OK) {
            memcpy(row->cloud, groups[g].cloud, sizeof row->cloud);
            memcpy(row->gpu, groups[g].gpu, sizeof row->gpu);
            memcpy(row->region, groups[g].region, sizeof row->region);
            row->size_class = groups[g].size_class;
            row->multi_node = groups[g].multi_node;
            row->inner_pooled = !runs.multi_node;
            cf_spot_process_fit(&runs, have_multi ? &inner_all : NULL, &row->process);
            row->cycles = (int)runs.n_cycles;
            double mu = 0, md = 0;
            for (size_t i = 0; i < runs.n_cycles; i++) {
                mu += runs.up_h[i];
                md += runs.down_h[i];
            }
            if (runs.n_cycles) {
                mu /= (double)runs.n_cycles;
                md /= (double)runs.n_cycles;
                row->avail1 = mu / (mu + md);
                row->rate1_per_node_day = 24.0 / mu;
            }
            if (strcmp(row->region, "*") == 0) {
                if (strcmp(row->cloud, "*") == 0)
                    snprintf(row->traces, sizeof row->traces, "%zu traces: all %s VMs", members,
                             row->size_class == 8 ? "multi-GPU" : "1-GPU");
                else
                    snprintf(row->traces, sizeof row->traces, "%zu %straces: all regions", members,
                             row->multi_node ? "multi-node " : "");
            } else {
                qsort(labels, members, sizeof *labels, trace_label_order);
                size_t len = 0;
                for (size_t i = 0; i < members && len + 1 < sizeof row->traces; i++) {
                    int w = snprintf(row->traces + len, sizeof row->traces - len, "%s%s", i ? "; " : "",
                                     labels[i] ? labels[i] : "?");
                    len = w < 0 ? len : len + (size_t)w;
                }
            }
            size_t len = strlen(row->traces);
            if (row->inner_pooled && len + 1 < sizeof row->traces) {
                snprintf(row->traces + len, sizeof row->traces - len, " [kd, kr, qf, qr pooled]");
            }
        }
        for (size_t i = 0; i < members; i++) {
            free(labels[i]);
            labels[i] = NULL;
        }
        cf_spot_runs_free(&runs);
    }
    free(labels);
    free(groups);
    if (st != CF_OK) {
        free(out);
        return st;
    }
    *rows = out;
    *n_rows = n_groups;
    return CF_OK;
}
