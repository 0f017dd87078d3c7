/* Small enums shared by several modules' plain structs. */
#ifndef CLOUDFIT_TYPES_H
#define CLOUDFIT_TYPES_H

typedef enum { CF_OPT_SGD, CF_OPT_MOMENTUM, CF_OPT_ADAM, CF_OPT_ADAMW, CF_OPT_LAMB } cf_optimizer;
typedef enum { CF_LR_AUTO, CF_LR_GAIN, CF_LR_LINEAR, CF_LR_SQRT, CF_LR_NONE } cf_lr_rule;
typedef enum { CF_OBJ_COST, CF_OBJ_TIME, CF_OBJ_BALANCED } cf_objective;
typedef enum { CF_SPOT_NEVER, CF_SPOT_ALLOW, CF_SPOT_ONLY } cf_spot_policy;
typedef enum { CF_PREC_FP32, CF_PREC_TF32, CF_PREC_FP16, CF_PREC_BF16 } cf_precision;

/* Where a figure came from (DESIGN.md §4.4). */
typedef enum { CF_PROV_MEASURED, CF_PROV_FITTED, CF_PROV_ESTIMATED, CF_PROV_DEFAULT } cf_provenance;

const char *cf_optimizer_name(cf_optimizer v);
const char *cf_lr_rule_name(cf_lr_rule v);
const char *cf_objective_name(cf_objective v);
const char *cf_spot_policy_name(cf_spot_policy v);
const char *cf_precision_name(cf_precision v);
const char *cf_provenance_name(cf_provenance v);

#endif
