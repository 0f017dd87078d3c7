#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/json.h"

#include "cloudfit/version.h"
#include "cloudfit/common/ci_env.h"
#include "cloudfit/render/render_catalog.h"
#include "cloudfit/render.h"
#include "cloudfit/common/clock.h"
#include "cloudfit/pricing/regions.h"

static void add_or_null(cJSON *o, const char *key, const char *value)
{
    if (value[0])
        cJSON_AddStringToObject(o, key, value);
    else
        cJSON_AddNullToObject(o, key);
}

cJSON *cf_ci_json(const cf_ci_info *ci)
{
    if (!ci || !ci->provider[0])
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "provider", ci->provider);
    add_or_null(o, "commit", ci->commit);
    add_or_null(o, "branch", ci->branch);
    add_or_null(o, "base_branch", ci->base_branch);
    add_or_null(o, "pull_request", ci->pull_request);
    add_or_null(o, "run", ci->run_id);
    add_or_null(o, "run_url", ci->run_url);
    return o;
}


cJSON *cf_config_json(const cf_config *cfg)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "cloud", cfg->vm->cloud);
    cJSON_AddStringToObject(o, "region", cfg->vm->region);
    cJSON_AddStringToObject(o, "instance_type", cfg->vm->instance_type);
    cJSON_AddStringToObject(o, "gpu", cfg->vm->gpu_model);
    cJSON_AddNumberToObject(o, "gpus_per_node", cfg->gpus_per_node);
    cJSON_AddNumberToObject(o, "nodes", cfg->nodes);
    cJSON_AddNumberToObject(o, "local_batch", cfg->local_batch);
    cJSON_AddNumberToObject(o, "accumulation", cfg->accumulation);
    cJSON_AddNumberToObject(o, "global_batch", (double)cfg->global_batch);
    cJSON_AddNumberToObject(o, "lr", cf_json_round(cfg->lr.lr, 6)); /* the launch specs' CLOUDFIT_LR (%.6g) */
    cJSON_AddStringToObject(o, "lr_rule", cf_lr_rule_name(cfg->lr.rule_used));
    cJSON_AddBoolToObject(o, "warmup_recommended", cfg->lr.warmup_recommended);
    cJSON_AddBoolToObject(o, "spot", cfg->spot);
    cJSON_AddNumberToObject(o, "step_time_s", cf_json_round(cfg->step_time_s, 4));
    cJSON_AddNumberToObject(o, "step_time_sigma", cf_json_round(cfg->step_sigma, 3));
    cJSON_AddNumberToObject(o, "step_time_sigma_up", cf_json_round(cfg->step_sigma_up, 3));
    cJSON_AddNumberToObject(o, "steps", cfg->steps);
    cJSON_AddNumberToObject(o, "samples_to_target", cf_json_round(cfg->samples_to_target, 6));
    cJSON_AddNumberToObject(o, "statistical_efficiency", cf_json_round(cfg->stat_efficiency, 4));
    cJSON_AddNumberToObject(o, "parallel_efficiency", cf_json_round(cfg->parallel_efficiency, 4));
    cJSON_AddNumberToObject(o, "hours", cf_json_round(cfg->hours, 6));
    cJSON_AddNumberToObject(o, "hours_p10", cf_json_round(cfg->hours_p10, 6));
    cJSON_AddNumberToObject(o, "hours_p90", cf_json_round(cfg->hours_p90, 6));
    cJSON_AddNumberToObject(o, "usd_per_hour", cf_json_round(cfg->usd_per_hour, 6));
    cJSON_AddNumberToObject(o, "total_usd", cf_json_round(cfg->total_usd, 6));
    cJSON_AddNumberToObject(o, "total_usd_p10", cf_json_round(cfg->total_usd_p10, 6));
    cJSON_AddNumberToObject(o, "total_usd_p90", cf_json_round(cfg->total_usd_p90, 6));
    /* what the deadline and budget were held to (spot: the plan's check
     * quantile); hours to 6 digits like dollars, so that a plan held just
     * under a 16.076 h deadline does not read 16.08 h to a CI gate */
    cJSON_AddNumberToObject(o, "hours_at_confidence", cf_json_round(cfg->hours_at_confidence, 6));
    cJSON_AddNumberToObject(o, "total_usd_at_confidence", cf_json_round(cfg->usd_at_confidence, 6));
    if (cfg->spot) {
        cJSON_AddNumberToObject(o, "spot_time_factor", cf_json_round(cfg->spot_factor, 4));
        cJSON_AddNumberToObject(o, "checkpoint_interval_hours", cf_json_round(cfg->checkpoint_interval_hours, 3));
        cJSON *spot = cf_config_spot_json(cfg); /* docs/spot.md */
        if (spot)
            cJSON_AddItemToObject(o, "spot_model", spot);
    }
    char text[192];
    cf_price_kind kind = cfg->spot ? cfg->vm->spot_kind : cfg->vm->ondemand_kind;
    const char *date = cfg->spot ? cfg->vm->spot_date : cfg->vm->ondemand_date;
    cJSON *price = cJSON_AddObjectToObject(o, "price");
    cJSON_AddStringToObject(price, "kind", cf_price_kind_name(kind));
    if (date[0])
        cJSON_AddStringToObject(price, "date", date);
    else
        cJSON_AddNullToObject(price, "date");
    cf_vm_price_origin(cfg->vm, cfg->spot, text, sizeof text);
    cJSON_AddStringToObject(price, "origin", text);
    if (date[0] && kind != CF_PRICE_ESTIMATED)
        cJSON_AddNumberToObject(price, "age_days", floor(cf_days_since(date)));
    else
        cJSON_AddNullToObject(price, "age_days");
    char where[384];
    cJSON *avail = cJSON_AddObjectToObject(o, "availability");
    cJSON_AddBoolToObject(avail, "table", cf_vm_availability(cfg->vm, where, sizeof where));
    cJSON_AddStringToObject(avail, "note", where);
    if (cfg->spot) {
        cf_vm_interruptions_origin(NULL, cfg->vm, text, sizeof text);
        cJSON_AddNumberToObject(price, "interruptions_pct_per_month",
                                text[0] ? cfg->vm->interruptions_pct_per_month : CF_DEFAULT_SPOT_INTERRUPTIONS_PCT_PER_MONTH);
        cJSON_AddStringToObject(price, "interruptions_source", text[0] ? text : "default");
    }
    if (cfg->network_measured_max_nodes > 0)
        cJSON_AddNumberToObject(o, "network_measured_max_nodes", cfg->network_measured_max_nodes);
    cJSON *prov = cJSON_AddObjectToObject(o, "provenance");
    cJSON_AddStringToObject(prov, "throughput", cf_provenance_name(cfg->prov_throughput));
    cJSON_AddStringToObject(prov, "noise_scale", cf_provenance_name(cfg->prov_noise));
    cJSON_AddStringToObject(prov, "network", cf_provenance_name(cfg->prov_network));
    cJSON_AddStringToObject(prov, "price", cf_provenance_name(cfg->prov_price));
    return o;
}

