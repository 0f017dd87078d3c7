/* The online search loop (docs/search.md):
 *   1. light profile: per GPU type, three per-GPU batches on one GPU, two
 *      on a full node, and the 2-node × 1-GPU probe at two batches (the
 *      inputs the step-time model and its interval are validated with);
 *   2. estimate = the step-time model (cf_perf_predict, refitted per GPU
 *      type on every measurement so far) × exp(GP posterior of the log
 *      residuals), the GP's prior being the model's own interval;
 *   3. if the best configuration that meets the deadline/budget with a
 *      safety margin (safety_sds × max(sd, noise/√n), the stated
 *      confidence's quantile) is not measured yet, probe it (the final pick
 *      is always measured before committing); a measured configuration
 *      that beats it by more than the margin but misses the confidence
 *      only by its measurement noise is measured again while repeats can
 *      still make it safe;
 *   4. otherwise probe the untried configuration with the largest expected
 *      improvement among those whose optimistic value (1.5 sd below) could
 *      beat the best by more than the margin; stop when there is none or at
 *      max_probes.
 * The baselines share the machinery: model-only stops after step 2 with
 * no GP (the constraints held with the model's own interval, as
 * `recommend` holds them); plain BO has no model (a constant prior mean), no
 * profile, three random starts, picks the best measured configuration and
 * stops when the expected improvement falls below the margin. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/escape.h"
#include "search_internal.h"
#include "../advisor_internal.h"
#include "../model/perf_internal.h"
#include "../model/stateff_internal.h"

/* How optimistic an untried configuration may be and still be worth a
 * probe: its value LCB_SDS posterior sds below the estimate must beat the
 * incumbent by the margin. Chosen on T4 (bench/search.sh, 20 seeds: 2.0
 * took 6 probes median and 98.6 % within 3 %, 1.5 takes 4 and 97.9 %; the
 * bar is at most 4); reported on DGX (85.4 → 84.4 %) and on T4 regrown
 * like NCCL's p4dn benchmark (93.9 → 94.2 %, 10 seeds): docs/search.md. */
#define LCB_SDS 1.5
/* How far below its estimate (posterior sds) a measured configuration may
 * lie and still be worth measuring again: one noisy run can put the best
 * configuration just over a deadline or budget, and repeats tell. No cap on
 * the repeats: the posterior sd shrinks with each (so the window closes on
 * a configuration whose mean is over the limit), and a repeat is only made
 * while the probes left could make it safe. Chosen on DGX's tight runs
 * (T4 has none; a cap of two repeats before: DGX 86.1 → 88.6 % within 3 %,
 * 10 seeds), reported on T4 (97.2 % either way; 20 seeds 98.1 → 97.6 %) and
 * the regrown T4 (94.2 → 94.7 %): docs/search.md. */
#define REMEASURE_SDS 1.0
/* The error model's prior (log sd) before the first model evaluation (the
 * model's own interval replaces them at every update): the smooth part of
 * the model's error and the configuration-to-configuration scatter that no
 * smooth model captures. Length scales in log2 units. */
#define SD_SINGLE 0.04
#define SD_MULTI_GPU 0.06
#define SD_MULTI_NODE 0.15
#define NUGGET_SINGLE_NODE 0.01
#define NUGGET_MULTI_NODE 0.04
#define LEN_NODES 1.5
#define LEN_GPUS 1.5
#define LEN_BATCH 1.5
#define BO_RANDOM_STARTS 3

typedef struct {
    const cf_search_options *o;
    const cf_search_runner *runner;
    cf_search_result *r;
    size_t n;
    size_t n_types;
    char (*type_name)[CF_GPU_NAME_MAX];
    int *type_ok;                 /* compute parameters known (fitted or given) */
    int *cand_type;
    unsigned char *excluded;      /* over the limits, or its GPU type cannot be modelled */
    double *model_s;              /* prior mean of the step time */
    double *model_sd;             /* the model's own log sd (its 80 % interval's σ) */
    double *mu;                   /* GP posterior of log(measured / model) */
    size_t *obs;
    double *obs_step;
    size_t n_obs;
    cf_gp gp;
    gsl_rng *rng;
    cf_status last_failure;       /* the status of the last failed attempt: a protocol
                                     error (CF_ERR_INVALID, exit 3) or an unavailable run (6) */
} state;

