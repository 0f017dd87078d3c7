/* cloudfit simulate MODEL.json --trace TRACE.csv [--trace TRACE2.csv]
 * [--rule fixed|linear|sqrt|gain|all] [--batch hold|shrink|both]; or
 * --calibrate DIR [--fit DIR2] (simulate/calibrate.c)
 * (docs/spot.md): replays an availability trace against the spec's plan on
 * the trace's VMs and reports, per LR rule, wall time, cost, checkpoints,
 * restarts, lost work and statistical progress. Reads the files, lets the
 * library compute (advisor/spot_simulate.c), renders
 * (render/simulate_report.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/inputs.h"
#include "cloudfit/pricing/offer_pick.h"
#include "cloudfit/profiler/spot_traces.h"
#include "commands.h"
#include "exit_codes.h"
#include "io/catalog_source.h"
#include "io/evidence.h"
#include "io/spec_load.h"
#include "log.h"
#include "simulate/calibrate.h"
#include "term/output.h"
#include "cloudfit/render/simulate_report.h"

static int usage(const char *message)
{
    cf_log_error("%s", message);
    cf_log_hint("usage: cloudfit simulate MODEL.json --trace TRACE.csv [--trace TRACE2.csv] [--rule RULE] "
                "(see 'cloudfit simulate --help')");
    return CF_EXIT_USAGE;
}

static int parse_rules(const char *text, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bits;
    } rules[] = {{"fixed", CF_SIM_FIXED}, {"linear", CF_SIM_LINEAR}, {"sqrt", CF_SIM_SQRT}, {"gain", CF_SIM_GAIN},
                 {"all", CF_SIM_ALL_RULES}};
    *out = CF_SIM_ALL_RULES;
    if (!text)
        return 0;
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (strcmp(text, rules[i].name) == 0) {
            *out = rules[i].bits;
            return 0;
        }
    cf_log_error("option '--rule' expects fixed, linear, sqrt, gain or all, got '%s'", text);
    return CF_EXIT_USAGE;
}

static int parse_batches(const char *text, unsigned *out)
{
    *out = CF_SIM_HOLD | CF_SIM_SHRINK;
    if (!text || strcmp(text, "both") == 0)
        return 0;
    if (strcmp(text, "hold") == 0 || strcmp(text, "shrink") == 0) {
        *out = text[0] == 'h' ? CF_SIM_HOLD : CF_SIM_SHRINK;
        return 0;
    }
    cf_log_error("option '--batch' expects hold, shrink or both, got '%s'", text);
    return CF_EXIT_USAGE;
}

/* The offer a trace was recorded on, with --gpu (one per trace),
 * --instance-type (the first), --cloud and --region on top
 * (pricing/offer_pick.c). */
static const cf_vm *pick_vm(const cf_cli_options *o, const cf_catalog *catalog, const cf_spot_trace_vm *tv, int k,
                            char *note, size_t n_note)
{
    cf_trace_offer_query q = {.vm = tv, .gpu = o->gpus.n > k ? o->gpus.items[k] : NULL,
                              .instance_type = o->instance_type && k == 0 ? o->instance_type : NULL,
                              .cloud = o->clouds.n ? o->clouds.items[0] : NULL,
                              .region = o->regions.n ? o->regions.items[0] : NULL};
    return cf_offer_for_trace(catalog, &q, note, n_note);
}

typedef struct {
    cf_spot_trace traces[2], merged;
    int n;
} loaded_traces;

static int load_traces(const cf_cli_options *o, loaded_traces *lt)
{
    memset(lt, 0, sizeof *lt);
    if (o->traces.n < 1 || o->traces.n > 2)
        return usage(o->traces.n ? "simulate takes one --trace, or two to mix two VM types" : "missing --trace TRACE.csv");
    if (o->nodes > 0 && o->traces.n > 1)
        return usage("--nodes applies to one trace; with two, each trace's index.csv or largest count decides");
    for (int k = 0; k < o->traces.n; k++) {
        if (cf_spot_trace_load(o->traces.items[k], o->traces.n == 1 ? o->nodes : 0, &lt->traces[k]) != CF_OK)
            return cf_report_error();
        lt->n++;
        if (lt->traces[k].n_types != 1) {
            cf_error_set(CF_ERR_INVALID, "%s: give a trace with two count columns as two --trace files, one per type",
                         o->traces.items[k]);
            return cf_report_error();
        }
    }
    if (lt->n == 2 && cf_spot_trace_merge(&lt->traces[0], &lt->traces[1], &lt->merged) != CF_OK)
        return cf_report_error();
    return 0;
}

static void free_traces(loaded_traces *lt)
{
    for (int k = 0; k < lt->n; k++)
        cf_spot_trace_free(&lt->traces[k]);
    cf_spot_trace_free(&lt->merged);
}

/* A job longer than the trace replays it more than once from every start
 * (the trace is circular: after its last tick comes its first): say so,
 * and how often, since the spread then says little about the process. */
static void warn_outlasting(const cf_simulate_request *req, const cf_simulate_result *res, const cf_spot_path *path)
{
    double longest = 0;
    for (int i = 0; i < res->n_rows; i++)
        longest = res->rows[i].spread.p50_h > longest ? res->rows[i].spread.p50_h : longest;
    if (!(req->work_h > path->total_h / 2) && !(longest > path->total_h / 2))
        return;
    if (isfinite(longest))
        cf_log_warning("the job (%.1f h of work, a median of %.1f h of wall time) outlasts half the trace (%.1f h): "
                       "each start replays the trace circularly, its end joined to its start, %.1f times for the "
                       "median start; the spread then reflects this trace's average more than its variation",
                       req->work_h, longest, path->total_h, longest / path->total_h);
    else
        cf_log_warning("the job (%.1f h of work) outlasts the trace (%.1f h): each start replays the trace "
                       "circularly, its end joined to its start, until the job ends or %g h have passed",
                       req->work_h, path->total_h, CF_SPOT_MAX_HOURS);
    cf_log_hint("a trace of at least twice the job's wall time says more (or use --calibrate, which scores "
                "shorter lengths too)");
}

