#include "recommend/recommend_ci.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/ci_env.h"
#include "cloudfit/common/json_diff.h"
#include "exit_codes.h"
#include "cloudfit/common/fileio.h"
#include "log.h"
#include "cloudfit/version.h"
#include "commands.h"
#include "cloudfit/db/history_diff.h"
#include "io/db_open.h"
#include "cloudfit/render/emit_common.h"
#include "cloudfit/usecase/recommend.h"

typedef cf_status (*emitter_fn)(const cf_report *, const char *, cf_buf *);

/* Launch specs hold no secret: a new file gets 0666 less the umask (0644
 * under the usual 022), the script 0777 less the umask (0755), so the
 * people and machines that launch the job can read (and run) them. */
static const struct {
    const char *kind;
    const char *file_suffix;
    emitter_fn fn;
    unsigned mode;
} emitters[] = {
    {"skypilot", ".sky.yaml", cf_emit_skypilot, 0666},
    {"torchrun", ".torchrun.sh", cf_emit_torchrun, 0777},
    {"k8s", ".pytorchjob.yaml", cf_emit_k8s, 0666},
};
#define N_EMITTERS (sizeof emitters / sizeof *emitters)

static const char *env_lookup(const char *name) { return getenv(name); }

int cf_recommend_ci_check_options(const cf_cli_options *o, cf_recommend_ci *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->limits.max_cost_usd = o->max_cost_usd;
    ctx->limits.max_hours = o->max_hours;
    ctx->limits.max_increase = -1;
    ctx->limits.require_baseline = o->require_baseline;
    if (o->baseline_key && !o->baseline_key[0]) {
        cf_log_error("option '--baseline-key' needs a non-empty key");
        cf_log_hint("e.g. --baseline-key team-a/resnet50; by default the spec's name and its path in the repository");
        return CF_EXIT_USAGE;
    }
    if (o->max_cost_increase) {
        int rc = cf_gate_parse_increase(o->max_cost_increase, &ctx->limits);
        if (rc)
            return rc;
    }
    for (int i = 0; i < o->emit.n; i++) {
        size_t k;
        for (k = 0; k < N_EMITTERS; k++)
            if (strcmp(o->emit.items[i], emitters[k].kind) == 0)
                break;
        if (k == N_EMITTERS) {
            cf_log_error("option '--emit' does not accept '%s'", o->emit.items[i]);
            cf_log_hint("use one of: skypilot, torchrun, k8s");
            return CF_EXIT_USAGE;
        }
    }
    /* A bad entry point or node selector is a usage error before anything is computed. */
    for (int i = 0; i < o->node_selectors.n; i++)
        if (cf_emit_k8s_check_selector(o->node_selectors.items[i]) != CF_OK)
            return cf_report_error();
    if (o->emit.n > 0) {
        cf_shell_words words;
        if (cf_emit_split_words(o->entrypoint ? o->entrypoint : "train.py", &words) != CF_OK)
            return cf_report_error();
        cf_shell_words_free(&words);
    }
    return 0;
}

int cf_recommend_ci_open(const cf_cli_options *o, const cf_spec *spec, cf_recommend_ci *ctx)
{
    cf_ci_detect(env_lookup, &ctx->ci);
    cf_recommend_identity(spec, o->baseline_key, ctx->identity, sizeof ctx->identity);
    cf_status st;
    if (o->no_history) {
        /* Read an existing database (baseline, measurements); never create one. */
        st = cf_cli_db_open_existing(o, &ctx->db, ctx->db_path, sizeof ctx->db_path);
    } else {
        st = cf_cli_db_open(o, 1, &ctx->db, ctx->db_path, sizeof ctx->db_path);
    }
    return st == CF_OK ? 0 : cf_report_error();
}

/* What changed in the spec since the baseline, field by field, when the
 * history holds the baseline's spec (it stores every spec it saw). */
