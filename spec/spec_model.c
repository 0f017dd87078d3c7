/* model.json sections "model", "data" and "training" (docs/spec.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/common/escape.h"
#include "spec_internal.h"

#define MLP_MIN_LAYERS 2
#define MLP_MAX_LAYERS CF_SPEC_MAX_LIST
#define CNN_MAX_CHANNELS CF_SPEC_MAX_LIST


/* ---- model.architecture ---------------------------------------------------------- */

static cf_status read_mlp(spec_ctx *c, const cJSON *arch, cf_spec *out)
{
    const cJSON *layers = spec_member(arch, "layers");
    if (!layers)
        return spec_fail_missing(c, "layers", "[784, 256, 10] (layer widths, input and output included)");
    size_t mark = spec_push_key(c, "layers");
    cf_status st = spec_read_int_array(c, layers, MLP_MIN_LAYERS, MLP_MAX_LAYERS,
                                       "an array of 2 to 16 positive integers (layer widths)",
                                       &SPEC_DIMENSION, 0, out->job.mlp_layers, &out->job.n_mlp_layers);
    spec_pop(c, mark);
    int activation = 0;
    if (st == CF_OK)
        st = spec_field_enum(c, arch, "activation", cf_spec_enum_values("model.architecture.activation"),
                             &activation);
    if (st == CF_OK)
        snprintf(out->job.activation, sizeof out->job.activation, "%s",
                 cf_spec_enum_values("model.architecture.activation")[activation]);
    return st;
}

/* cnn: validated, not stored (the struct keeps only the type). */
static cf_status read_cnn(spec_ctx *c, const cJSON *arch)
{
    int channels[CNN_MAX_CHANNELS], n = 0, value = 0;
    cf_status st = CF_OK;
    const cJSON *item = spec_member(arch, "channels");
    if (item) {
        size_t mark = spec_push_key(c, "channels");
        st = spec_read_int_array(c, item, 1, CNN_MAX_CHANNELS, "an array of 1 to 16 positive integers",
                                 &SPEC_DIMENSION, 0, channels, &n);
        spec_pop(c, mark);
    }
    if (st == CF_OK)
        st = spec_field_int(c, arch, "image_size", &SPEC_DIMENSION, NULL, &value);
    if (st == CF_OK)
        st = spec_field_int(c, arch, "classes", &SPEC_DIMENSION, NULL, &value);
    return st;
}

/* decoder: validated, not stored. */
static cf_status read_decoder(spec_ctx *c, const cJSON *arch)
{
    static const char *const keys[] = {"layers", "d_model", "heads", "vocab", "context"};
    int value = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        cf_status st = spec_field_int(c, arch, keys[i], &SPEC_DIMENSION, NULL, &value);
        if (st != CF_OK)
            return st;
    }
    return CF_OK;
}

/* model.architecture: the type first, since it decides which keys are allowed. */
static cf_status read_architecture(spec_ctx *c, const cJSON *arch, cf_spec *out)
{
    const char *const *types = cf_spec_enum_values("model.architecture.type");
    const cJSON *type_item = spec_member(arch, "type");
    if (!type_item)
        return spec_fail_missing(c, "type", "\"mlp\", \"cnn\" or \"decoder\"");
    int type = 0;
    size_t mark = spec_push_key(c, "type");
    cf_status st = spec_read_enum(c, type_item, types, &type);
    spec_pop(c, mark);
    if (st != CF_OK)
        return st;
    char section[48];
    snprintf(section, sizeof section, "model.architecture:%s", types[type]);
    st = spec_check_keys(c, arch, cf_spec_allowed_keys(section));
    if (st != CF_OK)
        return st;
    snprintf(out->job.architecture_type, sizeof out->job.architecture_type, "%s", types[type]);
    if (strcmp(types[type], "mlp") == 0)
        return read_mlp(c, arch, out);
    if (strcmp(types[type], "cnn") == 0)
        return read_cnn(c, arch);
    return read_decoder(c, arch);
}

/* ---- model ------------------------------------------------------------------------- */

