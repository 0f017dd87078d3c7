/* cf_parallel_for: every item exactly once, thread indices in range, any
 * thread count (more threads than items, one item, none); the thread count
 * from CLOUDFIT_THREADS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "cloudfit/common/parallel.h"

typedef struct {
    int *seen;
    int bad_thread;
    int threads;
} ctx_t;

static void mark(void *data, size_t i, int thread)
{
    ctx_t *c = data;
    __atomic_fetch_add(&c->seen[i], 1, __ATOMIC_RELAXED);
    if (thread < 0 || thread >= c->threads)
        c->bad_thread = 1;
}

static void test_every_item_once(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 3, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int threads = 0; threads <= CF_PARALLEL_MAX_THREADS + 2; threads++) {
            size_t n = sizes[s];
            ctx_t c = {calloc(n + 1, sizeof(int)), 0, threads < 1 ? 1 : threads};
            cf_parallel_for(n, threads, mark, &c);
            for (size_t i = 0; i < n; i++)
                assert_int_equal(c.seen[i], 1);
            assert_int_equal(c.bad_thread, 0);
            free(c.seen);
        }
}

static void test_thread_count(void **state)
{
    (void)state;
    setenv("CLOUDFIT_THREADS", "3", 1);
    assert_int_equal(cf_parallel_threads(), 3);
    setenv("CLOUDFIT_THREADS", "0", 1); /* out of range: the processor count */
    int n = cf_parallel_threads();
    assert_true(n >= 1 && n <= CF_PARALLEL_MAX_THREADS);
    setenv("CLOUDFIT_THREADS", "2x", 1);
    assert_int_equal(cf_parallel_threads(), n);
    unsetenv("CLOUDFIT_THREADS");
    assert_int_equal(cf_parallel_threads(), n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_item_once),
        cmocka_unit_test(test_thread_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
