/* The gradient-noise trace reader (profiler/gns_traces.c): the traces CSV
 * and the models CSV. An input holding a line "#models" is split there
 * (traces before, models after); otherwise it is the traces with a fixed
 * models table, and also a models table on its own. */
#include "fuzz.h"
#include "cloudfit/profiler/gns_traces.h"

static const char models_csv[] = "model,m0,metric_name,metric_better\n"
                                 "cifar10,128,accuracy,higher\nimagenet,256,top1,higher\n";

static void parse(const char *t, size_t tl, const char *m, size_t ml)
{
    cf_gns_traces traces;
    cf_status st = cf_gns_traces_parse(t, tl, "traces.csv", m, ml, "models.csv", &traces);
    fuzz_check_error(st);
    if (st == CF_OK)
        cf_gns_traces_free(&traces);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *split = NULL;
    for (size_t i = 0; i + 8 <= size; i++)
        if (memcmp(text + i, "\n#models", 8) == 0) {
            split = text + i;
            break;
        }
    if (split) {
        size_t tl = (size_t)(split - text) + 1;
        size_t rest = size - tl - 7;
        parse(text, tl, split + 8, rest > 0 && split[8] == '\n' ? rest - 1 : rest);
        return 0;
    }
    parse(text, size, models_csv, sizeof models_csv - 1);
    static const char traces_csv[] = "model,batch_size,m0,epoch,progress,iteration,metric,b_noise\n"
                                     "cifar10,128,128,1,100,100,0.5,300\n";
    parse(traces_csv, sizeof traces_csv - 1, text, size);
    return 0;
}
