/* The recommendation's next measurement (cf_next_measurement,
 * advisor/plan/next_measurement.c) as a line of text and as JSON, with the
 * command that runs it (`cloudfit profile --runner`, docs/profiler.md). */
#include <stdio.h>
#include <string.h>

#include "cloudfit/common/shell_words.h"
#include "cloudfit/common/json.h"
#include "cloudfit/render.h"

static const char *kind_name(cf_measure_kind k)
{
    return k == CF_MEASURE_PROFILE ? "profile" : k == CF_MEASURE_NETWORK ? "network" : "none";
}

static const char *about_name(cf_measure_about a)
{
    return a == CF_MEASURE_FOR_HELD_BACK ? "held_back" : a == CF_MEASURE_FOR_RUNNER_UP ? "runner_up" : "chosen";
}

/* Every word a catalog, a history or the user named is a cf_shell_word:
 * unquoted, a crafted GPU or instance name ran what it held. */
void cf_next_measurement_command(const cf_next_measurement *m, const char *spec_path, const char *history,
                                 cf_buf *out)
{
    cf_buf_puts(out, "cloudfit profile --runner RUNNER --gpu ");
    cf_shell_word(out, m->gpu);
    cf_buf_puts(out, " --instance-type ");
    cf_shell_word(out, m->instance_type);
    /* the offer priced, whatever clouds and regions the spec names
     * (recommend's --cloud/--region may have overridden them) */
    cf_buf_puts(out, " --cloud ");
    cf_shell_word(out, m->cloud);
    if (m->region[0] && strcmp(m->region, "-") != 0) {
        cf_buf_puts(out, " --region ");
        cf_shell_word(out, m->region);
    }
    if (m->kind == CF_MEASURE_NETWORK && !(m->nodes == 2 && m->gpus_per_node == 1))
        cf_buf_printf(out, " --probe-nodes %d --probe-gpus %d", m->nodes, m->gpus_per_node);
    /* the limits the plan was found within (recommend's --max-nodes/--max-gpus may have raised the
     * spec's): profile refuses a probe beyond its own */
    if (m->kind == CF_MEASURE_NETWORK && m->max_nodes > 0 && m->max_gpus > 0)
        cf_buf_printf(out, " --max-nodes %d --max-gpus %d", m->max_nodes, m->max_gpus);
    if (history && history[0]) { /* the profile goes where the next `recommend` reads it */
        cf_buf_puts(out, " --db ");
        cf_shell_word(out, history);
    }
    cf_buf_puts(out, " ");
    /* The spec path is an operand: quoting does not stop cloudfit's option
     * parser from reading '-job.json' as options, "./" does (a path that
     * starts with '-' is relative). */
    const char *path = spec_path && spec_path[0] ? spec_path : "MODEL.json";
    if (path[0] == '-') {
        cf_buf operand = CF_BUF_INIT;
        cf_buf_printf(&operand, "./%s", path);
        cf_shell_word(out, cf_buf_failed(&operand) ? path : cf_buf_cstr(&operand));
        if (cf_buf_failed(&operand))
            out->failed = 1;
        cf_buf_free(&operand);
    } else {
        cf_shell_word(out, path);
    }
}

void cf_next_measurement_sentence(const cf_next_measurement *m, cf_buf *out)
{
    if (m->kind != CF_MEASURE_NONE)
        cf_buf_printf(out, "%s; then 'recommend' again. Run it:", m->reason);
}

void cf_next_measurement_text(const cf_next_measurement *m, const char *spec_path, const char *history, cf_buf *out)
{
    if (m->kind == CF_MEASURE_NONE)
        return;
    cf_next_measurement_sentence(m, out);
    cf_buf_puts(out, " ");
    cf_next_measurement_command(m, spec_path, history, out);
}

cJSON *cf_next_measurement_json(const cf_next_measurement *m, const char *spec_path, const char *history)
{
    if (m->kind == CF_MEASURE_NONE)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", kind_name(m->kind));
    cJSON_AddStringToObject(o, "about", about_name(m->about));
    cJSON_AddStringToObject(o, "gpu", m->gpu);
    cJSON_AddStringToObject(o, "cloud", m->cloud);
    cJSON_AddStringToObject(o, "region", m->region);
    cJSON_AddStringToObject(o, "instance_type", m->instance_type);
    cJSON_AddNumberToObject(o, "nodes", m->nodes);
    cJSON_AddNumberToObject(o, "gpus_per_node", m->gpus_per_node);
    cJSON_AddNumberToObject(o, "est_minutes", cf_json_round(m->est_minutes, 4));
    cJSON_AddNumberToObject(o, "est_usd", cf_json_round(m->est_usd, 6));
    cJSON_AddBoolToObject(o, "could_change_choice", m->could_change_choice);
    cJSON_AddNumberToObject(o, "flip_probability", cf_json_round(m->flip_probability, 3));
    cJSON_AddNumberToObject(o, "expected_gain", cf_json_round(m->expected_gain, 3));
    cJSON *now = cJSON_AddObjectToObject(o, "chosen_total_usd_interval");
    cJSON_AddNumberToObject(now, "p10", cf_json_round(m->usd_p10, 6));
    cJSON_AddNumberToObject(now, "p90", cf_json_round(m->usd_p90, 6));
    cJSON *after = cJSON_AddObjectToObject(o, "chosen_total_usd_interval_after");
    cJSON_AddNumberToObject(after, "p10", cf_json_round(m->usd_p10_after, 6));
    cJSON_AddNumberToObject(after, "p90", cf_json_round(m->usd_p90_after, 6));
    cJSON *plan = cJSON_AddObjectToObject(o, "plan");
    cJSON_AddStringToObject(plan, "instance_type", m->plan_instance_type);
    cJSON_AddNumberToObject(plan, "nodes", m->plan_nodes);
    cJSON_AddNumberToObject(plan, "hours", cf_json_round(m->plan_hours, 6));
    cJSON_AddNumberToObject(plan, "total_usd", cf_json_round(m->plan_usd, 6));
    cJSON_AddStringToObject(o, "reason", m->reason);
    cf_buf cmd = CF_BUF_INIT;
    cf_next_measurement_command(m, spec_path, history, &cmd);
    cJSON_AddStringToObject(o, "command", cmd.data ? cmd.data : "");
    cf_buf_free(&cmd);
    return o;
}
