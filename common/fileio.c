#define _GNU_SOURCE 1 /* realpath, O_TMPFILE, linkat */
#include "cloudfit/common/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cloudfit/common/proc.h"
#include "cloudfit/common/env_settings.h"
#include "cloudfit/common/number.h"

size_t cf_max_input_bytes(void)
{
    double mib = CF_MAX_INPUT_MIB_DEFAULT;
    cf_env_setting("CLOUDFIT_MAX_INPUT_MIB", &mib);
    return (size_t)mib << 20;
}

static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "not a regular file";
}

/* An input that cannot be read: the file's fault (CF_ERR_IO, exit 3), or
 * the system's (CF_ERR_SYSTEM, exit 1: too many open files was reported
 * as bad input), with a hint for the descriptor limit. */
cf_status cf_read_failure(const char *what, const char *path, int e)
{
    /* EBADF: a descriptor that is not open for reading (`<&-`), the environment's, not the input's */
    int system = e == EMFILE || e == ENFILE || e == ENOMEM || e == EIO || e == ENOBUFS || e == EBADF;
    cf_error_set(system ? CF_ERR_SYSTEM : CF_ERR_IO, "cannot %s '%s': %s", what, path, strerror(e));
    if (e == EMFILE || e == ENFILE)
        cf_error_hint("the limit of open files is reached: raise it (ulimit -n)");
    return system ? CF_ERR_SYSTEM : CF_ERR_IO;
}

