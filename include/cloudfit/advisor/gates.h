/* CI gates (advisor/plan/gates.c, docs/ci.md): limits on the chosen
 * configuration's cost and time, and on its cost increase over a baseline
 * — the newest earlier recommendation for the same spec on the base
 * branch, or a recommendation document from an earlier run (--compare-to).
 * Pure computation: the caller reads the baseline (a history row, a file)
 * and decides what a failed gate does (the CLI: exit code 5). */
#ifndef CLOUDFIT_ADVISOR_GATES_H
#define CLOUDFIT_ADVISOR_GATES_H
#include <stddef.h>

#include "cloudfit/advisor.h"
#include "cloudfit/status.h"
#include "cloudfit/db/types.h"

#define CF_MAX_GATES 5

/* An earlier recommendation to compare with (also the markdown diff). */
typedef struct {
    int have;
    long long id;                /* history id, 0 when from a file */
    char source[400];            /* "recommendation 12 (main, 2026-…)" or the file name */
    char lookup[600];            /* what was looked for, said when nothing was found ("spec X on branch main in …") */
    char created_at[32];
    char catalog[96];            /* "embedded 2026-07-30" */
    char spec_hash[65];          /* its effective spec's hash ("" = unknown) */
    char job_name[65];           /* its spec's name ("" = unknown): a baseline of another job is said */
    char spec_changes[600];      /* "training.epochs 90 → 270; …", "" = unchanged or unknown (spec_known) */
    int spec_known;              /* 1: spec_changes lists every changed field (empty: the same spec) */
    char tool_version[32];       /* the cloudfit that made it ("" = unknown) */
    /* What changed since it in the evidence behind the prediction, as far
     * as the history tells ("1 recorded run since the baseline, prices
     * embedded 2026-07-30 → …"; "" = nothing it tells): the increase
     * gate's note says it after the spec's changes (the caller fills it) */
    char evidence_changes[400];
    /* The --price-overrides file its prices had, as its document says
     * (catalog.price_overrides): overrides_known 0 = not told (no
     * document); else overrides_file "" = none, and overrides_sha256 its
     * content ("" = not told: a document of an earlier cloudfit) */
    int overrides_known;
    char overrides_file[160];
    char overrides_sha256[65];
    cf_history_config chosen;
    double hours_p10, hours_p90, total_usd_p10, total_usd_p90; /* its 80 % intervals; NaN = unknown */
} cf_baseline;

typedef struct {
    double max_cost_usd;         /* <= 0: off */
    double max_hours;            /* <= 0: off */
    double max_increase;         /* < 0: off */
    int increase_is_pct;
    int require_baseline;        /* a missing baseline fails (gate require_baseline) */
} cf_gate_limits;

/* The largest limits a gate takes: the ranges of the spec's
 * search.deadline_hours (hours) and search.budget_usd (US dollars, and the
 * cost increase in either form). Past them a limit is another unit or a
 * typo, and the gate's note printed it cut to a wrong number ("limit
 * 10000000000000000525047602552044202487044685811 h" for 1e300). */
#define CF_GATE_MAX_HOURS 1e6
#define CF_GATE_MAX_USD 1e12

/* Sets the cost-increase limit from its text: "10%" is a percentage, "25"
 * or "$25" US dollars. CF_ERR_USAGE for anything else (a negative, not
 * finite or malformed number; "$10%"; more than CF_GATE_MAX_USD dollars or
 * percent), limits unchanged; the caller names the option. */
cf_status cf_gate_limits_set_increase(cf_gate_limits *limits, const char *text);
/* CF_ERR_USAGE naming the option (--max-cost, --max-hours) and the range
 * when a cost or hours limit is past CF_GATE_MAX_USD or CF_GATE_MAX_HOURS. */
cf_status cf_gate_limits_check(const cf_gate_limits *limits);
/* Whether a baseline's cost can be compared with: above 0 (a chosen plan
 * is never free) and at most 1e15, as a document's chosen.total_usd must
 * be; a history row's is held to the same (a damaged row's Infinity was
 * compared as is, and passed the gate: "-inf USD (-nan%)"). */
int cf_baseline_cost_usable(double total_usd);
/* A baseline cheaper than this shows as $0.00: its cost increase has no
 * percentage (as from $0), the increase was 1e301 % for $2e-299. */
#define CF_BASELINE_MIN_PCT_USD 0.005

/* Evaluates each gate asked for against the chosen configuration (its
 * total cost and hours, and against the baseline's cost; without a
 * baseline the increase gate passes with a note saying so, and
 * require_baseline fails); returns how many were written to out (at most
 * CF_MAX_GATES). A value equal to its limit passes. The increase gate's
 * note says what changed: the cost with its 80 % intervals, the spec's
 * fields (base->spec_changes), the evidence (base->evidence_changes, when
 * any) and the plan (GPU, nodes, hours with their intervals). */
size_t cf_gates_evaluate(const cf_gate_limits *limits, const cf_config *chosen, const cf_baseline *base,
                         cf_history_gate *out);
/* Whether every gate in gates[0..n) passed (a look-up: renderers use it). */
static inline int cf_gates_passed(const cf_history_gate *gates, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!gates[i].passed)
            return 0;
    return 1;
}

/* A baseline from the text of a recommendation document (`path` names it
 * in messages): its chosen configuration, every count a whole number that
 * fits its field and every amount finite and not negative, else
 * CF_ERR_INVALID naming the key (chosen.nodes) with a hint. */
cf_status cf_baseline_from_text(const char *text, size_t len, const char *path, cf_baseline *out);
/* The price overrides of a baseline from its recommendation document's
 * text (a history row's result_json): overrides_known stays 0 when the
 * text is no JSON object. */
void cf_baseline_overrides_from_text(const char *text, cf_baseline *out);

/* The 80 % intervals of a configuration's wall time and cost, as its
 * output shows them: the preemption Monte Carlo's p10/p90 for a spot plan
 * (the mixed plan's when it is the one chosen), else the model's. */
void cf_config_intervals(const cf_config *c, double *hours_p10, double *hours_p90, double *usd_p10, double *usd_p90);

/* A configuration in the form the history stores it, at `rank`. */
void cf_history_config_from(const cf_config *c, int rank, cf_history_config *out);

#endif
