#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/env_settings.h"
#include "cloudfit/common/proc.h"
#include "exit_codes.h"
#include "log.h"
#include "commands.h"
#include "config.h"
#include "io/db_open.h"

const cf_command cf_commands[] = {
    {"recommend", cmd_recommend, CMD_RECOMMEND, "recommend [options] MODEL.json",
     "rank cloud configurations (VM, nodes, batch, LR) for a training job"},
    {"version", cmd_version, CMD_VERSION, "version", "print the version and build features"},
    {"profile", cmd_profile, CMD_PROFILE, "profile [--backend cpu|cuda|exec] [options] MODEL.json",
     "measure step times, memory ceiling and gradient noise scale of the model"},
    {"help", cmd_help, CMD_HELP, "help [COMMAND] | help --man", "show help for a command, or the manual page"},
    {"completion", cmd_completion, CMD_COMPLETION, "completion bash|zsh",
     "print shell completion for bash or zsh, generated from the option table"},
    {"config", cmd_config, CMD_CONFIG, "config show [COMMAND [OPTIONS]]",
     "show each option's effective value and where it came from (docs/config.md)"},
    {"validate", cmd_validate, CMD_VALIDATE,
     "validate [options] MEASUREMENTS.csv | validate --gns TRACES.csv --models MODELS.csv | validate --crossgpu FILE",
     "score the throughput, noise and carry-over models against measurements"},
    {"history", cmd_history, CMD_HISTORY, "history [list] [filters] | history show ID | history diff ID1 ID2 | history prune --older-than AGE | history migrate --to URL",
     "query, compare and prune past recommendations"},
    {"record", cmd_record, CMD_RECORD, "record ID [--step-time-s S] [--total-hours H] [--total-usd USD] [--note TEXT]",
     "store what a real run measured; later recommendations use it"},
    {"prices", cmd_prices, CMD_PRICES, "prices [GPU[:N]] [--cloud C] [--region R] [--spot] | prices update [--cloud C]...",
     "show GPU prices from the catalog in use, or fetch current prices into a snapshot"},
    {"search", cmd_search, CMD_SEARCH, "search --runner trace:MEASUREMENTS.csv|exec:'COMMAND TEMPLATE' [options] MODEL.json",
     "find the best configuration with a few real probe runs (online search)"},
    {"simulate", cmd_simulate, CMD_SIMULATE, "simulate MODEL.json --trace TRACE.csv [--trace TRACE2.csv] [--rule fixed|linear|sqrt|gain|all]",
     "replay a spot availability trace against the plan: time, cost, restarts and progress per LR rule"},
    {"rebalance", cmd_rebalance, CMD_REBALANCE, "rebalance --global-batch M --workers N [options] < times.jsonl",
     "per-worker batch sizes that equalise iteration times (JSON lines: times in, batches out)"},
};
const size_t cf_command_count = sizeof cf_commands / sizeof *cf_commands;

const cf_command *cf_command_find(const char *name)
{
    for (size_t i = 0; i < cf_command_count; i++)
        if (strcmp(cf_commands[i].name, name) == 0)
            return &cf_commands[i];
    return NULL;
}

int cf_exit_code_for(cf_status status)
{
    switch (status) {
    case CF_OK: return CF_EXIT_OK;
    case CF_ERR_USAGE: return CF_EXIT_USAGE;
    case CF_ERR_INVALID: return CF_EXIT_DATA;
    case CF_ERR_INFEASIBLE: return CF_EXIT_INFEASIBLE;
    case CF_ERR_UNAVAILABLE:
    case CF_ERR_DOES_NOT_FIT: return CF_EXIT_UNAVAILABLE;
    case CF_ERR_INTERNAL: return CF_EXIT_INTERNAL;
    case CF_ERR_IO: return CF_EXIT_DATA;
    case CF_ERR_INTERRUPTED: return 128 + (cf_interrupted() ? cf_interrupted() : 2); /* 130 SIGINT, 143 SIGTERM */
    case CF_ERR_WRITE:
    case CF_ERR_NOMEM:
    case CF_ERR_DB:
    case CF_ERR_SYSTEM:
    case CF_ERR_NETWORK: return CF_EXIT_FAILURE;
    }
    return CF_EXIT_FAILURE;
}

int cf_report_error(void)
{
    cf_log_error("%s", cf_error_message());
    if (cf_error_hint_text()[0])
        cf_log_hint("%s", cf_error_hint_text());
    return cf_exit_code_for(cf_error_status());
}

/* The list of commands on standard error: a usage error's explanation. */
static void main_usage(void)
{
    cf_buf text = CF_BUF_INIT;
    cf_cli_command_list(NULL, &text);
    fputs(cf_buf_cstr(&text), stderr);
    cf_buf_free(&text);
}

