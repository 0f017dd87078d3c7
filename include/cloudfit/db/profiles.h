/* The profile cache in the SQLite database (db/profiles.c): `cloudfit
 * profile` stores its result, `recommend` reads it back. Rows are keyed by
 * (spec key, backend, device name); the profile itself is JSON text
 * (cf_profile_to_json), so db/ does not depend on the profiler. */
#ifndef CLOUDFIT_DB_PROFILES_H
#define CLOUDFIT_DB_PROFILES_H
#include <stddef.h>
#include "cloudfit/db.h"
#include "cloudfit/status.h"

typedef struct {
    const char *spec_key;      /* cf_profile_spec_key() */
    const char *backend;       /* cpu | cuda | exec */
    const char *device;        /* device name as the backend reported it */
    const char *spec_name;
    const char *created_at;    /* ISO 8601 UTC */
    int is_gpu;
    double b_noise;            /* ≤ 0 = not measured (stored as NULL) */
    int max_local_batch;
    const char *profile_json;
} cf_cached_profile;

/* Inserts or replaces the row of (spec_key, backend, device) in one
 * transaction; it becomes the spec key's last stored. */
cf_status cf_profile_cache_put(cf_db *db, const cf_cached_profile *row);

/* Every cached profile of a spec key, newest first: by created_at, and of
 * one second the one stored last (docs/profiler.md). Strings of the rows
 * are owned by the list; free it with cf_profile_cache_list_free. */
typedef struct {
    cf_cached_profile *rows;
    size_t n;
} cf_cached_profile_list;

cf_status cf_profile_cache_get(cf_db *db, const char *spec_key, cf_cached_profile_list *out);
/* The same for the rows of either key, newest first (other_key NULL or "":
 * spec_key alone): a spec's profiles stored under the key of an older
 * version (cf_spec_profile_key_before_precision) beside the current one. */
cf_status cf_profile_cache_get_either(cf_db *db, const char *spec_key, const char *other_key,
                                      cf_cached_profile_list *out);
void cf_profile_cache_list_free(cf_cached_profile_list *list);

#endif
