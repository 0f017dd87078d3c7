#include "cloudfit/common/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

int cf_parallel_threads(void)
{
    const char *env = getenv("CLOUDFIT_THREADS");
    if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v >= 1 && v <= CF_PARALLEL_MAX_THREADS)
            return (int)v;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > CF_PARALLEL_MAX_THREADS ? CF_PARALLEL_MAX_THREADS : (int)n;
}

typedef struct {
    void (*fn)(void *ctx, size_t i, int thread);
    void *ctx;
    size_t n;
    atomic_size_t next;
} queue;

typedef struct {
    queue *q;
    int thread;
} worker;

static void drain(queue *q, int thread)
{
    for (size_t i; (i = atomic_fetch_add(&q->next, 1)) < q->n;)
        q->fn(q->ctx, i, thread);
}

static void *run_worker(void *arg)
{
    worker *w = arg;
    drain(w->q, w->thread);
    return NULL;
}

void cf_parallel_for(size_t n, int threads, void (*fn)(void *ctx, size_t i, int thread), void *ctx)
{
    size_t t = threads < 1 ? 1 : threads > CF_PARALLEL_MAX_THREADS ? CF_PARALLEL_MAX_THREADS : (size_t)threads;
    if (t > n)
        t = n;
    queue q = {.fn = fn, .ctx = ctx, .n = n};
    atomic_init(&q.next, 0);
    pthread_t ids[CF_PARALLEL_MAX_THREADS];
    worker workers[CF_PARALLEL_MAX_THREADS];
    int running[CF_PARALLEL_MAX_THREADS] = {0};
    for (size_t k = 1; k < t; k++) {
        workers[k] = (worker){&q, (int)k};
        running[k] = pthread_create(&ids[k], NULL, run_worker, &workers[k]) == 0;
    }
    drain(&q, 0);
    for (size_t k = 1; k < t; k++)
        if (running[k])
            pthread_join(ids[k], NULL);
}
