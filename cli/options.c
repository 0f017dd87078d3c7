#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cloudfit/advisor/gates.h"
#include "cloudfit/advisor/rebalance.h"
#include "cloudfit/common/clock.h"
#include "cloudfit/common/buf.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/number.h"
#include "cloudfit/common/shell_words.h"
#include "cloudfit/common/text_wrap.h"
#include "cloudfit/advisor/search.h"
#include "cloudfit/profiler.h"
#include "cloudfit/profiler/runners.h"
#include "cloudfit/render.h"
#include "cloudfit/render/emit_common.h"
#include "cloudfit/spec/types.h"

/* A library default in a help text: the one constant, not a copy of its value. */
#define DEFAULT_TEXT_(value) #value
#define DEFAULT_TEXT(value) DEFAULT_TEXT_(value)
#include "commands.h"
#include "exit_codes.h"
#include "io/spec_load.h"
#include "log.h"

#define OFF(field) offsetof(cf_cli_options, field)

const cf_cli_option cf_cli_option_table[] = {
    {"help", 'h', OPT_FLAG, NULL, CMD_ALL, OFF(help), "show help for the command and exit"},
    /* One entry per meaning: an option several commands take with different
     * words has an entry per group of commands, so each --help says only
     * what that command does with it. */
    {"format", 'f', OPT_STRING, "FORMAT", CMD_RECOMMEND, OFF(format),
     "output format: table (default), json or markdown (a pull-request comment)"},
    {"format", 'f', OPT_STRING, "FORMAT", CMD_HISTORY | CMD_PRICES, OFF(format),
     "output format: table (default), json or csv"},
    {"format", 'f', OPT_STRING, "FORMAT", CMD_VALIDATE | CMD_PROFILE | CMD_SEARCH | CMD_SIMULATE, OFF(format),
     "output format: table (default) or json"},
    {"out-file", 'o', OPT_STRING, "PATH", CMD_RECOMMEND | CMD_SIMULATE | CMD_SEARCH | CMD_PROFILE, OFF(out_file),
     "write the result to PATH (atomically) instead of standard output (- is standard output)"},
    {"db", 0, OPT_STRING, "PATH|URL", CMD_RECOMMEND | CMD_HISTORY | CMD_RECORD | CMD_PRICES | CMD_PROFILE | CMD_SEARCH | CMD_SIMULATE, OFF(db_path),
     "history database: an SQLite file (default $XDG_DATA_HOME/cloudfit/history.db) or postgresql://…"},
    {"no-history", 0, OPT_FLAG, NULL, CMD_RECOMMEND | CMD_SEARCH, OFF(no_history), "do not record the recommendation"},
    {"top", 'n', OPT_INT, "N", CMD_RECOMMEND | CMD_SEARCH, OFF(top), "rows in the ranked table (default 10)"},
    {"objective", 0, OPT_STRING, "OBJ", CMD_RECOMMEND | CMD_SEARCH, OFF(objective),
     "cost (cheapest within the deadline), time (fastest within the budget) or balanced"},
    {"deadline-hours", 0, OPT_DOUBLE, "H", CMD_RECOMMEND | CMD_SEARCH, OFF(deadline_hours), "override search.deadline_hours"},
    {"budget-usd", 0, OPT_DOUBLE, "USD", CMD_RECOMMEND | CMD_SEARCH, OFF(budget_usd), "override search.budget_usd"},
    {"confidence", 0, OPT_STRING, "P", CMD_RECOMMEND | CMD_SEARCH | CMD_SIMULATE, OFF(confidence),
     "meet the deadline and budget with probability P under the model's uncertainty (e.g. 0.9 or 90%; default "
     "search.confidence, else 0.9)"},
    {"cloud", 0, OPT_LIST, "CLOUD", CMD_RECOMMEND | CMD_SEARCH | CMD_SIMULATE | CMD_PROFILE, OFF(clouds),
     "only this cloud (aws, gcp, azure, lambda); repeatable; overrides search.clouds"},
    {"cloud", 0, OPT_LIST, "CLOUD", CMD_PRICES, OFF(clouds),
     "only offers of this cloud (aws, gcp, azure, lambda); prices update: fetch only this cloud; repeatable"},
    {"cloud", 0, OPT_LIST, "CLOUD", CMD_HISTORY, OFF(clouds),
     "only recommendations on this cloud; repeatable (rows of any of them)"},
    {"region", 0, OPT_LIST, "REGION", CMD_RECOMMEND | CMD_SEARCH | CMD_SIMULATE | CMD_PROFILE, OFF(regions),
     "only this region; repeatable (in order of preference among equal prices)"},
    {"region", 0, OPT_LIST, "REGION", CMD_PRICES, OFF(regions),
     "only offers in this region; repeatable (in order of preference among equal prices)"},
    {"prefer-region", 0, OPT_LIST, "REGION", CMD_RECOMMEND | CMD_PRICES | CMD_SEARCH, OFF(prefer_regions),
     "where one offer costs the same in several regions, take this one first; repeatable, most preferred first "
     "(then --region's order, then the default list in docs/pricing.md)"},
    {"include-restricted-regions", 0, OPT_FLAG, NULL, CMD_RECOMMEND | CMD_PRICES | CMD_SEARCH,
     OFF(include_restricted_regions),
     "also offer regions where launching needs an access request (Azure's restricted regions; docs/pricing.md)"},
    {"gpu", 0, OPT_LIST, "GPU", CMD_RECOMMEND | CMD_SEARCH, OFF(gpus), "only this GPU model (or its name as nvidia-smi prints it, 'Tesla T4'); repeatable"},
    {"gpu", 0, OPT_LIST, "GPU", CMD_HISTORY, OFF(gpus),
     "only recommendations of this GPU model (or its name as nvidia-smi prints it, 'Tesla T4'); repeatable (rows "
     "of any of them)"},
    {"gpu", 0, OPT_LIST, "GPU[:N]", CMD_PRICES, OFF(gpus),
     "only this GPU model or family, as the GPU argument (GPU:N: N GPUs per VM); one is 'prices GPU' (its "
     "offers), several the summary of those; repeatable"},
    {"gpu", 0, OPT_LIST, "GPU", CMD_PROFILE, OFF(gpus), "with --runner: the GPU type to profile"},
    {"gpu", 0, OPT_LIST, "GPU", CMD_SIMULATE, OFF(gpus), "the GPU of each trace (or count column), in order"},
    {"spot", 0, OPT_STRING, "POLICY", CMD_RECOMMEND | CMD_SEARCH, OFF(spot), "spot VMs: never, allow or only"},
    {"max-nodes", 0, OPT_INT, "N", CMD_RECOMMEND | CMD_SEARCH | CMD_PROFILE, OFF(max_nodes), "override the spec's search.max_nodes (" DEFAULT_TEXT(CF_MAX_NODES_DEFAULT) " when neither is set)"},
    {"max-gpus", 0, OPT_INT, "N", CMD_RECOMMEND | CMD_SEARCH | CMD_PROFILE, OFF(max_gpus), "override the spec's search.max_gpus (" DEFAULT_TEXT(CF_MAX_GPUS_DEFAULT) " when neither is set)"},
    /* Not config's: it parses the options of the command it shows. */
    {"color", 0, OPT_STRING, "WHEN", CMD_ALL & ~CMD_CONFIG, OFF(color), "colour: auto (default), always or never"},
    {"quiet", 'q', OPT_FLAG, NULL, CMD_ALL & ~CMD_CONFIG, OFF(quiet), "no progress or informational lines on stderr"},
    {"width", 0, OPT_INT, "N", CMD_RECOMMEND | CMD_SEARCH | CMD_PRICES | CMD_HISTORY, OFF(width),
     "fit the table and text to N columns (default: the terminal's width; no limit when the output is not a terminal)"},
    {"wide", 0, OPT_FLAG, NULL, CMD_RECOMMEND | CMD_SEARCH | CMD_PRICES | CMD_HISTORY, OFF(wide),
     "every column and no wrapping, whatever the terminal's width"},
    {"man", 0, OPT_FLAG, NULL, CMD_HELP, OFF(man), "print the manual page (troff) generated from this table"},
    /* validate */
    {"gns", 0, OPT_STRING, "TRACES.csv", CMD_VALIDATE, OFF(gns_path),
     "validate iterations-to-target from gradient-noise traces instead of step times"},
    {"models", 0, OPT_STRING, "MODELS.csv", CMD_VALIDATE, OFF(models_path), "the traces' models table (with --gns)"},
    {"crossgpu", 0, OPT_STRING, "THROUGHPUT.csv", CMD_VALIDATE, OFF(crossgpu_path),
     "validate carrying single-GPU throughput across GPU types"},
    {"train-max-nodes", 0, OPT_INT, "N", CMD_VALIDATE, OFF(train_max_nodes),
     "fit on rows with at most N nodes (default 1: a single-node profile)"},
    {"with-2node-probe", 0, OPT_FLAG, NULL, CMD_VALIDATE, OFF(with_2node_probe),
     "also fit the 2-node × 1-GPU rows (placement 11)"},
    {"light-profile", 0, OPT_FLAG, NULL, CMD_VALIDATE, OFF(light_profile),
     "fit only what the search's light profile runs (1 GPU: 3 batches, the full node: 2; with --with-2node-probe the probe's 2)"},
    {"fit-all-rows", 0, OPT_FLAG, NULL, CMD_VALIDATE, OFF(fit_all_rows),
     "fit every row, score the rows the subset leaves out: the model's fit error there, a floor for prediction"},
    {"train-gpus", 0, OPT_LIST, "GPU[,GPU]", CMD_VALIDATE, OFF(train_gpus),
     "fit these GPU types (of the file's gpu column); predict the others by carrying the fit over"},
    {"params", 0, OPT_LIST, "NAME=COUNT", CMD_VALIDATE, OFF(params),
     "parameter count of a model in the CSV, 1 to 1e15 (overrides the built-in table; names match ignoring case and "
     "- _ .; the last given wins); repeatable"},
    {"inter-node-gbps", 0, OPT_DOUBLE, "GBPS", CMD_VALIDATE, OFF(inter_node_gbps),
     "nominal inter-node bandwidth instead of the catalog VM's"},
    {"model-constants", 0, OPT_LIST, "NAME=VALUE[,...]", CMD_VALIDATE, OFF(model_constants),
     "step-time model constants instead of the shipped ones (a, c, L, psi, rho_def, kappa_pcie, kappa_nvlink, kT, s0, "
     "u0, u_ext, u_def, u_ing, u_shape, u_shape_lo, a_min, a_max; docs/model.md); repeatable"},
    {"rows", 0, OPT_STRING, "FILE.csv", CMD_VALIDATE, OFF(rows_path),
     "also write every scored row with its prediction and 80 % interval as CSV to FILE (not the measurements file)"},
    {"train-epochs", 0, OPT_DOUBLE, "K", CMD_VALIDATE, OFF(train_epochs),
     "with --gns: use only the first K epochs of the M0 run"},
    /* price catalog choice and overrides (docs/pricing.md) */
    {"spot", 0, OPT_FLAG, NULL, CMD_PRICES, OFF(spot_only), "only offers with a spot price, sorted by it"},
    {"max-catalog-age-days", 0, OPT_DOUBLE, "DAYS", CMD_RECOMMEND | CMD_PRICES | CMD_SIMULATE | CMD_SEARCH | CMD_PROFILE,
     OFF(max_catalog_age_days),
     "warn when the price catalog is older than DAYS (default 30)"},
    {"price-overrides", 0, OPT_STRING, "FILE", CMD_RECOMMEND | CMD_PRICES | CMD_SIMULATE, OFF(price_overrides),
     "apply negotiated discounts and per-instance prices from FILE (JSON, docs/pricing.md)"},
    {"max-price-change", 0, OPT_DOUBLE, "FACTOR", CMD_PRICES, OFF(max_price_change),
     "prices update: keep out a price that moved by more than FACTOR× since the last catalog (default 3)"},
    /* CI gates and launch specs (docs/ci.md) */
    {"max-cost", 0, OPT_DOUBLE, "USD", CMD_RECOMMEND, OFF(max_cost_usd),
     "gate: exit 5 after printing the result when the predicted cost exceeds USD"},
    {"max-hours", 0, OPT_DOUBLE, "H", CMD_RECOMMEND, OFF(max_hours),
     "gate: exit 5 after printing the result when the predicted time exceeds H hours"},
    {"max-cost-increase", 0, OPT_STRING, "PCT%|USD", CMD_RECOMMEND, OFF(max_cost_increase),
     "gate: exit 5 when the cost rose by more than PCT% (e.g. 10%) or USD over the baseline"},
    {"compare-to", 0, OPT_STRING, "FILE.json", CMD_RECOMMEND, OFF(compare_to),
     "baseline: an earlier 'recommend --format json' document instead of the history"},
    {"base-branch", 0, OPT_STRING, "BRANCH", CMD_RECOMMEND, OFF(base_branch),
     "baseline: the last recommendation for this spec on BRANCH (default: the CI's target branch)"},
    {"baseline-key", 0, OPT_STRING, "KEY", CMD_RECOMMEND, OFF(baseline_key),
     "baseline: the spec's identity (default NAME@PATH: its name and its path in the git repository)"},
    {"require-baseline", 0, OPT_FLAG, NULL, CMD_RECOMMEND, OFF(require_baseline),
     "gate: exit 5 when there is no baseline to compare with"},
    {"emit", 0, OPT_LIST, "KIND", CMD_RECOMMEND, OFF(emit),
     "write a launch spec: skypilot, torchrun or k8s (PyTorchJob); repeatable"},
    {"emit-dir", 0, OPT_STRING, "DIR", CMD_RECOMMEND, OFF(emit_dir), "directory for --emit files (default .)"},
    {"entrypoint", 0, OPT_STRING, "CMD", CMD_RECOMMEND, OFF(entrypoint),
     "training command in launch specs (default train.py)"},
    {"node-selector", 0, OPT_LIST, "KEY=VALUE", CMD_RECOMMEND, OFF(node_selectors),
     "--emit k8s: also select nodes by this label (e.g. on Lambda, which has no instance-type label); repeatable"},
    {"report", 0, OPT_STRING, "FILE.html", CMD_RECOMMEND, OFF(report_path),
     "also write a self-contained HTML report: the time-cost front, scaling, statistical efficiency, alternatives"},
    {"plot", 0, OPT_STRING, "FILE.svg", CMD_RECOMMEND, OFF(plot_path),
     "also write the time-cost Pareto front as an SVG image"},
    {"no-chart", 0, OPT_FLAG, NULL, CMD_RECOMMEND, OFF(no_chart),
     "no text chart of the front after the table (it is shown only on a terminal)"},
    /* history and record */
    {"limit", 0, OPT_INT, "N", CMD_HISTORY, OFF(limit), "at most N rows (default 20; newest first)"},
    {"model", 0, OPT_STRING, "NAME", CMD_HISTORY, OFF(model), "only this spec name"},
    {"spec-hash", 0, OPT_STRING, "HASH", CMD_HISTORY, OFF(spec_hash), "only this spec hash (or a prefix of it)"},
    {"since", 0, OPT_STRING, "WHEN", CMD_HISTORY, OFF(since),
     "only rows created at or after WHEN: an age before now (7d, 12h, 90m, 2w) or a UTC date "
     "(YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]Z)"},
    {"until", 0, OPT_STRING, "WHEN", CMD_HISTORY, OFF(until),
     "only rows created before WHEN: an age before now (7d, 12h) or a UTC date (YYYY-MM-DD[THH:MM[:SS]Z])"},
    {"branch", 0, OPT_STRING, "BRANCH", CMD_HISTORY, OFF(branch), "only rows made in CI on BRANCH"},
    {"to", 0, OPT_STRING, "URL", CMD_HISTORY, OFF(migrate_to),
     "history migrate: copy the history into this database (postgresql://…; or an SQLite path)"},
    {"older-than", 0, OPT_STRING, "AGE", CMD_HISTORY, OFF(older_than),
     "history prune: delete rows older than AGE (30d, 12h) or created before an ISO date"},
    {"dry-run", 0, OPT_FLAG, NULL, CMD_HISTORY, OFF(dry_run),
     "history prune: list the rows it would delete and delete nothing"},
    {"step-time-s", 0, OPT_DOUBLE, "S", CMD_RECORD, OFF(step_time_s), "measured seconds per optimizer step"},
    {"total-hours", 0, OPT_DOUBLE, "H", CMD_RECORD, OFF(total_hours), "measured wall time of the whole run"},
    {"total-usd", 0, OPT_DOUBLE, "USD", CMD_RECORD, OFF(total_usd), "measured cost of the whole run"},
    {"note", 0, OPT_STRING, "TEXT", CMD_RECORD, OFF(note), "free text stored with the measurement (at most 255 bytes)"},
    /* profile (docs/profiler.md) */
    {"backend", 0, OPT_STRING, "NAME", CMD_PROFILE, OFF(backend),
     "probe backend: cpu (built-in engine), cuda or exec (profile.command); default profile.backend, else cpu"},
    {"csv", 0, OPT_STRING, "FILE", CMD_PROFILE, OFF(csv_path),
     "also write the measurements as CSV (columns of the Pollux throughput.csv) to FILE"},
    {"timeout", 0, OPT_DOUBLE, "S", CMD_PROFILE, OFF(timeout_s),
     "exec backend or --runner: stop a script that prints nothing for S seconds, " DEFAULT_TEXT(CF_PROBE_TIMEOUT_S_MIN) " to "
     DEFAULT_TEXT(CF_PROBE_TIMEOUT_S_MAX) " (default " DEFAULT_TEXT(CF_PROBE_TIMEOUT_S_DEFAULT) ")"},
    {"timeout", 0, OPT_DOUBLE, "S", CMD_SEARCH, OFF(timeout_s),
     "exec runner: stop a probe that prints nothing for S seconds, " DEFAULT_TEXT(CF_PROBE_TIMEOUT_S_MIN) " to "
     DEFAULT_TEXT(CF_PROBE_TIMEOUT_S_MAX) " (default " DEFAULT_TEXT(CF_PROBE_TIMEOUT_S_DEFAULT) ")"},
    {"noise-steps", 0, OPT_INT, "N", CMD_PROFILE, OFF(noise_steps),
     "training steps of the noise-scale run (default 200)"},
    {"noise-micro-batches", 0, OPT_INT, "K", CMD_PROFILE, OFF(noise_micro_batches),
     "micro-batches of the noise-scale run: the recipe batch split in K (2 to 64, default 8; e.g. the data-parallel "
     "workers, for per-worker norms)"},
    {"resume", 0, OPT_FLAG, NULL, CMD_PROFILE, OFF(resume),
     "re-run only what failed in the stored profile of this spec and backend (its noise run), keeping its sweep"},
    {"instance-type", 0, OPT_STRING, "TYPE", CMD_PROFILE, OFF(instance_type),
     "with --runner: run the full-VM runs (and, with exec, every run) on this instance type"},
    {"instance-type", 0, OPT_STRING, "TYPE", CMD_SIMULATE, OFF(instance_type), "the plan's VM (instance type)"},
    {"probe-nodes", 0, OPT_INT, "N", CMD_PROFILE, OFF(probe_nodes),
     "with --runner: run the probe on N VMs (default 2; e.g. the shape a recommendation's next measurement names)"},
    {"probe-gpus", 0, OPT_INT, "G", CMD_PROFILE, OFF(probe_gpus),
     "with --runner: GPUs per VM of the probe (default 1)"},
    /* search (docs/search.md) */
    {"runner", 0, OPT_STRING, "RUNNER", CMD_SEARCH, OFF(runner),
     "where probes run (required): trace:MEASUREMENTS.csv or exec:'COMMAND {nodes} {gpus_per_node} ...'"},
    {"runner", 0, OPT_STRING, "RUNNER", CMD_PROFILE, OFF(runner),
     "run the light profile and the 2-node probe of --gpu through trace:MEASUREMENTS.csv or "
     "exec:'COMMAND {nodes} {gpus_per_node} ...'"},
    {"trace-model", 0, OPT_STRING, "NAME", CMD_SEARCH | CMD_PROFILE, OFF(trace_model),
     "trace runner: use the CSV rows whose model column is NAME (default: the spec's name)"},
    {"trace-noise", 0, OPT_STRING, "PCT%", CMD_SEARCH | CMD_PROFILE, OFF(trace_noise),
     "trace runner: seeded multiplicative noise on every probe (default 2%)"},
    {"margin", 0, OPT_STRING, "PCT%", CMD_SEARCH, OFF(margin),
     "stop when no untried configuration can beat the best by more than PCT% (default 3%)"},
    {"safety-sds", 0, OPT_STRING, "Z", CMD_SEARCH, OFF(safety_sds),
     "the pick must meet the deadline and budget at exp(Z × its uncertainty) × the estimate (default: from --confidence)"},
    {"max-probes", 0, OPT_INT, "N", CMD_SEARCH, OFF(max_probes),
     "at most N probes after the light profile, the final measurement included (default 12)"},
    {"probe-steps", 0, OPT_INT, "N", CMD_SEARCH, OFF(probe_steps), "training steps per probe (default 50)"},
    {"probe-steps", 0, OPT_INT, "N", CMD_PROFILE, OFF(probe_steps), "training steps per profile run (default 20)"},
    {"seed", 0, OPT_INT, "N", CMD_SEARCH | CMD_PROFILE, OFF(seed),
     "seed of the trace noise, the random starts and the probe's CLOUDFIT_SEED (default 1)"},
    {"method", 0, OPT_STRING, "NAME", CMD_SEARCH, OFF(method),
     "cloudfit (default), or a baseline: model (profile + model, no probes), bo (plain Bayesian optimisation)"},
    {"price", 0, OPT_LIST, "GPU=USD", CMD_SEARCH | CMD_PROFILE, OFF(prices),
     "trace runner: price GPU at USD per GPU-hour instead of the catalog; repeatable"},
    {"trace-nic-gbps", 0, OPT_DOUBLE, "GBPS", CMD_SEARCH | CMD_PROFILE, OFF(trace_nic_gbps),
     "trace runner: the nominal NIC of the cluster the trace was measured on, " DEFAULT_TEXT(CF_TRACE_NIC_GBPS_MIN) " to "
     DEFAULT_TEXT(CF_TRACE_NIC_GBPS_MAX) " Gbit/s, for every configuration (default: the pricing VM's)"},
    {"probe-startup-s", 0, OPT_DOUBLE, "S", CMD_SEARCH, OFF(probe_startup_s),
     "charge S seconds of start-up (paid, no progress; at most 86400, a day) per profile run and probe (default 0)"},
    /* spot, elastic, heterogeneous (docs/spot.md) */
    {"mix", 0, OPT_FLAG, NULL, CMD_RECOMMEND, OFF(mix),
     "also try jobs that mix two GPU types in one cloud region (per-worker batches; speed-up over the chosen plan and over equal batches)"},
    {"trace", 0, OPT_LIST, "TRACE.csv", CMD_SIMULATE, OFF(traces),
     "availability trace (CSV t_s,nodes_available, or the public traces' JSON); give two to mix two VM types, one "
     "count per tick each, or one CSV with a count column per type"},
    {"rule", 0, OPT_STRING, "RULE", CMD_SIMULATE, OFF(rule),
     "LR rule while VMs are missing: fixed, linear, sqrt, gain or all (default all)"},
    {"batch", 0, OPT_STRING, "POLICY", CMD_SIMULATE, OFF(batch_policy),
     "global batch while VMs are missing: hold (accumulation, then the rule), shrink, or both (default)"},
    {"nodes", 0, OPT_INT, "N", CMD_SIMULATE, OFF(nodes),
     "VMs the plan requests (default: the trace's index.csv, else its path's N-node, else its largest count)"},
    {"gang", 0, OPT_FLAG, NULL, CMD_SIMULATE, OFF(gang), "run only while every requested VM is held (default elastic)"},
    {"calibrate", 0, OPT_STRING, "DIR", CMD_SIMULATE, OFF(calibrate_dir),
     "score the preemption model's p10/p50/p90 and check quantile on every trace in DIR (its index.csv, else every "
     "trace whose path describes its VMs), next to the band a correct model gives (docs/spot.md)"},
    {"fit", 0, OPT_STRING, "DIR", CMD_SIMULATE, OFF(fit_dir),
     "with --calibrate: the model fitted to the traces in DIR instead of the shipped table"},
    {"global-batch", 0, OPT_INT, "M", CMD_REBALANCE, OFF(global_batch), "the global batch the workers share (held fixed)"},
    {"workers", 0, OPT_INT, "N", CMD_REBALANCE, OFF(workers),
     "number of workers, 1 to " DEFAULT_TEXT(CF_REBALANCE_MAX_WORKERS) " (default: from --batches)"},
    {"batches", 0, OPT_STRING, "B1,B2,...", CMD_REBALANCE, OFF(batches),
     "initial per-worker batches, summing to the global batch (default: equal)"},
    {"max-batch", 0, OPT_STRING, "B|B1,B2,...", CMD_REBALANCE, OFF(max_batch),
     "per-worker memory limit (one value for all, or one per worker)"},
    {"dead-band", 0, OPT_STRING, "PCT%", CMD_REBALANCE, OFF(dead_band),
     "no change while the slowest worker is within PCT% of the fastest, or within the measured noise (default 3%)"},
    {"min-share", 0, OPT_STRING, "PCT%", CMD_REBALANCE, OFF(min_share),
     "warn when a worker's batch falls below PCT% of an equal share (default 25%)"},
    {"window", 0, OPT_INT, "N", CMD_REBALANCE, OFF(window),
     "iterations averaged per update, 1 to " DEFAULT_TEXT(CF_REBALANCE_MAX_WINDOW) " (default " DEFAULT_TEXT(
         CF_REBALANCE_WINDOW) ")"},
    {"controller", 0, OPT_STRING, "KIND", CMD_REBALANCE, OFF(controller),
     "p (proportional, default) or pi (proportional-integral)"},
};
const size_t cf_cli_option_count = sizeof cf_cli_option_table / sizeof *cf_cli_option_table;
_Static_assert(sizeof cf_cli_option_table / sizeof *cf_cli_option_table <= CF_CLI_MAX_OPTIONS,
               "raise CF_CLI_MAX_OPTIONS");

