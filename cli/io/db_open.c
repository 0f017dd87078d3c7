#include "io/db_open.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cloudfit/common/fileio.h"
#include "log.h"

cf_status cf_cli_db_path(const cf_cli_options *o, char *path, size_t n)
{
    if (o->db_path) {
        if ((size_t)snprintf(path, n, "%s", o->db_path) >= n)
            return cf_error_set(CF_ERR_DB, "history database path is too long");
        return CF_OK;
    }
    return cf_db_default_path(path, n);
}

cf_status cf_cli_db_open_readonly(const cf_cli_options *o, cf_db **out, char *path, size_t n)
{
    *out = NULL;
    cf_status st = cf_cli_db_path(o, path, n);
    if (st != CF_OK)
        return st;
    if (access(path, F_OK) != 0) {
        cf_error_set(CF_ERR_INVALID, "no history database at '%s': %s", path, strerror(errno));
        cf_error_hint("run 'cloudfit recommend' first, or pass the database with --db PATH");
        return CF_ERR_INVALID;
    }
    return cf_db_open_readonly(path, out);
}

/* Makes `path` private (group and other bits cleared) when this user owns
 * it and it is not yet, with a warning that says so: databases and the
 * history folder made by earlier versions were 0644 in a 0755 folder, and
 * a history holds specs, costs and CI metadata. */
static void tighten(const char *path, int is_dir)
{
    struct stat st;
    if (lstat(path, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) == 0 ||
        (is_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
        return;
    mode_t before = st.st_mode & 07777, after = before & ~(mode_t)077;
    if (chmod(path, after) == 0)
        cf_log_warning("made '%s' private: mode %04o, was %04o (others could read the history)", path,
                       (unsigned)after, (unsigned)before);
}

static void tighten_database(const char *path, int own_folder)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char file[1100];
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        snprintf(file, sizeof file, "%s%s", path, suffixes[i]);
        tighten(file, 0);
    }
    if (own_folder) { /* the default location's folder is cloudfit's; a --db folder is the user's */
        char dir[1024];
        cf_dirname(path, dir, sizeof dir);
        tighten(dir, 1);
    }
}

cf_status cf_cli_db_open(const cf_cli_options *o, int create, cf_db **out, char *path, size_t n)
{
    *out = NULL;
    cf_status st = cf_cli_db_path(o, path, n);
    if (st != CF_OK)
        return st;
    if (!create && access(path, F_OK) != 0) {
        cf_error_set(CF_ERR_INVALID, "no history database at '%s': %s", path, strerror(errno));
        cf_error_hint("run 'cloudfit recommend' first, or pass the database with --db PATH");
        return CF_ERR_INVALID;
    }
    if (create && !o->db_path) {
        char dir[1024];
        cf_dirname(path, dir, sizeof dir);
        if ((st = cf_mkdir_private(dir)) != CF_OK)
            return st;
    }
    tighten_database(path, !o->db_path);
    return cf_db_open(path, out);
}
