/* model.json section "profile": noise scale, inline GPU profiles, the probe
 * backend and its batch sweep (docs/spec.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_internal.h"

#define MAX_ARGV_STRINGS (CF_SPEC_MAX_ARGV - 1)   /* room for the NULL terminator */


/* ---- noise_scale ----------------------------------------------------------------- */

/* Point i of the trace: [progress, b_noise], progress above the previous one. */
static cf_status read_trace_point(spec_ctx *c, const cJSON *pair, int i, cf_spec *out)
{
    int n = 0;
    cf_status st = spec_read_array(c, pair, 2, 2, "a pair [progress, b_noise]", &n);
    cf_noise_point point = {0.0, 0.0};
    size_t mark = spec_push_index(c, 0);
    if (st == CF_OK)
        st = spec_read_number(c, pair->child, &SPEC_RULE_TRACE_PROGRESS, &point.progress_fraction);
    if (st == CF_OK && i > 0 && point.progress_fraction <= out->noise_trace[i - 1].progress_fraction) {
        char what[96];
        snprintf(what, sizeof what, "a progress greater than %g (the point before)",
                 out->noise_trace[i - 1].progress_fraction);
        st = spec_fail_value(c, what, pair->child);
        cf_error_hint("list the points in increasing order of progress");
    }
    spec_pop(c, mark);
    mark = spec_push_index(c, 1);
    if (st == CF_OK)
        st = spec_read_number(c, pair->child->next, &SPEC_RULE_NOISE_SCALE, &point.b_noise);
    spec_pop(c, mark);
    if (st == CF_OK)
        out->noise_trace[i] = point;
    return st;
}

static cf_status read_trace(spec_ctx *c, const cJSON *trace, cf_spec *out)
{
    int n = 0;
    cf_status st = spec_read_array(c, trace, 1, CF_SPEC_MAX_TRACE,
                                   "an array of 1 to 256 [progress, b_noise] pairs", &n);
    int i = 0;
    for (const cJSON *pair = st == CF_OK ? trace->child : NULL; pair; pair = pair->next, i++) {
        size_t mark = spec_push_index(c, i);
        st = read_trace_point(c, pair, i, out);
        spec_pop(c, mark);
        if (st != CF_OK)
            return st;
    }
    if (st == CF_OK) {
        out->n_noise_trace = n;
        out->noise_scale = out->noise_trace[0].b_noise;   /* early value, for readers of the constant */
    }
    return st;
}

static cf_status read_noise_object(spec_ctx *c, const cJSON *noise, cf_spec *out)
{
    cf_status st = spec_check_keys(c, noise, cf_spec_allowed_keys("profile.noise_scale"));
    if (st != CF_OK)
        return st;
    const cJSON *trace = spec_member(noise, "trace");
    if (!trace)
        return spec_fail_missing(c, "trace", "[[0.0, 900], [0.5, 4000], [1.0, 14000]] ([progress, b_noise] pairs)");
    size_t mark = spec_push_key(c, "trace");
    st = read_trace(c, trace, out);
    spec_pop(c, mark);
    return st;
}

static cf_status read_noise_scale(spec_ctx *c, const cJSON *profile, cf_spec *out)
{
    const cJSON *noise = spec_member(profile, "noise_scale");
    if (!noise)
        return CF_OK;
    size_t mark = spec_push_key(c, "noise_scale");
    cf_status st;
    if (cJSON_IsObject(noise))
        st = read_noise_object(c, noise, out);
    else if (cJSON_IsNumber(noise))
        st = spec_read_number(c, noise, &SPEC_RULE_NOISE_SCALE, &out->noise_scale);
    else
        st = spec_fail_type(c, "a positive number or {\"trace\": [[progress, b_noise], ...]}", noise);
    spec_pop(c, mark);
    out->has_noise_scale = st == CF_OK;
    return st;
}

/* ---- gpus --------------------------------------------------------------------------- */

/* compute_s: alpha (s, >= 0) and beta (s per sample, > 0), both required. */
static cf_status read_compute(spec_ctx *c, const cJSON *compute, cf_gpu_profile_given *gpu)
{
    cf_status st = spec_expect_object(c, compute);
    if (st == CF_OK)
        st = spec_check_keys(c, compute, cf_spec_allowed_keys("profile.gpus.*.compute_s"));
    if (st == CF_OK)
        st = spec_field_number(c, compute, "alpha", &SPEC_RULE_ALPHA_S, "0.078 (seconds per micro-batch, fixed part)",
                               &gpu->alpha_s);
    if (st == CF_OK)
        st = spec_field_number(c, compute, "beta", &SPEC_RULE_BETA_S, "0.0042 (seconds per sample)",
                               &gpu->beta_s);
    gpu->has_compute = st == CF_OK;
    return st;
}

