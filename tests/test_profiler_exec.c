/* The exec probe backend against small shell scripts that speak (or break)
 * the protocol of docs/exec-protocol.md: a good run, the environment it
 * gets, out-of-memory, and every failure — malformed line, crash, hang,
 * non-zero exit, missing 'done', a script's own error — each with the
 * stdout line number in the message and nothing returned. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cloudfit/common/escape.h"

#include "cloudfit/profiler.h"
#include "cloudfit/profiler/exec_protocol.h"
#include "cloudfit/spec.h"


/* cf_profile_sweep over a spec: its job, and its profile section as the settings. */
static cf_status run_profile(const cf_probe_backend *be, const cf_spec *spec, cf_profile_options *o, cf_profile *p)
{
    o->probe.settings = &spec->probe;
    return cf_profile_sweep(be, &spec->job, o, p);
}

static char tmpdir[256];

#define DEVICE "echo '{\"event\": \"device\", \"name\": \"Test GPU\", \"memory_gib\": 16}'\n"
/* One step line; $i is the step number, samples from the environment. */
#define STEP_LOOP                                                                                           \
    "n=$((CLOUDFIT_WARMUP_STEPS + CLOUDFIT_STEPS)); i=1\n"                                                 \
    "while [ $i -le $n ]; do\n"                                                                            \
    "  echo \"{\\\"event\\\": \\\"step\\\", \\\"step\\\": $i, \\\"time_s\\\": 0.0$i, "                     \
    "\\\"samples\\\": $((CLOUDFIT_LOCAL_BATCH * CLOUDFIT_MICRO_BATCHES)), "                                 \
    "\\\"micro_sqnorms\\\": [2.0, 3.0], \\\"mean_sqnorm\\\": 1.5}\"\n"                                     \
    "  i=$((i + 1))\n"                                                                                      \
    "done\n"
#define DONE "echo '{\"event\": \"done\"}'\n"

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cf-exec-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes the script and a spec whose profile.command runs it with sh. */
static void make_spec(const char *name, const char *script, cf_spec *spec)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.sh", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(script, f);
    fclose(f);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"name\": \"exec-test\", \"model\": {\"parameters\": 1000}, \"data\": {\"samples\": 100},"
             " \"training\": {\"epochs\": 1, \"batch\": 8, \"lr\": 0.1},"
             " \"profile\": {\"backend\": \"exec\", \"command\": [\"/bin/sh\", \"%s\"]}}",
             path);
    if (cf_spec_parse(text, strlen(text), "exec.json", spec) != CF_OK)
        fail_msg("spec: %s", cf_error_message());
}

static cf_status run_script(const char *name, const char *script, double timeout_s, cf_probe_result *res)
{
    cf_spec spec;
    make_spec(name, script, &spec);
    cf_probe_backend be = cf_probe_exec();
    cf_probe_options po = {.timeout_s = timeout_s, .settings = NULL};
    cf_probe *probe = NULL;
    assert_int_equal((po.settings = &spec.probe, be.open(&be, &spec.job, &po, &probe)), CF_OK);
    cf_probe_run run = {4, 2, 3, 1, 42, 0};
    memset(res, 0x5a, sizeof *res);
    cf_status st = be.run(probe, &run, res);
    be.close(probe);
    cf_spec_free(&spec);
    return st;
}

static void expect_error(cf_status got, cf_status want, const cf_probe_result *res, const char *part1,
                         const char *part2)
{
    assert_int_equal(got, want);
    const char *msg = cf_error_message();
    printf("  message: %s\n", msg);
    if (!strstr(msg, part1) || (part2 && !strstr(msg, part2)))
        fail_msg("expected '%s' and '%s' in: %s", part1, part2 ? part2 : "", msg);
    assert_null(res->steps);
    assert_int_equal(res->n_steps, 0);
}

