/* cf_recommend's CI side on a real SQLite file in a temporary folder: the
 * row cf_recommend_record writes is the next run's baseline, read through
 * the one handle the caller passes (the request names no database path:
 * after the folder is renamed away, the handle still serves evidence,
 * baseline and the new row, so nothing opens the database again), the
 * gates decided on it, and a --compare-to document that cannot be read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/db.h"
#include "cloudfit/db/history.h"
#include "cloudfit/usecase/launch_specs.h"
#include "cloudfit/usecase/recommend.h"

#define SPEC "examples/resnet50-imagenet.json"

static char dir[] = "/tmp/cloudfit-test-usecase-ci-XXXXXX";
static char moved[64];
static char db_path[128];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(db_path, sizeof db_path, "%s/history.db", dir);
    snprintf(moved, sizeof moved, "%s-moved", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, moved);
    return system(cmd) == 0 ? 0 : -1;
}

typedef struct {
    cf_spec spec;
    cf_catalog_source src;
    cf_recommend_result res;
} run;

/* cf_recommend on the example spec with the database `db` (may be NULL)
 * and `limits` (may be NULL); the status it returned. */
static cf_status recommend_priced(run *r, cf_db *db, const cf_gate_limits *limits, const char *compare_to,
                                  const char *price_overrides)
{
    cf_spec_overrides ov;
    cf_spec_overrides_init(&ov);
    assert_int_equal(cf_spec_load_effective(SPEC, &ov, &r->spec), CF_OK);
    assert_int_equal(cf_catalog_source_open(NULL, -1, price_overrides, &r->src), CF_OK);
    static const cf_ci_info ci = {.provider = "test", .branch = "main", .commit = "0123456789"};
    cf_recommend_request req = {.spec = &r->spec, .catalog_source = &r->src, .db = db, .db_name = "the-history",
                                .top = 3, .ci = &ci, .base_branch = "main", .compare_to = compare_to,
                                .gate_limits = limits};
    return cf_recommend(&req, &r->res);
}

static cf_status recommend(run *r, cf_db *db, const cf_gate_limits *limits, const char *compare_to)
{
    return recommend_priced(r, db, limits, compare_to, NULL);
}

static void done(run *r)
{
    cf_recommend_result_free(&r->res);
    cf_catalog_source_close(&r->src);
    cf_spec_free(&r->spec);
}

/* Records the run's recommendation through `db`, committed; its id. */
static long long record(cf_db *db, run *r)
{
    cJSON *doc = cf_report_json(&r->res.report);
    assert_non_null(doc);
    char *json = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    assert_non_null(json);
    long long id = 0;
    assert_int_equal(cf_db_hold(db), CF_OK);
    assert_int_equal(cf_recommend_record(db, &r->res.report, json, &id), CF_OK);
    assert_int_equal(cf_db_release(db, 1), CF_OK);
    cJSON_free(json);
    assert_true(id > 0);
    return id;
}

static void test_baseline_and_row_through_one_handle(void **state)
{
    (void)state;
    cf_gate_limits need_baseline = {.max_increase = -1, .require_baseline = 1};
    /* No database: no baseline, and the gate that requires one fails. */
    run first;
    assert_int_equal(recommend(&first, NULL, &need_baseline, NULL), CF_OK);
    assert_false(first.res.baseline.have);
    assert_null(first.res.report.baseline);
    assert_non_null(strstr(first.res.baseline.lookup, "no history"));
    assert_int_equal(first.res.n_gates, 1);
    assert_false(first.res.gates[0].passed);
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    long long id = record(db, &first);
    done(&first);
    cf_db_close(db);

    /* One handle, then the folder moved away: whatever cf_recommend reads
     * or writes goes through the handle, or it fails. */
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    assert_int_equal(rename(dir, moved), 0);
    run second;
    assert_int_equal(recommend(&second, db, &need_baseline, NULL), CF_OK);
    assert_true(second.res.baseline.have);
    assert_int_equal(second.res.baseline.id, id);
    assert_ptr_equal(second.res.report.baseline, &second.res.baseline);
    assert_true(second.res.baseline.spec_known); /* the same spec: nothing changed */
    assert_string_equal(second.res.baseline.spec_changes, "");
    assert_int_equal(second.res.n_gates, 1);
    assert_true(second.res.gates[0].passed);
    long long id2 = record(db, &second);
    assert_true(id2 > id);
    /* The new row holds the CI run, the identity and the gate. */
    cf_history_row row;
    memset(&row, 0, sizeof row);
    assert_int_equal(cf_history_get(db, id2, &row), CF_OK);
    assert_string_equal(row.ci.branch, "main");
    assert_string_equal(row.identity, second.res.identity);
    assert_string_equal(row.spec_name, second.spec.job.name);
    free(row.result_json);
    cf_history_gate *gates = NULL;
    size_t n_gates = 0;
    assert_int_equal(cf_history_gates(db, id2, &gates, &n_gates), CF_OK);
    assert_int_equal(n_gates, 1);
    assert_true(gates[0].passed);
    free(gates);
    done(&second);
    cf_db_close(db);
    assert_int_equal(rename(moved, dir), 0);
}

