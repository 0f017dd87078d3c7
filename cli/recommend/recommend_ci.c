#include "recommend/recommend_ci.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cloudfit/common/ci_env.h"
#include "cloudfit/db.h"
#include "exit_codes.h"
#include "cloudfit/common/fileio.h"
#include "log.h"
#include "commands.h"
#include "io/db_open.h"
#include "cloudfit/render/emit_common.h"
#include "cloudfit/usecase/launch_specs.h"
#include "cloudfit/usecase/recommend.h"

static const char *env_lookup(const char *name) { return getenv(name); }

int cf_recommend_ci_check_options(const cf_cli_options *o, cf_recommend_ci *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->limits.max_cost_usd = o->max_cost_usd;
    ctx->limits.max_hours = o->max_hours;
    ctx->limits.max_increase = -1;
    ctx->limits.require_baseline = o->require_baseline;
    if (cf_gate_limits_check(&ctx->limits) != CF_OK)
        return cf_report_error();
    if (o->base_branch && !o->base_branch[0]) {
        /* an empty name found no baseline, ever: e.g. ${{ github.base_ref }} on a push */
        cf_log_error("option '--base-branch' needs a non-empty branch name");
        cf_log_hint("leave it out to use the CI's target branch (CLOUDFIT_CI_BASE_BRANCH, GITHUB_BASE_REF, ...)");
        return CF_EXIT_USAGE;
    }
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
    /* A bad entry point or node selector is a usage error before anything
     * is computed, with --emit or without (a slip is found now, not when
     * --emit is added); each selector alone was checked as the options
     * were read, here a key given twice. */
    if (cf_emit_k8s_check_selectors((const char *const *)o->node_selectors.items, (size_t)o->node_selectors.n) != CF_OK)
        return cf_report_error();
    if (o->emit.n > 0 || o->entrypoint) {
        cf_shell_words words;
        if (cf_emit_split_words(o->entrypoint ? o->entrypoint : "train.py", &words) != CF_OK)
            return cf_report_error();
        cf_shell_words_free(&words);
    }
    int k8s = 0;
    for (int i = 0; i < o->emit.n; i++)
        k8s |= strcmp(o->emit.items[i], "k8s") == 0;
    /* notes for a slip on the command line; a configuration file's defaults apply when --emit asks for them */
    int entrypoint = cf_cli_on_command_line(o, "entrypoint"), emit_dir = cf_cli_on_command_line(o, "emit-dir");
    if (o->emit.n == 0 && (entrypoint || emit_dir))
        cf_log_info("note: %s applies to --emit only; ignored", entrypoint ? "--entrypoint" : "--emit-dir");
    if (cf_cli_on_command_line(o, "node-selector") && !k8s)
        cf_log_info("note: --node-selector applies to --emit k8s only; ignored");
    if (o->compare_to && cf_cli_on_command_line(o, "base-branch"))
        cf_log_info("note: --base-branch chooses a baseline in the history; ignored with --compare-to");
    return 0;
}