void cf_cli_options_init(cf_cli_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->top = -1;
    opts->width = -1;
    opts->deadline_hours = -1;
    opts->budget_usd = -1;
    opts->max_nodes = -1;
    opts->max_gpus = -1;
    opts->probe_nodes = -1;
    opts->probe_gpus = -1;
    opts->train_max_nodes = -1;
    opts->inter_node_gbps = -1;
    opts->train_epochs = -1;
    opts->max_cost_usd = -1;
    opts->max_hours = -1;
    opts->limit = -1;
    opts->step_time_s = -1;
    opts->total_hours = -1;
    opts->total_usd = -1;
    opts->max_catalog_age_days = -1;
    opts->max_price_change = -1;
    opts->timeout_s = -1;
    opts->noise_steps = -1;
    opts->noise_micro_batches = -1;
    opts->max_probes = -1;
    opts->probe_steps = -1;
    opts->seed = -1;
    opts->probe_startup_s = -1;
    opts->trace_nic_gbps = -1;
    opts->nodes = -1;
    opts->global_batch = -1;
    opts->workers = -1;
    opts->window = -1;
}

void cf_cli_options_free(cf_cli_options *opts)
{
    for (size_t i = 0; i < cf_cli_option_count; i++) {
        if (cf_cli_option_table[i].kind != OPT_LIST)
            continue;
        cf_cli_list *list = (cf_cli_list *)((char *)opts + cf_cli_option_table[i].offset);
        free(list->items);
        memset(list, 0, sizeof *list);
    }
}