static double gradient_bytes(const cf_job *job) { return job->parameters * job->gradient_bytes; }

static int usable(const state *s, size_t c) { return !s->excluded[c] && !s->r->failed[c]; }

/* ---- GPU types and the analytic model ---------------------------------------- */

static cf_status init_types(state *s)
{
    const cf_search_options *o = s->o;
    s->type_name = calloc(s->n, sizeof *s->type_name);
    s->type_ok = calloc(s->n, sizeof *s->type_ok);
    s->r->fitted = calloc(s->n, sizeof *s->r->fitted);
    if (!s->type_name || !s->type_ok || !s->r->fitted)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t c = 0; c < s->n; c++) {
        const char *g = o->candidates[c].gpu;
        size_t t;
        for (t = 0; t < s->n_types; t++)
            if (strcasecmp(s->type_name[t], g) == 0)
                break;
        if (t == s->n_types) {
            snprintf(s->type_name[t], sizeof s->type_name[t], "%s", g);
            cf_gpu_perf *perf = &s->r->fitted[t];
            snprintf(perf->gpu, sizeof perf->gpu, "%s", g);
            perf->params = cf_perf_defaults(NULL);
            for (size_t p = 0; p < o->n_prior; p++)
                if (strcasecmp(o->prior[p].gpu, g) == 0) {
                    *perf = o->prior[p];
                    s->type_ok[t] = perf->params.beta_s > 0 || perf->params.n_curves > 0;
                }
            snprintf(perf->note, sizeof perf->note, "%s", s->type_ok[t] ? "prior (not refitted)" : "no profile");
            s->n_types++;
        }
        s->cand_type[c] = (int)t;
        const cf_search_candidate *k = &o->candidates[c];
        if (k->nodes < 1 || k->gpus_per_node < 1 || k->local_batch < 1 || !(k->usd_per_node_hr > 0) ||
            !cf_search_within_limits(o->constraints, k->nodes, k->gpus_per_node, k->local_batch))
            s->excluded[c] = 1;
    }
    s->r->n_fitted = s->n_types;
    return CF_OK;
}

static cf_step model_step(const state *s, size_t c)
{
    const cf_search_candidate *k = &s->o->candidates[c];
    const cf_gpu_perf *perf = &s->r->fitted[s->cand_type[c]];
    cf_perf_params p = cf_gpu_perf_on_vm(perf, k->network_gbps);
    return cf_perf_predict(&p, gradient_bytes(s->o->job), k->nodes, k->gpus_per_node, k->nodes * k->gpus_per_node,
                           k->local_batch, 1);
}

/* Refits each GPU type on all its measurements so far (cf_perf_fit): the
 * single-node runs are its profile, the multi-node ones fit the network on
 * the NIC they ran on. */
static cf_status refit(state *s)
{
    cf_measurement *rows = malloc((s->n_obs ? s->n_obs : 1) * sizeof *rows);
    if (!rows)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t t = 0; t < s->n_types; t++) {
        size_t n = 0, n_single = 0;
        double nic = 0;
        for (size_t i = 0; i < s->n_obs; i++) {
            const cf_search_candidate *k = &s->o->candidates[s->obs[i]];
            if (s->cand_type[s->obs[i]] != (int)t)
                continue;
            cf_measurement *m = &rows[n++];
            memset(m, 0, sizeof *m);
            snprintf(m->gpu, sizeof m->gpu, "%s", k->gpu);
            m->hw_gpus_per_node = k->gpus_per_node;
            m->num_nodes = k->nodes;
            m->num_gpus = k->nodes * k->gpus_per_node;
            m->local_bsz = k->local_batch;
            m->step_time_s = s->obs_step[i];
            m->sync_time_s = -1;
            m->line = (long)i + 1;
            n_single += k->nodes == 1;
            if (k->nodes > 1 && nic <= 0)
                nic = k->network_gbps;
        }
        if (n_single == 0)
            continue;
        cf_gpu_perf *perf = &s->r->fitted[t];
        cf_perf_params out, start = perf->params;
        cf_perf_fit_report rep;
        if (cf_perf_fit(rows, n, gradient_bytes(s->o->job), nic, &start, &out, &rep) != CF_OK)
            continue; /* keep the previous parameters */
        if (!rep.fitted_inter) {
            /* no multi-node run yet: the prior's network, if it had one */
            out.inter_gbps = start.inter_gbps;
            out.hide = start.hide;
            out.overhead_s = start.overhead_s;
            out.two_vm_exponent = start.two_vm_exponent;
            out.sigma_fit = start.sigma_fit;
            out.max_nodes_measured = start.max_nodes_measured;
            out.max_node_gpus_measured = start.max_node_gpus_measured;
            out.network_provenance = start.network_provenance;
        } else {
            perf->reference_network_gbps = nic;
        }
        out.max_local_batch = perf->params.max_local_batch;
        out.memory_provenance = perf->params.memory_provenance;
        perf->params = out;
        s->type_ok[t] = 1;
        snprintf(perf->note, sizeof perf->note,
                 "refitted to %zu search measurements (%zu single-GPU, %zu multi-GPU, %zu multi-node), rms error %.1f%%",
                 rep.n_rows, rep.n_single_gpu, rep.n_multi_gpu_node, rep.n_multi_node, 100 * rep.rel_rmse);
    }
    free(rows);
    cf_error_clear();
    return CF_OK;
}