static cJSON *string_array(const char (*items)[16], int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(items[i]));
    return a;
}

static cJSON *constraints_json(const cf_constraints *s)
{
    cJSON *o = cJSON_CreateObject();
    if (s->deadline_hours > 0)
        cJSON_AddNumberToObject(o, "deadline_hours", s->deadline_hours);
    else
        cJSON_AddNullToObject(o, "deadline_hours");
    if (s->budget_usd > 0)
        cJSON_AddNumberToObject(o, "budget_usd", s->budget_usd);
    else
        cJSON_AddNullToObject(o, "budget_usd");
    cJSON_AddNumberToObject(o, "confidence", s->confidence > 0 ? s->confidence : CF_DEFAULT_CONFIDENCE);
    cJSON_AddNumberToObject(o, "max_gpus", s->max_gpus);
    cJSON_AddNumberToObject(o, "max_nodes", s->max_nodes);
    cJSON_AddNumberToObject(o, "max_accumulation", s->max_accumulation);
    cJSON_AddNumberToObject(o, "max_global_batch", s->max_global_batch);
    cJSON_AddStringToObject(o, "spot", cf_spot_policy_name(s->spot));
    cJSON_AddItemToObject(o, "clouds", string_array(s->clouds, s->n_clouds));
    cJSON *regions = cJSON_AddArrayToObject(o, "regions");
    for (int i = 0; i < s->n_regions; i++)
        cJSON_AddItemToArray(regions, cJSON_CreateString(s->regions[i]));
    cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
    for (int i = 0; i < s->n_gpus; i++)
        cJSON_AddItemToArray(gpus, cJSON_CreateString(s->gpus[i]));
    return o;
}

