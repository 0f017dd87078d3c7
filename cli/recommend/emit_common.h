/* What every launch-spec emitter passes to the training job: the chosen
 * batch and learning rate as CLOUDFIT_* environment variables, and the
 * learning rate per node count for elastic (spot) runs. */
#ifndef CLOUDFIT_CLI_EMIT_COMMON_H
#define CLOUDFIT_CLI_EMIT_COMMON_H
#include "render/report.h"

#define CF_EMIT_MAX_ENV 12

typedef struct {
    char name[40];
    char value[400];
} cf_emit_env;

/* Fills env[0..CF_EMIT_MAX_ENV); returns the count. */
size_t cf_emit_envs(const cf_report *r, cf_emit_env *env);
/* Smallest node count an elastic (spot) run keeps going with: half the
 * cluster, rounded up (below that the per-node-count LR table still
 * applies, but throughput falls too far to meet the prediction). */
int cf_emit_min_nodes(const cf_config *c);
/* The spec name as a DNS-1123 label (Kubernetes object names). */
void cf_emit_dns_name(const char *name, char *out, size_t n);
/* Header comment lines ("# ...") shared by the emitted files. */
void cf_emit_header(const cf_report *r, const char *what, cf_buf *out);

#endif