cf_status cf_read_file(const char *path, char **out_text, size_t *out_len)
{
    *out_text = NULL;
    if (out_len)
        *out_len = 0;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return cf_read_failure("open", path, errno);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return cf_read_failure("read", path, e);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        if (S_ISDIR(st.st_mode))
            return cf_error_set(CF_ERR_IO, "cannot read '%s': Is a directory", path);
        cf_error_set(CF_ERR_IO, "cannot read '%s': %s, not a regular file", path, file_kind(st.st_mode));
        cf_error_hint("cloudfit reads its inputs from regular files; save the data to a file first");
        return CF_ERR_IO;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    size_t limit = cf_max_input_bytes();
    if ((unsigned long long)st.st_size > limit) {
        close(fd);
        cf_error_set(CF_ERR_IO, "cannot read '%s': %lld bytes, over the %zu MiB limit for an input file", path,
                     (long long)st.st_size, limit >> 20);
        cf_error_hint("CLOUDFIT_MAX_INPUT_MIB raises the limit (up to 4096)");
        return CF_ERR_IO;
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *text = malloc(cap);
    if (!text) {
        close(fd);
        return cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", path);
    }
    for (;;) {
        if (len + 1 >= cap) { /* the file grew while we read it */
            if (cap > limit) {
                free(text);
                close(fd);
                return cf_error_set(CF_ERR_IO, "cannot read '%s': over the %zu MiB limit for an input file", path,
                                    limit >> 20);
            }
            char *grown = realloc(text, cap * 2);
            if (!grown) {
                free(text);
                close(fd);
                return cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", path);
            }
            text = grown;
            cap *= 2;
        }
        ssize_t got = read(fd, text + len, cap - len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(text);
            close(fd);
            return cf_read_failure("read", path, e);
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    close(fd);
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

const char *cf_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* `path` as one spelling for comparison, when it may not exist yet: the
 * deepest folder of it that exists, resolved (realpath), then the rest
 * with `.` and empty names dropped and `..` taking the name before it off
 * (`out/x`, `./out//x` and `out/../out/x` are one). NULL when out of
 * memory or the path is too long. */
static char *comparable_path(const char *path)
{
    char head[4096];
    if (snprintf(head, sizeof head, "%s", path) >= (int)sizeof head)
        return NULL;
    /* head: the longest prefix (at a '/') that resolves; tail: the rest */
    char *real = NULL;
    size_t head_len = strlen(head);
    const char *tail = "";
    for (;;) {
        real = head_len ? realpath(head, NULL) : realpath(".", NULL);
        if (real || head_len == 0 || (head_len == 1 && head[0] == '/'))
            break;
        while (head_len > 0 && head[head_len - 1] != '/') /* drop the last name */
            head_len--;
        tail = path + head_len;
        while (head_len > 0 && head[head_len - 1] == '/')
            head_len--;
        if (head_len == 0 && path[0] == '/') /* the root always resolves */
            head_len = 1;
        head[head_len] = '\0';
    }
    if (!real)
        return NULL;
    size_t cap = strlen(real) + strlen(tail) + 2;
    char *out = malloc(cap);
    if (!out) {
        free(real);
        return NULL;
    }
    size_t len = (size_t)snprintf(out, cap, "%s", strcmp(real, "/") ? real : "");
    free(real);
    for (const char *p = tail; *p;) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n == 1 && p[0] == '.') {
            /* the folder itself */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (len > 0 && out[len - 1] != '/')
                len--;
            if (len > 0)
                len--;
        } else if (n > 0) {
            out[len++] = '/';
            memcpy(out + len, p, n);
            len += n;
        }
        p += n;
    }
    if (len == 0)
        out[len++] = '/';
    out[len] = '\0';
    return out;
}

static char *target_of(const char *path, int *err);

int cf_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (strcmp(a, b) == 0)
        return 1;
    /* One not there yet (an output about to be created): the same path
     * however it is spelled, or a later rename would replace the other;
     * and the file a dangling link names, which writing it creates (a
     * --report link to the --plot file was found only when written). */
    int err = 0;
    char *ta = target_of(a, &err), *tb = target_of(b, &err);
    int same = ta && tb && strcmp(ta, tb) == 0;
    free(ta);
    free(tb);
    if (same)
        return 1;
    char *ca = comparable_path(a), *cb = comparable_path(b);
    same = ca && cb && strcmp(ca, cb) == 0;
    free(ca);
    free(cb);
    return same;
}

/* `path` lies inside the folder `dir` (at any depth), however either is
 * spelled. */
static int path_within(const char *dir, const char *path)
{
    char *cd = comparable_path(dir), *cp = comparable_path(path);
    size_t n = cd ? strlen(cd) : 0;
    int within = cd && cp && (strcmp(cd, "/") == 0 || (strncmp(cd, cp, n) == 0 && cp[n] == '/'));
    free(cd);
    free(cp);
    return within;
}

cf_status cf_outputs_spare_inputs(const cf_path_role *outputs, size_t n_outputs, const cf_path_role *inputs,
                                  size_t n_inputs)
{
    for (size_t o = 0; o < n_outputs; o++) {
        const char *out = outputs[o].path;
        if (!out || !out[0] || strcmp(out, "-") == 0)
            continue;
        for (size_t p = 0; p < o; p++) /* two outputs in one file: the last written would replace the other */
            if (outputs[p].path && outputs[p].path[0] && strcmp(outputs[p].path, "-") != 0 &&
                cf_same_file(out, outputs[p].path)) {
                cf_error_set(CF_ERR_USAGE, "%s and %s name the same file '%s'", outputs[p].label, outputs[o].label,
                             out);
                cf_error_hint("give each output its own file");
                return CF_ERR_USAGE;
            }
        for (size_t i = 0; i < n_inputs; i++) {
            struct stat st;
            if (!inputs[i].path || !inputs[i].path[0])
                continue;
            if (cf_same_file(out, inputs[i].path)) {
                cf_error_set(CF_ERR_USAGE, "%s names %s '%s': writing it would replace that input", outputs[o].label,
                             inputs[i].label, inputs[i].shown ? inputs[i].shown : inputs[i].path);
                cf_error_hint("write the result to another file");
                return CF_ERR_USAGE;
            }
            /* an input folder (a folder of traces) is read whole: a file
             * written into it replaces or adds to what it holds */
            if (stat(inputs[i].path, &st) == 0 && S_ISDIR(st.st_mode) && path_within(inputs[i].path, out)) {
                cf_error_set(CF_ERR_USAGE, "%s names '%s', inside %s '%s': writing it would change that input",
                             outputs[o].label, out, inputs[i].label, inputs[i].shown ? inputs[i].shown : inputs[i].path);
                cf_error_hint("write the result outside that folder");
                return CF_ERR_USAGE;
            }
        }
    }
    return CF_OK;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The targets staged and not yet published or discarded: a second output
 * naming one of them is refused (the later rename would win, silently). */
#define PENDING_MAX 64
static char *pending[PENDING_MAX];

static int pending_has(const char *target)
{
    for (int i = 0; i < PENDING_MAX; i++)
        if (pending[i] && strcmp(pending[i], target) == 0)
            return 1;
    return 0;
}

static void pending_add(const char *target)
{
    for (int i = 0; i < PENDING_MAX; i++)
        if (!pending[i]) {
            pending[i] = (char *)target;
            return;
        }
}

static void pending_remove(const char *target)
{
    for (int i = 0; i < PENDING_MAX; i++)
        if (pending[i] == target)
            pending[i] = NULL;
}

/* Test hook (cf_file_staging_force_named): stage under a hidden name even
 * where O_TMPFILE works, so that tests run the fallback on any machine. */
static int g_force_named;

void cf_file_staging_force_named(int on)
{
    g_force_named = on != 0;
}

/* An unnamed staging can be given a name at commit: O_TMPFILE is tried
 * (the file system may refuse it) only when /proc/self/fd is there to
 * link through (linkat's AT_EMPTY_PATH needs a privilege on older
 * kernels). */
static int unnamed_staging_possible(void)
{
#ifdef O_TMPFILE
    return !g_force_named && access("/proc/self/fd", X_OK) == 0;
#else
    return 0;
#endif
}

/* open(O_TMPFILE) failed because the kernel or the file system does not
 * do it (not for a reason mkstemp would meet too: EACCES, ENOENT, ENOSPC). */
static int tmpfile_unsupported(int e)
{
    return e == EOPNOTSUPP || e == ENOTSUP || e == EISDIR || e == EINVAL;
}

void cf_file_discard(cf_staged_file *f)
{
    if (f->writing || f->unnamed)
        close(f->fd);
    f->writing = 0;
    if (f->tmp && !f->unnamed) { /* an unnamed staging's tmp names nothing */
        unlink(f->tmp);
        cf_proc_untrack_temp(f->tmp);
    }
    f->unnamed = 0;
    pending_remove(f->target);
    free(f->tmp);
    free(f->path);
    free(f->target);
    f->tmp = f->path = f->target = NULL;
}

cf_status cf_file_stage(const char *path, const char *data, size_t len, cf_staged_file *out)
{
    return cf_file_stage_mode(path, data, len, 0600, out);
}

/* `path` (or a link's target) with its folder made absolute: the same
 * file however it is spelled (./x, x, dir/../x), for the two-outputs
 * check. NULL with *err set when the folder cannot be resolved. */
static char *target_of(const char *path, int *err)
{
    char *whole = realpath(path, NULL);
    if (whole)
        return whole;
    /* A dangling link: the file written is its last target, created as a
     * shell's redirection creates it (the link was replaced by a file). */
    char cur[4096], next[4096];
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur) {
        *err = ENAMETOOLONG;
        return NULL;
    }
    for (int hops = 0;; hops++) {
        struct stat link_st;
        if (lstat(cur, &link_st) != 0 || !S_ISLNK(link_st.st_mode))
            break;
        char link[4096];
        ssize_t n = hops < 40 ? readlink(cur, link, sizeof link - 1) : -1;
        if (n < 0) {
            *err = hops < 40 ? errno : ELOOP;
            return NULL;
        }
        link[n] = '\0';
        char link_dir[4096];
        cf_dirname(cur, link_dir, sizeof link_dir);
        int w = link[0] == '/' ? snprintf(next, sizeof next, "%s", link)
                               : snprintf(next, sizeof next, "%s/%s", link_dir, link);
        if (w < 0 || w >= (int)sizeof next) {
            *err = ENAMETOOLONG;
            return NULL;
        }
        memcpy(cur, next, (size_t)w + 1);
    }
    path = cur;
    char dir[4096];
    cf_dirname(path, dir, sizeof dir);
    char *abs_dir = realpath(dir, NULL);
    if (!abs_dir) {
        *err = errno;
        return NULL;
    }
    const char *base = cf_basename(path);
    size_t n = strlen(abs_dir) + strlen(base) + 2;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "%s%s%s", abs_dir, strcmp(abs_dir, "/") ? "/" : "", base);
    free(abs_dir);
    if (!t)
        *err = ENOMEM;
    return t;
}

