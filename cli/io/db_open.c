#include "io/db_open.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/fileio.h"

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
    return cf_db_open(path, out);
}
