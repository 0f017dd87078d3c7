#include "db_internal.h"

/* Numbered migrations: migration i brings user_version from i to i+1.
 * Never edit a released migration; append a new one. */
const char *const cf_db_migrations[] = {
    /* 1: specs and recommendations */
    "CREATE TABLE specs ("
    "  hash TEXT PRIMARY KEY,"
    "  name TEXT NOT NULL,"
    "  json TEXT NOT NULL,"
    "  first_seen TEXT NOT NULL);"
    "CREATE TABLE recommendations ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  created_at TEXT NOT NULL,"
    "  tool_version TEXT NOT NULL,"
    "  spec_hash TEXT NOT NULL REFERENCES specs(hash),"
    "  spec_name TEXT NOT NULL,"
    "  objective TEXT NOT NULL,"
    "  catalog_name TEXT NOT NULL,"
    "  catalog_date TEXT NOT NULL,"
    "  cloud TEXT NOT NULL, region TEXT NOT NULL, instance_type TEXT NOT NULL, gpu TEXT NOT NULL,"
    "  gpus_per_node INTEGER NOT NULL, nodes INTEGER NOT NULL,"
    "  local_batch INTEGER NOT NULL, accumulation INTEGER NOT NULL, global_batch INTEGER NOT NULL,"
    "  lr REAL NOT NULL, spot INTEGER NOT NULL,"
    "  step_time_s REAL NOT NULL, hours REAL NOT NULL, total_usd REAL NOT NULL,"
    "  usd_per_node_hour REAL NOT NULL,"
    "  result_json TEXT NOT NULL);"
    "CREATE INDEX recommendations_spec ON recommendations(spec_hash, created_at);",
    /* 2: history and CI metadata (alternatives, CI runs, gates) — issue 5 */
    "SELECT 1;",
    /* 3: price snapshots — issue 4 */
    "SELECT 1;",
    /* 4: profile cache — issue 3 */
    "SELECT 1;",
};

const int cf_db_migration_count = (int)(sizeof cf_db_migrations / sizeof *cf_db_migrations);
