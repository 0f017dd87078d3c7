/* Where a file lies in its git repository (common/repo_path.c): the part
 * of a CI baseline's identity that stays the same on every checkout
 * (docs/ci.md, "Baselines by identity"). */
#ifndef CLOUDFIT_COMMON_REPO_PATH_H
#define CLOUDFIT_COMMON_REPO_PATH_H
#include <stddef.h>

#include "cloudfit/status.h"

/* The path of `file` relative to the top of the git work tree holding it
 * (the nearest folder above it with a .git entry), with '/' separators.
 * Outside a repository: the path relative to the current folder when
 * the file lies below it, else its absolute path (without symbolic
 * links). CF_ERR_IO when the file cannot be resolved. */
cf_status cf_repo_relative_path(const char *file, char *out, size_t n);

#endif
