/* What every launch-spec emitter shares: the chosen batch and learning
 * rate as CLOUDFIT_* environment variables (the learning rate per node
 * count for elastic runs), the entry point split into words once for all
 * three outputs, the job name's length every launcher accepts, and the
 * launcher's name for the chosen GPU (data/launch_accelerators.csv).
 * Nothing here has a size limit: texts are cf_buf or malloc'd. */
#ifndef CLOUDFIT_RENDER_EMIT_COMMON_H
#define CLOUDFIT_RENDER_EMIT_COMMON_H
#include "cloudfit/common/names.h"
#include "cloudfit/common/shell_words.h"
#include "cloudfit/render.h"

/* The number of CLOUDFIT_* variables at most (a count, not a buffer size). */
#define CF_EMIT_N_ENV 12

typedef struct {
    const char *name;   /* static */
    char *value;        /* malloc'd */
} cf_emit_env;

typedef struct {
    cf_emit_env items[CF_EMIT_N_ENV];
    size_t n;
} cf_emit_env_list;

/* Fills `out` (every value malloc'd; free with cf_emit_envs_free). A
 * mixed plan (spot, then on-demand near the deadline) also gets
 * CLOUDFIT_MIXED_PLAN, the switch-over rule as JSON (docs/spot.md,
 * examples/elastic/cloudfit_elastic.py MixedPlan). */
cf_status cf_emit_envs(const cf_report *r, cf_emit_env_list *out);
void cf_emit_envs_free(cf_emit_env_list *list);

/* Smallest node count an elastic (spot) run keeps going with: the elastic
 * plan's lower end (advisor/plan/elastic.c: the smallest count from which the
 * LR rule stays stable at every count up to N, holding the global batch by
 * accumulation where it can; 1 under the gain rule), as the spot Monte
 * Carlo assumes; on demand, all the nodes. */
int cf_emit_min_nodes(const cf_report *r, const cf_config *c);

/* The entry point as words (cf_shell_split_words, common/shell_words.h):
 * an accepted entry point means the same words to sh, to torchrun and in a
 * Kubernetes command list. A refusal is CF_ERR_USAGE, its message prefixed
 * with "--entrypoint" and a hint on quoting. Words before the training
 * script that set torchrun's shape or rendezvous flags (--nnodes,
 * --nproc_per_node, ..., which the launch specs set themselves and torchrun
 * would take the last of) are refused too (docs/launch.md). */
cf_status cf_emit_split_words(const char *text, cf_shell_words *out);

/* The job name for every launcher: cf_names_dns_label of the spec name
 * (common/names.h) at most CF_EMIT_NAME_MAX_CHARS long, so that
 * "<name>-worker-<index>" stays a 63-character label. */
#define CF_EMIT_NAME_MAX_CHARS 48

/* What the launchers need about the GPUs of a catalog VM, from
 * data/launch_accelerators.csv (compiled in): SkyPilot's accelerator name
 * on that cloud and instance type, the Kubernetes extended resource of the
 * device plugin (nvidia.com/gpu, amd.com/gpu), the host's CPU architecture
 * as Kubernetes names it (kubernetes.io/arch: amd64, arm64), whether the
 * GPUs are attached to a host VM that has none of its own (GCP N1) and then
 * GKE's accelerator label value. CF_ERR_INVALID naming the table when the
 * VM's GPU is not in it. Strings malloc'd ("" when the table has none). */
typedef struct {
    char *skypilot;
    char *k8s_resource;
    char *cpu_arch;
    int attached;
    char *gke_accelerator;
} cf_emit_accelerator;
cf_status cf_emit_accelerator_for(const cf_vm *vm, cf_emit_accelerator *out);
void cf_emit_accelerator_free(cf_emit_accelerator *a);

/* The container image for GPUs of `gpu_architecture` (the GPU table's
 * column: "Hopper", "CDNA 3") on `cpu_arch` hosts, from
 * data/launch_images.csv: a PyTorch build with code for that GPU,
 * published for that CPU. CF_ERR_INVALID naming the table when none is
 * listed. *image malloc'd. */
cf_status cf_emit_image_for(const char *gpu_architecture, const char *cpu_arch, char **image);

/* What every emitter starts from: the entry point as words, the job name
 * (cf_names_dns_label, CF_EMIT_NAME_MAX_CHARS) and the CLOUDFIT_*
 * variables. On failure nothing is left to free; on success free with
 * cf_emit_job_free. */
typedef struct {
    cf_shell_words entry;
    char *name;
    cf_emit_env_list env;
} cf_emit_job;
cf_status cf_emit_job_begin(const cf_report *r, const char *entrypoint, cf_emit_job *out);
void cf_emit_job_free(cf_emit_job *job);

/* Header comment lines ("# ...") shared by the emitted files. */
void cf_emit_header(const cf_report *r, const char *what, cf_buf *out);
/* Comment lines on a mixed plan's switch-over. `deadline_at` 0: the
 * deadline is given at launch (CLOUDFIT_DEADLINE_AT in the environment of
 * `sky jobs launch --env` or of the shell); else the epoch seconds the file
 * itself carries (a PyTorchJob: `kubectl apply` passes no environment). */
void cf_emit_mixed_note(const cf_report *r, long long deadline_at, cf_buf *out);
/* The seconds from now to a deadline `hours` away as the shell's integer
 * arithmetic takes them, for "$(( $(date +%s) + ... ))": "24 * 3600" for
 * whole hours, else the seconds ("81360" for 22.6 h; "%.0f * 3600" moved
 * that deadline to 23 h, later than the plan's, and "22.6 * 3600" is a
 * syntax error in sh). Returns buf. */
const char *cf_emit_deadline_seconds(double hours, char *buf, size_t size);

#endif
