/* A profile as JSON: the profile cache's storage form and the output of
 * `cloudfit profile --format json` (documented in docs/profiler.md). */
#include "cloudfit/profiler.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/json.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PROFILE_JSON_VERSION 1

/* JSON has no NaN: a missing figure is null. */
static void add_number(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

char *cf_profile_to_json(const cf_profile *p, int pretty)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc)
        return NULL;
    cJSON_AddNumberToObject(doc, "version", PROFILE_JSON_VERSION);
    cJSON *spec = cJSON_AddObjectToObject(doc, "spec");
    cJSON_AddStringToObject(spec, "name", p->spec_name);
    cJSON_AddStringToObject(spec, "key", p->spec_key);
    cJSON_AddStringToObject(doc, "backend", p->backend);
    cJSON *dev = cJSON_AddObjectToObject(doc, "device");
    cJSON_AddStringToObject(dev, "name", p->device.name);
    cJSON_AddNumberToObject(dev, "memory_gib", p->device.memory_gib);
    cJSON_AddNumberToObject(dev, "gpus", p->device.gpus);
    cJSON_AddBoolToObject(dev, "is_gpu", p->device.is_gpu);
    /* How the probe trained; null when it did not say. */
    if (p->precision[0])
        cJSON_AddStringToObject(doc, "precision", p->precision);
    else
        cJSON_AddNullToObject(doc, "precision");
    if (p->memory_format[0])
        cJSON_AddStringToObject(doc, "memory_format", p->memory_format);
    else
        cJSON_AddNullToObject(doc, "memory_format");
    cJSON_AddStringToObject(doc, "created_at", p->created_at);
    cJSON_AddNumberToObject(doc, "steps", p->steps);
    cJSON_AddNumberToObject(doc, "warmup_steps", p->warmup_steps);
    cJSON *points = cJSON_AddArrayToObject(doc, "points");
    for (int i = 0; i < p->n_points; i++) {
        const cf_profile_point *pt = &p->points[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(points, o);
        cJSON_AddNumberToObject(o, "local_batch", pt->local_batch);
        add_number(o, "step_time_s", pt->step_time_s);
        add_number(o, "min_s", pt->min_s);
        add_number(o, "max_s", pt->max_s);
        cJSON_AddNumberToObject(o, "n_timed", pt->n_timed);
        add_number(o, "residual_s", p->has_fit ? pt->residual_s : NAN);
    }
    if (p->has_fit) {
        cJSON *fit = cJSON_AddObjectToObject(doc, "fit");
        add_number(fit, "alpha_s", p->alpha_s);
        add_number(fit, "beta_s", p->beta_s);
        add_number(fit, "r2", p->r2);
        add_number(fit, "rel_rmse", p->rel_rmse);
    } else {
        cJSON_AddNullToObject(doc, "fit");
    }
    cJSON *mem = cJSON_AddObjectToObject(doc, "memory");
    cJSON_AddNumberToObject(mem, "max_local_batch", p->max_local_batch);
    cJSON_AddBoolToObject(mem, "ceiling_found", p->ceiling_found);
    cJSON_AddNumberToObject(mem, "oom_batch", p->oom_batch);
    cJSON *noise = cJSON_AddObjectToObject(doc, "noise");
    if (p->has_noise) {
        add_number(noise, "b_noise", p->b_noise);
        add_number(noise, "stderr", p->b_noise_stderr);
        cJSON_AddNumberToObject(noise, "local_batch", p->noise_local_batch);
        cJSON_AddNumberToObject(noise, "micro_batches", p->noise_micro_batches);
        cJSON_AddNumberToObject(noise, "steps", p->noise_steps);
        cJSON_AddNumberToObject(noise, "samples", p->noise_samples);
        cJSON *trace = cJSON_AddArrayToObject(noise, "trace");
        for (int i = 0; i < p->n_noise_trace; i++) {
            const double pair[2] = {p->noise_trace[i].samples_seen, p->noise_trace[i].b_noise};
            cJSON_AddItemToArray(trace, cJSON_CreateDoubleArray(pair, 2));
        }
    } else {
        cJSON_AddStringToObject(noise, "error", p->noise_error);
        cJSON_AddBoolToObject(noise, "failed", p->noise_failed);
        if (p->noise_failed && p->noise_micro_batches > 0) { /* what failed: --resume runs it again */
            cJSON_AddNumberToObject(noise, "local_batch", p->noise_local_batch);
            cJSON_AddNumberToObject(noise, "micro_batches", p->noise_micro_batches);
            cJSON_AddNumberToObject(noise, "steps", p->noise_steps);
        }
    }
    if (p->n_runs > 0) { /* runner profiles only; absent for cpu/cuda/exec */
        cJSON *runner = cJSON_AddObjectToObject(doc, "runner");
        cJSON_AddStringToObject(runner, "runner", p->runner);
        cJSON_AddStringToObject(runner, "probe_status", p->probe_status);
        cJSON_AddStringToObject(runner, "probe_note", p->probe_note);
        cJSON *runs = cJSON_AddArrayToObject(runner, "runs");
        for (int i = 0; i < p->n_runs; i++) {
            const cf_profile_run_row *r = &p->runs[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(runs, o);
            cJSON_AddStringToObject(o, "kind", r->kind);
            cJSON_AddStringToObject(o, "cloud", r->cloud);
            cJSON_AddStringToObject(o, "instance_type", r->instance_type);
            cJSON_AddNumberToObject(o, "hw_gpus_per_node", r->hw_gpus_per_node);
            cJSON_AddNumberToObject(o, "nodes", r->nodes);
            cJSON_AddNumberToObject(o, "gpus_per_node", r->gpus_per_node);
            cJSON_AddNumberToObject(o, "local_batch", r->local_batch);
            add_number(o, "step_time_s", r->step_time_s);
            cJSON_AddNumberToObject(o, "network_gbps", r->network_gbps);
        }
    }
    char *text = pretty ? cJSON_Print(doc) : cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return text;
}

/* ---- reading back --------------------------------------------------------------- */

typedef struct {
    const char *where;
    cf_status st;
} reader;

static const cJSON *get(reader *r, const cJSON *obj, const char *key, int (*is)(const cJSON *), const char *what)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (r->st == CF_OK && (!item || !is(item)))
        r->st = cf_error_set(CF_ERR_INVALID, "%s: '%s': expected %s", r->where, key, what);
    return r->st == CF_OK ? item : NULL;
}

