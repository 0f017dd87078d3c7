/* cf_simulate_calibrate_run (cloudfit/usecase/simulate.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/pricing/offer_pick.h"
#include "cloudfit/usecase/simulate.h"

/* Traces, their offers and model rows, the model table. */
static cf_status load(const cf_simulate_calibrate_request *req, cf_simulate_calibration *c)
{
    cf_status st = cf_spot_trace_set_load(req->traces_dir, &c->set);
    if (st == CF_OK && req->fit_dir && (st = cf_spot_trace_set_load(req->fit_dir, &c->fit_set)) == CF_OK &&
        (st = cf_spot_table_fit(c->fit_set.traces, c->fit_set.n, &c->fitted, &c->n_fitted)) != CF_OK)
        cf_error_prefix("%s", req->fit_dir);
    if (st != CF_OK)
        return st;
    const cf_spot_trace_set *sets[2] = {&c->set, &c->fit_set};
    const char *dirs[2] = {req->traces_dir, req->fit_dir};
    for (int k = 0; k < 2 && req->note; k++) {
        if (!sets[k]->n_skipped)
            continue;
        char text[1200];
        snprintf(text, sizeof text, "%s: %zu file%s skipped (no index.csv; each with its reason): %s", dirs[k],
                 sets[k]->n_skipped, sets[k]->n_skipped == 1 ? "" : "s", sets[k]->skipped);
        req->note(req->note_ctx, CF_NOTE_WARNING, text);
    }
    size_t n = c->set.n;
    if (n == 0) { /* an index.csv with a header and no row: nothing to score (an empty folder says so too) */
        cf_error_set(CF_ERR_INVALID, "%s: no trace to score (its index.csv lists none)", req->traces_dir);
        cf_error_hint("list each trace file in index.csv (docs/spot.md, \"Trace folders\")");
        return CF_ERR_INVALID;
    }
    c->vms = calloc(n, sizeof *c->vms);
    c->paths = calloc(n, sizeof *c->paths);
    c->traces = calloc(n, sizeof *c->traces);
    c->rows = calloc(n, sizeof *c->rows);
    if (!c->vms || !c->paths || !c->traces || !c->rows)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const cf_spot_trace *t = &c->set.traces[i];
        if (t->n_types != 1)
            return cf_error_set(CF_ERR_INVALID, "%s: calibration takes traces of one VM type", t->name);
        char note[320];
        cf_trace_offer_query q = {.vm = &t->vm[0]};
        if ((st = cf_offer_for_trace(req->catalog, &q, &c->vms[i], note, sizeof note)) != CF_OK) {
            cf_error_prefix("%s", t->name);
            return st;
        }
        if (!c->vms[i]) {
            cf_error_set(CF_ERR_INVALID, "%s: no offer in the catalog for the trace's VM (%s %s in %s)", t->name,
                         t->vm[0].cloud, t->vm[0].instance_type, t->vm[0].region);
            cf_error_hint("describe each trace's VM in %s/index.csv (zone, gpu, gpus_per_vm; cloud, instance_type) "
                          "or by its name (docs/spot.md, \"Trace folders\")", req->traces_dir);
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
                                req->fit_dir, t->vm[0].gpu, t->vm[0].cloud);
    }
    return CF_OK;
}

/* The spec's plan on each trace's VMs: work, checkpoint, restart. */
static cf_status plans(const cf_simulate_calibrate_request *req, cf_simulate_calibration *c)
{
    const cf_spec *spec = req->spec;
    cf_evidence evidence;
    cf_status st = cf_evidence_read(req->db, req->db_name, spec, 1, req->note, req->note_ctx, &evidence);
    if (st != CF_OK)
        return st;
    cf_inputs_request request;
    cf_evidence_request(&evidence, spec, req->catalog, c->vms, c->n, &request);
    cf_inputs inputs;
    st = cf_inputs_build(&request, &inputs);
    cf_evidence_free(&evidence);
    if (st != CF_OK)
        return st;
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
    return st;
}

cf_status cf_simulate_calibrate_run(const cf_simulate_calibrate_request *req, cf_simulate_calibration *out)
{
    memset(out, 0, sizeof *out);
    out->confidence = req->spec->search.confidence > 0 ? req->spec->search.confidence : CF_SPOT_CONFIDENCE;
    cf_status st = load(req, out);
    if (st == CF_OK)
        st = plans(req, out);
    cf_calibrate_settings settings = {.confidence = out->confidence};
    if (st == CF_OK)
        st = cf_spot_calibrate(out->traces, out->n, &settings, &out->result);
    if (st != CF_OK)
        return st;
    out->report = (cf_calibrate_report){.spec = req->spec, .traces_dir = req->traces_dir, .fit_dir = req->fit_dir,
                                        .traces = out->traces, .rows = out->rows, .n_traces = out->n,
                                        .result = &out->result, .confidence = out->confidence};
    return CF_OK;
}

void cf_simulate_calibration_free(cf_simulate_calibration *c)
{
    cf_calibrate_result_free(&c->result);
    for (size_t i = 0; i < c->n; i++)
        cf_spot_path_free(&c->paths[i]);
    free(c->paths);
    free(c->traces);
    free(c->rows);
    free(c->vms);
    free(c->fitted);
    cf_spot_trace_set_free(&c->set);
    cf_spot_trace_set_free(&c->fit_set);
    memset(c, 0, sizeof *c);
}
