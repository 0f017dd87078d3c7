/* Tests of common/fileio.c's staged writes: a staged output has no name
 * in its folder until it is committed (an O_TMPFILE inode), so a process
 * killed between staging and commit (SIGKILL, the OOM killer, a power
 * loss) leaves nothing behind; it left `.NAME.cloudfit-XXXXXX` for good.
 * The named fallback (file systems without O_TMPFILE) is run too, forced
 * by cf_file_staging_force_named. */
#define _GNU_SOURCE 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cloudfit/common/fileio.h"

static char g_dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "%s/cloudfit-fileio-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cf_file_staging_force_named(0);
    DIR *d = opendir(g_dir);
    if (!d)
        return 0;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(g_dir);
    return 0;
}

/* The names in g_dir, sorted, joined by ' ' ("" when empty). */
static void names_in_dir(char *out, size_t n)
{
    struct dirent **list;
    int k = scandir(g_dir, &list, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < k; i++) {
        if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, ".."))
            snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? " " : "", list[i]->d_name);
        free(list[i]);
    }
    free(list);
}

static void path_in_dir(const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", g_dir, name);
}

static void assert_file_holds(const char *path, const char *text)
{
    char *got = NULL;
    size_t len = 0;
    assert_int_equal(cf_read_file(path, &got, &len), CF_OK);
    assert_string_equal(got, text);
    free(got);
}

static void test_staged_file_has_no_name_until_commit(void **state)
{
    (void)state;
    char out[512], names[1024];
    path_in_dir("out.json", out, sizeof out);
    cf_staged_file f;
    assert_int_equal(cf_file_stage_open(out, 0600, &f), CF_OK);
    assert_int_equal(cf_file_stage_write(&f, "{\"a\": 1}\n", 9), CF_OK);
    assert_int_equal(cf_file_stage_close(&f), CF_OK);
    names_in_dir(names, sizeof names);
    assert_string_equal(names, ""); /* it was ".out.json.cloudfit-XXXXXX" */
    assert_int_equal(cf_file_commit(&f), CF_OK);
    names_in_dir(names, sizeof names);
    assert_string_equal(names, "out.json");
    assert_file_holds(out, "{\"a\": 1}\n");
    cf_file_discard(&f); /* after a commit: nothing to do */
    names_in_dir(names, sizeof names);
    assert_string_equal(names, "out.json");
}

/* A child stages a file, says so through a pipe and waits; it is SIGKILLed
 * there (no handler runs). What is left in the folder: */
