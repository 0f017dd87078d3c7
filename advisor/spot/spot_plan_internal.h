/* The advisor's own half of cloudfit/advisor/spot_plan.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_SPOT_PLAN_INTERNAL_H
#define CLOUDFIT_ADVISOR_SPOT_PLAN_INTERNAL_H
#include "cloudfit/advisor/spot_plan.h"

double cf_spot_check_quantile(double confidence);

cf_status cf_spot_spread_of(const cf_spot_run *runs, size_t n, const double *usd_per_node_h, double q,
                            cf_spot_spread *out);

cf_status cf_spot_mc_new(const cf_spot_mc_settings *settings, cf_spot_mc **out);
void cf_spot_mc_free(cf_spot_mc *mc);
cf_status cf_spot_mc_estimate(cf_spot_mc *mc, const cf_spot_request *req, cf_spot_estimate *out);

/* cf_spot_mc_estimate of each of n requests into out[0..n-1], on up to
 * `threads` threads (0 = cf_parallel_threads()): the requests of one
 * (row, N) one after another, different ones in parallel. The results are
 * the same, field for field, as n calls one after the other, whatever the
 * thread count (every path and start is seeded by itself); on failure, the
 * status and message of the first request that failed. */
cf_status cf_spot_mc_estimate_many(cf_spot_mc *mc, const cf_spot_request *reqs, size_t n, int threads,
                                   cf_spot_estimate *out);

/* The path the Monte Carlo uses for (process, N), made on first use. */
cf_status cf_spot_mc_path(cf_spot_mc *mc, const cf_spot_process *process, int nodes, const cf_spot_path **out_path,
                          const cf_spot_path_stats **out_stats);

#endif