/* The range of an integer option: where the command's own limits are
 * narrower than the general 1 to 1000000, the option's usage error says
 * them (it said "1 to 1000000" for --workers 0, whose limit is 1024, and
 * for --noise-micro-batches 0, which takes 2 to 64). */
static int int_option_range(const cf_cli_option *o, int *min)
{
    static const struct {
        const char *name;
        int min, max;
    } limits[] = {{"workers", 1, CF_REBALANCE_MAX_WORKERS},
                  {"window", 1, CF_REBALANCE_MAX_WINDOW},
                  {"noise-micro-batches", 2, CF_PROBE_MAX_MICRO},
                  {"nodes", 1, CF_ADVISE_MAX_NODES}};
    *min = 1;
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++)
        if (strcmp(o->long_name, limits[i].name) == 0) {
            *min = limits[i].min;
            return limits[i].max;
        }
    return 1000000;
}

/* The range of a number option whose meaning bounds it, in its unit ("seconds"), or NULL: the others
 * take any positive number (or are checked against the spec's range where they override it).
 * --timeout 1e-300 timed every probe out at once, --trace-nic-gbps 1e-300 predicted 4.7e-21 s steps. */
static const char *double_option_range(const cf_cli_option *o, double *min, double *max, const char **note)
{
    static const struct {
        const char *name;
        double min, max;
        const char *unit, *note;
    } limits[] = {{"timeout", CF_PROBE_TIMEOUT_S_MIN, CF_PROBE_TIMEOUT_S_MAX, "seconds", " (a day)"},
                  {"trace-nic-gbps", CF_TRACE_NIC_GBPS_MIN, CF_TRACE_NIC_GBPS_MAX, "Gbit/s", ""},
                  {"probe-startup-s", 0, CF_SEARCH_PROBE_STARTUP_MAX_S, "seconds", " (a day per run)"}};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++)
        if (strcmp(o->long_name, limits[i].name) == 0) {
            *min = limits[i].min;
            *max = limits[i].max;
            *note = limits[i].note;
            return limits[i].unit;
        }
    return NULL;
}

