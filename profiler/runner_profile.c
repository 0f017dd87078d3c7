/* A profile measured through a runner (`cloudfit profile --runner`,
 * docs/profiler.md "Profiling through a runner"): the light profile's runs
 * and the 2-node × 1-GPU probe, each retried once, become a cf_profile
 * whose runs[] are rows of the measurements CSV (placements 1, full VM,
 * 11) and whose points[] are the 1-GPU runs with their t_c(m) fit.
 *
 * A failed light-profile run fails the profile (nothing is returned): the
 * profile is all or nothing. A probe that fails is not fatal: the
 * single-node profile is complete without it, and the probe status says
 * why, so that `recommend` falls back to the default bandwidth. A stop
 * signal during any run returns nothing (CF_ERR_INTERRUPTED). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/profiler/runners.h"
#include "cloudfit/common/escape.h"

static void report(const cf_runner_profile_plan *plan, int done, int total, const char *what)
{
    if (plan->progress)
        plan->progress(plan->progress_ctx, done, total, what);
}

/* One run with one retry, as the search does; the failed first attempt is
 * reported through the progress callback. */
static cf_status run_once_or_twice(const cf_runner_profile_plan *plan, const cf_search_runner *r,
                                   const cf_search_candidate *c, int steps, int done, const char *what, double *out)
{
    cf_status st = r->probe(r->ctx, c, steps, out);
    if (st != CF_OK && (st == CF_ERR_UNAVAILABLE || st == CF_ERR_INVALID)) { /* else: not worth a retry */
        char note[400];
        snprintf(note, sizeof note, "%s: run failed (%s); retrying once", what, cf_error_message());
        cf_error_clear();
        report(plan, done, (int)(plan->n_light + plan->n_probe), note);
        st = r->probe(r->ctx, c, steps, out);
    }
    if (st == CF_OK && !(*out > 0 && isfinite(*out)))
        st = cf_error_set(CF_ERR_UNAVAILABLE, "the runner reported step time %g s", *out);
    return st;
}

/* The precision and memory format a run reported stay the same over the
 * profile's runs, as over a sweep's (profiler/sweep.c): one profile, one
 * way of training; recommend moves the step to the spec's precision and
 * compares the format with the spec's. A run that does not say keeps what
 * the others said. */
static cf_status keep_setting(char *kept, size_t n, const char *reported, const char *what)
{
    if (!reported || !reported[0])
        return CF_OK;
    if (!kept[0])
        snprintf(kept, n, "%s", reported);
    else if (strcmp(kept, reported) != 0)
        return cf_error_set(CF_ERR_INVALID, "the %s changed between runs ('%s', then '%s')", what, kept, reported);
    return CF_OK;
}

static cf_status note_training(const cf_search_runner *r, cf_profile *p)
{
    const char *precision = "", *memory_format = "";
    if (!r->trained)
        return CF_OK;
    r->trained(r->ctx, &precision, &memory_format);
    cf_status st = keep_setting(p->precision, sizeof p->precision, precision, "precision");
    return st == CF_OK ? keep_setting(p->memory_format, sizeof p->memory_format, memory_format, "memory format") : st;
}

static void add_run(cf_profile *p, const cf_search_candidate *c, double step_s, const char *kind)
{
    cf_profile_run_row *r = &p->runs[p->n_runs++];
    r->nodes = c->nodes;
    r->gpus_per_node = c->gpus_per_node;
    r->hw_gpus_per_node = c->vm && c->vm->gpu_count > 0 ? c->vm->gpu_count : c->gpus_per_node;
    r->local_batch = c->local_batch;
    r->step_time_s = step_s;
    r->network_gbps = c->network_gbps;
    snprintf(r->cloud, sizeof r->cloud, "%s", c->vm ? c->vm->cloud : "");
    snprintf(r->instance_type, sizeof r->instance_type, "%s", c->vm ? c->vm->instance_type : "");
    snprintf(r->kind, sizeof r->kind, "%s", kind);
}

