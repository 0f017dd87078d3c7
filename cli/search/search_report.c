#include "search/search_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/validate.h"

void cf_search_candidate_label(const cf_search_candidate *c, char *out, size_t n)
{
    snprintf(out, n, "%s %d×%s (%d GPU%s) m=%d", c->gpu, c->nodes, c->vm ? c->vm->instance_type : "?",
             c->gpus_per_node, c->gpus_per_node == 1 ? "" : "s", c->local_batch);
}

static const cf_gpu_perf *fitted_for(const cf_search_result *r, const char *gpu)
{
    for (size_t i = 0; i < r->n_fitted; i++)
        if (strcasecmp(r->fitted[i].gpu, gpu) == 0)
            return &r->fitted[i];
    return NULL;
}

static void fill_config(const cf_search_report *sr, const cf_noise_model *noise, size_t i, cf_config *cfg)
{
    const cf_search_options *o = sr->options;
    const cf_search_result *r = sr->result;
    const cf_job *job = o->job;
    const cf_search_candidate *c = &o->candidates[i];
    memset(cfg, 0, sizeof *cfg);
    cfg->vm = c->vm;
    cfg->nodes = c->nodes;
    cfg->gpus_per_node = c->gpus_per_node;
    cfg->local_batch = c->local_batch;
    cfg->accumulation = 1;
    cfg->global_batch = (long)c->nodes * c->gpus_per_node * c->local_batch;
    double m = (double)cfg->global_batch;
    cfg->lr = cf_lr_for_batch(job->lr_rule, job->optimizer, job->lr, job->batch, noise->b_noise_effective, m);
    cfg->step_time_s = r->est_step_s[i];
    const cf_gpu_perf *perf = fitted_for(r, c->gpu);
    if (perf) {
        cf_perf_params p = cf_gpu_perf_on_vm(perf, c->network_gbps);
        double bytes = job->parameters * job->gradient_bytes;
        cf_step st = cf_perf_predict(&p, bytes, c->nodes, c->gpus_per_node, c->nodes * c->gpus_per_node,
                                     c->local_batch, 1);
        cfg->compute_s = st.compute_s;
        cfg->sync_s = st.allreduce_s;
        double single = c->local_batch / cf_perf_compute_s(&p, c->local_batch, 1);
        cfg->parallel_efficiency = (m / cfg->step_time_s) / ((double)c->nodes * c->gpus_per_node * single);
        cfg->prov_network = p.network_provenance;
    }
    cfg->samples_per_s = m / cfg->step_time_s;
    cfg->samples_to_target = cf_samples_to_target(noise, job->total_samples, m);
    cfg->steps = ceil(cfg->samples_to_target / m);
    cfg->stat_efficiency = cf_stat_efficiency(noise, m);
    cf_search_job(o, c, cfg->step_time_s, &cfg->hours, &cfg->total_usd);
    cfg->train_hours = cfg->hours - o->constraints->startup_minutes / 60.0;
    /* the search's own uncertainty of the step (the GP posterior over the model) */
    cfg->step_sigma = r->est_sd[i] > 0 ? r->est_sd[i] : 0;
    double z80 = cf_normal_two_sided_z(CF_INTERVAL_LEVEL), startup_h = o->constraints->startup_minutes / 60.0;
    cfg->hours_p10 = startup_h + cfg->train_hours * exp(-z80 * cfg->step_sigma);
    cfg->hours_p90 = startup_h + cfg->train_hours * exp(z80 * cfg->step_sigma);
    cfg->total_usd_p10 = cfg->hours_p10 * c->nodes * c->usd_per_node_hr;
    cfg->total_usd_p90 = cfg->hours_p90 * c->nodes * c->usd_per_node_hr;
    cf_search_job(o, c, cfg->step_time_s * exp(o->safety_sds * cfg->step_sigma), &cfg->hours_at_confidence,
                  &cfg->usd_at_confidence);
    cfg->spot_factor = 1;
    cfg->usd_per_hour = c->nodes * c->usd_per_node_hr;
    cfg->prov_throughput = r->measured[i] ? CF_PROV_MEASURED : CF_PROV_FITTED;
    cfg->prov_noise = noise->provenance;
    cfg->prov_price = c->vm && strstr(c->vm->instance_type, "(--price)") ? CF_PROV_DEFAULT : CF_PROV_MEASURED;
}

typedef struct {
    size_t index;
    double value;
} ranked_item;