static int usage_error(const char *command, const char *fmt, ...) CF_PRINTF(2, 3);
static int usage_error(const char *command, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    cf_log_error("%s", message);
    cf_log_hint("see 'cloudfit %s --help'", command);
    return CF_EXIT_USAGE;
}

static const char *shown_arg(const char *arg, char *out, size_t n)
{
    cf_escape_into(arg, out, n);
    return out;
}

/* Whether option o names a file or folder (its value any bytes, like a
 * file name) rather than text that is stored, shown or sent as UTF-8. */
static int names_a_path(const cf_cli_option *o)
{
    static const char *const marks[] = {"PATH", "FILE", "DIR", "URL", "RUNNER", ".csv"};
    for (size_t i = 0; o->arg_name && i < sizeof marks / sizeof *marks; i++)
        if (strstr(o->arg_name, marks[i]))
            return 1;
    return 0;
}

/* `arg` as stored: a value of an any-case set in its own spelling. */
static const char *stored_spelling(const cf_cli_option *o, const char *arg);

static int store(const cf_cli_option *o, const char *command, const char *arg, cf_cli_options *opts)
{
    char *field = (char *)opts + o->offset;
    arg = stored_spelling(o, arg);
    char shown[128];
    long bad;
    /* Text is UTF-8: a note, a branch or a key with another byte was stored
     * raw by SQLite and refused by PostgreSQL ("invalid byte sequence"),
     * and a launch spec's YAML could not hold it. */
    if ((o->kind == OPT_STRING || o->kind == OPT_LIST) && arg && !names_a_path(o) && (bad = cf_utf8_invalid_at(arg)) >= 0)
        return usage_error(command, "option '--%s' is not valid UTF-8 (byte %ld of '%s')", o->long_name, bad + 1,
                           shown_arg(arg, shown, sizeof shown));
    switch (o->kind) {
    case OPT_FLAG: {
        /* --FLAG, --FLAG=true or --FLAG=false (a true from the config file
         * is not otherwise undone on the command line) */
        int value = 1;
        if (arg && (!strcmp(arg, "false") || !strcmp(arg, "no") || !strcmp(arg, "0")))
            value = 0;
        else if (arg && strcmp(arg, "true") && strcmp(arg, "yes") && strcmp(arg, "1"))
            return usage_error(command, "option '--%s' takes no value, or =true or =false; got '%s'", o->long_name,
                               shown_arg(arg, shown, sizeof shown));
        *(int *)field = value;
        opts->flag_given[o - cf_cli_option_table] = 1;
        return 0;
    }
    case OPT_STRING: *(const char **)field = arg; return 0;
    case OPT_INT: {
        int v = 0, min = 1, max = int_option_range(o, &min);
        cf_number_result r = cf_number_int(arg, min, max, &v);
        if (r != CF_NUMBER_OK && min == 1)
            return usage_error(command, "option '--%s' expects a positive integer (1 to %d), got '%s' (%s)",
                               o->long_name, max, shown_arg(arg, shown, sizeof shown), cf_number_why(r));
        if (r != CF_NUMBER_OK)
            return usage_error(command, "option '--%s' expects an integer from %d to %d, got '%s' (%s)",
                               o->long_name, min, max, shown_arg(arg, shown, sizeof shown), cf_number_why(r));
        *(int *)field = v;
        return 0;
    }
    case OPT_DOUBLE: {
        /* an amount of money (USD) is spelt as every money option takes it: 100 or $100 */
        int usd = o->arg_name && strcmp(o->arg_name, "USD") == 0;
        const char *what = usd ? "a positive number of US dollars (100 or $100)" : "a positive number";
        double v = 0;
        char why[96] = "";
        cf_number_result r = usd ? cf_number_usd(arg, -HUGE_VAL, HUGE_VAL, &v, why, sizeof why)
                                 : cf_number_double(arg, -HUGE_VAL, HUGE_VAL, &v);
        double lo = 0, hi = HUGE_VAL;
        const char *note = "", *unit = double_option_range(o, &lo, &hi, &note);
        char range[128], lo_text[32], hi_text[32];
        if (unit) { /* "seconds from 1 to 86400 (a day)", whatever is wrong with the value */
            cf_number_plain_text(lo, CF_NUMBER_AS_GIVEN, lo_text, sizeof lo_text);
            cf_number_plain_text(hi, CF_NUMBER_AS_GIVEN, hi_text, sizeof hi_text);
            snprintf(range, sizeof range, "%s from %s to %s%s", unit, lo_text, hi_text, note);
            what = range;
        }
        if (r == CF_NUMBER_OK && unit && !(v >= lo && v <= hi))
            return usage_error(command, "option '--%s' expects %s, got '%s'", o->long_name, what,
                               shown_arg(arg, shown, sizeof shown));
        if (r == CF_NUMBER_OK && v == 0 && cf_cli_option_takes_zero(o)) {
            *(double *)field = 0;
            return 0;
        }
        if (r == CF_NUMBER_OK && v <= 0)
            return usage_error(command, "option '--%s' expects %s, got '%s'%s", o->long_name, what,
                               shown_arg(arg, shown, sizeof shown), v < 0 ? " (negative)" : "");
        if (r != CF_NUMBER_OK)
            return usage_error(command, "option '--%s' expects %s, got '%s' (%s)", o->long_name, what,
                               shown_arg(arg, shown, sizeof shown),
                               usd ? why : cf_number_explain(arg, r, why, sizeof why));
        *(double *)field = v;
        return 0;
    }
    case OPT_LIST: {
        cf_cli_list *list = (cf_cli_list *)field;
        if (list->n == list->cap) {
            int cap = list->cap ? 2 * list->cap : 8;
            const char **items = realloc(list->items, (size_t)cap * sizeof *items);
            if (!items)
                return usage_error(command, "out of memory storing option '--%s'", o->long_name);
            list->items = items;
            list->cap = cap;
        }
        list->items[list->n++] = arg;
        return 0;
    }
    }
    return CF_EXIT_INTERNAL;
}