/* A device, FIFO or socket cannot be replaced by a rename: written through
 * now (a full device or a closed pipe fails here, before anything is
 * published). */
cf_status cf_file_stage_mode(const char *path, const char *data, size_t len, unsigned new_mode, cf_staged_file *out)
{
    cf_status st = cf_file_stage_open(path, new_mode, out);
    if (st == CF_OK)
        st = cf_file_stage_write(out, data, len);
    if (st == CF_OK)
        st = cf_file_stage_close(out);
    return st;
}

cf_status cf_file_stage_open(const char *path, unsigned new_mode, cf_staged_file *out)
{
    memset(out, 0, sizeof *out);
    const char *base = path ? cf_basename(path) : "";
    size_t path_len = path ? strlen(path) : 0;
    if (path_len == 0 || path[path_len - 1] == '/' || !strcmp(base, ".") || !strcmp(base, "..")) {
        cf_error_set(CF_ERR_WRITE, "cannot write '%s': not a file name", path ? path : "");
        cf_error_hint("name a file, e.g. 'out.json' or 'reports/run.html'");
        return CF_ERR_WRITE;
    }
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        cf_error_set(CF_ERR_WRITE, "cannot write '%s': Is a directory", path);
        cf_error_hint("name a file in it, e.g. '%s/%s'", path, "out.json");
        return CF_ERR_WRITE;
    }
    int err = 0;
    out->path = strdup(path);
    out->target = target_of(path, &err);
    if (!out->path || !out->target) {
        cf_file_discard(out);
        if (err && err != ENOMEM)
            return cf_error_set(CF_ERR_WRITE, "cannot write '%s': %s", path, strerror(err));
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    if (pending_has(out->target)) {
        cf_file_discard(out);
        cf_error_set(CF_ERR_WRITE, "cannot write '%s' twice: two of the outputs name it", path);
        cf_error_hint("give each output (--out-file, --report, --plot, --emit, --rows) a file of its own");
        return CF_ERR_WRITE;
    }
    if (exists && !S_ISREG(st.st_mode)) { /* written through as it is staged */
        int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            cf_file_discard(out);
            return cf_error_set(CF_ERR_WRITE, "cannot write '%s': %s", path, strerror(e));
        }
        out->fd = fd;
        out->writing = 1;
        pending_add(out->target); /* until committed or discarded, like a staged file */
        return CF_OK;
    }
    /* A link's target is replaced in its own folder; the link stays. */
    char dir[4096];
    cf_dirname(out->target, dir, sizeof dir);
    /* In a folder with the sticky bit (/tmp, a shared one) only the owner
     * of a file (or of the folder) may replace it: the rename at the
     * commit failed with EPERM after the history was stored and the other
     * outputs were published. Said now, before anything is. */
    struct stat dst;
    uid_t me = geteuid();
    if (exists && me != 0 && st.st_uid != me && stat(dir, &dst) == 0 && (dst.st_mode & S_ISVTX) &&
        dst.st_uid != me) {
        cf_file_discard(out);
        cf_error_set(CF_ERR_WRITE, "cannot write '%s': %s", path, strerror(EPERM));
        cf_error_hint("the directory '%s' has the sticky bit: only the owner of the file there can replace it; "
                      "have them remove it, or write elsewhere", dir);
        return CF_ERR_WRITE;
    }
    const char *target_base = cf_basename(out->target);
    size_t tmp_len = strlen(dir) + strlen(target_base) + 32;
    out->tmp = malloc(tmp_len);
    if (!out->tmp) {
        cf_file_discard(out);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    snprintf(out->tmp, tmp_len, "%s/.%s.cloudfit-XXXXXX", dir, target_base);
    /* The mode: the existing file's, else new_mode less the umask. */
    mode_t mode = (mode_t)(new_mode & 0777);
    if (exists) {
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode &= ~mask;
    }
    /* Unnamed (O_TMPFILE) where possible: nothing in the folder until the
     * commit links it, so a kill before then leaves nothing; else the
     * hidden name at once (O_EXCL, 0600), removed only by discard or by a
     * stop signal's handler. */
    int fd = -1, e = 0;
#ifdef O_TMPFILE
    if (unnamed_staging_possible()) {
        fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        if (fd >= 0)
            out->unnamed = 1;
        else if (!tmpfile_unsupported(errno))
            e = errno;
    }
#endif
    if (fd < 0 && !e) {
        fd = mkstemp(out->tmp);
        if (fd < 0)
            e = errno;
        else
            cf_proc_track_temp(out->tmp);
    }
    if (fd < 0) {
        free(out->tmp);
        out->tmp = NULL;
        cf_file_discard(out);
        cf_error_set(CF_ERR_WRITE, "cannot write '%s': %s", path, strerror(e));
        if (e == EACCES || e == EROFS || e == EPERM)
            cf_error_hint("the directory '%s' is not writable", dir);
        return CF_ERR_WRITE;
    }
    out->fd = fd;
    out->writing = 1;
    if (fchmod(fd, mode) != 0) {
        e = errno;
        cf_file_discard(out);
        return cf_error_set(CF_ERR_WRITE, "cannot write '%s': %s", path, strerror(e));
    }
    pending_add(out->target);
    return CF_OK;
}

