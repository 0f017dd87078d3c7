/* The job spec: model.json → a validated cf_spec (docs/spec.md).
 *
 * This file holds the public API, the top level of the document and the
 * defaults; the sections live in spec_model.c (model, data, training),
 * spec_profile.c and spec_search.c, the shared readers in spec_check.c and
 * the JSON syntax diagnostics in common/json.c. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/common/hash.h"
#include "cloudfit/common/json.h"
#include "cloudfit/spec.h"
#include "cloudfit/common/escape.h"
#include "spec_internal.h"

#define SPEC_NAME_LEN_MAX (CF_SPEC_NAME_MAX - 1)
#define DEFAULT_GLOBAL_BATCH_FACTOR 64   /* max_global_batch default: 64 × training.batch */

static const char name_rule[] = "a name of 1 to 64 letters, digits, '.', '_' or '-'";

/* ---- name ------------------------------------------------------------------------ */

static int is_name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '-';
}

/* Hints a valid name made from `given` (other characters become '-'). */
static void hint_name(const char *given)
{
    char fixed[CF_SPEC_NAME_MAX];
    size_t n = 0;
    for (const char *p = given; *p && n < SPEC_NAME_LEN_MAX; p++)
        if (((unsigned char)*p & 0xC0) != 0x80)   /* one '-' per UTF-8 character */
            fixed[n++] = is_name_char(*p) ? *p : '-';
    fixed[n] = '\0';
    if (n == 0)
        cf_error_hint("for example \"resnet50-imagenet\"");
    else
        cf_error_hint("for example \"%s\"", fixed);
}

/* name: [A-Za-z0-9._-]{1,64}, at the current key path. */
static cf_status check_name(const spec_ctx *c, const cJSON *item, char *out)
{
    if (!cJSON_IsString(item))
        return spec_fail_type(c, name_rule, item);
    const char *name = item->valuestring;
    size_t len = strlen(name);
    int valid = len >= 1 && len <= SPEC_NAME_LEN_MAX;
    for (size_t i = 0; valid && i < len; i++)
        valid = is_name_char(name[i]);
    if (!valid) {
        cf_status st = spec_fail_value(c, name_rule, item);
        hint_name(name);
        return st;
    }
    memcpy(out, name, len + 1);
    return CF_OK;
}

static cf_status read_name(spec_ctx *c, const cJSON *root, cf_spec *out)
{
    const cJSON *item = spec_member(root, "name");
    if (!item)
        return spec_fail_missing(c, "name", "\"resnet50-imagenet\" (letters, digits, '.', '_', '-')");
    size_t mark = spec_push_key(c, "name");
    cf_status st = check_name(c, item, out->job.name);
    spec_pop(c, mark);
    return st;
}

/* ---- top level --------------------------------------------------------------------- */

/* "$schema" and "description" are accepted and ignored, but must be strings. */
static cf_status check_ignored_string(spec_ctx *c, const cJSON *root, const char *key)
{
    const cJSON *item = spec_member(root, key);
    if (!item || cJSON_IsString(item))
        return CF_OK;
    size_t mark = spec_push_key(c, key);
    cf_status st = spec_fail_type(c, "a string", item);
    spec_pop(c, mark);
    return st;
}

static void set_defaults(cf_spec *out)
{
    out->job.gradient_bytes = 4;
    snprintf(out->job.activation, sizeof out->job.activation, "relu");
    snprintf(out->job.data_source, sizeof out->job.data_source, "synthetic");
    out->job.optimizer = CF_OPT_SGD;
    out->job.lr_rule = CF_LR_AUTO;
    out->probe.steps = 30;
    out->search.objective = CF_OBJ_COST;
    out->search.max_gpus = CF_MAX_GPUS_DEFAULT;
    out->search.max_nodes = CF_MAX_NODES_DEFAULT;
    out->search.max_accumulation = 8;
    out->search.spot = CF_SPOT_NEVER;
    out->search.startup_minutes = 10.0;
    out->search.confidence = 0.9;
    out->search.checkpoint_minutes = 0.0; /* from the checkpoint size and storage_mb_per_s */
    out->search.storage_mb_per_s = 125.0;  /* CF_DEFAULT_STORAGE_MB_PER_S (advisor/spot_replay.h) */
}

/* Defaults that depend on other fields, once everything is read. */
static void finish_defaults(cf_spec *out)
{
    if (out->search.max_global_batch == 0) {
        long long limit = (long long)DEFAULT_GLOBAL_BATCH_FACTOR * out->job.batch;
        out->search.max_global_batch = limit > INT_MAX ? INT_MAX : (int)limit;
    }
}