static void shape_text(const cf_search_candidate *c, char *buf, size_t n)
{
    snprintf(buf, n, "%d node%s × %d GPU%s, batch %d%s%s", c->nodes, c->nodes == 1 ? "" : "s", c->gpus_per_node,
             c->gpus_per_node == 1 ? "" : "s", c->local_batch, c->vm ? " on " : "", c->vm ? c->vm->instance_type : "");
}

static cf_status run_light(const cf_runner_profile_plan *plan, const cf_search_runner *runner, cf_profile *p)
{
    int total = (int)(plan->n_light + plan->n_probe);
    char what[200];
    for (size_t i = 0; i < plan->n_light; i++) {
        const cf_search_candidate *c = &plan->light[i];
        double t = 0;
        shape_text(c, what, sizeof what);
        report(plan, (int)i, total, what);
        cf_status st = run_once_or_twice(plan, runner, c, plan->profile_steps, (int)i, what, &t);
        if (st == CF_OK)
            st = note_training(runner, p);
        if (st != CF_OK) {
            cf_error_prefix("light profile run %s", what);
            return st;
        }
        add_run(p, c, t, "profile");
        if (c->gpus_per_node == 1 && p->n_points < CF_PROFILE_MAX_POINTS)
            p->points[p->n_points++] = (cf_profile_point){.local_batch = c->local_batch, .step_time_s = t,
                                                          .min_s = t, .max_s = t, .n_timed = plan->profile_steps};
    }
    return CF_OK;
}

/* A probe that fails is marked failed; a stop signal (or no memory) is no
 * probe failure: it is returned, and the profile with it (nothing stored). */
static cf_status run_probe(const cf_runner_profile_plan *plan, const cf_search_runner *runner, cf_profile *p)
{
    if (plan->probe_skipped_why || plan->n_probe == 0) {
        snprintf(p->probe_status, sizeof p->probe_status, "skipped");
        if (plan->probe_skipped_why)
            snprintf(p->probe_note, sizeof p->probe_note, "%s", plan->probe_skipped_why);
        else
            snprintf(p->probe_note, sizeof p->probe_note,
                     "no 2-node × 1-GPU configuration of %s within the spec's limits", plan->gpu->model);
        return CF_OK;
    }
    snprintf(p->probe_status, sizeof p->probe_status, "measured");
    int total = (int)(plan->n_light + plan->n_probe);
    char what[200];
    for (size_t i = 0; i < plan->n_probe; i++) {
        const cf_search_candidate *c = &plan->probe[i];
        double t = 0;
        shape_text(c, what, sizeof what);
        char label[240];
        snprintf(label, sizeof label, "probe: %s", what); /* what names the shape: "4 nodes × 4 GPUs, batch 20 ..." */
        report(plan, (int)(plan->n_light + i), total, label);
        cf_status st = run_once_or_twice(plan, runner, c, plan->probe_steps, (int)(plan->n_light + i), label, &t);
        if (st == CF_OK)
            st = note_training(runner, p);
        if (st == CF_ERR_INTERRUPTED || st == CF_ERR_NOMEM) {
            cf_error_prefix("%s", label);
            return st;
        }
        if (st != CF_OK) {
            snprintf(p->probe_status, sizeof p->probe_status, "failed");
            /* stored with the profile's JSON: escaped and cut at a
             * character boundary (the runner's message quotes its output,
             * raw; a byte that is not UTF-8, or a cut inside 'é', made
             * the stored profile unreadable) */
            char note[1024];
            snprintf(note, sizeof note, "%s: %s", what, cf_error_message());
            cf_text_fit_clip(note, sizeof p->probe_note - 1, p->probe_note, sizeof p->probe_note);
            cf_error_clear();
            return CF_OK;
        }
        add_run(p, c, t, "probe");
    }
    const cf_search_candidate *shape = &plan->probe[0];
    int n_probe = 0;
    for (int i = 0; i < p->n_runs; i++)
        n_probe += !strcmp(p->runs[i].kind, "probe");
    const char *batches = n_probe == 1 ? "batch" : "batches"; /* "at per-GPU batches 20, 200" */
    int len = shape->nodes == 2 && shape->gpus_per_node == 1
                  ? snprintf(p->probe_note, sizeof p->probe_note, "2 nodes × 1 GPU (placement 11) at per-GPU %s",
                             batches)
                  : snprintf(p->probe_note, sizeof p->probe_note, "%d nodes × %d GPU%s at per-GPU %s", shape->nodes,
                             shape->gpus_per_node, shape->gpus_per_node == 1 ? "" : "s", batches);
    int shown = 0;
    for (int i = 0; i < p->n_runs; i++)
        if (!strcmp(p->runs[i].kind, "probe") && len > 0 && (size_t)len < sizeof p->probe_note)
            len += snprintf(p->probe_note + len, sizeof p->probe_note - (size_t)len, "%s %d", shown++ ? "," : "",
                            p->runs[i].local_batch);
    return CF_OK;
}

