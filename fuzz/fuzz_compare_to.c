/* The history --compare-to document (advisor/plan/gates.c), and the gates
 * evaluated against the baseline it gives. */
#include "fuzz.h"
#include "cloudfit/advisor/gates.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_baseline base;
    cf_status st = cf_baseline_from_text((const char *)data, size, "baseline.json", &base);
    fuzz_check_error(st);
    if (st == CF_OK) {
        cf_gate_limits limits = {.max_cost_usd = 100, .max_hours = 10, .max_increase = 5, .increase_is_pct = 1,
                                 .require_baseline = 1};
        cf_vm vm = {.cloud = "aws", .region = "us-east-1", .instance_type = "p4d.24xlarge", .gpu_model = "A100"};
        cf_config now = {.vm = &vm, .nodes = 2, .gpus_per_node = 8, .total_usd = 42.0, .hours = 3.0,
                         .total_usd_p10 = 30, .total_usd_p90 = 60, .hours_p10 = 2, .hours_p90 = 4};
        cf_history_gate gates[CF_MAX_GATES];
        cf_gates_evaluate(&limits, &now, &base, gates);
    }
    return 0;
}
