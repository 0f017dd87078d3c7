/* The spec module's front door: the job spec (model.json, docs/spec.md)
 * as a validated plain struct, and the effective spec a command runs with.
 *
 * Parsing is strict: an unknown key, a wrong type or an out-of-range value is
 * CF_ERR_INVALID with a message that names the file and the key path, e.g.
 *   model.json: training.batch: expected a positive integer, got -1
 * and usually a hint (cf_error_hint_text()). */
#ifndef CLOUDFIT_SPEC_H
#define CLOUDFIT_SPEC_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "cloudfit/spec/types.h"

typedef struct {
    cf_job job;                         /* model, data, training (job.name, job.source) */
    cf_constraints search;              /* the search section */
    cf_probe_settings probe;            /* profile.backend, command, local_batches, steps */

    /* profile: what is already known */
    int has_noise_scale;
    double noise_scale;                 /* constant B_noise (when n_noise_trace == 0) */
    cf_noise_point noise_trace[CF_SPEC_MAX_TRACE];
    int n_noise_trace;                  /* sorted by progress */
    cf_gpu_profile_given gpus[CF_SPEC_MAX_GPUS];
    int n_gpus;

    char hash[65];                      /* SHA-256 hex of the canonical (unformatted) JSON */
    char source_hash[65];               /* the hash of the file as given, before command-line overrides
                                           (cf_spec_effective); equal to hash otherwise */
    char *canonical_json;               /* that canonical JSON, owned (freed by cf_spec_free) */
} cf_spec;

/* Parses and validates JSON text. `path` names the source in messages and
 * is the base for relative paths inside the spec (may be NULL: "<spec>"). */
cf_status cf_spec_parse(const char *json_text, size_t len, const char *path, cf_spec *out);
/* Reads and parses a file. */
cf_status cf_spec_load_file(const char *path, cf_spec *out);
/* Frees owned members (canonical JSON, command argv); the struct itself is
 * the caller's. */
void cf_spec_free(cf_spec *spec);

/* A file the spec names: an input of every command that reads the spec,
 * which no output option may replace. `key` is its key path as messages
 * name it ("profile.gpus.T4", "data.source.npy.x"), `path` the file as the
 * command opens it (resolved against the spec's folder; points into the
 * spec). */
typedef struct {
    char key[CF_GPU_NAME_MAX + 16];
    const char *path;
} cf_spec_input_file;
/* profile.gpus.<GPU> (each GPU), data.source.npy.{x,y}, data.source.tokens */
#define CF_SPEC_MAX_INPUT_FILES (CF_SPEC_MAX_GPUS + 3)
/* Every file the spec names, in the order of the document: fills
 * out[0..cap) and returns how many there are (at most
 * CF_SPEC_MAX_INPUT_FILES). Every path key of docs/spec.md ("paths") is
 * listed here: a key read with spec_read_path is one. */
size_t cf_spec_input_files(const cf_spec *spec, cf_spec_input_file *out, size_t cap);

/* Overrides of the search section from the command line; a field left at
 * its "not given" value keeps the spec's. */
typedef struct {
    int objective;                      /* cf_objective, -1 = not given */
    int spot;                           /* cf_spot_policy, -1 = not given */
    double deadline_hours;              /* <= 0 = not given */
    double budget_usd;                  /* <= 0 = not given */
    double confidence;                  /* <= 0 = not given */
    int max_nodes, max_gpus;            /* <= 0 = not given */
    const char *const *clouds; int n_clouds;   /* 0 = not given */
    const char *const *regions; int n_regions;
    const char *const *gpus; int n_gpus;
} cf_spec_overrides;

void cf_spec_overrides_init(cf_spec_overrides *ov);
/* The effective spec: `spec` with the overrides written into its search
 * section, validated by the same rules as the file and with its canonical
 * JSON and hash recomputed, so that what is hashed and stored is what was
 * computed. `out` is a new spec (free with cf_spec_free); `spec` is not
 * changed. Without overrides `out` equals `spec`. */
cf_status cf_spec_effective(const cf_spec *spec, const cf_spec_overrides *ov, cf_spec *out);
/* cf_spec_load_file, then cf_spec_effective with `ov` (may be NULL): the
 * file is parsed once, and a second time only when an override is given. */
cf_status cf_spec_load_effective(const char *path, const cf_spec_overrides *ov, cf_spec *out);

/* The key a profile is cached under: SHA-256 of the spec's model (less
 * model.precision: the profile records its own), data and
 * training.{batch, lr, optimizer} sections and profile.command — what a
 * measurement depends on — so that editing the deadline, the search or the
 * job's precision does not discard a profile. */
cf_status cf_spec_profile_key(const cf_spec *spec, char out[65]);

/* The key older versions cached the profile under, model.precision
 * included, when it is another than cf_spec_profile_key's; else "". The
 * profile cache is read under both, so such profiles stay in use. */
cf_status cf_spec_profile_key_before_precision(const cf_spec *spec, char out[65]);

/* Allowed values of an enum-valued key ("training.optimizer", ...),
 * NULL-terminated, for messages and the schema; NULL for other keys. */
const char *const *cf_spec_enum_values(const char *key_path);

/* One numeric key and the range the validator accepts: the validator's own
 * rules (spec/spec_limits.c), listed so that tests can run every command
 * on the extreme accepted values. Keys as in messages, "*" for a GPU name,
 * "[]" for each element of an array. */
typedef struct {
    const char *key;
    double lo, hi;          /* accepted: [lo, hi], or (lo, hi] with lo_exclusive */
    int lo_exclusive;
    int integer;            /* whole numbers only */
} cf_spec_limit;
/* Fills out[0..cap) and returns how many keys there are. */
size_t cf_spec_limits(cf_spec_limit *out, size_t cap);

#endif
