/* The CI side of cf_recommend (docs/ci.md): the baseline (a document
 * named by --compare-to, else the newest earlier recommendation of the
 * same identity in the history, through the caller's handle), what
 * changed in the spec since, the gates, and the history row that records
 * the recommendation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/fileio.h"
#include "cloudfit/common/json_diff.h"
#include "cloudfit/version.h"
#include "cloudfit/usecase/evidence.h"
#include "recommend_internal.h"

void cf_baseline_from_row(const cf_history_row *row, cf_baseline *out)
{
    memset(out, 0, sizeof *out);
    out->have = 1;
    out->id = row->id;
    /* every text cut at a byte count is cut at a character boundary
     * (cf_text_fit): "%.64s" of 'release/xéé…' stored half an 'é' in the
     * gate notes, which PostgreSQL refused (the run failed, exit 1) */
    char branch[72];
    cf_text_fit_clip(row->ci.branch, 64, branch, sizeof branch); /* a cut ends in "…" */
    if (branch[0])
        snprintf(out->source, sizeof out->source, "recommendation %lld (%s, %s)", row->id, branch,
                 row->created_at);
    else
        snprintf(out->source, sizeof out->source, "recommendation %lld (%s)", row->id, row->created_at);
    snprintf(out->created_at, sizeof out->created_at, "%s", row->created_at);
    snprintf(out->tool_version, sizeof out->tool_version, "%s", row->tool_version);
    snprintf(out->catalog, sizeof out->catalog, "%s %s", row->catalog_name, row->catalog_date);
    out->chosen = row->chosen;
    out->hours_p10 = row->hours_p10;
    out->hours_p90 = row->hours_p90;
    out->total_usd_p10 = row->total_usd_p10;
    out->total_usd_p90 = row->total_usd_p90;
}

cf_status cf_baseline_from_file(const char *path, cf_baseline *out)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK)
        return st;
    st = cf_baseline_from_text(text, len, path, out);
    free(text);
    return st;
}

/* What changed in the spec since the baseline, field by field, when the
 * history holds the baseline's spec (it stores every spec it saw). */
static void spec_changes(cf_db *db, const cf_spec *spec, cf_baseline *b)
{
    if (!b->spec_hash[0])
        return;
    if (strcmp(b->spec_hash, spec->hash) == 0) {
        b->spec_known = 1;
        return;
    }
    char *before_text = NULL;
    if (!db || cf_history_spec_json(db, b->spec_hash, &before_text) != CF_OK || !before_text) {
        cf_error_clear();
        char before[72], now[72];
        cf_text_fit(b->job_name, 64, before, sizeof before);
        cf_text_fit(spec->job.name, 64, now, sizeof now);
        /* a history row's hash is cut at a character boundary as any text is (a damaged row's need not be hex) */
        int cut = (int)cf_utf8_prefix(b->spec_hash, 12);
        if (b->job_name[0] && strcmp(b->job_name, spec->job.name) != 0) /* a --compare-to file of another job */
            snprintf(b->spec_changes, sizeof b->spec_changes,
                     "%.*s… → %.12s… (the baseline is of another job: '%s', this one is '%s')", cut, b->spec_hash,
                     spec->hash, before, now);
        else
            snprintf(b->spec_changes, sizeof b->spec_changes,
                     "%.*s… → %.12s… (the baseline's spec is not in the history)", cut, b->spec_hash, spec->hash);
        return;
    }
    cJSON *before = cJSON_Parse(before_text), *after = cJSON_Parse(spec->canonical_json);
    free(before_text);
    cf_buf text = CF_BUF_INIT;
    if (before && after) {
        cf_json_diff_text(before, after, 6, &text);
        if (!cf_buf_failed(&text)) {
            cf_text_fit(cf_buf_cstr(&text), sizeof b->spec_changes - 1, b->spec_changes, sizeof b->spec_changes);
            b->spec_known = 1;
        }
    }
    cf_buf_free(&text);
    cJSON_Delete(before);
    cJSON_Delete(after);
}

/* A changed --price-overrides file, as the baseline's document and this
 * run name it: "price overrides ov.json changed (sha256 1a2b…  → 3c4d…)",
 * "none → ov.json", "ov.json → none"; nothing when the same content (under
 * any name) or when the baseline does not tell. */
static void overrides_change(const cf_baseline *b, const cf_price_overrides *ov, cf_buf *text)
{
    const char *now = ov->n ? ov->path : "";
    if (!b->overrides_known || (!b->overrides_file[0] && !now[0]))
        return;
    if (b->overrides_file[0] && now[0] && (!b->overrides_sha256[0] || strcmp(b->overrides_sha256, ov->sha256) == 0))
        return;
    char before[72], after[72], escaped[160];
    cf_text_fit(now, sizeof escaped - 1, escaped, sizeof escaped);
    cf_text_clip(b->overrides_file[0] ? b->overrides_file : "none", 64, before, sizeof before);
    cf_text_clip(now[0] ? escaped : "none", 64, after, sizeof after);
    cf_buf_printf(text, "%sprice overrides ", text->len ? ", " : "");
    if (!b->overrides_file[0] || !now[0])
        cf_buf_printf(text, "%s → %s", before, after);
    else if (strcmp(before, after) == 0)
        cf_buf_printf(text, "%s changed (sha256 %.12s… → %.12s…)", after, b->overrides_sha256, ov->sha256);
    else
        cf_buf_printf(text, "%s → %s (sha256 %.12s… → %.12s…)", before, after, b->overrides_sha256, ov->sha256);
}