/* Model refit (not for plain BO), prior means, GP posterior, estimates. */
static cf_status update(state *s)
{
    cf_search_result *r = s->r;
    int bo = s->o->method == CF_SEARCH_PLAIN_BO;
    if (!bo) {
        cf_status st = refit(s);
        if (st != CF_OK)
            return st;
    }
    double mean_log = 0;
    for (size_t i = 0; i < s->n_obs; i++)
        mean_log += log(s->obs_step[i]) / (double)s->n_obs;
    for (size_t c = 0; c < s->n; c++) {
        if (!bo && !s->type_ok[s->cand_type[c]])
            s->excluded[c] = 1;
        if (bo) {
            s->model_s[c] = exp(mean_log);
        } else if (s->excluded[c]) {
            s->model_s[c] = NAN;
        } else {
            cf_step st = model_step(s, c);
            s->model_s[c] = st.step_s;
            s->model_sd[c] = st.sigma;
            /* The error model's prior is the step-time model's own
             * interval, split as the model splits it: the profile's
             * scatter is local to a configuration (the nugget), the rest
             * (network, GPU counts not profiled, carry-over) is smooth
             * across configurations. */
            s->gp.nugget_sd[c] = st.sigma_noise;
            s->gp.prior_sd[c] = sqrt(fmax(0.0, st.sigma * st.sigma - st.sigma_noise * st.sigma_noise));
        }
    }
    double *y = malloc((s->n_obs ? s->n_obs : 1) * sizeof *y);
    if (!y)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < s->n_obs; i++)
        y[i] = log(s->obs_step[i] / s->model_s[s->obs[i]]);
    cf_status st = CF_OK;
    if (s->o->method == CF_SEARCH_MODEL_ONLY) {
        for (size_t c = 0; c < s->n; c++) {
            s->mu[c] = 0;
            r->est_sd[c] = hypot(s->gp.prior_sd[c], s->gp.nugget_sd[c]);
        }
    } else {
        st = cf_gp_posterior(&s->gp, s->obs, y, s->n_obs, s->mu, r->est_sd);
    }
    free(y);
    for (size_t c = 0; c < s->n; c++)
        r->est_step_s[c] = usable(s, c) ? s->model_s[c] * exp(s->mu[c]) : NAN;
    return st;
}

/* ---- decisions ------------------------------------------------------------------ */

/* Time, cost and objective of candidate c at z posterior sds. */
static size_t times_measured(const state *s, size_t c)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_obs; i++)
        n += s->obs[i] == c;
    return n;
}

static double value_at(const state *s, size_t c, double z, int *feasible, double slack_sds)
{
    double sd = s->r->est_sd[c], step = s->r->est_step_s[c] * exp(z * sd), h, u;
    cf_search_job(s->o, &s->o->candidates[c], step, &h, &u);
    if (feasible) {
        /* The safety margin: the constraints must hold at the upper end.
         * The estimate is never surer than its measurements: noise/√n. */
        double floor_sd = s->o->noise_sd / sqrt(fmax(1.0, (double)times_measured(s, c)));
        double margin = exp(slack_sds * (sd > floor_sd ? sd : floor_sd));
        double hs, us;
        cf_search_job(s->o, &s->o->candidates[c], step * margin, &hs, &us);
        *feasible = cf_search_feasible(s->o, hs, us, 0);
    }
    return cf_search_objective(s->o, h, u);
}

