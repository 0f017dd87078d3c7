#define _GNU_SOURCE 1 /* sched_getaffinity, CPU_COUNT */
#include "cloudfit/common/parallel.h"
#include "cloudfit/common/env_settings.h"
#include "cloudfit/common/number.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

int cf_usable_cpus(void)
{
    /* taskset, a cpuset or a container's --cpuset-cpus leave fewer CPUs
     * to this process than the machine has online */
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1 << 16 ? 1 << 16 : (int)n;
}

int cf_parallel_threads(void)
{
    double v = 0;
    if (cf_env_setting("CLOUDFIT_THREADS", &v))
        return (int)v;
    int n = cf_usable_cpus();
    return n > CF_PARALLEL_MAX_THREADS ? CF_PARALLEL_MAX_THREADS : n;
}

typedef struct {
    void (*fn)(void *ctx, size_t i, int thread);
    void *ctx;
    size_t n;
    atomic_size_t next;
} queue;

static void drain(queue *q, int thread)
{
    for (size_t i; (i = atomic_fetch_add(&q->next, 1)) < q->n;)
        q->fn(q->ctx, i, thread);
}

/* The workers (threads 1 … CF_PARALLEL_MAX_THREADS − 1) are started on
 * first use and then wait for work: starting threads for every call cost
 * more than a small call's work (a recommend makes ten calls; the network
 * fits' are 0.2 ms each). A job is offered to the first `wanted` workers;
 * a worker that wakes after the caller has drained the queue (`closed`)
 * stays out, so the caller never waits for a thread that has not started
 * on the job. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    pthread_t ids[CF_PARALLEL_MAX_THREADS];
    int n_workers, wanted, joined, finished, closed, stopping;
    unsigned long generation;
    queue *q;
    pid_t pid; /* a forked child has no workers */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

static pthread_mutex_t pool_in_use = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static _Thread_local int inside_job;                           /* nested calls run inline */

static void *worker_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    inside_job = 1;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (pool.generation == seen && !pool.stopping)
            pthread_cond_wait(&pool.wake, &pool.mu);
        if (pool.stopping)
            break;
        seen = pool.generation;
        if (pool.closed || id > pool.wanted)
            continue;
        pool.joined++;
        queue *q = pool.q;
        pthread_mutex_unlock(&pool.mu);
        drain(q, id);
        pthread_mutex_lock(&pool.mu);
        pool.finished++;
        pthread_cond_signal(&pool.done);
    }
    pthread_mutex_unlock(&pool.mu);
    return NULL;
}

static void stop_workers(void)
{
    if (pool.pid != getpid())
        return;
    pthread_mutex_lock(&pool.mu);
    pool.stopping = 1;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    for (int k = 1; k <= pool.n_workers; k++)
        pthread_join(pool.ids[k], NULL);
    pool.n_workers = 0;
}

/* Workers 1 … want − 1 running (as many as could be started). Called with
 * pool_in_use held. */
static int ensure_workers(int want)
{
    if (pool.pid != getpid()) {
        if (pool.pid != 0)
            return 0; /* a forked child: its parent's workers are not here */
        pool.pid = getpid();
        atexit(stop_workers);
    }
    while (pool.n_workers < want - 1 &&
           pthread_create(&pool.ids[pool.n_workers + 1], NULL, worker_main, (void *)(intptr_t)(pool.n_workers + 1)) ==
               0)
        pool.n_workers++;
    return pool.n_workers;
}

void cf_parallel_for(size_t n, int threads, void (*fn)(void *ctx, size_t i, int thread), void *ctx)
{
    size_t t = threads < 1 ? 1 : threads > CF_PARALLEL_MAX_THREADS ? CF_PARALLEL_MAX_THREADS : (size_t)threads;
    if (t > n)
        t = n;
    queue q = {.fn = fn, .ctx = ctx, .n = n};
    atomic_init(&q.next, 0);
    if (t <= 1 || inside_job || pthread_mutex_trylock(&pool_in_use) != 0) {
        drain(&q, 0);
        return;
    }
    int helpers = ensure_workers((int)t);
    if (helpers > (int)t - 1)
        helpers = (int)t - 1;
    if (helpers <= 0) { /* none could be started, or a forked child */
        pthread_mutex_unlock(&pool_in_use);
        drain(&q, 0);
        return;
    }
    pthread_mutex_lock(&pool.mu);
    pool.q = &q;
    pool.wanted = helpers;
    pool.joined = pool.finished = pool.closed = 0;
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    inside_job = 1;
    drain(&q, 0);
    inside_job = 0;
    pthread_mutex_lock(&pool.mu);
    pool.closed = 1;
    while (pool.finished < pool.joined)
        pthread_cond_wait(&pool.done, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    pthread_mutex_unlock(&pool_in_use);
}