/* Whether `command` has an option named `name`. */
static int command_has(unsigned command, const char *name)
{
    for (size_t i = 0; i < cf_cli_option_count; i++)
        if ((cf_cli_option_table[i].commands & command) && strcmp(cf_cli_option_table[i].long_name, name) == 0)
            return 1;
    return 0;
}

int cf_cli_parse(unsigned command, const char *command_name, int argc, char **argv, cf_cli_options *opts,
                 int *out_first_positional)
{
    /* The command's own options, then every other command's long option
     * this one lacks: those are ignored with a note (an option of another
     * command is a slip, or a shared alias, not a reason to stop), while
     * a word no command knows stays an error. */
    enum { MAX_LONG = 192 };
    struct option longopts[MAX_LONG + 1];
    char shortopts[128] = "-:"; /* "-": positionals in order as code 1; ":": report missing arguments */
    size_t n_long = 0, n_short = 2;
    const cf_cli_option *by_index[MAX_LONG];
    int foreign[MAX_LONG];
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < cf_cli_option_count && n_long < MAX_LONG; i++) {
            const cf_cli_option *o = &cf_cli_option_table[i];
            int own = (o->commands & command) != 0;
            if (pass == 0 ? !own : own || command_has(command, o->long_name))
                continue;
            int seen = 0;
            for (size_t k = 0; pass == 1 && k < n_long; k++)
                seen |= strcmp(longopts[k].name, o->long_name) == 0;
            if (seen)
                continue;
            int has_arg = o->kind == OPT_FLAG ? optional_argument : required_argument;
            longopts[n_long] = (struct option){o->long_name, has_arg, NULL, 256 + (int)n_long};
            by_index[n_long] = o;
            foreign[n_long] = pass;
            if (pass == 0 && o->short_name) {
                shortopts[n_short++] = (char)o->short_name;
                if (has_arg == required_argument) /* a short flag takes no value: -q, -h */
                    shortopts[n_short++] = ':';
            }
            n_long++;
        }
    longopts[n_long] = (struct option){0, 0, 0, 0};
    shortopts[n_short] = '\0';
    optind = 0; /* restart: GNU getopt re-initialises on 0 */
    opterr = 0;
    int n_pos = 0;
    char *positional[256];
    for (;;) {
        int c = getopt_long(argc, argv, shortopts, longopts, NULL);
        if (c == -1)
            break;
        if (c == 1) { /* positional, in order */
            if (n_pos < 256)
                positional[n_pos++] = optarg;
            continue;
        }
        const cf_cli_option *o = NULL;
        if (c >= 256) {
            if (foreign[c - 256]) {
                cf_log_info("note: '%s' has no option --%s; ignored (see 'cloudfit %s --help')", command_name,
                            by_index[c - 256]->long_name, command_name);
                continue;
            }
            o = by_index[c - 256];
        } else if (c != '?' && c != ':') {
            for (size_t i = 0; i < n_long; i++)
                if (!foreign[i] && by_index[i]->short_name == c)
                    o = by_index[i];
        }
        if (!o) {
            const char *bad = argv[optind - 1];
            /* inside a cluster of short options optind has not moved: the
             * character itself (-q=false was "unknown option 'recommend'") */
            if (c == '?' && optopt > 0 && optopt < 256) {
                const char *cluster = "";
                for (int i = 1; i < argc && !cluster[0]; i++)
                    if (argv[i][0] == '-' && argv[i][1] && argv[i][1] != '-' && strchr(argv[i] + 1, optopt))
                        cluster = argv[i];
                if (strlen(cluster) == 2) /* the option alone, not a cluster: "unknown option '-1' in '-1'" */
                    cluster = "";
                return usage_error(command_name, "unknown option '-%c'%s%s%s%s", optopt, cluster[0] ? " in '" : "",
                                   cluster, cluster[0] ? "'" : "",
                                   optopt == '=' ? " (a short option takes no '=value'; the long one does: --quiet=false)" : "");
            }
            if (c == ':')
                return usage_error(command_name, "option '%s' requires an argument", bad);
            /* a prefix of several long options (getopt takes a unique one) */
            char names[256] = "";
            size_t len = strncmp(bad, "--", 2) == 0 ? strcspn(bad + 2, "=") : 0;
            int n_match = 0;
            for (size_t i = 0; len > 0 && i < n_long; i++)
                if (strncmp(longopts[i].name, bad + 2, len) == 0 && n_match++ < 6)
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s--%s%s", n_match > 1 ? ", " : "",
                             longopts[i].name, foreign[i] ? " (another command's)" : "");
            if (n_match > 1)
                return usage_error(command_name, "ambiguous option '%.*s': %s%s; give the whole name", (int)len + 2,
                                   bad, names, n_match > 6 ? ", ..." : "");
            return usage_error(command_name, "unknown option '%s'", bad);
        }
        /* A value given as the next word that is itself a long option ("--branch $EMPTY --db URL" made
         * '--db' the branch and the URL a stray argument) is refused; "--branch=--db" still gives it. */
        if (optarg && optind >= 2 && optarg == argv[optind - 1] && strncmp(optarg, "--", 2) == 0) {
            char shown[80];
            shown_arg(optarg, shown, sizeof shown);
            cf_log_error("option '--%s' takes a value, got the option '%s' (an empty shell variable before it?)",
                         o->long_name, shown);
            /* as a shell reads it back: "--entrypoint='--nnodes=1 train.py'" stays one word */
            char word[96];
            snprintf(word, sizeof word, "--%s=%s", o->long_name, shown);
            cf_buf quoted = CF_BUF_INIT;
            cf_shell_word(&quoted, word);
            cf_log_hint("give the value, or write %s if the value begins with '--'",
                        cf_buf_failed(&quoted) ? word : cf_buf_cstr(&quoted));
            cf_buf_free(&quoted);
            return CF_EXIT_USAGE;
        }
        int rc = cf_cli_option_check_value(o, command, command_name, optarg);
        if (rc || (rc = store(o, command_name, optarg, opts)) != 0)
            return rc;
        opts->on_command_line[o - cf_cli_option_table] = 1;
    }
    for (int i = optind; i < argc && n_pos < 256; i++)
        positional[n_pos++] = argv[i];
    for (int i = 0; i < n_pos; i++)
        argv[1 + i] = positional[i];
    *out_first_positional = n_pos;
    return 0;
}