/* A cost-increase gate of $0 against the recorded baseline: the same plan
 * costs the same (a value equal to its limit passes), and the note says
 * it was compared with that baseline. */
static void test_increase_gate_against_the_baseline(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    run r;
    cf_gate_limits limits = {.max_increase = -1};
    assert_int_equal(cf_gate_limits_set_increase(&limits, "0"), CF_OK);
    assert_int_equal(recommend(&r, db, &limits, NULL), CF_OK);
    assert_true(r.res.baseline.have);
    assert_int_equal(r.res.n_gates, 1);
    assert_true(r.res.gates[0].passed);
    char against[64];
    snprintf(against, sizeof against, "against recommendation %lld (main, ", r.res.baseline.id);
    assert_non_null(strstr(r.res.gates[0].note, against));
    assert_non_null(strstr(r.res.gates[0].note, "spec: unchanged"));
    done(&r);
    cf_db_close(db);
}

/* Texts cut at a byte count in the baseline and in the gate notes are cut
 * at a character boundary: "%.64s" of a branch 'release/xéé…' stored half
 * an 'é' in the gate note, and PostgreSQL refused the row (exit 1). */
static void test_cut_texts_stay_utf8(void **state)
{
    (void)state;
    char branch[160] = "release/x";
    for (int i = 0; i < 60; i++)
        strcat(branch, "\xc3\xa9"); /* é */
    cf_history_row row;
    memset(&row, 0, sizeof row);
    row.id = 7;
    snprintf(row.created_at, sizeof row.created_at, "2026-11-18T11:06:40Z");
    snprintf(row.ci.branch, sizeof row.ci.branch, "%s", branch);
    cf_baseline b;
    cf_baseline_from_row(&row, &b);
    assert_int_equal(cf_utf8_invalid_at(b.source), -1);
    assert_non_null(strstr(b.source, "release/x\xc3\xa9"));

    /* no baseline on that branch: what was looked for, and the notes */
    run r;
    cf_spec_overrides ov;
    cf_spec_overrides_init(&ov);
    assert_int_equal(cf_spec_load_effective(SPEC, &ov, &r.spec), CF_OK);
    assert_int_equal(cf_catalog_source_open(NULL, -1, NULL, &r.src), CF_OK);
    cf_gate_limits limits = {.max_increase = -1, .require_baseline = 1};
    assert_int_equal(cf_gate_limits_set_increase(&limits, "10%"), CF_OK);
    cf_recommend_request req = {.spec = &r.spec, .catalog_source = &r.src, .top = 3, .base_branch = branch,
                                .gate_limits = &limits};
    assert_int_equal(cf_recommend(&req, &r.res), CF_OK);
    assert_false(r.res.baseline.have);
    assert_int_equal(cf_utf8_invalid_at(r.res.baseline.lookup), -1);
    assert_int_equal(r.res.n_gates, 2);
    for (size_t i = 0; i < r.res.n_gates; i++)
        assert_int_equal(cf_utf8_invalid_at(r.res.gates[i].note), -1);
    done(&r);
}

