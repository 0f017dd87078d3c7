#include "io/evidence.h"

#include <string.h>

#include "commands.h"
#include "io/catalog_source.h"
#include "io/db_open.h"
#include "log.h"

void cf_cli_note(void *ctx, cf_note_kind kind, const char *text)
{
    if (kind == CF_NOTE_PRICES_IN_USE) {
        if (ctx)
            cf_cli_catalog_warn(ctx);
    } else if (kind == CF_NOTE_WARNING) {
        cf_log_warning("%s", text);
    } else if (kind == CF_NOTE_HINT) {
        cf_log_hint("%s", text);
    } else if (kind != CF_NOTE_PROGRESS) { /* a phase is shown only where a progress display runs */
        cf_log_info("%s", text);
    }
}

int cf_cli_evidence_read(const cf_cli_options *o, const cf_spec *spec, int with_recorded, cf_evidence *ev)
{
    char name[1024] = "";
    cf_db *db = NULL;
    if (cf_cli_db_open_existing(o, &db, name, sizeof name) != CF_OK) {
        memset(ev, 0, sizeof *ev);
        return cf_report_error();
    }
    cf_status st = cf_evidence_read(db, name, spec, with_recorded, cf_cli_note, NULL, ev);
    if (db)
        cf_db_close(db);
    return st == CF_OK ? 0 : cf_report_error();
}
