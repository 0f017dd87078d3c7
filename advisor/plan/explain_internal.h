/* The advisor's own half of cloudfit/advisor/explain.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_EXPLAIN_INTERNAL_H
#define CLOUDFIT_ADVISOR_EXPLAIN_INTERNAL_H
#include "cloudfit/advisor/explain.h"

/* Computes advice->explained for its ranked[0] (and best_spot) from the
 * inputs the advice was made with (replacing any earlier one); nothing
 * when the advice has no pick. CF_ERR_NOMEM only: a plan or curve the
 * model cannot make is left out (NULL / empty; for the pick's plan, the
 * status and message say why). */
cf_status cf_advice_explain(const cf_advisor_input *in, cf_advice *advice);
void cf_advice_explained_free(cf_advice_explained *e);

#endif