static void test_unreadable_compare_to_is_an_error(void **state)
{
    (void)state;
    run r;
    assert_int_not_equal(recommend(&r, NULL, NULL, "/nonexistent/old.json"), CF_OK);
    assert_non_null(strstr(cf_error_message(), "/nonexistent/old.json"));
    cf_error_clear();
    done(&r);
}

/* The launch specs of the recommendation: each kind once, in the order
 * first asked for, named after the spec in the folder, with its mode. */
static void test_launch_specs(void **state)
{
    (void)state;
    run r;
    assert_int_equal(recommend(&r, NULL, NULL, NULL), CF_OK);
    const char *kinds[] = {"torchrun", "k8s", "torchrun"}, *selectors[] = {"pool=gpu"};
    cf_launch_request req = {.kinds = kinds, .n_kinds = 3, .entrypoint = "train.py --epochs 3",
                             .node_selectors = selectors, .n_node_selectors = 1, .dir = "out"};
    cf_launch_specs specs;
    assert_int_equal(cf_launch_specs_render(&r.res.report, &req, &specs), CF_OK);
    assert_int_equal(specs.n, 2);
    char want[128];
    snprintf(want, sizeof want, "out/%s.torchrun.sh", r.spec.job.name);
    assert_string_equal(specs.items[0].path.data, want);
    assert_int_equal(specs.items[0].mode, 0777);
    assert_non_null(strstr(specs.items[0].text.data, "torchrun"));
    assert_non_null(strstr(specs.items[0].text.data, "'train.py' '--epochs' '3'"));
    assert_string_equal(specs.items[1].kind, "k8s");
    assert_int_equal(specs.items[1].mode, 0666);
    assert_non_null(strstr(specs.items[1].text.data, "pool: \"gpu\""));
    cf_launch_specs_free(&specs);
    assert_true(cf_launch_kind_known("skypilot"));
    assert_false(cf_launch_kind_known("slurm"));
    const char *bad[] = {"slurm"};
    req.kinds = bad;
    req.n_kinds = 1;
    assert_int_equal(cf_launch_specs_render(&r.res.report, &req, &specs), CF_ERR_USAGE);
    cf_error_clear();
    cf_launch_specs_free(&specs);
    done(&r);
}

/* The SkyPilot task's fallbacks (resources.ordered) of V100 plans ranked
 * at --top 1, 10 and 100: the same task each time. --top is the table's
 * row count; -n 1 wrote a task without a fallback, the default three. */
static void skypilot_at_top(size_t top, char **text)
{
    static const char *const gpus[] = {"V100"};
    cf_spec_overrides ov;
    cf_spec_overrides_init(&ov);
    ov.gpus = gpus;
    ov.n_gpus = 1;
    run r;
    assert_int_equal(cf_spec_load_effective(SPEC, &ov, &r.spec), CF_OK);
    assert_int_equal(cf_catalog_source_open(NULL, -1, NULL, &r.src), CF_OK);
    cf_recommend_request req = {.spec = &r.spec, .catalog_source = &r.src, .top = top};
    assert_int_equal(cf_recommend(&req, &r.res), CF_OK);
    const char *kinds[] = {"skypilot"};
    cf_launch_request lreq = {.kinds = kinds, .n_kinds = 1, .dir = "out"};
    cf_launch_specs specs;
    assert_int_equal(cf_launch_specs_render(&r.res.report, &lreq, &specs), CF_OK);
    const char *body = strchr(specs.items[0].text.data, '\n'); /* after the line with the time */
    assert_non_null(body);
    *text = strdup(body);
    cf_launch_specs_free(&specs);
    done(&r);
}

static void test_launch_fallbacks_do_not_follow_top(void **state)
{
    (void)state;
    char *at1, *at10, *at100;
    skypilot_at_top(1, &at1);
    skypilot_at_top(10, &at10);
    skypilot_at_top(100, &at100);
    size_t n = 0;
    for (const char *p = at10; (p = strstr(p, "- infra: ")) != NULL; p++)
        n++;
    assert_true(n > 1); /* the case has fallbacks to lose */
    assert_string_equal(at1, at10);
    assert_string_equal(at100, at10);
    free(at1);
    free(at10);
    free(at100);
}

