/* --emit torchrun: a POSIX shell script that starts the job with torchrun
 * on every node. Spot configurations get an elastic node range
 * (--nnodes=MIN:MAX, c10d rendezvous, restarts) so losing a VM shrinks
 * the job instead of ending it; CLOUDFIT_LR_BY_NODES then gives the LR.
 * Flags use the underscore spelling (--nproc_per_node), which every
 * torch release since 1.9 parses; the hyphenated aliases came with 2.x.
 * Every entry-point word is single-quoted: the script passes exactly the
 * words the Kubernetes command list and the SkyPilot run block pass. A
 * mixed plan runs the same script twice: elastic on spot VMs until the
 * switch-over, then on all N on-demand VMs (CLOUDFIT_PHASE=ondemand). */
#include <stdio.h>
#include <stdlib.h>

#include "cloudfit/render/emit_common.h"

cf_status cf_emit_torchrun(const cf_report *r, const char *entrypoint, cf_buf *out)
{
    const cf_config *c = &r->advice->ranked[0];
    cf_emit_job job;
    cf_status st = cf_emit_job_begin(r, entrypoint, &job);
    if (st != CF_OK)
        return st;
    cf_buf_puts(out, "#!/bin/sh\n");
    cf_emit_header(r, "torchrun launch script", out);
    cf_buf_puts(out, "# Run it on each node with MASTER_ADDR set to the first node's address.\n"
                     "set -eu\n");
    for (size_t i = 0; i < job.env.n; i++) {
        cf_buf_printf(out, "export %s=", job.env.items[i].name);
        cf_shell_quote(out, job.env.items[i].value);
        cf_buf_puts(out, "\n");
    }
    if (c->mixed) {
        /* The spot phase is elastic; the on-demand phase holds all N. */
        cf_emit_mixed_note(r, 0, out);
        cf_buf_printf(out, "# Run it on each of the %d spot VMs (CLOUDFIT_PHASE=spot, the default); after the switch-over,\n"
                           "# on each of %d on-demand VMs with CLOUDFIT_PHASE=ondemand.\n",
                      c->nodes, c->nodes);
        cf_buf_puts(out, "export CLOUDFIT_PHASE=\"${CLOUDFIT_PHASE:-spot}\"\n"
                         "if [ \"$CLOUDFIT_PHASE\" = ondemand ]; then\n  nnodes=");
        cf_buf_printf(out, "%d\nelse\n  nnodes=%d:%d\nfi\n", c->nodes, cf_emit_min_nodes(r, c), c->nodes);
        cf_buf_printf(out, "exec torchrun --nnodes=\"$nnodes\" --nproc_per_node=%d --max_restarts=%d \\\n",
                      c->gpus_per_node, 3 * c->nodes);
    } else if (c->spot) {
        cf_buf_printf(out, "exec torchrun --nnodes=%d:%d --nproc_per_node=%d --max_restarts=%d \\\n",
                      cf_emit_min_nodes(r, c), c->nodes, c->gpus_per_node, 3 * c->nodes);
    } else {
        cf_buf_printf(out, "exec torchrun --nnodes=%d --nproc_per_node=%d \\\n", c->nodes, c->gpus_per_node);
    }
    cf_buf_puts(out, "  --rdzv_backend=c10d --rdzv_endpoint=\"${MASTER_ADDR:?set MASTER_ADDR}:29400\" --rdzv_id=");
    cf_shell_quote(out, job.name);
    cf_buf_puts(out, " \\\n ");
    for (size_t i = 0; i < job.entry.n; i++) {
        cf_buf_puts(out, " ");
        cf_shell_quote(out, job.entry.words[i]);
    }
    cf_buf_puts(out, "\n");
    if (cf_buf_failed(out))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_emit_job_free(&job);
    return st;
}
