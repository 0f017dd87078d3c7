#include "cloudfit/usecase/validate.h"

#include "cloudfit/common/buf.h"
#include "cloudfit/common/names.h"
#include "cloudfit/common/number.h"
#include "cloudfit/profiler/crossgpu.h"
#include "cloudfit/profiler/gns_traces.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CF_VALIDATE_PARAMS_MAX 1e15 /* the spec's model.parameters: 1 to 1e15 (docs/spec.md) */

static void note(const cf_validate_request *req, cf_note_kind kind, const char *text)
{
    if (req->note)
        req->note(req->note_ctx, kind, text);
}

cf_status cf_model_params_parse(const char *const *items, size_t n, cf_model_param **out, size_t *n_out)
{
    *n_out = 0;
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(items[i], '=');
        double v = 0;
        if (!eq || eq == items[i])
            return cf_error_set(CF_ERR_USAGE, "expects NAME=COUNT, got '%s'", items[i]);
        /* bounded as the spec's model.parameters: 1e308 gave inf% errors (null in JSON) at exit 0 */
        if (cf_number_double(eq + 1, 1, CF_VALIDATE_PARAMS_MAX, &v) != CF_NUMBER_OK)
            return cf_error_set(CF_ERR_USAGE, "expects a positive parameter count up to %g (as the spec's "
                                "model.parameters), got '%s'", CF_VALIDATE_PARAMS_MAX, items[i]);
        char *name = malloc((size_t)(eq - items[i]) + 1);
        if (!name)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        memcpy(name, items[i], (size_t)(eq - items[i]));
        name[eq - items[i]] = '\0';
        (*out)[(*n_out)++] = (cf_model_param){.name = name, .parameters = v};
    }
    return CF_OK;
}

void cf_model_params_free(cf_model_param *params, size_t n)
{
    for (size_t i = 0; params && i < n; i++)
        free((char *)params[i].name);
    free(params);
}

/* Every --params name matches a model of the file (as the built-in table's
 * names match: ignoring case and separators); one that matches none is a
 * usage error listing the file's models. */
static cf_status params_match_models(const cf_validate_request *req, const cf_validate_group *groups,
                                     size_t n_groups)
{
    for (size_t i = 0; i < req->n_params; i++) {
        int found = 0;
        for (size_t g = 0; g < n_groups && !found; g++)
            found = cf_names_equal(req->params[i].name, groups[g].model, CF_MODEL_NAME_SEPARATORS);
        if (found)
            continue;
        cf_buf models = CF_BUF_INIT;
        for (size_t g = 0; g < n_groups; g++) {
            int seen = 0;
            for (size_t h = 0; h < g && !seen; h++)
                seen = strcmp(groups[h].model, groups[g].model) == 0;
            if (!seen)
                cf_buf_printf(&models, "%s%s", models.len ? ", " : "", groups[g].model);
        }
        cf_status st = cf_error_set(CF_ERR_USAGE, "option '--params': no model '%s' in %s (its models: %s)",
                                    req->params[i].name, req->path, cf_buf_cstr(&models));
        cf_error_hint("--params NAME=COUNT names a model of the file's model column (case and - _ . are ignored)");
        cf_buf_free(&models);
        return st;
    }
    return CF_OK;
}

/* Says which groups mix VM sizes in their multi-node rows (their network
 * is taken as the first size's NIC), and which were skipped. */
