/* What every module's plain structs share (docs/architecture.md): the
 * arithmetic of a run, where a figure came from, and the width of each
 * kind of name, defined once so that a cloud, a region, an instance type
 * or a GPU model fits the same buffer in every struct that holds one. */
#ifndef CLOUDFIT_COMMON_SHARED_TYPES_H
#define CLOUDFIT_COMMON_SHARED_TYPES_H

/* Arithmetic of the training run; amp = automatic mixed precision (FP16
 * tensor math where the GPU has it, else BF16, else FP32). */
typedef enum { CF_PREC_FP32, CF_PREC_TF32, CF_PREC_FP16, CF_PREC_BF16, CF_PREC_AMP } cf_precision;

/* Where a figure came from (docs/output.md). */
typedef enum { CF_PROV_MEASURED, CF_PROV_FITTED, CF_PROV_ESTIMATED, CF_PROV_DEFAULT } cf_provenance;

const char *cf_precision_name(cf_precision v);
/* The memory formats a probe's device event may report (docs/exec-protocol.md),
 * NULL-terminated: the one list the probe parser, the spec's
 * model.memory_format and a stored profile's reader check against. */
extern const char *const cf_memory_formats[];
/* Whether `name` is one of cf_memory_formats. */
int cf_memory_format_known(const char *name);
/* "fp32", "tf32", "fp16", "bf16", "amp" (any case) → *out; 0 when the name is none of them. */
int cf_precision_parse(const char *name, cf_precision *out);
const char *cf_provenance_name(cf_provenance v);

/* Buffer sizes (NUL included) of the names the structs hold. Each kind of
 * name has one width, whichever struct holds it. */
#define CF_SPEC_NAME_MAX 65           /* a spec's name: [A-Za-z0-9._-]{1,64} */
#define CF_CLOUD_NAME_MAX 16          /* aws | gcp | azure | lambda */
#define CF_REGION_NAME_MAX 48         /* "us-east-1", "northamerica-northeast1", "southafricanorth" */
#define CF_ZONE_NAME_MAX 32           /* "us-east-1a", "us-central1-b" */
#define CF_INSTANCE_TYPE_MAX 64       /* "p4d.24xlarge", "Standard_ND96asr_v4", "a2-ultragpu-8g" */
#define CF_GPU_NAME_MAX 64            /* a GPU table model ("A100-80GB") or a tool's spelling of one, up to
                                        "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition" (55) */
#define CF_PATH_MAX 1024
#define CF_DATE_MAX 11                /* YYYY-MM-DD */

#endif