static int by_value(const void *a, const void *b)
{
    const ranked_item *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

cf_status cf_search_advice(const cf_search_report *sr, const cf_noise_model *noise, size_t top, cf_advice *out)
{
    const cf_search_options *o = sr->options;
    const cf_search_result *r = sr->result;
    memset(out, 0, sizeof *out);
    size_t n = o->n_candidates;
    ranked_item *items = malloc((n ? n : 1) * sizeof *items);
    double *hx = malloc((n ? n : 1) * sizeof *hx), *uy = malloc((n ? n : 1) * sizeof *uy);
    size_t *usable = malloc((n ? n : 1) * sizeof *usable), *order = malloc((n ? n : 1) * sizeof *order);
    out->ranked = calloc(top + 1, sizeof *out->ranked);
    if (!items || !hx || !uy || !usable || !order || !out->ranked) {
        free(items), free(hx), free(uy), free(usable), free(order);
        cf_advice_free(out);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    size_t n_items = 0, n_usable = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(r->est_step_s[i]) || r->failed[i])
            continue;
        double h, u;
        cf_search_job(o, &o->candidates[i], r->est_step_s[i], &h, &u);
        hx[n_usable] = h;
        uy[n_usable] = u;
        usable[n_usable++] = i;
        /* The margin on the upper end, as the search applied it. */
        double sd = r->est_sd[i] > o->noise_sd ? r->est_sd[i] : o->noise_sd, hs, us;
        cf_search_job(o, &o->candidates[i], r->est_step_s[i] * exp(o->safety_sds * sd), &hs, &us);
        if (cf_search_feasible(o, hs, us, 0) && (long)i != r->chosen)
            items[n_items++] = (ranked_item){i, cf_search_objective(o, h, u)};
    }
    out->n_feasible = n_items + (r->chosen >= 0);
    qsort(items, n_items, sizeof *items, by_value);
    if (r->chosen >= 0)
        fill_config(sr, noise, (size_t)r->chosen, &out->ranked[out->n_ranked++]);
    for (size_t k = 0; k < n_items && out->n_ranked < top; k++)
        fill_config(sr, noise, items[k].index, &out->ranked[out->n_ranked++]);
    size_t n_front = cf_pareto_front(hx, uy, n_usable, order);
    out->pareto = calloc(n_front ? n_front : 1, sizeof *out->pareto);
    for (size_t k = 0; out->pareto && k < n_front; k++)
        fill_config(sr, noise, usable[order[k]], &out->pareto[out->n_pareto++]);
    out->n_evaluated = n;
    out->n_candidates = n;
    free(items), free(hx), free(uy), free(usable), free(order);
    return CF_OK;
}

static void fmt_step(double s, char *out, size_t n)
{
    if (!isfinite(s))
        snprintf(out, n, "-");
    else
        snprintf(out, n, "%.4g s", s);
}

static double pct_of_job(double usd, const cf_search_result *r)
{
    return r->chosen_usd > 0 ? 100 * usd / r->chosen_usd : NAN;
}