static void test_good_run_and_environment(void **state)
{
    (void)state;
    cf_probe_result res;
    assert_int_equal(run_script("good", DEVICE STEP_LOOP DONE, 5, &res), CF_OK);
    assert_true(res.has_device);
    assert_string_equal(res.device.name, "Test GPU");
    assert_true(res.device.memory_gib == 16 && res.device.is_gpu && res.device.gpus == 1);
    assert_int_equal(res.n_steps, 4); /* 1 warm-up + 3 */
    assert_int_equal(res.oom, 0);
    for (int i = 0; i < 4; i++) {
        assert_true(fabs(res.steps[i].time_s - 0.01 * (i + 1)) < 1e-12);
        assert_int_equal(res.steps[i].samples, 8); /* CLOUDFIT_LOCAL_BATCH 4 × CLOUDFIT_MICRO_BATCHES 2 */
        assert_int_equal(res.steps[i].n_micro, 2);
        assert_true(res.steps[i].micro_sqnorms[1] == 3.0 && res.steps[i].mean_sqnorm == 1.5);
    }
    cf_probe_result_free(&res);
    /* The seed and the other variables arrive as set. */
    const char *env_script = DEVICE
        "[ \"$CLOUDFIT_SEED\" = 42 ] && [ \"$CLOUDFIT_STEPS\" = 3 ] && [ \"$CLOUDFIT_WARMUP_STEPS\" = 1 ] || exit 9\n"
        STEP_LOOP DONE;
    assert_int_equal(run_script("env", env_script, 5, &res), CF_OK);
    cf_probe_result_free(&res);
}

static void test_oom(void **state)
{
    (void)state;
    cf_probe_result res;
    assert_int_equal(run_script("oom", DEVICE "echo '{\"event\": \"oom\"}'\n", 5, &res), CF_OK);
    assert_int_equal(res.oom, 1);
    assert_int_equal(res.n_steps, 0);
    cf_probe_result_free(&res);
    /* steps may come before the 'oom' (a batch that ran out of memory
     * mid-run); a step after it contradicts it: a protocol error naming
     * the line, not a run taken as out of memory with its steps dropped */
    assert_int_equal(run_script("oom-then-steps", DEVICE "echo '{\"event\": \"oom\"}'\n" STEP_LOOP DONE, 5, &res),
                     CF_ERR_INVALID);
    const char *msg = cf_error_message();
    if (!strstr(msg, "stdout line 3: a 'step' event after the 'oom' event"))
        fail_msg("unexpected message: %s", msg);
    assert_int_equal(run_script("steps-then-oom", DEVICE "echo '{\"event\": \"step\", \"step\": 1, \"time_s\": 0.1, "
                                "\"samples\": 8}'\necho '{\"event\": \"oom\"}'\n", 5, &res),
                     CF_OK);
    assert_int_equal(res.oom, 1);
    assert_int_equal(res.n_steps, 0);
    cf_probe_result_free(&res);
    /* 'oom' ends the run: any event after it (a second 'oom', a 'device',
     * 'done', an 'error') is a protocol error like a step after it; they
     * were accepted without a word */
    static const char *const after[][2] = {
        {"{\"event\": \"oom\"}", "stdout line 3: an 'oom' event after the 'oom' event (a run that reports 'oom' "
                                   "ends there)"},
        {"{\"event\": \"device\", \"name\": \"Test GPU\", \"memory_gib\": 16}",
         "stdout line 3: a 'device' event after the 'oom' event"},
        {"{\"event\": \"done\"}", "stdout line 3: a 'done' event after the 'oom' event"},
        {"{\"event\": \"error\", \"message\": \"CUDA error\"}",
         "stdout line 3: an 'error' event after the 'oom' event (a run that reports 'oom' ends there): CUDA error"},
    };
    for (size_t i = 0; i < sizeof after / sizeof *after; i++) {
        char script[512];
        snprintf(script, sizeof script, "%secho '{\"event\": \"oom\"}'\necho '%s'\n", DEVICE, after[i][0]);
        expect_error(run_script("oom-then", script, 5, &res), CF_ERR_INVALID, &res, after[i][1], NULL);
        assert_int_equal(res.oom, 0);
    }
    /* the parser on its own (fuzz_exec_line, the replayed corpus) says the same */
    static const char oom_done[] = "{\"event\": \"device\", \"name\": \"cpu\", \"type\": \"cpu\"}\n"
                                   "{\"event\": \"oom\"}\n{\"event\": \"done\"}\n";
    cf_probe_run run = {8, 1, 1, 0, 1, 0};
    assert_int_equal(cf_probe_exec_parse_output(oom_done, strlen(oom_done), &run, &res), CF_ERR_INVALID);
    if (!strstr(cf_error_message(), "stdout line 3: a 'done' event after the 'oom' event"))
        fail_msg("unexpected message: %s", cf_error_message());
}

