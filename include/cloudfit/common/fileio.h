/* Whole-file reads and atomic writes (temporary file + rename). */
#ifndef CLOUDFIT_COMMON_FILEIO_H
#define CLOUDFIT_COMMON_FILEIO_H
#include <stddef.h>
#include "cloudfit/status.h"

/* Reads `path` into a NUL-terminated malloc'd buffer. Errors name the file
 * ("cannot open 'x': No such file or directory"). */
cf_status cf_read_file(const char *path, char **out_text, size_t *out_len);
/* Writes `len` bytes to `path` via a temporary file in the same directory
 * and rename(2), so readers never see a half-written file. */
cf_status cf_write_file_atomic(const char *path, const char *data, size_t len);
/* Creates `path` and its parents (mode 0755); existing directories are fine. */
cf_status cf_mkdir_p(const char *path);
/* Directory part of `path` ("." when there is none), into out (size n). */
void cf_dirname(const char *path, char *out, size_t n);

#endif