void cf_cli_options_help(unsigned command, int width, cf_buf *out)
{
    cf_buf text = CF_BUF_INIT;
    for (size_t i = 0; i < cf_cli_option_count; i++) {
        const cf_cli_option *o = &cf_cli_option_table[i];
        if (!(o->commands & command))
            continue;
        char left[64];
        int len = 0;
        if (o->short_name)
            len = snprintf(left, sizeof left, "-%c, --%s", o->short_name, o->long_name);
        else
            len = snprintf(left, sizeof left, "    --%s", o->long_name);
        if (o->arg_name)
            snprintf(left + len, sizeof left - (size_t)len, " %s", o->arg_name);
        /* The help beside the option, wrapped under itself (a long option
         * puts it on the next line); on a narrow terminal under the option. */
        int column = width <= 0 || width - 31 >= 30 ? 31 : 8;
        cf_buf line = CF_BUF_INIT;
        for (int k = 0; k < column; k++)
            cf_buf_puts(&line, " ");
        cf_buf_puts(&line, o->help);
        size_t start = text.len;
        cf_text_wrap_line(cf_buf_cstr(&line), line.len, width, column, &text);
        if (column == 31 && strlen(left) <= 28 && !cf_buf_failed(&text)) {
            char head[40];
            snprintf(head, sizeof head, "  %-28s ", left); /* 31 columns over the blanks */
            memcpy(text.data + start, head, 31);
        } else {
            cf_buf head = CF_BUF_INIT;
            cf_buf_printf(&head, "  %s\n", left);
            cf_buf_append(&head, text.data + start, text.len - start);
            text.len = start;
            cf_buf_append(&text, head.data, head.len);
            cf_buf_free(&head);
        }
        cf_buf_free(&line);
    }
    cf_buf_append(out, text.data ? text.data : "", text.len);
    if (cf_buf_failed(&text))
        out->failed = 1;
    cf_buf_free(&text);
}

