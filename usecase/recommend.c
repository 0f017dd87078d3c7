#include "cloudfit/usecase/recommend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/common/repo_path.h"
#include "cloudfit/pricing/regions.h"
#include "recommend_internal.h"

#include "cloudfit/common/escape.h"

void cf_recommend_identity(const cf_spec *spec, const char *baseline_key, char *out, size_t n)
{
    /* stored and compared as text: escaped where not UTF-8 (a file name is
     * any bytes), cut at a character boundary */
    if (baseline_key) {
        cf_text_fit(baseline_key, n - 1, out, n);
        return;
    }
    char rel[1024];
    if (cf_repo_relative_path(spec->job.source, rel, sizeof rel) != CF_OK) {
        cf_error_clear(); /* a spec read from a pipe: its name alone */
        cf_text_fit(spec->job.name, n - 1, out, n);
        return;
    }
    char name[80], path[420];
    cf_text_fit(spec->job.name, 64, name, sizeof name);
    cf_text_fit(rel, 400, path, sizeof path);
    snprintf(out, n, "%s@%s", name, path);
}

void cf_spec_filter_error_prefix(const cf_spec *spec, cf_filter_field failed)
{
    const char *key = failed == CF_FILTER_GPUS      ? "search.gpus"
                      : failed == CF_FILTER_REGIONS ? "search.regions"
                      : failed == CF_FILTER_CLOUDS  ? "search.clouds" : "search";
    cf_error_prefix("%s: %s", spec->job.source[0] ? spec->job.source : "<spec>", key);
}

cf_status cf_spec_check_current_gpu(const cf_spec *spec, const cf_catalog *catalog)
{
    if (!spec->job.has_current || cf_catalog_gpu_resolve(catalog, spec->job.current_gpu))
        return CF_OK;
    /* the GPU filter's message and hint: the near names, the GPUs on offer */
    const char *gpus[1] = {spec->job.current_gpu};
    cf_catalog_filter f = {.gpus = gpus, .n_gpus = 1, .spot = CF_SPOT_ALLOW};
    if (cf_catalog_check_filter(catalog, &f) == CF_OK)
        cf_error_set(CF_ERR_INVALID, "unknown GPU '%s'", spec->job.current_gpu);
    cf_error_prefix("%s: training.current.gpu", spec->job.source[0] ? spec->job.source : "<spec>");
    return CF_ERR_INVALID;
}

size_t cf_region_preference(const char *const *first, size_t n_first, const char *const *regions, size_t n_regions,
                            const char **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < n_first && n < cap; i++)
        out[n++] = first[i];
    for (size_t i = 0; i < n_regions && n < cap; i++)
        out[n++] = regions[i];
    return n;
}

cf_status cf_spec_offers(const cf_spec *spec, const cf_catalog *catalog, cf_spot_policy spot, int include_restricted,
                         const char *const *prefer_regions, size_t n_prefer_regions, cf_catalog_filter_storage *fs,
                         const cf_vm ***rows, size_t *n_rows)
{
    *rows = NULL;
    *n_rows = 0;
    cf_catalog_filter_from(&spec->search, spot, fs);
    fs->filter.include_restricted = include_restricted;
    cf_filter_field failed;
    if (cf_catalog_check_filter_field(catalog, &fs->filter, &failed) != CF_OK) {
        cf_spec_filter_error_prefix(spec, failed);
        return cf_error_status();
    }
    *rows = malloc((catalog->n_vms ? catalog->n_vms : 1) * sizeof **rows);
    if (!*rows)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    *n_rows = cf_catalog_filter_rows(catalog, &fs->filter, *rows);
    if (*n_rows == 0) { /* each value is on offer, not together: said as such, not as infeasible limits */
        free(*rows);
        *rows = NULL;
        cf_catalog_explain_empty(catalog, &fs->filter);
        cf_error_prefix("%s: search", spec->job.source[0] ? spec->job.source : "<spec>");
        return CF_ERR_INFEASIBLE;
    }
    /* Equal prices go to the preferred region (docs/pricing.md, "Regions"). */
    const char *prefer[2 * CF_SPEC_MAX_LIST];
    size_t n_prefer = cf_region_preference(prefer_regions, n_prefer_regions, fs->filter.regions,
                                           fs->filter.n_regions, prefer, sizeof prefer / sizeof *prefer);
    return cf_rows_order_by_region(*rows, *n_rows, prefer, n_prefer);
}

/* The offers that pass the spec's filter, preferred region first; the
 * prices in use set on the catalog source. */
