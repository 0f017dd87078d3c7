/* The advisor's own half of cloudfit/advisor/perf.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_PERF_INTERNAL_H
#define CLOUDFIT_ADVISOR_PERF_INTERNAL_H
#include "cloudfit/advisor/perf.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/profiler/types.h"
#include "cloudfit/status.h"

/* The parameters before anything is measured, for a GPU of the table
 * (NULL = unknown GPU): no compute figures, the default constants, the
 * in-node rate and class from the GPU's interconnect, no network figure,
 * every provenance `default`. The only place defaults are set. */
cf_perf_params cf_perf_defaults(const cf_gpu *gpu);

/* Effective all-reduce rate between VMs with a NIC of `nominal_gbps`
 * (0 = unknown) when nothing was measured: half the NIC over RDMA, at most
 * CF_DEFAULT_TCP_ALLREDUCE_GBPS over TCP. */
double cf_default_inter_gbps(double nominal_gbps);

/* The NICs the default network's 80 % interval spans (span = {slowest,
 * fastest} Gbit/s; returns 1): on a NIC the catalog does not give
 * (nic_gbps 0) the catalog's, CF_UNKNOWN_NIC_SLOWEST_GBPS to
 * CF_UNKNOWN_NIC_FIT_BOUND_GBPS; on a VM inferred among several, its
 * nic_span_gbps. 0 (span {0, 0}) for a measured or fitted network and a
 * known VM. What the interval uses and the reports say. */
int cf_perf_default_nic_span(const cf_perf_params *p, double span[2]);

/* 1 when a NIC of `nominal_gbps` is an RDMA fabric (EFA, InfiniBand: from
 * CF_RDMA_MIN_NOMINAL_GBPS), 0 for TCP; an unknown NIC (0) is the
 * default's, TCP. A network measured on one fabric is carried to the other
 * as the default (cf_perf_on_network). */
int cf_perf_nic_is_rdma(double nominal_gbps);

/* `p` on a VM with a NIC of `nominal_gbps` (0 = unknown): a network
 * measured on another NIC is carried in proportion (never above the
 * nominal ratio: BW' = BW·min(1, nic'/nic_ref)) when both are of one
 * fabric (TCP, RDMA), else the default network (rate, ρ_def, no
 * overhead), provenance `default`. `reference_gbps` is the NIC the
 * measurement ran on (0 = unknown: kept as is). */
cf_perf_params cf_perf_on_network(const cf_perf_params *p, double reference_gbps, double nominal_gbps);

/* λ(N): the ring's per-hop latency, L per DDP bucket per hop, on a NIC of
 * `nic_gbps` (RDMA from CF_RDMA_MIN_NOMINAL_GBPS: L × CF_PERF_RDMA_LATENCY_SHARE). */
double cf_perf_hop_latency_s(const cf_perf_constants *k, double nic_gbps, double gradient_bytes, double nodes);

/* The largest node count the network of `p` was measured at when `nodes`
 * is beyond it (a measured or carried network), else 0: how the all-reduce
 * grows with the node count differs between clusters by a factor of three
 * (docs/model.md), so a prediction beyond the measured count says so. */
int cf_network_extrapolated_from(const cf_perf_params *p, int nodes);

/* The model for N nodes, g GPUs on the busiest node, K GPUs in all. */
cf_step cf_perf_predict(const cf_perf_params *p, double gradient_bytes, int nodes, int gpus_per_node, int gpus,
                        double local_batch, int accumulation);

cf_step cf_perf_node_step(const cf_perf_params *p, double gradient_bytes, int gpus_per_node, double local_batch);
cf_perf_net cf_perf_network_term(const cf_perf_params *p, double gradient_bytes, int nodes, int gpus_per_node, int gpus);
cf_step cf_perf_combine(const cf_perf_params *p, cf_step node, const cf_perf_net *net, int accumulation);
/* cf_perf_combine without the interval: sigma and sigma_up left at σ_base,
 * the visible part's percentiles at the point. For callers that rank many
 * batches and take the interval of the best alone (cf_perf_network_percentiles,
 * cf_perf_step_sigmas). */
cf_step cf_perf_combine_point(const cf_perf_params *p, cf_step node, const cf_perf_net *net, int accumulation);
/* Fills one's visible_below_s / visible_above_s: the visible part with the
 * all-reduce and c0 at net's percentiles (what cf_perf_combine_point leaves
 * at the point). */
void cf_perf_network_percentiles(const cf_perf_params *p, const cf_perf_net *net, cf_step *one);
/* The log sds of a step of step_s seconds whose network part is one's
 * (one.visible_s and its percentiles; step_s ≥ one.step_s with
 * accumulation): the network's percentiles carried through the overlap
 * hinge to the step, each side, then added to σ_base in quadrature:
 *   net_below = ln(step / (step − (visible − visible_below))) / z,
 *   net_above = ln((step + visible_above − visible) / step) / z.
 * Any output pointer may be NULL. */
void cf_perf_step_sigmas(const cf_step *one, double step_s, double *sigma, double *sigma_up, double *net_below,
                         double *net_above);

/* Balanced placements (K = N·g). */
double cf_perf_step_s(const cf_perf_params *p, double gradient_bytes, int nodes, int gpus_per_node,
                      double local_batch, int accumulation);

cf_scaling_reason cf_perf_scaling_reason(const cf_perf_params *p, double gradient_bytes, int nodes, int gpus_per_node,
                                         double local_batch, int accumulation);

/* T1(g, m). */
double cf_perf_compute_s(const cf_perf_params *p, double local_batch, int gpus_in_node);

/* A(N, N·g): the inter-node all-reduce before overlap (0 for N = 1). */
double cf_perf_sync_s(const cf_perf_params *p, double gradient_bytes, int nodes, int gpus_per_node);

/* The step time at probability q of the two-piece log-normal
 * (median step_s, σ below, σ_up above): step·e^(z_q·σ) for q ≤ 0.5, else
 * step·e^(z_q·σ_up). The same for any time t that scales with the step. */
double cf_step_quantile(double step_s, double sigma, double sigma_up, double q);

/* Two-sided normal quantile: z with P(|Z| ≤ z) = level (0.8 → 1.2816). */
double cf_normal_two_sided_z(double level);

/* One-sided: z with P(Z ≤ z) = p (0.9 → 1.2816). */
double cf_normal_quantile(double p);

/* GPUs per node of a measured configuration: the busiest node of its
 * placement, else num_gpus spread evenly. */
int cf_measurement_gpus_per_node(const cf_measurement *row);

/* The model's prediction for a measured configuration (no accumulation). */
cf_step cf_perf_predict_measurement(const cf_perf_params *p, const cf_measurement *row, double gradient_bytes);

/* Fits the model to measured rows of one GPU type on one kind of VM with a
 * NIC of `nic_gbps` (0 = unknown): the single-node rows become T1's curves
 * (the median where a (g, m) repeats); κ from the curves (else the class
 * default of `start`); σ_T from their roughness; with multi-node rows the
 * network (BW_eff, ρ, c0, b2) by an exhaustive grid on the least absolute
 * relative error (docs/model.md). `start` gives constants, hardware and
 * provenances (cf_perf_defaults). Needs at least one single-node row. */
cf_status cf_perf_fit(const cf_measurement *rows, size_t n_rows, double gradient_bytes, double nic_gbps,
                      const cf_perf_params *start, cf_perf_params *out, cf_perf_fit_report *report);

#endif
