/* Tests of the job spec (spec/): defaults, every field, derived values, path
 * resolution, error messages with key paths (a table of bad specs), JSON
 * syntax positions, the hash, the example specs and the JSON Schema's
 * agreement with the validator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/spec.h"
#include "../spec/spec_internal.h"

/* A valid minimal spec, in pieces that the bad cases replace one at a time. */
#define NAME "\"name\": \"t\""
#define MODEL "\"model\": {\"parameters\": 1000}"
#define DATA "\"data\": {\"samples\": 1000}"
#define TRAIN "\"training\": {\"epochs\": 2, \"batch\": 32, \"lr\": 0.1}"
#define MIN_SPEC "{" NAME ", " MODEL ", " DATA ", " TRAIN "}"
/* MIN_SPEC plus extra top-level members. */
#define WITH(extra) "{" NAME ", " MODEL ", " DATA ", " TRAIN ", " extra "}"
/* MIN_SPEC with its training object replaced. */
#define TRAINING(body) "{" NAME ", " MODEL ", " DATA ", \"training\": {" body "}}"

static cf_status parse_text(const char *json, const char *path, cf_spec *out)
{
    return cf_spec_parse(json, strlen(json), path, out);
}

/* Parses `json` expecting success, failing the test with the message if not. */
static void parse_ok(const char *json, const char *path, cf_spec *out)
{
    cf_status st = parse_text(json, path, out);
    if (st != CF_OK)
        fail_msg("unexpected error: %s (hint: %s)", cf_error_message(), cf_error_hint_text());
}

/* ---- defaults and every field --------------------------------------------------- */

static void test_minimal_defaults(void **state)
{
    (void)state;
    cf_spec s;
    parse_ok(MIN_SPEC, "model.json", &s);
    assert_string_equal(s.job.name, "t");
    assert_string_equal(s.job.source, "model.json");
    assert_true(s.job.parameters == 1000.0);
    assert_int_equal(s.job.gradient_bytes, 4);
    assert_int_equal(s.job.precision, CF_PREC_FP32);
    assert_string_equal(s.job.memory_format, ""); /* not said */
    assert_true(s.job.flops_per_sample == 0.0 && s.job.memory_per_sample_mib == 0.0);
    assert_string_equal(s.job.architecture_type, "");
    assert_int_equal(s.job.n_mlp_layers, 0);
    assert_string_equal(s.job.activation, "relu");
    assert_true(s.job.samples_per_epoch == 1000.0);
    assert_string_equal(s.job.data_source, "synthetic");
    assert_true(s.job.epochs == 2.0 && s.job.total_samples == 2000.0);
    assert_int_equal(s.job.batch, 32);
    assert_true(s.job.lr == 0.1);
    assert_int_equal(s.job.optimizer, CF_OPT_SGD);
    assert_int_equal(s.job.lr_rule, CF_LR_AUTO);
    assert_int_equal(s.job.has_current, 0);
    assert_int_equal(s.has_noise_scale, 0);
    assert_int_equal(s.n_noise_trace, 0);
    assert_int_equal(s.n_gpus, 0);
    assert_string_equal(s.probe.backend, "");
    assert_int_equal(s.probe.n_command, 0);
    assert_null(s.probe.command[0]);
    assert_int_equal(s.probe.n_local_batches, 0);
    assert_int_equal(s.probe.steps, 30);
    assert_int_equal(s.search.objective, CF_OBJ_COST);
    assert_true(s.search.deadline_hours == 0.0 && s.search.budget_usd == 0.0);
    assert_int_equal(s.search.n_clouds, 0);
    assert_int_equal(s.search.n_regions, 0);
    assert_int_equal(s.search.n_gpus, 0);
    assert_int_equal(s.search.max_gpus, 64);
    assert_int_equal(s.search.max_nodes, 16);
    assert_int_equal(s.search.max_accumulation, 8);
    assert_int_equal(s.search.max_global_batch, 64 * 32);
    assert_int_equal(s.search.spot, CF_SPOT_NEVER);
    assert_true(s.search.startup_minutes == 10.0 && s.search.checkpoint_minutes == 0.0 && s.search.storage_mb_per_s == 125.0);
    assert_int_equal((int)strlen(s.hash), 64);
    cf_spec_free(&s);
}

static void test_fp16_default_precision(void **state)
{
    (void)state;
    cf_spec s;
    parse_ok("{" NAME ", \"model\": {\"parameters\": 10, \"gradient_bytes\": 2}, " DATA ", " TRAIN "}", NULL, &s);
    assert_int_equal(s.job.gradient_bytes, 2);
    assert_int_equal(s.job.precision, CF_PREC_FP16);
    assert_string_equal(s.job.source, "");
    cf_spec_free(&s);
}

static const char full_spec[] =
    "{\n"
    "  \"$schema\": \"../data/schema/spec.schema.json\",\n"
    "  \"description\": \"every field\",\n"
    "  \"name\": \"resnet50-imagenet_v1.2\",\n"
    "  \"model\": {\"parameters\": 25557032, \"gradient_bytes\": 2, \"precision\": \"bf16\",\n"
    "            \"memory_format\": \"channels_last\",\n"
    "            \"flops_per_sample\": 1.23e10, \"memory_per_sample_mib\": 95,\n"
    "            \"architecture\": {\"type\": \"cnn\", \"channels\": [64, 128, 256], \"image_size\": 224,\n"
    "                             \"classes\": 1000}},\n"
    "  \"data\": {\"samples\": 1281167, \"source\": {\"npy\": {\"x\": \"x.npy\", \"y\": \"/abs/y.npy\"}}},\n"
    "  \"training\": {\"samples\": 115305030, \"batch\": 256, \"lr\": 0.1, \"optimizer\": \"adamw\",\n"
    "               \"lr_rule\": \"sqrt\", \"current\": {\"gpu\": \"V100\", \"gpus_per_node\": 8, \"nodes\": 2}},\n"
    "  \"profile\": {\n"
    "    \"noise_scale\": 4000,\n"
    "    \"gpus\": {\"T4\": {\"compute_s\": {\"alpha\": 0.078, \"beta\": 0.0042}, \"max_local_batch\": 256,\n"
    "                      \"sync_s\": {\"intra_node_gbps\": 40, \"inter_node_gbps\": 5, \"latency_s\": 0.001,\n"
    "                                 \"overlap_gamma\": 2.5}},\n"
    "             \"A100.40GB\": \"measurements/a100.csv\"},\n"
    "    \"backend\": \"exec\",\n"
    "    \"command\": [\"python3\", \"train.py\", \"--cloudfit-probe\"],\n"
    "    \"local_batches\": [16, 32, 64, 128],\n"
    "    \"steps\": 50\n"
    "  },\n"
    "  \"search\": {\"objective\": \"balanced\", \"deadline_hours\": 24, \"budget_usd\": 500,\n"
    "             \"clouds\": [\"aws\", \"gcp\", \"azure\", \"lambda\"], \"regions\": [\"us-east-1\", \"europe-west4\"],\n"
    "             \"gpus\": [\"A100-80GB\", \"H100\"], \"max_gpus\": 128, \"max_nodes\": 32, \"max_accumulation\": 4,\n"
    "             \"max_global_batch\": 8192, \"spot\": \"allow\", \"startup_minutes\": 5, \"checkpoint_minutes\": 0}\n"
    "}\n";

static void check_full_model(const cf_spec *s)
{
    assert_string_equal(s->job.name, "resnet50-imagenet_v1.2");
    assert_true(s->job.parameters == 25557032.0);
    assert_int_equal(s->job.gradient_bytes, 2);
    assert_int_equal(s->job.precision, CF_PREC_BF16);
    assert_string_equal(s->job.memory_format, "channels_last");
    assert_true(s->job.flops_per_sample == 1.23e10);
    assert_true(s->job.memory_per_sample_mib == 95.0);
    assert_string_equal(s->job.architecture_type, "cnn");
    assert_true(s->job.samples_per_epoch == 1281167.0);
    assert_string_equal(s->job.data_source, "npy");
    assert_string_equal(s->job.npy_x, "jobs/x.npy");
    assert_string_equal(s->job.npy_y, "/abs/y.npy");
    assert_true(s->job.epochs == 0.0 && s->job.total_samples == 115305030.0);
    assert_int_equal(s->job.batch, 256);
    assert_int_equal(s->job.optimizer, CF_OPT_ADAMW);
    assert_int_equal(s->job.lr_rule, CF_LR_SQRT);
    assert_int_equal(s->job.has_current, 1);
    assert_string_equal(s->job.current_gpu, "V100");
    assert_int_equal(s->job.current_gpus_per_node, 8);
    assert_int_equal(s->job.current_nodes, 2);
}