static cf_status offers(const cf_recommend_request *req, cf_recommend_result *out)
{
    const cf_spec *spec = req->spec;
    const cf_catalog *catalog = &req->catalog_source->catalog;
    cf_catalog_filter_storage fs;
    cf_status st = cf_spec_offers(spec, catalog, spec->search.spot, req->include_restricted_regions,
                                  req->prefer_regions, req->n_prefer_regions, &fs, &out->rows, &out->n_rows);
    if (st != CF_OK)
        return st;
    /* The catalog's age is that of the prices these offers carry. */
    cf_catalog_source_set_in_use(req->catalog_source, out->rows, out->n_rows, spec->search.spot,
                                 cf_catalog_filter_restricted(catalog, &fs.filter));
    if (req->note)
        req->note(req->note_ctx, CF_NOTE_PRICES_IN_USE, NULL);
    return CF_OK;
}

cf_status cf_recommend(const cf_recommend_request *req, cf_recommend_result *out)
{
    memset(out, 0, sizeof *out);
    const cf_spec *spec = req->spec;
    const cf_catalog *catalog = &req->catalog_source->catalog;
    cf_status st = cf_spec_check_current_gpu(spec, catalog);
    if (st == CF_OK)
        st = offers(req, out);
    if (st != CF_OK)
        return st;
    cf_evidence evidence;
    st = cf_evidence_read(req->db, req->db_name, spec, 1, req->note, req->note_ctx, &evidence);
    if (st != CF_OK)
        return st;
    cf_inputs_request request;
    cf_evidence_request(&evidence, spec, catalog, out->rows, out->n_rows, &request);
    st = cf_inputs_build(&request, &out->inputs);
    cf_evidence_free(&evidence);
    if (st != CF_OK)
        return st;
    /* Ranked at least RANKED_AT_LEAST deep whatever --top (a display
     * option): the next measurement's runner-up and the offers --mix
     * tries come from the ranking (--top 1 changed both), and so do the
     * launch specs' fallbacks; cut to --top once they are chosen. */
    enum { RANKED_AT_LEAST = 10 };
    int shown = req->top > 0 ? req->top : 10;
    cf_advisor_input in = {.job = &spec->job, .constraints = &spec->search, .vms = out->rows, .n_vms = out->n_rows,
                           .perf = out->inputs.perf, .n_perf = out->inputs.n_perf, .noise = &out->inputs.noise,
                           .top = shown < RANKED_AT_LEAST ? RANKED_AT_LEAST : shown};
    st = cf_advise(&in, &out->advice);
    if (st == CF_ERR_INFEASIBLE) {
        const cf_advice *a = &out->advice;
        /* Nothing priced at all (no GPU holds the model, say): no deadline
         * or budget is to blame, whatever the spec sets. */
        cf_constraints unlimited = spec->search;
        if (!a->have_extremes)
            unlimited.deadline_hours = unlimited.budget_usd = 0;
        return cf_infeasible_error(&unlimited, spec->job.source, a->have_extremes ? &a->fastest : NULL,
                                   a->have_extremes ? &a->fastest_at_confidence : NULL,
                                   a->have_extremes ? &a->cheapest : NULL,
                                   a->have_extremes ? &a->cheapest_at_confidence : NULL,
                                   a->have_cheapest_in_deadline ? &a->cheapest_in_deadline : NULL,
                                   spec->search.spot == CF_SPOT_ONLY ? " on spot VMs alone (--spot only)" : NULL);
    }
    if (st != CF_OK)
        return st;
    cf_now_iso8601(out->created_at, sizeof out->created_at);
    cf_recommend_identity(spec, req->baseline_key, out->identity, sizeof out->identity);
    if (req->mix && (st = cf_hetero_search(&in, &out->advice, &out->hetero)) != CF_OK)
        return st;
    /* The launch specs' fallbacks come from the first RANKED_AT_LEAST
     * whatever --top: -n 1 gave a SkyPilot task without any, -n 100 one
     * with more than the default's. */
    out->advice.n_ranked_launch =
        out->advice.n_ranked < RANKED_AT_LEAST ? out->advice.n_ranked : (size_t)RANKED_AT_LEAST;
    if (out->advice.n_ranked > (size_t)shown)
        out->advice.n_ranked = (size_t)shown;
    if ((st = cf_recommend_gates(req, out)) != CF_OK)
        return st;
    out->report = (cf_report){.spec = spec, .catalog = catalog, .inputs = &out->inputs, .advice = &out->advice,
                              .created_at = out->created_at, .identity = out->identity, .n_offers = out->n_rows,
                              .catalog_age_days = req->catalog_source->age_days,
                              .catalog_source = req->catalog_source, .hetero = req->mix ? &out->hetero : NULL,
                              .ci = req->ci, .baseline = out->baseline.have ? &out->baseline : NULL,
                              .gates = out->gates, .n_gates = out->n_gates, .history = req->history};
    return CF_OK;
}

void cf_recommend_result_free(cf_recommend_result *out)
{
    cf_advice_free(&out->advice);
    cf_inputs_free(&out->inputs);
    free(out->rows);
    memset(out, 0, sizeof *out);
}