/* A script's text in a message (its 'error' event, its last stderr line)
 * has its control characters escaped, as its device name: the message is
 * stored with a failed search probe and was stored raw. */
static void test_script_text_escaped_in_messages(void **state)
{
    (void)state;
    cf_probe_result res;
    expect_error(run_script("ctl-error", DEVICE "echo '{\"event\": \"error\", \"message\": \"no GPU\\u001b[31m "
                                         "red\\rover\\tend\"}'\n", 5, &res),
                 CF_ERR_UNAVAILABLE, &res, "the script reported an error: no GPU\\e[31m red\\rover\\tend", NULL);
    assert_false(cf_has_controls(cf_error_message()));
    expect_error(run_script("ctl-exit", "printf 'boom\\033]0;title\\007 \\r over\\n' >&2\nexit 1\n", 5, &res),
                 CF_ERR_UNAVAILABLE, &res, "exited with status 1 before any stdout line: boom\\e]0;title\\x07 \\r over",
                 NULL);
    assert_false(cf_has_controls(cf_error_message()));
}

static void test_malformed_line(void **state)
{
    (void)state;
    cf_probe_result res;
    printf("malformed:\n");
    expect_error(run_script("bad", DEVICE "echo ''\necho 'loss = 0.3'\n" STEP_LOOP DONE, 5, &res), CF_ERR_INVALID,
                 &res, "stdout line 3", "expected one JSON object per line, got 'loss = 0.3'");
    expect_error(run_script("bad2", DEVICE "echo '{\"event\": \"step\", \"step\": 1, \"time_s\": -1, \"samples\": 8}'\n",
                            5, &res),
                 CF_ERR_INVALID, &res, "stdout line 2", "\"time_s\": expected a positive number");
    expect_error(run_script("bad3", "echo '{\"event\": \"step\", \"step\": 1, \"time_s\": 1, \"samples\": 8}'\n", 5,
                            &res),
                 CF_ERR_INVALID, &res, "stdout line 1", "before the 'device' event");
    expect_error(run_script("bad4", DEVICE "echo '{\"event\": \"warp\"}'\n", 5, &res), CF_ERR_INVALID, &res,
                 "stdout line 2", "unknown event 'warp'");
}

/* Issue 29: a line that is not JSON names the column and the token there;
 * Python's non-finite floats (json.dumps writes NaN, Infinity) get a hint. */
static void expect_parse_error(const char *text, const char *part1, const char *part2)
{
    cf_probe_run run = {8, 2, 1, 0, 1, 0};
    cf_probe_result res;
    assert_int_equal(cf_probe_exec_parse_output(text, strlen(text), &run, &res), CF_ERR_INVALID);
    printf("  %s\n", cf_error_message());
    assert_non_null(strstr(cf_error_message(), part1));
    assert_non_null(strstr(cf_error_message(), part2));
    assert_int_equal(res.n_steps, 0);
}

/* A line longer than 1 MiB is an error however it arrives: a complete one
 * (its newline read with it) was parsed as an event. */
static void test_line_longer_than_a_mib(void **state)
{
    (void)state;
    static const char head[] = "{\"event\": \"device\", \"name\": \"T4\", \"pad\": \"";
    size_t pad = (1u << 20) + 100, n = strlen(head) + pad + 3;
    char *text = malloc(n + 1);
    assert_non_null(text);
    memcpy(text, head, strlen(head));
    memset(text + strlen(head), 'a', pad);
    memcpy(text + strlen(head) + pad, "\"}\n", 4);
    expect_parse_error(text, "stdout line 1", "a line longer than 1 MiB");
    text[n - 1] = '\0'; /* the last line, without its newline */
    expect_parse_error(text, "stdout line 1", "a line longer than 1 MiB");
    free(text);
}