static void check_full_profile(const cf_spec *s)
{
    assert_int_equal(s->has_noise_scale, 1);
    assert_true(s->noise_scale == 4000.0);
    assert_int_equal(s->n_gpus, 2);
    const cf_gpu_profile_given *t4 = &s->gpus[0], *a100 = &s->gpus[1];
    assert_string_equal(t4->gpu, "T4");
    assert_int_equal(t4->has_compute, 1);
    assert_true(t4->alpha_s == 0.078 && t4->beta_s == 0.0042);
    assert_int_equal(t4->max_local_batch, 256);
    assert_true(t4->intra_node_gbps == 40.0 && t4->inter_node_gbps == 5.0);
    assert_true(t4->latency_s == 0.001 && t4->overlap_gamma == 2.5);
    assert_string_equal(t4->measurements_path, "");
    assert_string_equal(a100->gpu, "A100.40GB");
    assert_int_equal(a100->has_compute, 0);
    assert_string_equal(a100->measurements_path, "jobs/measurements/a100.csv");
    assert_string_equal(s->probe.backend, "exec");
    assert_int_equal(s->probe.n_command, 3);
    assert_string_equal(s->probe.command[0], "python3");
    assert_string_equal(s->probe.command[2], "--cloudfit-probe");
    assert_null(s->probe.command[3]);
    assert_int_equal(s->probe.n_local_batches, 4);
    assert_int_equal(s->probe.local_batches[3], 128);
    assert_int_equal(s->probe.steps, 50);
}

static void check_full_search(const cf_spec *s)
{
    assert_int_equal(s->search.objective, CF_OBJ_BALANCED);
    assert_true(s->search.deadline_hours == 24.0 && s->search.budget_usd == 500.0);
    assert_int_equal(s->search.n_clouds, 4);
    assert_string_equal(s->search.clouds[3], "lambda");
    assert_int_equal(s->search.n_regions, 2);
    assert_string_equal(s->search.regions[1], "europe-west4");
    assert_int_equal(s->search.n_gpus, 2);
    assert_string_equal(s->search.gpus[0], "A100-80GB");
    assert_int_equal(s->search.max_gpus, 128);
    assert_int_equal(s->search.max_nodes, 32);
    assert_int_equal(s->search.max_accumulation, 4);
    assert_int_equal(s->search.max_global_batch, 8192);
    assert_int_equal(s->search.spot, CF_SPOT_ALLOW);
    assert_true(s->search.startup_minutes == 5.0 && s->search.checkpoint_minutes == 0.0);
}

static void test_full_spec(void **state)
{
    (void)state;
    cf_spec s;
    parse_ok(full_spec, "jobs/model.json", &s);
    check_full_model(&s);
    check_full_profile(&s);
    check_full_search(&s);
    cf_spec_free(&s);
    cf_spec_free(&s);   /* idempotent */
}

static void test_full_spec_decoder(void **state)
{
    (void)state;
    cf_spec s;
    parse_ok("{" NAME ", \"model\": {\"parameters\": 1.2e8, \"architecture\": {\"type\": \"decoder\", \"layers\": 12,"
             " \"d_model\": 768, \"heads\": 12, \"vocab\": 50257, \"context\": 1024}}, "
             "\"data\": {\"samples\": 9000000, \"source\": {\"tokens\": \"./train.bin\"}}, " TRAIN "}",
             "/srv/jobs/gpt2.json", &s);
    assert_string_equal(s.job.architecture_type, "decoder");
    assert_string_equal(s.job.data_source, "tokens");
    assert_string_equal(s.job.tokens_path, "/srv/jobs/train.bin");
    cf_spec_free(&s);
}

/* ---- derived values --------------------------------------------------------------- */

static void test_mlp_parameters(void **state)
{
    (void)state;
    cf_spec s;
    parse_ok("{" NAME ", \"model\": {\"architecture\": {\"type\": \"mlp\", \"layers\": [784, 256, 10],"
             " \"activation\": \"gelu\"}}, " DATA ", " TRAIN "}", "model.json", &s);
    assert_string_equal(s.job.architecture_type, "mlp");
    assert_int_equal(s.job.n_mlp_layers, 3);
    assert_int_equal(s.job.mlp_layers[0], 784);
    assert_int_equal(s.job.mlp_layers[2], 10);
    assert_string_equal(s.job.activation, "gelu");
    assert_true(s.job.parameters == 784.0 * 256 + 256 + 256.0 * 10 + 10);
    cf_spec_free(&s);

    /* An explicit count wins over the derived one. */
    parse_ok("{" NAME ", \"model\": {\"parameters\": 5, \"architecture\": {\"type\": \"mlp\", \"layers\": [2, 2]}}, "
             DATA ", " TRAIN "}", "model.json", &s);
    assert_true(s.job.parameters == 5.0);
    cf_spec_free(&s);
}

static void test_relative_paths(void **state)
{
    (void)state;
    cf_spec s;
    const char *json = "{" NAME ", " MODEL ", \"data\": {\"samples\": 1000, \"source\": {\"npy\": {\"x\": \"d/x.npy\","
                       " \"y\": \"./y.npy\"}}}, " TRAIN ", \"profile\": {\"gpus\": {\"T4\": \"t4.csv\"}}}";
    parse_ok(json, "conf/sub/model.json", &s);
    assert_string_equal(s.job.npy_x, "conf/sub/d/x.npy");
    assert_string_equal(s.job.npy_y, "conf/sub/y.npy");
    assert_string_equal(s.gpus[0].measurements_path, "conf/sub/t4.csv");
    cf_spec_free(&s);

    parse_ok(json, "model.json", &s);   /* no directory part: as given */
    assert_string_equal(s.job.npy_x, "d/x.npy");
    cf_spec_free(&s);
    parse_ok(json, NULL, &s);
    assert_string_equal(s.gpus[0].measurements_path, "t4.csv");
    cf_spec_free(&s);

    /* Through a real file: the directory of the file. */
    char dir[] = "/tmp/cf_spec_test_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[256], expected[300];
    snprintf(file, sizeof file, "%s/job.json", dir);
    assert_int_equal(cf_write_file_atomic(file, json, strlen(json)), CF_OK);
    assert_int_equal(cf_spec_load_file(file, &s), CF_OK);
    snprintf(expected, sizeof expected, "%s/d/x.npy", dir);
    assert_string_equal(s.job.npy_x, expected);
    assert_string_equal(s.job.source, file);
    cf_spec_free(&s);
    remove(file);
    rmdir(dir);
}

/* Every file the spec names, with its key path as messages write it and
 * its resolved path: what no output option may replace. */