/* The best candidate by the objective (at its estimate) among those that
 * meet the constraints with `safety_sds` of margin. measured_only: among the
 * measured ones; remeasure: among the measured ones that meet them
 * REMEASURE_SDS below their estimate, no margin (worth measuring again). */
static long select_best(const state *s, double safety_sds, int measured_only, int remeasure)
{
    long best = -1;
    double best_v = INFINITY;
    for (size_t c = 0; c < s->n; c++) {
        if (!usable(s, c) || !isfinite(s->r->est_step_s[c]) || ((measured_only || remeasure) && !s->r->measured[c]))
            continue;
        int ok;
        double v = value_at(s, c, 0, &ok, safety_sds);
        if (remeasure)
            value_at(s, c, -REMEASURE_SDS, &ok, 0);
        if (ok && (v < best_v || (v == best_v && s->r->measured[c] && !s->r->measured[best]))) {
            best_v = v;
            best = (long)c;
        }
    }
    return best;
}

double cf_expected_improvement(double (*value)(void *ctx, double z, int *ok), void *ctx, double v_best)
{
    double sum = 0, wsum = 0;
    for (int i = -6; i <= 6; i++) {
        double z = 0.5 * i, w = exp(-0.5 * z * z);
        int ok;
        double v = value(ctx, z, &ok);
        wsum += w;
        if (!ok)
            continue;
        sum += w * (isfinite(v_best) ? (v < v_best ? v_best - v : 0) : 1.0);
    }
    return sum / wsum;
}

typedef struct {
    const state *s;
    size_t c;
} candidate_at;

static double candidate_value(void *ctx, double z, int *ok)
{
    const candidate_at *a = ctx;
    return value_at(a->s, a->c, z, ok, 0);
}

/* Expected improvement of probing candidate c over `v_best`. */
static double expected_improvement(const state *s, size_t c, double v_best)
{
    candidate_at a = {s, c};
    return cf_expected_improvement(candidate_value, &a, v_best);
}

/* ---- runs ----------------------------------------------------------------------- */

static cf_status add_obs(state *s, size_t c, double step_s)
{
    size_t *obs = realloc(s->obs, (s->n_obs + 1) * sizeof *obs);
    if (obs)
        s->obs = obs;
    double *st = realloc(s->obs_step, (s->n_obs + 1) * sizeof *st);
    if (st)
        s->obs_step = st;
    if (!obs || !st)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    s->obs[s->n_obs] = c;
    s->obs_step[s->n_obs++] = step_s;
    return CF_OK;
}

/* For the progress display: the light profiles planned (with their 2-node
 * probes: profile_type), then at most max_probes probes. */
static double runs_at_most(const state *s)
{
    size_t planned = 0;
    for (size_t t = 0; t < s->n_types && s->o->method != CF_SEARCH_PLAIN_BO; t++) {
        size_t pick[CF_SEARCH_PROFILE_MAX_RUNS], n_pick = 0, probe[2], n_probe = 0;
        if (cf_search_light_profile(s->o->candidates, s->n, s->type_name[t], s->excluded, pick, &n_pick) == CF_OK)
            planned += n_pick;
        if (cf_search_two_node_probe(s->o->candidates, s->n, s->type_name[t], s->excluded, probe, &n_probe) == CF_OK)
            planned += n_probe;
    }
    /* the model alone runs no probes (docs/search.md) */
    return (double)(planned + (s->o->method == CF_SEARCH_MODEL_ONLY ? 0 : (size_t)s->o->max_probes));
}