static void test_not_json_column_and_token(void **state)
{
    (void)state;
    const char *device = "{\"event\": \"device\", \"name\": \"GPU\"}\n";
    char text[512];
    /* an escape cJSON refuses inside a string is named by the shared reader
     * ("'\\' is not JSON" said nothing of the surrogate); a pair is text */
    expect_parse_error("{\"event\": \"device\", \"name\": \"GPU \\ud800\"}\n",
                       "stdout line 1, column 34: invalid JSON: lone surrogate \\ud800 in a string", "");
    snprintf(text, sizeof text, "%s{\"event\": \"error\", \"message\": \"bad \\x41\"}\n", device);
    expect_parse_error(text, "stdout line 2, column 36: invalid JSON: invalid escape sequence in a string", "");
    snprintf(text, sizeof text, "%s{\"event\": \"step\", \"step\": 1, \"time_s\": 0.1, \"samples\": 16, "
             "\"micro_sqnorms\": [1.5, -Infinity], \"mean_sqnorm\": 1}\n", device);
    expect_parse_error(text, "stdout line 2, column 83: '-Infinity' is not JSON: a non-finite gradient norm?",
                       "at '..., \"samples\": 16, \"micro_sqnorms\": [1.5, -Infinity'");
    assert_non_null(strstr(cf_error_hint_text(), "GradScaler"));
    snprintf(text, sizeof text, "%s{\"event\": \"step\", \"step\": 1, \"loss\": NaN}\n", device);
    expect_parse_error(text, "stdout line 2, column 38: 'NaN' is not JSON", "(fp16 overflow)");
    /* a non-finite step time is no gradient norm: the member is named, no fp16 hint */
    snprintf(text, sizeof text, "%s{\"event\": \"step\", \"step\": 1, \"time_s\": NaN, \"samples\": 8}\n", device);
    expect_parse_error(text, "stdout line 2, column 40: 'NaN' is not JSON: \"time_s\" must be a finite number",
                       "at '{\"event\": \"step\", \"step\": 1, \"time_s\": NaN'");
    assert_null(strstr(cf_error_message(), "gradient"));
    assert_null(strstr(cf_error_hint_text(), "GradScaler"));
    snprintf(text, sizeof text, "%s{\"event\": \"step\", \"step\": 1, \"time_s\":-Infinity}\n", device);
    expect_parse_error(text, "'-Infinity' is not JSON: \"time_s\" must be a finite number", "");
    /* Not a number: the column counts characters, not bytes (é is two). */
    snprintf(text, sizeof text, "%s{\"event\": \"é\", \"x\": tru}\n", device);
    expect_parse_error(text, "stdout line 2, column 21: expected one JSON object per line; 'tru' is not JSON",
                       "at '{\"event\": \"é\", \"x\": tru'");
    expect_parse_error("epoch 1 loss 0.3\n", "stdout line 1, column 1: expected one JSON object per line",
                       "got 'epoch 1 loss 0.3'");
    /* One JSON object with a number the strict reader refuses, or a NUL
     * escape: its reason at its column, not "expected one JSON object". */
    snprintf(text, sizeof text, "%s{\"event\": \"step\", \"step\": 1, \"loss\": 1e-320}\n", device);
    expect_parse_error(text, "stdout line 2, column 38: invalid JSON: number out of range '1e-320'", "");
    assert_non_null(strstr(cf_error_hint_text(), "must fit a double"));
    snprintf(text, sizeof text, "%s{\"event\": \"step\", \"step\": 1, \"loss\": 1e400}\n", device);
    expect_parse_error(text, "column 38: invalid JSON: number out of range '1e400'", "");
    snprintf(text, sizeof text, "%s{\"event\": \"step\", \"step\": 0128}\n", device);
    expect_parse_error(text, "column 27: invalid JSON: invalid number '0128'", "");
    snprintf(text, sizeof text, "%s{\"event\": \"step\", \"note\": \"a\\u0000b\"}\n", device);
    expect_parse_error(text, "stdout line 2, column", "NUL character");
    /* Valid JSON that is not an object: no column to blame. */
    expect_parse_error("[1, 2]\n", "stdout line 1: expected one JSON object per line", "got '[1, 2]'");
}

