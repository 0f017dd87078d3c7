/* Resampling models of a trace's own availability process
 * (advisor/spot_boot.c), the other families the preemption model is
 * compared with (bench/spot.sh, docs/spot.md): a circular block bootstrap
 * of the ticks, and an i.i.d. bootstrap of whole UP/DOWN cycles. Both are
 * the trace itself rearranged: no table, no scaling to another node count. */
#ifndef CLOUDFIT_ADVISOR_SPOT_BOOT_H
#define CLOUDFIT_ADVISOR_SPOT_BOOT_H
#include "cloudfit/advisor/spot_replay.h"
#include "cloudfit/status.h"

/* A path of at least `hours` made of blocks of `block_h` hours, each
 * copied from a uniformly random point of the circular trace. */
cf_status cf_spot_path_block_bootstrap(const cf_spot_path *trace, double block_h, double hours, unsigned long seed,
                                       cf_spot_path *out);
/* A path of at least `hours` made of whole cycles of the trace (an UP run
 * with its inner counts and the DOWN run after it), in blocks of
 * `cycles_per_block` consecutive cycles (1 = independent cycles; more keeps
 * good and bad stretches together) starting at a random cycle, drawn with
 * replacement. CF_ERR_INVALID when the trace has no complete cycle. */
cf_status cf_spot_path_cycle_bootstrap(const cf_spot_path *trace, int cycles_per_block, double hours,
                                       unsigned long seed, cf_spot_path *out);

#endif
