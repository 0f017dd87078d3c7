/* Whole-file reads and atomic writes (temporary file + rename). */
#ifndef CLOUDFIT_COMMON_FILEIO_H
#define CLOUDFIT_COMMON_FILEIO_H
#include <stddef.h>
#include "cloudfit/status.h"

/* Inputs larger than this are refused with a message naming the limit
 * (CLOUDFIT_MAX_INPUT_MIB raises or lowers it, 1 to 4096). */
#define CF_MAX_INPUT_MIB_DEFAULT 64

/* Reads `path` into a NUL-terminated malloc'd buffer. Only a regular file
 * is read: a directory, FIFO, socket or device (/dev/zero) is refused
 * without blocking, and so is a file over the input limit. Errors name the
 * file ("cannot open 'x': No such file or directory"); CF_ERR_IO. */
cf_status cf_read_file(const char *path, char **out_text, size_t *out_len);
/* The input limit in bytes. */
size_t cf_max_input_bytes(void);
/* An input that could not be read, errno `e`: "cannot WHAT 'PATH': why",
 * CF_ERR_SYSTEM (exit 1) when the system refused a resource (too many open
 * files, memory, an I/O error), else CF_ERR_IO (the input's fault: a
 * directory, no such file). Sets the error and returns its status. */
cf_status cf_read_failure(const char *what, const char *path, int e);

/* Writes `len` bytes to `path` via a temporary file in the same directory
 * and rename(2), so readers never see a half-written file. A new file gets
 * mode 0600 (less the umask); a file that exists keeps its mode. Errors
 * name `path` (never the temporary file) and are CF_ERR_WRITE. */
cf_status cf_write_file_atomic(const char *path, const char *data, size_t len);
/* The same with `new_mode` (less the umask) for a new file: 0666 for what
 * holds no secret and is meant to be shared (launch specs), 0777 for a
 * script to run (torchrun.sh). */
cf_status cf_write_file_atomic_mode(const char *path, const char *data, size_t len, unsigned new_mode);

/* The same in two steps, so that something else (the history commit) can
 * happen between writing and publishing: stage writes and syncs the
 * temporary file, commit renames it into place, discard removes it.
 *
 * Where the file system allows it (Linux O_TMPFILE: ext4, xfs, btrfs,
 * tmpfs, …) the staged file is an unnamed inode in the target's folder,
 * held by its descriptor until commit: a process that ends before the
 * commit, however (SIGKILL, the OOM killer, a crash), leaves nothing in the
 * folder. Commit links it under a unique hidden name (`.NAME.cloudfit-XXXXXX`)
 * and renames that over the target; only a kill between those two calls
 * leaves the hidden name. Elsewhere (EOPNOTSUPP, EISDIR, EINVAL, or no
 * /proc/self/fd to link through) the file is staged under that hidden name
 * at once (mkstemp), as before. Either way the staged file is removed if a
 * stop signal ends the process.
 *
 * What `path` names is checked when it is staged, so that nothing is
 * published (and no history row stored) before a failure only the rename
 * would have met: an empty name, a trailing '/', '.' or a directory is
 * refused; a symbolic link is followed (its target is replaced, the link
 * kept); a device, FIFO or socket (/dev/stdout, a shell's >(…)) is written
 * through at once, since it cannot be replaced (a write error there is a
 * stage error); and a file another output staged and did not yet publish
 * or discard is refused ("two outputs name it"). */
typedef struct {
    char *path;
    char *tmp;    /* the hidden staging name: NULL once published or discarded, and for a device written through;
                   * for an unnamed staging, the template its name is made from at commit */
    char *target; /* the file the rename replaces (a link's target), the key against two outputs */
    int fd;       /* while `writing` (between cf_file_stage_open and _close), and while `unnamed` */
    int writing;
    int unnamed;  /* an O_TMPFILE inode: `fd` is open until commit or discard, and `tmp` names nothing yet */
} cf_staged_file;
cf_status cf_file_stage(const char *path, const char *data, size_t len, cf_staged_file *out);
cf_status cf_file_stage_mode(const char *path, const char *data, size_t len, unsigned new_mode, cf_staged_file *out);
/* cf_file_stage_mode in pieces, for a result written as it is made (one
 * too long to hold): open (the checks above; nothing written yet), write
 * any number of times, close (synced); then commit or discard. A failed
 * write or close discards the staged file (the error names `path`). */
