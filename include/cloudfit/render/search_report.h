/* What `cloudfit search` prints: the probes, the accounting and, for the
 * final recommendation, the `recommend` formats (cloudfit/render.h) over the
 * search's estimates. */
#ifndef CLOUDFIT_RENDER_SEARCH_REPORT_H
#define CLOUDFIT_RENDER_SEARCH_REPORT_H
#include "cloudfit/advisor/search.h"
#include "cloudfit/render.h"

typedef struct {
    const cf_search_options *options;
    const cf_search_result *result;
    const char *runner;             /* "trace:FILE" / "exec:…" as given */
    const char *runner_note;        /* one line about the runner's data */
    const cf_search_score *score;   /* NULL unless the runner knows the truth (trace) */
    const double *true_step_s;      /* with score */
    /* the pick's intervals, training.current and the savings against it,
     * the prediction errors: computed by the library (cf_search_summarise) */
    const cf_search_summary *summary;
    /* --spot only and no spot plan meets the limits: the search's pick (the
     * on-demand configuration its probes measured, which the score and the
     * history row are of) is not a plan; the text says so */
    int no_spot_plan;
} cf_search_report;

/* The human part printed before the recommend table. */
void cf_search_text(const cf_search_report *sr, cf_buf *out);
/* "search" and "overall" objects added to the recommend document. */
void cf_search_json(const cf_search_report *sr, cJSON *doc);
/* The whole document: the `recommend` document of `final` (the search's
 * recommendation; NULL = the search chose nothing: the version, the
 * objective and "chosen": null), with cf_search_json's objects added. */
cJSON *cf_search_document(const cf_search_report *sr, const cf_spec *spec, const cf_report *final);
/* "T4 4×g4dn.12xlarge m=32" */
void cf_search_candidate_label(const cf_search_candidate *c, char *out, size_t n);

#endif
