/* The profile cache (db/profiles.c): store, read back newest first (of
 * one second, the one stored last), replace the row of the same (key,
 * backend, device), keep others apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cloudfit/db/profiles.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cf-pcache-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/cache.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_put_get_replace(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    cf_cached_profile a = {"key1", "cpu", "Some CPU (CPU, 2 threads)", "mlp", "2026-11-21T10:00:00Z", 0, 120.5, 4096,
                           "{\"v\": 1}"};
    cf_cached_profile b = {"key1", "exec", "NVIDIA A100-SXM4-40GB", "mlp", "2026-11-21T11:00:00Z", 1, 0, 512,
                           "{\"v\": 2}"};
    cf_cached_profile c = {"key2", "cpu", "Some CPU (CPU, 2 threads)", "other", "2026-11-21T12:00:00Z", 0, 5, 8,
                           "{\"v\": 3}"};
    assert_int_equal(cf_profile_cache_put(db, &a), CF_OK);
    assert_int_equal(cf_profile_cache_put(db, &b), CF_OK);
    assert_int_equal(cf_profile_cache_put(db, &c), CF_OK);
    cf_cached_profile_list list;
    assert_int_equal(cf_profile_cache_get(db, "key1", &list), CF_OK);
    assert_int_equal(list.n, 2);
    assert_string_equal(list.rows[0].backend, "exec"); /* newest first */
    assert_true(list.rows[0].is_gpu && list.rows[0].b_noise == 0 && list.rows[0].max_local_batch == 512);
    assert_string_equal(list.rows[1].profile_json, "{\"v\": 1}");
    assert_true(list.rows[1].b_noise == 120.5);
    cf_profile_cache_list_free(&list);
    /* Same (key, backend, device): replaced, not added. */
    a.created_at = "2026-11-21T13:00:00Z";
    a.profile_json = "{\"v\": 4}";
    assert_int_equal(cf_profile_cache_put(db, &a), CF_OK);
    assert_int_equal(cf_profile_cache_get(db, "key1", &list), CF_OK);
    assert_int_equal(list.n, 2);
    assert_string_equal(list.rows[0].profile_json, "{\"v\": 4}");
    cf_profile_cache_list_free(&list);
    assert_int_equal(cf_profile_cache_get(db, "nope", &list), CF_OK);
    assert_int_equal(list.n, 0);
    cf_profile_cache_list_free(&list);
    cf_db_close(db);
}

/* Profiles of the same created_at (whole seconds): the one stored last
 * comes first, also when it replaces its own older row. They were sorted
 * by backend and device name, so the older could win. */
static void test_same_second_stored_last_first(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    const char *at = "2026-11-22T10:00:00Z";
    cf_cached_profile z = {"tie", "trace", "T4", "mlp", at, 1, 0, 64, "{\"v\": \"z\"}"};
    cf_cached_profile a = {"tie", "exec", "Tesla T4", "mlp", at, 1, 0, 64, "{\"v\": \"a\"}"};
    cf_cached_profile old = {"tie", "cpu", "EPYC", "mlp", "2026-11-22T09:59:59Z", 0, 5, 64, "{\"v\": \"old\"}"};
    assert_int_equal(cf_profile_cache_put(db, &z), CF_OK);
    assert_int_equal(cf_profile_cache_put(db, &old), CF_OK); /* stored later, an older time: still last */
    assert_int_equal(cf_profile_cache_put(db, &a), CF_OK);
    cf_cached_profile_list list;
    assert_int_equal(cf_profile_cache_get(db, "tie", &list), CF_OK);
    assert_int_equal(list.n, 3);
    assert_string_equal(list.rows[0].backend, "exec"); /* was "exec" too: by name */
    assert_string_equal(list.rows[1].backend, "trace");
    assert_string_equal(list.rows[2].backend, "cpu");
    cf_profile_cache_list_free(&list);
    z.profile_json = "{\"v\": \"z2\"}"; /* stored again: now the newest of its second */
    assert_int_equal(cf_profile_cache_put(db, &z), CF_OK);
    assert_int_equal(cf_profile_cache_get(db, "tie", &list), CF_OK);
    assert_int_equal(list.n, 3);
    assert_string_equal(list.rows[0].backend, "trace");
    assert_string_equal(list.rows[0].profile_json, "{\"v\": \"z2\"}");
    assert_string_equal(list.rows[1].backend, "exec");
    cf_profile_cache_list_free(&list);
    cf_db_close(db);
}

/* seq counts within a spec key. A spec is read under its key and the key
 * older versions stored under (cf_profile_cache_get_either): of one
 * second, the current key's profile comes first, whatever the other key's
 * seq (history migrate gave the copies of both seq 1, or more to the older,
 * and the older profile won). */
static void test_same_second_current_key_first(void **state)
{
    (void)state;
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(path, &db), CF_OK);
    const char *at = "2026-11-23T10:00:00Z";
    cf_cached_profile o1 = {"before", "cpu", "EPYC", "mlp", at, 0, 0, 64, "{\"v\": \"o1\"}"};
    cf_cached_profile o2 = {"before", "cpu", "Xeon", "mlp", at, 0, 0, 64, "{\"v\": \"o2\"}"};
    cf_cached_profile now = {"now", "trace", "T4", "mlp", at, 1, 0, 64, "{\"v\": \"now\"}"};
    assert_int_equal(cf_profile_cache_put(db, &o1), CF_OK);
    assert_int_equal(cf_profile_cache_put(db, &o2), CF_OK); /* seq 2 of "before" */
    assert_int_equal(cf_profile_cache_put(db, &now), CF_OK); /* seq 1 of "now" */
    cf_cached_profile_list list;
    assert_int_equal(cf_profile_cache_get_either(db, "now", "before", &list), CF_OK);
    assert_int_equal(list.n, 3);
    assert_string_equal(list.rows[0].spec_key, "now"); /* was "before" (seq 2 > 1) */
    assert_string_equal(list.rows[1].device, "Xeon");
    assert_string_equal(list.rows[2].device, "EPYC");
    cf_profile_cache_list_free(&list);
    /* a later second still wins, whichever key */
    o1.created_at = "2026-11-23T10:00:01Z";
    assert_int_equal(cf_profile_cache_put(db, &o1), CF_OK);
    assert_int_equal(cf_profile_cache_get_either(db, "now", "before", &list), CF_OK);
    assert_int_equal(list.n, 3);
    assert_string_equal(list.rows[0].device, "EPYC");
    assert_string_equal(list.rows[1].spec_key, "now");
    cf_profile_cache_list_free(&list);
    cf_db_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_replace),
        cmocka_unit_test(test_same_second_stored_last_first),
        cmocka_unit_test(test_same_second_current_key_first),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