void cf_search_text(const cf_search_report *sr, cf_buf *out)
{
    const cf_search_options *o = sr->options;
    const cf_search_result *r = sr->result;
    cf_buf_printf(out, "search: %s, method %s, %zu candidate configurations\n", sr->runner,
                  cf_search_method_name(o->method), o->n_candidates);
    if (sr->runner_note && sr->runner_note[0])
        cf_buf_printf(out, "  %s\n", sr->runner_note);
    cf_buf_printf(out, "\n  %-3s %-8s %-44s %-18s %s\n", "#", "kind", "configuration", "predicted before",
                  "measured");
    for (size_t i = 0; i < r->n_runs; i++) {
        const cf_search_step *s = &r->runs[i];
        char label[128], pred[48], meas[48];
        cf_search_candidate_label(&o->candidates[s->candidate], label, sizeof label);
        if (isfinite(s->predicted_step_s))
            snprintf(pred, sizeof pred, "%.4g s ±%.0f%%", s->predicted_step_s, 100 * s->predicted_sd);
        else
            snprintf(pred, sizeof pred, "-");
        fmt_step(s->measured_step_s, meas, sizeof meas);
        cf_buf_printf(out, "  %-3zu %-8s %-44s %-18s %s", i + 1, s->kind == CF_RUN_PROFILE ? "profile" : "probe",
                      label, pred, s->failed ? "FAILED" : meas);
        if (s->failed)
            cf_buf_printf(out, " after %d attempts: %s (configuration marked failed)", s->attempts, s->error);
        else if (s->attempts > 1)
            cf_buf_printf(out, " (retried once: %s)", s->error);
        cf_buf_puts(out, "\n");
    }
    cf_buf_puts(out, "\n");
    if (r->chosen >= 0) {
        char label[128];
        cf_search_candidate_label(&o->candidates[r->chosen], label, sizeof label);
        cf_config cfg;
        fill_config(sr, o->noise, (size_t)r->chosen, &cfg);
        cf_buf_printf(out, "chosen: %s, step %.4g s (%s), %.2f h (%.2f–%.2f), $%.2f (%.2f–%.2f) (80%% intervals)\n",
                      label, r->est_step_s[r->chosen],
                      r->chosen_measured ? "measured before committing" : "NOT measured: out of probes",
                      r->chosen_hours, cfg.hours_p10, cfg.hours_p90, r->chosen_usd, cfg.total_usd_p10,
                      cfg.total_usd_p90);
        if (!r->chosen_safe)
            cf_buf_puts(out, "  warning: the pick does not meet the deadline/budget at the stated confidence\n");
    } else {
        cf_buf_puts(out, "chosen: none (no configuration meets the deadline and budget)\n");
    }
    cf_buf_printf(out, "stopped: %s after %zu probe%s (%zu failed configuration%s)\n", cf_search_stop_name(r->stop),
                  r->n_probes, r->n_probes == 1 ? "" : "s", r->n_failed, r->n_failed == 1 ? "" : "s");
    cf_buf_printf(out, "profile cost: %zu runs, $%.4g (%.2f%% of the job)\n", r->n_profile_runs, r->profile_cost_usd,
                  pct_of_job(r->profile_cost_usd, r));
    cf_buf_printf(out, "probe cost: $%.4g; overhead beyond the pick's own progress: $%.4g (%.2f%% of the job)\n",
                  r->probe_cost_usd, r->overhead_usd, pct_of_job(r->overhead_usd, r));
    if (sr->current >= 0 && r->chosen >= 0) {
        double h, u;
        cf_search_job(o, &o->candidates[sr->current], r->est_step_s[sr->current], &h, &u);
        cf_buf_printf(out, "savings vs training.current (%s): $%.2f (%.1f%%), %.2f h faster\n", sr->current_note,
                      u - r->chosen_usd, 100 * (u - r->chosen_usd) / u, h - r->chosen_hours);
    } else if (sr->current_note[0]) {
        cf_buf_printf(out, "savings vs training.current: %s\n", sr->current_note);
    }
    if (sr->score) {
        const cf_search_score *sc = sr->score;
        if (sc->oracle >= 0) {
            char label[128];
            cf_search_candidate_label(&o->candidates[sc->oracle], label, sizeof label);
            cf_buf_printf(out, "oracle (measured times): %s, %.2f h, $%.2f; regret %.1f%%%s\n", label,
                          sc->oracle_hours, sc->oracle_usd, 100 * sc->regret,
                          sc->miss ? "; MISSES the deadline/budget by > 3%" : "");
        } else {
            cf_buf_puts(out, "oracle (measured times): nothing meets the deadline and budget\n");
        }
    }
    cf_buf_puts(out, "\n");
}

static cJSON *candidate_json(const cf_search_candidate *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "cloud", c->vm ? c->vm->cloud : "");
    cJSON_AddStringToObject(o, "region", c->vm ? c->vm->region : "");
    cJSON_AddStringToObject(o, "instance_type", c->vm ? c->vm->instance_type : "");
    cJSON_AddStringToObject(o, "gpu", c->gpu);
    cJSON_AddNumberToObject(o, "gpus_per_node", c->gpus_per_node);
    cJSON_AddNumberToObject(o, "nodes", c->nodes);
    cJSON_AddNumberToObject(o, "local_batch", c->local_batch);
    cJSON_AddNumberToObject(o, "usd_per_node_hr", c->usd_per_node_hr);
    return o;
}

