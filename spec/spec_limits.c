/* The range of every numeric key of model.json, in one table: the readers
 * (spec_model.c, spec_profile.c, spec_search.c) check each value against
 * the rule named here, and cf_spec_limits() lists the same rules, so a test
 * can run every command on the extreme accepted values
 * (tests/faults/test_extremes.py).
 *
 * Limits by construction: each range is wide enough for any real job (by
 * orders of magnitude) and narrow enough that what is computed from the
 * values fits the types it is computed in: integers that are multiplied
 * (nodes × GPUs × local batch × accumulation) stay within a long, batches
 * within an int, and no double reaches infinity or loses a whole number
 * (2^53). What depends on two keys is checked after both are read
 * (spec.c: the total training samples, the base batch against them). */
#include <limits.h>
#include <math.h>

#include "spec_internal.h"

const spec_int_rule SPEC_POSITIVE_INT = {1, INT_MAX, "a positive integer"};
const spec_int_rule SPEC_DIMENSION = {1, 1 << 20, "a positive integer up to 1048576"};

const spec_num_rule SPEC_RULE_PARAMETERS = {1.0, 1e15, 0, "a number from 1 to 1e15"};
const spec_int_rule SPEC_RULE_GRADIENT_BYTES = {1, 8, "one of 1, 2, 4, 8"};
const spec_num_rule SPEC_RULE_FLOPS_PER_SAMPLE = {0.0, 1e21, 1, "a positive number up to 1e21"};
const spec_num_rule SPEC_RULE_MEMORY_PER_SAMPLE_MIB = {0.0, 1e9, 1, "a positive number up to 1e9"};
const spec_int_rule SPEC_RULE_BATCH = {1, INT_MAX, "a positive integer"};
const spec_num_rule SPEC_RULE_EPOCHS = {0.0, 1e6, 1, "a positive number up to 1e6"};
const spec_num_rule SPEC_RULE_TRAINING_SAMPLES = {0.0, CF_SPEC_MAX_SAMPLES, 1,
                                                  "a positive number up to 2^53 (9007199254740992)"};
const spec_num_rule SPEC_RULE_LR = {0.0, 1e3, 1, "a positive number up to 1000"};
const spec_int_rule SPEC_RULE_CURRENT_GPUS_PER_NODE = {1, 1024, "an integer from 1 to 1024"};
const spec_int_rule SPEC_RULE_CURRENT_NODES = {1, 1 << 20, "an integer from 1 to 1048576"};
const spec_num_rule SPEC_RULE_NOISE_SCALE = {0.0, 1e15, 1, "a positive number up to 1e15"};
const spec_num_rule SPEC_RULE_TRACE_PROGRESS = {0.0, 1.0, 0, "a number from 0 to 1"};
const spec_num_rule SPEC_RULE_ALPHA_S = {0.0, 1e6, 0, "a number from 0 to 1e6"};
const spec_num_rule SPEC_RULE_BETA_S = {0.0, 1e6, 1, "a positive number up to 1e6"};
const spec_num_rule SPEC_RULE_GBPS = {0.0, 1e6, 1, "a positive number up to 1e6"};
const spec_num_rule SPEC_RULE_LATENCY_S = {0.0, 1e3, 0, "a number from 0 to 1000"};
const spec_num_rule SPEC_RULE_OVERLAP_GAMMA = {1.0, 10.0, 0, "a number from 1 to 10"};
const spec_int_rule SPEC_RULE_MAX_LOCAL_BATCH = {1, INT_MAX, "a positive integer"};
const spec_int_rule SPEC_RULE_PROBE_STEPS = {3, 100000, "an integer from 3 to 100000"};
const spec_num_rule SPEC_RULE_DEADLINE_HOURS = {0.0, 1e6, 1, "a positive number up to 1e6"};
const spec_num_rule SPEC_RULE_BUDGET_USD = {0.0, 1e12, 1, "a positive number up to 1e12"};
const spec_int_rule SPEC_RULE_MAX_GPUS = {1, 4096, "an integer from 1 to 4096"};
const spec_int_rule SPEC_RULE_MAX_NODES = {1, 1024, "an integer from 1 to 1024"};
const spec_int_rule SPEC_RULE_MAX_ACCUMULATION = {1, 1024, "an integer from 1 to 1024"};
const spec_int_rule SPEC_RULE_MAX_GLOBAL_BATCH = {1, INT_MAX, "a positive integer"};
const spec_num_rule SPEC_RULE_MINUTES = {0.0, 1e5, 0, "a number from 0 to 100000"};
const spec_num_rule SPEC_RULE_CONFIDENCE = {0.5, 0.999, 0, "a number from 0.5 to 0.999"};
const spec_num_rule SPEC_RULE_STORAGE_MB_PER_S = {0.0, 1e9, 1, "a positive number up to 1e9"};

typedef struct {
    const char *key;
    const spec_int_rule *int_rule;
    const spec_num_rule *num_rule;
} limit_entry;

