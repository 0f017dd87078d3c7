#include "cloudfit/usecase/evidence.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/db/history.h"
#include "cloudfit/db/profiles.h"
#include "cloudfit/profiler.h"
#include "cloudfit/profiler/measurements.h"

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void notef(cf_note_fn note, void *ctx, cf_note_kind kind, const char *fmt, ...)
{
    if (!note)
        return;
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    note(ctx, kind, text);
}

static void read_profiles(cf_db *db, const cf_spec *spec, cf_note_fn note, void *ctx, cf_evidence *ev)
{
    char key[65], before[65];
    cf_cached_profile_list list = {0};
    if (cf_spec_profile_key(spec, key) != CF_OK || cf_spec_profile_key_before_precision(spec, before) != CF_OK ||
        cf_profile_cache_get_either(db, key, before, &list) != CF_OK) {
        notef(note, ctx, CF_NOTE_WARNING, "the profile cache could not be read (%s); using the spec and estimates",
              cf_error_message());
        cf_error_clear();
        return;
    }
    ev->profiles = calloc(list.n ? list.n : 1, sizeof *ev->profiles);
    for (size_t i = 0; ev->profiles && i < list.n; i++) {
        cf_profile *p = &ev->profiles[ev->n_profiles];
        if (cf_profile_from_json(list.rows[i].profile_json, p) != CF_OK) {
            notef(note, ctx, CF_NOTE_WARNING, "the cached profile of %s (%s backend) is unreadable and is not used: %s",
                  list.rows[i].device, list.rows[i].backend, cf_error_message());
            cf_error_clear();
            continue;
        }
        notef(note, ctx, CF_NOTE_INFO, "using the cached %s profile of '%s' on %s (%s)", p->backend, p->spec_name,
              p->device.name, p->created_at);
        ev->n_profiles++;
    }
    cf_profile_cache_list_free(&list);
}

static cf_status read_recorded(cf_db *db, const cf_spec *spec, cf_evidence *ev)
{
    cf_history_measurement *ms = NULL;
    size_t n = 0;
    cf_status st = cf_history_measurements_for_spec(db, spec->source_hash, &ms, &n);
    if (st != CF_OK)
        return st;
    ev->recorded = calloc(n ? n : 1, sizeof *ev->recorded);
    if (!ev->recorded) {
        free(ms);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        cf_recorded_run *r = &ev->recorded[i];
        memcpy(r->cloud, ms[i].cloud, sizeof r->cloud);
        memcpy(r->instance_type, ms[i].instance_type, sizeof r->instance_type);
        memcpy(r->gpu, ms[i].gpu, sizeof r->gpu);
        r->gpus_per_node = ms[i].gpus_per_node;
        r->nodes = ms[i].nodes;
        r->local_batch = ms[i].local_batch;
        r->accumulation = ms[i].accumulation;
        r->step_time_s = ms[i].step_time_s;
    }
    ev->n_recorded = n;
    free(ms);
    return CF_OK;
}

cf_status cf_evidence_read(cf_db *db, const char *db_name, const cf_spec *spec, int with_recorded, cf_note_fn note,
                           void *note_ctx, cf_evidence *ev)
{
    memset(ev, 0, sizeof *ev);
    for (int i = 0; i < spec->n_gpus; i++)
        if (spec->gpus[i].measurements_path[0] &&
            cf_measurements_load(spec->gpus[i].measurements_path, &ev->given_rows[i]) != CF_OK) {
            /* The spec and the key that named the file, before the file's own message. */
            cf_error_prefix("%s: profile.gpus.%s", spec->job.source[0] ? spec->job.source : "<spec>",
                            spec->gpus[i].gpu);
            cf_evidence_free(ev);
            return cf_error_status();
        }
    if (!db)
        return CF_OK; /* no database yet: nothing profiled or recorded */
    snprintf(ev->profiles_source, sizeof ev->profiles_source, "%s", db_name ? db_name : "");
    read_profiles(db, spec, note, note_ctx, ev);
    cf_status st = with_recorded ? read_recorded(db, spec, ev) : CF_OK;
    if (st != CF_OK)
        cf_evidence_free(ev);
    return st;
}

void cf_evidence_request(const cf_evidence *ev, const cf_spec *spec, const cf_catalog *catalog,
                         const cf_vm *const *candidates, size_t n_candidates, cf_inputs_request *rq)
{
    *rq = (cf_inputs_request){.job = &spec->job,
                              .gpus = catalog->gpus,
                              .n_gpus = catalog->n_gpus,
                              .vms = catalog->vms,
                              .n_vms = catalog->n_vms,
                              .candidates = candidates,
                              .n_candidates = n_candidates,
                              .given = spec->gpus,
                              .n_given = (size_t)spec->n_gpus,
                              .given_rows = ev->given_rows,
                              .noise_trace = spec->noise_trace,
                              .n_noise_trace = spec->n_noise_trace,
                              .noise_scale = spec->has_noise_scale ? spec->noise_scale : 0,
                              .profiles = ev->profiles,
                              .n_profiles = ev->n_profiles,
                              .profiles_source = ev->profiles_source,
                              .recorded = ev->recorded,
                              .n_recorded = ev->n_recorded};
}

cf_status cf_evidence_count_since(cf_db *db, const cf_spec *spec, const char *since, long long since_id,
                                  size_t *n_recorded, size_t *n_profiles)
{
    *n_recorded = *n_profiles = 0;
    cf_history_measurement *ms = NULL;
    size_t n = 0;
    cf_status st = cf_history_measurements_for_spec(db, spec->source_hash, &ms, &n);
    if (st != CF_OK)
        return st;
    /* A run of the baseline or a later recommendation is later whatever;
     * else the ids order it: a run recorded once the baseline was stored
     * saw its id. Timestamps are whole seconds (a run recorded in the
     * baseline's second, after it, was never counted): only for rows that
     * do not have the id (older rows, a --compare-to baseline). */
    for (size_t i = 0; i < n; i++) {
        const cf_history_measurement *m = &ms[i];
        if (since_id > 0 && m->recommendation_id >= since_id)
            (*n_recorded)++;
        else if (since_id > 0 && m->after_recommendation > 0)
            *n_recorded += m->after_recommendation >= since_id;
        else
            *n_recorded += strcmp(m->recorded_at, since) > 0;
    }
    free(ms);
    char key[65], before[65];
    cf_cached_profile_list list = {0};
    if (cf_spec_profile_key(spec, key) != CF_OK || cf_spec_profile_key_before_precision(spec, before) != CF_OK ||
        cf_profile_cache_get_either(db, key, before, &list) != CF_OK) {
        cf_error_clear(); /* read_profiles warned of it already */
        return CF_OK;
    }
    for (size_t i = 0; i < list.n; i++)
        *n_profiles += list.rows[i].created_at && strcmp(list.rows[i].created_at, since) > 0;
    cf_profile_cache_list_free(&list);
    return CF_OK;
}

void cf_evidence_free(cf_evidence *ev)
{
    for (int i = 0; i < CF_SPEC_MAX_GPUS; i++)
        cf_measurements_free(&ev->given_rows[i]);
    free(ev->profiles);
    free(ev->recorded);
    memset(ev, 0, sizeof *ev);
}
