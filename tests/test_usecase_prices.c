/* `prices` and `prices update` as library calls (usecase/prices.c): the
 * summary and GPU[:N]'s offers from the embedded catalog (the prices in
 * use said once), the errors of a GPU[:N] that is not on offer or does
 * not parse; the update of one cloud over real HTTP from a server on
 * 127.0.0.1 in this process serving the recorded Lambda fixture, stored
 * as a snapshot in a real SQLite file only with the caller's commit, and a
 * failed fetch that stores nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/db/snapshots.h"
#include "cloudfit/usecase/catalog.h"
#include "cloudfit/usecase/prices.h"

static char dir[] = "/tmp/cloudfit-test-usecase-prices-XXXXXX";
static char db_path[128];
static int notes_in_use;

static void count_notes(void *ctx, cf_note_kind kind, const char *text)
{
    (void)ctx;
    (void)text;
    notes_in_use += kind == CF_NOTE_PRICES_IN_USE;
}

static char warned[512]; /* the last warning note */

static void keep_warning(void *ctx, cf_note_kind kind, const char *text)
{
    (void)ctx;
    if (kind == CF_NOTE_WARNING)
        snprintf(warned, sizeof warned, "%s", text);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(db_path, sizeof db_path, "%s/history.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_summary_and_offers(void **state)
{
    (void)state;
    cf_catalog_source src;
    assert_int_equal(cf_catalog_source_open(NULL, -1, NULL, &src), CF_OK);
    notes_in_use = 0;
    cf_prices_request req = {.catalog_source = &src, .note = count_notes};
    cf_prices_result res;
    assert_int_equal(cf_prices_query(&req, &res), CF_OK);
    assert_int_equal(notes_in_use, 1);
    assert_true(res.summary.n_rows > 10);
    assert_int_equal(res.summary.n_offers, res.offers.n);
    assert_int_equal(res.summary.n_offers, src.catalog.n_vms - res.offers.n_restricted_left_out);
    cf_prices_result_free(&res);

    const char *clouds[] = {"aws"};
    req = (cf_prices_request){.catalog_source = &src, .gpu = "A100:8", .clouds = clouds, .n_clouds = 1};
    assert_int_equal(cf_prices_query(&req, &res), CF_OK);
    assert_string_equal(res.gpu, "A100");
    assert_int_equal(res.gpu_count, 8);
    assert_true(res.by_gpu.n_offers > 0);
    for (size_t i = 0; i < res.by_gpu.n_offers; i++) {
        assert_string_equal(res.by_gpu.offers[i]->cloud, "aws");
        assert_int_equal(res.by_gpu.offers[i]->gpu_count, 8);
        if (i) /* cheapest first */
            assert_true(res.by_gpu.offers[i - 1]->price_ondemand_usd_per_hr <=
                        res.by_gpu.offers[i]->price_ondemand_usd_per_hr);
    }
    cf_prices_result_free(&res);

    req.gpu = "A100:3";
    assert_int_equal(cf_prices_query(&req, &res), CF_ERR_INFEASIBLE);
    assert_non_null(strstr(cf_error_hint_text(), "cloudfit prices A100"));
    cf_error_clear();
    cf_prices_result_free(&res);
    req.gpu = "A100:x";
    assert_int_not_equal(cf_prices_query(&req, &res), CF_OK);
    assert_non_null(strstr(cf_error_message(), "A100:x"));
    cf_error_clear();
    cf_prices_result_free(&res);
    cf_catalog_source_close(&src);
}

/* --gpu (req.gpus): one is the GPU argument, resolved alike (a tool's
 * spelling); several cut the summary to those GPUs, each with its GPU
 * count; beside the argument, the same GPU is fine and another one a
 * usage error. */
static void test_gpus_as_the_argument(void **state)
{
    (void)state;
    cf_catalog_source src;
    assert_int_equal(cf_catalog_source_open(NULL, -1, NULL, &src), CF_OK);
    cf_prices_result res;
    const char *tool[] = {"NVIDIA A100-SXM4-40GB"};
    cf_prices_request req = {.catalog_source = &src, .gpus = tool, .n_gpus = 1};
    assert_int_equal(cf_prices_query(&req, &res), CF_OK);
    assert_true(res.one_gpu);
    assert_true(res.by_gpu.n_offers > 0);
    for (size_t i = 0; i < res.by_gpu.n_offers; i++)
        assert_string_equal(res.by_gpu.offers[i]->gpu_model, "A100-40GB");
    cf_prices_result_free(&res);

    const char *several[] = {"A100:8", "Tesla T4"};
    req = (cf_prices_request){.catalog_source = &src, .gpus = several, .n_gpus = 2};
    assert_int_equal(cf_prices_query(&req, &res), CF_OK);
    assert_false(res.one_gpu);
    int seen_t4 = 0, seen_a100 = 0;
    for (size_t i = 0; i < res.summary.n_rows; i++) {
        const cf_gpu_cloud_prices *g = &res.summary.rows[i];
        if (strcmp(g->gpu, "T4") == 0) {
            seen_t4 = 1;
            continue;
        }
        assert_int_equal(strncmp(g->gpu, "A100", 4), 0);
        assert_int_equal(g->gpu_counts_mask, 1u << 8); /* A100:8: only the 8-GPU VMs */
        seen_a100 = 1;
    }
    assert_true(seen_t4 && seen_a100);
    cf_prices_result_free(&res);

    /* one of several that no offer has (T4 is sold, never 3 per VM): the
     * summary left it out without a word */
    const char *one_unmatched[] = {"H100", "T4:3"};
    req = (cf_prices_request){.catalog_source = &src, .gpus = one_unmatched, .n_gpus = 2, .note = keep_warning};
    warned[0] = '\0';
    assert_int_equal(cf_prices_query(&req, &res), CF_OK);
    assert_string_equal(warned, "--gpu T4:3: no offer matches; the summary leaves it out");
    cf_prices_result_free(&res);
    req.gpus = several; /* each matches: no warning */
    warned[0] = '\0';
    assert_int_equal(cf_prices_query(&req, &res), CF_OK);
    assert_string_equal(warned, "");
    cf_prices_result_free(&res);

    const char *none[] = {"A100:3", "T4:3"};
    req.gpus = none;
    assert_int_equal(cf_prices_query(&req, &res), CF_ERR_INFEASIBLE);
    assert_non_null(strstr(cf_error_message(), "A100:3, T4:3"));
    cf_error_clear();
    cf_prices_result_free(&res);

    const char *unknown[] = {"T4", "Z9"};
    req.gpus = unknown;
    assert_int_equal(cf_prices_query(&req, &res), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "unknown GPU 'Z9'"));
    cf_error_clear();
    cf_prices_result_free(&res);

    req = (cf_prices_request){.catalog_source = &src, .gpu = "A100-40GB", .gpus = tool, .n_gpus = 1};
    assert_int_equal(cf_prices_query(&req, &res), CF_OK);
    assert_true(res.one_gpu);
    cf_prices_result_free(&res);
    const char *other[] = {"T4"};
    req.gpus = other;
    assert_int_equal(cf_prices_query(&req, &res), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "different GPUs"));
    cf_error_clear();
    cf_prices_result_free(&res);
    cf_catalog_source_close(&src);
}