/* Records a run of recommendation `id` at 0.9 s per step (slower than
 * predicted), now (SOURCE_DATE_EPOCH: the second the recommendations were
 * made in); its recorded_at into `recorded_at` (32 bytes) unless NULL. */
static void record_slow_run(cf_db *db, long long id, char *recorded_at)
{
    cf_history_measurement m;
    memset(&m, 0, sizeof m);
    m.recommendation_id = id;
    cf_now_iso8601(m.recorded_at, sizeof m.recorded_at);
    m.step_time_s = 0.9, m.total_hours = m.total_usd = NAN;
    long long mid = 0;
    assert_int_equal(cf_db_hold(db), CF_OK);
    assert_int_equal(cf_history_record_measurement(db, &m, &mid), CF_OK);
    assert_int_equal(cf_db_release(db, 1), CF_OK);
    if (recorded_at)
        snprintf(recorded_at, 32, "%s", m.recorded_at);
}

/* --max-cost-increase 0% */
static cf_gate_limits no_increase(void)
{
    cf_gate_limits limits = {.max_increase = -1};
    assert_int_equal(cf_gate_limits_set_increase(&limits, "0%"), CF_OK);
    return limits;
}

/* The same spec, but a real run recorded since the baseline (cloudfit
 * record) moved the prediction: the increase gate's note said "spec:
 * unchanged" and nothing else, never the recorded run that was the cause.
 * Runs recorded before the baseline were in its prediction already: not
 * named. */
static void test_increase_gate_names_a_run_recorded_since(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    run base;
    assert_int_equal(recommend(&base, db, NULL, NULL), CF_OK);
    long long id = record(db, &base);
    done(&base);
    /* twice the predicted step time, recorded in the baseline's second (SOURCE_DATE_EPOCH) */
    record_slow_run(db, id, NULL);
    cf_gate_limits limits = no_increase();
    run r;
    assert_int_equal(recommend(&r, db, &limits, NULL), CF_OK);
    assert_int_equal(r.res.baseline.id, id);
    assert_int_equal(r.res.n_gates, 1);
    assert_false(r.res.gates[0].passed); /* the recorded run made the plan dearer */
    assert_non_null(strstr(r.res.gates[0].note, "; spec: unchanged; evidence: 1 recorded run since the baseline; "
                                                "plan: "));
    long long id2 = record(db, &r);
    done(&r);
    /* against a baseline that had the run already: nothing new to name */
    run again;
    assert_int_equal(recommend(&again, db, &limits, NULL), CF_OK);
    assert_int_equal(again.res.baseline.id, id2);
    assert_true(again.res.gates[0].passed);
    assert_null(strstr(again.res.gates[0].note, "evidence:"));
    assert_non_null(strstr(again.res.gates[0].note, "; spec: unchanged; plan: "));
    done(&again);
    cf_db_close(db);
}

/* A run of an earlier recommendation recorded after the baseline, in its
 * second: the count compared recorded_at with the baseline's created_at,
 * whole seconds, so it was never named (the note said "spec: unchanged"
 * and nothing else). Now the ids order it (measurements.after_recommendation). */