static cf_status read_sync(spec_ctx *c, const cJSON *sync, cf_gpu_profile_given *gpu)
{
    cf_status st = spec_expect_object(c, sync);
    if (st == CF_OK)
        st = spec_check_keys(c, sync, cf_spec_allowed_keys("profile.gpus.*.sync_s"));
    if (st == CF_OK)
        st = spec_field_number(c, sync, "intra_node_gbps", &SPEC_RULE_GBPS, NULL, &gpu->intra_node_gbps);
    if (st == CF_OK)
        st = spec_field_number(c, sync, "inter_node_gbps", &SPEC_RULE_GBPS, NULL, &gpu->inter_node_gbps);
    if (st == CF_OK)
        st = spec_field_number(c, sync, "latency_s", &SPEC_RULE_LATENCY_S, NULL, &gpu->latency_s);
    if (st == CF_OK)
        st = spec_field_number(c, sync, "overlap_gamma", &SPEC_RULE_OVERLAP_GAMMA, NULL, &gpu->overlap_gamma);
    return st;
}

/* Runs `reader` on obj[key] with the key pushed, when present. */
static cf_status gpu_member(spec_ctx *c, const cJSON *obj, const char *key,
                            cf_status (*reader)(spec_ctx *, const cJSON *, cf_gpu_profile_given *),
                            cf_gpu_profile_given *gpu)
{
    const cJSON *item = spec_member(obj, key);
    if (!item)
        return CF_OK;
    size_t mark = spec_push_key(c, key);
    cf_status st = reader(c, item, gpu);
    spec_pop(c, mark);
    return st;
}

static cf_status read_gpu_object(spec_ctx *c, const cJSON *entry, cf_gpu_profile_given *gpu)
{
    cf_status st = spec_check_keys(c, entry, cf_spec_allowed_keys("profile.gpus.*"));
    if (st != CF_OK)
        return st;
    if (!entry->child) {
        st = spec_fail(c, "expected \"compute_s\", \"max_local_batch\" or \"sync_s\", got an empty object");
        cf_error_hint("e.g. {\"compute_s\": {\"alpha\": 0.078, \"beta\": 0.0042}}, or a measurements CSV "
                      "path as a string");
        return st;
    }
    st = gpu_member(c, entry, "compute_s", read_compute, gpu);
    if (st == CF_OK)
        st = spec_field_int(c, entry, "max_local_batch", &SPEC_RULE_MAX_LOCAL_BATCH, NULL, &gpu->max_local_batch);
    if (st == CF_OK)
        st = gpu_member(c, entry, "sync_s", read_sync, gpu);
    return st;
}

/* profile.gpus.<name>: a measurements CSV path or fitted numbers. */
static cf_status read_gpu_entry(spec_ctx *c, const cJSON *entry, cf_gpu_profile_given *gpu)
{
    if (cJSON_IsString(entry))
        return spec_read_path(c, entry, gpu->measurements_path);
    if (cJSON_IsObject(entry))
        return read_gpu_object(c, entry, gpu);
    return spec_fail_type(c, "a measurements CSV path or an object with \"compute_s\", "
                             "\"max_local_batch\" or \"sync_s\"", entry);
}

static cf_status check_gpu_name(const spec_ctx *c, const char *name)
{
    size_t len = strlen(name);
    if (len >= 1 && len < CF_GPU_NAME_MAX)
        return CF_OK;
    char shown[128];
    spec_quote(name, shown, sizeof shown);
    cf_status st = spec_fail(c, "expected GPU model names of 1 to %d characters, got %s", CF_GPU_NAME_MAX - 1,
                             shown);
    cf_error_hint("use the GPU model name as in the catalog, e.g. \"T4\" or \"A100-80GB\"");
    return st;
}