/* A failed write or close: the staged file is discarded. */
static cf_status stage_failed(cf_staged_file *f, int e)
{
    cf_status st = cf_error_set(CF_ERR_WRITE, "cannot write '%s': %s", f->path, strerror(e));
    cf_file_discard(f);
    return st;
}

cf_status cf_file_stage_write(cf_staged_file *f, const char *data, size_t len)
{
    if (!f->writing)
        return cf_error_set(CF_ERR_INTERNAL, "write to a file that is not being staged");
    errno = 0;
    if (write_all(f->fd, data, len) != 0)
        return stage_failed(f, errno ? errno : EIO);
    return CF_OK;
}

cf_status cf_file_stage_close(cf_staged_file *f)
{
    if (!f->writing)
        return cf_error_set(CF_ERR_INTERNAL, "close of a file that is not being staged");
    f->writing = 0;
    errno = 0;
    int ok = !f->tmp || fsync(f->fd) == 0; /* a device is not synced */
    int e = errno;
    if (f->unnamed) /* its descriptor is all that holds it: closed at commit or discard */
        return ok ? CF_OK : stage_failed(f, e ? e : EIO);
    ok = (close(f->fd) == 0) && ok;
    if (!ok)
        return stage_failed(f, e ? e : errno);
    return CF_OK;
}