static cJSON *gpus_json(const cf_inputs *in, const char *spec_memory_format)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < in->n_perf; i++) {
        const cf_gpu_perf *g = &in->perf[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "gpu", g->gpu);
        cJSON_AddStringToObject(o, "throughput", cf_provenance_name(g->params.compute_provenance));
        /* null, not absent, for the GPU types the profile measured: every entry has
         * the keys docs/output.md lists */
        if (g->carried_from[0])
            cJSON_AddStringToObject(o, "carried_from", g->carried_from);
        else
            cJSON_AddNullToObject(o, "carried_from");
        /* the least-squares line through the 1-GPU curve, for reading only (the
         * model uses the curves): null where it is not physical, a negative
         * intercept or slope from a few noisy batches. Times the compute
         * scale, as the model's step times are: a GPU type carried over from
         * a profile (whose α, β it shares), moved to the job's precision or
         * corrected by recorded runs showed the uncorrected line. */
        double scale = g->params.compute_scale > 0 ? g->params.compute_scale : 1.0;
        if (g->params.alpha_s >= 0 && g->params.beta_s >= 0) {
            cJSON_AddNumberToObject(o, "alpha_s", cf_json_round(scale * g->params.alpha_s, 4));
            cJSON_AddNumberToObject(o, "beta_s", cf_json_round(scale * g->params.beta_s, 4));
        } else {
            cJSON_AddNullToObject(o, "alpha_s");
            cJSON_AddNullToObject(o, "beta_s");
        }
        if (g->params.max_local_batch >= 0)
            cJSON_AddNumberToObject(o, "max_local_batch", g->params.max_local_batch);
        else /* the model does not fit on this GPU: no batch, rather than a sentinel -1 */
            cJSON_AddNullToObject(o, "max_local_batch");
        cJSON_AddStringToObject(o, "memory", cf_provenance_name(g->params.memory_provenance));
        cJSON_AddStringToObject(o, "network", cf_provenance_name(g->params.network_provenance));
        if (g->network_note[0])
            cJSON_AddStringToObject(o, "network_note", g->network_note);
        else
            cJSON_AddNullToObject(o, "network_note");
        cJSON_AddStringToObject(o, "note", g->note);
        /* the profile's memory format against the spec's, where they differ (the interval is wider) */
        if (g->profile_memory_format[0] && spec_memory_format[0]) {
            cJSON *f = cJSON_AddObjectToObject(o, "memory_format_mismatch");
            cJSON_AddStringToObject(f, "profile", g->profile_memory_format);
            cJSON_AddStringToObject(f, "spec", spec_memory_format);
        } else {
            cJSON_AddNullToObject(o, "memory_format_mismatch");
        }
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *lr_table_json(const cf_report *r, const cf_config *c)
{
    /* With spot or elastic training the node count changes at run time:
     * the global batch and LR at each count, from the elastic plan (the
     * batch held where memory and max_accumulation allow; docs/spot.md). */
    cJSON *a = cJSON_CreateArray();
    const cf_elastic_plan *e = cf_report_elastic(r, c);
    if (!e)
        return a;
    for (int n = 1; n <= e->max_nodes; n++) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "nodes", n);
        cJSON_AddNumberToObject(row, "global_batch", (double)e->points[n - 1].global_batch);
        cJSON_AddNumberToObject(row, "lr", cf_json_round(e->points[n - 1].lr, 6)); /* CLOUDFIT_LR_BY_NODES */
        cJSON_AddItemToArray(a, row);
    }
    return a;
}

