/* Private to spec/: the validation context and the typed readers that the
 * spec_*.c files share. Nothing outside spec/ includes this header.
 *
 * Every reader validates one JSON value that sits at the context's current
 * key path, and on failure sets the thread's error (CF_ERR_INVALID) as
 *   FILE: KEY.PATH: expected WHAT, got GOT
 * plus a hint when the fix is obvious. Readers write scalar outputs only on
 * success, so callers can preset defaults (array readers may fill elements
 * before failing, but set the count only on success). */
#ifndef CLOUDFIT_SPEC_INTERNAL_H
#define CLOUDFIT_SPEC_INTERNAL_H
#include <cjson/cJSON.h>
#include <stddef.h>

#include "cloudfit/spec.h"

#define SPEC_KEYPATH_MAX 512

typedef struct {
    const char *file;               /* name used in messages: the path as given, or "<spec>" */
    char dir[CF_PATH_MAX];          /* base for relative paths in the spec; "" = leave them as given */
    char keypath[SPEC_KEYPATH_MAX]; /* current key path, e.g. "profile.gpus.T4" ("" = the top level) */
    size_t keypath_len;
} spec_ctx;

/* Integer rule: accepted values are integral JSON numbers in [lo, hi]. */
typedef struct {
    long lo, hi;
    const char *what;               /* "a positive integer", "an integer from 3 to 100000" */
} spec_int_rule;

/* Number rule: accepted values are finite numbers in (lo, hi] when
 * lo_exclusive, else [lo, hi]. */
typedef struct {
    double lo, hi;
    int lo_exclusive;
    const char *what;               /* "a positive number", "a number >= 0" */
} spec_num_rule;

/* spec_limits.c: the rule of every numeric key (cf_spec_limits lists them). */
extern const spec_int_rule SPEC_POSITIVE_INT;
extern const spec_int_rule SPEC_DIMENSION;   /* a size that sizes an allocation: 1 to 2^20 */
extern const spec_num_rule SPEC_RULE_PARAMETERS, SPEC_RULE_FLOPS_PER_SAMPLE, SPEC_RULE_MEMORY_PER_SAMPLE_MIB,
    SPEC_RULE_EPOCHS, SPEC_RULE_TRAINING_SAMPLES, SPEC_RULE_LR, SPEC_RULE_NOISE_SCALE, SPEC_RULE_TRACE_PROGRESS,
    SPEC_RULE_ALPHA_S, SPEC_RULE_BETA_S, SPEC_RULE_GBPS, SPEC_RULE_LATENCY_S, SPEC_RULE_OVERLAP_GAMMA,
    SPEC_RULE_DEADLINE_HOURS, SPEC_RULE_BUDGET_USD, SPEC_RULE_MINUTES, SPEC_RULE_CONFIDENCE,
    SPEC_RULE_STORAGE_MB_PER_S;
extern const spec_int_rule SPEC_RULE_GRADIENT_BYTES, SPEC_RULE_BATCH, SPEC_RULE_CURRENT_GPUS_PER_NODE,
    SPEC_RULE_CURRENT_NODES, SPEC_RULE_MAX_LOCAL_BATCH, SPEC_RULE_PROBE_STEPS, SPEC_RULE_MAX_GPUS,
    SPEC_RULE_MAX_NODES, SPEC_RULE_MAX_ACCUMULATION, SPEC_RULE_MAX_GLOBAL_BATCH;

/* ---- spec_check.c: key path ----------------------------------------------- */

/* Appends ".key" (or "key" at the top level) / "[index]" to the key path and
 * returns a mark that spec_pop() restores. */
size_t spec_push_key(spec_ctx *c, const char *key);
size_t spec_push_index(spec_ctx *c, int index);
void spec_pop(spec_ctx *c, size_t mark);

/* ---- spec_check.c: errors --------------------------------------------------- */

/* "FILE: KEY.PATH: " followed by the formatted text. */
cf_status spec_fail(const spec_ctx *c, const char *fmt, ...) CF_PRINTF(2, 3);
/* The key path ("" at the top level) and text of this thread's last
 * spec_fail since spec_failure_reset(); both "" when the last error was
 * not a value's (a JSON syntax error, out of memory). cf_spec_parse resets
 * it on entry. */
void spec_failure_reset(void);
const char *spec_failure_key(void);
const char *spec_failure_text(void);
/* "expected WHAT, got TYPE" where TYPE names got's JSON type ("a string"). */
cf_status spec_fail_type(const spec_ctx *c, const char *what, const cJSON *got);
/* "expected WHAT, got VALUE" where VALUE is got itself (-1, "sometimes"). */
cf_status spec_fail_value(const spec_ctx *c, const char *what, const cJSON *got);
/* "KEY.PATH.key: required key is missing", hint `add "key": example`. */
cf_status spec_fail_missing(spec_ctx *c, const char *key, const char *example);

/* ---- spec_check.c: objects and keys ---------------------------------------- */

