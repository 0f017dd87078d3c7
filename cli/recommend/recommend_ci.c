#include "recommend/recommend_ci.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/ci_env.h"
#include "exit_codes.h"
#include "cloudfit/common/fileio.h"
#include "log.h"
#include "commands.h"
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
    if (o->max_cost_increase && cf_gate_limits_set_increase(&ctx->limits, o->max_cost_increase) != CF_OK) {
        cf_log_error("option '--max-cost-increase' %s", cf_error_message());
        cf_log_hint("see 'cloudfit recommend --help'");
        cf_error_clear();
        return CF_EXIT_USAGE;
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

int cf_recommend_ci_open(const cf_cli_options *o, cf_recommend_ci *ctx)
{
    cf_ci_detect(env_lookup, &ctx->ci);
    cf_status st;
    if (o->no_history) {
        /* Read an existing database (price snapshot, evidence, baseline); never create one. */
        st = cf_cli_db_open_existing(o, &ctx->db, ctx->db_path, sizeof ctx->db_path);
    } else {
        st = cf_cli_db_open(o, 1, &ctx->db, ctx->db_path, sizeof ctx->db_path);
    }
    return st == CF_OK ? 0 : cf_report_error();
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

void cf_recommend_ci_recorded(const cf_recommend_ci *ctx)
{
    if (ctx->recorded_id)
        cf_log_info("recorded as recommendation %lld in %s", ctx->recorded_id, ctx->db_path);
}

int cf_recommend_ci_gate_exit(const cf_report *r)
{
    if (cf_gates_passed(r->gates, r->n_gates))
        return 0;
    for (size_t i = 0; i < r->n_gates; i++)
        if (!r->gates[i].passed)
            cf_log_error("gate %s failed: %s", r->gates[i].name, r->gates[i].note);
    return CF_EXIT_GATE;
}

void cf_recommend_ci_close(cf_recommend_ci *ctx)
{
    cf_db_close(ctx->db);
    ctx->db = NULL;
}
