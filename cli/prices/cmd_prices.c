/* cloudfit prices [GPU[:N]] [--gpu GPU[:N]]... [--cloud C] [--region R] [--spot] [--format table|json|csv]
 *
 * Without a GPU: the cheapest $/GPU-hour per GPU model and cloud, like
 * `sky show-gpus`. With GPU[:N] (or one --gpu): every offer of that GPU
 * (or family) and count; with several --gpu, the summary of those. Both read the catalog in use (newest price snapshot, else
 * embedded), computed by the library (cf_prices_query) and rendered
 * with render/prices_report.c. `prices update` is cmd_prices_update.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "exit_codes.h"
#include "io/catalog_source.h"
#include "io/evidence.h"
#include "cloudfit/usecase/prices.h"
#include "log.h"
#include "prices/cmd_prices_update.h"
#include "cloudfit/render/prices_report.h"
#include "term/output.h"

typedef enum { FMT_TABLE, FMT_JSON, FMT_CSV } out_format;

static int parse_format(const cf_cli_options *o, out_format *out)
{
    *out = FMT_TABLE;
    if (!o->format || strcmp(o->format, "table") == 0)
        return 0;
    if (strcmp(o->format, "json") == 0)
        *out = FMT_JSON;
    else if (strcmp(o->format, "csv") == 0)
        *out = FMT_CSV;
    else {
        cf_log_error("option '--format' does not accept '%s'", o->format);
        cf_log_hint("use one of: table, json, csv");
        return CF_EXIT_USAGE;
    }
    return 0;
}

/* Writes the rendered result (JSON document or text) and frees both. */
static int emit(const cf_cli_options *o, cJSON *doc, cf_buf *text)
{
    if (cf_cli_format_is(o, "table"))
        cf_cli_fit_text(cf_cli_output_width(o), text);
    int rc = cf_cli_emit(o, doc, text);
    cJSON_Delete(doc);
    cf_buf_free(text);
    return rc;
}

/* The summary or one GPU's offers (the argument `gpu`, and --gpu's when
 * `gpu_option`), rendered in `fmt`. */
static int show(cf_catalog_source *src, const cf_cli_options *o, out_format fmt, const char *gpu, int gpu_option)
{
    cf_prices_request req = {.catalog_source = src, .gpu = gpu,
                             .gpus = gpu_option ? (const char *const *)o->gpus.items : NULL,
                             .n_gpus = gpu_option ? (size_t)o->gpus.n : 0,
                             .clouds = (const char *const *)o->clouds.items, .n_clouds = (size_t)o->clouds.n,
                             .regions = (const char *const *)o->regions.items, .n_regions = (size_t)o->regions.n,
                             .spot_only = o->spot_only, .include_restricted_regions = o->include_restricted_regions,
                             .prefer_regions = (const char *const *)o->prefer_regions.items,
                             .n_prefer_regions = (size_t)o->prefer_regions.n, .note = cf_cli_note, .note_ctx = src};
    cf_prices_result res;
    if (cf_prices_query(&req, &res) != CF_OK) {
        cf_prices_result_free(&res);
        int rc = cf_report_error();
        if (gpu_option && !cf_cli_on_command_line(o, "gpu"))
            cf_log_hint("--gpu is the configuration file's ('cloudfit config show prices' says which key)");
        return rc;
    }
    res.summary.width = res.by_gpu.width = cf_cli_output_width(o);
    cf_buf text = CF_BUF_INIT;
    cJSON *doc = NULL;
    if (res.one_gpu && fmt == FMT_CSV)
        cf_prices_offers_csv(&res.by_gpu, &text);
    else if (res.one_gpu && fmt == FMT_TABLE)
        cf_prices_offers_table(&res.by_gpu, &text);
    else if (res.one_gpu)
        doc = cf_prices_offers_json(&res.by_gpu);
    else if (fmt == FMT_CSV)
        cf_prices_summary_csv(&res.summary, &text);
    else if (fmt == FMT_TABLE)
        cf_prices_summary_table(&res.summary, &text);
    else
        doc = cf_prices_summary_json(&res.summary);
    int rc = emit(o, doc, &text);
    cf_prices_result_free(&res);
    return rc;
}

int cmd_prices(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    out_format fmt;
    int rc = parse_format(o, &fmt);
    if (rc)
        return rc;
    int update = n_positional >= 1 && strcmp(argv[1], "update") == 0;
    /* the other form's options given on the command line: noted as ignored (a configuration file's default
     * applies where it can); the table is cf_prices_option_subcommands', completion's too */
    const char *given[CF_CLI_MAX_OPTIONS] = {0};
    size_t n = cf_cli_subcommand_options_given(o, CMD_PRICES, cf_prices_option_subcommands, given);
    cf_prices_check_options(update ? "update" : "listing", given, n, cf_cli_note, NULL);
    if (update)
        return cf_cli_prices_update(o, n_positional);
    if (n_positional > 1) {
        cf_log_error("prices takes at most one GPU[:N], got %d arguments", n_positional);
        cf_log_hint("usage: cloudfit prices [GPU[:N]] [--gpu GPU[:N]]... [--cloud C] [--region R] [--spot] "
                    "[--format table|json|csv]");
        return CF_EXIT_USAGE;
    }
    cf_catalog_source src;
    if ((rc = cf_cli_catalog_open(o, 1, &src)))
        return rc;
    /* --cloud and --region: names the catalog knows, a usage error naming
     * the option (and the config key) otherwise, as recommend's. --gpu is
     * the argument's GPU[:N], resolved with it by the library (a tool's
     * spelling too); a configuration file's gives way to the argument. */
    cf_cli_options checked = *o;
    checked.gpus.n = 0;
    rc = cf_cli_check_search_options(&checked, &src.catalog);
    int gpu_option = o->gpus.n > 0 && (n_positional == 0 || cf_cli_on_command_line(o, "gpu"));
    if (rc == 0)
        rc = show(&src, o, fmt, n_positional == 1 ? argv[1] : NULL, gpu_option);
    cf_catalog_source_close(&src);
    return rc;
}