/* One run with one retry; a twice-failed configuration is marked failed. */
static cf_status run_one(state *s, size_t c, cf_search_run_kind kind, int steps)
{
    cf_search_result *r = s->r;
    if (s->o->progress) {
        const cf_search_candidate *k = &s->o->candidates[c];
        char what[160];
        snprintf(what, sizeof what, "%s %d × %d %s, batch %d", kind == CF_RUN_PROFILE ? "profile" : "probe", k->nodes,
                 k->gpus_per_node, k->gpu, k->local_batch);
        s->o->progress(s->o->progress_ctx, (double)r->n_runs, fmax(runs_at_most(s), (double)r->n_runs + 1), "runs",
                       what);
    }
    cf_search_step *runs = realloc(r->runs, (r->n_runs + 1) * sizeof *runs);
    if (!runs)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    r->runs = runs;
    cf_search_step *run = &runs[r->n_runs++];
    memset(run, 0, sizeof *run);
    run->candidate = c;
    run->kind = kind;
    run->steps = steps;
    run->predicted_step_s = r->est_step_s[c];
    run->predicted_sd = r->est_sd[c];
    run->measured_step_s = NAN;
    const cf_search_candidate *k = &s->o->candidates[c];
    double step_s = NAN;
    for (run->attempts = 1; run->attempts <= 2; run->attempts++) {
        cf_error_clear();
        double t = NAN;
        cf_status st = s->runner->probe(s->runner->ctx, k, steps, &t);
        if (st == CF_OK && t > 0 && isfinite(t)) {
            step_s = t;
            break;
        }
        /* A failed run (crash, exit status, timeout, malformed output) is
         * retried, then marks the configuration failed; anything else — a
         * stop signal, a runner that cannot be started, no memory — ends
         * the search with that error, and nothing is stored. */
        if (st != CF_OK && st != CF_ERR_UNAVAILABLE && st != CF_ERR_INVALID)
            return st;
        s->last_failure = st == CF_OK ? CF_ERR_UNAVAILABLE : st;
        /* stored (search_probes.error) and shown: escaped and cut at a
         * character boundary (the message quotes the runner's output: a
         * byte that is not UTF-8, or a cut inside 'é', made the row
         * unreadable to strict UTF-8 readers, and PostgreSQL refuse it) */
        cf_text_fit_clip(st == CF_OK ? "the runner reported no valid step time" : cf_error_message(),
                         sizeof run->error - 1, run->error, sizeof run->error);
    }
    if (run->attempts > 2)
        run->attempts = 2;
    if (kind == CF_RUN_PROFILE)
        r->n_profile_runs++;
    else
        r->n_probes++;
    if (!isfinite(step_s)) {
        run->failed = 1;
        r->failed[c] = 1;
        r->n_failed++;
        return CF_OK;
    }
    run->measured_step_s = step_s;
    run->cost_usd = (steps * step_s + s->o->probe_startup_s) / 3600.0 * k->nodes * k->usd_per_node_hr;
    double m = (double)k->nodes * k->gpus_per_node * k->local_batch;
    run->progress = steps * m / cf_samples_to_target(s->o->noise, s->o->job->total_samples, m);
    if (kind == CF_RUN_PROFILE)
        r->profile_cost_usd += run->cost_usd;
    else
        r->probe_cost_usd += run->cost_usd;
    r->measured[c] = 1;
    return add_obs(s, c, step_s);
}

/* Light profile of one GPU type: 3 batches on 1 GPU, 2 on a full node
 * (cf_search_light_profile, shared with `cloudfit profile --runner`). */
static cf_status profile_type(state *s, size_t t)
{
    size_t pick[CF_SEARCH_PROFILE_MAX_RUNS], n_pick = 0;
    cf_status st = cf_search_light_profile(s->o->candidates, s->n, s->type_name[t], s->excluded, pick, &n_pick);
    if (st == CF_OK && n_pick == 0 && !s->type_ok[t])
        return CF_OK; /* no single-node configuration: nothing to fit a model to, so no probe to pay for */
    for (size_t i = 0; i < n_pick && st == CF_OK; i++)
        st = run_one(s, pick[i], CF_RUN_PROFILE, s->o->profile_steps);
    /* the 2-node × 1-GPU probe (the input the model's network term and
     * its interval are validated with: docs/model.md, protocol a) */
    size_t probe[2], n_probe = 0;
    if (st == CF_OK)
        st = cf_search_two_node_probe(s->o->candidates, s->n, s->type_name[t], s->excluded, probe, &n_probe);
    for (size_t i = 0; i < n_probe && st == CF_OK; i++)
        st = run_one(s, probe[i], CF_RUN_PROFILE, s->o->profile_steps);
    return st;
}