static void spec_changes(cf_recommend_ci *ctx, const cf_spec *spec)
{
    cf_baseline *b = &ctx->baseline;
    if (!b->spec_hash[0])
        return;
    if (strcmp(b->spec_hash, spec->hash) == 0) {
        b->spec_known = 1;
        return;
    }
    char *before_text = NULL;
    if (!ctx->db || cf_history_spec_json(ctx->db, b->spec_hash, &before_text) != CF_OK || !before_text) {
        cf_error_clear();
        snprintf(b->spec_changes, sizeof b->spec_changes, "%.12s… → %.12s… (the baseline's spec is not in the history)",
                 b->spec_hash, spec->hash);
        return;
    }
    cJSON *before = cJSON_Parse(before_text), *after = cJSON_Parse(spec->canonical_json);
    free(before_text);
    cf_buf text = CF_BUF_INIT;
    if (before && after) {
        cf_json_diff_text(before, after, 6, &text);
        if (!cf_buf_failed(&text)) {
            snprintf(b->spec_changes, sizeof b->spec_changes, "%s", cf_buf_cstr(&text));
            b->spec_known = 1;
        }
    }
    cf_buf_free(&text);
    cJSON_Delete(before);
    cJSON_Delete(after);
}

int cf_recommend_ci_gates(const cf_cli_options *o, cf_recommend_ci *ctx, cf_report *r)
{
    r->ci = &ctx->ci;
    r->identity = ctx->identity;
    const char *branch = o->base_branch ? o->base_branch : ctx->ci.base_branch[0] ? ctx->ci.base_branch : NULL;
    if (o->compare_to) {
        if (cf_baseline_from_file(o->compare_to, &ctx->baseline) != CF_OK)
            return cf_report_error();
    } else if (ctx->db) {
        cf_history_row row;
        int found = 0;
        if (cf_history_latest(ctx->db, ctx->identity, r->spec->source_hash, branch, &row, &found) != CF_OK)
            return cf_report_error();
        if (found) {
            cf_baseline_from_row(&row, &ctx->baseline);
            snprintf(ctx->baseline.spec_hash, sizeof ctx->baseline.spec_hash, "%s", row.spec_hash);
        }
    }
    if (!ctx->baseline.have)
        snprintf(ctx->baseline.lookup, sizeof ctx->baseline.lookup, "spec %.300s on %s%.100s in %.150s", ctx->identity,
                 branch ? "branch " : "any branch", branch ? branch : "",
                 ctx->db ? ctx->db_path : "no history (none yet, or --no-history without one)");
    else
        spec_changes(ctx, r->spec);
    r->baseline = ctx->baseline.have ? &ctx->baseline : NULL;
    ctx->n_gates = cf_gates_evaluate(&ctx->limits, &r->advice->ranked[0], &ctx->baseline, ctx->gates);
    r->gates = ctx->gates;
    r->n_gates = ctx->n_gates;
    return 0;
}

/* The emitter of --emit's i-th kind, or -1 when an earlier --emit named
 * it already (a kind given twice is written once). */
static int emitter_of(const cf_cli_options *o, int i)
{
    for (int j = 0; j < i; j++)
        if (strcmp(o->emit.items[j], o->emit.items[i]) == 0)
            return -1;
    int k = 0;
    while (strcmp(o->emit.items[i], emitters[k].kind) != 0)
        k++;
    return k;
}