static void test_input_files(void **state)
{
    (void)state;
    cf_spec s;
    cf_spec_input_file in[CF_SPEC_MAX_INPUT_FILES];
    parse_ok("{" NAME ", " MODEL ", \"data\": {\"samples\": 1000, \"source\": {\"npy\": {\"x\": \"d/x.npy\","
             " \"y\": \"/abs/y.npy\"}}}, " TRAIN ", \"profile\": {\"gpus\": {\"T4\": \"t4.csv\", \"A100.40GB\": "
             "{\"max_local_batch\": 8}, \"Tesla V100-SXM2-16GB\": \"./v.csv\"}}}",
             "conf/model.json", &s);
    assert_int_equal(cf_spec_input_files(&s, in, CF_SPEC_MAX_INPUT_FILES), 4);
    const char *want[][2] = {{"data.source.npy.x", "conf/d/x.npy"}, {"data.source.npy.y", "/abs/y.npy"},
                             {"profile.gpus.T4", "conf/t4.csv"},
                             {"profile.gpus.Tesla V100-SXM2-16GB", "conf/v.csv"}};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(in[i].key, want[i][0]);
        assert_string_equal(in[i].path, want[i][1]);
    }
    assert_int_equal(cf_spec_input_files(&s, in, 1), 1); /* as many as fit */
    cf_spec_free(&s);

    parse_ok("{" NAME ", " MODEL ", \"data\": {\"samples\": 1000, \"source\": {\"tokens\": \"train.bin\"}}, " TRAIN "}",
             "model.json", &s);
    assert_int_equal(cf_spec_input_files(&s, in, CF_SPEC_MAX_INPUT_FILES), 1);
    assert_string_equal(in[0].key, "data.source.tokens");
    assert_string_equal(in[0].path, "train.bin");
    cf_spec_free(&s);

    parse_ok(MIN_SPEC, "model.json", &s); /* synthetic data, no profile: none */
    assert_int_equal(cf_spec_input_files(&s, in, CF_SPEC_MAX_INPUT_FILES), 0);
    cf_spec_free(&s);
}

static void test_noise_trace(void **state)
{
    (void)state;
    cf_spec s;
    parse_ok(WITH("\"profile\": {\"noise_scale\": {\"trace\": [[0, 900], [0.25, 2500.5], [1, 14000]]}}"),
             "model.json", &s);
    assert_int_equal(s.has_noise_scale, 1);
    assert_int_equal(s.n_noise_trace, 3);
    assert_true(s.noise_trace[0].progress_fraction == 0.0 && s.noise_trace[0].b_noise == 900.0);
    assert_true(s.noise_trace[1].progress_fraction == 0.25 && s.noise_trace[1].b_noise == 2500.5);
    assert_true(s.noise_trace[2].progress_fraction == 1.0 && s.noise_trace[2].b_noise == 14000.0);
    assert_true(s.noise_scale == 900.0);
    cf_spec_free(&s);
}

static void test_hash_stability(void **state)
{
    (void)state;
    cf_spec a, b, c;
    parse_ok(MIN_SPEC, "a.json", &a);
    parse_ok("{\n\t\"name\" :\"t\",\n  \"model\":{ \"parameters\" : 1000 },\"data\":{\"samples\":1000},\r\n"
             "\"training\":{\"epochs\":2,\"batch\":32,\"lr\":0.1}\n}\n", "b.json", &b);
    parse_ok(TRAINING("\"epochs\": 2, \"batch\": 32, \"lr\": 0.2"), "a.json", &c);
    assert_string_equal(a.hash, b.hash);
    assert_string_equal(a.canonical_json, b.canonical_json);
    assert_non_null(strstr(a.canonical_json, "\"training\":{\"epochs\":2,\"batch\":32,\"lr\":0.1}"));
    assert_string_not_equal(a.hash, c.hash);
    for (int i = 0; i < 64; i++)
        assert_non_null(strchr("0123456789abcdef", a.hash[i]));
    cf_spec_free(&a);
    cf_spec_free(&b);
    cf_spec_free(&c);
}

/* ---- bad specs ---------------------------------------------------------------------- */

typedef struct {
    const char *json;
    cf_status status;
    const char *message;   /* expected substring of the message */
    const char *hint;      /* expected substring of the hint, or NULL */
} bad_case;

#define GPU(body) WITH("\"profile\": {\"gpus\": {\"T4\": " body "}}")
#define PROFILE(body) WITH("\"profile\": {" body "}")
#define SEARCH(body) WITH("\"search\": {" body "}")
#define TRACE(points) PROFILE("\"noise_scale\": {\"trace\": [" points "]}")

