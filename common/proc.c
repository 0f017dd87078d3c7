/* Signals, the subreaper and process clean-up (cloudfit/common/proc.h).
 * Everything the signal handlers touch is async-signal-safe: flags, kill,
 * waitpid, write, unlink, open/read/getdents64 on /proc, _exit. */
#define _GNU_SOURCE 1
#include "cloudfit/common/proc.h"
#include "cloudfit/common/env_settings.h"
#include "cloudfit/common/number.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_GROUPS 16
#define MAX_TEMPS 16
#define TEMP_PATH_MAX 1024

static volatile sig_atomic_t g_signal;
static volatile sig_atomic_t g_initialised;
static int g_pipe[2] = {-1, -1};
static volatile pid_t g_groups[MAX_GROUPS];
static char g_temps[MAX_TEMPS][TEMP_PATH_MAX];
static volatile sig_atomic_t g_temp_used[MAX_TEMPS];
static double g_grace_s = -1;
static atomic_int g_abortable; /* lock-free: read by the handler, changed by any thread */
/* The commit of what the run stores (cf_proc_commit_begin/_end): how many
 * are in flight, whether one was made, and whether the grace alarm came
 * while one was in flight (it waits for it). */
static atomic_int g_committing;
static volatile sig_atomic_t g_stored;
static volatile sig_atomic_t g_alarm_waits;

/* ---- children, async-signal-safe ------------------------------------------------- */

/* Parses decimal pids from buf[0..n) and calls fn for each. */
static int for_each_pid(const char *buf, ssize_t n, void (*fn)(pid_t))
{
    int count = 0;
    long v = -1;
    for (ssize_t i = 0; i <= n; i++) {
        char c = i < n ? buf[i] : ' ';
        if (c >= '0' && c <= '9') {
            v = (v < 0 ? 0 : v * 10) + (c - '0');
        } else if (v > 0) {
            fn((pid_t)v);
            count++;
            v = -1;
        }
    }
    return count;
}

static volatile sig_atomic_t g_kill_signal = SIGKILL;

static void kill_one(pid_t pid)
{
    pid_t pgid = getpgid(pid);
    if (pgid > 1 && pgid != getpgrp())
        kill(-pgid, g_kill_signal);
    kill(pid, g_kill_signal);
}

static pid_t g_seen[256];
static int g_n_seen;

static void count_one(pid_t pid)
{
    if (g_n_seen < 256)
        g_seen[g_n_seen++] = pid;
}

struct linux_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Calls fn for every child of every thread of this process (from
 * /proc/self/task/TID/children); returns how many. */
static int each_direct_child(void (*fn)(pid_t))
{
    int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return 0;
    int count = 0;
    char ents[4096];
    long n;
    while ((n = syscall(SYS_getdents64, dir, ents, sizeof ents)) > 0) {
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(ents + off);
            off += d->d_reclen;
            if (d->d_name[0] < '0' || d->d_name[0] > '9')
                continue;
            char path[64] = "/proc/self/task/";
            size_t len = strlen(path), k = 0;
            while (d->d_name[k] && len < sizeof path - 10)
                path[len++] = d->d_name[k++];
            memcpy(path + len, "/children", 10);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            char buf[4096];
            ssize_t got = read(fd, buf, sizeof buf);
            close(fd);
            if (got > 0)
                count += for_each_pid(buf, got, fn);
        }
    }
    close(dir);
    return count;
}

/* Round after round: kill the children, reap them (their own children are
 * then re-parented here, as we are their subreaper), until none is left. */
static int kill_and_reap_all(void)
{
    int total = 0;
    g_kill_signal = SIGKILL;
    for (int round = 0; round < 64; round++) {
        int killed = each_direct_child(kill_one);
        total += killed;
        int reaped = 0;
        for (;;) {
            int status;
            pid_t w = waitpid(-1, &status, killed ? 0 : WNOHANG);
            if (w <= 0)
                break;
            reaped++;
            if (killed && reaped >= killed) {
                /* The ones we killed are gone; pick up any others without blocking. */
                while (waitpid(-1, &status, WNOHANG) > 0)
                    reaped++;
                break;
            }
        }
        if (!killed && !reaped)
            break;
    }
    return total;
}