int cf_recommend_ci_check_emit_paths(const cf_cli_options *o, const cf_spec *spec, char **positional,
                                     int n_positional)
{
    const char *spec_name = spec->job.name;
    if (o->emit.n == 0)
        return 0;
    cf_buf paths[CF_CLI_MORE_OUTPUTS_MAX], labels[CF_CLI_MORE_OUTPUTS_MAX];
    cf_path_role outputs[CF_CLI_MORE_OUTPUTS_MAX];
    size_t n = 0;
    cf_status st = CF_OK;
    for (int i = 0; st == CF_OK && i < o->emit.n && n < CF_CLI_MORE_OUTPUTS_MAX; i++) {
        int seen = 0; /* a kind given twice is one file (and there are CF_LAUNCH_KINDS kinds) */
        for (int j = 0; j < i; j++)
            seen |= strcmp(o->emit.items[j], o->emit.items[i]) == 0;
        if (seen)
            continue;
        paths[n] = (cf_buf)CF_BUF_INIT;
        labels[n] = (cf_buf)CF_BUF_INIT;
        st = cf_launch_spec_path(o->emit.items[i], o->emit_dir, spec_name, &paths[n]);
        if (o->emit_dir)
            cf_buf_printf(&labels[n], "option '--emit %s' (in --emit-dir '%s')", o->emit.items[i], o->emit_dir);
        else
            cf_buf_printf(&labels[n], "option '--emit %s' (in the working folder: no --emit-dir)", o->emit.items[i]);
        if (st == CF_OK && cf_buf_failed(&labels[n]))
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
        outputs[n] = (cf_path_role){cf_buf_cstr(&labels[n]), cf_buf_cstr(&paths[n]), NULL};
        n++;
    }
    int rc = st != CF_OK ? cf_report_error()
                         : cf_cli_check_more_outputs(o, positional, n_positional, spec, outputs, n,
                                                     "a launch spec's file name is fixed (the spec's name and "
                                                     ".sky.yaml, .torchrun.sh or .pytorchjob.yaml): choose another "
                                                     "--emit-dir");
    for (size_t i = 0; i < n; i++) {
        cf_buf_free(&paths[i]);
        cf_buf_free(&labels[i]);
    }
    return rc;
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
    /* the next measurement's command names the database: "***" would be tried as the password */
    cf_db_shareable(o->db_path && cf_db_is_postgresql(o->db_path) ? o->db_path : ctx->db_path, ctx->db_shareable,
                    sizeof ctx->db_shareable);
    return st == CF_OK ? 0 : cf_report_error();
}

/* A launch spec that cannot be staged: the message names the option and
 * the folder (the path alone does not say which option made it), and
 * where the target is a directory the hint says what works: the file name
 * is fixed, so fileio's "name a file in it" cannot be followed. */
static void emit_failed(const cf_cli_options *o, const cf_launch_spec *spec)
{
    struct stat st;
    if (o->emit_dir)
        cf_error_prefix("option '--emit %s' (in --emit-dir '%s')", spec->kind, o->emit_dir);
    else
        cf_error_prefix("option '--emit %s' (in the working folder: no --emit-dir)", spec->kind);
    if (stat(spec->path.data, &st) == 0 && S_ISDIR(st.st_mode))
        cf_error_hint("the launch spec's file name is fixed: remove or rename the directory '%s', or choose "
                      "another --emit-dir", spec->path.data);
}

int cf_recommend_ci_emit(const cf_cli_options *o, const cf_report *r, cf_staged_set *side, cf_buf *wrote)
{
    cf_launch_request req = {.kinds = (const char *const *)o->emit.items, .n_kinds = (size_t)o->emit.n,
                             .entrypoint = o->entrypoint,
                             .node_selectors = (const char *const *)o->node_selectors.items,
                             .n_node_selectors = (size_t)o->node_selectors.n, .dir = o->emit_dir};
    cf_launch_specs specs;
    cf_status st = cf_launch_specs_render(r, &req, &specs);
    for (size_t i = 0; st == CF_OK && i < specs.n; i++) {
        const cf_launch_spec *spec = &specs.items[i];
        if (o->emit_dir && (st = cf_staged_set_mkdir(side, o->emit_dir)) != CF_OK)
            cf_error_prefix("option '--emit-dir'");
        if (st == CF_OK &&
            (st = cf_staged_set_add_mode(side, spec->path.data, spec->text.data, spec->text.len, spec->mode)) != CF_OK)
            emit_failed(o, spec);
        if (st == CF_OK)
            cf_buf_printf(wrote, "wrote %s launch spec to %s\n", spec->kind, spec->path.data);
    }
    cf_launch_specs_free(&specs);
    return st == CF_OK ? 0 : cf_report_error();
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
    cf_db_close_discard_new(ctx->db); /* a history this run made and stored nothing in goes */
    ctx->db = NULL;
}
