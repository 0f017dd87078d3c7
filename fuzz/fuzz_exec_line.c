/* The exec probe protocol (profiler/probe_exec.c): a script's whole
 * stdout, line by line, then the completeness checks. The first byte
 * chooses the run asked for (steps, warm-up, micro-batches). */
#include "fuzz.h"
#include "cloudfit/profiler/exec_protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_probe_run run = {.local_batch = 8, .micro_batches = 1, .steps = 3, .warmup_steps = 1, .seed = 1};
    if (size > 0) {
        run.steps = 1 + data[0] % 4;
        run.warmup_steps = (data[0] >> 2) % 3;
        run.micro_batches = 1 + (data[0] >> 4) % 4;
        data++;
        size--;
    }
    cf_probe_result res;
    cf_status st = cf_probe_exec_parse_output((const char *)data, size, &run, &res);
    fuzz_check_error(st);
    if (st == CF_OK)
        cf_probe_result_free(&res);
    return 0;
}
