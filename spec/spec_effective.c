/* The effective spec a command runs with (command-line overrides written
 * into the search section, revalidated, rehashed) and the key a profile of
 * the spec is cached under. Both work on the canonical JSON, so what is
 * hashed is exactly what is validated and stored. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/hash.h"
#include "cloudfit/spec.h"
#include "spec_internal.h"

void cf_spec_overrides_init(cf_spec_overrides *ov)
{
    memset(ov, 0, sizeof *ov);
    ov->objective = -1;
    ov->spot = -1;
}

static int has_overrides(const cf_spec_overrides *ov)
{
    return ov && (ov->objective >= 0 || ov->spot >= 0 || ov->deadline_hours > 0 || ov->budget_usd > 0 || ov->confidence > 0 ||
                  ov->max_nodes > 0 || ov->max_gpus > 0 || ov->n_clouds > 0 || ov->n_regions > 0 || ov->n_gpus > 0);
}

static int set_member(cJSON *obj, const char *key, cJSON *value)
{
    if (!value)
        return 0;
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, value) ? 1 : (cJSON_Delete(value), 0);
    return cJSON_AddItemToObject(obj, key, value) ? 1 : (cJSON_Delete(value), 0);
}

static cJSON *string_array(const char *const *items, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++) {
        cJSON *s = cJSON_CreateString(items[i]);
        if (!s || !cJSON_AddItemToArray(arr, s)) {
            cJSON_Delete(s);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

/* Writes the overrides into doc.search; 0 when memory ran out. */
static int write_overrides(cJSON *doc, const cf_spec_overrides *ov)
{
    cJSON *search = cJSON_GetObjectItemCaseSensitive(doc, "search");
    if (!search && !(search = cJSON_AddObjectToObject(doc, "search")))
        return 0;
    int ok = 1;
    const char *const *objectives = cf_spec_enum_values("search.objective");
    const char *const *spots = cf_spec_enum_values("search.spot");
    if (ov->objective >= 0)
        ok &= set_member(search, "objective", cJSON_CreateString(objectives[ov->objective]));
    if (ov->spot >= 0)
        ok &= set_member(search, "spot", cJSON_CreateString(spots[ov->spot]));
    if (ov->deadline_hours > 0)
        ok &= set_member(search, "deadline_hours", cJSON_CreateNumber(ov->deadline_hours));
    if (ov->budget_usd > 0)
        ok &= set_member(search, "budget_usd", cJSON_CreateNumber(ov->budget_usd));
    if (ov->confidence > 0)
        ok &= set_member(search, "confidence", cJSON_CreateNumber(ov->confidence));
    if (ov->max_nodes > 0)
        ok &= set_member(search, "max_nodes", cJSON_CreateNumber(ov->max_nodes));
    if (ov->max_gpus > 0)
        ok &= set_member(search, "max_gpus", cJSON_CreateNumber(ov->max_gpus));
    if (ov->n_clouds > 0)
        ok &= set_member(search, "clouds", string_array(ov->clouds, ov->n_clouds));
    if (ov->n_regions > 0)
        ok &= set_member(search, "regions", string_array(ov->regions, ov->n_regions));
    if (ov->n_gpus > 0)
        ok &= set_member(search, "gpus", string_array(ov->gpus, ov->n_gpus));
    return ok;
}

/* The spec was valid without the overrides, so what the revalidation
 * refused came from the command line: a usage error (exit 2) naming the
 * option, not the spec key it was written to ("search.deadline_hours:
 * expected ... up to 1e6" read as a fault of the file). The option is
 * found by the key path the validator failed at (an element of a list
 * override fails at "search.clouds[1]"), never by the message's words. */
static cf_status override_error(void)
{
    static const char *const keys[][2] = {
        {"search.objective", "--objective"},   {"search.spot", "--spot"},
        {"search.deadline_hours", "--deadline-hours"}, {"search.budget_usd", "--budget-usd"},
        {"search.confidence", "--confidence"}, {"search.max_nodes", "--max-nodes"},
        {"search.max_gpus", "--max-gpus"},     {"search.clouds", "--cloud"},
        {"search.regions", "--region"},        {"search.gpus", "--gpu"},
    };
    char why[1024], hint[512];
    snprintf(why, sizeof why, "%s", cf_error_message());
    snprintf(hint, sizeof hint, "%s", cf_error_hint_text());
    const char *failed = spec_failure_key();
    for (size_t i = 0; failed[0] && i < sizeof keys / sizeof *keys; i++) {
        size_t n = strlen(keys[i][0]);
        if (strncmp(failed, keys[i][0], n) != 0 || (failed[n] != '\0' && failed[n] != '['))
            continue;
        cf_error_set(CF_ERR_USAGE, "option '%s': %s", keys[i][1], spec_failure_text());
        if (hint[0])
            cf_error_hint("%s", hint);
        return CF_ERR_USAGE;
    }
    cf_error_set(CF_ERR_USAGE, "with the command-line overrides: %s", why);
    if (hint[0])
        cf_error_hint("%s", hint);
    return CF_ERR_USAGE;
}