/* Values an option's argument takes, where they are a fixed set: the option
 * table says what an option does, this what it takes (completion offers
 * them; `checked` ones are refused otherwise, wherever the value comes from). */
/* Cloud names ignore case (docs/pricing.md: `--cloud LAMBDA` is lambda, in
 * every command): a value is stored as its spelling here, so the spec, the
 * filters and the outputs see the one name. */
static const char *const CLOUD_NAMES[] = {"aws", "gcp", "azure", "lambda", NULL};

static const struct {
    const char *option;
    unsigned commands;
    const char *values;
    int checked; /* 0: offered only (history's --cloud filters stored rows, whatever they name; prices
                  * names the catalog's clouds with a "did you mean") */
    const char *const *any_case; /* the values, taken in any case and stored as spelt here; NULL: exact */
} known_values[] = {
    {"format", CMD_RECOMMEND, "table json markdown", 1, NULL},
    {"format", CMD_HISTORY | CMD_PRICES, "table json csv", 1, NULL},
    {"format", CMD_ALL & ~(CMD_RECOMMEND | CMD_HISTORY | CMD_PRICES), "table json", 1, NULL},
    {"objective", CMD_ALL, "cost time balanced", 1, NULL},
    {"spot", CMD_RECOMMEND | CMD_SEARCH, "never allow only", 1, NULL},
    {"rule", CMD_SIMULATE, "fixed linear sqrt gain all", 1, NULL},
    {"batch", CMD_SIMULATE, "hold shrink both", 1, NULL},
    {"controller", CMD_REBALANCE, "p pi", 1, NULL},
    {"cloud", CMD_HISTORY | CMD_PRICES, "aws gcp azure lambda", 0, CLOUD_NAMES}, /* prices checks against the catalog */
    {"cloud", CMD_ALL & ~(CMD_HISTORY | CMD_PRICES), "aws gcp azure lambda", 1, CLOUD_NAMES},
    {"color", CMD_ALL, "auto always never", 1, NULL},
    {"emit", CMD_ALL, "skypilot torchrun k8s", 1, NULL},
    {"backend", CMD_ALL, "cpu cuda exec", 1, NULL},
    {"method", CMD_ALL, "cloudfit model bo", 1, NULL},
};

static const char *stored_spelling(const cf_cli_option *o, const char *arg)
{
    for (size_t i = 0; arg && i < sizeof known_values / sizeof *known_values; i++) {
        if (strcmp(known_values[i].option, o->long_name) != 0)
            continue;
        for (const char *const *v = known_values[i].any_case; v && *v; v++)
            if (strcasecmp(*v, arg) == 0)
                return *v;
    }
    return arg;
}

static int known_values_row(const cf_cli_option *o, unsigned command)
{
    if (o->kind != OPT_STRING && o->kind != OPT_LIST)
        return -1;
    for (size_t i = 0; i < sizeof known_values / sizeof *known_values; i++)
        if (strcmp(known_values[i].option, o->long_name) == 0 && (known_values[i].commands & command) &&
            (o->commands & command))
            return (int)i;
    return -1;
}

const char *cf_cli_option_values(const cf_cli_option *o, unsigned command)
{
    int row = known_values_row(o, command);
    return row < 0 ? NULL : known_values[row].values;
}

/* Values outside a fixed set that still follow a rule of their own: checked
 * here with the library's parser, wherever the value comes from, so that
 * `config show COMMAND` refuses a configuration file's value as COMMAND does
 * (it showed "confidence": "1.5" that recommend then refused). */
typedef enum {
    RULE_PROBABILITY, RULE_FRACTION, RULE_SDS, RULE_NAME, RULE_WHEN, RULE_INCREASE, RULE_SELECTOR, RULE_WORDS,
    RULE_SIDE_FILE
} value_rule;
static const struct {
    const char *option;
    unsigned commands;
    value_rule rule;
    const char *expects; /* what a bad value is told it expects */
} value_rules[] = {
    {"confidence", CMD_ALL, RULE_PROBABILITY, "a probability from 0.5 to 0.999 (e.g. 0.9 or 90%)"},
    {"dead-band", CMD_ALL, RULE_FRACTION,
     "a percentage below 100% or a fraction below 1 (e.g. 3% or 0.03; a number without % is a fraction)"},
    {"min-share", CMD_ALL, RULE_FRACTION,
     "a percentage below 100% or a fraction below 1 (e.g. 25% or 0.25; a number without % is a fraction)"},
    /* the range said: "expects a fraction or a percentage" of --trace-noise 200% read as a contradiction */
    {"margin", CMD_ALL, RULE_FRACTION, "a fraction below 1 or a percentage below 100% (e.g. 3% or 0.03)"},
    {"trace-noise", CMD_ALL, RULE_FRACTION, "a fraction below 1 or a percentage below 100% (e.g. 2% or 0.02)"},
    {"safety-sds", CMD_ALL, RULE_SDS, "a number from 0 to 5"},
    /* every command that takes them: history's, prices' and profile's were
     * left to the command, so config show showed an empty one as in effect,
     * and profile --instance-type '' was looked up as a VM (exit 3) */
    {"gpu", CMD_ALL, RULE_NAME, "a name"},
    {"region", CMD_ALL, RULE_NAME, "a name"},
    {"db", CMD_ALL, RULE_NAME, "a file name or a postgresql:// URL"}, /* '' was read as no database at all */
    {"instance-type", CMD_ALL, RULE_NAME, "a name"},
    /* '' was a model of no trace row (exit 3), and no model constant at all (taken, exit 0) */
    {"trace-model", CMD_ALL, RULE_NAME, "a model name"},
    {"model-constants", CMD_ALL, RULE_NAME, "NAME=VALUE[,NAME=VALUE...]"},
    {"since", CMD_ALL, RULE_WHEN, NULL},
    {"until", CMD_ALL, RULE_WHEN, NULL},
    {"older-than", CMD_ALL, RULE_WHEN, NULL},
    {"max-cost-increase", CMD_ALL, RULE_INCREASE, NULL},
    {"node-selector", CMD_ALL, RULE_SELECTOR, NULL},
    {"entrypoint", CMD_ALL, RULE_WORDS, NULL},
    /* files written beside the result: '-' wrote a file named '-' where -o - is standard output */
    {"report", CMD_ALL, RULE_SIDE_FILE, "report.html"},
    {"plot", CMD_ALL, RULE_SIDE_FILE, "front.svg"},
    {"csv", CMD_PROFILE, RULE_SIDE_FILE, "profile.csv"},
    {"rows", CMD_VALIDATE, RULE_SIDE_FILE, "rows.csv"},
};