/* After the light profiles: some GPU type has a model (a profile, or a
 * prior) — else every candidate would be left out and the search would
 * call the limits infeasible, which is not the reason. */
static cf_status check_modelled(const state *s)
{
    for (size_t t = 0; t < s->n_types; t++)
        if (s->type_ok[t])
            return CF_OK;
    if (s->r->n_runs > 0)
        return CF_OK; /* a light profile ran: its failures, if all failed, are said as such */
    size_t n_usable = 0;
    for (size_t c = 0; c < s->n; c++)
        n_usable += usable(s, c);
    if (n_usable == 0)
        return CF_OK; /* the limits leave nothing: infeasible, said as such */
    char types[256] = "";
    size_t used = 0;
    for (size_t t = 0; t < s->n_types && used < sizeof types; t++)
        used += (size_t)snprintf(types + used, sizeof types - used, "%s%s", t ? ", " : "", s->type_name[t]);
    cf_error_set(CF_ERR_INVALID, "search: no GPU type can be modelled: the light profile runs on one VM, and the "
                 "runner has no single-node configuration of %s (and no profile of it is cached)", types);
    cf_error_hint("give the runner single-node configurations (a trace with 1-node rows), profile the GPU type "
                  "first ('cloudfit profile --runner'), or search without the model: --method bo");
    return CF_ERR_INVALID;
}

static cf_status random_starts(state *s)
{
    size_t n_usable = 0;
    for (size_t c = 0; c < s->n; c++)
        n_usable += usable(s, c);
    for (int i = 0; i < BO_RANDOM_STARTS && (size_t)i < n_usable && s->r->n_probes < (size_t)s->o->max_probes; i++) {
        size_t c;
        do
            c = gsl_rng_uniform_int(s->rng, s->n);
        while (!usable(s, c) || s->r->measured[c]);
        cf_status st = run_one(s, c, CF_RUN_PROBE, s->o->probe_steps);
        if (st != CF_OK)
            return st;
    }
    return CF_OK;
}

static void setup_gp(state *s)
{
    int bo = s->o->method == CF_SEARCH_PLAIN_BO;
    cf_gp *gp = &s->gp;
    gp->n = s->n;
    gp->type = s->cand_type;
    for (size_t c = 0; c < s->n; c++) {
        const cf_search_candidate *k = &s->o->candidates[c];
        double *x = &gp->x[c * CF_GP_FEATURES];
        x[0] = log2(k->nodes);
        x[1] = log2(k->gpus_per_node);
        x[2] = log2(k->local_batch);
        x[3] = k->nodes > 1;
        /* The model's error: a few % where the profile ran (one node),
         * up to ~20 % p90 across nodes (docs/model.md "How accurate it is", `cloudfit validate`). */
        gp->prior_sd[c] = bo ? 1.0 : k->nodes > 1 ? SD_MULTI_NODE : k->gpus_per_node > 1 ? SD_MULTI_GPU : SD_SINGLE;
        gp->nugget_sd[c] = bo ? 0 : k->nodes > 1 ? NUGGET_MULTI_NODE : NUGGET_SINGLE_NODE;
    }
    double len_model[CF_GP_FEATURES] = {LEN_NODES, LEN_GPUS, LEN_BATCH, 1.0}, len_bo[CF_GP_FEATURES] = {2.0, 2.0, 2.0, 1.0};
    memcpy(gp->length, bo ? len_bo : len_model, sizeof gp->length);
    gp->cross_type_corr = 0.3;
    gp->noise_var = s->o->noise_sd * s->o->noise_sd;
}

