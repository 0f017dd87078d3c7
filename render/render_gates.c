/* The CI gates of a recommendation rendered (docs/ci.md): the "Gates"
 * lines of the table and the "gates" array of the JSON document. The gates
 * themselves are the advisor's (advisor/plan/gates.c). */
#include <math.h>

#include "cloudfit/render.h"

/* Rounded so documents are stable: 6 significant digits. */
static double round6(double v)
{
    if (v == 0 || !isfinite(v))
        return v;
    double scale = pow(10, 5 - (int)floor(log10(fabs(v))));
    return round(v * scale) / scale;
}

cJSON *cf_gates_json(const cf_history_gate *gates, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const cf_history_gate *g = &gates[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", g->name);
        cJSON_AddNumberToObject(o, "limit", g->limit);
        if (isfinite(g->value))
            cJSON_AddNumberToObject(o, "value", round6(g->value));
        else
            cJSON_AddNullToObject(o, "value");
        cJSON_AddBoolToObject(o, "passed", g->passed);
        cJSON_AddStringToObject(o, "note", g->note);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

void cf_gates_text(const cf_history_gate *gates, size_t n, cf_buf *out)
{
    if (!n)
        return;
    cf_buf_printf(out, "\nGates: %s\n", cf_gates_passed(gates, n) ? "all passed" : "FAILED");
    for (size_t i = 0; i < n; i++)
        cf_buf_printf(out, "  %s %-22s %s\n", gates[i].passed ? "pass" : "FAIL", gates[i].name, gates[i].note);
}
