/* cloudfit validate: how well the models predict real measurements. Reads
 * the files, lets the library compute (usecase/validate.c: cf_validate_run,
 * cf_validate_gns_run, cf_validate_crossgpu_run), renders
 * (render/validate_report.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/escape.h"
#include "cloudfit/common/fileio.h"
#include "cloudfit/common/names.h"
#include "cloudfit/pricing.h"
#include "cloudfit/profiler/measurements.h"
#include "commands.h"
#include "exit_codes.h"
#include "io/evidence.h"
#include "log.h"
#include "term/output.h"
#include "term/progress.h"
#include "cloudfit/render/validate_report.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/number.h"
#include "cloudfit/usecase/validate.h"

static int usage(const char *fmt, const char *arg) CF_PRINTF(1, 0);
static int usage(const char *fmt, const char *arg)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    cf_log_error(fmt, arg); /* every caller passes a literal with one %s */
#pragma GCC diagnostic pop
    cf_log_hint("usage: cloudfit validate MEASUREMENTS.csv | --gns TRACES.csv --models MODELS.csv | --crossgpu FILE");
    return CF_EXIT_USAGE;
}

/* A library usage error about `option`'s value (exit 2); others as they are. */
static int option_error(const char *option, cf_status st)
{
    if (st != CF_ERR_USAGE)
        return cf_report_error();
    char why[300];
    snprintf(why, sizeof why, "option '%s' %s", option, cf_error_message());
    return usage("%s", why);
}

/* Files from this size on show their progress (docs/cli.md). */
#define CF_VALIDATE_PROGRESS_BYTES (8u << 20)

static int render(const cf_cli_options *o, cJSON *doc, cf_buf *table)
{
    int rc = cf_cli_emit(o, doc, table);
    cJSON_Delete(doc);
    cf_buf_free(table);
    return rc;
}

/* --model-constants NAME=VALUE[,NAME=VALUE...] over the shipped constants. */
static int parse_constants(const cf_cli_options *o, cf_perf_constants *k)
{
    *k = cf_perf_constants_default();
    cf_status st = cf_perf_constants_parse(o->model_constants.items, (size_t)o->model_constants.n, k);
    if (st == CF_OK)
        return 0;
    cf_log_error("option '--model-constants'%s %s", st == CF_ERR_USAGE ? "" : ":", cf_error_message());
    if (cf_error_hint_text()[0])
        cf_log_hint("%s", cf_error_hint_text());
    cf_error_clear();
    return CF_EXIT_USAGE;
}

/* What cf_validate_run says on the way: the fitting phase on a large
 * file's progress display, skipped groups as warnings. */
typedef struct {
    cf_cli_progress *progress;
    int large;
} validate_notes;

static void on_note(void *ctx, cf_note_kind kind, const char *text)
{
    validate_notes *notes = ctx;
    if (kind == CF_NOTE_PROGRESS) {
        if (notes->large)
            cf_cli_progress_note(notes->progress, text);
        return;
    }
    cf_cli_progress_end(notes->progress);
    cf_cli_note(NULL, kind, text);
}