/* Parameters of a dense MLP: sum over layers of in*out weights + out biases. */
static double mlp_parameters(const cf_spec *spec)
{
    double total = 0.0;
    for (int i = 1; i < spec->job.n_mlp_layers; i++)
        total += (double)spec->job.mlp_layers[i - 1] * spec->job.mlp_layers[i] + spec->job.mlp_layers[i];
    return total;
}

static cf_status read_parameters(spec_ctx *c, const cJSON *model, cf_spec *out)
{
    if (spec_member(model, "parameters"))
        return spec_field_number(c, model, "parameters", &SPEC_RULE_PARAMETERS, NULL, &out->job.parameters);
    if (out->job.n_mlp_layers >= MLP_MIN_LAYERS) {
        out->job.parameters = mlp_parameters(out);
        return CF_OK;
    }
    return spec_fail_missing(c, "parameters",
                             "25557032 (trainable parameters), or describe an \"architecture\" of type "
                             "\"mlp\" whose \"layers\" give it");
}

/* gradient_bytes: 1, 2, 4 or 8. */
static cf_status read_gradient_bytes(spec_ctx *c, const cJSON *model, cf_spec *out)
{
    const spec_int_rule rule = SPEC_RULE_GRADIENT_BYTES;
    const cJSON *item = spec_member(model, "gradient_bytes");
    if (!item)
        return CF_OK;
    size_t mark = spec_push_key(c, "gradient_bytes");
    int bytes = 0;
    cf_status st = spec_read_int(c, item, &rule, &bytes);
    if (st == CF_OK && (bytes & (bytes - 1)) != 0) {
        st = spec_fail_value(c, rule.what, item);
        cf_error_hint("bytes per gradient element on the wire: 4 for fp32, 2 for fp16/bf16");
    }
    spec_pop(c, mark);
    if (st == CF_OK)
        out->job.gradient_bytes = bytes;
    return st;
}

static cf_status read_model_object(spec_ctx *c, const cJSON *model, cf_spec *out)
{
    cf_status st = spec_check_keys(c, model, cf_spec_allowed_keys("model"));
    if (st == CF_OK)
        st = spec_field_object(c, model, "architecture", NULL, read_architecture, out);
    if (st == CF_OK)
        st = read_parameters(c, model, out);
    if (st == CF_OK)
        st = read_gradient_bytes(c, model, out);
    int precision = out->job.gradient_bytes == 2 ? CF_PREC_FP16 : CF_PREC_FP32;
    if (st == CF_OK)
        st = spec_field_enum(c, model, "precision", cf_spec_enum_values("model.precision"), &precision);
    out->job.precision = (cf_precision)precision;
    int memory_format = -1; /* not said: nothing to compare a profile's with */
    if (st == CF_OK)
        st = spec_field_enum(c, model, "memory_format", cf_spec_enum_values("model.memory_format"), &memory_format);
    if (st == CF_OK && memory_format >= 0)
        snprintf(out->job.memory_format, sizeof out->job.memory_format, "%s",
                 cf_spec_enum_values("model.memory_format")[memory_format]);
    if (st == CF_OK)
        st = spec_field_number(c, model, "flops_per_sample", &SPEC_RULE_FLOPS_PER_SAMPLE, NULL,
                               &out->job.flops_per_sample);
    if (st == CF_OK)
        st = spec_field_number(c, model, "memory_per_sample_mib", &SPEC_RULE_MEMORY_PER_SAMPLE_MIB, NULL,
                               &out->job.memory_per_sample_mib);
    return st;
}

cf_status spec_read_model(spec_ctx *c, const cJSON *root, cf_spec *out)
{
    return spec_field_object(c, root, "model", "{\"parameters\": 25557032}", read_model_object, out);
}

/* ---- data ------------------------------------------------------------------------- */

static const char source_rule[] =
    "\"synthetic\", {\"npy\": {\"x\": PATH, \"y\": PATH}} or {\"tokens\": PATH}";

static cf_status read_npy(spec_ctx *c, const cJSON *npy, cf_spec *out)
{
    cf_status st = spec_check_keys(c, npy, cf_spec_allowed_keys("data.source.npy"));
    const char *const keys[] = {"x", "y"};
    char *paths[] = {out->job.npy_x, out->job.npy_y};
    for (int i = 0; st == CF_OK && i < 2; i++) {
        const cJSON *item = spec_member(npy, keys[i]);
        if (!item)
            return spec_fail_missing(c, keys[i], i == 0 ? "\"x_train.npy\"" : "\"y_train.npy\"");
        size_t mark = spec_push_key(c, keys[i]);
        st = spec_read_path(c, item, paths[i]);
        spec_pop(c, mark);
    }
    if (st == CF_OK)
        snprintf(out->job.data_source, sizeof out->job.data_source, "npy");
    return st;
}