/* Issue 16: a training loop that counts steps from 0 (most do) is a good
 * run; any increasing non-negative integer is, gaps allowed; anything else
 * is refused with a message that says what was expected. */
#define STEP(n) "echo '{\"event\": \"step\", \"step\": " n ", \"time_s\": 0.01, \"samples\": 8}'\n"
static void test_step_numbers(void **state)
{
    (void)state;
    cf_probe_result res;
    printf("step numbers:\n");
    assert_int_equal(run_script("from0", DEVICE STEP("0") STEP("1") STEP("2") STEP("3") DONE, 5, &res), CF_OK);
    assert_int_equal(res.n_steps, 4);
    cf_probe_result_free(&res);
    assert_int_equal(run_script("gaps", DEVICE STEP("10") STEP("20") STEP("30") STEP("40") DONE, 5, &res), CF_OK);
    cf_probe_result_free(&res);
    assert_int_equal(run_script("float0", DEVICE STEP("0.0") STEP("1.0") STEP("2") STEP("3e0") DONE, 5, &res), CF_OK);
    cf_probe_result_free(&res);
    const char *want = "\"step\": expected a non-negative integer that increases with every step (from 0 or 1)";
    expect_error(run_script("neg", DEVICE STEP("-1") DONE, 5, &res), CF_ERR_INVALID, &res, "stdout line 2", want);
    expect_error(run_script("frac", DEVICE STEP("0") STEP("1.5") DONE, 5, &res), CF_ERR_INVALID, &res,
                 "stdout line 3", "got 1.5");
    expect_error(run_script("text", DEVICE STEP("\"1\"") DONE, 5, &res), CF_ERR_INVALID, &res, "got a string", want);
    expect_error(run_script("none", DEVICE "echo '{\"event\": \"step\", \"time_s\": 1, \"samples\": 8}'\n" DONE, 5,
                            &res),
                 CF_ERR_INVALID, &res, "got nothing", want);
    expect_error(run_script("again", DEVICE STEP("0") STEP("0") DONE, 5, &res), CF_ERR_INVALID, &res,
                 "stdout line 3", "\"step\": expected a step after 0 (steps increase), got 0");
    expect_error(run_script("back", DEVICE STEP("5") STEP("4") DONE, 5, &res), CF_ERR_INVALID, &res,
                 "stdout line 3", "expected a step after 5 (steps increase), got 4");
}

static void test_crash(void **state)
{
    (void)state;
    cf_probe_result res;
    printf("crash:\n");
    expect_error(run_script("crash", DEVICE "echo '{\"event\": \"step\", \"step\": 1, \"time_s\": 1, \"samples\": 8}'\n"
                                             "echo 'Segmentation fault coming' >&2\nkill -SEGV $$\n",
                            5, &res),
                 CF_ERR_UNAVAILABLE, &res, "crashed (signal 11", "after stdout line 2");
}

static void test_timeout(void **state)
{
    (void)state;
    cf_probe_result res;
    printf("timeout:\n");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* The script and its child sleep; both must be killed. */
    expect_error(run_script("hang", DEVICE "sleep 30 & sleep 30\n", 0.5, &res), CF_ERR_UNAVAILABLE, &res,
                 "timed out", "after stdout line 1");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double elapsed = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    assert_true(elapsed < 20); /* the script would sleep 30 s: it was killed */
    /* complete output, then no exit: not "no output" */
    expect_error(run_script("linger", DEVICE STEP_LOOP DONE "sleep 30\n", 0.5, &res), CF_ERR_UNAVAILABLE, &res,
                 "timed out: it printed the 'done' event (stdout line 6) but had not exited 0.5 s later", NULL);
}

