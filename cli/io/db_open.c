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

/* The database's target (path or URL) and what may be shown of it. */
static cf_status locate(const cf_cli_options *o, char *target, size_t tn, char *shown, size_t sn)
{
    cf_status st = cf_cli_db_path(o, target, tn);
    if (st == CF_OK)
        cf_db_redact(target, shown, sn);
    return st;
}

static cf_status missing(const char *shown)
{
    cf_error_set(CF_ERR_INVALID, "no history database at '%s': %s", shown, strerror(errno));
    cf_error_hint("run 'cloudfit recommend' first, or pass the database with --db PATH (or a postgresql:// URL)");
    return CF_ERR_INVALID;
}

cf_status cf_cli_db_open_readonly(const cf_cli_options *o, cf_db **out, char *path, size_t n)
{
    *out = NULL;
    char target[2048];
    cf_status st = locate(o, target, sizeof target, path, n);
    if (st != CF_OK)
        return st;
    if (!cf_db_is_postgresql(target) && access(target, F_OK) != 0)
        return missing(path);
    return cf_db_open_readonly(target, out);
}

cf_status cf_cli_db_open_existing(const cf_cli_options *o, cf_db **out, char *path, size_t n)
{
    *out = NULL;
    char target[2048];
    cf_status st = locate(o, target, sizeof target, path, n);
    if (st != CF_OK) {
        if (o->db_path)
            return st;
        cf_error_clear(); /* no HOME: nothing stored anywhere */
        path[0] = '\0';
        return CF_OK;
    }
    if (!cf_db_is_postgresql(target) && access(target, F_OK) != 0)
        return CF_OK;
    st = cf_db_open_readonly(target, out);
    if (st == CF_ERR_INVALID && cf_db_is_postgresql(target)) {
        cf_error_clear(); /* a database without cloudfit's tables yet */
        return CF_OK;
    }
    if (st != CF_OK && cf_db_open_failed_on_older_schema()) {
        /* what it holds is only consulted here: go on without it, say so (once) */
        static int said;
        if (!said++)
            cf_log_warning("%s; its cached profiles and price snapshots are not used", cf_error_message());
        if (said == 1)
            cf_log_hint("upgrade it once with a command that writes (e.g. cloudfit recommend without --no-history, "
                        "or prices update)");
        cf_error_clear();
        return CF_OK;
    }
    return st;
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
    char file[2100];
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        if ((size_t)snprintf(file, sizeof file, "%s%s", path, suffixes[i]) < sizeof file)
            tighten(file, 0);
    }
    if (own_folder) { /* the default location's folder is cloudfit's; a --db folder is the user's */
        char dir[2048];
        cf_dirname(path, dir, sizeof dir);
        tighten(dir, 1);
    }
}

cf_status cf_cli_db_open(const cf_cli_options *o, int create, cf_db **out, char *path, size_t n)
{
    *out = NULL;
    char target[2048];
    cf_status st = locate(o, target, sizeof target, path, n);
    if (st != CF_OK)
        return st;
    if (cf_db_is_postgresql(target))
        return cf_db_open(target, out); /* the server's database must exist; its tables are created */
    if (!create && access(target, F_OK) != 0)
        return missing(path);
    if (create && !o->db_path) {
        char dir[1024];
        cf_dirname(target, dir, sizeof dir);
        if ((st = cf_mkdir_private(dir)) != CF_OK)
            return st;
    }
    tighten_database(target, !o->db_path);
    return cf_db_open(target, out);
}
