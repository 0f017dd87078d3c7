#include "io/evidence.h"

#include <string.h>

#include "commands.h"
#include "io/catalog_source.h"
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