static const bad_case bad_cases[] = {
    /* top level and name */
    {"[1, 2]", CF_ERR_INVALID, "model.json: expected a JSON object at the top level, got an array", NULL},
    {"{" MODEL ", " DATA ", " TRAIN "}", CF_ERR_INVALID, "model.json: name: required key is missing", "add \"name\""},
    {"{\"name\": \"my model\", " MODEL ", " DATA ", " TRAIN "}", CF_ERR_INVALID,
     "model.json: name: expected a name of 1 to 64 letters, digits, '.', '_' or '-', got \"my model\"", "\"my-model\""},
    {"{\"name\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", " MODEL ", " DATA ", " TRAIN "}",
     CF_ERR_INVALID, "model.json: name: expected a name of 1 to 64", NULL},
    {"{\"name\": 7, " MODEL ", " DATA ", " TRAIN "}", CF_ERR_INVALID,
     "model.json: name: expected a name of 1 to 64 letters, digits, '.', '_' or '-', got a number", NULL},
    {WITH("\"serach\": {}"), CF_ERR_INVALID, "model.json: serach: unknown key", "did you mean 'search'?"},
    {WITH("\"$schema\": 5"), CF_ERR_INVALID, "model.json: $schema: expected a string, got a number", NULL},
    {WITH("\"zzz\": 1"), CF_ERR_INVALID, "model.json: zzz: unknown key", "allowed keys here: $schema, description, name"},
    {"{" NAME ", \"model\": null, " DATA ", " TRAIN "}", CF_ERR_INVALID, "model.json: model: expected an object, got null",
     NULL},
    {"{" NAME ", " DATA ", " TRAIN "}", CF_ERR_INVALID, "model.json: model: required key is missing", NULL},
    /* model */
    {"{" NAME ", \"model\": {\"parameters\": 0}, " DATA ", " TRAIN "}", CF_ERR_INVALID,
     "model.json: model.parameters: expected a number from 1 to 1e15, got 0", NULL},
    {"{" NAME ", \"model\": {\"gradient_bytes\": 4}, " DATA ", " TRAIN "}", CF_ERR_INVALID,
     "model.json: model.parameters: required key is missing", "\"mlp\""},
    {"{" NAME ", \"model\": {\"parameters\": 10, \"gradient_bytes\": 3}, " DATA ", " TRAIN "}", CF_ERR_INVALID,
     "model.json: model.gradient_bytes: expected one of 1, 2, 4, 8, got 3", NULL},
    {"{" NAME ", \"model\": {\"parameters\": 10, \"precision\": \"fp8\"}, " DATA ", " TRAIN "}", CF_ERR_INVALID,
     "model.json: model.precision: expected one of \"fp32\", \"tf32\", \"fp16\", \"bf16\", got \"fp8\"", NULL},
    /* the probe's names, not PyTorch's attribute or a layout's letters */
    {"{" NAME ", \"model\": {\"parameters\": 10, \"memory_format\": \"channels-last\"}, " DATA ", " TRAIN "}",
     CF_ERR_INVALID,
     "model.json: model.memory_format: expected one of \"contiguous\", \"channels_last\", \"channels_last_3d\", got "
     "\"channels-last\"",
     "did you mean \"channels_last\"?"},
    {"{" NAME ", \"model\": {\"parameters\": 10, \"memory_format\": \"NHWC\"}, " DATA ", " TRAIN "}", CF_ERR_INVALID,
     "model.json: model.memory_format: expected one of \"contiguous\", \"channels_last\", \"channels_last_3d\", got "
     "\"NHWC\"",
     NULL},
    {"{" NAME ", \"model\": {\"parameters\": 10, \"memory_format\": true}, " DATA ", " TRAIN "}", CF_ERR_INVALID,
     "model.json: model.memory_format: expected one of \"contiguous\", \"channels_last\", \"channels_last_3d\", got "
     "true",
     NULL},
    {"{" NAME ", \"model\": {\"parameters\": 10, \"flops_per_sample\": -1e9}, " DATA ", " TRAIN "}", CF_ERR_INVALID,
     "model.json: model.flops_per_sample: expected a positive number up to 1e21, got -1000000000", NULL},
    {"{" NAME ", \"model\": {\"architecture\": {\"type\": \"mlp\", \"layers\": [784]}}, " DATA ", " TRAIN "}",
     CF_ERR_INVALID,
     "model.json: model.architecture.layers: expected an array of 2 to 16 positive integers (layer widths), got 1 element",
     NULL},
    {"{" NAME ", \"model\": {\"architecture\": {\"type\": \"mlp\", \"layers\": [784, 0, 10]}}, " DATA ", " TRAIN "}",
     CF_ERR_INVALID, "model.json: model.architecture.layers[1]: expected a positive integer up to 1048576, got 0", NULL},
    {"{" NAME ", \"model\": {\"parameters\": 9, \"architecture\": {\"type\": \"rnn\"}}, " DATA ", " TRAIN "}",
     CF_ERR_INVALID, "model.json: model.architecture.type: expected one of \"mlp\", \"cnn\", \"decoder\", got \"rnn\"",
     NULL},
    {"{" NAME ", \"model\": {\"parameters\": 9, \"architecture\": {\"type\": \"cnn\", \"layers\": [3]}}, " DATA ", "
     TRAIN "}", CF_ERR_INVALID, "model.json: model.architecture.layers: unknown key", "channels"},
    {"{" NAME ", \"model\": {\"parameters\": 9, \"architecture\": {\"type\": \"decoder\", \"heads\": 1.5}}, " DATA
     ", " TRAIN "}", CF_ERR_INVALID, "model.json: model.architecture.heads: expected a positive integer up to 1048576, got 1.5",
     NULL},
    {"{" NAME ", \"model\": {\"parameters\": 9, \"architecture\": {\"type\": \"mlp\", \"activation\": \"relu\"}}, "
     DATA ", " TRAIN "}", CF_ERR_INVALID, "model.json: model.architecture.layers: required key is missing", NULL},
    /* data */
    {"{" NAME ", " MODEL ", \"data\": {\"samples\": 0}, " TRAIN "}", CF_ERR_INVALID,
     "model.json: data.samples: expected a positive integer, got 0", NULL},
    {"{" NAME ", " MODEL ", \"data\": {\"samples\": 10, \"source\": \"synth\"}, " TRAIN "}", CF_ERR_INVALID,
     "model.json: data.source: expected \"synthetic\", {\"npy\"", "did you mean \"synthetic\"?"},
    {"{" NAME ", " MODEL ", \"data\": {\"samples\": 1000, \"source\": {\"npy\": {\"x\": \"a.npy\"}}}, " TRAIN "}",
     CF_ERR_INVALID, "model.json: data.source.npy.y: required key is missing", NULL},
    {"{" NAME ", " MODEL ", \"data\": {\"samples\": 1000, \"source\": {\"npy\": {\"x\": \"a\", \"y\": \"b\"},"
     " \"tokens\": \"t\"}}, " TRAIN "}", CF_ERR_INVALID,
     "model.json: data.source: expected exactly one of \"npy\" or \"tokens\", got both", NULL},
    /* training */
    {TRAINING("\"epochs\": 2, \"batch\": -1, \"lr\": 0.1"), CF_ERR_INVALID,
     "model.json: training.batch: expected a positive integer, got -1", NULL},
    {TRAINING("\"epochs\": 2, \"batch\": 1.5, \"lr\": 0.1"), CF_ERR_INVALID,
     "model.json: training.batch: expected a positive integer, got 1.5", NULL},
    {TRAINING("\"epochs\": 2, \"batch\": \"3\", \"lr\": 0.1"), CF_ERR_INVALID,
     "model.json: training.batch: expected a positive integer, got a string", "without quotes: 3"},
    {TRAINING("\"epochs\": 2, \"batch\": 3e10, \"lr\": 0.1"), CF_ERR_INVALID,
     "model.json: training.batch: expected a positive integer, got 30000000000", "2147483647"},
    {TRAINING("\"epochs\": 2, \"lr\": 0.1"), CF_ERR_INVALID, "model.json: training.batch: required key is missing",
     "add \"batch\""},
    {TRAINING("\"epoch\": 2, \"batch\": 32, \"lr\": 0.1"), CF_ERR_INVALID, "model.json: training.epoch: unknown key",
     "did you mean 'epochs'?"},
    {TRAINING("\"epochs\": 2, \"samples\": 100, \"batch\": 32, \"lr\": 0.1"), CF_ERR_INVALID,
     "model.json: training: expected exactly one of \"epochs\" or \"samples\", got both", "not both"},
    {TRAINING("\"batch\": 32, \"lr\": 0.1"), CF_ERR_INVALID,
     "model.json: training: expected exactly one of \"epochs\" or \"samples\", got neither", NULL},
    {TRAINING("\"epochs\": 2, \"batch\": 32, \"lr\": true"), CF_ERR_INVALID,
     "model.json: training.lr: expected a positive number up to 1000, got true", NULL},
    {TRAINING("\"epochs\": 2, \"batch\": 32, \"lr\": 0.1, \"optimizer\": \"Adam\""), CF_ERR_INVALID,
     "model.json: training.optimizer: expected one of \"sgd\", \"momentum\", \"adam\", \"adamw\", \"lamb\", got \"Adam\"",
     "did you mean \"adam\"?"},
    {TRAINING("\"epochs\": 2, \"batch\": 32, \"lr\": 0.1, \"lr_rule\": \"linaer\""), CF_ERR_INVALID,
     "model.json: training.lr_rule: expected one of", "did you mean \"linear\"?"},
    {TRAINING("\"epochs\": 2, \"batch\": 32, \"lr\": 0.1, \"current\": {\"gpu\": \"V100\", \"gpus_per_node\": 8}"),
     CF_ERR_INVALID, "model.json: training.current.nodes: required key is missing", NULL},
    {TRAINING("\"epochs\": 2, \"batch\": 32, \"batch\": 64, \"lr\": 0.1"), CF_ERR_INVALID,
     "model.json: training.batch: duplicate key", "only once"},
    /* profile */
    {PROFILE("\"noise_scale\": -5"), CF_ERR_INVALID, "model.json: profile.noise_scale: expected a positive number up to 1e15, got -5",
     NULL},
    {PROFILE("\"noise_scale\": \"high\""), CF_ERR_INVALID,
     "model.json: profile.noise_scale: expected a positive number or {\"trace\": [[progress, b_noise], ...]}, got a string",
     NULL},
    {TRACE("[0, 900], [0.5, 1000], [0.25, 2000]"), CF_ERR_INVALID,
     "model.json: profile.noise_scale.trace[2][0]: expected a progress greater than 0.5 (the point before), got 0.25",
     "increasing"},
    {TRACE("[0, 0]"), CF_ERR_INVALID, "model.json: profile.noise_scale.trace[0][1]: expected a positive number up to 1e15, got 0",
     NULL},
    {TRACE("[1.5, 10]"), CF_ERR_INVALID,
     "model.json: profile.noise_scale.trace[0][0]: expected a number from 0 to 1, got 1.5", NULL},
    {TRACE("[0.5]"), CF_ERR_INVALID,
     "model.json: profile.noise_scale.trace[0]: expected a pair [progress, b_noise], got 1 element", NULL},
    {TRACE(""), CF_ERR_INVALID,
     "model.json: profile.noise_scale.trace: expected an array of 1 to 256 [progress, b_noise] pairs, got an empty array",
     NULL},
    {GPU("{\"compute_s\": {\"alpha\": -1, \"beta\": 0.1}}"), CF_ERR_INVALID,
     "model.json: profile.gpus.T4.compute_s.alpha: expected a number from 0 to 1e6, got -1", NULL},
    {GPU("{\"compute_s\": {\"alpha\": 0.1}}"), CF_ERR_INVALID,
     "model.json: profile.gpus.T4.compute_s.beta: required key is missing", NULL},
    {GPU("{}"), CF_ERR_INVALID, "model.json: profile.gpus.T4: expected \"compute_s\", \"max_local_batch\" or \"sync_s\"",
     "compute_s"},
    {GPU("{\"sync_s\": {\"overlap_gamma\": 0.5}}"), CF_ERR_INVALID,
     "model.json: profile.gpus.T4.sync_s.overlap_gamma: expected a number from 1 to 10, got 0.5", NULL},
    {GPU("{\"max_local_bach\": 64}"), CF_ERR_INVALID, "model.json: profile.gpus.T4.max_local_bach: unknown key",
     "did you mean 'max_local_batch'?"},
    {WITH("\"profile\": {\"gpus\": {\"A100.40GB\": 5}}"), CF_ERR_INVALID,
     "model.json: profile.gpus.A100.40GB: expected a measurements CSV path or an object with \"compute_s\", "
     "\"max_local_batch\" or \"sync_s\", got a number", NULL},
    {WITH("\"profile\": {\"gpus\": {\"NVIDIA-A100-SXM4-80GB-with-a-long-name-that-no-tool-prints-for-it\": "
          "\"x.csv\"}}"),
     CF_ERR_INVALID, "model.json: profile.gpus: expected GPU model names of 1 to 63 characters", NULL},
    {PROFILE("\"command\": \"python3 train.py\""), CF_ERR_INVALID,
     "model.json: profile.command: expected an argv list of 1 to 63 non-empty strings, got a string",
     "give an argv list, e.g. [\"python3\", \"train.py\"]: cloudfit never runs a shell"},
    {PROFILE("\"command\": [\"python3\", \"\"]"), CF_ERR_INVALID,
     "model.json: profile.command[1]: expected a non-empty string, got \"\"", NULL},
    {PROFILE("\"backend\": \"exec\""), CF_ERR_INVALID, "model.json: profile.command: required key is missing", "argv"},
    {PROFILE("\"backend\": \"gpu\""), CF_ERR_INVALID,
     "model.json: profile.backend: expected one of \"cpu\", \"cuda\", \"exec\", got \"gpu\"", NULL},
    {PROFILE("\"local_batches\": [16, 64, 32]"), CF_ERR_INVALID,
     "model.json: profile.local_batches[2]: expected an integer greater than 64 (the entry before), got 32", NULL},
    {PROFILE("\"steps\": 2"), CF_ERR_INVALID, "model.json: profile.steps: expected an integer from 3 to 100000, got 2",
     NULL},
    /* search */
    /* a number written with the unit the key's name already says: the number alone */
    {SEARCH("\"deadline_hours\": \"24h\""), CF_ERR_INVALID,
     "model.json: search.deadline_hours: expected a positive number up to 1e6, got a string",
     "write the number alone, without quotes or unit (deadline_hours is in hours): 24"},
    {SEARCH("\"deadline_hours\": \"2.5 hours\""), CF_ERR_INVALID, "search.deadline_hours", "in hours): 2.5"},
    {SEARCH("\"budget_usd\": \"$20\""), CF_ERR_INVALID, "search.budget_usd", "(budget_usd is in US dollars): 20"},
    {SEARCH("\"startup_minutes\": \"5 min\""), CF_ERR_INVALID, "search.startup_minutes", "in minutes): 5"},
    {SEARCH("\"deadline_hours\": \"2d\""), CF_ERR_INVALID, "search.deadline_hours",
     "write a number of hours without quotes or unit"},
    {SEARCH("\"spot\": \"sometimes\""), CF_ERR_INVALID,
     "model.json: search.spot: expected one of \"never\", \"allow\", \"only\", got \"sometimes\"", NULL},
    {SEARCH("\"clouds\": [\"aws\", \"aws\"]"), CF_ERR_INVALID,
     "model.json: search.clouds[1]: expected each entry once, got \"aws\"", "remove"},
    {SEARCH("\"clouds\": [\"oracle\"]"), CF_ERR_INVALID,
     "model.json: search.clouds[0]: expected one of \"aws\", \"gcp\", \"azure\", \"lambda\", got \"oracle\"", NULL},
    {SEARCH("\"clouds\": \"aws\""), CF_ERR_INVALID,
     "model.json: search.clouds: expected an array of distinct cloud names, got a string", NULL},
    {SEARCH("\"regions\": [\"\"]"), CF_ERR_INVALID, "model.json: search.regions[0]: expected a non-empty string, got \"\"",
     NULL},
    {SEARCH("\"max_gpus\": 5000"), CF_ERR_INVALID, "model.json: search.max_gpus: expected an integer from 1 to 4096, got 5000",
     NULL},
    {SEARCH("\"max_global_batch\": 16"), CF_ERR_INVALID,
     "model.json: search.max_global_batch: expected an integer >= training.batch (32), got 16", NULL},
    {SEARCH("\"deadline_hours\": 0"), CF_ERR_INVALID, "model.json: search.deadline_hours: expected a positive number up to 1e6, got 0",
     NULL},
    {SEARCH("\"startup_minutes\": -1"), CF_ERR_INVALID, "model.json: search.startup_minutes: expected a number from 0 to 100000, got -1",
     NULL},
    {SEARCH("\"objective\": \"fast\""), CF_ERR_INVALID, "model.json: search.objective: expected one of \"cost\", \"time\"",
     NULL},
};