static cf_status read_tokens(spec_ctx *c, const cJSON *tokens, cf_spec *out)
{
    size_t mark = spec_push_key(c, "tokens");
    cf_status st = spec_read_path(c, tokens, out->job.tokens_path);
    spec_pop(c, mark);
    if (st == CF_OK)
        snprintf(out->job.data_source, sizeof out->job.data_source, "tokens");
    return st;
}

/* data.source as an object: exactly one of "npy" or "tokens". */
static cf_status read_source_object(spec_ctx *c, const cJSON *source, cf_spec *out)
{
    cf_status st = spec_check_keys(c, source, cf_spec_allowed_keys("data.source"));
    if (st != CF_OK)
        return st;
    const cJSON *npy = spec_member(source, "npy"), *tokens = spec_member(source, "tokens");
    if ((npy != NULL) == (tokens != NULL)) {
        st = spec_fail(c, "expected exactly one of \"npy\" or \"tokens\", got %s", npy ? "both" : "neither");
        cf_error_hint("{\"npy\": {\"x\": \"x.npy\", \"y\": \"y.npy\"}} or {\"tokens\": \"train.bin\"}");
        return st;
    }
    if (tokens)
        return read_tokens(c, tokens, out);
    return spec_field_object(c, source, "npy", NULL, read_npy, out);
}

static cf_status read_source(spec_ctx *c, const cJSON *source, cf_spec *out)
{
    if (cJSON_IsObject(source))
        return read_source_object(c, source, out);
    if (!cJSON_IsString(source))
        return spec_fail_type(c, source_rule, source);
    if (strcmp(source->valuestring, "synthetic") == 0)
        return CF_OK;
    cf_status st = spec_fail_value(c, source_rule, source);
    static const char *const synthetic[] = {"synthetic", NULL};
    if (spec_suggest(source->valuestring, synthetic))
        cf_error_hint("did you mean \"synthetic\"?");
    else
        cf_error_hint("files go in an object: {\"tokens\": \"%.*s\"}", (int)cf_utf8_prefix(source->valuestring, 64),
                      source->valuestring);
    return st;
}

static cf_status read_data_object(spec_ctx *c, const cJSON *data, cf_spec *out)
{
    cf_status st = spec_check_keys(c, data, cf_spec_allowed_keys("data"));
    if (st != CF_OK)
        return st;
    const cJSON *samples = spec_member(data, "samples");
    if (!samples)
        return spec_fail_missing(c, "samples", "1281167 (training samples per epoch)");
    size_t mark = spec_push_key(c, "samples");
    st = spec_read_count(c, samples, &out->job.samples_per_epoch);
    spec_pop(c, mark);
    const cJSON *source = spec_member(data, "source");
    if (st == CF_OK && source) {
        mark = spec_push_key(c, "source");
        st = read_source(c, source, out);
        spec_pop(c, mark);
    }
    return st;
}

cf_status spec_read_data(spec_ctx *c, const cJSON *root, cf_spec *out)
{
    return spec_field_object(c, root, "data", "{\"samples\": 1281167}", read_data_object, out);
}

/* ---- training ------------------------------------------------------------------------- */

static cf_status read_current(spec_ctx *c, const cJSON *current, cf_spec *out)
{
    cf_status st = spec_check_keys(c, current, cf_spec_allowed_keys("training.current"));
    if (st == CF_OK)
        st = spec_field_string(c, current, "gpu", CF_GPU_NAME_MAX - 1, "\"V100\"", out->job.current_gpu);
    if (st == CF_OK)
        st = spec_field_int(c, current, "gpus_per_node", &SPEC_RULE_CURRENT_GPUS_PER_NODE, "8",
                            &out->job.current_gpus_per_node);
    if (st == CF_OK)
        st = spec_field_int(c, current, "nodes", &SPEC_RULE_CURRENT_NODES, "1", &out->job.current_nodes);
    out->job.has_current = st == CF_OK;
    return st;
}

