/* cf_parallel_for: every item exactly once, thread indices in range, any
 * thread count (more threads than items, one item, none); its waiting
 * workers reused across many calls, a call from inside an item, calls from
 * two threads at once and a call in a forked child; the thread count from
 * CLOUDFIT_THREADS, else the CPUs the process may run on. */
#define _GNU_SOURCE 1 /* sched_setaffinity */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

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

static void test_many_calls(void **state)
{
    (void)state;
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(round % 7) * 3;
        int threads = 1 + round % CF_PARALLEL_MAX_THREADS;
        int seen[32] = {0};
        ctx_t c = {seen, 0, threads};
        cf_parallel_for(n, threads, mark, &c);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(seen[i], 1);
        assert_int_equal(c.bad_thread, 0);
    }
}

typedef struct {
    int seen[16][16];
    int bad;
} nested_t;

typedef struct {
    nested_t *outer;
    size_t row;
} row_t;

static void inner_item(void *data, size_t j, int thread)
{
    row_t *r = data;
    __atomic_fetch_add(&r->outer->seen[r->row][j], 1, __ATOMIC_RELAXED);
    if (thread != 0) /* an inner call runs on the calling thread */
        r->outer->bad = 1;
}

static void outer_item(void *data, size_t i, int thread)
{
    (void)thread;
    row_t r = {data, i};
    cf_parallel_for(16, 4, inner_item, &r);
}

static void test_nested_call(void **state)
{
    (void)state;
    nested_t *c = calloc(1, sizeof *c);
    cf_parallel_for(16, 4, outer_item, c);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            assert_int_equal(c->seen[i][j], 1);
    assert_int_equal(c->bad, 0);
    free(c);
}

static void *caller(void *arg)
{
    int *failed = arg;
    for (int round = 0; round < 300; round++) {
        int seen[64] = {0};
        ctx_t c = {seen, 0, 4};
        cf_parallel_for(64, 4, mark, &c);
        for (int i = 0; i < 64; i++)
            *failed |= seen[i] != 1;
        *failed |= c.bad_thread;
    }
    return NULL;
}

static void test_two_callers(void **state)
{
    (void)state;
    pthread_t other;
    int failed_here = 0, failed_there = 0;
    assert_int_equal(pthread_create(&other, NULL, caller, &failed_there), 0);
    caller(&failed_here);
    pthread_join(other, NULL);
    assert_int_equal(failed_here, 0);
    assert_int_equal(failed_there, 0);
}

static void test_forked_child(void **state)
{
    (void)state;
    int seen[8] = {0};
    ctx_t c = {seen, 0, 4};
    cf_parallel_for(8, 4, mark, &c); /* the parent has workers now */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int child_seen[100] = {0};
        ctx_t cc = {child_seen, 0, 4};
        cf_parallel_for(100, 4, mark, &cc);
        int ok = cc.bad_thread == 0;
        for (int i = 0; i < 100; i++)
            ok &= child_seen[i] == 1;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
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

/* A process pinned to one CPU (taskset, a cpuset) gets one thread, not one
 * per online processor of the machine. In a child, so the pin stays there. */
static void test_thread_count_follows_the_cpu_affinity(void **state)
{
    (void)state;
    cpu_set_t set;
    CPU_ZERO(&set);
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    if (CPU_COUNT(&set) < 2)
        skip(); /* one CPU already: nothing to tell apart */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int cpu = 0;
        while (!CPU_ISSET(cpu, &set))
            cpu++;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        unsetenv("CLOUDFIT_THREADS");
        if (sched_setaffinity(0, sizeof one, &one) != 0)
            _exit(2);
        _exit(cf_parallel_threads() == 1 ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_item_once),
        cmocka_unit_test(test_many_calls),
        cmocka_unit_test(test_nested_call),
        cmocka_unit_test(test_two_callers),
        cmocka_unit_test(test_forked_child),
        cmocka_unit_test(test_thread_count),
        cmocka_unit_test(test_thread_count_follows_the_cpu_affinity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
