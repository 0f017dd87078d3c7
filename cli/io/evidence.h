/* The evidence a command's recommendation can use (the library reads it:
 * cloudfit/usecase/evidence.h), from the database the options name. */
#ifndef CLOUDFIT_CLI_EVIDENCE_H
#define CLOUDFIT_CLI_EVIDENCE_H
#include "cloudfit/usecase/evidence.h"
#include "options.h"

/* Opens the database when there is one (never creating it) and reads
 * everything for `spec` (cf_evidence_read); `with_recorded` also reads
 * recorded runs. Returns 0, or prints the error and returns the exit code. */
int cf_cli_evidence_read(const cf_cli_options *o, const cf_spec *spec, int with_recorded, cf_evidence *out);
/* Prints the library's notes: info and warnings on stderr; for
 * CF_NOTE_PRICES_IN_USE the too-old warning of the catalog source `ctx`
 * (cf_cli_catalog_warn; ctx may be NULL where no note of that kind comes). */
void cf_cli_note(void *ctx, cf_note_kind kind, const char *text);

#endif