static cf_color_mode color_mode(const char *when)
{
    if (when && strcmp(when, "always") == 0)
        return CF_COLOR_ALWAYS;
    if (when && strcmp(when, "never") == 0)
        return CF_COLOR_NEVER;
    return CF_COLOR_AUTO;
}

/* OpenBLAS starts its worker threads when the library is loaded, before
 * main, and an idle worker spins in sched_yield for about 2^28 cycles
 * before it sleeps: measured, a quarter of a `recommend` that does no BLAS
 * work at all, competing with it for the CPU. OpenBLAS offers no call to
 * stop the spinning but the one it uses itself around fork(),
 * blas_thread_shutdown_: it stops the workers, and OpenBLAS starts them
 * again on the next threaded product (the CPU engine asks for its threads
 * with openblas_set_num_threads). Weak, so another CBLAS links too. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

/* Better still, no workers at load: OpenBLAS reads OPENBLAS_NUM_THREADS in
 * its own constructor, which runs after this one (a priority runs before
 * the default). Under an address-space limit of 50–170 MiB a worker
 * retried its 128 MiB buffer forever and the join in main never returned
 * (every command hung at 100 % CPU). Unset again in main, so the probes
 * cloudfit starts see the user's environment. */
static int blas_threads_set_here;
__attribute__((constructor(101))) static void one_blas_thread_at_load(void)
{
    if (!getenv("OPENBLAS_NUM_THREADS") && setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0)
        blas_threads_set_here = 1;
}

int main(int argc, char **argv)
{
    if (blas_threads_set_here)
        unsetenv("OPENBLAS_NUM_THREADS");
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_)
        blas_thread_shutdown_();
    cf_log_init(CF_COLOR_AUTO, 0);
    /* SIGINT/SIGTERM/SIGHUP stop cleanly; cloudfit is the subreaper of
     * every process it starts (cloudfit/common/proc.h). */
    cf_proc_init();
    if (argc < 2) {
        main_usage();
        return CF_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cf_cli_print_command_list(NULL);
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(0, NULL, NULL, 0);
    const cf_command *cmd = cf_command_find(argv[1]);
    if (!cmd) {
        cf_log_error("'%s' is not a cloudfit command", argv[1]);
        cf_log_hint("see 'cloudfit --help' for the list of commands");
        return CF_EXIT_USAGE;
    }
    if (cmd->bit == CMD_CONFIG) /* parses the options of the command it shows */
        return cmd->run(argc - 1, argv + 1, NULL, 0);
    cf_cli_options opts;
    cf_cli_options_init(&opts);
    /* --color as given, before the options are parsed: a usage error or a
     * configuration file's error is coloured as the user asked */
    const char *color_arg = NULL;
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++) {
        if (strncmp(argv[i], "--color=", 8) == 0)
            color_arg = argv[i] + 8;
        else if (strcmp(argv[i], "--color") == 0 && i + 1 < argc)
            color_arg = argv[++i];
    }
    cf_log_init(color_mode(color_arg), 0);
    cf_log_hold(); /* notes from the options and the configuration file wait for -q */
    char problem[256];
    int found;
    for (size_t i = 0; (found = cf_env_setting_problem(i, problem, sizeof problem)) >= 0; i++)
        if (found) /* a tuning variable it cannot use: said, not ignored */
            cf_log_warning("%s", problem);
    int n_positional = 0;
    int rc = cf_cli_parse(cmd->bit, cmd->name, argc - 1, argv + 1, &opts, &n_positional);
    /* defaults from the environment and the configuration file (cli/config.h);
     * not for help, version and completion (CF_CLI_CONFIG_NOT_READ) */
    if (rc == 0 && !opts.help && !(cmd->bit & CF_CLI_CONFIG_NOT_READ))
        rc = cf_cli_config_apply(cmd->bit, cmd->name, &opts);
    if (!rc && opts.color && strcmp(opts.color, "auto") && strcmp(opts.color, "always") &&
        strcmp(opts.color, "never")) {
        cf_log_error("option '--color' expects auto, always or never, got '%s'", opts.color);
        cf_log_hint("colour is 'auto' by default: on a terminal, never with NO_COLOR or in CI");
        rc = CF_EXIT_USAGE;
    }
    cf_log_init(color_mode(opts.color ? opts.color : color_arg), opts.quiet ? -1 : 0); /* releases the notes */
    if (!rc) {
        if (opts.help)
            rc = cf_cli_print_command_help(cmd, &opts);
        else if (!(rc = cf_cli_check_outputs(&opts, argv + 2, n_positional)))
            rc = cmd->run(argc - 1, argv + 1, &opts, n_positional);
    }
    cf_cli_options_free(&opts);
    return rc;
}
