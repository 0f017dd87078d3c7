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
    /* 2: history and CI metadata (alternatives, CI runs, gates) — issue 5.
     * Child rows cascade with their recommendation (history prune);
     * recorded measurements outlive it (they carry spec hash and GPU). */
    "CREATE TABLE alternatives ("
    "  recommendation_id INTEGER NOT NULL REFERENCES recommendations(id) ON DELETE CASCADE,"
    "  rank INTEGER NOT NULL,"
    "  cloud TEXT NOT NULL, region TEXT NOT NULL, instance_type TEXT NOT NULL, gpu TEXT NOT NULL,"
    "  gpus_per_node INTEGER NOT NULL, nodes INTEGER NOT NULL,"
    "  local_batch INTEGER NOT NULL, accumulation INTEGER NOT NULL, global_batch INTEGER NOT NULL,"
    "  lr REAL NOT NULL, spot INTEGER NOT NULL,"
    "  step_time_s REAL NOT NULL, hours REAL NOT NULL, total_usd REAL NOT NULL,"
    "  usd_per_node_hour REAL NOT NULL,"
    "  PRIMARY KEY (recommendation_id, rank));"
    "CREATE TABLE ci_runs ("
    "  recommendation_id INTEGER PRIMARY KEY REFERENCES recommendations(id) ON DELETE CASCADE,"
    "  provider TEXT NOT NULL, commit_sha TEXT NOT NULL, branch TEXT NOT NULL, base_branch TEXT NOT NULL,"
    "  pull_request TEXT NOT NULL, run_id TEXT NOT NULL, run_url TEXT NOT NULL);"
    "CREATE INDEX ci_runs_branch ON ci_runs(branch);"
    "CREATE TABLE gate_results ("
    "  recommendation_id INTEGER NOT NULL REFERENCES recommendations(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL, limit_value REAL NOT NULL, value REAL, passed INTEGER NOT NULL, note TEXT NOT NULL,"
    "  PRIMARY KEY (recommendation_id, name));"
    "CREATE TABLE measurements ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  recommendation_id INTEGER REFERENCES recommendations(id) ON DELETE SET NULL,"
    "  recorded_at TEXT NOT NULL, spec_hash TEXT NOT NULL, spec_name TEXT NOT NULL,"
    "  cloud TEXT NOT NULL, instance_type TEXT NOT NULL, gpu TEXT NOT NULL,"
    "  gpus_per_node INTEGER NOT NULL, nodes INTEGER NOT NULL,"
    "  local_batch INTEGER NOT NULL, accumulation INTEGER NOT NULL,"
    "  step_time_s REAL, total_hours REAL, total_usd REAL,"
    "  predicted_step_time_s REAL NOT NULL, predicted_hours REAL NOT NULL, predicted_total_usd REAL NOT NULL,"
    "  note TEXT NOT NULL);"
    "CREATE INDEX measurements_spec ON measurements(spec_hash, gpu);"
    "CREATE INDEX recommendations_created ON recommendations(created_at);",
    /* 3: price snapshots — issue 4 (db/snapshots.c, cloudfit/snapshot.h) */
    "CREATE TABLE price_snapshots ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  fetched_at TEXT NOT NULL,"
    "  sources TEXT NOT NULL,"
    "  base TEXT NOT NULL,"
    "  row_count INTEGER NOT NULL CHECK (row_count > 0),"
    "  content_hash TEXT NOT NULL,"
    "  status TEXT NOT NULL CHECK (status IN ('good', 'retired')),"
    "  vms_csv TEXT NOT NULL,"
    "  report TEXT NOT NULL);"
    "CREATE TABLE price_snapshot_rows ("
    "  snapshot_id INTEGER NOT NULL REFERENCES price_snapshots(id) ON DELETE CASCADE,"
    "  cloud TEXT NOT NULL, region TEXT NOT NULL, instance_type TEXT NOT NULL,"
    "  gpu_model TEXT NOT NULL, gpu_count INTEGER NOT NULL,"
    "  price_ondemand_usd_per_hr REAL NOT NULL CHECK (price_ondemand_usd_per_hr > 0),"
    "  price_spot_usd_per_hr REAL CHECK (price_spot_usd_per_hr > 0),"
    "  PRIMARY KEY (snapshot_id, cloud, region, instance_type, gpu_model, gpu_count));",
    /* 4: profile cache — issue 3. One row per (spec key, backend, device):
     * a new profile of the same triple replaces the old one. The whole
     * profile is JSON (profiler/profile_json.c); a few figures are copied
     * into columns for queries. */
    "CREATE TABLE profiles ("
    "  spec_key TEXT NOT NULL,"
    "  backend TEXT NOT NULL,"
    "  device TEXT NOT NULL,"
    "  spec_name TEXT NOT NULL,"
    "  created_at TEXT NOT NULL,"
    "  is_gpu INTEGER NOT NULL,"
    "  b_noise REAL,"
    "  max_local_batch INTEGER NOT NULL,"
    "  profile_json TEXT NOT NULL,"
    "  PRIMARY KEY (spec_key, backend, device));",
    /* 5: online search runs and every probe they ran — issue 6
     * (db/search_runs.c, cloudfit/search_history.h). Probes cascade with
     * their run; a failed probe has a NULL measurement and its error. */
    "CREATE TABLE search_runs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  created_at TEXT NOT NULL, tool_version TEXT NOT NULL,"
    "  spec_hash TEXT NOT NULL, spec_name TEXT NOT NULL,"
    "  runner TEXT NOT NULL, method TEXT NOT NULL, objective TEXT NOT NULL, seed INTEGER NOT NULL,"
    "  chosen_cloud TEXT, chosen_instance_type TEXT, chosen_gpu TEXT,"
    "  chosen_gpus_per_node INTEGER, chosen_nodes INTEGER, chosen_local_batch INTEGER,"
    "  chosen_step_time_s REAL, chosen_hours REAL, chosen_usd REAL,"
    "  probe_count INTEGER NOT NULL, profile_cost_usd REAL NOT NULL, probe_cost_usd REAL NOT NULL,"
    "  overhead_usd REAL NOT NULL, regret_pct REAL,"
    "  result_json TEXT NOT NULL);"
    "CREATE INDEX search_runs_spec ON search_runs(spec_hash, created_at);"
    "CREATE TABLE search_probes ("
    "  search_id INTEGER NOT NULL REFERENCES search_runs(id) ON DELETE CASCADE,"
    "  seq INTEGER NOT NULL,"
    "  kind TEXT NOT NULL CHECK (kind IN ('profile', 'probe')),"
    "  cloud TEXT NOT NULL, region TEXT NOT NULL, instance_type TEXT NOT NULL, gpu TEXT NOT NULL,"
    "  gpus_per_node INTEGER NOT NULL, nodes INTEGER NOT NULL, local_batch INTEGER NOT NULL,"
    "  steps INTEGER NOT NULL, attempts INTEGER NOT NULL,"
    "  measured_step_time_s REAL, predicted_step_time_s REAL,"
    "  cost_usd REAL NOT NULL, error TEXT NOT NULL,"
    "  PRIMARY KEY (search_id, seq));",
    /* 6: the spec file behind an effective spec — issue 12. spec_hash is
     * the hash of the spec as computed (command-line overrides included);
     * source_hash the hash of the file as given, which baselines and
     * recorded runs follow (NULL in older rows: the two were the same). */
    "ALTER TABLE recommendations ADD COLUMN source_hash TEXT;"
    "ALTER TABLE measurements ADD COLUMN source_hash TEXT;"
    "CREATE INDEX recommendations_source ON recommendations(source_hash, created_at);",
    /* 7: baselines by identity, and a history shared on PostgreSQL — issue
     * 28. identity: what CI baselines follow ("NAME@PATH" in the
     * repository, or --baseline-key; NULL in older rows). The 80 %
     * intervals of the chosen plan, for the gate's message. uid: a row's
     * id across databases, so `history migrate` copies each row once (older
     * rows get one from their id, time and spec). gate_results.seq keeps
     * the gates in the order they were evaluated without SQLite's rowid
     * (older rows: that order was fixed by name). Every statement here is
     * plain SQL both backends run. */
    "ALTER TABLE recommendations ADD COLUMN identity TEXT;"
    "ALTER TABLE recommendations ADD COLUMN uid TEXT;"
    "ALTER TABLE recommendations ADD COLUMN hours_p10 REAL;"
    "ALTER TABLE recommendations ADD COLUMN hours_p90 REAL;"
    "ALTER TABLE recommendations ADD COLUMN total_usd_p10 REAL;"
    "ALTER TABLE recommendations ADD COLUMN total_usd_p90 REAL;"
    "ALTER TABLE measurements ADD COLUMN uid TEXT;"
    "ALTER TABLE search_runs ADD COLUMN uid TEXT;"
    "ALTER TABLE gate_results ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;"
    "UPDATE recommendations SET uid = 'r' || id || '-' || created_at || '-' || spec_hash;"
    "UPDATE measurements SET uid = 'm' || id || '-' || recorded_at || '-' || spec_hash;"
    "UPDATE search_runs SET uid = 's' || id || '-' || created_at || '-' || spec_hash;"
    "UPDATE gate_results SET seq = CASE name WHEN 'max_cost_usd' THEN 1 WHEN 'max_hours' THEN 2 ELSE 3 END;"
    "CREATE UNIQUE INDEX recommendations_uid ON recommendations(uid);"
    "CREATE UNIQUE INDEX measurements_uid ON measurements(uid);"
    "CREATE UNIQUE INDEX search_runs_uid ON search_runs(uid);"
    "CREATE INDEX recommendations_identity ON recommendations(identity, created_at);",
    /* 8: an index on every foreign key's column. measurements.recommendation_id
     * (ON DELETE SET NULL) had none, so each recommendation `history prune`
     * deleted scanned the whole measurements table: 8,000 of each took 11 s
     * (quadratic; both backends). */
    "CREATE INDEX measurements_recommendation ON measurements(recommendation_id);",
    /* 9: the order profiles were stored in. "Newest first" was created_at
     * alone, whole seconds: two profiles of a spec stored within one second
     * tied, and the tie went by backend and device name, so the older could
     * win. seq is 1 + the spec key's largest, set by every write of a row
     * (db/profiles.c, history_copy.c), so the one stored last comes first
     * among those of the same created_at. Older rows: 0 (their order within
     * a second is not known). */
    "ALTER TABLE profiles ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;",
    /* 10: the largest recommendation id when a measurement was recorded.
     * "Recorded since the baseline" compared recorded_at with the
     * baseline's created_at, whole seconds: a run recorded in the
     * baseline's second, after it, was never counted (the gate's note said
     * "spec: unchanged" and no cause). The baseline's id is what a run
     * recorded after it saw; older rows and rows `history migrate` could
     * not place: NULL (by time, as before). */
    "ALTER TABLE measurements ADD COLUMN after_recommendation INTEGER;",
};

const int cf_db_migration_count = (int)(sizeof cf_db_migrations / sizeof *cf_db_migrations);
