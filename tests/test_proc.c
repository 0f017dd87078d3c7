/* Tests of common/proc.c: what a stop that ends the process at once says
 * and exits with, and that the grace alarm waits for a commit in flight
 * (a stop after the commit began said "nothing of this run was kept" and
 * exited 130 with the run stored). Each case runs in a child process: the
 * handlers are process-wide and end it. */
#define _GNU_SOURCE 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cloudfit/common/proc.h"

static void test_stop_message(void **state)
{
    (void)state;
    char m[256];
    assert_int_equal(cf_proc_stop_message(SIGINT, 0, 0, m, sizeof m), 130);
    assert_string_equal(m, "cloudfit: interrupted by SIGINT: stopped, nothing of this run was kept\n");
    assert_int_equal(cf_proc_stop_message(SIGTERM, 1, 0, m, sizeof m), 1);
    assert_string_equal(m, "cloudfit: interrupted by SIGTERM: stopped during the commit: this run may have been "
                           "stored; check 'cloudfit history'\n");
    assert_int_equal(cf_proc_stop_message(SIGHUP, 1, 1, m, sizeof m), 1);
    assert_non_null(strstr(m, "SIGHUP: stopped after the commit: this run was stored"));
    assert_int_equal(cf_proc_stop_message(SIGHUP, 0, 1, m, sizeof m), 1);
    char tiny[8]; /* cut, still a string */
    cf_proc_stop_message(SIGINT, 0, 0, tiny, sizeof tiny);
    assert_string_equal(tiny, "cloudfi");
}

typedef enum { NO_COMMIT, ALARM_IN_COMMIT, SECOND_SIGNAL_IN_COMMIT, ALARM_AFTER_FAILED_COMMIT } scenario;

/* Runs `what` in a child with CLOUDFIT_STOP_GRACE_S=0; its exit status and
 * what it wrote to stderr. The grace alarm is raised by hand (it would come
 * 5 s after the signal). */
static int run_child(scenario what, char *err, size_t n)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        setenv("CLOUDFIT_STOP_GRACE_S", "0", 1);
        cf_proc_init();
        if (what != NO_COMMIT)
            cf_proc_commit_begin();
        raise(SIGINT);
        if (what == ALARM_AFTER_FAILED_COMMIT)
            cf_proc_commit_end(0);
        if (what == SECOND_SIGNAL_IN_COMMIT)
            raise(SIGINT);
        else
            raise(SIGALRM);
        if (what == ALARM_IN_COMMIT)
            cf_proc_commit_end(1);
        _exit(0); /* the command's own end: the run was stored, as if the signal came after it */
    }
    close(fds[1]);
    size_t k = 0;
    ssize_t got;
    while (k + 1 < n && (got = read(fds[0], err + k, n - 1 - k)) > 0)
        k += (size_t)got;
    err[k] = '\0';
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_alarm_without_commit_exits_130(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(run_child(NO_COMMIT, err, sizeof err), 130);
    assert_non_null(strstr(err, "nothing of this run was kept"));
    assert_int_equal(run_child(ALARM_AFTER_FAILED_COMMIT, err, sizeof err), 130);
    assert_non_null(strstr(err, "nothing of this run was kept"));
}

static void test_alarm_waits_for_the_commit(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(run_child(ALARM_IN_COMMIT, err, sizeof err), 0);
    assert_string_equal(err, "");
}

static void test_second_signal_in_commit_says_it_may_be_stored(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(run_child(SECOND_SIGNAL_IN_COMMIT, err, sizeof err), 1);
    assert_non_null(strstr(err, "during the commit: this run may have been stored; check 'cloudfit history'"));
    assert_null(strstr(err, "nothing of this run was kept"));
}

/* Standard descriptors left closed are held, not handed to the interrupt
 * pipe: it took descriptor 0 and `rebalance <&-` read cloudfit's own pipe
 * (EAGAIN, exit 3). Reading the held 0 and writing the held 1 fail with
 * EBADF, as on a closed descriptor. */
static void test_closed_standard_descriptors_are_held(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(STDIN_FILENO);
        close(STDOUT_FILENO);
        cf_proc_init();
        char c;
        int ok = cf_interrupt_fd() > STDERR_FILENO && read(STDIN_FILENO, &c, 1) < 0 && errno == EBADF &&
                 write(STDOUT_FILENO, "x", 1) < 0 && errno == EBADF;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_message),
        cmocka_unit_test(test_alarm_without_commit_exits_130),
        cmocka_unit_test(test_alarm_waits_for_the_commit),
        cmocka_unit_test(test_second_signal_in_commit_says_it_may_be_stored),
        cmocka_unit_test(test_closed_standard_descriptors_are_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