/* What a stop that ends the process at once says, and its exit code: "nothing of this run was kept"
 * and 128 + signal only while that is true. Once a commit of what the run stores has begun it cannot
 * be taken back (cutting it short leaves it made or not, SQLite decides on the next open), so the
 * message says the run may have been (or was) stored and the exit code is 1, never 128 + signal,
 * which promises nothing was stored (docs/exit-codes.md). */
int cf_proc_stop_message(int sig, int committing, int stored, char *out, size_t n)
{
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
    const char *what = stored ? ": stopped after the commit: this run was stored; check 'cloudfit history'"
                       : committing ? ": stopped during the commit: this run may have been stored; check 'cloudfit "
                                      "history'"
                                    : ": stopped, nothing of this run was kept";
    /* by hand: snprintf is not async-signal-safe */
    size_t k = 0;
    const char *parts[] = {"cloudfit: interrupted by ", name, what, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (const char *c = parts[i]; *c && k + 1 < n; c++)
            out[k++] = *c;
    if (n)
        out[k] = '\0';
    return stored || committing ? 1 /* CF_EXIT_FAILURE */ : 128 + sig;
}

static void hard_exit(int sig)
{
    char message[256];
    int code = cf_proc_stop_message(sig, atomic_load(&g_committing) > 0, g_stored, message, sizeof message);
    ssize_t ignored = write(STDERR_FILENO, message, strlen(message));
    (void)ignored;
    for (int i = 0; i < MAX_GROUPS; i++)
        if (g_groups[i] > 0)
            kill(-g_groups[i], SIGKILL);
    kill_and_reap_all();
    for (int i = 0; i < MAX_TEMPS; i++)
        if (g_temp_used[i])
            unlink(g_temps[i]);
    _exit(code);
}

/* Inside an abortable stretch with no process group to give a grace
 * period: the message cf_interrupt_check would give, then out. */
static void abort_now(int sig)
{
    for (int i = 0; i < MAX_GROUPS; i++)
        if (g_groups[i] > 0)
            return;
    hard_exit(sig);
}

static void on_stop(int sig)
{
    int saved = errno;
    if (g_signal)
        hard_exit(g_signal); /* a second signal: stop now */
    if (atomic_load(&g_abortable) > 0)
        abort_now(sig);
    g_signal = sig;
    if (g_pipe[1] >= 0) {
        ssize_t ignored = write(g_pipe[1], "!", 1);
        (void)ignored;
    }
    for (int i = 0; i < MAX_GROUPS; i++)
        if (g_groups[i] > 0)
            kill(-g_groups[i], SIGTERM);
    alarm((unsigned)(g_grace_s > 0 ? g_grace_s : 0) + 5);
    errno = saved;
}

/* The grace period is over. A commit in flight is not cut: it would not be
 * undone, only left uncertain; the process finishes it (and the run ends as
 * if the signal had come after it) and the alarm is armed again when it
 * ends (cf_proc_commit_end). */
static void on_alarm(int sig)
{
    (void)sig;
    if (!g_signal)
        return;
    if (atomic_load(&g_committing) > 0) {
        g_alarm_waits = 1;
        return;
    }
    hard_exit(g_signal);
}

/* ---- the API ------------------------------------------------------------------------ */

double cf_proc_stop_grace_s(void)
{
    if (g_grace_s >= 0)
        return g_grace_s;
    double grace = 30;
    cf_env_setting("CLOUDFIT_STOP_GRACE_S", &grace);
    g_grace_s = grace;
    return grace;
}

static void catch(int sig, void (*fn)(int))
{
    struct sigaction old;
    if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN && sig != SIGALRM)
        return; /* ignored by whoever started us (nohup): keep it so */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, NULL);
}