static void kill_between_stage_and_commit(int force_named, char *names, size_t n)
{
    char out[512];
    path_in_dir("result.html", out, sizeof out);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        cf_file_staging_force_named(force_named);
        cf_staged_file f;
        if (cf_file_stage_open(out, 0644, &f) != CF_OK || cf_file_stage_write(&f, "<html>", 6) != CF_OK ||
            cf_file_stage_close(&f) != CF_OK)
            _exit(1);
        if (write(p[1], "s", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    char c = 0;
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    kill(pid, SIGKILL);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    names_in_dir(names, n);
}

static void test_sigkill_between_stage_and_commit_leaves_nothing(void **state)
{
    (void)state;
    char names[1024];
    kill_between_stage_and_commit(0, names, sizeof names);
    assert_string_equal(names, "");
}

/* The fallback (no O_TMPFILE) stages under a hidden name: what a kill
 * there leaves (docs/reliability.md). */
static void test_named_fallback_leaves_its_hidden_name_on_sigkill(void **state)
{
    (void)state;
    char names[1024];
    kill_between_stage_and_commit(1, names, sizeof names);
    assert_non_null(strstr(names, ".result.html.cloudfit-"));
    assert_null(strchr(names, ' '));
}

/* Both ways: a new file gets new_mode less the umask, an existing one
 * keeps its mode; a link's target is replaced and the link kept; discard
 * leaves nothing; nothing but the outputs is left in the folder. */
static void stage_commit_discard(int force_named)
{
    cf_file_staging_force_named(force_named);
    mode_t old_mask = umask(022);
    char a[512], b[512], link[512], names[1024];
    path_in_dir("a.sh", a, sizeof a);
    path_in_dir("b.txt", b, sizeof b);
    path_in_dir("l.txt", link, sizeof link);
    struct stat st;

    assert_int_equal(cf_write_file_atomic_mode(a, "#!/bin/sh\n", 10, 0777), CF_OK);
    assert_int_equal(stat(a, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0755);
    assert_file_holds(a, "#!/bin/sh\n");

    assert_int_equal(cf_write_file_atomic(b, "one", 3), CF_OK);
    assert_int_equal(stat(b, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(chmod(b, 0640), 0);
    assert_int_equal(cf_write_file_atomic(b, "two", 3), CF_OK);
    assert_int_equal(stat(b, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_file_holds(b, "two");

    assert_int_equal(symlink("b.txt", link), 0);
    assert_int_equal(cf_write_file_atomic(link, "three", 5), CF_OK);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_file_holds(b, "three");

    cf_staged_file f;
    assert_int_equal(cf_file_stage(a, "gone", 4, &f), CF_OK);
    cf_file_discard(&f);
    assert_file_holds(a, "#!/bin/sh\n");

    /* a set: nothing published before its commit, all after it */
    cf_staged_set set = {0};
    char c[512], d[512];
    path_in_dir("c", c, sizeof c);
    path_in_dir("d", d, sizeof d);
    assert_int_equal(cf_staged_set_add(&set, c, "c", 1), CF_OK);
    assert_int_equal(cf_staged_set_add(&set, d, "d", 1), CF_OK);
    names_in_dir(names, sizeof names);
    if (force_named)
        assert_non_null(strstr(names, ".c.cloudfit-"));
    else
        assert_string_equal(names, "a.sh b.txt l.txt");
    assert_int_equal(cf_staged_set_commit(&set), CF_OK);
    assert_file_holds(c, "c");
    assert_file_holds(d, "d");
    assert_int_equal(cf_staged_set_add(&set, c, "x", 1), CF_OK);
    cf_staged_set_discard(&set);
    assert_file_holds(c, "c");

    names_in_dir(names, sizeof names);
    assert_string_equal(names, "a.sh b.txt c d l.txt");
    umask(old_mask);
}

static void test_unnamed_staging_keeps_the_contract(void **state)
{
    (void)state;
    stage_commit_discard(0);
}

static void test_named_fallback_keeps_the_contract(void **state)
{
    (void)state;
    stage_commit_discard(1);
}

/* A staging that is committed while another has the same hidden name
 * prefix: both published, no name collides. */
static void test_many_outputs_in_one_folder(void **state)
{
    (void)state;
    cf_staged_file f[6];
    char p[6][512], names[1024];
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "o%d", i);
        path_in_dir(name, p[i], sizeof p[i]);
        assert_int_equal(cf_file_stage(p[i], name, strlen(name), &f[i]), CF_OK);
    }
    for (int i = 0; i < 6; i++)
        assert_int_equal(cf_file_commit(&f[i]), CF_OK);
    names_in_dir(names, sizeof names);
    assert_string_equal(names, "o0 o1 o2 o3 o4 o5");
    assert_file_holds(p[3], "o3");
}

/* A dangling link names the file that writing it creates: the same file
 * as an output of that name (found before anything runs, not when written). */
static void test_dangling_link_is_the_same_file_as_its_target(void **state)
{
    (void)state;
    char link[512], target[512], other[512];
    path_in_dir("link.html", link, sizeof link);
    path_in_dir("out.svg", target, sizeof target);
    path_in_dir("other.svg", other, sizeof other);
    assert_int_equal(symlink("out.svg", link), 0);
    assert_true(cf_same_file(link, target));
    assert_true(cf_same_file(target, link));
    assert_false(cf_same_file(link, other));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_staged_file_has_no_name_until_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigkill_between_stage_and_commit_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_named_fallback_leaves_its_hidden_name_on_sigkill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unnamed_staging_keeps_the_contract, setup, teardown),
        cmocka_unit_test_setup_teardown(test_named_fallback_keeps_the_contract, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_outputs_in_one_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dangling_link_is_the_same_file_as_its_target, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
