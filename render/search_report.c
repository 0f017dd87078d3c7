#include "cloudfit/render/search_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/validate.h"
#include "cloudfit/version.h"

void cf_search_candidate_label(const cf_search_candidate *c, char *out, size_t n)
{
    snprintf(out, n, "%s %d×%s (%d GPU%s) m=%d", c->gpu, c->nodes, c->vm ? c->vm->instance_type : "?",
             c->gpus_per_node, c->gpus_per_node == 1 ? "" : "s", c->local_batch);
}

static void fmt_step(double s, char *out, size_t n)
{
    if (!isfinite(s))
        snprintf(out, n, "-");
    else
        snprintf(out, n, "%.4g s", s);
}

/* The shares of the pick's job cost: under the measured times wherever the
 * trace runner knows the pick's (the score's, docs/search.md), else under
 * the estimate; the table and the JSON the same. Both on one basis: the
 * profile's share went by the estimate when no candidate met the limits
 * under the measured times (no oracle), the overhead's by the truth. */
static double share_pct(const cf_search_report *sr, double measured_frac, double usd)
{
    const cf_search_result *r = sr->result;
    if (r->chosen < 0)
        return NAN;
    if (sr->score)
        return 100 * measured_frac;
    return r->chosen_usd > 0 ? 100 * usd / r->chosen_usd : NAN;
}

static double profile_pct(const cf_search_report *sr)
{
    return share_pct(sr, sr->score ? sr->score->profile_frac : NAN, sr->result->profile_cost_usd);
}