/* A standard descriptor the caller left closed (`<&-`) is held by
 * /dev/null opened the other way round — standard input for writing only,
 * the outputs for reading only — so reading or writing it still fails
 * (EBADF), and no file cloudfit opens takes its number: the interrupt
 * pipe below took descriptor 0, and `rebalance <&-` read cloudfit's own
 * pipe ("cannot read 'standard input': Resource temporarily unavailable",
 * exit 3); with 1 and 2 closed, messages were written into the pipe. */
static void hold_standard_descriptors(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        int held = open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_NOCTTY);
        if (held >= 0 && held != fd) {
            dup2(held, fd);
            close(held);
        }
    }
}

void cf_proc_init(void)
{
    if (g_initialised)
        return;
    g_initialised = 1;
    hold_standard_descriptors();
    cf_proc_stop_grace_s();
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        g_pipe[0] = g_pipe[1] = -1;
    catch(SIGALRM, on_alarm);
    catch(SIGINT, on_stop);
    catch(SIGTERM, on_stop);
    catch(SIGHUP, on_stop);
}

int cf_interrupted(void) { return (int)g_signal; }

void cf_proc_abortable_begin(void) { atomic_fetch_add(&g_abortable, 1); }
void cf_proc_abortable_end(void) { atomic_fetch_sub(&g_abortable, 1); }

int cf_interrupt_fd(void) { return g_pipe[0]; }

void cf_proc_commit_begin(void) { atomic_fetch_add(&g_committing, 1); }

void cf_proc_commit_end(int stored)
{
    if (stored)
        g_stored = 1;
    if (atomic_fetch_sub(&g_committing, 1) == 1 && g_alarm_waits && g_signal) {
        /* the grace period ended during the commit: the stop is bounded again,
         * by the 5 s a hard exit allows after the grace period */
        g_alarm_waits = 0;
        alarm(5);
    }
}

int cf_proc_run_stored(void) { return (int)g_stored; }

cf_status cf_interrupt_check(void)
{
    int sig = (int)g_signal;
    if (!sig)
        return CF_OK;
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
    return cf_error_set(CF_ERR_INTERRUPTED, "interrupted by %s: stopped, nothing of this run was kept", name);
}

void cf_proc_track_group(pid_t pgid)
{
    for (int i = 0; i < MAX_GROUPS; i++)
        if (g_groups[i] == 0) {
            g_groups[i] = pgid;
            if (g_signal) /* the signal came first: do what the handler would have */
                kill(-pgid, SIGTERM);
            return;
        }
}

void cf_proc_untrack_group(pid_t pgid)
{
    for (int i = 0; i < MAX_GROUPS; i++)
        if (g_groups[i] == pgid)
            g_groups[i] = 0;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cf_proc_kill_children(double grace_s)
{
    /* Children that already exited are only reaped. */
    int status;
    while (waitpid(-1, &status, WNOHANG) > 0) {
    }
    pid_t termed[256];
    int n_termed = 0, total = 0;
    double start = mono_s();
    while (grace_s > 0 && mono_s() - start < grace_s) {
        g_n_seen = 0;
        if (each_direct_child(count_one) == 0)
            return total; /* all gone */
        for (int i = 0; i < g_n_seen; i++) {
            int known = 0;
            for (int k = 0; k < n_termed; k++)
                known |= termed[k] == g_seen[i];
            if (known || n_termed == 256)
                continue;
            termed[n_termed++] = g_seen[i];
            g_kill_signal = SIGTERM;
            kill_one(g_seen[i]);
            total++;
        }
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
        while (waitpid(-1, &status, WNOHANG) > 0) {
        }
    }
    return total + kill_and_reap_all();
}

void cf_proc_track_temp(const char *path)
{
    if (strlen(path) >= TEMP_PATH_MAX)
        return;
    for (int i = 0; i < MAX_TEMPS; i++)
        if (!g_temp_used[i]) {
            memcpy(g_temps[i], path, strlen(path) + 1);
            g_temp_used[i] = 1;
            return;
        }
}

void cf_proc_untrack_temp(const char *path)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        if (g_temp_used[i] && strcmp(g_temps[i], path) == 0) {
            g_temp_used[i] = 0;
            return;
        }
}