static void test_nonzero_exit(void **state)
{
    (void)state;
    cf_probe_result res;
    printf("exit status:\n");
    expect_error(run_script("exit3", DEVICE "echo '{\"event\": \"step\", \"step\": 1, \"time_s\": 1, \"samples\": 8}'\n"
                                             "echo 'CUDA error: device-side assert' >&2\nexit 3\n",
                            5, &res),
                 CF_ERR_UNAVAILABLE, &res, "exited with status 3 after stdout line 2",
                 "CUDA error: device-side assert");
    /* Even after 'done', a failing exit status is a failure. */
    expect_error(run_script("exit1", DEVICE STEP_LOOP DONE "exit 1\n", 5, &res), CF_ERR_UNAVAILABLE, &res,
                 "exited with status 1 after stdout line 6", NULL);
    expect_error(run_script("missing", "exec /nonexistent/cloudfit-probe\n", 5, &res), CF_ERR_UNAVAILABLE, &res,
                 "exited with status", "not found");
    /* a NUL on stderr (a binary log) cut the kept tail there: the message
     * named "progress", not the script's last line */
    expect_error(run_script("nul", "printf 'progress \\000\\000 binary\\nCUDA error: out of memory\\n' >&2\nexit 1\n",
                            5, &res),
                 CF_ERR_UNAVAILABLE, &res, "exited with status 1 before any stdout line: CUDA error: out of memory",
                 NULL);
    /* nothing printed: not "after stdout line 0" */
    expect_error(run_script("silent", "echo 'no GPU' >&2\nexit 2\n", 5, &res), CF_ERR_UNAVAILABLE, &res,
                 "exited with status 2 before any stdout line: no GPU", NULL);
}

static void test_incomplete_and_script_error(void **state)
{
    (void)state;
    cf_probe_result res;
    printf("incomplete:\n");
    expect_error(run_script("nodone", DEVICE STEP_LOOP, 5, &res), CF_ERR_INVALID, &res,
                 "ended at stdout line 5 without a 'done' event", NULL);
    /* nothing on stdout, the protocol on stderr: not "ended at stdout line
     * 0"; the message says stdout was empty and quotes stderr */
    expect_error(run_script("onstderr", "echo '{\"event\": \"done\"}' >&2\n", 5, &res), CF_ERR_INVALID, &res,
                 "nothing on stdout, expected one JSON object per line ending with a 'done' event",
                 "its last stderr line: {\"event\": \"done\"}");
    expect_error(run_script("empty", "exit 0\n", 5, &res), CF_ERR_INVALID, &res, "nothing on stdout", NULL);
    expect_error(run_script("short", DEVICE "echo '{\"event\": \"step\", \"step\": 1, \"time_s\": 1, \"samples\": 8}'\n" DONE,
                            5, &res),
                 CF_ERR_INVALID, &res, "1 'step' events by stdout line 3, expected 4", NULL);
    expect_error(run_script("err", DEVICE "echo '{\"event\": \"error\", \"message\": \"no CUDA device\"}'\n", 5, &res),
                 CF_ERR_UNAVAILABLE, &res, "stdout line 2", "the script reported an error: no CUDA device");
    expect_error(run_script("after", DEVICE STEP_LOOP DONE DEVICE, 5, &res), CF_ERR_INVALID, &res,
                 "stdout line 7", "after the 'done' event");
}

