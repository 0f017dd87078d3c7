/* The advisor's own half of cloudfit/advisor/spot_calibrate.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_SPOT_CALIBRATE_INTERNAL_H
#define CLOUDFIT_ADVISOR_SPOT_CALIBRATE_INTERNAL_H
#include "cloudfit/advisor/spot_calibrate.h"

/* Cuts a path to exactly `hours` (the last segments dropped or shortened). */
void cf_spot_path_truncate(cf_spot_path *p, double hours);

#endif
