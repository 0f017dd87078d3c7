#include "simulate/calibrate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/inputs.h"
#include "cloudfit/advisor/spot_calibrate.h"
#include "cloudfit/advisor/spot_simulate.h"
#include "cloudfit/advisor/spot_table.h"
#include "cloudfit/pricing/offer_pick.h"
#include "cloudfit/profiler/spot_traces.h"
#include "cloudfit/render/calibrate_report.h"
#include "commands.h"
#include "exit_codes.h"
#include "io/evidence.h"
#include "log.h"
#include "term/output.h"

typedef struct {
    cf_spot_trace_set set, fit_set;
    cf_spot_table_row *fitted;
    size_t n_fitted;
    const cf_vm **vms;
    cf_spot_path *paths;
    cf_calibrate_trace *traces;
    cf_spot_lookup *rows;
    size_t n;
} calibration;

static void calibration_free(calibration *c)
{
    for (size_t i = 0; i < c->n; i++)
        cf_spot_path_free(&c->paths[i]);
    free(c->paths);
    free(c->traces);
    free(c->rows);
    free(c->vms);
    free(c->fitted);
    cf_spot_trace_set_free(&c->set);
    cf_spot_trace_set_free(&c->fit_set);
}

/* Traces, their offers and model rows, the model table. */
static cf_status load(const cf_cli_options *o, const cf_catalog *catalog, calibration *c)
{
    cf_status st = cf_spot_trace_set_load(o->calibrate_dir, &c->set);
    if (st == CF_OK && o->fit_dir && (st = cf_spot_trace_set_load(o->fit_dir, &c->fit_set)) == CF_OK &&
        (st = cf_spot_table_fit(c->fit_set.traces, c->fit_set.n, &c->fitted, &c->n_fitted)) != CF_OK)
        cf_error_prefix("%s", o->fit_dir);
    if (st != CF_OK)
        return st;
    size_t n = c->set.n;
    c->vms = calloc(n ? n : 1, sizeof *c->vms);
    c->paths = calloc(n ? n : 1, sizeof *c->paths);
    c->traces = calloc(n ? n : 1, sizeof *c->traces);
    c->rows = calloc(n ? n : 1, sizeof *c->rows);
    if (!c->vms || !c->paths || !c->traces || !c->rows)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const cf_spot_trace *t = &c->set.traces[i];
        if (t->n_types != 1)
            return cf_error_set(CF_ERR_INVALID, "%s: calibration takes traces of one VM type", t->name);
        char note[320];
        cf_trace_offer_query q = {.vm = &t->vm[0]};
        c->vms[i] = cf_offer_for_trace(catalog, &q, note, sizeof note);
        if (!c->vms[i]) {
            cf_error_set(CF_ERR_INVALID, "%s: no offer in the catalog for the trace's VM (%s %s in %s)", t->name,
                         t->vm[0].cloud, t->vm[0].instance_type, t->vm[0].region);
            cf_error_hint("every trace needs a row in %s/index.csv with cloud, region, instance_type, gpu, "
                          "gpus_per_vm", o->calibrate_dir);
            return CF_ERR_INVALID;
        }
        if ((st = cf_spot_path_from_trace(t, &c->paths[i])) != CF_OK)
            return st;
        c->n = i + 1;
        /* The model row of the trace's own capacity (its GPU, size, region
         * and node count), which a plan on those VMs gets. */
        cf_spot_model_lookup_in(c->fitted, c->n_fitted, t->vm[0].cloud, t->vm[0].gpu, t->vm[0].gpus_per_vm,
                                t->vm[0].region, t->vm[0].requested, &c->rows[i]);
        if (!c->rows[i].row)
            return cf_error_set(CF_ERR_INVALID, "%s: the traces in %s fit no model for %s %s VMs", t->name,
                                o->fit_dir, t->vm[0].gpu, t->vm[0].cloud);
    }
    return CF_OK;
}

/* The spec's plan on each trace's VMs: work, checkpoint, restart. */
static int plans(const cf_cli_options *o, const cf_spec *spec, const cf_catalog *catalog, calibration *c)
{
    cf_evidence evidence;
    int rc = cf_cli_evidence_read(o, spec, 1, &evidence);
    if (rc)
        return rc;
    cf_inputs_request request;
    cf_evidence_request(&evidence, spec, catalog, c->vms, c->n, &request);
    cf_inputs inputs;
    cf_status st = cf_inputs_build(&request, &inputs);
    cf_evidence_free(&evidence);
    if (st != CF_OK)
        return cf_report_error();
    cf_advisor_input in = {.job = &spec->job, .constraints = &spec->search, .vms = c->vms, .n_vms = c->n,
                           .perf = inputs.perf, .n_perf = inputs.n_perf, .noise = &inputs.noise, .top = 1};
    for (size_t i = 0; i < c->n && st == CF_OK; i++) {
        const cf_spot_trace *t = &c->set.traces[i];
        int nodes = t->vm[0].requested;
        cf_simulate_setup setup;
        st = cf_simulate_prepare(&in, &c->vms[i], &nodes, 1, &c->paths[i], CF_SPOT_ELASTIC, &setup);
        if (st != CF_OK) {
            cf_error_prefix("%s", t->name);
            break;
        }
        c->traces[i] = (cf_calibrate_trace){.name = t->name, .path = &c->paths[i], .nodes = nodes,
                                            .process = &c->rows[i].row->process, .work_h = setup.req.work_h,
                                            .checkpoint_h = setup.req.checkpoint_h, .restart_h = setup.req.restart_h};
        cf_simulate_setup_free(&setup);
    }
    cf_inputs_free(&inputs);
    return st == CF_OK ? 0 : cf_report_error();
}

int cf_cli_simulate_calibrate(const cf_cli_options *o, const cf_spec *spec, const cf_catalog *catalog)
{
    calibration c;
    memset(&c, 0, sizeof c);
    int rc = 0;
    if (load(o, catalog, &c) != CF_OK)
        rc = cf_report_error();
    if (rc == 0)
        rc = plans(o, spec, catalog, &c);
    cf_calibrate_result result;
    memset(&result, 0, sizeof result);
    double confidence = spec->search.confidence > 0 ? spec->search.confidence : CF_SPOT_CONFIDENCE;
    if (rc == 0) {
        cf_calibrate_settings settings = {.confidence = confidence};
        if (cf_spot_calibrate(c.traces, c.n, &settings, &result) != CF_OK)
            rc = cf_report_error();
    }
    if (rc == 0) {
        cf_calibrate_report report = {.spec = spec, .traces_dir = o->calibrate_dir, .fit_dir = o->fit_dir,
                                      .traces = c.traces, .rows = c.rows, .n_traces = c.n, .result = &result,
                                      .confidence = confidence};
        cJSON *doc = cf_cli_format_is(o, "json") ? cf_calibrate_json(&report) : NULL;
        cf_buf text = CF_BUF_INIT;
        if (!doc)
            cf_calibrate_table(&report, &text);
        rc = cf_cli_emit(o, doc, &text);
        cJSON_Delete(doc);
        cf_buf_free(&text);
    }
    cf_calibrate_result_free(&result);
    calibration_free(&c);
    return rc;
}
