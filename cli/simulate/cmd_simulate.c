/* cloudfit simulate MODEL.json --trace TRACE.csv [--trace TRACE2.csv]
 * [--rule fixed|linear|sqrt|gain|all] [--batch hold|shrink|both]; or
 * --calibrate DIR [--fit DIR2] (docs/spot.md): replays an availability
 * trace against the spec's plan on the trace's VMs and reports, per LR
 * rule, wall time, cost, checkpoints, restarts, lost work and statistical
 * progress; or scores the preemption model on a folder of traces. The
 * library computes (cloudfit/usecase/simulate.h), render/ renders
 * (simulate_report.c, calibrate_report.c). */
#include <stdio.h>
#include <string.h>

#include "cloudfit/pricing.h"
#include "cloudfit/usecase/simulate.h"
#include "commands.h"
#include "exit_codes.h"
#include "io/catalog_source.h"
#include "io/db_open.h"
#include "io/evidence.h"
#include "io/spec_load.h"
#include "log.h"
#include "term/output.h"

static int usage(const char *message)
{
    cf_log_error("%s", message);
    cf_log_hint("usage: cloudfit simulate MODEL.json --trace TRACE.csv [--trace TRACE2.csv] [--rule RULE] "
                "(see 'cloudfit simulate --help')");
    return CF_EXIT_USAGE;
}

static int check_options(const cf_cli_options *o, unsigned *rules, unsigned *batches)
{
    if (o->fit_dir && !o->calibrate_dir)
        return usage("--fit goes with --calibrate DIR");
    if (o->calibrate_dir)
        return o->traces.n > 0 ? usage("--calibrate DIR takes every trace of DIR; leave out --trace") : 0;
    if (cf_cli_on_command_line(o, "confidence")) /* a replay's spread has no quantile to set */
        return usage("--confidence applies to --calibrate only");
    /* an empty --instance-type, --gpu or --region was refused as the options were read (cf_cli_option_check_value) */
    *rules = *batches = 0;
    /* the values are checked against the option table's sets (cf_cli_option_check_value) */
    if ((o->rule && cf_simulate_rules_of(o->rule, rules) != CF_OK) ||
        (o->batch_policy && cf_simulate_batches_of(o->batch_policy, batches) != CF_OK))
        return cf_report_error();
    if (o->traces.n < 1 || o->traces.n > 2)
        return usage(o->traces.n ? "simulate takes one --trace, or two to mix two VM types" : "missing --trace TRACE.csv");
    if (o->clouds.n > 1 || o->regions.n > 1)
        return usage(o->clouds.n > 1 ? "simulate replays one plan: give one --cloud"
                                     : "simulate replays one plan: give one --region");
    if (o->nodes > 0 && o->traces.n > 1)
        return usage("--nodes applies to one trace; with two, each trace's index.csv or largest count decides");
    if (o->traces.n > 1 && (cf_cli_on_command_line(o, "rule") || cf_cli_on_command_line(o, "batch")))
        return usage("--rule and --batch apply to one trace; two traces give one mixed-types row (docs/spot.md)");
    return 0;
}

/* Renders the report in the format asked and writes it. */
static int emit(const cf_cli_options *o, const cf_simulate_report *sim, const cf_calibrate_report *cal)
{
    cJSON *doc = !cf_cli_format_is(o, "json") ? NULL : sim ? cf_simulate_json(sim) : cf_calibrate_json(cal);
    cf_buf text = CF_BUF_INIT;
    if (!doc && sim)
        cf_simulate_table(sim, &text);
    else if (!doc)
        cf_calibrate_table(cal, &text);
    int rc = cf_cli_emit(o, doc, &text);
    cJSON_Delete(doc);
    cf_buf_free(&text);
    return rc;
}

static int run(const cf_cli_options *o, const cf_spec *spec, const cf_catalog *catalog, cf_db *db,
               const char *db_name, unsigned rules, unsigned batches)
{
    cf_status st;
    int rc;
    if (o->calibrate_dir) {
        cf_simulate_calibrate_request req = {.spec = spec, .catalog = catalog, .db = db, .db_name = db_name,
                                             .traces_dir = o->calibrate_dir, .fit_dir = o->fit_dir,
                                             .note = cf_cli_note};
        cf_simulate_calibration res;
        st = cf_simulate_calibrate_run(&req, &res);
        rc = st == CF_OK ? emit(o, NULL, &res.report) : cf_report_error();
        cf_simulate_calibration_free(&res);
    } else {
        cf_simulate_run_request req = {.spec = spec, .catalog = catalog, .db = db, .db_name = db_name,
                                       .trace_paths = (const char *const *)o->traces.items,
                                       .n_traces = (size_t)o->traces.n, .nodes = o->nodes,
                                       .gpus = (const char *const *)o->gpus.items, .n_gpus = (size_t)o->gpus.n,
                                       .instance_type = o->instance_type,
                                       .cloud = o->clouds.n ? o->clouds.items[0] : NULL,
                                       .region = o->regions.n ? o->regions.items[0] : NULL, .rules = rules,
                                       .batches = batches, .gang = o->gang, .note = cf_cli_note};
        cf_simulate_run_result res;
        st = cf_simulate_run(&req, &res);
        rc = st == CF_OK ? emit(o, &res.report, NULL) : cf_report_error();
        cf_simulate_run_result_free(&res);
    }
    return rc;
}

/* --cloud, --region and --gpu name known things. --gpu names the trace's
 * VM type, so a GPU the GPU table knows is enough: a retired one that no
 * offer sells (K80) gets the cheapest offer of its size, as when the GPU
 * comes from index.csv or the trace's path (docs/spot.md). */
static int check_names(const cf_cli_options *o, const cf_catalog *catalog)
{
    cf_cli_options checked = *o;
    checked.gpus.n = 0;
    int rc = cf_cli_check_search_options(&checked, catalog);
    for (int i = 0; rc == 0 && i < o->gpus.n; i++) {
        if (cf_catalog_gpu_resolve(catalog, o->gpus.items[i]))
            continue;
        cf_cli_options one = {0};
        one.gpus.items = &o->gpus.items[i];
        one.gpus.n = 1;
        rc = cf_cli_check_search_options(&one, catalog); /* its message and hint */
    }
    return rc;
}

int cmd_simulate(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    if (n_positional != 1)
        return usage(n_positional ? "simulate takes one spec file" : "missing the spec file");
    unsigned rules = 0, batches = 0;
    int rc = check_options(o, &rules, &batches);
    if (rc)
        return rc;
    cf_spec *spec = NULL;
    rc = cf_cli_spec_open(o, argv[1], 1, &spec);
    /* one database handle (never created) for the prices and the evidence */
    char db_name[1024] = "";
    cf_db *db = NULL;
    if (rc == 0 && cf_cli_db_open_existing(o, &db, db_name, sizeof db_name) != CF_OK)
        rc = cf_report_error();
    cf_catalog_source source;
    if (rc == 0 && (rc = cf_cli_catalog_read(o, db, db_name, 1, &source)) == 0) {
        rc = check_names(o, &source.catalog);
        if (rc == 0)
            rc = run(o, spec, &source.catalog, db, db_name, rules, batches);
        cf_catalog_source_close(&source);
    }
    if (db)
        cf_db_close(db);
    cf_cli_spec_close(spec);
    return rc;
}
