/* (Private to advisor/.) The measurement worth buying (advisor/plan/next_measurement.c, docs/model.md
 * "The measurement worth buying"): of the measurements that would remove
 * one source of a plan's uncertainty — profiling a GPU type that was
 * carried over, or running the network at a shape it was not measured at
 * — the one that most reduces the risk of a wrong choice, with what it
 * costs. Pure computation over the advice. */
#ifndef CLOUDFIT_ADVISOR_NEXT_MEASUREMENT_H
#define CLOUDFIT_ADVISOR_NEXT_MEASUREMENT_H
#include "cloudfit/advisor.h"

/* Chooses the measurement from the advice of `in` (ranked, held back).
 * Only measurements of the chosen plan, the runner-up (the best ranked
 * plan of another GPU type or node count) and the held-back plan are
 * considered; one that can change the choice wins over one that only
 * narrows, then the larger narrowing of the chosen plan's cost, then the
 * cheaper. kind CF_MEASURE_NONE when nothing is left to measure. */
void cf_next_measurement_choose(const cf_advisor_input *in, const cf_advice *advice, cf_next_measurement *out);

#endif
