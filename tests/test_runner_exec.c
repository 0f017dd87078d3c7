/* The exec runner's up-front program check (profiler/runner_exec.c): a
 * template whose program cannot run is refused when the runner is opened
 * (CF_ERR_UNAVAILABLE, exit 6), with the reason, rather than after every
 * probe of the light profile failed twice. A directory, an empty program
 * name, a file without execute permission, a missing file, and the same
 * for a bare name looked up on PATH. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/profiler/runners.h"

static char dir[256];
static char saved_path[8192];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s", "/tmp/cf-runner-exec-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char path[512];
    snprintf(path, sizeof path, "%s/notexec", dir); /* exists, mode 0644 */
    if (cf_write_file_atomic(path, "#!/bin/sh\n", 10) != CF_OK || chmod(path, 0644) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/runme", dir); /* exists, executable */
    if (cf_write_file_atomic(path, "#!/bin/sh\n", 10) != CF_OK || chmod(path, 0755) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/subdir", dir);
    if (mkdir(path, 0755) != 0)
        return -1;
    const char *p = getenv("PATH");
    snprintf(saved_path, sizeof saved_path, "%s", p ? p : "");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    setenv("PATH", saved_path, 1);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Opens `template_text`; expects it refused with a message containing `want`. */
static void refused(const char *template_text, const char *want)
{
    cf_exec_runner e;
    cf_status st = cf_exec_runner_open(template_text, 30, 1, &e);
    if (st == CF_OK) {
        cf_exec_runner_close(&e);
        fail_msg("'%s' was accepted (expected: %s)", template_text, want);
    }
    assert_int_equal(st, CF_ERR_UNAVAILABLE);
    if (!strstr(cf_error_message(), want))
        fail_msg("'%s': message '%s' lacks '%s'", template_text, cf_error_message(), want);
    cf_error_clear();
}

static void accepted(const char *template_text)
{
    cf_exec_runner e;
    cf_status st = cf_exec_runner_open(template_text, 30, 1, &e);
    if (st != CF_OK)
        fail_msg("'%s' refused: %s", template_text, cf_error_message());
    cf_exec_runner_close(&e);
}

static void test_a_directory_is_refused(void **state)
{
    (void)state;
    refused("/etc {nodes}", "cannot run '/etc': is a directory");
    char t[512], want[600];
    snprintf(t, sizeof t, "%s/subdir {nodes}", dir);
    snprintf(want, sizeof want, "cannot run '%s/subdir': is a directory", dir);
    refused(t, want);
}

static void test_an_empty_program_is_refused(void **state)
{
    (void)state;
    refused("'' {nodes}", "cannot run '': empty program name");
    refused("\"\" --nodes {nodes}", "empty program name");
}

static void test_a_file_that_is_not_executable_is_refused(void **state)
{
    (void)state;
    char t[512], want[600];
    snprintf(t, sizeof t, "%s/notexec {nodes}", dir);
    snprintf(want, sizeof want, "cannot run '%s/notexec': is not executable", dir);
    refused(t, want);
    refused("/dev/null {nodes}", "cannot run '/dev/null': is not a regular file");
}

static void test_a_missing_file_is_refused(void **state)
{
    (void)state;
    refused("/nonexistent/launch {nodes}", "cannot run '/nonexistent/launch': no such file");
    char t[512];
    snprintf(t, sizeof t, "%s/runme {nodes}", dir);
    accepted(t);
}

/* A bare name: PATH is searched; a directory or a non-executable file of
 * that name is skipped (as execvp does) and named in the message. */
static void test_a_bare_name_is_looked_up_on_path(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "/nonexistent:%s", dir);
    setenv("PATH", path, 1);
    accepted("runme {nodes}");
    char want[700];
    snprintf(want, sizeof want, "cannot run 'subdir': not found on PATH ('%s/subdir' is a directory)", dir);
    refused("subdir {nodes}", want);
    snprintf(want, sizeof want, "cannot run 'notexec': not found on PATH ('%s/notexec' is not executable)", dir);
    refused("notexec {nodes}", want);
    refused("nothing-of-that-name {nodes}", "cannot run 'nothing-of-that-name': not found on PATH");
    /* an executable of the name later on PATH is found past the directory */
    snprintf(path, sizeof path, "%s:/bin:/usr/bin", dir);
    setenv("PATH", path, 1);
    char link[600];
    snprintf(link, sizeof link, "%s/sh", dir);
    assert_int_equal(mkdir(link, 0755), 0);
    accepted("sh -c true");
    assert_int_equal(rmdir(link), 0);
    setenv("PATH", saved_path, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_directory_is_refused),
        cmocka_unit_test(test_an_empty_program_is_refused),
        cmocka_unit_test(test_a_file_that_is_not_executable_is_refused),
        cmocka_unit_test(test_a_missing_file_is_refused),
        cmocka_unit_test(test_a_bare_name_is_looked_up_on_path),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