/* Key paths as in messages; "*" stands for a GPU name, "[]" for every
 * element of an array. data.samples is read by spec_read_count (an
 * integer that may exceed an int). */
static const limit_entry entries[] = {
    {"model.parameters", NULL, &SPEC_RULE_PARAMETERS},
    {"model.gradient_bytes", &SPEC_RULE_GRADIENT_BYTES, NULL},
    {"model.flops_per_sample", NULL, &SPEC_RULE_FLOPS_PER_SAMPLE},
    {"model.memory_per_sample_mib", NULL, &SPEC_RULE_MEMORY_PER_SAMPLE_MIB},
    {"model.architecture.layers[]", &SPEC_DIMENSION, NULL},
    {"model.architecture.channels[]", &SPEC_DIMENSION, NULL},
    {"model.architecture.image_size", &SPEC_DIMENSION, NULL},
    {"model.architecture.classes", &SPEC_DIMENSION, NULL},
    {"model.architecture.d_model", &SPEC_DIMENSION, NULL},
    {"model.architecture.heads", &SPEC_DIMENSION, NULL},
    {"model.architecture.vocab", &SPEC_DIMENSION, NULL},
    {"model.architecture.context", &SPEC_DIMENSION, NULL},
    {"data.samples", NULL, NULL},
    {"training.epochs", NULL, &SPEC_RULE_EPOCHS},
    {"training.samples", NULL, &SPEC_RULE_TRAINING_SAMPLES},
    {"training.batch", &SPEC_RULE_BATCH, NULL},
    {"training.lr", NULL, &SPEC_RULE_LR},
    {"training.current.gpus_per_node", &SPEC_RULE_CURRENT_GPUS_PER_NODE, NULL},
    {"training.current.nodes", &SPEC_RULE_CURRENT_NODES, NULL},
    {"profile.noise_scale", NULL, &SPEC_RULE_NOISE_SCALE},
    {"profile.noise_scale.trace[][0]", NULL, &SPEC_RULE_TRACE_PROGRESS},
    {"profile.noise_scale.trace[][1]", NULL, &SPEC_RULE_NOISE_SCALE},
    {"profile.gpus.*.compute_s.alpha", NULL, &SPEC_RULE_ALPHA_S},
    {"profile.gpus.*.compute_s.beta", NULL, &SPEC_RULE_BETA_S},
    {"profile.gpus.*.max_local_batch", &SPEC_RULE_MAX_LOCAL_BATCH, NULL},
    {"profile.gpus.*.sync_s.intra_node_gbps", NULL, &SPEC_RULE_GBPS},
    {"profile.gpus.*.sync_s.inter_node_gbps", NULL, &SPEC_RULE_GBPS},
    {"profile.gpus.*.sync_s.latency_s", NULL, &SPEC_RULE_LATENCY_S},
    {"profile.gpus.*.sync_s.overlap_gamma", NULL, &SPEC_RULE_OVERLAP_GAMMA},
    {"profile.local_batches[]", &SPEC_DIMENSION, NULL},
    {"profile.steps", &SPEC_RULE_PROBE_STEPS, NULL},
    {"search.deadline_hours", NULL, &SPEC_RULE_DEADLINE_HOURS},
    {"search.budget_usd", NULL, &SPEC_RULE_BUDGET_USD},
    {"search.max_gpus", &SPEC_RULE_MAX_GPUS, NULL},
    {"search.max_nodes", &SPEC_RULE_MAX_NODES, NULL},
    {"search.max_accumulation", &SPEC_RULE_MAX_ACCUMULATION, NULL},
    {"search.max_global_batch", &SPEC_RULE_MAX_GLOBAL_BATCH, NULL},
    {"search.startup_minutes", NULL, &SPEC_RULE_MINUTES},
    {"search.checkpoint_minutes", NULL, &SPEC_RULE_MINUTES},
    {"search.storage_mb_per_s", NULL, &SPEC_RULE_STORAGE_MB_PER_S},
    {"search.confidence", NULL, &SPEC_RULE_CONFIDENCE},
};
#define N_ENTRIES (sizeof entries / sizeof *entries)

size_t cf_spec_limits(cf_spec_limit *out, size_t cap)
{
    for (size_t i = 0; i < N_ENTRIES && i < cap; i++) {
        const limit_entry *e = &entries[i];
        cf_spec_limit *l = &out[i];
        l->key = e->key;
        if (e->int_rule) {
            l->lo = (double)e->int_rule->lo;
            l->hi = (double)e->int_rule->hi;
            l->integer = 1;
            l->lo_exclusive = 0;
        } else if (e->num_rule) {
            l->lo = e->num_rule->lo;
            l->hi = e->num_rule->hi;
            l->integer = 0;
            l->lo_exclusive = e->num_rule->lo_exclusive;
        } else { /* data.samples: spec_read_count */
            l->lo = 1;
            l->hi = CF_SPEC_MAX_SAMPLES;
            l->integer = 1;
            l->lo_exclusive = 0;
        }
    }
    return N_ENTRIES;
}
