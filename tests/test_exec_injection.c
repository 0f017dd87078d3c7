/* Security: a runner template is never given to a shell. Every substituted
 * value — cloud, region, instance type, GPU, numbers — with ; $(...)
 * backticks newlines and quotes in it arrives as exactly the argv word it
 * was, and nothing in it runs (docs/reliability.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/profiler/runners.h"

static char dir[256];

/* A runner that writes each argv word on its own line (NUL-separated) and
 * speaks the exec protocol. */
static const char *runner_script =
    "import json, os, sys\n"
    "open(os.environ['ARGV_OUT'], 'wb').write(b'\\0'.join(a.encode() for a in sys.argv[1:]))\n"
    "w, n = int(os.environ['CLOUDFIT_WARMUP_STEPS']), int(os.environ['CLOUDFIT_STEPS'])\n"
    "print(json.dumps({'event': 'device', 'name': 'Tesla T4', 'memory_gib': 16}), flush=True)\n"
    "for i in range(w + n):\n"
    "    print(json.dumps({'event': 'step', 'step': i + 1, 'time_s': 0.1, 'samples': int(os.environ['CLOUDFIT_LOCAL_BATCH'])}), flush=True)\n"
    "print(json.dumps({'event': 'done'}), flush=True)\n";

static void test_values_are_single_argv_words(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s", "/tmp/cf-inject-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char script[512], argv_out[512], canary[512], template_text[2048];
    snprintf(script, sizeof script, "%s/runner.py", dir);
    snprintf(argv_out, sizeof argv_out, "%s/argv", dir);
    snprintf(canary, sizeof canary, "%s/PWNED", dir);
    assert_int_equal(cf_write_file_atomic(script, runner_script, strlen(runner_script)), CF_OK);
    setenv("ARGV_OUT", argv_out, 1);
    snprintf(template_text, sizeof template_text,
             "/usr/bin/python3 %s --cloud {cloud} --region {region} --type {instance_type} --gpu {gpu} "
             "--n {nodes}x{gpus_per_node} --b={local_batch} --s {steps} 'x {gpu} y'",
             script);
    cf_exec_runner e;
    assert_int_equal(cf_exec_runner_open(template_text, 30, 1, &e), CF_OK);
    cf_vm vm;
    memset(&vm, 0, sizeof vm);
    char evil[5][64];
    snprintf(evil[0], sizeof evil[0], ";$(t)");
    snprintf(evil[1], sizeof evil[1], "r`touch %.20s`", "x");
    snprintf(evil[2], sizeof evil[2], "a;touch %.24s\n\"'", "PWNED");
    snprintf(evil[3], sizeof evil[3], "$(touch PWNED) '\"");
    memcpy(vm.cloud, evil[0], strlen(evil[0]) + 1);        /* each fits its field */
    memcpy(vm.region, evil[1], strlen(evil[1]) + 1);
    memcpy(vm.instance_type, evil[2], strlen(evil[2]) + 1);
    cf_search_candidate c;
    memset(&c, 0, sizeof c);
    c.vm = &vm;
    memcpy(c.gpu, evil[3], strlen(evil[3]) + 1);
    c.nodes = 2;
    c.gpus_per_node = 4;
    c.local_batch = 16;
    cf_search_runner r = cf_exec_runner_iface(&e);
    char cwd[1024];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0); /* a relative "touch PWNED" would land here */
    double step_s = 0;
    cf_status st = r.probe(r.ctx, &c, 5, &step_s);
    assert_int_equal(chdir(cwd), 0);
    if (st != CF_OK)
        fail_msg("probe failed: %s", cf_error_message());
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(cf_read_file(argv_out, &text, &len), CF_OK);
    const char *expected[] = {"--cloud", evil[0], "--region", evil[1], "--type", evil[2], "--gpu", evil[3],
                              "--n", "2x4", "--b=16", "--s", "5", NULL};
    size_t off = 0;
    for (int i = 0; expected[i]; i++) {
        assert_true(off <= len);
        assert_string_equal(text + off, expected[i]);
        off += strlen(text + off) + 1;
    }
    char last[128];
    snprintf(last, sizeof last, "x %s y", evil[3]); /* a quoted template word stays one word */
    assert_string_equal(text + off, last);
    assert_int_equal(off + strlen(last), len);
    free(text);
    assert_int_not_equal(access(canary, F_OK), 0);
    char other[512];
    snprintf(other, sizeof other, "%s/t", dir);
    assert_int_not_equal(access(other, F_OK), 0);
    cf_exec_runner_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_values_are_single_argv_words)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
