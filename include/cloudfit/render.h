/* The render module's front door: a result struct in, bytes out (a cf_buf
 * or a cJSON document the caller frees); no files, no database, no
 * network, no printing, no exit. The output formats are contracts every
 * user of libcloudfit needs, not only the executable: the recommendation
 * document (docs/output.md), the launch specs
 * (docs/launch.md), the history, prices, validate, search and simulate
 * results (cloudfit/render/<file>.h).
 *
 * Here: everything a renderer needs about one recommendation, computed
 * once and rendered many ways (table, JSON, markdown, launch specs). */
#ifndef CLOUDFIT_RENDER_H
#define CLOUDFIT_RENDER_H
#include <cjson/cJSON.h>

#include "cloudfit/advisor/elastic.h"
#include "cloudfit/advisor/explain.h"
#include "cloudfit/advisor/gates.h"
#include "cloudfit/advisor/hetero.h"
#include "cloudfit/advisor/inputs.h"
#include "cloudfit/common/buf.h"
#include "cloudfit/pricing/source.h"
#include "cloudfit/spec.h"
#include "cloudfit/common/ci_env.h"
#include "cloudfit/db/types.h"
#include "cloudfit/status.h"

typedef struct {
    const cf_spec *spec;
    const cf_catalog *catalog;
    const cf_inputs *inputs;
    const cf_advice *advice;
    const char *created_at;      /* ISO 8601 UTC */
    double catalog_age_days;
    size_t n_offers;             /* catalog rows that passed the filters */
    /* Where the prices came from (snapshot or embedded, age, overrides);
     * NULL = describe from `catalog` alone (issue 4). */
    const cf_catalog_source *catalog_source;
    /* CI (issue 5): metadata (NULL or provider "" = not in CI), the
     * previous recommendation (NULL = none) and gate outcomes. */
    const cf_ci_info *ci;
    const char *identity;        /* what baselines follow ("NAME@PATH", docs/ci.md); NULL = none */
    const cf_baseline *baseline;
    const cf_history_gate *gates;
    size_t n_gates;
    /* --mix: the best job mixing two GPU types (NULL = not asked). */
    const cf_hetero_advice *hetero;
    /* The history the command named (--db, CLOUDFIT_DB or the configuration
     * file; as shown: a URL's password redacted), which the next
     * measurement's command names too so that its profile lands where the
     * next `recommend` reads; NULL = the default history. */
    const char *history;
} cf_report;

/* The versioned recommendation document (docs/output.md); caller frees. */
cJSON *cf_report_json(const cf_report *report);
cJSON *cf_config_json(const cf_config *cfg);
/* A run's CI metadata (docs/output.md "metadata.ci"): null when not in CI,
 * else {provider, commit, branch, base_branch, pull_request, run, run_url}
 * with null for what the CI did not give. recommend's document and the
 * history's JSON (list, show) write it alike, so one test of "not set"
 * (`is None`) works on both. */
cJSON *cf_ci_json(const cf_ci_info *ci);
/* The human table and explanation. */
void cf_report_table(const cf_report *report, cf_buf *out, int color);
/* The same with the ranking fitted to `width` columns (0 = no limit;
 * cloudfit/render/text_table.h says what goes first). */
void cf_report_table_fit(const cf_report *report, cf_buf *out, int color, int width);
/* The SGR colour codes the table and the front chart write when `color`
 * is on (NULL-terminated): the output sanitiser lets exactly these
 * through (cli/term/output.h). */
extern const char *const cf_report_color_codes[];
/* A pull-request comment (GitHub-flavoured markdown), render/render_markdown.c. */
void cf_report_markdown(const cf_report *report, cf_buf *out);
/* Spot and elastic parts (render/render_spot.c, docs/spot.md). */
/* The elastic plan of the pick or the best spot plan, as the library
 * computed it (cf_advice_elastic, cloudfit/advisor/explain.h); NULL for
 * another configuration or when there is none. */
const cf_elastic_plan *cf_report_elastic(const cf_report *report, const cf_config *cfg);
cJSON *cf_report_elastic_json(const cf_report *report, const cf_config *cfg);
void cf_report_elastic_text(const cf_report *report, const cf_config *cfg, cf_buf *out);
cJSON *cf_config_spot_json(const cf_config *cfg);     /* NULL for on-demand */
/* How the configuration is bought, as every format names it: "" for
 * on-demand, "spot", "spot, est." (an estimated spot price) or "spot+od"
 * (spot with an on-demand fallback near the deadline, docs/spot.md). */