/* ---- a one-request HTTP server on 127.0.0.1 ---- */
typedef struct {
    int listen_fd;
    char *body;
    size_t len;
} server;

static void *serve_one(void *arg)
{
    server *s = arg;
    int fd = accept(s->listen_fd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char request[4096];
    ssize_t got = 0, n;
    while (got < (ssize_t)sizeof request - 1 && (n = read(fd, request + got, sizeof request - 1 - (size_t)got)) > 0) {
        got += n;
        request[got] = '\0';
        if (strstr(request, "\r\n\r\n"))
            break;
    }
    char head[160];
    int k = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                     s->len);
    if (write(fd, head, (size_t)k) == k && write(fd, s->body, s->len) == (ssize_t)s->len)
        shutdown(fd, SHUT_WR);
    close(fd);
    return NULL;
}

static int start(server *s, pthread_t *thread)
{
    s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof addr;
    assert_int_equal(bind(s->listen_fd, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(listen(s->listen_fd, 4), 0);
    assert_int_equal(getsockname(s->listen_fd, (struct sockaddr *)&addr, &alen), 0);
    assert_int_equal(pthread_create(thread, NULL, serve_one, s), 0);
    return ntohs(addr.sin_port);
}

static size_t snapshots(cf_db *db)
{
    cf_snapshot list[8];
    size_t n = 0;
    assert_int_equal(cf_snapshot_list(db, list, 8, &n), CF_OK);
    for (size_t i = 0; i < n; i++)
        cf_snapshot_free(&list[i]);
    return n;
}

static void test_update_stored_with_the_commit(void **state)
{
    (void)state;
    server s = {0};
    assert_int_equal(cf_read_file("tests/fixtures/pricing/lambda/instance_types.json", &s.body, &s.len), CF_OK);
    pthread_t thread;
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", start(&s, &thread));
    setenv("CLOUDFIT_LAMBDA_API_URL", url, 1);
    setenv("CLOUDFIT_LAMBDA_API_KEY", "fixture-lambda-key", 1);
    setenv("CLOUDFIT_HTTP_RETRIES", "0", 1);

    cf_catalog_source base;
    assert_int_equal(cf_catalog_source_open(NULL, -1, NULL, &base), CF_OK);
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    const char *clouds[] = {"lambda"};
    cf_prices_update_request req = {.base = &base, .db = db,
                                    .options = {.clouds = clouds, .n_clouds = 1, .clouds_explicit = 1}};
    cf_prices_update_run_result res;
    cf_status st = cf_prices_update_run(&req, &res);
    pthread_join(thread, NULL);
    if (st != CF_OK)
        fail_msg("cf_prices_update_run: %s", cf_error_message());
    assert_int_equal(res.fetch_status, CF_OK);
    assert_false(res.any_cloud_failed);
    assert_int_equal(res.result.n_clouds, 1);
    assert_int_equal(res.result.clouds[0].outcome, CF_CLOUD_UPDATED);
    assert_true(res.result.clouds[0].n_rows_updated > 0);
    assert_true(res.report.snapshot_id > 0);
    assert_ptr_equal(res.report.result, &res.result);
    assert_int_equal(cf_db_release(db, 0), CF_OK); /* the report was not delivered: nothing kept */
    assert_int_equal(snapshots(db), 0);
    cf_prices_update_run_free(&res);

    /* Again, committed this time. */
    assert_int_equal(pthread_create(&thread, NULL, serve_one, &s), 0);
    assert_int_equal(cf_prices_update_run(&req, &res), CF_OK);
    pthread_join(thread, NULL);
    assert_int_equal(cf_db_release(db, 1), CF_OK);
    assert_int_equal(snapshots(db), 1);
    cf_snapshot snap;
    int found = 0;
    assert_int_equal(cf_snapshot_latest(db, &snap, &found), CF_OK);
    assert_true(found);
    assert_string_equal(snap.sources, "lambda");
    cf_prices_update_run_free(&res);
    /* The catalog in use is now that snapshot. */
    cf_catalog_source in_use;
    assert_int_equal(cf_catalog_source_read(db, "the-history", -1, NULL, NULL, NULL, &in_use), CF_OK);
    assert_string_equal(in_use.snapshot, snap.name);
    assert_string_equal(in_use.refreshed, "lambda");
    cf_catalog_source_close(&in_use);
    cf_snapshot_free(&snap);
    assert_int_equal(cf_catalog_source_read(NULL, NULL, -1, NULL, NULL, NULL, &in_use), CF_OK);
    assert_string_equal(in_use.snapshot, "embedded");
    cf_catalog_source_close(&in_use);

    /* The server gone: the fetch fails, nothing is held or stored. */
    close(s.listen_fd);
    assert_int_not_equal(cf_prices_update_run(&req, &res), CF_OK);
    assert_int_not_equal(res.fetch_status, CF_OK);
    assert_true(res.any_cloud_failed);
    assert_int_equal(res.result.clouds[0].outcome, CF_CLOUD_FAILED);
    cf_error_clear();
    cf_prices_update_run_free(&res);
    assert_int_equal(snapshots(db), 1);
    cf_db_close(db);
    cf_catalog_source_close(&base);
    free(s.body);
}

static int n_notes;
static char last_note[160];

static void keep_note(void *ctx, cf_note_kind kind, const char *text)
{
    (void)ctx;
    (void)kind;
    n_notes++;
    snprintf(last_note, sizeof last_note, "%s", text);
}

/* The one table of which form takes which option: what the completion
 * scripts offer after prices [GPU] and prices update
 * (cf_prices_option_subcommands) and what the check takes there without a
 * note. */
static void test_sub_options(void **state)
{
    (void)state;
    assert_string_equal(cf_prices_option_subcommands("max-price-change"), "update");
    assert_string_equal(cf_prices_option_subcommands("gpu"), "listing");
    assert_string_equal(cf_prices_option_subcommands("spot"), "listing");
    assert_string_equal(cf_prices_option_subcommands("price-overrides"), "listing");
    assert_null(cf_prices_option_subcommands("cloud"));
    assert_null(cf_prices_option_subcommands("region"));
    assert_null(cf_prices_option_subcommands("db"));
    const char *change[] = {"max-price-change"}, *shown[] = {"gpu", "spot", "cloud"};
    n_notes = 0;
    assert_int_equal(cf_prices_check_options("update", change, 1, keep_note, NULL), CF_OK);
    assert_int_equal(cf_prices_check_options("listing", shown, 3, keep_note, NULL), CF_OK);
    assert_int_equal(n_notes, 0);
    assert_int_equal(cf_prices_check_options("listing", change, 1, keep_note, NULL), CF_OK);
    assert_string_equal(last_note, "note: --max-price-change applies to 'prices update' only; ignored");
    assert_int_equal(cf_prices_check_options("update", shown, 3, keep_note, NULL), CF_OK);
    assert_int_equal(n_notes, 3); /* --spot given to update: noted (the CLI said nothing) */
    assert_string_equal(last_note, "note: --spot applies to 'prices' only, not 'prices update'; ignored");
}

int main(void)
{
    if (chdir(CF_SOURCE_DIR) != 0) {
        perror(CF_SOURCE_DIR);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_and_offers),
        cmocka_unit_test(test_gpus_as_the_argument),
        cmocka_unit_test(test_update_stored_with_the_commit),
        cmocka_unit_test(test_sub_options),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
