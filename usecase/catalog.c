#include "cloudfit/usecase/catalog.h"

#include <stdio.h>
#include <string.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/db/snapshots.h"

cf_status cf_catalog_source_read(cf_db *db, const char *db_name, double max_age_days, const char *overrides_path,
                                 cf_note_fn note, void *note_ctx, cf_catalog_source *out)
{
    memset(out, 0, sizeof *out);
    int found = 0;
    cf_snapshot snap;
    char where[1100] = "";
    cf_status st = db ? cf_snapshot_latest(db, &snap, &found) : CF_OK;
    if (st != CF_OK)
        return st;
    if (found)
        snprintf(where, sizeof where, "%s:%s", db_name ? db_name : "", snap.name);
    cf_snapshot_text text = {.vms_csv = found ? snap.vms_csv : NULL, .vms_csv_len = found ? snap.vms_csv_len : 0,
                             .where = where, .name = found ? snap.name : "", .fetched_at = found ? snap.fetched_at : "",
                             .sources = found ? snap.sources : "", .base = found ? snap.base : ""};
    st = cf_catalog_source_open(found ? &text : NULL, max_age_days, overrides_path, out);
    if (found)
        cf_snapshot_free(&snap);
    if (st != CF_OK)
        return st;
    /* A price dated after today was fetched by a clock that was ahead (or
     * this one is behind): its age reads as 0 days, which it is not. */
    char now[32];
    cf_now_iso8601(now, sizeof now);
    if (note && out->catalog.data_date[0] && strncmp(out->catalog.data_date, now, 10) > 0) {
        char line[512];
        snprintf(line, sizeof line, "the catalog in use (%s) has prices dated up to %s, after today (%.10s): the "
                 "clock was ahead when they were fetched, or is behind now; their age is not known", out->snapshot,
                 out->catalog.data_date, now);
        note(note_ctx, CF_NOTE_WARNING, line);
    }
    for (size_t i = 0; i < out->overrides.n && note; i++) {
        const cf_price_override *r = &out->overrides.items[i];
        char line[1400];
        if (!r->rows_matched) {
            snprintf(line, sizeof line, "%s: %s matches no catalog row; it changes nothing", out->overrides.path,
                     r->key_path);
            note(note_ctx, CF_NOTE_WARNING, line);
        }
        if (r->spot_left_out) {
            snprintf(line, sizeof line,
                     "%s: %s leaves the spot price of %zu offer%s at or above the on-demand price (%s%s); %s left "
                     "out: a spot price that is no discount is not a spot price",
                     out->overrides.path, r->key_path, r->spot_left_out, r->spot_left_out == 1 ? "" : "s",
                     r->spot_left_out_example, r->spot_left_out == 1 ? "" : ", …",
                     r->spot_left_out == 1 ? "its spot price is" : "their spot prices are");
            note(note_ctx, CF_NOTE_WARNING, line);
        }
    }
    return CF_OK;
}