/* Through the whole profiler: a failing run leaves no profile. */
static void test_profile_all_or_nothing(void **state)
{
    (void)state;
    cf_spec spec;
    /* Batches above 16 crash. */
    make_spec("sweep", DEVICE "[ \"$CLOUDFIT_LOCAL_BATCH\" -gt 16 ] && kill -SEGV $$\n" STEP_LOOP DONE, &spec);
    cf_probe_backend be = cf_probe_exec();
    cf_profile_options o;
    cf_profile_options_init(&o);
    o.n_local_batches = 3;
    o.local_batches[0] = 8;
    o.local_batches[1] = 16;
    o.local_batches[2] = 32;
    o.steps = 3;
    o.probe.timeout_s = 5;
    cf_profile p;
    assert_int_equal(run_profile(&be, &spec, &o, &p), CF_ERR_UNAVAILABLE);
    assert_non_null(strstr(cf_error_message(), "exec backend, local batch 32"));
    assert_int_equal(p.n_points, 0);
    /* Without the crash the sweep and the noise run (k = 2 norms per step, as the script reports) work. */
    cf_spec_free(&spec);
    make_spec("sweep2", DEVICE STEP_LOOP DONE, &spec);
    o.noise_micro_batches = 2;
    o.noise_steps = 20;
    assert_int_equal(run_profile(&be, &spec, &o, &p), CF_OK);
    assert_int_equal(p.n_points, 3);
    assert_string_equal(p.device.name, "Test GPU");
    assert_int_equal(p.noise_micro_batches, 2);
    /* |G_b|² = 2.5, |G_B|² = 1.5 with b = 4, B = 8: |G|² = 0.5, tr Σ = 8, B_noise = 16. */
    assert_true(p.has_noise);
    assert_true(fabs(p.b_noise - 16) < 1e-9);
    cf_spec_free(&spec);
}

/* One run, one device; one profile, one device. A second 'device' event
 * must agree on every field it gives (what it leaves out stays as the first
 * said), and every run of a profile must report the same device: a step
 * time on 4 GPUs or on the CPU stored as one GPU's throughput was the
 * defect (only the name was compared, the last event's other fields won). */
static void test_one_device_per_run_and_profile(void **state)
{
    (void)state;
    printf("device fields:\n");
    const char *first = "{\"event\": \"device\", \"name\": \"GPU\", \"memory_gib\": 16}\n";
    const char *seconds[][2] = {
        {"{\"event\": \"device\", \"name\": \"GPU\", \"gpus\": 4}\n", "gives another \"gpus\""},
        {"{\"event\": \"device\", \"name\": \"GPU\", \"type\": \"cpu\"}\n", "gives another \"type\""},
        {"{\"event\": \"device\", \"name\": \"GPU\", \"memory_gib\": 80}\n", "gives another \"memory_gib\""},
        {"{\"event\": \"device\", \"name\": \"GPU 2\"}\n", "names another device"},
    };
    /* a count below its bound says the bound ("gpus": 0 is finite: the
     * message said "expected a finite number") */
    expect_parse_error("{\"event\": \"device\", \"name\": \"GPU\", \"gpus\": 0}\n", "stdout line 1",
                       "\"gpus\": expected a number of at least 1");
    char text[512];
    for (size_t i = 0; i < sizeof seconds / sizeof *seconds; i++) {
        snprintf(text, sizeof text, "%s%s", first, seconds[i][0]);
        expect_parse_error(text, "stdout line 2", seconds[i][1]);
    }
    /* Restating the device with fewer fields keeps the first's. */
    snprintf(text, sizeof text, "%s{\"event\": \"device\", \"name\": \"GPU\", \"type\": \"gpu\"}\n"
             "{\"event\": \"step\", \"step\": 1, \"time_s\": 0.1, \"samples\": 16}\n{\"event\": \"done\"}\n", first);
    cf_probe_run run = {8, 2, 1, 0, 1, 0};
    cf_probe_result res;
    assert_int_equal(cf_probe_exec_parse_output(text, strlen(text), &run, &res), CF_OK);
    assert_true(res.device.memory_gib == 16 && res.device.gpus == 1 && res.device.is_gpu);
    cf_probe_result_free(&res);
    /* Across runs: the batch-16 run trains on 4 GPUs. */
    cf_spec spec;
    make_spec("gpus", "g=1; [ \"$CLOUDFIT_LOCAL_BATCH\" = 16 ] && g=4\n"
                      "echo \"{\\\"event\\\": \\\"device\\\", \\\"name\\\": \\\"Test GPU\\\", \\\"gpus\\\": $g}\"\n"
                      STEP_LOOP DONE, &spec);
    cf_probe_backend be = cf_probe_exec();
    cf_profile_options o;
    cf_profile_options_init(&o);
    o.n_local_batches = 2;
    o.local_batches[0] = 8;
    o.local_batches[1] = 16;
    o.steps = 3;
    o.probe.timeout_s = 5;
    cf_profile p;
    assert_int_equal(run_profile(&be, &spec, &o, &p), CF_ERR_INVALID);
    printf("  %s\n", cf_error_message());
    assert_non_null(strstr(cf_error_message(), "the device 'Test GPU' reported another \"gpus\" in a later run (1, then 4)"));
    cf_spec_free(&spec);
}