static cf_status note_groups(const cf_validate_request *req, const cf_validate_group *groups, size_t n_groups)
{
    for (size_t g = 0; g < n_groups; g++) {
        const cf_validate_group *group = &groups[g];
        cf_buf text = CF_BUF_INIT;
        if (group->skipped)
            cf_buf_printf(&text, "%s: %s/%s skipped: %s", req->path, group->model, group->gpu, group->message);
        else if (group->hw_other_line)
            cf_buf_printf(&text,
                          "%s:%ld: %s: hw_gpus_per_node %d, but the group's multi-node rows from line %ld ran on "
                          "VMs of %d GPUs; its network is taken as the %d-GPU VM's",
                          req->path, group->hw_other_line, group->label, group->hw_other, group->hw_line,
                          group->hw_gpus_per_node, group->hw_gpus_per_node);
        if (cf_buf_failed(&text)) {
            cf_buf_free(&text);
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        }
        if (text.len)
            note(req, CF_NOTE_WARNING, cf_buf_cstr(&text));
        if (group->skipped && group->hint[0])
            note(req, CF_NOTE_HINT, group->hint);
        else if (!group->skipped && group->hw_other_line)
            note(req, CF_NOTE_HINT, "give the runs on each VM size their own profile (the profile column)");
        cf_buf_free(&text);
    }
    return CF_OK;
}

/* Says which groups' multi-node rows were predicted on a guessed network:
 * nothing measured across VMs and a NIC the catalog does not give (their
 * interval spans the catalog's NICs, docs/model.md "Intervals"). */