/* What changed in the evidence behind the prediction since the baseline,
 * as far as the history tells: runs recorded and profiles stored after it
 * (cf_evidence_count_since), another price catalog or snapshot, another
 * --price-overrides file, another cloudfit. A spec that did not change said "spec: unchanged" and nothing
 * else when a recorded run had moved the prediction. */
static cf_status evidence_changes(const cf_recommend_request *req, cf_baseline *b)
{
    cf_buf text = CF_BUF_INIT;
    if (req->db && b->created_at[0]) {
        size_t n_recorded = 0, n_profiles = 0;
        cf_status st = cf_evidence_count_since(req->db, req->spec, b->created_at, b->id, &n_recorded, &n_profiles);
        if (st != CF_OK)
            return st;
        if (n_recorded)
            cf_buf_printf(&text, "%zu recorded run%s", n_recorded, n_recorded == 1 ? "" : "s");
        if (n_profiles)
            cf_buf_printf(&text, "%s%zu profile%s stored", text.len ? " and " : "", n_profiles,
                          n_profiles == 1 ? "" : "s");
        if (text.len)
            cf_buf_puts(&text, " since the baseline");
    }
    /* named as the baseline names its catalog: "NAME DATA_DATE" ("?" where a document gave none) */
    const cf_catalog *catalog = &req->catalog_source->catalog;
    char now[160];
    snprintf(now, sizeof now, "%s %s", catalog->name, catalog->data_date);
    size_t len = strlen(b->catalog);
    int known = len > 0 && strncmp(b->catalog, "? ", 2) != 0 && !(len >= 2 && strcmp(b->catalog + len - 2, " ?") == 0);
    if (known && strcmp(b->catalog, now) != 0)
        cf_buf_printf(&text, "%sprices %s → %s", text.len ? ", " : "", b->catalog, now);
    overrides_change(b, &req->catalog_source->overrides, &text);
    if (b->tool_version[0] && strcmp(b->tool_version, CF_VERSION) != 0)
        cf_buf_printf(&text, "%scloudfit %s → %s", text.len ? ", " : "", b->tool_version, CF_VERSION);
    if (cf_buf_failed(&text)) {
        cf_buf_free(&text);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    cf_text_fit(cf_buf_cstr(&text), sizeof b->evidence_changes - 1, b->evidence_changes, sizeof b->evidence_changes);
    cf_buf_free(&text);
    return CF_OK;
}

cf_status cf_recommend_gates(const cf_recommend_request *req, cf_recommend_result *out)
{
    const cf_spec *spec = req->spec;
    cf_baseline *b = &out->baseline;
    const char *branch = req->base_branch       ? req->base_branch
                         : req->ci && req->ci->base_branch[0] ? req->ci->base_branch : NULL;
    if (req->compare_to) {
        cf_status st = cf_baseline_from_file(req->compare_to, b);
        if (st != CF_OK)
            return st;
    } else if (req->db) {
        cf_history_row row;
        int found = 0;
        /* No target branch (a push build: GitHub's push to main has no
         * GITHUB_BASE_REF): the branch's own earlier runs first, so an
         * unmerged pull request's run, the newest of any branch, never
         * becomes main's baseline; then any branch, as before */
        const char *own = !branch && req->ci && req->ci->branch[0] && !req->ci->pull_request[0] ? req->ci->branch
                                                                                              : NULL;
        const char *now = out->created_at[0] ? out->created_at : NULL;
        const char *on = branch ? branch : own;
        /* The newest run dated up to this one is the baseline; a run dated
         * after it came from a clock that was ahead (or this one is
         * behind). It is passed over, as a price snapshot fetched in the
         * future is (db/snapshots.c): else it would shadow every later run
         * until the clocks got there. Either way the baseline's name says
         * so: the one passed over, or that the baseline itself is dated
         * after this run when there is no other. The newest-dated run is
         * looked up first: only when it is dated after this one is the
         * history asked again, for the newest run up to now. */
        cf_history_row newest;
        int newest_found = 0;
        cf_status st = cf_history_latest(req->db, out->identity, spec->source_hash, on, NULL, &newest, &newest_found);
        if (st == CF_OK && !newest_found && own) {
            on = NULL;
            st = cf_history_latest(req->db, out->identity, spec->source_hash, on, NULL, &newest, &newest_found);
        }
        int ahead = newest_found && now && strcmp(newest.created_at, now) > 0;
        if (st == CF_OK && newest_found)
            row = newest;
        found = newest_found;
        if (st == CF_OK && ahead)
            st = cf_history_latest(req->db, out->identity, spec->source_hash, on, now, &row, &found);
        if (st != CF_OK)
            return st;
        if (found && !cf_baseline_cost_usable(row.chosen.total_usd)) {
            /* a damaged row (another tool, a hand edit): its cost is held
             * to what a --compare-to document's must be. A gate that needs
             * the baseline stops (exit 3); without one it is no baseline */
            const cf_gate_limits *l = req->gate_limits;
            if (l && (l->max_increase >= 0 || l->require_baseline)) {
                /* both bounds: a cost of 1e16 or Infinity was told it must be above 0 */
                cf_error_set(CF_ERR_INVALID, "%s: recommendation %lld: total_usd: expected a cost above 0 (a chosen "
                             "plan is never free) and at most 1e15, got %g; it would be this run's baseline",
                             req->db_name && req->db_name[0] ? req->db_name : "the history", row.id, row.chosen.total_usd);
                cf_error_hint("delete that row ('DELETE FROM recommendations WHERE id = %lld'), or name the baseline "
                              "with --compare-to FILE.json", row.id);
                return CF_ERR_INVALID;
            }
            found = 0;
        }
        if (found) {
            cf_baseline_from_row(&row, b);
            size_t len = strlen(b->source);
            if (now && len > 0 && b->source[len - 1] == ')') {
                if (strcmp(row.created_at, now) > 0)
                    snprintf(b->source + len - 1, sizeof b->source - (len - 1),
                             "; dated after this run, %s: a clock was ahead)", now);
                else if (ahead)
                    snprintf(b->source + len - 1, sizeof b->source - (len - 1),
                             "; recommendation %lld, dated %s after this run (%s: a clock was ahead), passed over)",
                             newest.id, newest.created_at, now);
            }
            snprintf(b->spec_hash, sizeof b->spec_hash, "%s", row.spec_hash);
            snprintf(b->job_name, sizeof b->job_name, "%s", row.spec_name);
            /* its price overrides, from the document stored with it */
            cf_history_row full;
            memset(&full, 0, sizeof full);
            if (cf_history_get(req->db, row.id, &full) == CF_OK)
                cf_baseline_overrides_from_text(full.result_json, b);
            else
                cf_error_clear(); /* as its spec: what is not told is not said */
            free(full.result_json);
        }
    }
    if (!b->have) {
        char identity[304], on[104], in[154];
        cf_text_fit(out->identity, 300, identity, sizeof identity);
        cf_text_fit(branch ? branch : "", 100, on, sizeof on);
        cf_text_fit(req->db ? (req->db_name ? req->db_name : "") : "no history (none yet, or --no-history without one)",
                    150, in, sizeof in);
        snprintf(b->lookup, sizeof b->lookup, "spec %s on %s%s in %s", identity, branch ? "branch " : "any branch", on,
                 in);
    }
    else {
        spec_changes(req->db, spec, b);
        cf_status st = evidence_changes(req, b);
        if (st != CF_OK)
            return st;
    }
    cf_gate_limits off = {.max_increase = -1};
    out->n_gates = cf_gates_evaluate(req->gate_limits ? req->gate_limits : &off, &out->advice.ranked[0], b,
                                     out->gates);
    return CF_OK;
}

cf_status cf_recommend_record(cf_db *db, const cf_report *r, const char *json_text, long long *id)
{
    *id = 0;
    const cf_advice *a = r->advice;
    const cf_config *c = &a->ranked[0];
    size_t n_alts = a->n_ranked > 1 ? a->n_ranked - 1 : 0;
    cf_history_config *alts = calloc(n_alts ? n_alts : 1, sizeof *alts);
    if (!alts)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_alts; i++)
        cf_history_config_from(&a->ranked[i + 1], (int)i + 2, &alts[i]);
    static const cf_ci_info no_ci;
    cf_history_record rec = {
        .created_at = r->created_at, .tool_version = CF_VERSION, .spec_hash = r->spec->hash,
        .source_hash = r->spec->source_hash, .spec_name = r->spec->job.name, .spec_json = r->spec->canonical_json,
        .objective = cf_objective_name(r->spec->search.objective), .catalog_name = r->catalog->name,
        .catalog_date = r->catalog->data_date, .cloud = c->vm->cloud, .region = c->vm->region,
        .instance_type = c->vm->instance_type, .gpu = c->vm->gpu_model, .gpus_per_node = c->gpus_per_node,
        .nodes = c->nodes, .local_batch = c->local_batch, .accumulation = c->accumulation,
        .global_batch = c->global_batch, .lr = c->lr.lr, .spot = c->spot ? (c->mixed ? 2 : 1) : 0, .step_time_s = c->step_time_s,
        .hours = c->hours, .total_usd = c->total_usd, .usd_per_node_hour = c->usd_per_hour / c->nodes,
        .identity = r->identity, .result_json = json_text, .alternatives = alts, .n_alternatives = n_alts,
        .ci = r->ci ? r->ci : &no_ci, .gates = r->gates, .n_gates = r->n_gates};
    cf_config_intervals(c, &rec.hours_p10, &rec.hours_p90, &rec.total_usd_p10, &rec.total_usd_p90);
    cf_status st = cf_history_insert(db, &rec, id);
    free(alts);
    return st;
}
