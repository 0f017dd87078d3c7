/* The launch specs of a recommendation (docs/launch.md): for each kind
 * asked for (skypilot, torchrun, k8s) the file's name in the folder asked
 * for, its text (render/'s emitters) and the mode a new file gets. What
 * stays with the caller: checking the option values first, and writing
 * the files (after the history commit). */
#ifndef CLOUDFIT_USECASE_LAUNCH_SPECS_H
#define CLOUDFIT_USECASE_LAUNCH_SPECS_H
#include <stddef.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/render.h"

#define CF_LAUNCH_KINDS 3
#define CF_LAUNCH_KINDS_TEXT "skypilot, torchrun, k8s"

typedef struct {
    const char *const *kinds;          /* a kind given twice is written once */
    size_t n_kinds;
    const char *entrypoint;            /* NULL = train.py */
    const char *const *node_selectors; /* k8s: extra "KEY=VALUE" labels */
    size_t n_node_selectors;
    const char *dir;                   /* NULL = the working folder, "." */
} cf_launch_request;

typedef struct {
    const char *kind;
    cf_buf path;                       /* DIR/NAME.sky.yaml, .torchrun.sh, .pytorchjob.yaml */
    cf_buf text;
    unsigned mode;                     /* a new file's, less the umask: launch specs hold no secret */
} cf_launch_spec;

typedef struct {
    cf_launch_spec items[CF_LAUNCH_KINDS];
    size_t n;
} cf_launch_specs;

/* Whether `kind` is one of CF_LAUNCH_KINDS_TEXT. */
int cf_launch_kind_known(const char *kind);
/* The file a launch spec of `kind` is written to: DIR/NAME.sky.yaml,
 * .torchrun.sh or .pytorchjob.yaml (`dir` NULL = "."), NAME the spec's
 * name. Fixed per kind: the caller checks it against the command's inputs
 * before anything runs (an --emit that would replace the history database
 * or the spec is refused, as --out-file is). DIR's trailing slashes are
 * dropped. CF_ERR_USAGE for an unknown kind or an empty `dir`; `out`
 * appended to. */
cf_status cf_launch_spec_path(const char *kind, const char *dir, const char *spec_name, cf_buf *out);
/* The launch specs of `report`'s choice, in the order first asked for.
 * CF_OK, or a status with the last error set (an unknown kind, an entry
 * point that does not split into words, a bad node selector);
 * cf_launch_specs_free `out` either way. */
cf_status cf_launch_specs_render(const cf_report *report, const cf_launch_request *req, cf_launch_specs *out);
void cf_launch_specs_free(cf_launch_specs *out);

#endif