static void add_number_or_null(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

void cf_search_json(const cf_search_report *sr, cJSON *doc)
{
    const cf_search_options *o = sr->options;
    const cf_search_result *r = sr->result;
    cJSON *s = cJSON_AddObjectToObject(doc, "search");
    cJSON_AddStringToObject(s, "runner", sr->runner);
    cJSON_AddStringToObject(s, "method", cf_search_method_name(o->method));
    cJSON_AddNumberToObject(s, "seed", (double)o->seed);
    cJSON_AddNumberToObject(s, "margin", o->margin);
    cJSON_AddNumberToObject(s, "max_probes", o->max_probes);
    cJSON_AddNumberToObject(s, "candidates", (double)o->n_candidates);
    cJSON_AddStringToObject(s, "stopped", cf_search_stop_name(r->stop));
    cJSON_AddBoolToObject(s, "chosen_measured", r->chosen_measured);
    cJSON *runs = cJSON_AddArrayToObject(s, "runs");
    double *errors = malloc((r->n_runs ? r->n_runs : 1) * sizeof *errors);
    size_t n_err = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        const cf_search_step *st = &r->runs[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "kind", st->kind == CF_RUN_PROFILE ? "profile" : "probe");
        cJSON_AddItemToObject(j, "config", candidate_json(&o->candidates[st->candidate]));
        cJSON_AddNumberToObject(j, "steps", st->steps);
        cJSON_AddNumberToObject(j, "attempts", st->attempts);
        cJSON_AddBoolToObject(j, "failed", st->failed);
        if (st->error[0])
            cJSON_AddStringToObject(j, "error", st->error);
        add_number_or_null(j, "measured_step_time_s", st->measured_step_s);
        add_number_or_null(j, "predicted_step_time_s", st->predicted_step_s);
        add_number_or_null(j, "predicted_log_sd", isfinite(st->predicted_step_s) ? st->predicted_sd : NAN);
        cJSON_AddNumberToObject(j, "cost_usd", st->cost_usd);
        cJSON_AddItemToArray(runs, j);
        if (errors && isfinite(st->predicted_step_s) && isfinite(st->measured_step_s))
            errors[n_err++] = st->predicted_step_s / st->measured_step_s - 1;
    }
    cJSON *failed = cJSON_AddArrayToObject(s, "failed_configurations");
    for (size_t i = 0; i < o->n_candidates; i++)
        if (r->failed[i])
            cJSON_AddItemToArray(failed, candidate_json(&o->candidates[i]));
    cJSON_AddNumberToObject(s, "profile_runs", (double)r->n_profile_runs);
    cJSON_AddNumberToObject(s, "profile_cost_usd", r->profile_cost_usd);
    cJSON_AddNumberToObject(s, "probe_cost_usd", r->probe_cost_usd);
    cJSON_AddNumberToObject(s, "overhead_usd", r->overhead_usd);
    if (sr->current >= 0 && r->chosen >= 0) {
        double h, u;
        cf_search_job(o, &o->candidates[sr->current], r->est_step_s[sr->current], &h, &u);
        cJSON *sv = cJSON_AddObjectToObject(s, "savings");
        cJSON_AddItemToObject(sv, "current", candidate_json(&o->candidates[sr->current]));
        cJSON_AddNumberToObject(sv, "current_usd", u);
        cJSON_AddNumberToObject(sv, "current_hours", h);
        cJSON_AddNumberToObject(sv, "usd", u - r->chosen_usd);
        cJSON_AddNumberToObject(sv, "hours", h - r->chosen_hours);
    } else {
        cJSON_AddNullToObject(s, "savings");
    }

    /* "overall" (DESIGN.md §4.4): prediction errors of the probes before
     * they ran, and the search's figures; the oracle only for trace. */
    cJSON *ov = cJSON_AddObjectToObject(doc, "overall");
    cf_ape_stats ape = cf_ape_summarise(errors, n_err);
    free(errors);
    cJSON_AddNumberToObject(ov, "n", (double)ape.n);
    add_number_or_null(ov, "median_ape", ape.n ? ape.median_ape : NAN);
    add_number_or_null(ov, "p90_ape", ape.n ? ape.p90_ape : NAN);
    cJSON_AddNumberToObject(ov, "probe_count", (double)r->n_probes);
    cJSON_AddNumberToObject(ov, "profile_runs", (double)r->n_profile_runs);
    const cf_search_score *sc = sr->score;
    double job = sc && sc->oracle >= 0 && r->chosen >= 0 ? sc->chosen_usd : r->chosen_usd;
    add_number_or_null(ov, "overhead_pct", r->chosen >= 0 ? 100 * (sc ? sc->overhead_frac : r->overhead_usd / job) : NAN);
    add_number_or_null(ov, "profile_cost_pct", r->chosen >= 0 ? 100 * r->profile_cost_usd / job : NAN);
    add_number_or_null(ov, "regret_pct", sc && isfinite(sc->regret) ? 100 * sc->regret : NAN);
    if (sc) {
        cJSON_AddBoolToObject(ov, "miss", sc->miss);
        cJSON *oracle = sc->oracle >= 0 ? candidate_json(&o->candidates[sc->oracle]) : cJSON_CreateNull();
        if (sc->oracle >= 0) {
            cJSON_AddNumberToObject(oracle, "step_time_s", sr->true_step_s[sc->oracle]);
            cJSON_AddNumberToObject(oracle, "hours", sc->oracle_hours);
            cJSON_AddNumberToObject(oracle, "total_usd", sc->oracle_usd);
        }
        cJSON_AddItemToObject(ov, "oracle", oracle);
        cJSON_AddNumberToObject(ov, "fastest_hours", sc->fastest_hours);
        cJSON_AddNumberToObject(ov, "cheapest_usd", sc->cheapest_usd);
        if (r->chosen >= 0) {
            cJSON_AddNumberToObject(ov, "chosen_true_hours", sc->chosen_hours);
            cJSON_AddNumberToObject(ov, "chosen_true_usd", sc->chosen_usd);
        }
    } else {
        cJSON_AddNullToObject(ov, "oracle");
    }
}
