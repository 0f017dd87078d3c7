/* Stopping cleanly and leaving no process behind (common/proc.c).
 *
 * cf_proc_init (called once by the CLI) makes cloudfit a child subreaper
 * (prctl PR_SET_CHILD_SUBREAPER: a probe's helper that double-forks or
 * calls setsid() is re-parented to cloudfit, not to init, so it can still
 * be found and killed) and catches SIGINT, SIGTERM and SIGHUP:
 *  - the first signal is recorded (cf_interrupted), wakes any poll on
 *    cf_interrupt_fd, and sends SIGTERM to every tracked process group (a
 *    runner may tear its VMs down); long operations check
 *    cf_interrupt_check at safe points and unwind with CF_ERR_INTERRUPTED,
 *    so nothing is committed and the CLI exits 128 + signal (130, 143, 129);
 *  - if the process has not exited CLOUDFIT_STOP_GRACE_S (default 30) + 5 s
 *    later, or at a second signal, every tracked group and every child is
 *    killed (SIGKILL), tracked temporary files are removed and the process
 *    exits 128 + signal at once. An open SQLite transaction is rolled back
 *    by SQLite itself on the next open (WAL), so the database stays
 *    consistent either way;
 *  - except once the commit of what the run stores has begun
 *    (cf_proc_commit_begin): it cannot be taken back, so the grace alarm
 *    waits for it to end, and a second signal during it (or after it was
 *    made) says the run may have been (was) stored and exits 1, never
 *    128 + signal, which promises that nothing was stored.
 * It also holds the standard descriptors the caller left closed (0–2,
 * on /dev/null opened so that reading or writing them still fails with
 * EBADF), so no file cloudfit opens becomes its standard input or output.
 * Library code that never calls cf_proc_init still works: nothing is
 * caught and cf_interrupted() stays 0. */
#ifndef CLOUDFIT_COMMON_PROC_H
#define CLOUDFIT_COMMON_PROC_H
#include <sys/types.h>

#include "cloudfit/status.h"

void cf_proc_init(void);
/* The signal that asked cloudfit to stop, or 0. */
int cf_interrupted(void);
/* Readable once a stop signal arrived (add it to a poll set); -1 before
 * cf_proc_init. */
int cf_interrupt_fd(void);
/* CF_OK, or CF_ERR_INTERRUPTED "interrupted by SIGINT" once a signal arrived. */
cf_status cf_interrupt_check(void);
/* Marks a stretch of pure computation over input (a parse) that holds
 * nothing a stop must finish or undo: a stop signal that arrives inside
 * it, while no process group is tracked, ends the process at once (the
 * stop message on stderr, tracked temporary files removed, exit 128 +
 * signal) instead of after the computation, which cannot check
 * cf_interrupt_check (cJSON parses 64 MiB in seconds). Nests. */
void cf_proc_abortable_begin(void);
void cf_proc_abortable_end(void);
/* Around the commit of what a run stores (db/stmt.c: every COMMIT of a
 * write transaction; db/backend.c: the close after one, where SQLite
 * checkpoints): from begin on a stop can no longer promise "nothing of
 * this run was kept". `stored`: the commit was made (later stops say the
 * run was stored), else it was rolled back. Nests. */
void cf_proc_commit_begin(void);
void cf_proc_commit_end(int stored);
/* Whether a commit of this process was made (cf_proc_commit_end(1)). */
int cf_proc_run_stored(void);
/* The message a stop that ends the process at once writes (into out, n
 * bytes, with its newline) and the exit code it ends with: 128 + sig and
 * "nothing of this run was kept" when no commit began; 1 and "may have
 * been stored" during one (`committing`), "was stored" after one
 * (`stored`). Async-signal-safe. */
int cf_proc_stop_message(int sig, int committing, int stored, char *out, size_t n);
/* Seconds a process group gets between SIGTERM and SIGKILL when cloudfit
 * stops it (CLOUDFIT_STOP_GRACE_S, 0 to 600; default 30): a runner tears its VMs
 * down in that time. */
double cf_proc_stop_grace_s(void);

/* Process groups that a stop signal must reach (a probe or runner run). */
void cf_proc_track_group(pid_t pgid);
void cf_proc_untrack_group(pid_t pgid);
/* Ends every child left, with its process group: SIGTERM (once each),
 * up to grace_s seconds for them to exit, then SIGKILL round after round
 * until none is left; every one is reaped. These are the re-parented
 * orphans of a probe, including those that called setsid(). Returns how
 * many were signalled. */
int cf_proc_kill_children(double grace_s);

/* Temporary files to remove if the process is stopped before it renames
 * them into place (common/fileio.c tracks its own). */
void cf_proc_track_temp(const char *path);
void cf_proc_untrack_temp(const char *path);

#endif