static void test_increase_gate_names_a_run_recorded_in_the_baselines_second(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    run older, base;
    assert_int_equal(recommend(&older, db, NULL, NULL), CF_OK);
    long long older_id = record(db, &older);
    done(&older);
    assert_int_equal(recommend(&base, db, NULL, NULL), CF_OK);
    long long base_id = record(db, &base);
    done(&base);
    /* of the older recommendation, recorded after the baseline, in its second (SOURCE_DATE_EPOCH) */
    char recorded_at[32];
    record_slow_run(db, older_id, recorded_at);
    cf_gate_limits limits = no_increase();
    run r;
    assert_int_equal(recommend(&r, db, &limits, NULL), CF_OK);
    assert_int_equal(r.res.baseline.id, base_id);
    assert_string_equal(r.res.baseline.created_at, recorded_at); /* the same second */
    assert_non_null(strstr(r.res.gates[0].note, "; evidence: 1 recorded run since the baseline; "));
    done(&r);
    cf_db_close(db);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* A --price-overrides file that changed since the baseline (a 20 %
 * discount that ended) moves the cost, and the gate's note said only
 * "spec: unchanged; plan: …": the one input that changed was not named.
 * Against the history's baseline and a --compare-to document alike; the
 * same content again names nothing. */
static void test_increase_gate_names_changed_price_overrides(void **state)
{
    (void)state;
    char ov_path[160], doc_path[160], db2[160];
    snprintf(ov_path, sizeof ov_path, "%s/ov.json", dir);
    snprintf(doc_path, sizeof doc_path, "%s/base.json", dir);
    snprintf(db2, sizeof db2, "%s/overrides.db", dir);
    write_text(ov_path, "{\"discounts\": [{\"cloud\": \"lambda\", \"percent\": 20, \"note\": \"deal\"}]}\n");
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db2, &db), CF_OK);
    run base;
    assert_int_equal(recommend_priced(&base, db, NULL, NULL, ov_path), CF_OK);
    char sha_before[65];
    snprintf(sha_before, sizeof sha_before, "%s", base.src.overrides.sha256);
    assert_int_equal(strlen(sha_before), 64);
    record(db, &base);
    cJSON *doc = cf_report_json(&base.res.report);
    assert_non_null(doc);
    char *json = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    write_text(doc_path, json);
    cJSON_free(json);
    done(&base);

    write_text(ov_path, "{\"discounts\": [{\"cloud\": \"lambda\", \"percent\": 1, \"note\": \"deal\"}]}\n");
    cf_gate_limits limits = {.max_increase = -1};
    assert_int_equal(cf_gate_limits_set_increase(&limits, "5%"), CF_OK);
    for (int from_file = 0; from_file < 2; from_file++) {
        run r;
        assert_int_equal(recommend_priced(&r, from_file ? NULL : db, &limits, from_file ? doc_path : NULL, ov_path),
                         CF_OK);
        assert_int_equal(r.res.n_gates, 1);
        assert_false(r.res.gates[0].passed); /* the discount ended: +24 % */
        char want[300];
        snprintf(want, sizeof want, "; spec: unchanged; evidence: price overrides %s changed (sha256 %.12s… → %.12s…); plan: ",
                 ov_path, sha_before, r.src.overrides.sha256);
        if (!strstr(r.res.gates[0].note, want))
            fail_msg("from_file %d: %s\nwant %s", from_file, r.res.gates[0].note, want);
        done(&r);
    }
    /* no overrides now: "→ none"; the same content under another name: nothing */
    run none;
    assert_int_equal(recommend_priced(&none, NULL, &limits, doc_path, NULL), CF_OK);
    char want[300];
    snprintf(want, sizeof want, "evidence: price overrides %s → none; plan: ", ov_path);
    assert_non_null(strstr(none.res.gates[0].note, want));
    done(&none);
    char copy[160];
    snprintf(copy, sizeof copy, "%s/same.json", dir);
    write_text(copy, "{\"discounts\": [{\"cloud\": \"lambda\", \"percent\": 20, \"note\": \"deal\"}]}\n");
    run same;
    assert_int_equal(recommend_priced(&same, db, &limits, NULL, copy), CF_OK);
    assert_true(same.res.gates[0].passed);
    assert_null(strstr(same.res.gates[0].note, "evidence:"));
    done(&same);
    cf_db_close(db);
}

int main(void)
{
    setenv("SOURCE_DATE_EPOCH", "1795000000", 1);
    if (chdir(CF_SOURCE_DIR) != 0) {
        perror(CF_SOURCE_DIR);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baseline_and_row_through_one_handle),
        cmocka_unit_test(test_increase_gate_against_the_baseline),
        cmocka_unit_test(test_cut_texts_stay_utf8),
        cmocka_unit_test(test_unreadable_compare_to_is_an_error),
        cmocka_unit_test(test_launch_specs),
        cmocka_unit_test(test_launch_fallbacks_do_not_follow_top),
        cmocka_unit_test(test_increase_gate_names_a_run_recorded_since),
        cmocka_unit_test(test_increase_gate_names_a_run_recorded_in_the_baselines_second),
        cmocka_unit_test(test_increase_gate_names_changed_price_overrides),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