/* The letters of a staging name (mkstemp's XXXXXX), from the system's
 * random source; a name taken already is refused by linkat (EEXIST) and
 * another drawn, so the letters need only differ, as mkstemp's. */
static void fill_name(char *x6)
{
    static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char bytes[6] = {0};
    if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes) { /* never short for 6 bytes; else a counter */
        static unsigned counter;
        unsigned v = ++counter ^ (unsigned)getpid();
        memcpy(bytes, &v, sizeof v);
    }
    for (int i = 0; i < 6; i++)
        x6[i] = letters[bytes[i] % 62];
}

/* An unnamed staging linked under a new hidden name (f->tmp, tracked for
 * the stop handler), its descriptor then closed: from here it is a named
 * staging. 0, or -1 with errno. */
static int name_unnamed(cf_staged_file *f)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
    char *x6 = f->tmp + strlen(f->tmp) - 6;
    int e = EEXIST;
    for (int attempt = 0; attempt < 100 && e == EEXIST; attempt++) {
        fill_name(x6);
        cf_proc_track_temp(f->tmp); /* before the name exists: a stop signal between the two removes it */
        if (linkat(AT_FDCWD, proc, AT_FDCWD, f->tmp, AT_SYMLINK_FOLLOW) == 0 ||
            (errno == ENOENT && linkat(f->fd, "", AT_FDCWD, f->tmp, AT_EMPTY_PATH) == 0)) {
            f->unnamed = f->writing = 0; /* f->tmp is a file now: discard removes it */
            if (close(f->fd) != 0)
                return -1;
            return 0;
        }
        e = errno;
        cf_proc_untrack_temp(f->tmp);
    }
    errno = e;
    return -1;
}