const char *cf_config_capacity_label(const cf_config *cfg);
void cf_report_spot_text(const cf_report *report, const cf_config *cfg, cf_buf *out);
void cf_report_side_by_side_text(const cf_report *report, cf_buf *out);
cJSON *cf_report_side_by_side_json(const cf_report *report);
void cf_report_side_by_side_markdown(const cf_report *report, cf_buf *out);
void cf_report_hetero_text(const cf_report *report, cf_buf *out);
/* Why --mix found no mix, one clause (cf_hetero_why_not). */
const char *cf_report_hetero_why_not(const cf_hetero_advice *hetero);
cJSON *cf_report_hetero_json(const cf_report *report);
/* The CI gates (render/render_gates.c, docs/ci.md): the "Gates" lines
 * appended to the table output (nothing when n == 0) and the JSON array
 * ({name, limit, value, passed, note}). */
void cf_gates_text(const cf_history_gate *gates, size_t n, cf_buf *out);
cJSON *cf_gates_json(const cf_history_gate *gates, size_t n);
/* A quantile as "q0.90", with more digits where it has them: "q0.9995"
 * (printed as q1.00 it read as certainty). */
void cf_report_quantile_text(double q, char *out, size_t n);
/* Launch specs for distributed engines (render/emit_*.c). `entrypoint` is the
 * training command (e.g. "train.py --epochs 90"). YAML via libyaml. */
cf_status cf_emit_skypilot(const cf_report *report, const char *entrypoint, cf_buf *out);
cf_status cf_emit_torchrun(const cf_report *report, const char *entrypoint, cf_buf *out);
cf_status cf_emit_k8s(const cf_report *report, const char *entrypoint, cf_buf *out);
/* The PyTorchJob with extra node selector labels ("KEY=VALUE", e.g. for a
 * cloud whose Kubernetes has no instance-type label: Lambda); they must
 * pass cf_emit_k8s_check_selectors (CF_ERR_USAGE naming one otherwise). A
 * key that cloudfit writes itself (kubernetes.io/arch, the instance type,
 * the spot label) takes the user's value instead. */
typedef struct {
    const char *const *node_selectors;
    size_t n_node_selectors;
} cf_emit_k8s_options;
cf_status cf_emit_k8s_with(const cf_report *report, const char *entrypoint, const cf_emit_k8s_options *k, cf_buf *out);
/* Each selector a Kubernetes label selector KEY=VALUE (its key a
 * qualified name: an optional DNS-1123 subdomain prefix and '/', then a
 * name), no key given twice. */
cf_status cf_emit_k8s_check_selectors(const char *const *selectors, size_t n);

/* The first of the table's Why lines, also the markdown's: the objective
 * among the configurations that meet the limits, and the figures (the
 * point, and the value at the confidence — a spot plan's check quantile)
 * the deadline and the budget were held to. No newline. */
void cf_report_constraint_text(const cf_report *r, const cf_config *c, cf_buf *out);

/* What the chosen plan's all-reduce between VMs rests on (a fitted probe,
 * a carried or given rate, or the default for its NIC; "one VM, ..." for a
 * plan on one VM): the table's "network:" line, the markdown's, and the
 * JSON's explanation.network.note. No newline. 1 when the plan has an
 * all-reduce between VMs, 0 on one VM. cf_report_network_is_guess:
 * the default on a NIC the catalog does not give, whose step interval
 * spans the catalog's NICs (CF_UNKNOWN_NIC_SLOWEST_GBPS to
 * CF_UNKNOWN_NIC_FIT_BOUND_GBPS), which the text says. */
int cf_report_network_text(const cf_report *r, const cf_config *c, cf_buf *out);
int cf_report_network_is_guess(const cf_report *r, const cf_config *c);

/* The note for a configuration whose node count is beyond every measurement
 * its network was fitted on (cf_config.network_measured_max_nodes > 0);
 * nothing otherwise. No newline. */
void cf_report_extrapolation_note(const cf_config *c, cf_buf *out);

/* The measurement worth buying (render/render_measure.c): its reason and
 * the `cloudfit profile --runner` command that runs it for the spec at
 * `spec_path` with `--db history` (none when `history` is NULL: the
 * default) (nothing for CF_MEASURE_NONE; no newline), and its JSON (null
 * for CF_MEASURE_NONE). */
void cf_next_measurement_text(const cf_next_measurement *m, const char *spec_path, const char *history, cf_buf *out);
void cf_next_measurement_command(const cf_next_measurement *m, const char *spec_path, const char *history,
                                 cf_buf *out);
cJSON *cf_next_measurement_json(const cf_next_measurement *m, const char *spec_path, const char *history);
/* The words before the command, the same in every format (the table's
 * line, the markdown, the HTML report): "REASON; then 'recommend' again.
 * Run it:" (nothing for CF_MEASURE_NONE). Each format escapes it as its
 * text and sets the command after it as its code. */
void cf_next_measurement_sentence(const cf_next_measurement *m, cf_buf *out);

#endif