static cf_status read_gpus(spec_ctx *c, const cJSON *gpus, cf_spec *out)
{
    cf_status st = spec_expect_object(c, gpus);
    if (st == CF_OK && cJSON_GetArraySize(gpus) > CF_SPEC_MAX_GPUS)
        st = spec_fail(c, "expected at most %d GPU types, got %d", CF_SPEC_MAX_GPUS, cJSON_GetArraySize(gpus));
    if (st == CF_OK)
        st = spec_check_duplicates(c, gpus);
    for (const cJSON *entry = st == CF_OK ? gpus->child : NULL; entry; entry = entry->next) {
        cf_gpu_profile_given *gpu = &out->gpus[out->n_gpus];
        st = check_gpu_name(c, entry->string);
        if (st != CF_OK)
            return st;
        snprintf(gpu->gpu, sizeof gpu->gpu, "%s", entry->string);
        size_t mark = spec_push_key(c, entry->string);
        st = read_gpu_entry(c, entry, gpu);
        spec_pop(c, mark);
        if (st != CF_OK)
            return st;
        out->n_gpus++;
    }
    return st;
}

/* ---- backend and command -------------------------------------------------------------- */

static cf_status read_command(spec_ctx *c, const cJSON *command, cf_spec *out)
{
    static const char what[] = "an argv list of 1 to 63 non-empty strings";
    if (cJSON_IsString(command)) {
        cf_status st = spec_fail_type(c, what, command);
        cf_error_hint("give an argv list, e.g. [\"python3\", \"train.py\"]: cloudfit never runs a shell");
        return st;
    }
    int n = 0;
    cf_status st = spec_read_array(c, command, 1, MAX_ARGV_STRINGS, what, &n);
    int i = 0;
    for (const cJSON *arg = st == CF_OK ? command->child : NULL; arg; arg = arg->next, i++) {
        size_t mark = spec_push_index(c, i);
        if (!cJSON_IsString(arg))
            st = spec_fail_type(c, "a non-empty string", arg);
        else if (arg->valuestring[0] == '\0')
            st = spec_fail_value(c, "a non-empty string", arg);
        spec_pop(c, mark);
        if (st != CF_OK)
            return st;
        out->probe.command[i] = strdup(arg->valuestring);
        if (!out->probe.command[i])
            return cf_error_set(CF_ERR_NOMEM, "%s: out of memory", c->file);
        out->probe.n_command = i + 1;
    }
    return st;
}

static cf_status read_backend(spec_ctx *c, const cJSON *profile, cf_spec *out)
{
    const char *const *backends = cf_spec_enum_values("profile.backend");
    int backend = -1;
    cf_status st = spec_field_enum(c, profile, "backend", backends, &backend);
    if (st == CF_OK && backend >= 0)
        snprintf(out->probe.backend, sizeof out->probe.backend, "%s", backends[backend]);
    const cJSON *command = spec_member(profile, "command");
    if (st == CF_OK && command) {
        size_t mark = spec_push_key(c, "command");
        st = read_command(c, command, out);
        spec_pop(c, mark);
    }
    if (st == CF_OK && !command && strcmp(out->probe.backend, "exec") == 0)
        st = spec_fail_missing(c, "command",
                               "[\"python3\", \"train.py\", \"--cloudfit-probe\"] (the exec backend runs an "
                               "argv list, never a shell)");
    return st;
}

/* ---- profile --------------------------------------------------------------------------- */

static cf_status read_profile_object(spec_ctx *c, const cJSON *profile, cf_spec *out)
{
    cf_status st = spec_check_keys(c, profile, cf_spec_allowed_keys("profile"));
    if (st == CF_OK)
        st = read_noise_scale(c, profile, out);
    const cJSON *gpus = spec_member(profile, "gpus");
    if (st == CF_OK && gpus) {
        size_t mark = spec_push_key(c, "gpus");
        st = read_gpus(c, gpus, out);
        spec_pop(c, mark);
    }
    if (st == CF_OK)
        st = read_backend(c, profile, out);
    const cJSON *batches = spec_member(profile, "local_batches");
    if (st == CF_OK && batches) {
        size_t mark = spec_push_key(c, "local_batches");
        st = spec_read_int_array(c, batches, 1, CF_SPEC_MAX_BATCHES,
                                 "an array of 1 to 32 increasing positive integers",
                                 &SPEC_DIMENSION /* a batch sizes allocations: bounded before any is made */, 1,
                                 out->probe.local_batches, &out->probe.n_local_batches);
        spec_pop(c, mark);
    }
    if (st == CF_OK)
        st = spec_field_int(c, profile, "steps", &SPEC_RULE_PROBE_STEPS, NULL, &out->probe.steps);
    return st;
}

cf_status spec_read_profile(spec_ctx *c, const cJSON *root, cf_spec *out)
{
    return spec_field_object(c, root, "profile", NULL, read_profile_object, out);
}
