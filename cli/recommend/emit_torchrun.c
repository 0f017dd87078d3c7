/* --emit torchrun: a POSIX shell script that starts the job with torchrun
 * on every node. Spot configurations get an elastic node range
 * (--nnodes=MIN:MAX, c10d rendezvous, restarts) so losing a VM shrinks
 * the job instead of ending it; CLOUDFIT_LR_BY_NODES then gives the LR. */
#include <stdio.h>

#include "recommend/emit_common.h"

/* Single quotes for the shell: ' becomes '\''. */
static void shell_quote(cf_buf *out, const char *text)
{
    cf_buf_puts(out, "'");
    for (const char *p = text; *p; p++) {
        if (*p == '\'')
            cf_buf_puts(out, "'\\''");
        else
            cf_buf_append(out, p, 1);
    }
    cf_buf_puts(out, "'");
}

cf_status cf_emit_torchrun(const cf_report *r, const char *entrypoint, cf_buf *out)
{
    const cf_config *c = &r->advice->ranked[0];
    cf_buf_puts(out, "#!/bin/sh\n");
    cf_emit_header(r, "torchrun launch script", out);
    cf_buf_puts(out, "# Run it on each node with MASTER_ADDR set to the first node's address.\n"
                     "set -eu\n");
    cf_emit_env env[CF_EMIT_MAX_ENV];
    size_t n_env = cf_emit_envs(r, env);
    for (size_t i = 0; i < n_env; i++) {
        cf_buf_printf(out, "export %s=", env[i].name);
        shell_quote(out, env[i].value);
        cf_buf_puts(out, "\n");
    }
    int min_nodes = cf_emit_min_nodes(c);
    if (c->spot)
        cf_buf_printf(out, "exec torchrun --nnodes=%d:%d --nproc-per-node=%d --max-restarts=%d \\\n", min_nodes,
                      c->nodes, c->gpus_per_node, 3 * c->nodes);
    else
        cf_buf_printf(out, "exec torchrun --nnodes=%d --nproc-per-node=%d \\\n", c->nodes, c->gpus_per_node);
    cf_buf_puts(out, "  --rdzv-backend=c10d --rdzv-endpoint=\"${MASTER_ADDR:?set MASTER_ADDR}:29400\" --rdzv-id=");
    shell_quote(out, r->spec->job.name);
    cf_buf_printf(out, " \\\n  %s\n", entrypoint);
    return cf_buf_failed(out) ? cf_error_set(CF_ERR_NOMEM, "out of memory") : CF_OK;
}