static void check_bad_case(const bad_case *bc, size_t index)
{
    cf_spec s;
    memset(&s, 0x5a, sizeof s);   /* the parser must not rely on a zeroed struct */
    cf_status st = parse_text(bc->json, "model.json", &s);
    if (st != bc->status || !strstr(cf_error_message(), bc->message) ||
        (bc->hint && !strstr(cf_error_hint_text(), bc->hint)))
        fail_msg("bad case %zu: got status %s, message '%s', hint '%s'; expected %s, '%s', hint '%s'", index,
                 cf_status_name(st), cf_error_message(), cf_error_hint_text(), cf_status_name(bc->status),
                 bc->message, bc->hint ? bc->hint : "(any)");
    assert_int_equal(s.probe.n_command, 0);   /* nothing left to free */
    assert_null(s.canonical_json);
    cf_spec_free(&s);
}

static void test_bad_specs(void **state)
{
    (void)state;
    size_t n = sizeof bad_cases / sizeof *bad_cases;
    assert_true(n >= 25);
    for (size_t i = 0; i < n; i++)
        check_bad_case(&bad_cases[i], i);
}

static void test_error_file_names(void **state)
{
    (void)state;
    cf_spec s;
    assert_int_equal(parse_text(TRAINING("\"epochs\": 2, \"batch\": 0, \"lr\": 0.1"), NULL, &s), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "<spec>: training.batch: expected a positive integer, got 0");
    assert_int_equal(parse_text(TRAINING("\"epochs\": 2, \"batch\": 0, \"lr\": 0.1"), "jobs/a.json", &s),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "jobs/a.json: training.batch: expected a positive integer, got 0");
}

static void test_command_freed_on_later_error(void **state)
{
    (void)state;
    cf_spec s;
    cf_status st = parse_text(WITH("\"profile\": {\"command\": [\"a\", \"b\"], \"steps\": 1}"), "m.json", &s);
    assert_int_equal(st, CF_ERR_INVALID);
    assert_int_equal(s.probe.n_command, 0);
    assert_null(s.probe.command[0]);
}

/* Lists longer than the struct holds are errors, not truncations. */
static void test_list_limits(void **state)
{
    (void)state;
    char json[4096];
    size_t len = (size_t)snprintf(json, sizeof json, "{" NAME ", " MODEL ", " DATA ", " TRAIN ", \"profile\": {\"gpus\": {");
    for (int i = 0; i < 33; i++)
        len += (size_t)snprintf(json + len, sizeof json - len, "%s\"G%d\": \"g%d.csv\"", i ? ", " : "", i, i);
    snprintf(json + len, sizeof json - len, "}}}");
    cf_spec s;
    assert_int_equal(parse_text(json, "m.json", &s), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "m.json: profile.gpus: expected at most 32 GPU types, got 33");

    len = (size_t)snprintf(json, sizeof json, "{" NAME ", " MODEL ", " DATA ", " TRAIN ", \"search\": {\"regions\": [");
    for (int i = 0; i < 17; i++)
        len += (size_t)snprintf(json + len, sizeof json - len, "%s\"r%d\"", i ? ", " : "", i);
    snprintf(json + len, sizeof json - len, "]}}");
    assert_int_equal(parse_text(json, "m.json", &s), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(),
                        "m.json: search.regions: expected an array of 1 to 16 distinct region names, got 17 elements");
}

