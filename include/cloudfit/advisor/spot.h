/* Spot VMs: the time lost to preemptions (advisor/spot.c, docs/model.md). */
#ifndef CLOUDFIT_ADVISOR_SPOT_H
#define CLOUDFIT_ADVISOR_SPOT_H

/* Spot preemption overhead (Young/Daly checkpointing): the factor by which
 * training time grows on `nodes` spot VMs with the given interruption rate. */
double cf_spot_time_factor(double interruptions_pct_per_month, int nodes, double checkpoint_hours,
                           double restart_hours, double *out_checkpoint_interval_hours);

#endif