static cf_status search_loop(state *s)
{
    const cf_search_options *o = s->o;
    cf_search_result *r = s->r;
    int bo = o->method == CF_SEARCH_PLAIN_BO;
    for (;;) {
        cf_status st = update(s);
        if (st != CF_OK)
            return st;
        long best = select_best(s, o->safety_sds, bo, 0);
        if (r->n_probes >= (size_t)o->max_probes) {
            r->stop = CF_STOP_MAX_PROBES;
            return CF_OK;
        }
        if (!bo && best >= 0 && !r->measured[best]) {
            if ((st = run_one(s, (size_t)best, CF_RUN_PROBE, o->probe_steps)) != CF_OK)
                return st;
            continue;
        }
        if (!bo) {
            /* A measured configuration that beats the pick by more than the
             * margin but misses the stated confidence only by its
             * measurement noise: measure it again while enough repeats
             * (noise/√n) could make it safe within the probes left. */
            long close = select_best(s, 0, 1, 1);
            if (close >= 0 && close != best &&
                (best < 0 || value_at(s, (size_t)close, 0, NULL, 0) <
                                 value_at(s, (size_t)best, 0, NULL, 0) * (1 - o->margin))) {
                size_t n_meas = times_measured(s, (size_t)close), left = (size_t)o->max_probes - r->n_probes;
                double step = r->est_step_s[close] * exp(-REMEASURE_SDS * r->est_sd[close]);
                double h, u, hs, us;
                double sd_then = o->noise_sd / sqrt((double)(n_meas + left));
                cf_search_job(o, &o->candidates[close], step, &h, &u);
                cf_search_job(o, &o->candidates[close], step * exp(o->safety_sds * sd_then), &hs, &us);
                if (r->est_sd[close] <= 2 * o->noise_sd && cf_search_feasible(o, hs, us, 0)) {
                    if ((st = run_one(s, (size_t)close, CF_RUN_PROBE, o->probe_steps)) != CF_OK)
                        return st;
                    continue;
                }
            }
        }
        double v_best = best >= 0 ? value_at(s, (size_t)best, 0, NULL, 0) : INFINITY;
        long next = -1;
        double next_ei = 0;
        for (size_t c = 0; c < s->n; c++) {
            if (!usable(s, c) || r->measured[c])
                continue;
            if (!bo && best >= 0) {
                int ok;
                double v_low = value_at(s, c, -LCB_SDS, &ok, 0);
                if (!ok || v_low > v_best * (1 - o->margin))
                    continue; /* cannot beat the best by more than the margin */
            }
            /* With nothing that meets the limits yet, any configuration
             * that might (its expected improvement is then its chance of
             * meeting them over the posterior, ±3 sd) is worth a probe
             * before the search calls the limits infeasible. */
            double ei = expected_improvement(s, c, v_best);
            if (ei > next_ei) {
                next_ei = ei;
                next = (long)c;
            }
        }
        if (bo && best >= 0 && next_ei < o->margin * v_best)
            next = -1;
        if (next < 0) {
            r->stop = best >= 0 ? CF_STOP_MARGIN : CF_STOP_EXHAUSTED;
            return CF_OK;
        }
        if ((st = run_one(s, (size_t)next, CF_RUN_PROBE, o->probe_steps)) != CF_OK)
            return st;
    }
}

static cf_status check_options(const cf_search_options *o)
{
    if (!o->job || !o->constraints || !o->noise || (!o->candidates && o->n_candidates))
        return cf_error_set(CF_ERR_INVALID, "search: options without a job, constraints or noise model");
    if (o->n_candidates == 0) {
        cf_error_set(CF_ERR_INVALID, "search: no candidate configurations");
        cf_error_hint("allow more GPU types, clouds or nodes, or check the runner's data");
        return CF_ERR_INVALID;
    }
    if (!(o->margin >= 0 && o->margin < 1) || o->max_probes < 0 || o->probe_steps < 1 || o->profile_steps < 1 ||
        !(o->noise_sd > 0) || !(o->safety_sds >= 0) ||
        !(o->probe_startup_s >= 0 && o->probe_startup_s <= CF_SEARCH_PROBE_STARTUP_MAX_S))
        return cf_error_set(CF_ERR_INVALID, "search: an option is out of range (margin in [0,1), steps ≥ 1, noise > 0)");
    return CF_OK;
}

