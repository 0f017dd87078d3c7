/* How a command finds its database open: private files, and "the
 * database, if there is one" for commands that only consult it
 * (cloudfit/db.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/db.h"

/* Clears the group and other bits of `path` when this user owns it and it
 * has any. */
static void make_private(const char *path, int is_dir, cf_db_private_fn said, void *ctx)
{
    struct stat st;
    if (lstat(path, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) == 0 ||
        (is_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
        return;
    unsigned before = st.st_mode & 07777, after = before & ~077u;
    if (chmod(path, (mode_t)after) == 0 && said)
        said(ctx, path, before, after);
}

void cf_db_make_private(const char *path, int own_folder, cf_db_private_fn said, void *ctx)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char file[2100];
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
        if ((size_t)snprintf(file, sizeof file, "%s%s", path, suffixes[i]) < sizeof file)
            make_private(file, 0, said, ctx);
    if (own_folder) {
        char dir[2048];
        cf_dirname(path, dir, sizeof dir);
        make_private(dir, 1, said, ctx);
    }
}

const char *cf_db_absent(const char *target)
{
    if (cf_db_is_postgresql(target))
        return NULL;
    struct stat sb, wal;
    if (stat(target, &sb) != 0)
        return strerror(errno);
    char log[2100];
    if (!S_ISREG(sb.st_mode) || sb.st_size > 0 || (size_t)snprintf(log, sizeof log, "%s-wal", target) >= sizeof log ||
        (stat(log, &wal) == 0 && wal.st_size > 0)) /* a log of commits not yet in the file: a database */
        return NULL;
    return "the file is empty";
}

cf_status cf_db_open_existing(const char *target, cf_db **out, char *older_schema, size_t n)
{
    *out = NULL;
    if (n)
        older_schema[0] = '\0';
    if (cf_db_absent(target))
        return CF_OK;
    cf_status st = cf_db_open_readonly(target, out);
    if (st == CF_ERR_INVALID && cf_db_is_postgresql(target)) {
        cf_error_clear(); /* a database without cloudfit's tables yet */
        return CF_OK;
    }
    if (st != CF_OK && cf_db_open_failed_on_older_schema()) {
        if (n)
            snprintf(older_schema, n, "%s", cf_error_message());
        cf_error_clear();
        return CF_OK;
    }
    return st;
}