static int run(const cf_cli_options *o, const cf_spec *spec, const cf_catalog *catalog, const loaded_traces *lt,
               unsigned rules, unsigned batches)
{
    const cf_spot_trace *trace = lt->n == 2 ? &lt->merged : &lt->traces[0];
    const cf_vm *vms[2] = {NULL, NULL};
    int nodes[2] = {0, 0};
    char notes[2][320];
    for (int k = 0; k < lt->n; k++) {
        vms[k] = pick_vm(o, catalog, &lt->traces[k].vm[0], k, notes[k], sizeof notes[k]);
        if (!vms[k]) {
            cf_error_set(CF_ERR_INVALID, "%s: which VM was this trace recorded on? no index.csv row names it",
                         lt->traces[k].name);
            cf_error_hint("give --gpu GPU (one per trace) or --instance-type TYPE, and --cloud / --region");
            return cf_report_error();
        }
        nodes[k] = trace->vm[k].requested;
    }
    cf_evidence evidence;
    int rc = cf_cli_evidence_read(o, spec, 1, &evidence);
    if (rc)
        return rc;
    cf_inputs_request request;
    cf_evidence_request(&evidence, spec, catalog, vms, (size_t)lt->n, &request);
    cf_inputs inputs;
    cf_status st = cf_inputs_build(&request, &inputs);
    cf_evidence_free(&evidence);
    if (st != CF_OK)
        return cf_report_error();
    cf_spot_path path;
    cf_simulate_setup setup;
    cf_simulate_result result;
    memset(&setup, 0, sizeof setup);
    st = cf_spot_path_from_trace(trace, &path);
    if (st == CF_OK) {
        cf_advisor_input in = {.job = &spec->job, .constraints = &spec->search, .vms = vms, .n_vms = (size_t)lt->n,
                               .perf = inputs.perf, .n_perf = inputs.n_perf, .noise = &inputs.noise, .top = 1};
        st = cf_simulate_prepare(&in, vms, nodes, lt->n, &path, o->gang ? CF_SPOT_GANG : CF_SPOT_ELASTIC, &setup);
        if (st == CF_OK) {
            setup.req.rules = rules;
            setup.req.batches = batches;
            st = cf_simulate(&setup.req, &result);
        }
        if (st == CF_OK)
            warn_outlasting(&setup.req, &result, &path);
        if (st == CF_OK) {
            cf_simulate_report report = {.spec = spec, .trace = trace, .path = &path, .setup = &setup,
                                         .result = &result, .note = notes[0][0] ? notes[0] : lt->n > 1 ? notes[1] : ""};
            cJSON *doc = cf_cli_format_is(o, "json") ? cf_simulate_json(&report) : NULL;
            cf_buf text = CF_BUF_INIT;
            if (!doc)
                cf_simulate_table(&report, &text);
            rc = cf_cli_emit(o, doc, &text);
            cJSON_Delete(doc);
            cf_buf_free(&text);
        }
        cf_simulate_setup_free(&setup);
        cf_spot_path_free(&path);
    }
    if (st != CF_OK)
        rc = cf_report_error();
    cf_inputs_free(&inputs);
    return rc;
}

int cmd_simulate(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    if (n_positional != 1)
        return usage(n_positional ? "simulate takes one spec file" : "missing the spec file");
    if (o->format && strcmp(o->format, "table") && strcmp(o->format, "json")) {
        cf_log_error("option '--format' does not accept '%s'", o->format);
        cf_log_hint("use one of: table, json");
        return CF_EXIT_USAGE;
    }
    if (o->fit_dir && !o->calibrate_dir)
        return usage("--fit goes with --calibrate DIR");
    if (o->calibrate_dir) {
        if (o->traces.n > 0)
            return usage("--calibrate DIR takes every trace of DIR; leave out --trace");
        cf_spec *spec = NULL;
        int rc = cf_cli_spec_open(o, argv[1], 1, &spec);
        cf_catalog_source source;
        if (rc == 0 && (rc = cf_cli_catalog_open(o, 1, &source)) == 0) {
            rc = cf_cli_simulate_calibrate(o, spec, &source.catalog);
            cf_catalog_source_close(&source);
        }
        cf_cli_spec_close(spec);
        return rc;
    }
    unsigned rules, batches;
    int rc = parse_rules(o->rule, &rules);
    if (rc == 0)
        rc = parse_batches(o->batch_policy, &batches);
    if (rc)
        return rc;
    loaded_traces lt;
    rc = load_traces(o, &lt);
    cf_spec *spec = NULL;
    if (rc == 0)
        rc = cf_cli_spec_open(o, argv[1], 1, &spec);
    cf_catalog_source source;
    if (rc == 0 && (rc = cf_cli_catalog_open(o, 1, &source)) == 0) {
        rc = run(o, spec, &source.catalog, &lt, rules, batches);
        cf_catalog_source_close(&source);
    }
    cf_cli_spec_close(spec);
    free_traces(&lt);
    return rc;
}