static int is_string(const cJSON *i) { return cJSON_IsString(i); }
static int is_object(const cJSON *i) { return cJSON_IsObject(i); }
static int is_array(const cJSON *i) { return cJSON_IsArray(i); }
static int is_bool(const cJSON *i) { return cJSON_IsBool(i); }
static int is_number_or_null(const cJSON *i) { return cJSON_IsNumber(i) || cJSON_IsNull(i); }

static double num(reader *r, const cJSON *obj, const char *key)
{
    const cJSON *i = get(r, obj, key, is_number_or_null, "a number");
    return i && cJSON_IsNumber(i) ? i->valuedouble : NAN;
}

/* A count: a stored null or a value no int holds reads as 0 (a cast of
 * NaN or 1e300 to int is undefined behaviour). */
static int num_int(reader *r, const cJSON *obj, const char *key)
{
    double v = num(r, obj, key);
    return isfinite(v) && v >= INT_MIN && v <= INT_MAX ? (int)v : 0;
}

static void str(reader *r, const cJSON *obj, const char *key, char *out, size_t n)
{
    const cJSON *i = get(r, obj, key, is_string, "a string");
    if (i)
        snprintf(out, n, "%s", i->valuestring);
}

/* A string or null; absent (a profile stored before the key existed) is null. */
static void optional_str(reader *r, const cJSON *obj, const char *key, char *out, size_t n)
{
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!i || cJSON_IsNull(i) || r->st != CF_OK)
        return;
    if (!cJSON_IsString(i)) {
        r->st = cf_error_set(CF_ERR_INVALID, "%s: '%s': expected a string or null", r->where, key);
        return;
    }
    snprintf(out, n, "%s", i->valuestring);
}

static int flag(reader *r, const cJSON *obj, const char *key)
{
    const cJSON *i = get(r, obj, key, is_bool, "true or false");
    return i ? cJSON_IsTrue(i) : 0;
}

static void read_points(reader *r, const cJSON *doc, cf_profile *p)
{
    const cJSON *points = get(r, doc, "points", is_array, "an array");
    const cJSON *pt;
    cJSON_ArrayForEach(pt, points)
    {
        if (p->n_points == CF_PROFILE_MAX_POINTS || !cJSON_IsObject(pt)) {
            r->st = cf_error_set(CF_ERR_INVALID, "%s: 'points': expected at most %d objects", r->where,
                                 CF_PROFILE_MAX_POINTS);
            return;
        }
        cf_profile_point *o = &p->points[p->n_points++];
        o->local_batch = num_int(r, pt, "local_batch");
        o->step_time_s = num(r, pt, "step_time_s");
        o->min_s = num(r, pt, "min_s");
        o->max_s = num(r, pt, "max_s");
        o->n_timed = num_int(r, pt, "n_timed");
        o->residual_s = num(r, pt, "residual_s");
        /* as a runner's runs are checked: recommend dropped such a point
         * from the fit without a word */
        if (r->st == CF_OK && (o->local_batch < 1 || !(o->step_time_s > 0) || !isfinite(o->step_time_s)))
            r->st = cf_error_set(CF_ERR_INVALID, "%s: 'points[%d]': expected a local_batch ≥ 1 and a positive "
                                 "step_time_s", r->where, p->n_points - 1);
    }
}