static int by_batch(const void *a, const void *b)
{
    return ((const cf_profile_point *)a)->local_batch - ((const cf_profile_point *)b)->local_batch;
}

static void finish(const cf_runner_profile_plan *plan, cf_profile *p)
{
    snprintf(p->spec_name, sizeof p->spec_name, "%s", plan->spec_name ? plan->spec_name : "");
    snprintf(p->spec_key, sizeof p->spec_key, "%s", plan->spec_key ? plan->spec_key : "");
    snprintf(p->backend, sizeof p->backend, "%s", plan->backend);
    snprintf(p->device.name, sizeof p->device.name, "%s", plan->gpu->model);
    p->device.memory_gib = plan->gpu->memory_gib;
    p->device.gpus = 1;
    p->device.is_gpu = 1;
    cf_now_iso8601(p->created_at, sizeof p->created_at);
    p->steps = plan->profile_steps;
    p->warmup_steps = plan->warmup_steps;
    qsort(p->points, (size_t)p->n_points, sizeof *p->points, by_batch);
    for (int i = 0; i < p->n_runs; i++)
        if (p->runs[i].local_batch > p->max_local_batch && p->runs[i].nodes == 1)
            p->max_local_batch = p->runs[i].local_batch;
    if (cf_profile_fit(p) != CF_OK)
        cf_error_clear(); /* has_fit stays 0; the output says so */
    snprintf(p->noise_error, sizeof p->noise_error,
             "a runner profile measures step times only; 'cloudfit profile --backend cpu|cuda|exec' measures it");
    const char *r = plan->runner_text ? plan->runner_text : "";
    cf_text_clip(r, 153, p->runner, sizeof p->runner); /* 150 bytes and "…", at a character boundary */
}

cf_status cf_profile_through_runner(const cf_runner_profile_plan *plan, const cf_search_runner *runner,
                                    cf_profile *out)
{
    memset(out, 0, sizeof *out);
    size_t n_single = 0;
    for (size_t i = 0; i < plan->n_light; i++)
        n_single += plan->light[i].gpus_per_node == 1;
    if (n_single < 2)
        return cf_error_set(CF_ERR_INVALID, "fewer than 2 single-GPU batch sizes of %s to profile", plan->gpu->model);
    if (plan->n_light + plan->n_probe > CF_PROFILE_MAX_RUNS)
        return cf_error_set(CF_ERR_INVALID, "a runner profile holds at most %d runs, the plan has %zu",
                            CF_PROFILE_MAX_RUNS, plan->n_light + plan->n_probe);
    cf_status st = run_light(plan, runner, out);
    if (st != CF_OK) {
        memset(out, 0, sizeof *out); /* all or nothing */
        return st;
    }
    st = run_probe(plan, runner, out);
    if (st != CF_OK) {
        memset(out, 0, sizeof *out); /* a stop signal: nothing */
        return st;
    }
    finish(plan, out);
    report(plan, (int)(plan->n_light + plan->n_probe), (int)(plan->n_light + plan->n_probe), "done");
    return CF_OK;
}
