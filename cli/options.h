/* The one declarative option table: it drives getopt_long parsing,
 * per-command --help and the man page (cloudfit help --man). */
#ifndef CLOUDFIT_CLI_OPTIONS_H
#define CLOUDFIT_CLI_OPTIONS_H
#include <stddef.h>
#include <stdio.h>

#include "cloudfit/common/buf.h"

enum {
    CMD_RECOMMEND = 1u << 0,
    CMD_VERSION = 1u << 1,
    CMD_HELP = 1u << 2,
    CMD_COMPLETION = 1u << 14, /* high bits: new commands elsewhere take the next free ones */
    CMD_CONFIG = 1u << 15,
    CMD_PROFILE = 1u << 3,
    CMD_PRICES = 1u << 4,
    CMD_HISTORY = 1u << 5,
    CMD_RECORD = 1u << 6,
    CMD_SEARCH = 1u << 7,
    CMD_VALIDATE = 1u << 8,
    CMD_SIMULATE = 1u << 9,
    CMD_REBALANCE = 1u << 10,
    CMD_ALL = 0xffffu
};

/* A repeatable option's values, in order (no count limit; the strings are
 * argv's). cf_cli_options_free releases the arrays. */
typedef struct {
    const char **items;
    int n, cap;
} cf_cli_list;

#define CF_CLI_MAX_OPTIONS 160 /* entries of the option table, at most */

/* Every option's value; -1 / NULL / 0 mean "not given" as documented per field. */
typedef struct {
    int help;
    const char *format;          /* table | json */
    const char *out_file;
    const char *db_path;
    int no_history;
    int top;                     /* -1 = default */
    const char *objective;
    double deadline_hours;       /* < 0 = from spec */
    double budget_usd;           /* < 0 = from spec */
    cf_cli_list clouds, regions, gpus;
    cf_cli_list prefer_regions;  /* tie-break order of regions among equal prices */
    int include_restricted_regions; /* also regions that need an access request */
    const char *spot;
    int max_nodes, max_gpus;     /* -1 = from spec */
    const char *color;           /* auto | always | never */
    int quiet;
    int man;
    int width;                   /* --width N: fit tables and text to N columns; -1 = the terminal's */
    int wide;                    /* --wide: every column, nothing wrapped */
    /* CI gates, markdown, launch specs (recommend) — issue 5 */
    double max_cost_usd;         /* < 0 = no gate */
    double max_hours;            /* < 0 = no gate */
    const char *max_cost_increase; /* "10%" or "25" (USD); NULL = no gate */
    const char *compare_to;      /* earlier recommendation JSON */
    const char *base_branch;     /* branch whose last recommendation is the baseline */
    const char *baseline_key;    /* the spec's identity for baselines (default NAME@PATH in the repository) */
    int require_baseline;        /* gate: no baseline fails */
    cf_cli_list emit;            /* skypilot | torchrun | k8s */
    const char *emit_dir;        /* where launch specs go (default ".") */
    const char *entrypoint;      /* training command in launch specs */
    cf_cli_list node_selectors;  /* --emit k8s: extra node labels KEY=VALUE */
    const char *report_path;     /* recommend --report: HTML report */
    const char *plot_path;       /* recommend --plot: SVG of the time-cost front */
    int no_chart;                /* recommend: no text chart on a terminal */
    /* history / record */
    int limit;                   /* -1 = default */
    const char *model;           /* spec name filter */
    const char *spec_hash;
    const char *since, *until;
    const char *branch;
    const char *older_than;      /* 30d, 12h or an ISO date */
    const char *migrate_to;      /* history migrate: the database to copy into (a postgresql:// URL) */
    int dry_run;                 /* history prune: show, delete nothing */
    double step_time_s;          /* < 0 = not given */
    double total_hours;          /* < 0 = not given */
    double total_usd;            /* < 0 = not given */
    const char *note;
    /* prices, catalog choice, price overrides — issue 4 */
    double max_catalog_age_days; /* < 0 = default (30) */
    const char *price_overrides; /* overrides file (JSON) */
    int spot_only;               /* prices --spot */
    double max_price_change;     /* < 0 = default factor (3) */
    /* validate — issue 7 */
    const char *gns_path;        /* gradient-noise traces CSV */
    const char *models_path;     /* the traces' models CSV */
    const char *crossgpu_path;   /* cross-GPU throughput CSV */
    int train_max_nodes;         /* -1 = default (1) */
    int with_2node_probe;
    int light_profile;
    int fit_all_rows;
    cf_cli_list train_gpus;      /* comma lists allowed */
    cf_cli_list params;          /* NAME=COUNT */
    double inter_node_gbps;      /* < 0 = from the catalog */
    double train_epochs;         /* < 0 = all */
    /* profile — issue 3 */
    const char *backend;         /* cpu | cuda | exec; NULL = spec's profile.backend, else cpu */
    const char *csv_path;        /* measurements CSV to write */
    double timeout_s;            /* < 0 = default (120): exec silence allowed */
    int noise_steps;             /* -1 = default (200) */
    int noise_micro_batches;     /* -1 = default (8) */
    int resume;                  /* profile --resume: re-run what failed in the stored profile */
    const char *instance_type;   /* profile --runner: full-VM runs on this instance type; NULL = any */
    /* search — issue 6 */
    const char *runner;          /* trace:MEASUREMENTS.csv | exec:'COMMAND TEMPLATE' */
    const char *trace_model;     /* trace rows of this model; NULL = the spec's name */
    const char *trace_noise;     /* "2%" or "0.02"; NULL = default (2 %) */
    const char *margin;          /* "3%" or "0.03"; NULL = default (3 %) */
    int max_probes;              /* -1 = default (12) */
    const char *safety_sds;      /* 0 to 5; NULL = from --confidence */
    const char *confidence;      /* "0.9" or "90%": deadline and budget met with this probability; NULL = spec's */
    cf_cli_list model_constants; /* validate: NAME=VALUE of the step-time model's constants */
    const char *rows_path;       /* validate: per-row predictions as CSV */
    int probe_nodes;             /* profile --runner: the probe's VMs; 0 = 2 */
    int probe_gpus;              /* profile --runner: the probe's GPUs per VM; 0 = 1 */
    double trace_nic_gbps;       /* trace runner: the measured cluster's NIC for every configuration; < 0 = the VM's */
    int probe_steps;             /* -1 = default (50) */
    int seed;                    /* -1 = default (1) */
    const char *method;          /* cloudfit | model | bo; NULL = cloudfit */
    cf_cli_list prices;          /* GPU=USD_PER_GPU_HR */
    double probe_startup_s;      /* < 0 = default (0) */
    /* spot, elastic and heterogeneous plans — issue 15 (docs/spot.md) */
    cf_cli_list traces;          /* simulate: availability traces (one, or two to mix VM types) */
    const char *rule;            /* simulate: fixed | linear | sqrt | gain | all (default all) */
    const char *batch_policy;    /* simulate: hold | shrink | both (default both) */
    int nodes;                   /* simulate: requested VMs (-1 = from the trace) */
    int gang;                    /* simulate: run only while every requested VM is held */
    const char *calibrate_dir;   /* simulate: score the preemption model on every trace of this folder */
    const char *fit_dir;         /* simulate --calibrate: the model fitted to these traces, not the shipped one */
    int mix;                     /* recommend: also try jobs that mix two GPU types */
    int global_batch;            /* rebalance: -1 = required */
    int workers;                 /* rebalance: -1 = from --batches */
    const char *batches;         /* rebalance: initial per-worker batches "128,128" */
    const char *max_batch;       /* rebalance: per-worker limits "256,512" (or one for all) */
    const char *dead_band;       /* rebalance: "3%" */
    const char *min_share;       /* rebalance: the floor, "25%" of an equal share */
    int window;                  /* rebalance: iterations per update, -1 = default */
    const char *controller;      /* rebalance: p | pi */
    /* By option table index: a flag given at all, =true or =false (a
     * config file's true is turned off for one run with --FLAG=false). */
    unsigned char flag_given[CF_CLI_MAX_OPTIONS];
    /* By option table index: given on the command line (not by the
     * environment or the configuration file, whose defaults must not
     * trigger a subcommand's "does not apply" checks). */
    unsigned char on_command_line[CF_CLI_MAX_OPTIONS];
} cf_cli_options;

