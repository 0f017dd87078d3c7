#include "cloudfit/usecase/launch_specs.h"

#include <string.h>

typedef cf_status (*emitter_fn)(const cf_report *, const char *, cf_buf *);

/* Launch specs hold no secret: a new file gets 0666 less the umask (0644
 * under the usual 022), the script 0777 less the umask (0755), so the
 * people and machines that launch the job can read (and run) them. */
static const struct {
    const char *kind;
    const char *file_suffix;
    emitter_fn fn;
    unsigned mode;
} emitters[CF_LAUNCH_KINDS] = {
    {"skypilot", ".sky.yaml", cf_emit_skypilot, 0666},
    {"torchrun", ".torchrun.sh", cf_emit_torchrun, 0777},
    {"k8s", ".pytorchjob.yaml", cf_emit_k8s, 0666},
};

static int emitter_of(const char *kind)
{
    for (int k = 0; k < CF_LAUNCH_KINDS; k++)
        if (strcmp(kind, emitters[k].kind) == 0)
            return k;
    return -1;
}

int cf_launch_kind_known(const char *kind) { return emitter_of(kind) >= 0; }

cf_status cf_launch_spec_path(const char *kind, const char *dir, const char *spec_name, cf_buf *out)
{
    int k = emitter_of(kind);
    if (k < 0)
        return cf_error_set(CF_ERR_USAGE, "unknown launch spec kind '%s' (one of: %s)", kind, CF_LAUNCH_KINDS_TEXT);
    if (dir && !dir[0]) { /* an empty shell variable: not the working folder, nor "/" */
        cf_error_set(CF_ERR_USAGE, "option '--emit-dir' needs a folder name, got ''");
        cf_error_hint("leave --emit-dir out to write the launch specs into the working folder");
        return CF_ERR_USAGE;
    }
    /* DIR/NAME.sky.yaml with DIR's trailing slashes dropped: 'out/' gave
     * 'out//NAME…' in every message, '/' gave '//NAME…' */
    const char *d = dir ? dir : ".";
    size_t len = strlen(d);
    while (len > 1 && d[len - 1] == '/')
        len--;
    int root = len == 1 && d[0] == '/';
    cf_buf_printf(out, "%.*s%s%s%s", (int)len, d, root ? "" : "/", spec_name, emitters[k].file_suffix);
    return cf_buf_failed(out) ? cf_error_set(CF_ERR_NOMEM, "out of memory") : CF_OK;
}

cf_status cf_launch_specs_render(const cf_report *r, const cf_launch_request *req, cf_launch_specs *out)
{
    memset(out, 0, sizeof *out);
    const char *entrypoint = req->entrypoint ? req->entrypoint : "train.py";
    cf_emit_k8s_options k8s = {req->node_selectors, req->n_node_selectors};
    for (size_t i = 0; i < req->n_kinds; i++) {
        int k = emitter_of(req->kinds[i]), seen = 0;
        if (k < 0)
            return cf_error_set(CF_ERR_USAGE, "unknown launch spec kind '%s' (one of: %s)", req->kinds[i],
                                CF_LAUNCH_KINDS_TEXT);
        for (size_t j = 0; j < out->n; j++)
            seen |= out->items[j].kind == emitters[k].kind;
        if (seen)
            continue;
        cf_launch_spec *spec = &out->items[out->n++];
        *spec = (cf_launch_spec){.kind = emitters[k].kind, .path = CF_BUF_INIT, .text = CF_BUF_INIT,
                                 .mode = emitters[k].mode};
        cf_status st = cf_launch_spec_path(spec->kind, req->dir, r->spec->job.name, &spec->path);
        if (st == CF_OK)
            st = emitters[k].fn == cf_emit_k8s ? cf_emit_k8s_with(r, entrypoint, &k8s, &spec->text)
                                               : emitters[k].fn(r, entrypoint, &spec->text);
        if (st == CF_OK && cf_buf_failed(&spec->text))
            st = cf_error_set(CF_ERR_NOMEM, "out of memory writing the %s launch spec", spec->kind);
        if (st != CF_OK)
            return st;
    }
    return CF_OK;
}

void cf_launch_specs_free(cf_launch_specs *out)
{
    for (size_t i = 0; i < out->n; i++) {
        cf_buf_free(&out->items[i].path);
        cf_buf_free(&out->items[i].text);
    }
    memset(out, 0, sizeof *out);
}