/* What the chosen plan's all-reduce between VMs rests on, as the table's
 * and the markdown's "network:" line says it (cf_report_network_text):
 * the effective rate and its provenance (null on one VM), the VM's NIC
 * (null where the catalog gives none), the span of NICs its step interval
 * covers when that NIC is a guess (null otherwise), and the line. */
static cJSON *network_json(const cf_report *r, const cf_config *c)
{
    const cf_advice_explained *e = r->advice->explained;
    cJSON *o = cJSON_CreateObject();
    cf_buf note = CF_BUF_INIT;
    int between = cf_report_network_text(r, c, &note);
    if (between) {
        cJSON_AddNumberToObject(o, "effective_gbps", cf_json_round(e->inter_gbps, 4));
        cJSON_AddStringToObject(o, "provenance", cf_provenance_name(e->inter_provenance));
    } else {
        cJSON_AddNullToObject(o, "effective_gbps");
        cJSON_AddNullToObject(o, "provenance");
    }
    if (c->vm->network_gbps > 0)
        cJSON_AddNumberToObject(o, "nic_gbps", c->vm->network_gbps);
    else
        cJSON_AddNullToObject(o, "nic_gbps");
    if (between && cf_report_network_is_guess(r, c)) {
        cJSON *span = cJSON_AddArrayToObject(o, "interval_spans_gbps");
        cJSON_AddItemToArray(span, cJSON_CreateNumber(CF_UNKNOWN_NIC_SLOWEST_GBPS));
        cJSON_AddItemToArray(span, cJSON_CreateNumber(CF_UNKNOWN_NIC_FIT_BOUND_GBPS));
    } else {
        cJSON_AddNullToObject(o, "interval_spans_gbps");
    }
    cJSON_AddStringToObject(o, "note", cf_buf_cstr(&note));
    cf_buf_free(&note);
    return o;
}

static cJSON *explanation_json(const cf_report *r)
{
    const cf_config *c = &r->advice->ranked[0];
    const cf_inputs *in = r->inputs;
    cJSON *o = cJSON_CreateObject();
    cJSON *noise = cJSON_AddObjectToObject(o, "noise_scale");
    cJSON_AddNumberToObject(noise, "effective", cf_json_round(in->noise.b_noise_effective, 4));
    cJSON_AddNumberToObject(noise, "start", cf_json_round(in->noise.b_noise_start, 4));
    cJSON_AddNumberToObject(noise, "end", cf_json_round(in->noise.b_noise_end, 4));
    cJSON_AddStringToObject(noise, "source", cf_provenance_name(in->noise.provenance));
    cJSON_AddStringToObject(noise, "note", in->noise_note);
    cJSON_AddNumberToObject(o, "statistical_efficiency", cf_json_round(c->stat_efficiency, 4));
    cJSON_AddNumberToObject(o, "parallel_efficiency", cf_json_round(c->parallel_efficiency, 4));
    cJSON_AddNumberToObject(o, "compute_s", cf_json_round(c->compute_s, 4));
    cJSON_AddNumberToObject(o, "sync_s", cf_json_round(c->sync_s, 4));
    cJSON *lr = cJSON_AddObjectToObject(o, "lr");
    cJSON_AddNumberToObject(lr, "base_lr", r->spec->job.lr);
    cJSON_AddNumberToObject(lr, "base_batch", r->spec->job.batch);
    cJSON_AddStringToObject(lr, "rule", cf_lr_rule_name(c->lr.rule_used));
    cJSON_AddBoolToObject(lr, "sqrt_form", c->lr.sqrt_form);
    cJSON_AddNumberToObject(lr, "factor", cf_json_round(c->lr.factor, 4));
    cJSON_AddItemToObject(lr, "by_nodes", lr_table_json(r, c));
    cJSON_AddItemToObject(o, "gpus", gpus_json(in, r->spec->job.memory_format));
    cJSON_AddItemToObject(o, "network", network_json(r, c));
    cJSON *counts = cJSON_AddObjectToObject(o, "search");
    cJSON_AddNumberToObject(counts, "offers", (double)r->n_offers);
    cJSON_AddNumberToObject(counts, "model_evaluations", (double)r->advice->n_evaluated);
    cJSON_AddNumberToObject(counts, "priced_configurations", (double)r->advice->n_candidates);
    cJSON_AddNumberToObject(counts, "feasible_configurations", (double)r->advice->n_feasible);
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (int i = 0; i < in->n_notes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(in->notes[i]));
    return o;
}