typedef enum { OPT_FLAG, OPT_STRING, OPT_INT, OPT_DOUBLE, OPT_LIST } cf_opt_kind;

typedef struct {
    const char *long_name;
    int short_name;              /* 0 = none */
    cf_opt_kind kind;
    const char *arg_name;        /* shown in help, NULL for flags */
    unsigned commands;           /* CMD_* bits that accept the option */
    size_t offset;               /* into cf_cli_options */
    const char *help;
} cf_cli_option;

extern const cf_cli_option cf_cli_option_table[];
extern const size_t cf_cli_option_count;

void cf_cli_options_init(cf_cli_options *opts);
void cf_cli_options_free(cf_cli_options *opts);
/* Parses argv (argv[0] is the command name) for `command`; positional
 * arguments are moved to the front of argv and counted in *out_npos.
 * Returns 0, or prints a usage error and returns the exit code. */
int cf_cli_parse(unsigned command, const char *command_name, int argc, char **argv, cf_cli_options *opts,
                 int *out_first_positional);
/* Stores one value of option `o` as the command line would (a flag's arg
 * is NULL or true/false; a repeatable option appends): the configuration
 * file's defaults go through it (cli/config.c). 0 or the exit code. */
int cf_cli_option_store(const cf_cli_option *o, const char *command_name, const char *arg, cf_cli_options *opts);
/* The words option `o` takes for `command` where they are a fixed set
 * ("cost time balanced"), or NULL: what completion offers after it. */
const char *cf_cli_option_values(const cf_cli_option *o, unsigned command);
/* Checks a value of option `o` for `command` against its fixed set, where
 * the set is the whole truth: 0, or a usage error printed and its exit
 * code. The command line and the configuration file both go through it,
 * so `config show` never shows a value the command refuses. */
int cf_cli_option_check_value(const cf_cli_option *o, unsigned command, const char *command_name, const char *arg);
/* Whether a number option takes 0: the one whose stated default is 0
 * ("(default 0)": --probe-startup-s 0, its default, was refused). */
int cf_cli_option_takes_zero(const cf_cli_option *o);
/* A file written beside the result (--report, --plot, --csv, --rows) could
 * not be staged: names the option in the message, and where the path is a
 * folder hints a file of the option's own kind in it (the library's hint
 * proposed 'DIR/out.json' for an HTML report). Prints; returns the exit code. */
int cf_cli_side_file_error(const char *long_name, const char *path);
/* Whether option --`long_name` was given on the command line. */
int cf_cli_on_command_line(const cf_cli_options *opts, const char *long_name);
/* The options of `command` given on the command line that only some of
 * its subcommands take (`subcommands_of` non-NULL for them: the library's
 * table, which the completion scripts read too), into given[] (room for
 * CF_CLI_MAX_OPTIONS); returns how many. */
size_t cf_cli_subcommand_options_given(const cf_cli_options *opts, unsigned command,
                                       const char *(*subcommands_of)(const char *long_name), const char **given);
/* Appends the option lines of `command` (for --help) to `out`, wrapped to
 * `width` columns (0 = no limit). */
void cf_cli_options_help(unsigned command, int width, cf_buf *out);

#endif
