/* The evidence a recommendation can use, read from files and the database
 * for the library to weigh (cf_inputs_build decides what wins): the
 * measurement CSVs the spec's profile.gpus name, the profiles cached for
 * the spec (`cloudfit profile`) and the runs recorded for it (`cloudfit
 * record`). Reading never creates a database. */
#ifndef CLOUDFIT_CLI_EVIDENCE_H
#define CLOUDFIT_CLI_EVIDENCE_H
#include "cloudfit/advisor/inputs.h"
#include "cloudfit/pricing.h"
#include "cloudfit/spec.h"
#include "options.h"

typedef struct {
    cf_measurement_set given_rows[CF_SPEC_MAX_GPUS]; /* per spec->gpus[i]; empty when it names no file */
    cf_profile *profiles;        /* newest first */
    size_t n_profiles;
    char profiles_source[1024];  /* the database path */
    cf_recorded_run *recorded;
    size_t n_recorded;
} cf_cli_evidence;

/* Reads everything for `spec`; `with_recorded` also reads recorded runs.
 * Returns 0, or prints the error and returns the exit code. A profile
 * cache that cannot be read is a warning, not an error. */
int cf_cli_evidence_read(const cf_cli_options *o, const cf_spec *spec, int with_recorded, cf_cli_evidence *out);
/* The library's request over the evidence, the catalog and the offers to rank. */
void cf_cli_evidence_request(const cf_cli_evidence *ev, const cf_spec *spec, const cf_catalog *catalog,
                             const cf_vm *const *candidates, size_t n_candidates, cf_inputs_request *out);
void cf_cli_evidence_free(cf_cli_evidence *ev);

#endif