/* A step's "samples" is one device's samples (CLOUDFIT_LOCAL_BATCH ×
 * CLOUDFIT_MICRO_BATCHES) or all the run's devices' (that times the world
 * size: the runner's nodes × GPUs per node, else the 'device' event's
 * "gpus"); anything else is a run that trained another batch, whose step
 * time was stored as the batch asked for. */
static void test_samples_are_the_batch_asked_for(void **state)
{
    (void)state;
    static const struct {
        int world_size;
        const char *device;
        int samples;
        const char *error; /* NULL: accepted */
    } cases[] = {
        {0, "", 16, NULL},                 /* one device's: 8 × 2 */
        {0, ", \"gpus\": 4", 16, NULL},    /* one device's, of 4 */
        {0, ", \"gpus\": 4", 64, NULL},    /* the 4 devices' together */
        {0, "", 32, "stdout line 2: \"samples\": 32, but the run was asked for 16 (CLOUDFIT_LOCAL_BATCH 8 × 2 "
                    "micro-batches) on its one GPU"},
        {0, ", \"gpus\": 4", 8, "stdout line 2: \"samples\": 8, but the run was asked for 16 per device "
                                "(CLOUDFIT_LOCAL_BATCH 8 × 2 micro-batches), 64 over its 4 GPUs"},
        {0, ", \"gpus\": 4, \"type\": \"cpu\"", 32, "64 over its 4 devices"},
        {8, "", 128, NULL},                /* a runner's 2 nodes × 4 GPUs, "gpus" left out */
        {8, ", \"gpus\": 8", 16, NULL},
        {8, "", 64, "\"samples\": 64, but the run was asked for 16 per device (CLOUDFIT_LOCAL_BATCH 8 × 2 "
                    "micro-batches), 128 over its 8 GPUs"},
        {8, ", \"gpus\": 4", 64, NULL},    /* the runner refuses the run on its "gpus" (runner_exec.c) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text, "{\"event\": \"device\", \"name\": \"GPU\"%s}\n"
                 "{\"event\": \"step\", \"step\": 1, \"time_s\": 0.1, \"samples\": %d}\n{\"event\": \"done\"}\n",
                 cases[i].device, cases[i].samples);
        cf_probe_run run = {8, 2, 1, 0, 1, cases[i].world_size};
        cf_probe_result res;
        cf_status st = cf_probe_exec_parse_output(text, strlen(text), &run, &res);
        if (!cases[i].error) {
            if (st != CF_OK)
                fail_msg("case %zu: %s", i, cf_error_message());
            assert_int_equal(res.n_steps, 1);
            assert_int_equal(res.steps[0].samples, cases[i].samples);
            cf_probe_result_free(&res);
            continue;
        }
        assert_int_equal(st, CF_ERR_INVALID);
        printf("  %s\n", cf_error_message());
        if (!strstr(cf_error_message(), cases[i].error))
            fail_msg("case %zu: expected '%s' in: %s", i, cases[i].error, cf_error_message());
        assert_non_null(strstr(cf_error_hint_text(), "\"samples\" is the step's samples on one device"));
        assert_null(res.steps);
        assert_int_equal(res.n_steps, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_run_and_environment),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_samples_are_the_batch_asked_for),
        cmocka_unit_test(test_script_text_escaped_in_messages),
        cmocka_unit_test(test_malformed_line),
        cmocka_unit_test(test_not_json_column_and_token),
        cmocka_unit_test(test_line_longer_than_a_mib),
        cmocka_unit_test(test_step_numbers),
        cmocka_unit_test(test_crash),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_nonzero_exit),
        cmocka_unit_test(test_incomplete_and_script_error),
        cmocka_unit_test(test_profile_all_or_nothing),
        cmocka_unit_test(test_one_device_per_run_and_profile),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
