#include <math.h>

#include "cloudfit/advisor/spot.h"

#define HOURS_PER_MONTH 730.0

/* Expected time factor with preemptions: checkpoint every τ = √(2·C·MTBF)
 * (Young); each preemption loses half an interval plus a restart. The
 * cluster is interrupted when any of its nodes is, so the rate is N·λ. */
double cf_spot_time_factor(double interruptions_pct_per_month, int nodes, double checkpoint_hours,
                           double restart_hours, double *out_checkpoint_interval_hours)
{
    double rate_per_node_hr = interruptions_pct_per_month / 100.0 / HOURS_PER_MONTH;
    double rate_hr = rate_per_node_hr * nodes;
    if (rate_hr <= 0) {
        if (out_checkpoint_interval_hours)
            *out_checkpoint_interval_hours = INFINITY;
        return 1.0;
    }
    double c = checkpoint_hours > 0 ? checkpoint_hours : 1.0 / 60.0;
    double interval = sqrt(2.0 * c / rate_hr);
    if (out_checkpoint_interval_hours)
        *out_checkpoint_interval_hours = interval;
    double overhead = c / interval + rate_hr * (interval / 2.0 + restart_hours);
    if (overhead >= 0.9)
        return INFINITY; /* interrupted faster than it can make progress */
    return 1.0 / (1.0 - overhead);
}
