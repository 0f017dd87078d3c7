#include "cloudfit/render/plots.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* An optional positive number of a configuration's JSON (0 when absent):
 * the intervals exist only where the step-time model gives them. */
static double optional_number(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble > 0 ? v->valuedouble : 0;
}

static size_t gpu_index(cf_report_plots *p, const char *gpu)
{
    for (size_t i = 0; i < p->n_gpus; i++)
        if (strcmp(p->gpus[i], gpu) == 0)
            return i;
    if (p->n_gpus == CF_PLOT_MAX_GPUS) {
        p->other_gpus = 1; /* no colour left: it shares the last one, "other GPU types" */
        return CF_PLOT_MAX_GPUS - 1;
    }
    snprintf(p->gpus[p->n_gpus], sizeof p->gpus[0], "%s", gpu);
    return p->n_gpus++;
}

static int same_config(const cf_config *a, const cf_config *b)
{
    return a->vm == b->vm && a->spot == b->spot && a->nodes == b->nodes && a->local_batch == b->local_batch &&
           a->accumulation == b->accumulation;
}

/* `plotted`: the point is drawn on the front plot, so its GPU type joins the legend. */
static cf_status point_of(cf_report_plots *p, const cf_config *c, const cf_config *chosen, int plotted,
                          cf_plot_point *pt)
{
    memset(pt, 0, sizeof *pt);
    pt->config = c;
    pt->hours = c->hours;
    pt->usd = c->total_usd;
    pt->gpu = plotted ? gpu_index(p, c->vm->gpu_model) : 0;
    pt->chosen = same_config(c, chosen);
    cJSON *j = cf_config_json(c);
    if (!j)
        return cf_error_set(CF_ERR_NOMEM, "out of memory building the plots");
    double h10 = optional_number(j, "hours_p10"), h90 = optional_number(j, "hours_p90");
    double u10 = optional_number(j, "total_usd_p10"), u90 = optional_number(j, "total_usd_p90");
    cJSON_Delete(j);
    if (h10 > 0 && h90 >= h10) {
        pt->hours_p10 = h10;
        pt->hours_p90 = h90;
    }
    if (u10 > 0 && u90 >= u10) {
        pt->usd_p10 = u10;
        pt->usd_p90 = u90;
    }
    if (plotted && (pt->hours_p10 > 0 || pt->usd_p10 > 0))
        p->have_intervals = 1;
    return CF_OK;
}

cf_status cf_report_plots_build(const cf_report *r, cf_report_plots *p)
{
    memset(p, 0, sizeof *p);
    p->report = r;
    const cf_advice *a = r->advice;
    const cf_config *chosen = &a->ranked[0];
    const cf_constraints *limits = &r->spec->search;
    p->deadline_hours = limits->deadline_hours > 0 ? limits->deadline_hours : 0;
    p->budget_usd = limits->budget_usd > 0 ? limits->budget_usd : 0;
    cf_status st = point_of(p, chosen, chosen, 1, &p->chosen);
    p->front = calloc(a->n_pareto ? a->n_pareto : 1, sizeof *p->front);
    if (st != CF_OK || !p->front) {
        cf_report_plots_free(p);
        return st != CF_OK ? st : cf_error_set(CF_ERR_NOMEM, "out of memory building the plots");
    }
    for (size_t i = 0; i < a->n_pareto; i++) {
        if ((st = point_of(p, &a->pareto[i], chosen, 1, &p->front[i])) != CF_OK) {
            cf_report_plots_free(p);
            return st;
        }
        p->n_front++;
    }
    p->ranked = calloc(a->n_ranked ? a->n_ranked : 1, sizeof *p->ranked);
    if (!p->ranked) {
        cf_report_plots_free(p);
        return cf_error_set(CF_ERR_NOMEM, "out of memory building the plots");
    }
    for (size_t i = 0; i < a->n_ranked; i++) {
        if ((st = point_of(p, &a->ranked[i], chosen, 0, &p->ranked[i])) != CF_OK) {
            cf_report_plots_free(p);
            return st;
        }
        p->n_ranked++;
    }
    /* The curves, as the library computed them (cloudfit/advisor/explain.h). */
    const cf_advice_explained *e = a->explained;
    if (e && e->n_scaling) {
        p->scaling = malloc(e->n_scaling * sizeof *p->scaling);
        if (!p->scaling) {
            cf_report_plots_free(p);
            return cf_error_set(CF_ERR_NOMEM, "out of memory building the plots");
        }
        memcpy(p->scaling, e->scaling, e->n_scaling * sizeof *p->scaling);
        p->n_scaling = e->n_scaling;
    }
    if (e) {
        memcpy(p->stateff, e->stateff, e->n_stateff * sizeof *p->stateff);
        p->n_stateff = e->n_stateff;
        p->recipe_batch = e->recipe_batch;
    }
    return CF_OK;
}

void cf_report_plots_free(cf_report_plots *p)
{
    free(p->front);
    free(p->scaling);
    free(p->ranked);
    p->front = NULL;
    p->scaling = NULL;
    p->ranked = NULL;
    p->n_front = p->n_scaling = p->n_ranked = 0;
}