cJSON *cf_report_json(const cf_report *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "version", CF_DOCUMENT_VERSION);
    cJSON *meta = cJSON_AddObjectToObject(doc, "metadata");
    cJSON_AddStringToObject(meta, "tool", "cloudfit " CF_VERSION);
    cJSON_AddStringToObject(meta, "created_at", r->created_at);
    cJSON_AddItemToObject(meta, "ci", cf_ci_json(r->ci));
    cJSON *spec = cJSON_AddObjectToObject(doc, "spec");
    cJSON_AddStringToObject(spec, "name", r->spec->job.name);
    cJSON_AddStringToObject(spec, "hash", r->spec->hash);
    cJSON_AddStringToObject(spec, "source_hash", r->spec->source_hash);
    if (r->identity && r->identity[0])
        cJSON_AddStringToObject(spec, "identity", r->identity);
    /* snapshot or embedded, fetch time, age, overrides (render_catalog.c) */
    const cf_config *pick = &r->advice->ranked[0];
    cJSON_AddItemToObject(doc, "catalog", cf_catalog_source_json(r->catalog_source, r->catalog, r->catalog_age_days,
                                                                 pick->vm, pick->spot, pick->mixed));
    cJSON_AddStringToObject(doc, "objective", cf_objective_name(r->spec->search.objective));
    cJSON_AddItemToObject(doc, "constraints", constraints_json(&r->spec->search));
    cJSON *chosen = cf_config_json(&r->advice->ranked[0]);
    cJSON_AddItemToObject(chosen, "elastic", cf_report_elastic_json(r, &r->advice->ranked[0]));
    cJSON_AddItemToObject(doc, "chosen", chosen);
    if (r->spec->search.spot != CF_SPOT_NEVER)
        cJSON_AddItemToObject(doc, "best_by_kind", cf_report_side_by_side_json(r));
    if (r->hetero)
        cJSON_AddItemToObject(doc, "mixed_gpu_types", cf_report_hetero_json(r));
    cJSON *alts = cJSON_AddArrayToObject(doc, "alternatives");
    for (size_t i = 1; i < r->advice->n_ranked; i++)
        cJSON_AddItemToArray(alts, cf_config_json(&r->advice->ranked[i]));
    cJSON *front = cJSON_AddArrayToObject(doc, "pareto");
    for (size_t i = 0; i < r->advice->n_pareto; i++)
        cJSON_AddItemToArray(front, cf_config_json(&r->advice->pareto[i]));
    cJSON_AddItemToObject(doc, "next_measurement", cf_next_measurement_json(&r->advice->next, r->spec->job.source, r->history));
    cJSON_AddItemToObject(doc, "explanation", explanation_json(r));
    cJSON_AddItemToObject(doc, "gates", cf_gates_json(r->gates, r->n_gates));
    return doc;
}
