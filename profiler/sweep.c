/* The profile: batch-size sweep, memory ceiling, linear fit and the noise
 * run, on any probe backend (include/cloudfit/profiler.h). */
#include "cloudfit/profiler.h"
#include "cloudfit/common/escape.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cloudfit/profiler/gns.h"

#define DEFAULT_WARMUP_STEPS 3
#define DEFAULT_NOISE_MICRO 8
#define DEFAULT_NOISE_STEPS 200
#define CEILING_BISECTIONS 4

static const int default_batches[] = {8, 16, 32, 64, 128, 256};

void cf_profile_options_init(cf_profile_options *o)
{
    memset(o, 0, sizeof *o);
    o->warmup_steps = DEFAULT_WARMUP_STEPS;
    o->noise_micro_batches = DEFAULT_NOISE_MICRO;
    o->noise_steps = DEFAULT_NOISE_STEPS;
    o->seed = 1;
    o->refine_ceiling = 1;
    o->probe.timeout_s = CF_PROBE_TIMEOUT_S_DEFAULT;
}

void cf_probe_result_free(cf_probe_result *r)
{
    free(r->steps);
    memset(r, 0, sizeof *r);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cf_median(const double *values, int n)
{
    if (n <= 0)
        return NAN;
    double *copy = malloc((size_t)n * sizeof *copy);
    if (!copy)
        return NAN;
    memcpy(copy, values, (size_t)n * sizeof *copy);
    qsort(copy, (size_t)n, sizeof *copy, cmp_double);
    double m = n % 2 ? copy[n / 2] : copy[n / 2 - 1] + 0.5 * (copy[n / 2] - copy[n / 2 - 1]); /* no overflow */
    free(copy);
    return m;
}

typedef struct {
    const cf_profile_options *o;
    int done, total;
} progress_state;

static void progress(progress_state *p, const char *fmt, ...) CF_PRINTF(2, 3);
static void progress(progress_state *p, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (p->o->progress)
        p->o->progress(p->o->progress_ctx, p->done, p->total, what);
}

/* One reported setting that must stay the same across runs: the first run
 * that reports it sets it. */
static cf_status same_setting(char *kept, size_t n, const char *reported, const char *what, const char *backend)
{
    if (!reported[0])
        return CF_OK;
    if (!kept[0]) {
        snprintf(kept, n, "%s", reported);
        return CF_OK;
    }
    if (strcmp(kept, reported) != 0)
        return cf_error_set(CF_ERR_INVALID, "%s backend: the %s changed between runs ('%s', then '%s')", backend, what,
                            kept, reported);
    return CF_OK;
}

const char *cf_probe_device_difference(const cf_probe_device *kept, const cf_probe_device *reported)
{
    if (strcmp(kept->name, reported->name) != 0)
        return "name";
    if (kept->gpus != reported->gpus)
        return "gpus";
    if (!kept->is_gpu != !reported->is_gpu)
        return "type";
    if (kept->memory_gib > 0 && reported->memory_gib > 0 && kept->memory_gib != reported->memory_gib)
        return "memory_gib";
    return NULL;
}

/* A device field as the protocol spells it ('device' event, docs/exec-protocol.md). */
static void device_field_text(const cf_probe_device *d, const char *field, char *out, size_t n)
{
    if (strcmp(field, "name") == 0)
        snprintf(out, n, "'%s'", d->name);
    else if (strcmp(field, "gpus") == 0)
        snprintf(out, n, "%d", d->gpus);
    else if (strcmp(field, "type") == 0)
        snprintf(out, n, "\"%s\"", d->is_gpu ? "gpu" : "cpu");
    else
        snprintf(out, n, "%g", d->memory_gib);
}

/* The device, precision and memory format must stay the same across runs
 * (one profile = one device, one way of training). */
static cf_status note_device(cf_profile *out, const cf_probe_result *r, const char *backend)
{
    cf_status st = same_setting(out->precision, sizeof out->precision, r->precision, "precision", backend);
    if (st == CF_OK)
        st = same_setting(out->memory_format, sizeof out->memory_format, r->memory_format, "memory format", backend);
    if (st != CF_OK || !r->has_device)
        return st;
    if (!out->device.name[0]) {
        out->device = r->device;
        return CF_OK;
    }
    const char *field = cf_probe_device_difference(&out->device, &r->device);
    if (field) {
        char was[160], now[160];
        device_field_text(&out->device, field, was, sizeof was);
        device_field_text(&r->device, field, now, sizeof now);
        if (strcmp(field, "name") == 0)
            return cf_error_set(CF_ERR_INVALID, "%s backend: the device changed between runs (%s, then %s)", backend,
                                was, now);
        return cf_error_set(CF_ERR_INVALID, "%s backend: the device '%s' reported another \"%s\" in a later run (%s, then %s)",
                            backend, out->device.name, field, was, now);
    }
    if (!(out->device.memory_gib > 0))
        out->device.memory_gib = r->device.memory_gib;
    return CF_OK;
}

static cf_status timed_run(const cf_probe_backend *be, cf_probe *probe, const cf_profile_options *o, int batch,
                           int steps, int warmup, cf_profile *out, int *oom, cf_profile_point *point,
                           char *oom_reason, size_t reason_n, int *oom_model)
{
    cf_probe_run run = {batch, 1, steps, warmup, o->seed, 0};
    cf_probe_result res;
    memset(&res, 0, sizeof res);
    cf_status st = be->run(probe, &run, &res);
    if (st != CF_OK) {
        cf_error_prefix("%s backend, local batch %d", be->name, batch);
        return st;
    }
    if ((st = note_device(out, &res, be->name)) != CF_OK) {
        cf_probe_result_free(&res);
        return st;
    }
    *oom = res.oom;
    if (res.oom) {
        if (oom_reason)
            snprintf(oom_reason, reason_n, "%s", res.oom_reason);
        if (oom_model)
            *oom_model = res.oom_model;
        cf_probe_result_free(&res);
        return CF_OK;
    }
    int n_timed = res.n_steps - warmup;
    if (n_timed < 1) {
        cf_probe_result_free(&res);
        return cf_error_set(CF_ERR_INVALID, "%s backend, local batch %d: %d step(s) reported, expected %d warm-up + %d",
                            be->name, batch, res.n_steps, warmup, steps);
    }
    double *times = malloc((size_t)n_timed * sizeof *times);
    if (!times) {
        cf_probe_result_free(&res);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    memset(point, 0, sizeof *point);
    point->local_batch = batch;
    point->min_s = INFINITY;
    for (int i = 0; i < n_timed; i++) {
        times[i] = res.steps[warmup + i].time_s;
        point->min_s = fmin(point->min_s, times[i]);
        point->max_s = fmax(point->max_s, times[i]);
    }
    point->step_time_s = cf_median(times, n_timed);
    point->n_timed = n_timed;
    free(times);
    cf_probe_result_free(&res);
    return CF_OK;
}

/* The sweep in ascending order until the first batch that does not fit.
 * `batches_key` says where the batches came from, for the message when
 * not even the first fits. */
static cf_status sweep(const cf_probe_backend *be, cf_probe *probe, const cf_profile_options *o, const int *batches,
                       int n_batches, const char *batches_key, cf_profile *out, progress_state *ps)
{
    char first_oom[256] = "";
    int first_oom_model = 0; /* the first batch failed because the model state alone does not fit */
    for (int i = 0; i < n_batches; i++) {
        progress(ps, "local batch %d: %d timed steps", batches[i], out->steps);
        int oom = 0;
        cf_profile_point point;
        cf_status st = timed_run(be, probe, o, batches[i], out->steps, out->warmup_steps, out, &oom, &point,
                                 i == 0 ? first_oom : NULL, sizeof first_oom, i == 0 ? &first_oom_model : NULL);
        ps->done++;
        if (st != CF_OK)
            return st;
        if (oom) {
            out->oom_batch = batches[i];
            out->ceiling_found = 1;
            ps->total -= n_batches - i - 1;
            break;
        }
        out->points[out->n_points++] = point;
        out->max_local_batch = batches[i];
    }
    if (out->n_points == 0) {
        /* Say why (the backend's own words: what was needed, the limit and
         * where it comes from) and which keys decide it. */
        cf_status st = cf_error_set(CF_ERR_INFEASIBLE, "%s backend: not even a local batch of %d (%s) fits on %s%s%s",
                                    be->name, batches[0], batches_key,
                                    out->device.name[0] ? out->device.name : "the device", first_oom[0] ? ": " : "",
                                    first_oom);
        if (first_oom_model)
            cf_error_hint("the model alone does not fit: lower the widths in model.architecture.layers%s",
                          strcmp(be->name, "cpu") == 0 ? ", or raise CLOUDFIT_CPU_MEMORY_LIMIT_MIB" : "");
        else
            cf_error_hint("lower %s or the widths in model.architecture.layers%s", batches_key,
                          strcmp(be->name, "cpu") == 0 ? ", or raise CLOUDFIT_CPU_MEMORY_LIMIT_MIB" : "");
        return st;
    }
    /* Bisect between the largest batch that fit and the first that did not. */
    for (int k = 0; o->refine_ceiling && out->oom_batch && k < CEILING_BISECTIONS; k++) {
        int lo = out->max_local_batch, hi = out->oom_batch;
        if (hi - lo <= (lo / 8 > 1 ? lo / 8 : 1))
            break;
        int mid = lo + (hi - lo) / 2;
        ps->total++;
        progress(ps, "memory ceiling: trying local batch %d", mid);
        int oom = 0;
        cf_profile_point point;
        cf_status st = timed_run(be, probe, o, mid, 1, 1, out, &oom, &point, NULL, 0, NULL);
        ps->done++;
        if (st != CF_OK)
            return st;
        if (oom)
            out->oom_batch = mid;
        else
            out->max_local_batch = mid;
    }
    return CF_OK;
}

/* Every point of the estimator's trace is kept when there are few; else an
 * even subsample that always includes the last point. */
static void copy_trace(const cf_gns *gns, cf_profile *out)
{
    size_t n = gns->n_points, want = n < CF_PROFILE_MAX_TRACE ? n : CF_PROFILE_MAX_TRACE;
    out->n_noise_trace = 0;
    for (size_t j = 0; j < want; j++) {
        size_t i = want == 1 ? n - 1 : (size_t)((double)j * (double)(n - 1) / (double)(want - 1) + 0.5);
        const cf_gns_point *p = &gns->points[i];
        if (!isfinite(p->b_noise) || p->b_noise <= 0)
            continue;
        if (out->n_noise_trace > 0 && out->noise_trace[out->n_noise_trace - 1].samples_seen >= p->samples)
            continue;
        out->noise_trace[out->n_noise_trace++] = (cf_noise_sample){p->samples, p->b_noise};
    }
}

/* The estimator's message without its own "noise scale: " (the profile
 * shows the reason under that heading already). */
static const char *gns_reason(void)
{
    const char *m = cf_error_message();
    static const char prefix[] = "noise scale: ";
    return strncmp(m, prefix, sizeof prefix - 1) == 0 ? m + sizeof prefix - 1 : m;
}

/* The noise run: the recipe's batch M0 split into k micro-batches, trained
 * from the same initial weights for noise_steps steps. A run that cannot
 * resolve the noise scale leaves has_noise = 0 with the reason; a run that
 * fails returns its error with noise_failed set (the sweep stays valid). */
static cf_status noise_run(const cf_probe_backend *be, cf_probe *probe, const cf_profile_options *o, int m0,
                           cf_profile *out, progress_state *ps)
{
    out->has_noise = 0;
    out->noise_failed = 0;
    out->noise_error[0] = '\0';
    out->n_noise_trace = 0;
    int k = o->noise_micro_batches;
    if (k > m0)
        k = m0;
    if (k < 2) {
        snprintf(out->noise_error, sizeof out->noise_error, "the recipe batch %d cannot be split into 2 micro-batches", m0);
        return CF_OK;
    }
    int b = m0 / k;
    if (out->ceiling_found && b > out->max_local_batch) {
        b = out->max_local_batch;
        k = m0 / b < 2 ? 2 : m0 / b;
        if (k > CF_PROBE_MAX_MICRO)
            k = CF_PROBE_MAX_MICRO;
    }
    cf_probe_result res;
    int first_oom_b = 0;
    for (;;) {
        out->noise_local_batch = b;
        out->noise_micro_batches = k;
        out->noise_steps = o->noise_steps;
        progress(ps, "noise scale: %d steps of %d micro-batches", o->noise_steps, k);
        cf_probe_run run = {b, k, o->noise_steps, 0, o->seed, 0};
        memset(&res, 0, sizeof res);
        cf_status st = be->run(probe, &run, &res);
        if (!first_oom_b)
            ps->done++; /* one run in the plan, however often it is retried smaller */
        if (st == CF_OK && (st = note_device(out, &res, be->name)) != CF_OK)
            cf_probe_result_free(&res);
        if (st != CF_OK) {
            cf_error_prefix("%s backend, noise run (local batch %d × %d micro-batches)", be->name, b, k);
            if (st != CF_ERR_INTERRUPTED && st != CF_ERR_NOMEM) {
                out->noise_failed = 1;
                /* stored with the profile: escaped, cut at a character
                 * boundary (as runner_profile.c's probe note) */
                char why[1024];
                snprintf(why, sizeof why, "the noise run failed: %s", cf_error_message());
                cf_text_fit_clip(why, sizeof out->noise_error - 1, out->noise_error, sizeof out->noise_error);
            }
            return st;
        }
        if (!res.oom)
            break;
        int model_oom = res.oom_model;
        cf_probe_result_free(&res);
        /* The noise run holds more than a sweep step of the same batch (each
         * micro-batch's gradient beside the running mean), so a batch under
         * the sweep's ceiling can still run out: halve the micro-batch and
         * keep the recipe's batch as more of them. The estimator takes any
         * micro-batch size (docs/profiler.md). */
        if (!first_oom_b)
            first_oom_b = b;
        if (b < 2 || m0 / (b / 2) > CF_PROBE_MAX_MICRO || model_oom) {
            if (first_oom_b != b)
                snprintf(out->noise_error, sizeof out->noise_error,
                         "the noise run ran out of memory at every micro-batch from %d down to %d", first_oom_b, b);
            else
                snprintf(out->noise_error, sizeof out->noise_error, "the noise run (%d × %d) ran out of memory", k, b);
            return CF_OK;
        }
        progress(ps, "noise scale: out of memory at micro-batch %d; again at %d", b, b / 2);
        b /= 2;
        k = m0 / b;
    }
    cf_gns gns;
    cf_gns_config cfg = {o->noise_steps / 4.0, 0};
    cf_gns_init(&gns, &cfg);
    for (int i = 0; i < res.n_steps; i++) {
        const cf_probe_step *s = &res.steps[i];
        if (s->n_micro != k || s->mean_sqnorm < 0) {
            snprintf(out->noise_error, sizeof out->noise_error,
                     "step %d reported %d micro-batch norm(s)%s, expected %d and the norm of their mean", i + 1,
                     s->n_micro, s->mean_sqnorm < 0 ? " and no mean_sqnorm" : "", k);
            break;
        }
        if (cf_gns_add_micro(&gns, b, s->micro_sqnorms, k, s->mean_sqnorm) != CF_OK) {
            snprintf(out->noise_error, sizeof out->noise_error, "step %d: %s", i + 1, gns_reason());
            break;
        }
    }
    cf_gns_estimate est;
    if (!out->noise_error[0]) {
        if (cf_gns_result(&gns, &est) == CF_OK) {
            out->has_noise = 1;
            out->b_noise = est.b_noise;
            out->b_noise_stderr = est.b_noise_stderr;
            out->noise_samples = gns.samples_seen;
            copy_trace(&gns, out);
        } else {
            snprintf(out->noise_error, sizeof out->noise_error, "%s", gns_reason());
        }
    }
    cf_error_clear();
    cf_gns_free(&gns);
    cf_probe_result_free(&res);
    return CF_OK;
}

static void now_iso8601(char *out, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

cf_status cf_profile_sweep(const cf_probe_backend *be, const cf_job *job, const cf_profile_options *o,
                         cf_profile *out)
{
    memset(out, 0, sizeof *out);
    const int *batches = default_batches;
    int n_batches = (int)(sizeof default_batches / sizeof *default_batches);
    const char *batches_key = "the default sweep";
    if (o->n_local_batches > 0) {
        batches = o->local_batches;
        n_batches = o->n_local_batches;
        batches_key = "the sweep asked for";
    } else if (o->probe.settings && o->probe.settings->n_local_batches > 0) {
        batches = o->probe.settings->local_batches;
        n_batches = o->probe.settings->n_local_batches;
        batches_key = "profile.local_batches[0]";
    }
    for (int i = 1; i < n_batches; i++)
        if (batches[i] <= batches[i - 1])
            return cf_error_set(CF_ERR_INVALID, "profile: local batches must be increasing, got %d after %d",
                                batches[i], batches[i - 1]);
    if (n_batches > CF_PROFILE_MAX_POINTS)
        return cf_error_set(CF_ERR_INVALID, "profile: at most %d local batches, got %d", CF_PROFILE_MAX_POINTS,
                            n_batches);
    out->steps = o->steps > 0                                        ? o->steps
                 : o->probe.settings && o->probe.settings->steps > 0 ? o->probe.settings->steps
                                                                   : 30;
    out->warmup_steps = o->warmup_steps;
    snprintf(out->spec_name, sizeof out->spec_name, "%s", job->name);
    snprintf(out->backend, sizeof out->backend, "%s", be->name);
    snprintf(out->spec_key, sizeof out->spec_key, "%s", o->spec_key);
    now_iso8601(out->created_at, sizeof out->created_at);

    cf_probe *probe = NULL;
    cf_status st = be->open(be, job, &o->probe, &probe);
    if (st != CF_OK)
        return st;
    progress_state ps = {o, 0, n_batches + (o->noise_micro_batches > 0)};
    st = sweep(be, probe, o, batches, n_batches, batches_key, out, &ps);
    if (st == CF_ERR_INFEASIBLE && job->source[0])
        cf_error_prefix("%s", job->source); /* the keys it names are this spec's */
    if (st == CF_OK && out->n_points >= 2)
        st = cf_profile_fit(out);
    if (st == CF_OK && o->noise_micro_batches > 0)
        st = noise_run(be, probe, o, job->batch, out, &ps);
    else if (st == CF_OK)
        snprintf(out->noise_error, sizeof out->noise_error, "not measured (no noise run requested)");
    be->close(probe);
    if (st == CF_OK) {
        ps.done = ps.total;
        progress(&ps, "done");
    } else if (!out->noise_failed) {
        memset(out, 0, sizeof *out); /* a failed sweep: no partial profile escapes */
    }
    return st;
}

cf_status cf_profile_resume(const cf_probe_backend *be, const cf_job *job, const cf_profile_options *o,
                            cf_profile *p)
{
    if (!p->noise_failed)
        return cf_error_set(CF_ERR_INVALID, "the stored %s profile of '%s' on %s has nothing that failed", p->backend,
                            p->spec_name, p->device.name[0] ? p->device.name : "its device");
    if (strcmp(be->name, p->backend) != 0)
        return cf_error_set(CF_ERR_INVALID, "the stored profile was measured with the %s backend, not %s", p->backend,
                            be->name);
    int k = o->noise_micro_batches > 0 ? o->noise_micro_batches : DEFAULT_NOISE_MICRO;
    cf_profile_options opts = *o;
    opts.noise_micro_batches = k;
    cf_probe *probe = NULL;
    cf_status st = be->open(be, job, &o->probe, &probe);
    if (st != CF_OK)
        return st;
    progress_state ps = {o, 0, 1};
    /* note_device holds the resumed run to the stored device, precision
     * and memory format: a profile is one device, one way of training. */
    st = noise_run(be, probe, &opts, job->batch, p, &ps);
    be->close(probe);
    if (st == CF_OK) {
        ps.done = ps.total;
        progress(&ps, "done");
    }
    return st;
}
