/* Price snapshots in the SQLite database (db/, docs/pricing.md "Snapshots").
 *
 * Each successful `prices update` stores one snapshot: the merged catalog
 * as gpu_vms.csv text, when it was fetched, which clouds were refreshed,
 * its row count and SHA-256, plus the refreshed rows in a queryable table.
 * A snapshot is written in one transaction, so a reader sees all of it or
 * none; the newest snapshot with status 'good' is the one in use: newest
 * by fetch time (the same second: by id), since `history migrate` gives
 * an older database's snapshots the destination's next ids. */
#ifndef CLOUDFIT_DB_SNAPSHOTS_H
#define CLOUDFIT_DB_SNAPSHOTS_H
#include <stddef.h>

#include "cloudfit/db.h"
#include "cloudfit/status.h"

typedef struct {
    const char *cloud, *region, *instance_type, *gpu_model;
    int gpu_count;
    double price_ondemand_usd_per_hr;
    double price_spot_usd_per_hr;     /* 0 = none */
} cf_snapshot_price;

typedef struct {
    const char *fetched_at;           /* ISO 8601 UTC */
    const char *sources;              /* refreshed clouds, "aws,azure" */
    const char *base;                 /* what the other rows came from: "embedded", "snapshot 3" */
    const char *vms_csv;              /* the whole merged catalog */
    size_t vms_csv_len;
    long row_count;
    const char *report;               /* warnings and notes of the update ("" when none) */
    const cf_snapshot_price *prices;  /* rows refreshed by this update */
    size_t n_prices;
} cf_snapshot_new;

typedef struct {
    long long id;
    char name[32];                    /* "snapshot-<id>" */
    char fetched_at[32];
    char sources[64];
    char base[64];
    long row_count;
    char content_hash[65];
    char *vms_csv;                    /* owned; NULL from cf_snapshot_list */
    size_t vms_csv_len;
} cf_snapshot;

/* Stores a snapshot (one transaction); *out_id gets its id. */
cf_status cf_snapshot_insert(cf_db *db, const cf_snapshot_new *snap, long long *out_id);
/* The newest good snapshot (by fetched_at, then id; one fetched after the
 * current time only when there is no other) with its CSV; *found = 0 when
 * there is none. */
cf_status cf_snapshot_latest(cf_db *db, cf_snapshot *out, int *found);
/* Up to `cap` snapshots, in the order cf_snapshot_latest ranks them (newest
 * fetched first, any fetched after the current time last), without CSV
 * text; *out_n = count. */
cf_status cf_snapshot_list(cf_db *db, cf_snapshot *out, size_t cap, size_t *out_n);
void cf_snapshot_free(cf_snapshot *snap);

#endif
