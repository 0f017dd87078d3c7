/* A file's path inside its git repository (cloudfit/common/repo_path.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cloudfit/common/repo_path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The part of `path` below `dir` (both absolute, resolved), or NULL. */
static const char *below(const char *path, const char *dir)
{
    size_t len = strlen(dir);
    if (strcmp(dir, "/") == 0)
        return path + 1;
    if (strncmp(path, dir, len) == 0 && path[len] == '/')
        return path + len + 1;
    return NULL;
}

cf_status cf_repo_relative_path(const char *file, char *out, size_t n)
{
    char resolved[PATH_MAX];
    if (!realpath(file, resolved))
        return cf_error_set(CF_ERR_IO, "cannot resolve '%s': %s", file, strerror(errno));
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", resolved);
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            break;
        if (slash == dir)
            slash[1] = '\0'; /* the root */
        else
            *slash = '\0';
        char git[PATH_MAX + 8];
        struct stat st;
        snprintf(git, sizeof git, "%s%s.git", dir, strcmp(dir, "/") == 0 ? "" : "/");
        if (stat(git, &st) == 0) { /* a folder, or a file in a worktree or submodule */
            snprintf(out, n, "%s", below(resolved, dir));
            return CF_OK;
        }
        if (strcmp(dir, "/") == 0)
            break;
    }
    char cwd[PATH_MAX];
    const char *rel = getcwd(cwd, sizeof cwd) ? below(resolved, cwd) : NULL;
    snprintf(out, n, "%s", rel ? rel : resolved);
    return CF_OK;
}