/* ---- JSON syntax ----------------------------------------------------------------------- */

typedef struct {
    const char *json;
    const char *message;   /* the whole expected message */
    const char *hint;      /* expected substring of the hint, or NULL */
} syntax_case;

static const syntax_case syntax_cases[] = {
    {"{\n  \"name\": \"t\",\n  \"model\": {} \"data\": {}\n}\n",
     "model.json:3:15: invalid JSON: expected ',' or '}', got '\"'", "',' is probably missing at line 3, column 14"},
    {"{\n  \"name\": \"t\",\n}", "model.json:3:1: invalid JSON: expected a key in double quotes, got '}'",
     "trailing ','"},
    {"[1, 2,]", "model.json:1:7: invalid JSON: expected a value, got ']'", "trailing ','"},
    {"{\"name\": \"t", "model.json:1:10: invalid JSON: unterminated string", NULL},
    {"{\"a\": [1, 2", "model.json:1:12: invalid JSON: expected ',' or ']', got end of input", "line 1, column 7"},
    {"{name: 1}", "model.json:1:2: invalid JSON: expected a key in double quotes or '}', got 'n'", "double quotes"},
    {"{\"a\" 1}", "model.json:1:6: invalid JSON: expected ':' after the key, got '1'", NULL},
    {"{\"a\": tru}", "model.json:1:7: invalid JSON: invalid value 'tru'", "true, false and null"},
    {"{\"a\": 1.2.3}", "model.json:1:7: invalid JSON: invalid number '1.2.3'", NULL},
    {"{\"a\": \"x\\q\"}", "model.json:1:9: invalid JSON: invalid escape sequence in a string", NULL},
    {"{\"a\": \"\\ud800\"}", "model.json:1:8: invalid JSON: lone surrogate \\ud800 in a string", "pair of escapes"},
    {"{\"a\": 1} x", "model.json:1:10: invalid JSON: expected the end of the input, got 'x'", "one JSON object: remove what follows"},
    {"", "model.json:1:1: invalid JSON: expected a value, got end of input", "empty"},
    {"{\n  // comment\n}", "model.json:2:3: invalid JSON: expected a key in double quotes or '}', got '/'", "comments"},
    {"{\"a\": \"é\", \"b\": 1 2}", "model.json:1:19: invalid JSON: expected ',' or '}', got '2'", NULL},
    {"[1}", "model.json:1:3: invalid JSON: expected ',' or ']', got '}'", NULL},
    {"[\"a\", \"b\"}", "model.json:1:10: invalid JSON: expected ',' or ']', got '}'", NULL},
    {"\xEF\xBB\xBF{\"a\" 1}", "model.json:1:6: invalid JSON: expected ':' after the key, got '1'", NULL},
    {"{\"a\": 1\n \"b\": 2}", "model.json:2:2: invalid JSON: expected ',' or '}', got '\"'",
     "missing at line 1, column 8"},
};

static void test_invalid_json(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof syntax_cases / sizeof *syntax_cases; i++) {
        const syntax_case *sc = &syntax_cases[i];
        cf_spec s;
        cf_status st = parse_text(sc->json, "model.json", &s);
        if (st != CF_ERR_INVALID || strcmp(cf_error_message(), sc->message) != 0 ||
            (sc->hint ? !strstr(cf_error_hint_text(), sc->hint) : strstr(cf_error_hint_text(), "trailing") != NULL))
            fail_msg("syntax case %zu: got %s '%s' (hint '%s'); expected '%s' (hint '%s')", i, cf_status_name(st),
                     cf_error_message(), cf_error_hint_text(), sc->message, sc->hint ? sc->hint : "(any)");
    }
}

static void test_json_length_and_nul(void **state)
{
    (void)state;
    cf_spec s;
    /* Only `len` bytes count: the text need not be NUL-terminated there. */
    char text[sizeof MIN_SPEC + 8];
    memcpy(text, MIN_SPEC, sizeof MIN_SPEC - 1);
    memcpy(text + sizeof MIN_SPEC - 1, "garbage", 8);
    assert_int_equal(cf_spec_parse(text, sizeof MIN_SPEC - 1, "m.json", &s), CF_OK);
    cf_spec_free(&s);
    const char with_nul[] = "{\"name\": \"t\"\0}";
    assert_int_equal(cf_spec_parse(with_nul, sizeof with_nul - 1, "m.json", &s), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "m.json:1:13: invalid JSON: NUL byte in the text");
    assert_int_equal(cf_spec_parse(NULL, 0, "m.json", &s), CF_ERR_INVALID);
}

static void test_deep_nesting(void **state)
{
    (void)state;
    size_t depth = 1200;
    char *text = malloc(depth * 2 + 1);
    assert_non_null(text);
    memset(text, '[', depth);
    memset(text + depth, ']', depth);
    text[depth * 2] = '\0';
    cf_spec s;
    assert_int_equal(cf_spec_parse(text, depth * 2, "deep.json", &s), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "deep.json:1:"));
    assert_non_null(strstr(cf_error_message(), "nested too deeply"));
    free(text);
}

static void test_missing_file(void **state)
{
    (void)state;
    cf_spec s;
    assert_int_equal(cf_spec_load_file("/nonexistent/cloudfit/model.json", &s), CF_ERR_IO);
    assert_string_equal(cf_error_message(), "cannot open '/nonexistent/cloudfit/model.json': No such file or directory");
    assert_int_equal(s.probe.n_command, 0);
}

/* ---- examples and schema ---------------------------------------------------------------- */

static int has_json_suffix(const char *name)
{
    size_t len = strlen(name);
    return len > 5 && strcmp(name + len - 5, ".json") == 0;
}

/* Every examples/NAME.json must load; there may be none. */
static void test_examples_parse(void **state)
{
    (void)state;
    DIR *dir = opendir(CF_SOURCE_DIR "/examples");
    if (!dir)
        return;
    int failures = 0;
    for (struct dirent *entry = readdir(dir); entry; entry = readdir(dir)) {
        if (!has_json_suffix(entry->d_name))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/examples/%s", CF_SOURCE_DIR, entry->d_name);
        cf_spec s;
        if (cf_spec_load_file(path, &s) != CF_OK) {
            print_error("%s (hint: %s)\n", cf_error_message(), cf_error_hint_text());
            failures++;
        }
        cf_spec_free(&s);
    }
    closedir(dir);
    assert_int_equal(failures, 0);
}

static cJSON *load_schema(void)
{
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(cf_read_file(CF_SOURCE_DIR "/data/schema/spec.schema.json", &text, &len), CF_OK);
    cJSON *schema = cJSON_ParseWithLength(text, len);
    free(text);
    assert_non_null(schema);
    return schema;
}

/* Follows a "/"-separated pointer of object keys from the schema root. */
static const cJSON *schema_at(const cJSON *schema, const char *pointer)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", pointer);
    const cJSON *node = schema;
    for (char *save = NULL, *key = strtok_r(copy, "/", &save); key; key = strtok_r(NULL, "/", &save))
        node = cJSON_IsArray(node) ? cJSON_GetArrayItem(node, atoi(key)) : cJSON_GetObjectItemCaseSensitive(node, key);
    if (!node)
        fail_msg("schema has no %s", pointer);
    return node;
}

/* The object schema at `pointer` allows exactly the validator's keys for `section`. */
static void check_schema_keys(const cJSON *schema, const char *section, const char *pointer)
{
    const cJSON *object = schema_at(schema, pointer);
    const cJSON *properties = cJSON_GetObjectItemCaseSensitive(object, "properties");
    const char *const *keys = cf_spec_allowed_keys(section);
    assert_non_null(properties);
    assert_non_null(keys);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(object, "additionalProperties")));
    int n = 0;
    for (; keys[n]; n++)
        if (!cJSON_GetObjectItemCaseSensitive(properties, keys[n]))
            fail_msg("schema %s lacks key %s of section '%s'", pointer, keys[n], section);
    if (cJSON_GetArraySize(properties) != n)
        fail_msg("schema %s has %d keys, validator section '%s' has %d", pointer, cJSON_GetArraySize(properties),
                 section, n);
}

