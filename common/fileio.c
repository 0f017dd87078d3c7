#include "cloudfit/common/fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

cf_status cf_read_file(const char *path, char **out_text, size_t *out_len)
{
    *out_text = NULL;
    if (out_len)
        *out_len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return cf_error_set(CF_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return cf_error_set(CF_ERR_IO, "cannot read '%s': Is a directory", path);
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    if (!text) {
        fclose(f);
        return cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", path);
    }
    for (;;) {
        if (cap - len < 4096) {
            char *grown = realloc(text, cap * 2);
            if (!grown) {
                free(text);
                fclose(f);
                return cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", path);
            }
            text = grown;
            cap *= 2;
        }
        size_t got = fread(text + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int err = errno;
        free(text);
        fclose(f);
        return cf_error_set(CF_ERR_IO, "cannot read '%s': %s", path, strerror(err));
    }
    fclose(f);
    text[len] = '\0';
    *out_text = text;
    if (out_len)
        *out_len = len;
    return CF_OK;
}

void cf_dirname(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(out, n, ".");
    } else if (slash == path) {
        snprintf(out, n, "/");
    } else {
        snprintf(out, n, "%.*s", (int)(slash - path), path);
    }
}

cf_status cf_write_file_atomic(const char *path, const char *data, size_t len)
{
    size_t tmp_len = strlen(path) + 32;
    char *tmp = malloc(tmp_len);
    if (!tmp)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    snprintf(tmp, tmp_len, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        cf_status st = cf_error_set(CF_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
        free(tmp);
        return st;
    }
    int ok = fwrite(data, 1, len, f) == len;
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0) && ok;
    int err = errno;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        if (ok)
            err = errno;
        remove(tmp);
        free(tmp);
        return cf_error_set(CF_ERR_IO, "cannot write '%s': %s", path, strerror(err));
    }
    free(tmp);
    return CF_OK;
}

cf_status cf_mkdir_p(const char *path)
{
    char partial[4096];
    if (snprintf(partial, sizeof partial, "%s", path) >= (int)sizeof partial)
        return cf_error_set(CF_ERR_IO, "path too long: '%s'", path);
    for (char *p = partial + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(partial, 0755) != 0 && errno != EEXIST)
            return cf_error_set(CF_ERR_IO, "cannot create directory '%s': %s", partial, strerror(errno));
        *p = '/';
    }
    if (mkdir(partial, 0755) != 0 && errno != EEXIST)
        return cf_error_set(CF_ERR_IO, "cannot create directory '%s': %s", partial, strerror(errno));
    return CF_OK;
}