static cf_status read_document(spec_ctx *c, const cJSON *root, cf_spec *out)
{
    if (!cJSON_IsObject(root))
        return spec_fail_type(c, "a JSON object at the top level", root);
    cf_status st = spec_check_keys(c, root, cf_spec_allowed_keys(""));
    if (st == CF_OK)
        st = check_ignored_string(c, root, "$schema");
    if (st == CF_OK)
        st = check_ignored_string(c, root, "description");
    if (st == CF_OK)
        st = read_name(c, root, out);
    if (st == CF_OK)
        st = spec_read_model(c, root, out);
    if (st == CF_OK)
        st = spec_read_data(c, root, out);
    if (st == CF_OK)
        st = spec_read_training(c, root, out);
    if (st == CF_OK)
        st = spec_read_profile(c, root, out);
    if (st == CF_OK)
        st = spec_read_search(c, root, out);
    if (st == CF_OK)
        finish_defaults(out);
    return st;
}

/* Keeps the document printed without whitespace (out->canonical_json) and its
 * SHA-256, so that formatting does not change the hash. */
static cf_status keep_canonical(const cJSON *root, const char *file, cf_spec *out)
{
    out->canonical_json = cJSON_PrintUnformatted(root);
    if (!out->canonical_json)
        return cf_error_set(CF_ERR_NOMEM, "%s: out of memory", file);
    cf_status st = cf_sha256_hex(out->canonical_json, strlen(out->canonical_json), out->hash);
    memcpy(out->source_hash, out->hash, sizeof out->hash);
    return st;
}

/* ---- public API ---------------------------------------------------------------------- */

/* Fills the context for `path` (NULL: "<spec>", paths in the spec kept as given). */
static cf_status init_context(spec_ctx *c, const char *path, cf_spec *out)
{
    memset(c, 0, sizeof *c);
    c->file = path ? path : "<spec>";
    if (!path)
        return CF_OK;
    if (strlen(path) >= CF_PATH_MAX)
        return cf_error_set(CF_ERR_INVALID, "%.*s...: path too long (at most %d bytes)",
                            (int)cf_utf8_prefix(path, 64), path, CF_PATH_MAX - 1);
    memcpy(out->job.source, path, strlen(path) + 1);
    cf_dirname(path, c->dir, sizeof c->dir);
    return CF_OK;
}

cf_status cf_spec_parse(const char *json_text, size_t len, const char *path, cf_spec *out)
{
    memset(out, 0, sizeof *out);
    spec_failure_reset();
    if (!json_text)
        return cf_error_set(CF_ERR_INVALID, "%s: no JSON text", path ? path : "<spec>");
    spec_ctx *c = malloc(sizeof *c);
    if (!c)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cJSON *root = NULL;
    cf_status st = init_context(c, path, out);
    if (st == CF_OK)
        st = cf_json_parse(json_text, len, c->file, &root);
    if (st == CF_OK) {
        set_defaults(out);
        st = read_document(c, root, out);
    }
    if (st == CF_OK)
        st = keep_canonical(root, c->file, out);
    cJSON_Delete(root);
    free(c);
    if (st != CF_OK) {
        cf_spec_free(out);
        memset(out, 0, sizeof *out);
    }
    return st;
}

cf_status cf_spec_load_file(const char *path, cf_spec *out)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK)
        return st;
    st = cf_spec_parse(text, len, path, out);
    free(text);
    return st;
}

void cf_spec_free(cf_spec *spec)
{
    if (!spec)
        return;
    for (int i = 0; i < CF_SPEC_MAX_ARGV; i++) {
        free(spec->probe.command[i]);
        spec->probe.command[i] = NULL;
    }
    spec->probe.n_command = 0;
    free(spec->canonical_json);
    spec->canonical_json = NULL;
}

static void add_input(cf_spec_input_file *out, size_t cap, size_t *n, const char *key, const char *gpu,
                      const char *path)
{
    if (!path[0])
        return;
    if (*n < cap) {
        snprintf(out[*n].key, sizeof out[*n].key, "%s%s", key, gpu ? gpu : "");
        out[*n].path = path;
    }
    (*n)++;
}

size_t cf_spec_input_files(const cf_spec *spec, cf_spec_input_file *out, size_t cap)
{
    size_t n = 0;
    if (strcmp(spec->job.data_source, "npy") == 0) {
        add_input(out, cap, &n, "data.source.npy.x", NULL, spec->job.npy_x);
        add_input(out, cap, &n, "data.source.npy.y", NULL, spec->job.npy_y);
    } else if (strcmp(spec->job.data_source, "tokens") == 0) {
        add_input(out, cap, &n, "data.source.tokens", NULL, spec->job.tokens_path);
    }
    for (int i = 0; i < spec->n_gpus; i++)
        add_input(out, cap, &n, "profile.gpus.", spec->gpus[i].gpu, spec->gpus[i].measurements_path);
    return n < cap ? n : cap;
}