static int validate_steps(const cf_cli_options *o, const char *path)
{
    if (o->light_profile && o->train_max_nodes > 0)
        return usage("options '--light-profile' and '--train-max-nodes' both choose the rows to fit; give one%s", "");
    cf_perf_constants constants;
    int rc = parse_constants(o, &constants);
    if (rc)
        return rc;
    cf_model_param *params = NULL;
    size_t n_params = 0;
    cf_status st = cf_model_params_parse(o->params.items, (size_t)o->params.n, &params, &n_params);
    if (st != CF_OK) {
        cf_model_params_free(params, n_params);
        return option_error("--params", st);
    }
    char **train_gpus = NULL; /* --train-gpus A,B --train-gpus C: A, B, C */
    size_t n_train = 0;
    /* (--rows naming the measurements file: refused before any command runs, cf_cli_check_outputs) */
    if ((st = cf_names_split_list(o->train_gpus.items, (size_t)o->train_gpus.n, &train_gpus, &n_train)) != CF_OK) {
        cf_model_params_free(params, n_params);
        return option_error("--train-gpus", st);
    }
    /* A large file gets a progress display: its rows as they are read, then the fitting. */
    cf_cli_progress progress;
    cf_cli_progress_begin(&progress, o, "validate");
    char *text = NULL;
    size_t len = 0;
    st = cf_read_file(path, &text, &len);
    int large = st == CF_OK && len >= CF_VALIDATE_PROGRESS_BYTES;
    if (large) {
        char line[1200];
        snprintf(line, sizeof line, "validate: reading %s (%.1f MB)", path, (double)len / 1e6);
        cf_cli_progress_note(&progress, line);
    }
    validate_notes notes = {.progress = &progress, .large = large};
    cf_validate_request req = {.path = path, .text = text, .len = len, .params = params, .n_params = n_params,
                               .inter_node_gbps = o->inter_node_gbps, .train_max_nodes = o->train_max_nodes,
                               .with_2node_probe = o->with_2node_probe, .light_profile = o->light_profile,
                               .fit_all_rows = o->fit_all_rows, .train_gpus = (const char *const *)train_gpus,
                               .n_train_gpus = n_train, .constants = o->model_constants.n ? &constants : NULL,
                               .with_per_row = o->rows_path != NULL,
                               .progress = large ? cf_cli_progress_count_cb : NULL, .progress_ctx = &progress,
                               .note = on_note, .note_ctx = &notes};
    cf_validate_result result;
    if (st == CF_OK)
        st = cf_validate_run(&req, &result);
    else
        memset(&result, 0, sizeof result);
    free(text);
    cf_cli_progress_end(&progress);
    if (st != CF_OK)
        rc = cf_report_error();
    /* --rows is staged, and published only once the result was delivered
     * (a failed delivery left it behind) */
    cf_staged_file rows_file = {0};
    if (rc == 0 && result.per_row) {
        cf_buf csv = CF_BUF_INIT, shown = CF_BUF_INIT; /* through the sanitiser, as every result (names were raw) */
        cf_validate_rows_csv(result.set.rows, result.set.n_rows, result.per_row, &csv);
        cf_escape_output(csv.data ? csv.data : "", csv.len, CF_ESCAPE_CSV, NULL, &shown);
        if (cf_file_stage(o->rows_path, shown.data ? shown.data : "", shown.len, &rows_file) != CF_OK)
            rc = cf_cli_side_file_error("rows", o->rows_path);
        cf_buf_free(&csv);
        cf_buf_free(&shown);
    }
    if (rc == 0) {
        cf_buf table = CF_BUF_INIT;
        if (!cf_cli_format_is(o, "json"))
            cf_validate_steps_table(&result.report, &table);
        rc = render(o, cf_cli_format_is(o, "json") ? cf_validate_steps_json(&result.report) : NULL, &table);
    }
    if (rc == 0 && rows_file.target && cf_file_commit(&rows_file) != CF_OK)
        rc = cf_report_error();
    cf_file_discard(&rows_file);
    cf_validate_result_free(&result);
    cf_model_params_free(params, n_params);
    free(train_gpus);
    return rc;
}

static int validate_gns(const cf_cli_options *o)
{
    if (!o->models_path)
        return usage("option '--gns' needs '--models MODELS.csv'%s", "");
    cf_validate_gns_report report;
    int rc = cf_validate_gns_run(o->gns_path, o->models_path, o->train_epochs, &report) != CF_OK ? cf_report_error() : 0;
    if (rc == 0) {
        cf_buf table = CF_BUF_INIT;
        if (!cf_cli_format_is(o, "json"))
            cf_validate_gns_table(&report, &table);
        rc = render(o, cf_cli_format_is(o, "json") ? cf_validate_gns_json(&report) : NULL, &table);
    }
    cf_validate_gns_report_free(&report);
    return rc;
}

static int validate_crossgpu(const cf_cli_options *o)
{
    cf_validate_crossgpu_result result;
    int rc = cf_validate_crossgpu_run(o->crossgpu_path, cf_cli_note, NULL, &result) != CF_OK ? cf_report_error() : 0;
    if (rc == 0) {
        cf_buf table = CF_BUF_INIT;
        if (!cf_cli_format_is(o, "json"))
            cf_validate_crossgpu_table(&result.report, &table);
        rc = render(o, cf_cli_format_is(o, "json") ? cf_validate_crossgpu_json(&result.report) : NULL, &table);
    }
    cf_validate_crossgpu_result_free(&result);
    return rc;
}

int cmd_validate(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    int modes = (o->gns_path != NULL) + (o->crossgpu_path != NULL) + (n_positional > 0);
    if (modes != 1)
        return usage(modes ? "give one of MEASUREMENTS.csv, --gns or --crossgpu%s" : "missing the measurements file%s",
                     "");
    if (n_positional > 1)
        return usage("validate takes one measurements file%s", "");
    /* an option of another mode would do nothing: refused, not ignored */
    const char *step_only = o->rows_path                 ? "--rows"
                            : o->model_constants.n       ? "--model-constants"
                            : o->with_2node_probe        ? "--with-2node-probe"
                            : o->train_max_nodes > 0     ? "--train-max-nodes"
                            : o->light_profile           ? "--light-profile"
                            : o->fit_all_rows            ? "--fit-all-rows"
                            : o->train_gpus.n            ? "--train-gpus"
                            : o->params.n                ? "--params"
                            : o->inter_node_gbps > 0     ? "--inter-node-gbps"
                                                         : NULL;
    if (!n_positional && step_only) {
        char why[128];
        snprintf(why, sizeof why, "option '%s' applies to a measurements file, not to %s", step_only,
                 o->gns_path ? "--gns" : "--crossgpu");
        return usage("%s", why);
    }
    if (!o->gns_path && (o->models_path || o->train_epochs > 0))
        return usage("option '%s' goes with --gns", o->models_path ? "--models" : "--train-epochs");
    if (o->gns_path)
        return validate_gns(o);
    if (o->crossgpu_path)
        return validate_crossgpu(o);
    return validate_steps(o, argv[1]);
}