static void read_noise(reader *r, const cJSON *doc, cf_profile *p)
{
    const cJSON *noise = get(r, doc, "noise", is_object, "an object");
    if (!noise)
        return;
    if (cJSON_GetObjectItemCaseSensitive(noise, "error")) {
        str(r, noise, "error", p->noise_error, sizeof p->noise_error);
        /* absent in profiles stored before the noise run could fail alone */
        if (cJSON_GetObjectItemCaseSensitive(noise, "failed"))
            p->noise_failed = flag(r, noise, "failed");
        /* the failed run's shape; absent in profiles stored before it was kept */
        if (p->noise_failed && cJSON_GetObjectItemCaseSensitive(noise, "micro_batches")) {
            p->noise_local_batch = num_int(r, noise, "local_batch");
            p->noise_micro_batches = num_int(r, noise, "micro_batches");
            p->noise_steps = num_int(r, noise, "steps");
        }
        return;
    }
    p->has_noise = 1;
    p->b_noise = num(r, noise, "b_noise");
    p->b_noise_stderr = num(r, noise, "stderr");
    p->noise_local_batch = num_int(r, noise, "local_batch");
    p->noise_micro_batches = num_int(r, noise, "micro_batches");
    p->noise_steps = num_int(r, noise, "steps");
    p->noise_samples = num(r, noise, "samples");
    const cJSON *trace = get(r, noise, "trace", is_array, "an array");
    const cJSON *pair;
    cJSON_ArrayForEach(pair, trace)
    {
        if (p->n_noise_trace == CF_PROFILE_MAX_TRACE || cJSON_GetArraySize(pair) != 2 ||
            !cJSON_IsNumber(pair->child) || !cJSON_IsNumber(pair->child->next)) {
            r->st = cf_error_set(CF_ERR_INVALID, "%s: 'noise.trace': expected at most %d [samples, b_noise] pairs",
                                 r->where, CF_PROFILE_MAX_TRACE);
            return;
        }
        p->noise_trace[p->n_noise_trace++] = (cf_noise_sample){pair->child->valuedouble, pair->child->next->valuedouble};
    }
    if (r->st == CF_OK && !(p->b_noise > 0))
        r->st = cf_error_set(CF_ERR_INVALID, "%s: 'noise.b_noise': expected a positive number", r->where);
}

/* The optional "runner" object of a runner profile. */
static void read_runner(reader *r, const cJSON *doc, cf_profile *p)
{
    const cJSON *runner = cJSON_GetObjectItemCaseSensitive(doc, "runner");
    if (!runner || r->st != CF_OK)
        return;
    if (!cJSON_IsObject(runner)) {
        r->st = cf_error_set(CF_ERR_INVALID, "%s: 'runner': expected an object", r->where);
        return;
    }
    str(r, runner, "runner", p->runner, sizeof p->runner);
    str(r, runner, "probe_status", p->probe_status, sizeof p->probe_status);
    str(r, runner, "probe_note", p->probe_note, sizeof p->probe_note);
    const cJSON *runs = get(r, runner, "runs", is_array, "an array");
    const cJSON *o;
    cJSON_ArrayForEach(o, runs)
    {
        if (p->n_runs == CF_PROFILE_MAX_RUNS || !cJSON_IsObject(o)) {
            r->st = cf_error_set(CF_ERR_INVALID, "%s: 'runner.runs': expected at most %d objects", r->where,
                                 CF_PROFILE_MAX_RUNS);
            return;
        }
        cf_profile_run_row *row = &p->runs[p->n_runs++];
        str(r, o, "kind", row->kind, sizeof row->kind);
        str(r, o, "cloud", row->cloud, sizeof row->cloud);
        str(r, o, "instance_type", row->instance_type, sizeof row->instance_type);
        row->hw_gpus_per_node = num_int(r, o, "hw_gpus_per_node");
        row->nodes = num_int(r, o, "nodes");
        row->gpus_per_node = num_int(r, o, "gpus_per_node");
        row->local_batch = num_int(r, o, "local_batch");
        row->step_time_s = num(r, o, "step_time_s");
        row->network_gbps = num(r, o, "network_gbps");
        if (r->st == CF_OK && (row->nodes < 1 || row->gpus_per_node < 1 || row->local_batch < 1 ||
                               !(row->step_time_s > 0)))
            r->st = cf_error_set(CF_ERR_INVALID, "%s: 'runner.runs[%d]': expected nodes, gpus_per_node, local_batch "
                                 "≥ 1 and a positive step_time_s", r->where, p->n_runs - 1);
    }
}

