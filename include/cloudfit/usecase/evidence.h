/* The evidence a recommendation can use, read for the library to weigh
 * (cf_inputs_build decides what wins): the measurement CSVs the spec's
 * profile.gpus name, the profiles cached for the spec (`cloudfit profile`)
 * and the runs recorded for it (`cloudfit record`), from the database
 * handle the caller opened. Reading never creates a database. */
#ifndef CLOUDFIT_USECASE_EVIDENCE_H
#define CLOUDFIT_USECASE_EVIDENCE_H
#include "cloudfit/advisor/inputs.h"
#include "cloudfit/db.h"
#include "cloudfit/pricing.h"
#include "cloudfit/spec.h"

/* What a use case says on the way, besides its result: the library never
 * prints, it hands each note to the caller's function. */
typedef enum {
    CF_NOTE_INFO,         /* e.g. which cached profile is used */
    CF_NOTE_WARNING,      /* e.g. a cached profile is unreadable and is not used */
    CF_NOTE_PRICES_IN_USE, /* text NULL: the catalog source now says which prices are in use
                            * (cf_catalog_source_set_in_use), so their age can be warned about */
    CF_NOTE_HINT,          /* how to act on the warning just before */
    CF_NOTE_PROGRESS       /* a long run's next phase begins (e.g. validate's fitting) */
} cf_note_kind;
typedef void (*cf_note_fn)(void *ctx, cf_note_kind kind, const char *text);

typedef struct {
    cf_measurement_set given_rows[CF_SPEC_MAX_GPUS]; /* per spec->gpus[i]; empty when it names no file */
    cf_profile *profiles;        /* newest first */
    size_t n_profiles;
    char profiles_source[1024];  /* the database's name as it may be shown; "" without one */
    cf_recorded_run *recorded;
    size_t n_recorded;
} cf_evidence;

/* Reads everything for `spec` from its files and from `db` (NULL = no
 * database yet: nothing profiled or recorded), shown as `db_name`;
 * `with_recorded` also reads recorded runs. A profile cache that cannot be
 * read is a warning (through `note`, which may be NULL), not an error. On
 * failure `out` holds nothing to free. */
cf_status cf_evidence_read(cf_db *db, const char *db_name, const cf_spec *spec, int with_recorded, cf_note_fn note,
                           void *note_ctx, cf_evidence *out);
/* The library's request over the evidence, the catalog and the offers to rank. */
void cf_evidence_request(const cf_evidence *ev, const cf_spec *spec, const cf_catalog *catalog,
                         const cf_vm *const *candidates, size_t n_candidates, cf_inputs_request *out);
void cf_evidence_free(cf_evidence *ev);
/* How much of what cf_evidence_read reads for `spec` from `db` came after
 * a recommendation made at `since` (ISO 8601 UTC; `since_id` its history
 * id, 0 = none): recorded runs (a run of that recommendation or a later
 * one always did; else one recorded once `since_id` was stored, or, where
 * the row does not say, by when it was recorded) and cached profiles (by
 * when they were made). What an earlier recommendation's prediction
 * could not use. A profile cache that cannot be read counts none. */
cf_status cf_evidence_count_since(cf_db *db, const cf_spec *spec, const char *since, long long since_id,
                                  size_t *n_recorded, size_t *n_profiles);

#endif
