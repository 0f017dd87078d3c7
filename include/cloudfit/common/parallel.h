/* Independent pieces of work on every core: the spot Monte Carlo's paths
 * and replays, the enumeration's VM shapes. The caller's contract: item i
 * touches only what belongs to item i (and the per-thread state named by
 * the thread index), so the results are the same as a plain loop, whatever
 * the thread count. */
#ifndef CLOUDFIT_COMMON_PARALLEL_H
#define CLOUDFIT_COMMON_PARALLEL_H
#include <stddef.h>

#define CF_PARALLEL_MAX_THREADS 8

/* The processors this process may run on (its CPU affinity: taskset, a
 * cpuset), at least 1; the online processors where the affinity cannot be
 * read. */
int cf_usable_cpus(void);

/* The thread count to use: one per usable processor (cf_usable_cpus), 1 to
 * CF_PARALLEL_MAX_THREADS; CLOUDFIT_THREADS (1–8) overrides it. */
int cf_parallel_threads(void);

/* Calls fn(ctx, i, thread) for i in [0, n) on up to `threads` threads, this
 * one included (thread 0), the others numbered 1 … threads − 1; items are
 * handed out in order as threads come free. The other threads are started
 * once and wait for the next call (joined at exit); one that cannot be
 * started, or has not woken by the time the items are handed out, leaves
 * its share to the others. A call from inside an item, from a second thread
 * while a call is running, or in a forked child runs on the calling thread
 * alone. Returns when every item is done. */
void cf_parallel_for(size_t n, int threads, void (*fn)(void *ctx, size_t i, int thread), void *ctx);

#endif