static double overhead_pct(const cf_search_report *sr)
{
    return share_pct(sr, sr->score ? sr->score->overhead_frac : NAN, sr->result->overhead_usd);
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
        char label[192], pred[48], meas[48];
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
        char label[192];
        cf_search_candidate_label(&o->candidates[r->chosen], label, sizeof label);
        const cf_search_summary *sum = sr->summary;
        /* why a pick was not measured: --method model runs no probes by
         * design (it read "out of probes"), the others ran out of them */
        const char *measured = r->chosen_measured               ? "measured before committing"
                               : r->stop == CF_STOP_NO_PROBES  ? "NOT measured: the model's pick, --method model "
                                                                 "runs no probes"
                               : r->stop == CF_STOP_MAX_PROBES ? "NOT measured: out of probes"
                                                               : "NOT measured";
        cf_buf_printf(out, "%s: %s, step %.4g s (%s), %.2f h (%.2f–%.2f), $%.2f (%.2f–%.2f) (80%% intervals)\n",
                      sr->no_spot_plan ? "the search's on-demand pick (no plan: no spot plan meets the limits, --spot "
                                         "only; the regret below scores this pick against the on-demand oracle)"
                                       : "chosen",
                      label, r->est_step_s[r->chosen], measured,
                      r->chosen_hours, sum->chosen_hours_p10, sum->chosen_hours_p90, r->chosen_usd,
                      sum->chosen_usd_p10, sum->chosen_usd_p90);
        if (!r->chosen_safe)
            cf_buf_puts(out, "  warning: the pick does not meet the deadline/budget at the stated confidence\n");
    } else {
        cf_buf_puts(out, "chosen: none (no configuration meets the deadline and budget)\n");
    }
    cf_buf_printf(out, "stopped: %s after %zu probe%s (%zu failed configuration%s)\n", cf_search_stop_name(r->stop),
                  r->n_probes, r->n_probes == 1 ? "" : "s", r->n_failed, r->n_failed == 1 ? "" : "s");
    /* shares of the pick's job: none without a pick */
    cf_buf_printf(out, "profile cost: %zu runs, $%.4g", r->n_profile_runs, r->profile_cost_usd);
    if (isfinite(profile_pct(sr)))
        cf_buf_printf(out, " (%.2f%% of the job)", profile_pct(sr));
    /* each figure of its own basis: the dollars and their share under the
     * estimates; under the measured times (the JSON's overall.overhead_pct)
     * beside them for the trace runner */
    cf_buf_printf(out, "\nprobe cost: $%.4g; overhead beyond the pick's own progress: $%.4g", r->probe_cost_usd,
                  r->overhead_usd);
    if (r->chosen >= 0 && r->chosen_usd > 0) {
        cf_buf_printf(out, " (%.2f%% of the job", 100 * r->overhead_usd / r->chosen_usd);
        if (sr->score && isfinite(overhead_pct(sr)))
            cf_buf_printf(out, "; %.2f%% under the measured times", overhead_pct(sr));
        cf_buf_puts(out, ")");
    }
    cf_buf_puts(out, "\n");
    const cf_search_summary *sum = sr->summary;
    if (sum->current >= 0 && r->chosen >= 0) {
        /* a pick dearer or slower than the current setup says so: "$-98.56 (-48.3%)" and "-92.64 h faster" read
         * as savings at a glance */
        double dh = sum->current_hours - r->chosen_hours, du = sum->current_usd - r->chosen_usd;
        double pct = 100 * du / sum->current_usd;
        cf_buf_printf(out, "savings vs training.current (%s): ", sum->current_note);
        if (du >= 0)
            cf_buf_printf(out, "$%.2f (%.1f%%)", du, pct);
        else
            cf_buf_printf(out, "none: $%.2f (%.1f%%) more", -du, -pct);
        cf_buf_printf(out, ", %.2f h %s\n", fabs(dh), dh >= 0 ? "faster" : "slower");
    } else if (sum->current >= 0) {
        cf_buf_printf(out, "savings vs training.current (%s): none to compare (no pick)\n", sum->current_note);
    } else if (sum->current_note[0]) {
        cf_buf_printf(out, "savings vs training.current: %s\n", sum->current_note);
    }
    if (sr->score) {
        const cf_search_score *sc = sr->score;
        if (sc->oracle >= 0) {
            char label[192];
            cf_search_candidate_label(&o->candidates[sc->oracle], label, sizeof label);
            cf_buf_printf(out, "oracle (measured times): %s, %.2f h, $%.2f; ", label, sc->oracle_hours, sc->oracle_usd);
            if (isfinite(sc->regret)) { /* no pick: no regret to give (JSON null), not "nan%" */
                cf_buf_printf(out, "regret %.1f%%", 100 * sc->regret);
                if (sc->miss)
                    cf_buf_puts(out, "; MISSES the deadline/budget by > 3%");
                else if (sc->over_deadline > 0 || sc->over_budget > 0) /* why a regret can be below 0 */
                    cf_buf_printf(out, "; the pick breaks the %s by %.2g%% under the measured times (within the "
                                  "3%% a miss allows)", sc->over_deadline >= sc->over_budget ? "deadline" : "budget",
                                  100 * fmax(sc->over_deadline, sc->over_budget));
                cf_buf_puts(out, "\n");
            } else {
                /* a miss too (docs/search.md), but not one by a pick's time or cost */
                cf_buf_puts(out, "regret: none (no pick); MISSES: no pick, though the oracle meets the limits\n");
            }
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
    for (size_t i = 0; i < r->n_runs; i++) {
        const cf_search_step *st = &r->runs[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "kind", st->kind == CF_RUN_PROFILE ? "profile" : "probe");
        cJSON_AddItemToObject(j, "config", candidate_json(&o->candidates[st->candidate]));
        cJSON_AddNumberToObject(j, "steps", st->steps);
        cJSON_AddNumberToObject(j, "attempts", st->attempts);
        cJSON_AddBoolToObject(j, "failed", st->failed);
        if (st->error[0]) /* null when it did not fail: every run has the same keys (docs/search.md) */
            cJSON_AddStringToObject(j, "error", st->error);
        else
            cJSON_AddNullToObject(j, "error");
        add_number_or_null(j, "measured_step_time_s", st->measured_step_s);
        add_number_or_null(j, "predicted_step_time_s", st->predicted_step_s);
        add_number_or_null(j, "predicted_log_sd", isfinite(st->predicted_step_s) ? st->predicted_sd : NAN);
        cJSON_AddNumberToObject(j, "cost_usd", st->cost_usd);
        cJSON_AddItemToArray(runs, j);
    }
    cJSON *failed = cJSON_AddArrayToObject(s, "failed_configurations");
    for (size_t i = 0; i < o->n_candidates; i++)
        if (r->failed[i])
            cJSON_AddItemToArray(failed, candidate_json(&o->candidates[i]));
    cJSON_AddNumberToObject(s, "profile_runs", (double)r->n_profile_runs);
    cJSON_AddNumberToObject(s, "profile_cost_usd", r->profile_cost_usd);
    cJSON_AddNumberToObject(s, "probe_cost_usd", r->probe_cost_usd);
    cJSON_AddNumberToObject(s, "overhead_usd", r->overhead_usd);
    const cf_search_summary *sum = sr->summary;
    if (sum->current >= 0 && r->chosen >= 0) {
        double h = sum->current_hours, u = sum->current_usd;
        cJSON *sv = cJSON_AddObjectToObject(s, "savings");
        cJSON_AddItemToObject(sv, "current", candidate_json(&o->candidates[sum->current]));
        cJSON_AddNumberToObject(sv, "current_usd", u);
        cJSON_AddNumberToObject(sv, "current_hours", h);
        cJSON_AddNumberToObject(sv, "usd", u - r->chosen_usd);
        cJSON_AddNumberToObject(sv, "hours", h - r->chosen_hours);
    } else {
        cJSON_AddNullToObject(s, "savings");
    }

    /* "overall" (docs/search.md "Output"): prediction errors of the probes before
     * they ran, and the search's figures; the oracle only for trace. */
    cJSON *ov = cJSON_AddObjectToObject(doc, "overall");
    const cf_ape_stats ape = sum->prediction;
    cJSON_AddNumberToObject(ov, "n", (double)ape.n);
    add_number_or_null(ov, "median_ape", ape.n ? ape.median_ape : NAN);
    add_number_or_null(ov, "p90_ape", ape.n ? ape.p90_ape : NAN);
    cJSON_AddNumberToObject(ov, "probe_count", (double)r->n_probes);
    cJSON_AddNumberToObject(ov, "profile_runs", (double)r->n_profile_runs);
    const cf_search_score *sc = sr->score;
    add_number_or_null(ov, "overhead_pct", overhead_pct(sr));
    add_number_or_null(ov, "profile_cost_pct", profile_pct(sr));
    add_number_or_null(ov, "regret_pct", sc && isfinite(sc->regret) ? 100 * sc->regret : NAN);
    if (sc) {
        cJSON_AddBoolToObject(ov, "miss", sc->miss);
        add_number_or_null(ov, "over_limits_pct", 100 * fmax(sc->over_deadline, sc->over_budget));
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

cJSON *cf_search_document(const cf_search_report *sr, const cf_spec *spec, const cf_report *final)
{
    cJSON *doc = final ? cf_report_json(final) : cJSON_CreateObject();
    if (!final) {
        cJSON_AddStringToObject(doc, "version", CF_DOCUMENT_VERSION);
        cJSON_AddStringToObject(doc, "objective", cf_objective_name(spec->search.objective));
        cJSON_AddNullToObject(doc, "chosen");
    }
    cf_search_json(sr, doc);
    return doc;
}
