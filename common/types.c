#include "cloudfit/types.h"

const char *cf_optimizer_name(cf_optimizer v)
{
    static const char *const names[] = {"sgd", "momentum", "adam", "adamw", "lamb"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
const char *cf_lr_rule_name(cf_lr_rule v)
{
    static const char *const names[] = {"auto", "gain", "linear", "sqrt", "none"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
const char *cf_objective_name(cf_objective v)
{
    static const char *const names[] = {"cost", "time", "balanced"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
const char *cf_spot_policy_name(cf_spot_policy v)
{
    static const char *const names[] = {"never", "allow", "only"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
const char *cf_precision_name(cf_precision v)
{
    static const char *const names[] = {"fp32", "tf32", "fp16", "bf16"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
const char *cf_provenance_name(cf_provenance v)
{
    static const char *const names[] = {"measured", "fitted", "estimated", "default"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}