cf_status cf_file_commit(cf_staged_file *f)
{
    if (!f->target)
        return cf_error_set(CF_ERR_INTERNAL, "commit of a file that was not staged");
    if (!f->tmp) { /* a device, written when it was staged */
        cf_file_discard(f);
        return CF_OK;
    }
    /* Unnamed: linked under a hidden name only now, so that a kill before
     * the commit leaves nothing; a kill between this link and the rename
     * leaves the hidden name (docs/reliability.md). */
    if (f->unnamed && name_unnamed(f) != 0) {
        int e = errno;
        cf_status st = cf_error_set(CF_ERR_WRITE, "cannot write '%s': %s", f->path, strerror(e));
        cf_file_discard(f);
        return st;
    }
    if (rename(f->tmp, f->target) != 0) {
        int e = errno;
        cf_status st = cf_error_set(CF_ERR_WRITE, "cannot write '%s': %s", f->path, strerror(e));
        cf_file_discard(f);
        return st;
    }
    cf_proc_untrack_temp(f->tmp);
    free(f->tmp);
    f->tmp = NULL;
    /* The rename is durable once the directory is synced. */
    char dir[4096];
    cf_dirname(f->target, dir, sizeof dir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    cf_file_discard(f);
    return CF_OK;
}

cf_status cf_write_file_atomic(const char *path, const char *data, size_t len)
{
    return cf_write_file_atomic_mode(path, data, len, 0600);
}

cf_status cf_write_file_atomic_mode(const char *path, const char *data, size_t len, unsigned new_mode)
{
    cf_staged_file f;
    cf_status st = cf_file_stage_mode(path, data, len, new_mode, &f);
    if (st == CF_OK)
        st = cf_file_commit(&f);
    return st;
}

cf_status cf_staged_set_add(cf_staged_set *s, const char *path, const char *data, size_t len)
{
    return cf_staged_set_add_mode(s, path, data, len, 0600);
}

cf_status cf_staged_set_add_mode(cf_staged_set *s, const char *path, const char *data, size_t len, unsigned new_mode)
{
    if (s->n == CF_STAGED_SET_MAX)
        return cf_error_set(CF_ERR_INTERNAL, "too many files to write at once (%d)", CF_STAGED_SET_MAX);
    cf_status st = cf_file_stage_mode(path, data, len, new_mode, &s->file[s->n]);
    if (st == CF_OK)
        s->n++;
    return st;
}

cf_status cf_staged_set_mkdir(cf_staged_set *s, const char *dir)
{
    /* The outermost missing folder, found before creating anything. */
    char missing[4096];
    if (snprintf(missing, sizeof missing, "%s", dir) >= (int)sizeof missing)
        return cf_mkdir_p(dir); /* cf_mkdir_p names the problem */
    struct stat st;
    for (;;) {
        size_t len = strlen(missing);
        while (len > 1 && missing[len - 1] == '/')
            missing[--len] = '\0';
        if (len == 0 || strcmp(missing, ".") == 0 || stat(missing, &st) == 0)
            break;
        if (s->n_made_dirs < CF_STAGED_SET_MAX) {
            char *copy = strdup(missing);
            if (!copy)
                return cf_error_set(CF_ERR_NOMEM, "out of memory");
            /* Outermost first: each newly found one goes in front. */
            memmove(s->made_dir + 1, s->made_dir, (size_t)s->n_made_dirs * sizeof *s->made_dir);
            s->made_dir[0] = copy;
            s->n_made_dirs++;
        }
        char *slash = strrchr(missing, '/');
        if (!slash)
            break;
        *slash = '\0';
        if (slash == missing)
            break;
    }
    return cf_mkdir_p(dir);
}

static void forget_dirs(cf_staged_set *s)
{
    for (int i = 0; i < s->n_made_dirs; i++)
        free(s->made_dir[i]);
    s->n_made_dirs = 0;
}

cf_status cf_staged_set_commit(cf_staged_set *s)
{
    cf_status first = CF_OK;
    for (int i = 0; i < s->n; i++) {
        if (first != CF_OK) { /* after a failure: published nothing more */
            cf_file_discard(&s->file[i]);
            continue;
        }
        first = cf_file_commit(&s->file[i]);
    }
    s->n = 0;
    forget_dirs(s);
    return first;
}

void cf_staged_set_discard(cf_staged_set *s)
{
    for (int i = 0; i < s->n; i++)
        cf_file_discard(&s->file[i]);
    s->n = 0;
    for (int i = s->n_made_dirs - 1; i >= 0; i--)
        rmdir(s->made_dir[i]); /* only when empty: something else may have appeared there */
    forget_dirs(s);
}

/* `made` (room for n_made; may be NULL): the outermost folder this call
 * created, "" when none. */
static cf_status mkdir_mode(const char *path, mode_t mode, int force_mode, char *made, size_t n_made)
{
    if (made)
        made[0] = '\0';
    char partial[4096];
    if (snprintf(partial, sizeof partial, "%s", path) >= (int)sizeof partial)
        return cf_error_set(CF_ERR_WRITE, "path too long: '%s'", path);
    size_t len = strlen(partial);
    if (len == 0)
        return cf_error_set(CF_ERR_WRITE, "cannot create a directory with an empty name");
    while (len > 1 && partial[len - 1] == '/')
        partial[--len] = '\0';
    for (char *p = partial + 1;; p++) {
        int last = *p == '\0';
        if (!last && *p != '/')
            continue;
        *p = '\0';
        const char *name = cf_basename(partial);
        if (made && strcmp(name, "..") == 0)
            made[0] = '\0'; /* back out of a folder made here: walking up from the path would not come to it */
        if (mkdir(partial, mode) == 0) {
            if (made && !made[0])
                snprintf(made, n_made, "%s", partial);
            if (force_mode)
                chmod(partial, mode); /* whatever the umask */
        } else if (errno != EEXIST) {
            int e = errno;
            cf_error_set(CF_ERR_WRITE, "cannot create directory '%s': %s", partial, strerror(e));
            /* a private folder is the history's (cf_mkdir_private) */
            if ((e == EACCES || e == EROFS) && force_mode)
                cf_error_hint("choose a writable place with --db PATH (or XDG_DATA_HOME), or --no-history");
            else if (e == EACCES || e == EROFS)
                cf_error_hint("choose a folder you can write to");
            return CF_ERR_WRITE;
        } else {
            struct stat st;
            if (stat(partial, &st) == 0 && !S_ISDIR(st.st_mode))
                return cf_error_set(CF_ERR_WRITE, "cannot create directory '%s': a file of that name exists",
                                    partial);
        }
        if (last)
            break;
        *p = '/';
    }
    return CF_OK;
}

cf_status cf_mkdir_p(const char *path)
{
    return mkdir_mode(path, 0755, 0, NULL, 0);
}

cf_status cf_mkdir_private(const char *path)
{
    return mkdir_mode(path, 0700, 1, NULL, 0);
}

cf_status cf_mkdir_private_made(const char *path, char *made, size_t n)
{
    return mkdir_mode(path, 0700, 1, made, n);
}

void cf_rmdir_made(const char *inner, const char *outermost)
{
    char dir[4096], up[4096];
    size_t n = strlen(outermost);
    if (!n || snprintf(dir, sizeof dir, "%s", inner) >= (int)sizeof dir)
        return;
    /* inner and its parents while they are outermost or below it, and empty
     * (rmdir leaves any other); "a/./b" and "a//b" name a's b. outermost
     * follows every ".." of inner (mkdir_mode), so the walk up the name
     * never leaves the folders made: "new/../old/cloudfit" removed the empty
     * "old", there before, and left "new". */
    while (strncmp(dir, outermost, n) == 0 && (dir[n] == '\0' || dir[n] == '/')) {
        const char *name = cf_basename(dir);
        if (strcmp(name, "..") == 0 || ((name[0] && strcmp(name, ".") != 0) && rmdir(dir) != 0) || !dir[n])
            break;
        cf_dirname(dir, up, sizeof up);
        memcpy(dir, up, sizeof dir);
    }
}