/* Member `key` of obj (case-sensitive), NULL when absent. */
const cJSON *spec_member(const cJSON *obj, const char *key);
/* Fails unless item is an object. */
cf_status spec_expect_object(const spec_ctx *c, const cJSON *item);
/* Checks that obj has no duplicate keys and only keys listed in `allowed`
 * (NULL-terminated); an unknown key's hint suggests the nearest allowed key
 * or lists them all. */
cf_status spec_check_keys(spec_ctx *c, const cJSON *obj, const char *const *allowed);
/* Checks that obj has no duplicate keys (for objects with free-form keys). */
cf_status spec_check_duplicates(spec_ctx *c, const cJSON *obj);
/* The entry of `names` (NULL-terminated) nearest to `word` by edit distance
 * when it is close enough to be a likely typo, else NULL. */
const char *spec_suggest(const char *word, const char *const *names);

/* ---- spec_check.c: values at the current key path --------------------------- */

cf_status spec_read_int(const spec_ctx *c, const cJSON *item, const spec_int_rule *rule, int *out);
/* A positive integral number that may exceed INT_MAX (up to CF_SPEC_MAX_SAMPLES, 2^53). */
cf_status spec_read_count(const spec_ctx *c, const cJSON *item, double *out);
cf_status spec_read_number(const spec_ctx *c, const cJSON *item, const spec_num_rule *rule, double *out);
/* One of `names` (NULL-terminated); *out_index is its position. */
cf_status spec_read_enum(const spec_ctx *c, const cJSON *item, const char *const *names, int *out_index);
/* A non-empty string of at most max_len bytes, copied into out (size > max_len). */
cf_status spec_read_string(const spec_ctx *c, const cJSON *item, size_t max_len, char *out);
/* A non-empty file path, resolved against c->dir, into out[CF_PATH_MAX].
 * A key read with it is an input file: list it in cf_spec_input_files. */
cf_status spec_read_path(const spec_ctx *c, const cJSON *item, char *out);
/* An array of min..max elements; `what` describes it ("an array of 1 to 32
 * positive integers"). *out_count gets its size. */
cf_status spec_read_array(const spec_ctx *c, const cJSON *item, int min, int max, const char *what,
                          int *out_count);

/* An array of min..max integers, each checked by `rule`; with `increasing`
 * each must exceed the one before. Errors name the element ("KEY[2]"). */
cf_status spec_read_int_array(spec_ctx *c, const cJSON *item, int min, int max, const char *what,
                              const spec_int_rule *rule, int increasing, int *out, int *out_count);
/* text as a quoted JSON-style string, shortened for messages. */
void spec_quote(const char *text, char *out, size_t n);

/* ---- spec_check.c: members of an object ------------------------------------- */
/* Each reads obj[key] with the key pushed on the path. When the key is absent
 * it fails with "required key is missing" if `example` is non-NULL (the hint
 * shows it), else returns CF_OK leaving *out as it was. *present (may be
 * NULL) tells whether the key was there. */

cf_status spec_field_int(spec_ctx *c, const cJSON *obj, const char *key, const spec_int_rule *rule,
                         const char *example, int *out);
cf_status spec_field_number(spec_ctx *c, const cJSON *obj, const char *key, const spec_num_rule *rule,
                            const char *example, double *out);
cf_status spec_field_enum(spec_ctx *c, const cJSON *obj, const char *key, const char *const *names,
                          int *out_index);
cf_status spec_field_string(spec_ctx *c, const cJSON *obj, const char *key, size_t max_len,
                            const char *example, char *out);

/* Reads obj[key] as an object through `reader` (which checks its keys), with
 * the key pushed on the path. Absent: as above. */
typedef cf_status (*spec_object_reader)(spec_ctx *c, const cJSON *obj, cf_spec *out);
cf_status spec_field_object(spec_ctx *c, const cJSON *obj, const char *key, const char *example,
                            spec_object_reader reader, cf_spec *out);

/* ---- spec_model.c: the sections of model.json --------------------------------- */

cf_status spec_read_model(spec_ctx *c, const cJSON *root, cf_spec *out);
cf_status spec_read_data(spec_ctx *c, const cJSON *root, cf_spec *out);
cf_status spec_read_training(spec_ctx *c, const cJSON *root, cf_spec *out);
/* ---- spec_profile.c ----------------------------------------------------------- */
cf_status spec_read_profile(spec_ctx *c, const cJSON *root, cf_spec *out);
/* ---- spec_search.c ------------------------------------------------------------ */
cf_status spec_read_search(spec_ctx *c, const cJSON *root, cf_spec *out);

/* ---- allowed keys, also read by the schema agreement test ------------------- */

/* The keys allowed in the object at `section` (a key path with "*" for a GPU
 * name, e.g. "profile.gpus.*.sync_s"), or NULL when the section is unknown. */
const char *const *cf_spec_allowed_keys(const char *section);

#endif
