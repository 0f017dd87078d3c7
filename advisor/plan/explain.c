/* What a recommendation shows beyond its ranking (cloudfit/advisor/explain.h):
 * computed once here, from the parameters the enumeration used, so that
 * the table, the JSON, the markdown, the launch specs and the plots show
 * the same figures and no renderer runs the model. */
#include "cloudfit/advisor/explain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/gates.h"
#include "cloudfit/advisor/perf.h"
#include "cloudfit/spec/types.h"
#include "cloudfit/status.h"
#include "../advisor_internal.h"
#include "../model/curves_internal.h"
#include "../model/perf_internal.h"
#include "elastic_internal.h"
#include "explain_internal.h"

static const cf_gpu_perf *perf_of(const cf_advisor_input *in, const char *gpu, int ignore_case)
{
    const cf_gpu_perf *found = NULL;
    for (size_t i = 0; i < in->n_perf; i++)
        if (ignore_case ? strcasecmp(in->perf[i].gpu, gpu) == 0 : strcmp(in->perf[i].gpu, gpu) == 0) {
            found = &in->perf[i];
            if (ignore_case)
                break; /* the first, as a look-up by name */
        }
    return found; /* exact names: the last, as the table's network line had it */
}

/* The plan of `c`, or NULL with the model's reason in *why (and its words
 * in why_text when given); CF_ERR_NOMEM is the caller's to return. */
static cf_status elastic_of(const cf_advisor_input *in, const cf_config *c, cf_elastic_plan **plan, char *why_text,
                            size_t n)
{
    cf_status st = cf_elastic_plan_of_config(in->job, in->constraints, perf_of(in, c->vm->gpu_model, 1), in->noise,
                                             c, plan);
    if (st != CF_OK && st != CF_ERR_NOMEM) {
        if (why_text)
            snprintf(why_text, n, "%s", cf_error_message());
        cf_error_clear(); /* no parameters: the renderers leave the plan out */
    }
    return st;
}

static cf_status curves(const cf_advisor_input *in, const cf_config *chosen, cf_advice_explained *e)
{
    const cf_constraints *limits = in->constraints;
    const cf_gpu_perf *perf = perf_of(in, chosen->vm->gpu_model, 1);
    size_t cap = (size_t)(limits->max_nodes > chosen->nodes ? limits->max_nodes : chosen->nodes);
    e->scaling = calloc(cap ? cap : 1, sizeof *e->scaling);
    if (!e->scaling)
        return cf_error_set(CF_ERR_NOMEM, "out of memory explaining the recommendation");
    if (perf && cf_scaling_curve(in->job, limits, perf, in->noise, chosen, e->scaling, cap, &e->n_scaling) != CF_OK) {
        e->n_scaling = 0; /* no parameters: the plot says so */
        cf_error_clear();
    }
    double m0 = in->job->batch, m = (double)chosen->global_batch;
    double lo = fmin(m0, m) / 4, hi = fmax(fmax(m0, m) * 4, (double)limits->max_global_batch);
    e->recipe_batch = m0;
    e->n_stateff = cf_stateff_curve(in->noise, in->job->total_samples, lo > 1 ? lo : 1, hi, CF_STATEFF_CURVE_POINTS,
                                    e->stateff);
    return CF_OK;
}

cf_status cf_advice_explain(const cf_advisor_input *in, cf_advice *a)
{
    cf_advice_explained_free(a->explained);
    a->explained = NULL;
    if (a->n_ranked == 0)
        return CF_OK;
    cf_advice_explained *e = calloc(1, sizeof *e);
    if (!e)
        return cf_error_set(CF_ERR_NOMEM, "out of memory explaining the recommendation");
    const cf_config *c = &a->ranked[0];
    double z80 = cf_normal_two_sided_z(CF_INTERVAL_LEVEL);
    e->step_p10_s = c->step_time_s * exp(-z80 * c->step_sigma);
    e->step_p90_s = c->step_time_s * exp(z80 * c->step_sigma_up);
    const cf_gpu_perf *perf = perf_of(in, c->vm->gpu_model, 0);
    if (perf && c->nodes > 1) {
        e->have_network = 1;
        e->inter_gbps = cf_effective_inter_gbps(perf, c->vm->network_gbps, &e->inter_provenance);
    }
    e->elastic_status = elastic_of(in, c, &e->elastic, e->elastic_error, sizeof e->elastic_error);
    cf_history_config_from(c, 1, &e->stored);
    cf_status st = e->elastic_status == CF_ERR_NOMEM ? CF_ERR_NOMEM : CF_OK;
    if (st == CF_OK && a->have_best_spot && elastic_of(in, &a->best_spot, &e->elastic_best_spot, NULL, 0) == CF_ERR_NOMEM)
        st = CF_ERR_NOMEM;
    if (st == CF_OK)
        st = curves(in, c, e);
    if (st != CF_OK) {
        cf_advice_explained_free(e);
        return st;
    }
    a->explained = e;
    return CF_OK;
}

void cf_advice_explained_free(cf_advice_explained *e)
{
    if (!e)
        return;
    free(e->elastic);
    free(e->elastic_best_spot);
    free(e->scaling);
    free(e);
}
