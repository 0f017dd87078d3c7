/* What the library's use cases say on the way (cf_note_fn,
 * cloudfit/usecase/evidence.h), as the CLI shows it. */
#ifndef CLOUDFIT_CLI_EVIDENCE_H
#define CLOUDFIT_CLI_EVIDENCE_H
#include "cloudfit/usecase/evidence.h"

/* Prints the library's notes: info and warnings on stderr; for
 * CF_NOTE_PRICES_IN_USE the too-old warning of the catalog source `ctx`
 * (cf_cli_catalog_warn; ctx may be NULL where no note of that kind comes). */
void cf_cli_note(void *ctx, cf_note_kind kind, const char *text);

#endif