cf_status cf_file_stage_open(const char *path, unsigned new_mode, cf_staged_file *out);
cf_status cf_file_stage_write(cf_staged_file *f, const char *data, size_t len);
cf_status cf_file_stage_close(cf_staged_file *f);
cf_status cf_file_commit(cf_staged_file *f);
void cf_file_discard(cf_staged_file *f);
/* For tests only (tests/test_fileio.c), not an option: 1 stages under a
 * hidden name (the fallback) even where O_TMPFILE works, 0 restores the
 * default. Process-wide; affects stagings opened after the call. */
void cf_file_staging_force_named(int on);

/* Several staged files published together (recommend's --out-file,
 * --report, --plot and --emit files; profile's --csv): each written to a
 * temporary name as it is produced, all renamed into place by commit
 * after the history commit, all removed by discard (and the folders
 * mkdir made for them, when empty) if anything failed before. */
#define CF_STAGED_SET_MAX 8
typedef struct {
    cf_staged_file file[CF_STAGED_SET_MAX];
    int n;
    char *made_dir[CF_STAGED_SET_MAX]; /* folders created by cf_staged_set_mkdir, outermost first */
    int n_made_dirs;
} cf_staged_set;
cf_status cf_staged_set_add(cf_staged_set *s, const char *path, const char *data, size_t len);
/* The same with `new_mode` for a new file (cf_write_file_atomic_mode). */
cf_status cf_staged_set_add_mode(cf_staged_set *s, const char *path, const char *data, size_t len, unsigned new_mode);
/* cf_mkdir_p(dir), remembering the folders it creates. */
cf_status cf_staged_set_mkdir(cf_staged_set *s, const char *dir);
/* Renames every file into place, stopping at the first failure (returned;
 * the files after it are discarded), then forgets the folders. */
cf_status cf_staged_set_commit(cf_staged_set *s);
/* Removes what was staged and not committed, and the folders made. */
void cf_staged_set_discard(cf_staged_set *s);

/* 1 when `a` and `b` name one file (an output that would replace an
 * input): the same device and inode when both exist, whatever the
 * spelling, a link or a hard link; when one does not exist yet, the same
 * path once the folders that exist are resolved and `.`, `..` and
 * doubled slashes in the rest are taken out (`out/x`, `./out//x`,
 * `out/../out/x`). */
int cf_same_file(const char *a, const char *b);

/* A file a command reads or writes, and how messages name it ("option
 * '--out-file'", "the spec"). */
typedef struct {
    const char *label;
    const char *path; /* NULL or "": none; "-" (standard output) is never a file */
    const char *shown; /* what messages quote after the label: NULL for the path (the index.csv beside a --trace
                        * is "the index.csv beside --trace 'tr/a.csv'", not the trace's label with the index's path) */
} cf_path_role;

/* CF_ERR_USAGE naming both when one of the outputs is one of the inputs
 * (cf_same_file): `profile --csv h.db` replaced the history it had just
 * stored into, `recommend -o model.json model.json` the spec; or when two
 * outputs are one file (`--report x --plot x`: the second replaced the
 * first); or when an input is a folder (`simulate --calibrate DIR`) and an
 * output lies inside it. CF_OK when none is. */
cf_status cf_outputs_spare_inputs(const cf_path_role *outputs, size_t n_outputs, const cf_path_role *inputs,
                                  size_t n_inputs);

/* Creates `path` and its parents (mode 0755 less the umask); existing
 * directories are fine. CF_ERR_WRITE naming the directory on failure. */
cf_status cf_mkdir_p(const char *path);
/* The same with mode 0700 for every directory it creates, whatever the
 * umask (the history database's folder). */
cf_status cf_mkdir_private(const char *path);
/* cf_mkdir_private, and `made` (room for n) the outermost folder it
 * created ("" when all were there), for cf_rmdir_made; folders made
 * ahead of a ".." component are not counted (walking up from path does
 * not come to them). */
cf_status cf_mkdir_private_made(const char *path, char *made, size_t n);
/* Removes the folder `inner` and its parents up to `outermost` (a folder
 * cf_mkdir_private_made made: inner or one of its parents), each only
 * while empty; nothing above outermost. */
void cf_rmdir_made(const char *inner, const char *outermost);
/* Directory part of `path` ("." when there is none), into out (size n). */
void cf_dirname(const char *path, char *out, size_t n);
/* The file name part of `path`: after its last '/', else all of it. */
const char *cf_basename(const char *path);

#endif