cf_status cf_search_run(const cf_search_options *o, const cf_search_runner *runner, cf_search_result *r)
{
    memset(r, 0, sizeof *r);
    r->chosen = -1;
    cf_status st = check_options(o);
    if (st != CF_OK)
        return st;
    state s = {.o = o, .runner = runner, .r = r, .n = o->n_candidates};
    size_t n = s.n;
    r->est_step_s = calloc(n, sizeof *r->est_step_s);
    r->est_sd = calloc(n, sizeof *r->est_sd);
    r->failed = calloc(n, 1);
    r->measured = calloc(n, 1);
    s.cand_type = calloc(n, sizeof *s.cand_type);
    s.excluded = calloc(n, 1);
    s.model_s = calloc(n, sizeof *s.model_s);
    s.model_sd = calloc(n, sizeof *s.model_sd);
    s.mu = calloc(n, sizeof *s.mu);
    s.gp.x = calloc(n * CF_GP_FEATURES, sizeof *s.gp.x);
    s.gp.prior_sd = calloc(n, sizeof *s.gp.prior_sd);
    s.gp.nugget_sd = calloc(n, sizeof *s.gp.nugget_sd);
    s.rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r->est_step_s || !r->est_sd || !r->failed || !r->measured || !s.cand_type || !s.excluded || !s.model_s || !s.model_sd ||
        !s.mu || !s.gp.x || !s.gp.prior_sd || !s.gp.nugget_sd || !s.rng) {
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
        goto done;
    }
    gsl_rng_set(s.rng, o->seed);
    for (size_t c = 0; c < n; c++)
        r->est_step_s[c] = NAN;
    if ((st = init_types(&s)) != CF_OK)
        goto done;
    setup_gp(&s);
    if (o->method == CF_SEARCH_PLAIN_BO) {
        st = random_starts(&s);
    } else {
        for (size_t t = 0; t < s.n_types && st == CF_OK; t++)
            st = profile_type(&s, t);
        if (st == CF_OK)
            st = check_modelled(&s);
    }
    if (st != CF_OK)
        goto done;
    if (o->method == CF_SEARCH_MODEL_ONLY) {
        st = update(&s);
        r->stop = CF_STOP_NO_PROBES;
    } else {
        st = search_loop(&s);
        if (st == CF_OK)
            st = update(&s);
    }
    if (st != CF_OK)
        goto done;
    /* The pick: the best that meets the constraints at the stated
     * confidence (the model alone: with the model's own interval, as
     * `recommend` holds them), measured if possible. */
    int bo = o->method == CF_SEARCH_PLAIN_BO;
    long best = select_best(&s, o->safety_sds, bo, 0);
    if (best >= 0 && !r->measured[best] && o->method == CF_SEARCH_CLOUDFIT) {
        long measured = select_best(&s, o->safety_sds, 1, 0);
        if (measured >= 0)
            best = measured;
    }
    r->chosen = best;
    if (best < 0) {
        size_t measured = 0;
        for (size_t c = 0; c < n; c++)
            measured += r->measured[c] != 0;
        if (measured == 0 && r->n_runs > 0) {
            /* Not the constraints' fault: nothing could be measured. The
             * exit code is that of the failure quoted, as `profile
             * --runner` exits with its failed run's: 3 for output that
             * breaks the protocol, 6 for a run that crashed, exited
             * non-zero or timed out (docs/exec-protocol.md). */
            st = cf_error_set(s.last_failure ? s.last_failure : CF_ERR_UNAVAILABLE, "search: every run failed (%zu runs, none measured); the last: %s",
                              r->n_runs, r->runs[r->n_runs - 1].error);
            cf_error_hint("check the runner on its own first; its protocol is in docs/exec-protocol.md");
        } else {
            st = cf_error_set(CF_ERR_INFEASIBLE, "search: no configuration meets the deadline and budget");
        }
        goto done;
    }
    int ok;
    value_at(&s, (size_t)best, 0, &ok, o->safety_sds);
    r->chosen_safe = ok;
    r->chosen_measured = r->measured[best];
    cf_search_job(o, &o->candidates[best], r->est_step_s[best], &r->chosen_hours, &r->chosen_usd);
    r->overhead_usd = cf_search_overhead_usd(o, r, (size_t)best, r->est_step_s[best]);
done:
    free(s.type_name);
    free(s.type_ok);
    free(s.cand_type);
    free(s.excluded);
    free(s.model_s);
    free(s.model_sd);
    free(s.mu);
    free(s.obs);
    free(s.obs_step);
    free(s.gp.x);
    free(s.gp.prior_sd);
    free(s.gp.nugget_sd);
    if (s.rng)
        gsl_rng_free(s.rng);
    return st;
}

void cf_search_result_free(cf_search_result *r)
{
    free(r->runs);
    free(r->est_step_s);
    free(r->est_sd);
    free(r->failed);
    free(r->measured);
    free(r->fitted);
    memset(r, 0, sizeof *r);
    r->chosen = -1;
}