static cf_status note_unknown_nic(const cf_validate_request *req, const cf_validate_group *groups, size_t n_groups)
{
    cf_buf text = CF_BUF_INIT;
    size_t n = 0;
    for (size_t g = 0; g < n_groups; g++) {
        const cf_validate_group *group = &groups[g];
        int multi_node = 0;
        for (int b = 0; b < group->n_buckets; b++)
            multi_node |= group->bucket_nodes[b] > 1 && group->by_nodes[b].n > 0;
        if (group->skipped || group->failed || !multi_node || group->params.network_provenance != CF_PROV_DEFAULT ||
            group->params.nic_gbps > 0)
            continue;
        if (n < 3)
            cf_buf_printf(&text, "%s%s", n ? ", " : "", group->label);
        n++;
    }
    if (n > 3)
        cf_buf_printf(&text, " and %zu more", n - 3);
    if (cf_buf_failed(&text)) {
        cf_buf_free(&text);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    if (n) {
        char *line = NULL;
        size_t len = strlen(req->path) + text.len + 400;
        if (!(line = malloc(len))) {
            cf_buf_free(&text);
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        }
        snprintf(line, len,
                 "%s: %s: the NIC is unknown (no catalog VM has that GPU and GPUs per VM) and nothing measured the "
                 "network, so their multi-node rows are predicted on a guessed %g Gbit/s; their 80 %% interval spans "
                 "the catalog's NICs, %g to %g Gbit/s",
                 req->path, cf_buf_cstr(&text), CF_DEFAULT_UNKNOWN_NETWORK_GBPS, CF_UNKNOWN_NIC_SLOWEST_GBPS,
                 CF_UNKNOWN_NIC_FIT_BOUND_GBPS);
        note(req, CF_NOTE_WARNING, line);
        note(req, CF_NOTE_HINT, "pass --inter-node-gbps GBPS with the cluster's NIC, or --with-2node-probe to fit the "
                                "network on its 2-node × 1-GPU rows");
        free(line);
    }
    cf_buf_free(&text);
    return CF_OK;
}

/* Rows of one configuration: the group's model, GPU (one spelling, after
 * unify_gpu_names), profile and precision, and the run's shape and batch;
 * then by line. */
static int configuration_cmp(const cf_measurement *x, const cf_measurement *y)
{
    int c = strcmp(x->model, y->model);
    if (!c) c = strcmp(x->gpu, y->gpu);
    if (!c) c = strcmp(x->profile, y->profile);
    if (!c) c = (x->has_precision ? 1 + (int)x->precision : 0) - (y->has_precision ? 1 + (int)y->precision : 0);
    if (!c) c = (x->hw_gpus_per_node > y->hw_gpus_per_node) - (x->hw_gpus_per_node < y->hw_gpus_per_node);
    if (!c) c = (x->num_nodes > y->num_nodes) - (x->num_nodes < y->num_nodes);
    if (!c) c = (x->num_gpus > y->num_gpus) - (x->num_gpus < y->num_gpus);
    if (!c) c = (x->local_bsz > y->local_bsz) - (x->local_bsz < y->local_bsz);
    return c ? c : strcmp(x->placement, y->placement);
}

static int configuration_order(const void *a, const void *b)
{
    const cf_measurement *x = *(const cf_measurement *const *)a, *y = *(const cf_measurement *const *)b;
    int c = configuration_cmp(x, y);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* A configuration measured more than once is kept: every row is fitted
 * (in the training subset) and scored as a row of its own, as a campaign
 * that repeats a run measured it. It is said, with the count and the
 * first repeat's lines: a row written twice was scored twice without a
 * word. */
static cf_status note_repeats(const cf_validate_request *req, const cf_measurement_set *set)
{
    if (set->n_rows < 2)
        return CF_OK;
    const cf_measurement **by = malloc(set->n_rows * sizeof *by);
    if (!by)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < set->n_rows; i++)
        by[i] = &set->rows[i];
    qsort(by, set->n_rows, sizeof *by, configuration_order);
    size_t repeats = 0, same_time = 0;
    const cf_measurement *first = NULL, *of = NULL, *start = by[0];
    for (size_t i = 1; i < set->n_rows; i++) {
        if (configuration_cmp(start, by[i]) != 0) {
            start = by[i];
            continue;
        }
        repeats++;
        same_time += by[i]->step_time_s == start->step_time_s;
        if (!first || by[i]->line < first->line)
            first = by[i], of = start;
    }
    free(by);
    if (!repeats)
        return CF_OK;
    cf_buf text = CF_BUF_INIT;
    cf_buf_printf(&text, "%s: %zu row%s repeat%s the configuration of an earlier row (the first: line %ld repeats "
                  "line %ld, %s/%s %d node%s × %d GPU%s, batch %d per GPU)", req->path, repeats,
                  repeats == 1 ? "" : "s", repeats == 1 ? "s" : "", first->line, of->line, first->model, first->gpu,
                  first->num_nodes, first->num_nodes == 1 ? "" : "s", first->num_gpus, first->num_gpus == 1 ? "" : "s",
                  first->local_bsz);
    if (same_time)
        cf_buf_printf(&text, ", %zu with the same step time", same_time);
    cf_buf_puts(&text, "; each row is fitted and scored as a row of its own");
    if (cf_buf_failed(&text)) {
        cf_buf_free(&text);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    note(req, CF_NOTE_WARNING, cf_buf_cstr(&text));
    note(req, CF_NOTE_HINT, same_time ? "a row with the same step time may be written twice: remove the copy; "
                                        "repeated runs of a configuration are real data and are kept"
                                      : "repeated runs of a configuration are real data and are kept: each weighs "
                                        "in the fit and the scores as one row");
    cf_buf_free(&text);
    return CF_OK;
}

/* Rows naming one GPU of the table in other spellings ("T4", "Tesla T4",
 * "t4": docs/catalog.md "GPU names") are one GPU: each takes the spelling of
 * the file's first row of that GPU, so they form one group (they were two,
 * and the one of multi-node rows alone had nothing to fit). Names of no GPU
 * of the table are kept as they are. */
static cf_status unify_gpu_names(cf_measurement_set *set, const cf_gpu *gpus, size_t n_gpus)
{
    typedef struct {
        const cf_gpu *gpu;
        size_t row;
    } first_row;
    first_row *firsts = malloc((set->n_rows ? set->n_rows : 1) * sizeof *firsts);
    if (!firsts)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n_firsts = 0;
    char last[sizeof set->rows[0].gpu] = "";
    const cf_gpu *last_gpu = NULL;
    for (size_t i = 0; i < set->n_rows; i++) {
        cf_measurement *r = &set->rows[i];
        if (i == 0 || strcmp(r->gpu, last) != 0) { /* rows come in runs of one name */
            snprintf(last, sizeof last, "%s", r->gpu);
            last_gpu = cf_gpu_resolve(gpus, n_gpus, r->gpu);
        }
        if (!last_gpu)
            continue;
        size_t k = 0;
        while (k < n_firsts && firsts[k].gpu != last_gpu)
            k++;
        if (k == n_firsts)
            firsts[n_firsts++] = (first_row){last_gpu, i};
        else if (strcmp(set->rows[firsts[k].row].gpu, r->gpu) != 0)
            memcpy(r->gpu, set->rows[firsts[k].row].gpu, sizeof r->gpu);
    }
    free(firsts);
    return CF_OK;
}

/* --train-gpus names as the file spells them: a name that resolves to a GPU
 * of the file's rows is that GPU ("--train-gpus T4" of rows that say
 * "Tesla T4"); any other name is kept (and refused as having no rows). */
static cf_status train_gpu_names(const cf_validate_request *req, cf_validate_result *out)
{
    if (req->n_train_gpus == 0)
        return CF_OK;
    if (!(out->train_gpus = calloc(req->n_train_gpus, sizeof *out->train_gpus)))
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t t = 0; t < req->n_train_gpus; t++) {
        const char *name = req->train_gpus[t];
        const cf_gpu *g = cf_gpu_resolve(out->catalog.gpus, out->catalog.n_gpus, name);
        out->train_gpus[t] = name;
        for (size_t i = 0; g && i < out->set.n_rows; i++)
            if (strcasecmp(out->set.rows[i].gpu, name) == 0) {
                break; /* the file's own spelling */
            } else if (cf_gpu_resolve(out->catalog.gpus, out->catalog.n_gpus, out->set.rows[i].gpu) == g) {
                out->train_gpus[t] = out->set.rows[i].gpu;
                break;
            }
    }
    return CF_OK;
}

cf_status cf_validate_run(const cf_validate_request *req, cf_validate_result *out)
{
    memset(out, 0, sizeof *out);
    if (req->constants && cf_perf_constants_check(req->constants) != CF_OK)
        return CF_ERR_INVALID;
    cf_status st = cf_measurements_parse_progress(req->text, req->len, req->path, &out->set, req->progress,
                                                  req->progress_ctx);
    if (st != CF_OK)
        return st;
    if ((st = cf_catalog_load_embedded(&out->catalog)) != CF_OK)
        return st;
    if ((st = unify_gpu_names(&out->set, out->catalog.gpus, out->catalog.n_gpus)) != CF_OK ||
        (st = train_gpu_names(req, out)) != CF_OK)
        return st;
    if ((st = note_repeats(req, &out->set)) != CF_OK)
        return st;
    if ((st = cf_validate_find_groups(out->set.rows, out->set.n_rows, &out->groups, &out->n_groups)) != CF_OK)
        return st;
    char line[160];
    snprintf(line, sizeof line, "validate: fitting and scoring %zu group%s of %zu rows", out->n_groups,
             out->n_groups == 1 ? "" : "s", out->set.n_rows);
    note(req, CF_NOTE_PROGRESS, line);
    out->context = (cf_validate_context){.gpus = out->catalog.gpus, .n_gpus = out->catalog.n_gpus,
                                         .vms = out->catalog.vms, .n_vms = out->catalog.n_vms,
                                         .params = req->params, .n_params = req->n_params,
                                         .inter_node_gbps = req->inter_node_gbps};
    if (req->with_per_row &&
        !(out->per_row = calloc(out->set.n_rows ? out->set.n_rows : 1, sizeof *out->per_row)))
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    out->options = (cf_validate_options){.per_row = out->per_row,
                                         .train_max_nodes = req->train_max_nodes > 0 ? req->train_max_nodes : 1,
                                         .with_2node_probe = req->with_2node_probe,
                                         .light_profile = req->light_profile,
                                         .train_gpus = (const char *const *)out->train_gpus,
                                         .n_train_gpus = req->n_train_gpus, .fit_all_rows = req->fit_all_rows,
                                         .constants = req->constants};
    out->report = (cf_validate_steps_report){.path = req->path, .n_rows = out->set.n_rows,
                                             .options = &out->options, .context = &out->context,
                                             .groups = out->groups, .n_groups = out->n_groups};
    if ((st = params_match_models(req, out->groups, out->n_groups)) != CF_OK)
        return st;
    cf_validate_prepare(out->set.rows, out->set.n_rows, &out->context, out->groups, out->n_groups);
    if ((st = note_groups(req, out->groups, out->n_groups)) != CF_OK)
        return st;
    st = cf_validate_steps(out->set.rows, out->set.n_rows, &out->options, out->groups, out->n_groups,
                           &out->report.overall);
    if (st != CF_OK)
        return st;
    if (out->report.overall.n == 0)
        return cf_validate_nothing_predicted(req->path, &out->options, out->groups, out->n_groups);
    return note_unknown_nic(req, out->groups, out->n_groups);
}

void cf_validate_result_free(cf_validate_result *out)
{
    free(out->per_row);
    free(out->train_gpus);
    free(out->groups);
    cf_catalog_free(&out->catalog);
    cf_measurements_free(&out->set);
    memset(out, 0, sizeof *out);
}

cf_status cf_validate_gns_run(const char *traces_path, const char *models_path, double train_epochs,
                              cf_validate_gns_report *out)
{
    memset(out, 0, sizeof *out);
    out->train_epochs = train_epochs > 0 ? train_epochs : 0;
    cf_gns_traces traces;
    cf_status st = cf_gns_traces_load(traces_path, models_path, &traces);
    if (st != CF_OK)
        return st;
    cf_gns_validate_options options = {.train_epochs = out->train_epochs};
    cf_gns_prediction *predictions = NULL;
    st = cf_validate_gns(&traces, &options, &predictions, &out->n, &out->overall);
    out->predictions = predictions;
    out->n_unlisted_rows = traces.n_unlisted_rows;
    out->first_unlisted_line = traces.first_unlisted_line;
    snprintf(out->first_unlisted, sizeof out->first_unlisted, "%s", traces.first_unlisted);
    snprintf(out->traces_name, sizeof out->traces_name, "%s", traces.traces_name ? traces.traces_name : "");
    snprintf(out->models_name, sizeof out->models_name, "%s", traces.models_name ? traces.models_name : "");
    cf_gns_traces_free(&traces);
    return st;
}

void cf_validate_gns_report_free(cf_validate_gns_report *out)
{
    free((cf_gns_prediction *)out->predictions);
    memset(out, 0, sizeof *out);
}

cf_status cf_validate_crossgpu_run(const char *path, cf_note_fn on_note, void *note_ctx,
                                   cf_validate_crossgpu_result *out)
{
    memset(out, 0, sizeof *out);
    cf_crossgpu_set set;
    cf_status st = cf_crossgpu_load(path, &set);
    if (st != CF_OK)
        return st;
    st = cf_catalog_load_embedded(&out->catalog);
    if (st == CF_OK) {
        const cf_catalog *catalog = &out->catalog;
        char unknown[200];
        size_t n_unknown = cf_crossgpu_resolve_gpus(&set, catalog->gpus, catalog->n_gpus, unknown, sizeof unknown);
        out->report.rows_left_out = n_unknown;
        if (n_unknown && on_note) {
            char line[400];
            snprintf(line, sizeof line,
                     "%zu of %zu rows name a GPU that is not in the GPU table (%s; docs/catalog.md); they are left out",
                     n_unknown, set.n_rows, unknown);
            on_note(note_ctx, CF_NOTE_INFO, line);
        }
        st = cf_validate_crossgpu(&set, catalog->gpus, catalog->n_gpus, &out->report.v);
        if (st == CF_ERR_INVALID)
            cf_error_prefix("%s", path); /* what in the file is missing: name the file */
    }
    cf_crossgpu_free(&set);
    return st;
}

void cf_validate_crossgpu_result_free(cf_validate_crossgpu_result *out)
{
    cf_carry_validation_free(&out->report.v);
    cf_catalog_free(&out->catalog);
    memset(out, 0, sizeof *out);
}
