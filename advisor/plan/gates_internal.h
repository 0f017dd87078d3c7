/* The advisor's own half of cloudfit/advisor/gates.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_GATES_INTERNAL_H
#define CLOUDFIT_ADVISOR_GATES_INTERNAL_H
#include "cloudfit/advisor/gates.h"

/* Whether any gate is asked for. */
int cf_gates_any(const cf_gate_limits *limits);

#endif
