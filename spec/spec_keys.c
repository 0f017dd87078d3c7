/* The allowed keys of every object in model.json and the accepted strings of
 * every enum. One table per object, so the validator, its messages and the
 * schema agreement test (tests/test_spec.c) read the same lists.
 * Enum tables list names in the order of the matching C enum
 * (cloudfit/spec/types.h, cloudfit/common/shared_types.h). */
#include <string.h>

#include "spec_internal.h"

static const char *const top_keys[] = {"$schema", "description", "name", "model", "data",
                                       "training", "profile", "search", NULL};
static const char *const model_keys[] = {"parameters", "gradient_bytes", "precision", "memory_format",
                                         "flops_per_sample", "memory_per_sample_mib",
                                         "architecture", NULL};
static const char *const mlp_keys[] = {"type", "layers", "activation", NULL};
static const char *const cnn_keys[] = {"type", "channels", "image_size", "classes", NULL};
static const char *const decoder_keys[] = {"type", "layers", "d_model", "heads", "vocab", "context",
                                           NULL};
static const char *const data_keys[] = {"samples", "source", NULL};
static const char *const source_keys[] = {"npy", "tokens", NULL};
static const char *const npy_keys[] = {"x", "y", NULL};
static const char *const training_keys[] = {"epochs", "samples", "batch", "lr", "optimizer",
                                            "lr_rule", "current", NULL};
static const char *const current_keys[] = {"gpu", "gpus_per_node", "nodes", NULL};
static const char *const profile_keys[] = {"noise_scale", "gpus", "backend", "command",
                                           "local_batches", "steps", NULL};
static const char *const noise_keys[] = {"trace", NULL};
static const char *const gpu_keys[] = {"compute_s", "max_local_batch", "sync_s", NULL};
static const char *const compute_keys[] = {"alpha", "beta", NULL};
static const char *const sync_keys[] = {"intra_node_gbps", "inter_node_gbps", "latency_s",
                                        "overlap_gamma", NULL};
static const char *const search_keys[] = {"objective", "deadline_hours", "budget_usd", "clouds",
                                          "regions", "gpus", "max_gpus", "max_nodes",
                                          "max_accumulation", "max_global_batch", "spot",
                                          "startup_minutes", "checkpoint_minutes", "storage_mb_per_s", "confidence",
                                          NULL};

typedef struct {
    const char *name;
    const char *const *list;
} named_list;

static const named_list sections[] = {
    {"", top_keys},
    {"model", model_keys},
    {"model.architecture:mlp", mlp_keys},
    {"model.architecture:cnn", cnn_keys},
    {"model.architecture:decoder", decoder_keys},
    {"data", data_keys},
    {"data.source", source_keys},
    {"data.source.npy", npy_keys},
    {"training", training_keys},
    {"training.current", current_keys},
    {"profile", profile_keys},
    {"profile.noise_scale", noise_keys},
    {"profile.gpus.*", gpu_keys},
    {"profile.gpus.*.compute_s", compute_keys},
    {"profile.gpus.*.sync_s", sync_keys},
    {"search", search_keys},
};

static const char *const precisions[] = {"fp32", "tf32", "fp16", "bf16", NULL};
static const char *const arch_types[] = {"mlp", "cnn", "decoder", NULL};
static const char *const activations[] = {"relu", "gelu", NULL};
static const char *const optimizers[] = {"sgd", "momentum", "adam", "adamw", "lamb", NULL};
static const char *const lr_rules[] = {"auto", "gain", "linear", "sqrt", "none", NULL};
static const char *const backends[] = {"cpu", "cuda", "exec", NULL};
static const char *const objectives[] = {"cost", "time", "balanced", NULL};
static const char *const clouds[] = {"aws", "gcp", "azure", "lambda", NULL};
static const char *const spot_policies[] = {"never", "allow", "only", NULL};

static const named_list enums[] = {
    {"model.precision", precisions},
    {"model.memory_format", cf_memory_formats},
    {"model.architecture.type", arch_types},
    {"model.architecture.activation", activations},
    {"training.optimizer", optimizers},
    {"training.lr_rule", lr_rules},
    {"profile.backend", backends},
    {"search.objective", objectives},
    {"search.clouds", clouds},
    {"search.spot", spot_policies},
};

static const char *const *find_list(const named_list *lists, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(lists[i].name, name) == 0)
            return lists[i].list;
    return NULL;
}

const char *const *cf_spec_allowed_keys(const char *section)
{
    return find_list(sections, sizeof sections / sizeof *sections, section);
}

const char *const *cf_spec_enum_values(const char *field)
{
    return find_list(enums, sizeof enums / sizeof *enums, field);
}
