/* The job spec: parser and validator (spec/), then the effective spec with
 * command-line overrides and the profile key, as recommend does. */
#include "fuzz.h"
#include "cloudfit/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_spec *spec = calloc(1, sizeof *spec);
    cf_spec *eff = calloc(1, sizeof *eff);
    if (!spec || !eff)
        abort();
    cf_status st = cf_spec_parse((const char *)data, size, "fuzz.json", spec);
    fuzz_check_error(st);
    if (st == CF_OK) {
        char key[65];
        fuzz_check_error(cf_spec_profile_key(spec, key));
        cf_spec_overrides ov;
        cf_spec_overrides_init(&ov);
        ov.deadline_hours = 12;
        ov.max_nodes = 4;
        st = cf_spec_effective(spec, &ov, eff);
        fuzz_check_error(st);
        if (st == CF_OK)
            cf_spec_free(eff);
    }
    cf_spec_free(spec);
    free(spec);
    free(eff);
    return 0;
}