/* The "enum" at `pointer` lists exactly the validator's strings for `field`, in order. */
static void check_schema_enum(const cJSON *schema, const char *field, const char *pointer)
{
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(schema_at(schema, pointer), "enum");
    const char *const *names = cf_spec_enum_values(field);
    assert_non_null(values);
    assert_non_null(names);
    int i = 0;
    for (const cJSON *v = values->child; v; v = v->next, i++) {
        if (!names[i] || !cJSON_IsString(v) || strcmp(v->valuestring, names[i]) != 0)
            fail_msg("schema enum %s differs from validator '%s' at %d", pointer, field, i);
    }
    assert_null(names[i]);
}

static void check_schema_required(const cJSON *schema, const char *pointer, const char *expected)
{
    const cJSON *required = cJSON_GetObjectItemCaseSensitive(schema_at(schema, pointer), "required");
    char joined[256] = "";
    for (const cJSON *r = required ? required->child : NULL; r; r = r->next)
        snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", joined[0] ? "," : "", r->valuestring);
    assert_string_equal(joined, expected);
}

static void test_schema_agrees(void **state)
{
    (void)state;
    cJSON *schema = load_schema();
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(schema, "$schema")->valuestring,
                        "https://json-schema.org/draft/2020-12/schema");
    static const char *const sections[][2] = {
        {"", ""},
        {"model", "$defs/model"},
        {"model.architecture:mlp", "$defs/mlp"},
        {"model.architecture:cnn", "$defs/cnn"},
        {"model.architecture:decoder", "$defs/decoder"},
        {"data", "$defs/data"},
        {"training", "$defs/training"},
        {"training.current", "$defs/training/properties/current"},
        {"profile", "$defs/profile"},
        {"profile.gpus.*", "$defs/gpuProfile"},
        {"profile.gpus.*.compute_s", "$defs/gpuProfile/properties/compute_s"},
        {"profile.gpus.*.sync_s", "$defs/gpuProfile/properties/sync_s"},
        {"search", "$defs/search"},
    };
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++)
        check_schema_keys(schema, sections[i][0], sections[i][1]);
    static const char *const enums[][2] = {
        {"model.precision", "$defs/model/properties/precision"},
        {"model.memory_format", "$defs/model/properties/memory_format"},
        {"model.architecture.activation", "$defs/mlp/properties/activation"},
        {"training.optimizer", "$defs/training/properties/optimizer"},
        {"training.lr_rule", "$defs/training/properties/lr_rule"},
        {"profile.backend", "$defs/profile/properties/backend"},
        {"search.objective", "$defs/search/properties/objective"},
        {"search.clouds", "$defs/search/properties/clouds/items"},
        {"search.spot", "$defs/search/properties/spot"},
    };
    for (size_t i = 0; i < sizeof enums / sizeof *enums; i++)
        check_schema_enum(schema, enums[i][0], enums[i][1]);
    check_schema_required(schema, "", "name,model,data,training");
    check_schema_required(schema, "$defs/data", "samples");
    check_schema_required(schema, "$defs/training", "batch,lr");
    check_schema_required(schema, "$defs/training/properties/current", "gpu,gpus_per_node,nodes");
    check_schema_required(schema, "$defs/mlp", "type,layers");
    check_schema_required(schema, "$defs/gpuProfile/properties/compute_s", "alpha,beta");
    cJSON_Delete(schema);
}


/* Follows one "$ref": "#/$defs/NAME" of a schema node. */
static const cJSON *schema_resolve(const cJSON *schema, const cJSON *node)
{
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(node, "$ref");
    if (!cJSON_IsString(ref))
        return node;
    assert_memory_equal(ref->valuestring, "#/", 2);
    return schema_at(schema, ref->valuestring + 2);
}

static double schema_number(const cJSON *node, const char *key, double missing)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(node, key);
    return cJSON_IsNumber(v) ? v->valuedouble : missing;
}

/* Issue 33: every range of the validator's table (cf_spec_limits) is the
 * schema's, so the schema accepts what cloudfit accepts; and the table
 * covers every number the schema has. */
static void test_schema_limits_agree(void **state)
{
    (void)state;
    static const char *const where[][2] = {
        {"model.parameters", "$defs/model/properties/parameters"},
        {"model.gradient_bytes", "$defs/model/properties/gradient_bytes"},
        {"model.flops_per_sample", "$defs/model/properties/flops_per_sample"},
        {"model.memory_per_sample_mib", "$defs/model/properties/memory_per_sample_mib"},
        {"model.architecture.layers[]", "$defs/mlp/properties/layers/items"},
        {"model.architecture.channels[]", "$defs/cnn/properties/channels/items"},
        {"model.architecture.image_size", "$defs/cnn/properties/image_size"},
        {"model.architecture.classes", "$defs/cnn/properties/classes"},
        {"model.architecture.d_model", "$defs/decoder/properties/d_model"},
        {"model.architecture.heads", "$defs/decoder/properties/heads"},
        {"model.architecture.vocab", "$defs/decoder/properties/vocab"},
        {"model.architecture.context", "$defs/decoder/properties/context"},
        {"data.samples", "$defs/data/properties/samples"},
        {"training.epochs", "$defs/training/properties/epochs"},
        {"training.samples", "$defs/training/properties/samples"},
        {"training.batch", "$defs/training/properties/batch"},
        {"training.lr", "$defs/training/properties/lr"},
        {"training.current.gpus_per_node", "$defs/training/properties/current/properties/gpus_per_node"},
        {"training.current.nodes", "$defs/training/properties/current/properties/nodes"},
        {"profile.noise_scale", "$defs/profile/properties/noise_scale/oneOf/0"},
        {"profile.noise_scale.trace[][0]", "$defs/profile/properties/noise_scale/oneOf/1/properties/trace/items/prefixItems/0"},
        {"profile.noise_scale.trace[][1]", "$defs/profile/properties/noise_scale/oneOf/1/properties/trace/items/prefixItems/1"},
        {"profile.gpus.*.compute_s.alpha", "$defs/gpuProfile/properties/compute_s/properties/alpha"},
        {"profile.gpus.*.compute_s.beta", "$defs/gpuProfile/properties/compute_s/properties/beta"},
        {"profile.gpus.*.max_local_batch", "$defs/gpuProfile/properties/max_local_batch"},
        {"profile.gpus.*.sync_s.intra_node_gbps", "$defs/gpuProfile/properties/sync_s/properties/intra_node_gbps"},
        {"profile.gpus.*.sync_s.inter_node_gbps", "$defs/gpuProfile/properties/sync_s/properties/inter_node_gbps"},
        {"profile.gpus.*.sync_s.latency_s", "$defs/gpuProfile/properties/sync_s/properties/latency_s"},
        {"profile.gpus.*.sync_s.overlap_gamma", "$defs/gpuProfile/properties/sync_s/properties/overlap_gamma"},
        {"profile.local_batches[]", "$defs/profile/properties/local_batches/items"},
        {"profile.steps", "$defs/profile/properties/steps"},
        {"search.deadline_hours", "$defs/search/properties/deadline_hours"},
        {"search.budget_usd", "$defs/search/properties/budget_usd"},
        {"search.max_gpus", "$defs/search/properties/max_gpus"},
        {"search.max_nodes", "$defs/search/properties/max_nodes"},
        {"search.max_accumulation", "$defs/search/properties/max_accumulation"},
        {"search.max_global_batch", "$defs/search/properties/max_global_batch"},
        {"search.startup_minutes", "$defs/search/properties/startup_minutes"},
        {"search.checkpoint_minutes", "$defs/search/properties/checkpoint_minutes"},
        {"search.storage_mb_per_s", "$defs/search/properties/storage_mb_per_s"},
        {"search.confidence", "$defs/search/properties/confidence"},
    };
    cf_spec_limit limits[64];
    size_t n = cf_spec_limits(limits, 64);
    assert_int_equal(n, sizeof where / sizeof *where);
    cJSON *schema = load_schema();
    for (size_t i = 0; i < n; i++) {
        if (strcmp(limits[i].key, where[i][0]) != 0)
            fail_msg("limit %zu is %s, the test expects %s", i, limits[i].key, where[i][0]);
        const cJSON *node = schema_resolve(schema, schema_at(schema, where[i][1]));
        const cJSON *type_item = cJSON_GetObjectItemCaseSensitive(node, "type");
        const char *type = cJSON_IsString(type_item) ? type_item->valuestring : "(none)";
        double lo = schema_number(node, limits[i].lo_exclusive ? "exclusiveMinimum" : "minimum", NAN);
        double hi = schema_number(node, "maximum", NAN);
        if (strcmp(type, limits[i].integer ? "integer" : "number") != 0 || lo != limits[i].lo || hi != limits[i].hi)
            fail_msg("%s: the schema says %s [%g, %g], the validator %s %s%g, %g]", limits[i].key, type, lo, hi,
                     limits[i].integer ? "integer" : "number", limits[i].lo_exclusive ? "(" : "[", limits[i].lo,
                     limits[i].hi);
    }
    cJSON_Delete(schema);
}

