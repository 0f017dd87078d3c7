/* The spot availability trace reader (profiler/spot_traces.c), behind
 * `simulate --trace` and the spot plans: the input is parsed as a trace
 * (CSV, or the public traces' JSON when it starts with '{' or '[') with
 * the requested count from the file and with a fixed one, and its first
 * line is read as a trace's path (profiler/spot_trace_names.c); when it
 * holds a line "#merge", the parts before and after it are parsed
 * separately and merged tick by tick, as `--trace A --trace B` does. */
#include "fuzz.h"
#include "cloudfit/profiler/spot_traces.h"

static int parse(const char *text, size_t len, int requested, cf_spot_trace *out)
{
    cf_status st = cf_spot_trace_parse(text, len, "trace.csv", requested, out);
    fuzz_check_error(st);
    return st == CF_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char path[512];
    size_t n_path = 0;
    while (n_path < size && n_path < sizeof path - 1 && text[n_path] != '\n' && text[n_path] != '\0')
        n_path++;
    memcpy(path, text, n_path);
    path[n_path] = '\0';
    cf_spot_trace_vm vm;
    if (cf_spot_trace_vm_from_path(path, &vm) && !(vm.requested > 0 && vm.gpus_per_vm >= 0))
        __builtin_trap(); /* a recognised path names its nodes */
    cf_spot_trace a;
    if (parse(text, size, 0, &a))
        cf_spot_trace_free(&a);
    if (parse(text, size, 3, &a))
        cf_spot_trace_free(&a);
    const char *split = NULL;
    for (size_t i = 0; i + 7 <= size; i++)
        if (memcmp(text + i, "\n#merge", 7) == 0) {
            split = text + i;
            break;
        }
    if (!split)
        return 0;
    size_t first = (size_t)(split - text) + 1, rest = size - first - 6;
    const char *second = split + 7;
    if (rest > 0 && *second == '\n') {
        second++;
        rest--;
    }
    cf_spot_trace b, merged;
    if (parse(text, first, 0, &a)) {
        if (parse(second, rest, 0, &b)) {
            cf_status st = cf_spot_trace_merge(&a, &b, &merged);
            fuzz_check_error(st);
            if (st == CF_OK)
                cf_spot_trace_free(&merged);
            cf_spot_trace_free(&b);
        }
        cf_spot_trace_free(&a);
    }
    return 0;
}