/* Exactly one of epochs (× data.samples) or samples gives total_samples. */
static cf_status read_duration(spec_ctx *c, const cJSON *training, cf_spec *out)
{
    const cJSON *epochs = spec_member(training, "epochs"), *samples = spec_member(training, "samples");
    if ((epochs != NULL) == (samples != NULL)) {
        cf_status st = spec_fail(c, "expected exactly one of \"epochs\" or \"samples\", got %s",
                                 epochs ? "both" : "neither");
        cf_error_hint("give \"epochs\" (passes over data.samples) or \"samples\" (total training "
                      "samples at the base batch), not both");
        return st;
    }
    if (samples)
        return spec_field_number(c, training, "samples", &SPEC_RULE_TRAINING_SAMPLES, NULL, &out->job.total_samples);
    cf_status st = spec_field_number(c, training, "epochs", &SPEC_RULE_EPOCHS, NULL, &out->job.epochs);
    double total = out->job.epochs * out->job.samples_per_epoch;
    if (st == CF_OK && total > CF_SPEC_MAX_SAMPLES) {
        /* Checked here, with both keys known: every count the advisor
         * derives from the total (steps, samples to the target) is then a
         * whole number a double holds. */
        size_t mark = spec_push_key(c, "epochs");
        st = spec_fail(c, "%g epochs of data.samples (%.17g) are %.4g training samples, more than 2^53 "
                          "(9007199254740992)", out->job.epochs, out->job.samples_per_epoch, total);
        spec_pop(c, mark);
        cf_error_hint("lower training.epochs (or data.samples), or give the total as training.samples");
    }
    out->job.total_samples = total;
    return st;
}

/* The known-good recipe takes at least one step: its batch is at most the
 * training samples (else the base batch, and every batch scaled from it,
 * means less than one step, and the statistics built on it are void). */
static cf_status check_batch_fits_samples(spec_ctx *c, const cJSON *training, const cf_spec *out)
{
    if ((double)out->job.batch <= out->job.total_samples)
        return CF_OK;
    size_t mark = spec_push_key(c, "batch");
    char what[128];
    snprintf(what, sizeof what, "at most the training samples (%.17g, %s)", out->job.total_samples,
             out->job.epochs > 0 ? "epochs × data.samples" : "training.samples");
    cf_status st = spec_fail_value(c, what, spec_member(training, "batch"));
    spec_pop(c, mark);
    cf_error_hint("the recipe's global batch must fit in the training run at least once");
    return st;
}

static cf_status read_training_object(spec_ctx *c, const cJSON *training, cf_spec *out)
{
    int optimizer = CF_OPT_SGD, lr_rule = CF_LR_AUTO;
    cf_status st = spec_check_keys(c, training, cf_spec_allowed_keys("training"));
    if (st == CF_OK)
        st = read_duration(c, training, out);
    if (st == CF_OK)
        st = spec_field_int(c, training, "batch", &SPEC_RULE_BATCH,
                            "256 (the global batch of your known-good recipe)", &out->job.batch);
    if (st == CF_OK)
        st = check_batch_fits_samples(c, training, out);
    if (st == CF_OK)
        st = spec_field_number(c, training, "lr", &SPEC_RULE_LR, "0.1 (the learning rate at that batch)",
                               &out->job.lr);
    if (st == CF_OK)
        st = spec_field_enum(c, training, "optimizer", cf_spec_enum_values("training.optimizer"), &optimizer);
    if (st == CF_OK)
        st = spec_field_enum(c, training, "lr_rule", cf_spec_enum_values("training.lr_rule"), &lr_rule);
    out->job.optimizer = (cf_optimizer)optimizer;
    out->job.lr_rule = (cf_lr_rule)lr_rule;
    if (st == CF_OK)
        st = spec_field_object(c, training, "current", NULL, read_current, out);
    return st;
}

cf_status spec_read_training(spec_ctx *c, const cJSON *root, cf_spec *out)
{
    return spec_field_object(c, root, "training", "{\"epochs\": 90, \"batch\": 256, \"lr\": 0.1}",
                             read_training_object, out);
}