/* Issue 33 (1, 9): what two keys make together is checked when both are
 * read: epochs × data.samples within 2^53, the base batch within the
 * training samples; the largest accepted values load. */
static void test_derived_limits(void **state)
{
    (void)state;
    cf_spec s;
    const char *huge = "{" NAME ", " MODEL ", \"data\": {\"samples\": 9007199254740992}, "
                       "\"training\": {\"epochs\": 2, \"batch\": 32, \"lr\": 0.1}}";
    assert_int_equal(cf_spec_parse(huge, strlen(huge), "m.json", &s), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "m.json: training.epochs: 2 epochs of data.samples (9007199254740992) "
                                            "are 1.801e+16 training samples, more than 2^53 (9007199254740992)");
    const char *big_batch = "{" NAME ", " MODEL ", \"data\": {\"samples\": 1000}, "
                            "\"training\": {\"epochs\": 2, \"batch\": 2001, \"lr\": 0.1}}";
    assert_int_equal(cf_spec_parse(big_batch, strlen(big_batch), "m.json", &s), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "m.json: training.batch: expected at most the training samples (2000, "
                                            "epochs × data.samples), got 2001");
    const char *largest = "{" NAME ", \"model\": {\"parameters\": 1e15}, \"data\": {\"samples\": 9007199254740992}, "
                          "\"training\": {\"epochs\": 1, \"batch\": 2147483647, \"lr\": 1000, "
                          "\"current\": {\"gpu\": \"T4\", \"gpus_per_node\": 1024, \"nodes\": 1048576}}, "
                          "\"search\": {\"deadline_hours\": 1e6, \"budget_usd\": 1e12, \"max_global_batch\": 2147483647}}";
    parse_ok(largest, "m.json", &s);
    assert_int_equal(s.job.batch, 2147483647);
    assert_true(s.job.total_samples == 9007199254740992.0);
    cf_spec_free(&s);
}

/* The effective spec: overrides written into the search section, checked by
 * the same rules, rehashed; the file's hash kept as the source. */
static void test_effective_spec(void **state)
{
    (void)state;
    cf_spec file, same, eff, bad;
    parse_ok(WITH("\"search\": {\"deadline_hours\": 24}"), "model.json", &file);
    cf_spec_overrides ov;
    cf_spec_overrides_init(&ov);
    assert_int_equal(cf_spec_effective(&file, &ov, &same), CF_OK);
    assert_string_equal(same.hash, file.hash); /* no overrides: the same spec */
    assert_string_equal(same.source_hash, file.hash);
    const char *clouds[] = {"gcp"};
    ov.deadline_hours = 50;
    ov.spot = CF_SPOT_ALLOW;
    ov.clouds = clouds;
    ov.n_clouds = 1;
    assert_int_equal(cf_spec_effective(&file, &ov, &eff), CF_OK);
    assert_true(eff.search.deadline_hours == 50 && eff.search.spot == CF_SPOT_ALLOW && eff.search.n_clouds == 1);
    assert_string_not_equal(eff.hash, file.hash);
    assert_string_equal(eff.source_hash, file.hash);
    assert_non_null(strstr(eff.canonical_json, "\"deadline_hours\":50"));
    assert_null(strstr(eff.canonical_json, "\"deadline_hours\":24"));
    char key_file[65], key_eff[65]; /* a profile does not depend on the search */
    assert_int_equal(cf_spec_profile_key(&file, key_file), CF_OK);
    assert_int_equal(cf_spec_profile_key(&eff, key_eff), CF_OK);
    assert_string_equal(key_file, key_eff);
    /* From a file: the same specs, the file parsed once without overrides */
    char dir[] = "/tmp/cf_spec_eff_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/model.json", dir);
    const char *text = WITH("\"search\": {\"deadline_hours\": 24}");
    assert_int_equal(cf_write_file_atomic(path, text, strlen(text)), CF_OK);
    cf_spec loaded;
    assert_int_equal(cf_spec_load_effective(path, NULL, &loaded), CF_OK);
    assert_string_equal(loaded.hash, file.hash);
    assert_string_equal(loaded.source_hash, file.hash);
    cf_spec_free(&loaded);
    assert_int_equal(cf_spec_load_effective(path, &ov, &loaded), CF_OK);
    assert_string_equal(loaded.hash, eff.hash);
    assert_string_equal(loaded.source_hash, file.hash);
    cf_spec_free(&loaded);
    remove(path);
    rmdir(dir);
    const char *mars[] = {"mars"};
    ov.clouds = mars;
    /* the file was valid: what the overrides broke is a usage error naming the option, not the spec key */
    assert_int_equal(cf_spec_effective(&file, &ov, &bad), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "option '--cloud': "));
    assert_null(strstr(cf_error_message(), "search.clouds"));
    cf_spec_overrides_init(&ov);
    ov.deadline_hours = 1e9;
    assert_int_equal(cf_spec_effective(&file, &ov, &bad), CF_ERR_USAGE);
    assert_string_equal(cf_error_message(), "option '--deadline-hours': expected a positive number up to 1e6, got 1000000000");
    /* the option is the one whose key failed, whatever the message quotes: a
     * value that reads like another key still names --cloud */
    cf_spec_overrides_init(&ov);
    const char *lookalike[] = {"search.budget_usd: x"};
    ov.clouds = lookalike;
    ov.n_clouds = 1;
    assert_int_equal(cf_spec_effective(&file, &ov, &bad), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "option '--cloud': "));
    /* an element of a list override fails at its index, and names the option */
    cf_spec_overrides_init(&ov);
    const char *twice[] = {"us-east-1", "us-east-1"};
    ov.regions = twice;
    ov.n_regions = 2;
    assert_int_equal(cf_spec_effective(&file, &ov, &bad), CF_ERR_USAGE);
    assert_non_null(strstr(cf_error_message(), "option '--region': "));
    cf_spec_free(&file);
    cf_spec_free(&same);
    cf_spec_free(&eff);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimal_defaults),
        cmocka_unit_test(test_fp16_default_precision),
        cmocka_unit_test(test_full_spec),
        cmocka_unit_test(test_full_spec_decoder),
        cmocka_unit_test(test_mlp_parameters),
        cmocka_unit_test(test_relative_paths),
        cmocka_unit_test(test_input_files),
        cmocka_unit_test(test_noise_trace),
        cmocka_unit_test(test_hash_stability),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_error_file_names),
        cmocka_unit_test(test_command_freed_on_later_error),
        cmocka_unit_test(test_list_limits),
        cmocka_unit_test(test_invalid_json),
        cmocka_unit_test(test_json_length_and_nul),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_examples_parse),
        cmocka_unit_test(test_schema_agrees),
        cmocka_unit_test(test_effective_spec),
        cmocka_unit_test(test_schema_limits_agree),
        cmocka_unit_test(test_derived_limits),
    };
    return cmocka_run_group_tests_name("spec", tests, NULL, NULL);
}