cf_status cf_profile_from_json(const char *text, cf_profile *p)
{
    memset(p, 0, sizeof *p);
    cJSON *doc = NULL;
    if (cf_json_read(text, strlen(text), "stored profile", &doc) != CF_OK)
        return cf_error_status();
    reader r = {"stored profile", CF_OK};
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        return cf_error_set(CF_ERR_INVALID, "stored profile: not a JSON object");
    }
    if (num_int(&r, doc, "version") != PROFILE_JSON_VERSION && r.st == CF_OK)
        r.st = cf_error_set(CF_ERR_INVALID, "stored profile: version %d is not supported (expected %d)",
                            num_int(&r, doc, "version"), PROFILE_JSON_VERSION);
    const cJSON *spec = get(&r, doc, "spec", is_object, "an object");
    if (spec) {
        str(&r, spec, "name", p->spec_name, sizeof p->spec_name);
        str(&r, spec, "key", p->spec_key, sizeof p->spec_key);
    }
    str(&r, doc, "backend", p->backend, sizeof p->backend);
    const cJSON *dev = get(&r, doc, "device", is_object, "an object");
    if (dev) {
        str(&r, dev, "name", p->device.name, sizeof p->device.name);
        p->device.memory_gib = num(&r, dev, "memory_gib");
        p->device.gpus = num_int(&r, dev, "gpus");
        p->device.is_gpu = flag(&r, dev, "is_gpu");
        if (r.st == CF_OK && p->device.gpus < 1)
            r.st = cf_error_set(CF_ERR_INVALID, "stored profile: 'device.gpus': expected a positive integer");
    }
    optional_str(&r, doc, "precision", p->precision, sizeof p->precision);
    cf_precision known;
    if (r.st == CF_OK && p->precision[0] && !cf_precision_parse(p->precision, &known))
        /* recommend moves the step from this precision to the job's: one it
         * does not know left the step unmoved, without a word */
        r.st = cf_error_set(CF_ERR_INVALID, "stored profile: 'precision': expected fp32, tf32, fp16, bf16 or amp, got "
                            "'%.32s'", p->precision);
    optional_str(&r, doc, "memory_format", p->memory_format, sizeof p->memory_format);
    /* recommend compares it with the spec's model.memory_format: one the
     * probe could not have reported (probe_exec.c's list), or cut short by
     * the buffer, would widen the interval and name it in a note */
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(doc, "memory_format");
    if (r.st == CF_OK && cJSON_IsString(format) && !cf_memory_format_known(format->valuestring)) {
        char shown[64];
        cf_text_clip(format->valuestring, 35, shown, sizeof shown);
        r.st = cf_error_set(CF_ERR_INVALID, "stored profile: 'memory_format': expected contiguous, channels_last or "
                            "channels_last_3d, got '%s'", shown);
    }
    str(&r, doc, "created_at", p->created_at, sizeof p->created_at);
    p->steps = num_int(&r, doc, "steps");
    p->warmup_steps = num_int(&r, doc, "warmup_steps");
    read_points(&r, doc, p);
    const cJSON *fit = cJSON_GetObjectItemCaseSensitive(doc, "fit");
    if (r.st == CF_OK && cJSON_IsObject(fit)) {
        p->has_fit = 1;
        p->alpha_s = num(&r, fit, "alpha_s");
        p->beta_s = num(&r, fit, "beta_s");
        p->r2 = num(&r, fit, "r2");
        p->rel_rmse = num(&r, fit, "rel_rmse");
    }
    const cJSON *mem = get(&r, doc, "memory", is_object, "an object");
    if (mem) {
        p->max_local_batch = num_int(&r, mem, "max_local_batch");
        p->ceiling_found = flag(&r, mem, "ceiling_found");
        p->oom_batch = num_int(&r, mem, "oom_batch");
    }
    read_noise(&r, doc, p);
    read_runner(&r, doc, p);
    cJSON_Delete(doc);
    if (r.st != CF_OK)
        memset(p, 0, sizeof *p);
    return r.st;
}