static int check_rule(const cf_cli_option *o, unsigned command, const char *command_name, const char *arg)
{
    for (size_t i = 0; i < sizeof value_rules / sizeof *value_rules; i++) {
        if (strcmp(value_rules[i].option, o->long_name) != 0 || !(value_rules[i].commands & command))
            continue;
        double v = -1, z;
        char when[32], shown[128];
        int as_given;
        cf_gate_limits scratch = {0};
        switch (value_rules[i].rule) {
        case RULE_PROBABILITY: v = cf_cli_parse_fraction(arg); v = v >= 0.5 && v <= 0.999 ? v : -1; break;
        case RULE_FRACTION: v = cf_cli_parse_fraction(arg); break;
        case RULE_SDS: v = cf_number_double(arg, 0, 5, &z) == CF_NUMBER_OK ? 1 : -1; break;
        case RULE_NAME: v = arg[0] ? 1 : -1; break;
        case RULE_WHEN:
            if (cf_when_parse(arg, when, sizeof when, &as_given) == CF_OK)
                return 0;
            cf_log_error("option '--%s': %s", o->long_name, cf_error_message());
            cf_log_hint("an age before now (30d, 12h, 90m, 2w) or a UTC date: e.g. '--%s 7d' or '--%s "
                        "2026-11-18T12:00:00Z'", o->long_name, o->long_name);
            cf_error_clear();
            return CF_EXIT_USAGE;
        case RULE_INCREASE:
            if (cf_gate_limits_set_increase(&scratch, arg) == CF_OK)
                return 0;
            usage_error(command_name, "option '--%s' %s", o->long_name, cf_error_message());
            cf_error_clear();
            return CF_EXIT_USAGE;
        case RULE_SELECTOR: return cf_emit_k8s_check_selectors(&arg, 1) == CF_OK ? 0 : cf_report_error();
        case RULE_SIDE_FILE:
            if (strcmp(arg, "-") != 0)
                return 0;
            cf_log_error("option '--%s' writes a file beside the result, not standard output: '-' would be a file "
                         "named '-'", o->long_name);
            cf_log_hint("name a file, e.g. '--%s %s' (-o - is the result on standard output)", o->long_name,
                        value_rules[i].expects);
            return CF_EXIT_USAGE;
        case RULE_WORDS: {
            cf_shell_words words;
            if (cf_emit_split_words(arg, &words) != CF_OK)
                return cf_report_error();
            cf_shell_words_free(&words);
            return 0;
        }
        }
        if (v < 0)
            return usage_error(command_name, "option '--%s' expects %s, got '%s'", o->long_name,
                               value_rules[i].expects, shown_arg(arg, shown, sizeof shown));
    }
    return 0;
}

int cf_cli_side_file_error(const char *long_name, const char *path)
{
    cf_error_prefix("option '--%s'", long_name);
    struct stat st;
    for (size_t i = 0; i < sizeof value_rules / sizeof *value_rules; i++)
        if (value_rules[i].rule == RULE_SIDE_FILE && !strcmp(value_rules[i].option, long_name) && path &&
            stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            cf_error_hint("name a file in it, e.g. '%s%s%s'", path, path[strlen(path) - 1] == '/' ? "" : "/",
                          value_rules[i].expects);
    return cf_report_error();
}

int cf_cli_option_check_value(const cf_cli_option *o, unsigned command, const char *command_name, const char *arg)
{
    int row = known_values_row(o, command);
    if (arg && (o->kind == OPT_STRING || o->kind == OPT_LIST) && (o->commands & command) && check_rule(o, command, command_name, arg))
        return CF_EXIT_USAGE;
    /* An empty file, folder or runner (-o "$UNSET") is a usage error where the options are read: -o '' ran
     * the whole command, then failed to write '' (exit 1); --compare-to '' was a missing file (exit 3).
     * (--emit-dir's own check says more, and without --emit the option is ignored.) */
    if (arg && !arg[0] && names_a_path(o) && (o->commands & command) && strcmp(o->long_name, "emit-dir") != 0)
        return usage_error(command_name, "option '--%s' expects %s, got ''", o->long_name,
                           strstr(o->arg_name, "RUNNER") ? "trace:MEASUREMENTS.csv or exec:'COMMAND TEMPLATE'"
                           : strstr(o->arg_name, "DIR")  ? "a folder name"
                           : strstr(o->arg_name, "URL")  ? "a postgresql:// URL or a file name"
                                                         : "a file name");
    if (row < 0 || !known_values[row].checked || !arg)
        return 0;
    const char *values = known_values[row].values;
    for (const char *const *v = known_values[row].any_case; v && *v; v++)
        if (strcasecmp(*v, arg) == 0)
            return 0;
    size_t len = strlen(arg);
    for (const char *p = values; *p;) {
        size_t n = strcspn(p, " ");
        if (n == len && len > 0 && strncmp(p, arg, n) == 0)
            return 0;
        p += n + (p[n] == ' ');
    }
    char shown[128], list[160] = "";
    for (const char *p = values; *p && strlen(list) + 2 < sizeof list; p++) /* "cost, time, balanced" */
        snprintf(list + strlen(list), sizeof list - strlen(list), *p == ' ' ? ", " : "%c", *p);
    cf_log_error("option '--%s' does not accept '%s'", o->long_name, shown_arg(arg, shown, sizeof shown));
    cf_log_hint("use one of: %s (see 'cloudfit %s --help')", list, command_name);
    return CF_EXIT_USAGE;
}

int cf_cli_option_takes_zero(const cf_cli_option *o) { return o->help && strstr(o->help, "(default 0)") != NULL; }

int cf_cli_on_command_line(const cf_cli_options *opts, const char *long_name)
{
    for (size_t i = 0; i < cf_cli_option_count; i++)
        if (opts->on_command_line[i] && strcmp(cf_cli_option_table[i].long_name, long_name) == 0)
            return 1;
    return 0;
}

size_t cf_cli_subcommand_options_given(const cf_cli_options *opts, unsigned command,
                                       const char *(*subcommands_of)(const char *long_name), const char **given)
{
    size_t n = 0;
    for (size_t i = 0; i < cf_cli_option_count && n < CF_CLI_MAX_OPTIONS; i++) {
        const char *name = cf_cli_option_table[i].long_name;
        if ((cf_cli_option_table[i].commands & command) && opts->on_command_line[i] && subcommands_of(name))
            given[n++] = name;
    }
    return n;
}

int cf_cli_option_store(const cf_cli_option *o, const char *command_name, const char *arg, cf_cli_options *opts)
{
    return store(o, command_name, arg, opts);
}