int cf_recommend_ci_emit(const cf_cli_options *o, const cf_report *r, cf_staged_set *side, cf_buf *wrote)
{
    const char *entrypoint = o->entrypoint ? o->entrypoint : "train.py";
    for (int i = 0; i < o->emit.n; i++) {
        int k = emitter_of(o, i);
        if (k < 0)
            continue;
        cf_buf path = CF_BUF_INIT;
        cf_buf_printf(&path, "%s/%s%s", o->emit_dir ? o->emit_dir : ".", r->spec->job.name, emitters[k].file_suffix);
        cf_buf text = CF_BUF_INIT;
        cf_emit_k8s_options k8s = {o->node_selectors.items, (size_t)o->node_selectors.n};
        cf_status st = emitters[k].fn == cf_emit_k8s ? cf_emit_k8s_with(r, entrypoint, &k8s, &text)
                                                     : emitters[k].fn(r, entrypoint, &text);
        if (st == CF_OK && cf_buf_failed(&text))
            st = cf_error_set(CF_ERR_NOMEM, "out of memory writing the %s launch spec", emitters[k].kind);
        if (st == CF_OK && o->emit_dir)
            st = cf_staged_set_mkdir(side, o->emit_dir);
        if (st == CF_OK && cf_buf_failed(&path))
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
        if (st == CF_OK)
            st = cf_staged_set_add_mode(side, path.data, text.data, text.len, emitters[k].mode);
        if (st == CF_OK)
            cf_buf_printf(wrote, "wrote %s launch spec to %s\n", emitters[k].kind, path.data);
        cf_buf_free(&text);
        cf_buf_free(&path);
        if (st != CF_OK)
            return cf_report_error();
    }
    return 0;
}

int cf_recommend_ci_record(cf_recommend_ci *ctx, const cf_report *r, const char *json_text)
{
    if (!ctx->db)
        return 0;
    const cf_advice *a = r->advice;
    const cf_config *c = &a->ranked[0];
    size_t n_alts = a->n_ranked > 1 ? a->n_ranked - 1 : 0;
    cf_history_config *alts = calloc(n_alts ? n_alts : 1, sizeof *alts);
    if (!alts) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    for (size_t i = 0; i < n_alts; i++)
        cf_history_config_from(&a->ranked[i + 1], (int)i + 2, &alts[i]);
    cf_history_record rec = {
        .created_at = r->created_at, .tool_version = CF_VERSION, .spec_hash = r->spec->hash, .source_hash = r->spec->source_hash,
        .spec_name = r->spec->job.name, .spec_json = r->spec->canonical_json,
        .objective = cf_objective_name(r->spec->search.objective), .catalog_name = r->catalog->name,
        .catalog_date = r->catalog->data_date, .cloud = c->vm->cloud, .region = c->vm->region,
        .instance_type = c->vm->instance_type, .gpu = c->vm->gpu_model, .gpus_per_node = c->gpus_per_node,
        .nodes = c->nodes, .local_batch = c->local_batch, .accumulation = c->accumulation,
        .global_batch = c->global_batch, .lr = c->lr.lr, .spot = c->spot, .step_time_s = c->step_time_s,
        .hours = c->hours, .total_usd = c->total_usd, .usd_per_node_hour = c->usd_per_hour / c->nodes,
        .identity = ctx->identity,
        .result_json = json_text, .alternatives = alts, .n_alternatives = n_alts, .ci = &ctx->ci,
        .gates = ctx->gates, .n_gates = ctx->n_gates};
    cf_config_intervals(c, &rec.hours_p10, &rec.hours_p90, &rec.total_usd_p10, &rec.total_usd_p90);
    cf_status st = cf_history_insert(ctx->db, &rec, &ctx->recorded_id);
    free(alts);
    return st == CF_OK ? 0 : cf_report_error();
}

void cf_recommend_ci_recorded(const cf_recommend_ci *ctx)
{
    if (ctx->recorded_id)
        cf_log_info("recorded as recommendation %lld in %s", ctx->recorded_id, ctx->db_path);
}

int cf_recommend_ci_gate_exit(const cf_recommend_ci *ctx)
{
    if (cf_gates_passed(ctx->gates, ctx->n_gates))
        return 0;
    for (size_t i = 0; i < ctx->n_gates; i++)
        if (!ctx->gates[i].passed)
            cf_log_error("gate %s failed: %s", ctx->gates[i].name, ctx->gates[i].note);
    return CF_EXIT_GATE;
}

void cf_recommend_ci_close(cf_recommend_ci *ctx)
{
    cf_db_close(ctx->db);
    ctx->db = NULL;
}