cf_status cf_spec_effective(const cf_spec *spec, const cf_spec_overrides *ov, cf_spec *out)
{
    memset(out, 0, sizeof *out);
    if (!spec->canonical_json)
        return cf_error_set(CF_ERR_INTERNAL, "spec: no canonical JSON to apply overrides to");
    const char *path = spec->job.source[0] ? spec->job.source : NULL;
    if (!has_overrides(ov)) {
        cf_status st = cf_spec_parse(spec->canonical_json, strlen(spec->canonical_json), path, out);
        if (st == CF_OK)
            memcpy(out->source_hash, spec->source_hash, sizeof out->source_hash);
        return st;
    }
    cJSON *doc = cJSON_Parse(spec->canonical_json);
    if (!doc || !write_overrides(doc, ov)) {
        cJSON_Delete(doc);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!text)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_status st = cf_spec_parse(text, strlen(text), path, out);
    free(text);
    if (st == CF_OK)
        memcpy(out->source_hash, spec->source_hash, sizeof out->source_hash);
    else if (st == CF_ERR_INVALID)
        st = override_error();
    return st;
}

cf_status cf_spec_load_effective(const char *path, const cf_spec_overrides *ov, cf_spec *out)
{
    cf_status st = cf_spec_load_file(path, out);
    if (st != CF_OK || !has_overrides(ov))
        return st; /* without overrides the file's spec is the effective one */
    cf_spec file = *out;
    st = cf_spec_effective(&file, ov, out);
    cf_spec_free(&file);
    return st;
}

static cJSON *copy_member(const cJSON *from, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(from, key);
    return item ? cJSON_Duplicate(item, 1) : NULL;
}

/* The key over model, data, the recipe and profile.command. Without
 * model.precision (with_precision 0): a profile records the precision it
 * was measured in and recommend moves it to the spec's, so the key must not
 * change when the spec says how the job trains (recommend's note asks for
 * exactly that edit, which used to discard the profile). Never with
 * model.memory_format: the profile records its own too, and recommend
 * compares the two (older versions had no such key, so the key they
 * stored under has none either). */
static cf_status profile_key(const cf_spec *spec, int with_precision, char out[65])
{
    if (!spec->canonical_json)
        return cf_error_set(CF_ERR_INTERNAL, "spec: no canonical JSON to key the profile");
    cJSON *doc = cJSON_Parse(spec->canonical_json);
    cJSON *key = cJSON_CreateObject();
    if (!doc || !key) {
        cJSON_Delete(doc);
        cJSON_Delete(key);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    cJSON *item;
    if ((item = copy_member(doc, "model"))) {
        if (!with_precision)
            cJSON_DeleteItemFromObjectCaseSensitive(item, "precision");
        cJSON_DeleteItemFromObjectCaseSensitive(item, "memory_format");
        cJSON_AddItemToObject(key, "model", item);
    }
    if ((item = copy_member(doc, "data")))
        cJSON_AddItemToObject(key, "data", item);
    const cJSON *training = cJSON_GetObjectItemCaseSensitive(doc, "training");
    cJSON *t = cJSON_AddObjectToObject(key, "training");
    static const char *const training_keys[] = {"batch", "lr", "optimizer"};
    for (size_t i = 0; training && t && i < sizeof training_keys / sizeof *training_keys; i++)
        if ((item = copy_member(training, training_keys[i])))
            cJSON_AddItemToObject(t, training_keys[i], item);
    const cJSON *profile = cJSON_GetObjectItemCaseSensitive(doc, "profile");
    if (profile && (item = copy_member(profile, "command")))
        cJSON_AddItemToObject(key, "command", item);
    char *text = cJSON_PrintUnformatted(key);
    cJSON_Delete(doc);
    cJSON_Delete(key);
    if (!text)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_status st = cf_sha256_hex(text, strlen(text), out);
    free(text);
    return st;
}

cf_status cf_spec_profile_key(const cf_spec *spec, char out[65])
{
    return profile_key(spec, 0, out);
}

cf_status cf_spec_profile_key_before_precision(const cf_spec *spec, char out[65])
{
    out[0] = '\0';
    char now[65];
    cf_status st = profile_key(spec, 0, now);
    if (st == CF_OK)
        st = profile_key(spec, 1, out);
    if (st == CF_OK && strcmp(now, out) == 0)
        out[0] = '\0';
    return st;
}
