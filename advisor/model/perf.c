/* The step-time model (include/cloudfit/advisor/perf.h, docs/model.md
 * "Step time"): evaluation and the interval. The fit is in fit.c. */
#include "cloudfit/advisor/perf.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/profiler/types.h"
#include "cloudfit/common/number.h"
#include "cloudfit/status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "perf_internal.h"

/* ---- constants ----------------------------------------------------------------------------- */

cf_perf_constants cf_perf_constants_default(void)
{
    return (cf_perf_constants){.growth_nodes = CF_PERF_GROWTH_NODES,
                               .growth_gpus = CF_PERF_GROWTH_GPUS,
                               .hop_latency_s = CF_PERF_HOP_LATENCY_S,
                               .interference = CF_PERF_INTERFERENCE,
                               .hide_default = CF_PERF_HIDE_DEFAULT,
                               .contention_pcie = CF_PERF_CONTENTION_PCIE,
                               .contention_nvlink = CF_PERF_CONTENTION_NVLINK,
                               .intra_efficiency = CF_PERF_INTRA_EFFICIENCY,
                               .sigma_scale = CF_PERF_SIGMA_SCALE,
                               .sigma_floor = CF_PERF_SIGMA_FLOOR,
                               .sigma_away = CF_PERF_SIGMA_AWAY,
                               .sigma_extrapolate = CF_PERF_SIGMA_EXTRAPOLATE,
                               .sigma_default_net = CF_PERF_SIGMA_DEFAULT_NET,
                               .sigma_gpus = CF_PERF_SIGMA_GPUS,
                               .sigma_shape = CF_PERF_SIGMA_SHAPE,
                               .sigma_shape_below = CF_PERF_SIGMA_SHAPE_BELOW,
                               .growth_nodes_min = CF_PERF_GROWTH_NODES_MIN,
                               .growth_nodes_max = CF_PERF_GROWTH_NODES_MAX};
}

cf_status cf_perf_constants_check(const cf_perf_constants *k)
{
    if (!(k->growth_nodes_min <= k->growth_nodes_max))
        return cf_error_set(CF_ERR_INVALID, "a_min (%g) is above a_max (%g): the growth exponent's range is empty",
                            k->growth_nodes_min, k->growth_nodes_max);
    return CF_OK;
}

cf_status cf_perf_constants_parse(const char *const *items, size_t n, cf_perf_constants *k)
{
    cf_status st = CF_OK;
    for (size_t i = 0; st == CF_OK && i < n; i++) {
        char *item = strdup(items[i]);
        if (!item)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        char *save = NULL;
        for (char *tok = strtok_r(item, ",", &save); st == CF_OK && tok; tok = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(tok, '=');
            double v = 0;
            if (!eq || eq == tok) {
                st = cf_error_set(CF_ERR_USAGE, "expects NAME=VALUE, got '%s'", tok);
                continue;
            }
            *eq = '\0';
            if (cf_number_double(eq + 1, -HUGE_VAL, HUGE_VAL, &v) != CF_NUMBER_OK) {
                *eq = '=';
                st = cf_error_set(CF_ERR_USAGE, "expects a number after '=', got '%s'", tok);
            } else if ((st = cf_perf_constant_set(k, tok, v)) != CF_OK) {
                cf_error_hint("names: a, c, L, psi, rho_def, kappa_pcie, kappa_nvlink, intra_eff, kT, s0, u0, u_ext, "
                              "u_def, u_ing, u_shape, u_shape_lo, a_min, a_max (docs/model.md)");
            }
        }
        free(item);
    }
    return st == CF_OK ? cf_perf_constants_check(k) : st;
}

cf_status cf_perf_constant_set(cf_perf_constants *k, const char *name, double v)
{
    static const struct {
        const char *name, *alias;
        size_t offset;
        double lo, hi;
    } table[] = {
        {"growth_nodes", "a", offsetof(cf_perf_constants, growth_nodes), 0, 4},
        {"growth_gpus", "c", offsetof(cf_perf_constants, growth_gpus), 0, 4},
        {"hop_latency_s", "L", offsetof(cf_perf_constants, hop_latency_s), 0, 1},
        {"interference", "psi", offsetof(cf_perf_constants, interference), 0, 1},
        {"hide_default", "rho_def", offsetof(cf_perf_constants, hide_default), 0, 1},
        {"contention_pcie", "kappa_pcie", offsetof(cf_perf_constants, contention_pcie), 0, 1},
        {"contention_nvlink", "kappa_nvlink", offsetof(cf_perf_constants, contention_nvlink), 0, 1},
        {"intra_efficiency", "intra_eff", offsetof(cf_perf_constants, intra_efficiency), 0.01, 1},
        {"sigma_scale", "kT", offsetof(cf_perf_constants, sigma_scale), 0, 10},
        {"sigma_floor", "s0", offsetof(cf_perf_constants, sigma_floor), 0, 1},
        {"sigma_away", "u0", offsetof(cf_perf_constants, sigma_away), 0, 5},
        {"sigma_extrapolate", "u_ext", offsetof(cf_perf_constants, sigma_extrapolate), 0, 5},
        {"sigma_default_net", "u_def", offsetof(cf_perf_constants, sigma_default_net), 0, 5},
        {"sigma_gpus", "u_ing", offsetof(cf_perf_constants, sigma_gpus), 0, 5},
        {"sigma_shape", "u_shape", offsetof(cf_perf_constants, sigma_shape), 0, 5},
        {"sigma_shape_below", "u_shape_lo", offsetof(cf_perf_constants, sigma_shape_below), 0, 1},
        {"growth_nodes_min", "a_min", offsetof(cf_perf_constants, growth_nodes_min), 0, 4},
        {"growth_nodes_max", "a_max", offsetof(cf_perf_constants, growth_nodes_max), 0, 4},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        if (strcmp(name, table[i].name) != 0 && strcmp(name, table[i].alias) != 0)
            continue;
        if (!(v >= table[i].lo && v <= table[i].hi))
            return cf_error_set(CF_ERR_INVALID, "model constant '%s': expected a number from %g to %g, got %g", name,
                                table[i].lo, table[i].hi, v);
        *(double *)((char *)k + table[i].offset) = v;
        return CF_OK;
    }
    return cf_error_set(CF_ERR_INVALID, "unknown model constant '%s'", name);
}

cf_perf_params cf_perf_defaults(const cf_gpu *gpu)
{
    double interconnect_gbs = gpu && gpu->interconnect_gbs_per_gpu > 0 ? gpu->interconnect_gbs_per_gpu
                                                                       : CF_DEFAULT_UNKNOWN_INTERCONNECT_GBS;
    cf_perf_params p;
    memset(&p, 0, sizeof p);
    p.k = cf_perf_constants_default();
    p.compute_scale = 1;
    p.contention = -1; /* the class default of k */
    p.intra_gbps = interconnect_gbs * 8.0;
    p.nvlink = gpu && (strncasecmp(gpu->interconnect, "NVLink", 6) == 0 || strstr(gpu->interconnect, "NVSwitch"));
    p.hide = -1; /* ρ_def of k */
    p.compute_provenance = CF_PROV_DEFAULT;
    p.network_provenance = CF_PROV_DEFAULT;
    p.memory_provenance = CF_PROV_DEFAULT;
    return p;
}

/* ---- network -------------------------------------------------------------------------------- */

int cf_perf_nic_is_rdma(double nominal_gbps)
{
    return (nominal_gbps > 0 ? nominal_gbps : CF_DEFAULT_UNKNOWN_NETWORK_GBPS) >= CF_RDMA_MIN_NOMINAL_GBPS;
}

double cf_default_inter_gbps(double nominal_gbps)
{
    double nominal = nominal_gbps > 0 ? nominal_gbps : CF_DEFAULT_UNKNOWN_NETWORK_GBPS;
    if (cf_perf_nic_is_rdma(nominal))
        return nominal * CF_DEFAULT_RDMA_EFFICIENCY;
    return fmin(nominal * CF_DEFAULT_RDMA_EFFICIENCY, CF_DEFAULT_TCP_ALLREDUCE_GBPS);
}

cf_perf_params cf_perf_on_network(const cf_perf_params *p, double reference_gbps, double nominal_gbps)
{
    cf_perf_params q = *p;
    q.nic_span_gbps[0] = q.nic_span_gbps[1] = 0; /* another VM: whose NICs are its own */
    double nominal = nominal_gbps > 0 ? nominal_gbps : CF_DEFAULT_UNKNOWN_NETWORK_GBPS;
    /* A NIC the catalog does not give bounds nothing measured on it (both
     * unknown: the cluster the network was fitted on); a network measured
     * on a known NIC and carried to an unknown one gets the default's
     * nominal rate as its bound, as a guess is all there is. */
    q.nic_gbps = nominal_gbps > 0 ? nominal_gbps : reference_gbps > 0 ? CF_DEFAULT_UNKNOWN_NETWORK_GBPS : 0;
    if (p->inter_gbps > 0 && (reference_gbps <= 0 || nominal_gbps <= 0 || reference_gbps == nominal_gbps)) {
        q.inter_gbps = q.nic_gbps > 0 ? fmin(p->inter_gbps, q.nic_gbps) : p->inter_gbps;
        return q;
    }
    if (p->inter_gbps > 0 && cf_perf_nic_is_rdma(reference_gbps) == cf_perf_nic_is_rdma(nominal)) {
        q.inter_gbps = fmin(p->inter_gbps * fmin(1.0, nominal / reference_gbps), nominal);
        q.network_provenance = CF_PROV_ESTIMATED;
        return q;
    }
    q.inter_gbps = 0; /* the default for this NIC */
    /* An unknown NIC stays unknown: the default's guess bounds nothing here
     * (its floor at 10 Gbit/s lies below the default all-reduce at any
     * shape) and its interval spans the catalog's NICs (cf_perf_network_term) */
    q.nic_gbps = nominal_gbps > 0 ? nominal_gbps : 0;
    q.hide = -1;
    q.overhead_s = 0;
    q.two_vm_exponent = 0;
    q.sigma_fit = 0;
    q.bound_hit = 0;
    q.max_nodes_measured = 0;
    q.max_node_gpus_measured = 0;
    q.network_provenance = CF_PROV_DEFAULT;
    return q;
}

int cf_perf_default_nic_span(const cf_perf_params *p, double span[2])
{
    span[0] = span[1] = 0;
    if (p->network_provenance != CF_PROV_DEFAULT)
        return 0;
    if (p->nic_gbps <= 0) {
        span[0] = CF_UNKNOWN_NIC_SLOWEST_GBPS;
        span[1] = CF_UNKNOWN_NIC_FIT_BOUND_GBPS;
    } else if (p->nic_span_gbps[0] > 0 && p->nic_span_gbps[1] > p->nic_span_gbps[0]) {
        span[0] = p->nic_span_gbps[0];
        span[1] = p->nic_span_gbps[1];
    }
    return span[1] > 0;
}

int cf_network_extrapolated_from(const cf_perf_params *p, int nodes)
{
    int measured = p->network_provenance == CF_PROV_MEASURED || p->network_provenance == CF_PROV_FITTED ||
                   p->network_provenance == CF_PROV_ESTIMATED;
    return measured && p->max_nodes_measured > 1 && nodes > p->max_nodes_measured ? p->max_nodes_measured : 0;
}

static double ring(double n) { return n > 1 ? 2.0 * (n - 1) / n : 0.0; }

static double n_buckets(double gradient_bytes) { return ceil(gradient_bytes / CF_DDP_BUCKET_BYTES); }

double cf_perf_hop_latency_s(const cf_perf_constants *k, double nic_gbps, double gradient_bytes, double nodes)
{
    double per_hop = k->hop_latency_s * (cf_perf_nic_is_rdma(nic_gbps) ? CF_PERF_RDMA_LATENCY_SHARE : 1.0);
    return per_hop * n_buckets(gradient_bytes) * 2.0 * (nodes - 1);
}

static double hop_latency(const cf_perf_params *p, double gradient_bytes, double nodes)
{
    double nic = p->nic_gbps > 0 ? p->nic_gbps : CF_DEFAULT_UNKNOWN_NETWORK_GBPS;
    return cf_perf_hop_latency_s(&p->k, nic, gradient_bytes, nodes);
}

static double hide_fraction(const cf_perf_params *p) { return p->hide >= 0 ? p->hide : p->k.hide_default; }

/* A measured (fitted or carried) rate, at most the NIC when the catalog
 * gives it; else the NIC's default. */
static double effective_gbps(const cf_perf_params *p)
{
    if (p->inter_gbps > 0)
        return p->nic_gbps > 0 ? fmin(p->inter_gbps, p->nic_gbps) : p->inter_gbps;
    return cf_default_inter_gbps(p->nic_gbps);
}

/* A(N, g, K) and the probe's A2 (latency included). */
static double allreduce(const cf_perf_params *p, double bytes, int nodes, int g, int gpus, double *a2_out)
{
    double bits = 8.0 * bytes;
    double bw_part = bits / (effective_gbps(p) * 1e9); /* A2 − λ(2) */
    double lat2 = hop_latency(p, bytes, 2);
    if (a2_out)
        *a2_out = bw_part + lat2;
    if (nodes < 2)
        return 0;
    double rn = ring(nodes), rk = ring(gpus);
    double growth = pow(rn, p->k.growth_nodes) * (p->k.growth_gpus != 0 ? pow(rk / rn, p->k.growth_gpus) : 1.0);
    if (nodes == 2 && p->two_vm_exponent != 0)
        growth *= pow((double)g, p->two_vm_exponent);
    double a = bw_part * growth + hop_latency(p, bytes, nodes);
    double floor_s = p->nic_gbps > 0 ? rk * bits / (p->nic_gbps * 1e9) : 0; /* no bound from an unknown NIC */
    return a > floor_s ? a : floor_s;
}

/* ---- the single-node step ------------------------------------------------------------------------ */

/* Linear interpolation between profiled batches (a step is a fixed part
 * plus a part that grows with the batch: α + βm is straight in m, and its
 * log-log chord lies above it — the old log-log interpolation was biased
 * high); outside, the line through the nearest point and the next one at
 * least MIN_SLOPE_SPAN times farther in batch (slope ≥ 0), never below
 * half the smallest time; with no such point, the one-batch rule from the
 * nearest (a fixed share φ, the rest proportional to the batch). */
/* Two profiled batches closer than this ratio give no slope: 2 % noise on
 * each time over a 10 % change of batch already moves the slope by ±28 %
 * of a proportional step's, and two runs at batches 1024 and 1025 (a search
 * probing two clouds of one GPU type) gave 2.6 ms per sample where the
 * step grows 0.1 ms — a 2.8 s step predicted at batch 2051 where 0.2 s was
 * measured. A guard against noise, not a fitted constant: every figure of
 * bench/accuracy.sh on both shipped clusters is the same with and without
 * it. */
#define MIN_SLOPE_SPAN 1.1
/* Linear between ascending ms[0] ≤ m ≤ ms[n − 1]. */
static double between(const double *ms, const double *ts, int n, double m)
{
    int i = 0;
    while (i < n - 1 && ms[i] < m)
        i++;
    if (ms[i] == m || i == 0)
        return ts[i];
    double w = (m - ms[i - 1]) / (ms[i] - ms[i - 1]);
    return (1 - w) * ts[i - 1] + w * ts[i];
}

static double interp_batch(const double *ms, const double *ts, int n, double m)
{
    if (n == 1)
        return ts[0] * (CF_PERF_FIXED_SHARE + (1 - CF_PERF_FIXED_SHARE) * m / ms[0]);
    if (m >= ms[0] && m <= ms[n - 1])
        return between(ms, ts, n, m);
    int a, b;
    if (m < ms[0]) {
        a = 0, b = 1;
        while (b < n - 1 && ms[b] < MIN_SLOPE_SPAN * ms[0])
            b++;
    } else {
        b = n - 1, a = n - 2;
        while (a > 0 && ms[a] * MIN_SLOPE_SPAN > ms[n - 1])
            a--;
    }
    if (ms[b] < MIN_SLOPE_SPAN * ms[a]) /* every profiled batch within the span: one point, the nearest */
        return interp_batch(m < ms[0] ? &ms[a] : &ms[b], m < ms[0] ? &ts[a] : &ts[b], 1, m);
    double k = (ts[b] - ts[a]) / (ms[b] - ms[a]);
    if (!(k > 0))
        k = 0;
    double v = m < ms[0] ? ts[a] + k * (m - ms[a]) : ts[b] + k * (m - ms[b]);
    double t_min = ts[0];
    for (int i = 1; i < n; i++)
        t_min = fmin(t_min, ts[i]);
    return fmax(v, 0.5 * t_min);
}

double cf_perf_curve_at(const cf_perf_curve *c, double m);
double cf_perf_curve_at(const cf_perf_curve *c, double m) { return interp_batch(c->batch, c->step_s, c->n, m); }

/* The profile's shape in m lent to a sparser curve: a curve with fewer
 * profiled batches than another with at least three (the search's light
 * profile: three batches on one GPU, two on a full node), or with a
 * narrower span of batches (a search's probes at a few batches on 2 or 3
 * GPUs), is the lending curve plus the measured difference at its own
 * batches — linear between them, held beyond — so the small-batch knee the
 * denser curve resolves is not drawn as a chord, and beyond its own batches
 * it follows the wider curve instead of extrapolating two nearby points (a
 * GPU's compute at per-GPU batch m is the same on one GPU and on g; what g
 * adds, the in-node sync, hardly depends on m). The difference, not the
 * ratio: chosen on T4 (protocol e1, 2.7 / 12.7 % against 3.2 / 17.4 %;
 * docs/model.md). Never below half of the curve's own value (beyond its
 * batches, that value scaled by the lent shape: its own chord is no guide
 * there). The lending curve must span the borrower's batches: a shape
 * extrapolated beyond its own profiled batches is a guess, worse than the
 * sparser curve's own chord (in a search, 1, 2 and 3 GPUs probed at batches
 * 513–1025 lent their shape to the 1-GPU curve up to 4096). A curve of
 * one batch borrows from a curve of two (a measured slope, where the
 * one-batch rule assumes the step proportional but for a fixed share φ:
 * NCF, whose step is flat in the batch, measured at 363 and predicted at
 * 32768, was 50× too slow). Among lenders,
 * one whose batches span m (its own value there is not an extrapolation),
 * then the most batches, then the widest span. */
/* "Spans" with a tenth of slack: a lender profiled at 3626.7 spans a
 * borrower measured at 3627 (the search's batches and a profile's need not
 * be the same numbers). */
#define LEND_SLACK 1.1

static double first_batch(const cf_perf_curve *c) { return c->batch[0]; }
static double last_batch(const cf_perf_curve *c) { return c->batch[c->n - 1]; }
static double span_ratio(const cf_perf_curve *c) { return last_batch(c) / first_batch(c); }

/* r's batches reach from lo to hi, with LEND_SLACK. */
static int reaches(const cf_perf_curve *r, double lo, double hi)
{
    return first_batch(r) <= LEND_SLACK * lo && hi <= LEND_SLACK * last_batch(r);
}

/* Whether lender r is preferred to ref for a query at m: one that reaches
 * m, then the most batches, then the widest span. */
static int better_lender(const cf_perf_curve *r, const cf_perf_curve *ref, double m)
{
    if (!ref)
        return 1;
    int r_reaches = reaches(r, m, m), ref_reaches = reaches(ref, m, m);
    if (r_reaches != ref_reaches)
        return r_reaches;
    if (r->n != ref->n)
        return r->n > ref->n;
    return span_ratio(r) > span_ratio(ref);
}

static double curve_at(const cf_perf_params *p, const cf_perf_curve *c, double m)
{
    const cf_perf_curve *ref = NULL;
    for (int i = 0; i < p->n_curves; i++) {
        const cf_perf_curve *r = &p->curves[i];
        int denser_or_wider = r->n > c->n || first_batch(r) != first_batch(c) || last_batch(r) != last_batch(c);
        if (r != c && r->n >= (c->n == 1 ? 2 : 3) && reaches(r, first_batch(c), last_batch(c)) && denser_or_wider &&
            better_lender(r, ref, m))
            ref = r;
    }
    if (!ref && c->n == 1) {
        /* One batch and no curve spanning it: the slope per sample of the
         * widest other curve of two or more batches (what g adds hardly
         * depends on m), not the one-batch rule's fixed share */
        const cf_perf_curve *wide = NULL;
        for (int i = 0; i < p->n_curves; i++) {
            const cf_perf_curve *r = &p->curves[i];
            if (r != c && r->n >= 2 && (!wide || span_ratio(r) > span_ratio(wide)))
                wide = r;
        }
        if (wide && span_ratio(wide) >= MIN_SLOPE_SPAN) {
            double slope = (wide->step_s[wide->n - 1] - wide->step_s[0]) / (wide->batch[wide->n - 1] - wide->batch[0]);
            return fmax(c->step_s[0] + fmax(slope, 0.0) * (m - c->batch[0]), 0.5 * c->step_s[0]);
        }
    }
    if (!ref)
        return cf_perf_curve_at(c, m);
    double d[CF_PERF_MAX_POINTS];
    for (int j = 0; j < c->n; j++)
        d[j] = c->step_s[j] - cf_perf_curve_at(ref, c->batch[j]);
    double held = fmin(fmax(m, c->batch[0]), c->batch[c->n - 1]);
    double ref_m = cf_perf_curve_at(ref, m), ref_held = cf_perf_curve_at(ref, held);
    /* the shape lent as a ratio: c's own value where it was profiled,
     * scaled by the lending curve beyond */
    double ratio_s = cf_perf_curve_at(c, held) * (ref_held > 0 ? ref_m / ref_held : 1.0);
    double diff = between(c->batch, d, c->n, held);
    if (held == m)
        return fmax(ref_m + diff, 0.5 * ratio_s);
    /* Beyond c's batches neither law was checked: what g GPUs add is never
     * negative (a negative difference there is one run's noise), and the
     * difference held far from where it was measured stays within a factor
     * 2 of the ratio's answer (a 0.8 s difference measured at batch 2541
     * is not the cost at batch 34). */
    return fmin(fmax(ref_m + fmax(diff, 0.0), 0.5 * ratio_s), 2.0 * ratio_s);
}

static double class_contention(const cf_perf_params *p)
{
    return p->nvlink ? p->k.contention_nvlink : p->k.contention_pcie;
}

static double contention(const cf_perf_params *p) { return p->contention >= 0 ? p->contention : class_contention(p); }

/* T1 carried from g0 GPUs to g: T1(g0) + t1·κ·(g − g0) + V(g) − V(g0), with
 * t1 = T1(g0)/(1 + κ(g0 − 1)) and V(h) the visible part of the in-node
 * ring all-reduce at intra_efficiency × the nominal rate (hidden behind
 * ρ_def·t1); never below half of T1(g0). */
static double scale_gpus(const cf_perf_params *p, double bytes, double t_base, int g0, int g)
{
    double kap = contention(p);
    double t1 = t_base / (1 + kap * (g0 - 1));
    double rate = p->k.intra_efficiency * (p->intra_gbps > 0 ? p->intra_gbps : CF_DEFAULT_UNKNOWN_INTERCONNECT_GBS * 8) * 1e9;
    double v[2];
    int gg[2] = {g, g0};
    for (int i = 0; i < 2; i++) {
        v[i] = 0;
        if (gg[i] > 1)
            v[i] = fmax(0.0, ring(gg[i]) * 8.0 * bytes / rate - p->k.hide_default * t1);
    }
    return fmax(t_base + t1 * kap * (g - g0) + v[0] - v[1], 0.5 * t_base);
}

static double t1_at(const cf_perf_params *p, double bytes, int g, double m, cf_provenance *src)
{
    double scale = p->compute_scale > 0 ? p->compute_scale : 1.0;
    if (p->n_curves == 0) {
        double t = fmax(p->alpha_s + p->beta_s * m, 1e-6);
        *src = g == 1 ? CF_PROV_MEASURED : CF_PROV_ESTIMATED;
        return scale * (g == 1 ? t : scale_gpus(p, bytes, t, 1, g));
    }
    const cf_perf_curve *lo = NULL, *hi = NULL;
    for (int i = 0; i < p->n_curves; i++) {
        const cf_perf_curve *c = &p->curves[i];
        if (c->gpus == g) {
            *src = CF_PROV_MEASURED;
            double t = curve_at(p, c, m);
            /* Beyond its profiled batches each curve follows its own end
             * slope, and g GPUs' could cross below one GPU's: g GPUs never
             * do the same per-GPU work faster than one (BERT's 2-GPU curve,
             * measured to batch 12, predicted a 2 × A6000 VM 1.2 % faster
             * per step than one A6000 at batch 16: parallel efficiency 1.012) */
            if (g > 1 && p->curves[0].gpus == 1 && (m < first_batch(c) || m > last_batch(c)))
                t = fmax(t, curve_at(p, &p->curves[0], m));
            return scale * t;
        }
        if (c->gpus < g)
            lo = c; /* ascending: the last below */
        else if (!hi)
            hi = c;
    }
    if (lo && hi) {
        double w = (double)(g - lo->gpus) / (hi->gpus - lo->gpus);
        *src = CF_PROV_FITTED;
        return scale * ((1 - w) * curve_at(p, lo, m) + w * curve_at(p, hi, m));
    }
    const cf_perf_curve *base = lo ? lo : hi;
    *src = CF_PROV_ESTIMATED;
    return scale * scale_gpus(p, bytes, curve_at(p, base, m), base->gpus, g);
}

/* ---- predictions ------------------------------------------------------------------------------- */

cf_step cf_perf_node_step(const cf_perf_params *p, double bytes, int g, double m)
{
    cf_step r;
    memset(&r, 0, sizeof r);
    if (!(bytes > 0))
        bytes = p->gradient_bytes;
    if (g < 1)
        g = 1;
    r.compute_s = t1_at(p, bytes, g, m, &r.compute_source);
    r.step_s = r.compute_s;
    double sigma_t = p->sigma_profile > 0 ? p->sigma_profile : CF_PERF_SIGMA_PROFILE_NONE;
    double s_noise = p->k.sigma_scale * hypot(sigma_t, p->k.sigma_floor);
    double var = s_noise * s_noise + p->sigma_compute * p->sigma_compute;
    r.sigma_noise = s_noise;
    if (r.compute_source != CF_PROV_MEASURED) {
        double u = p->k.sigma_gpus * log((double)g);
        var += u * u;
    }
    r.sigma_base = r.sigma = r.sigma_up = sqrt(var);
    return r;
}

cf_perf_net cf_perf_network_term(const cf_perf_params *p, double bytes, int nodes, int g, int gpus)
{
    cf_perf_net n;
    memset(&n, 0, sizeof n);
    if (!(bytes > 0))
        bytes = p->gradient_bytes;
    if (nodes < 1)
        nodes = 1;
    if (g < 1)
        g = 1;
    if (gpus < nodes)
        gpus = nodes * g;
    n.nodes = nodes;
    n.allreduce_s = allreduce(p, bytes, nodes, g, gpus, &n.a2_s);
    if (nodes > 1) {
        /* How the all-reduce grows beyond the node count and GPUs per node
         * it was measured at differs between clusters by a factor of three
         * (docs/model.md): without a measurement, from the 2-node × 1-GPU
         * shape the default stands for. */
        int measured = p->network_provenance != CF_PROV_DEFAULT;
        int n_meas = measured && p->max_nodes_measured > 1 ? p->max_nodes_measured : 2;
        int g_meas = measured && p->max_node_gpus_measured > 0 ? p->max_node_gpus_measured : 1;
        double distance = fmax(0.0, log((double)g / g_meas));
        n.sigma_shape = p->k.sigma_shape * sqrt(distance);
        double net_below = 0, net_above = 0; /* σ_net on each side */
        if (!measured) {
            n.sigma_net = net_below = net_above = p->k.sigma_default_net;
            /* A NIC the catalog does not give: the default's 10 Gbit/s is a
             * guess, so each side reaches at least the all-reduce on the
             * catalog's slowest and fastest NIC (a declared prior,
             * CF_UNKNOWN_NIC_SLOWEST_GBPS); a VM inferred among several,
             * on the slowest and fastest of theirs (nic_span_gbps). */
            double span[2];
            if (cf_perf_default_nic_span(p, span)) {
                double span_lo = span[0], span_hi = span[1];
                double z = cf_normal_two_sided_z(CF_INTERVAL_LEVEL);
                cf_perf_params end = *p;
                end.nic_gbps = span_lo;
                double slowest = allreduce(&end, bytes, nodes, g, gpus, NULL);
                end.nic_gbps = span_hi;
                double fastest = allreduce(&end, bytes, nodes, g, gpus, NULL);
                net_below = fmax(net_below, log(n.allreduce_s / fastest) / z);
                net_above = fmax(net_above, log(slowest / n.allreduce_s) / z);
                n.sigma_net = fmax(net_below, net_above);
            }
        } else {
            int away = !(nodes == 2 && gpus == 2);
            double ext = fabs(log(fmax(n.allreduce_s, 1e-12) / n.a2_s));
            n.sigma_net = net_below = net_above =
                hypot(p->sigma_fit, p->k.sigma_away * away + p->k.sigma_extrapolate * ext);
        }
        /* The growth exponent's range beyond the measured node count
         * (CF_PERF_GROWTH_NODES_MIN/MAX): its 10th and 90th percentiles. */
        double z = cf_normal_two_sided_z(CF_INTERVAL_LEVEL), tail = (1.0 - CF_INTERVAL_LEVEL) / 2;
        double growth = nodes > n_meas ? log(ring(nodes) / ring(n_meas)) / z : 0.0;
        double range = p->k.growth_nodes_max - p->k.growth_nodes_min;
        double a_lo = p->k.growth_nodes_min + tail * range, a_hi = p->k.growth_nodes_max - tail * range;
        double below = p->k.sigma_shape_below * n.sigma_shape;
        double growth_below = fmax(0.0, p->k.growth_nodes - a_lo) * growth;
        double growth_above = fmax(0.0, a_hi - p->k.growth_nodes) * growth;
        n.sigma_net_below = sqrt(net_below * net_below + below * below + growth_below * growth_below);
        n.sigma_net_above =
            sqrt(net_above * net_above + n.sigma_shape * n.sigma_shape + growth_above * growth_above);
        n.factor_below = exp(-z * n.sigma_net_below);
        n.factor_above = exp(z * n.sigma_net_above);
    } else {
        n.factor_below = n.factor_above = 1.0;
    }
    return n;
}

/* What of the all-reduce A and the per-step overhead c0 shows beside a
 * compute of compute_s, both scaled by factor. */
static double visible_at(const cf_perf_params *p, double allreduce_s, double compute_s, double factor)
{
    double hidden_by = hide_fraction(p) * compute_s, a = allreduce_s * factor;
    return p->overhead_s * factor + fmax(0.0, a - hidden_by) + p->k.interference * fmin(a, hidden_by);
}

void cf_perf_step_sigmas(const cf_step *one, double step_s, double *sigma, double *sigma_up, double *net_below,
                         double *net_above)
{
    double below = 0, above = 0;
    if (one->visible_s > 0 && step_s > 0) {
        double z = CF_INTERVAL_Z;
        double drop = fmin(one->visible_s - one->visible_below_s, 0.999 * step_s);
        below = log(step_s / (step_s - drop)) / z;
        above = log((step_s + one->visible_above_s - one->visible_s) / step_s) / z;
    }
    /* sqrt of the sum, not hypot(): these run for every configuration, glibc's
     * hypot was a fifth of a recommend's instructions, and log-scale sigmas
     * cannot overflow. */
    if (sigma)
        *sigma = sqrt(one->sigma_base * one->sigma_base + below * below);
    if (sigma_up)
        *sigma_up = sqrt(one->sigma_base * one->sigma_base + above * above);
    if (net_below)
        *net_below = below;
    if (net_above)
        *net_above = above;
}

cf_step cf_perf_combine_point(const cf_perf_params *p, cf_step node, const cf_perf_net *net, int accumulation)
{
    cf_step r = node;
    if (accumulation < 1)
        accumulation = 1;
    double t = r.compute_s;
    if (net->nodes > 1) {
        r.allreduce_s = net->allreduce_s;
        r.visible_s = r.visible_below_s = r.visible_above_s = visible_at(p, r.allreduce_s, r.compute_s, 1.0);
        t += r.visible_s;
        r.sigma_net = net->sigma_net;
        r.sigma_shape = net->sigma_shape;
        r.sigma_net_below = net->sigma_net_below;
        r.sigma_net_above = net->sigma_net_above;
    }
    r.step_s = (accumulation - 1) * r.compute_s + t;
    return r;
}

void cf_perf_network_percentiles(const cf_perf_params *p, const cf_perf_net *net, cf_step *one)
{
    if (net->nodes > 1) {
        one->visible_below_s = visible_at(p, one->allreduce_s, one->compute_s, net->factor_below);
        one->visible_above_s = visible_at(p, one->allreduce_s, one->compute_s, net->factor_above);
    }
}

cf_step cf_perf_combine(const cf_perf_params *p, cf_step node, const cf_perf_net *net, int accumulation)
{
    cf_step r = cf_perf_combine_point(p, node, net, accumulation);
    cf_perf_network_percentiles(p, net, &r);
    cf_perf_step_sigmas(&r, r.step_s, &r.sigma, &r.sigma_up, NULL, NULL);
    return r;
}

cf_step cf_perf_predict(const cf_perf_params *p, double bytes, int nodes, int g, int gpus, double m, int accumulation)
{
    cf_step node = cf_perf_node_step(p, bytes, g, m);
    cf_perf_net net = cf_perf_network_term(p, bytes, nodes, g, gpus);
    return cf_perf_combine(p, node, &net, accumulation);
}

double cf_perf_step_s(const cf_perf_params *p, double bytes, int nodes, int g, double m, int accumulation)
{
    return cf_perf_predict(p, bytes, nodes, g, nodes * g, m, accumulation).step_s;
}

cf_scaling_reason cf_perf_scaling_reason(const cf_perf_params *p, double bytes, int nodes, int g, double m,
                                         int accumulation)
{
    if (nodes < 2)
        return CF_SCALING_REGULAR;
    if (accumulation < 1)
        accumulation = 1;
    cf_step before = cf_perf_predict(p, bytes, nodes - 1, g, (nodes - 1) * g, m, accumulation);
    cf_step after = cf_perf_predict(p, bytes, nodes, g, nodes * g, m, accumulation);
    double x_before = (nodes - 1) / before.step_s, x_after = nodes / after.step_s; /* per g·m·s samples */
    const double tol = 1e-9;
    if (x_after >= x_before * (1 - tol) && x_after <= x_before * nodes / (nodes - 1.0) * (1 + tol))
        return CF_SCALING_REGULAR;
    if (p->two_vm_exponent > 0 && g > 1 && (nodes == 2 || nodes == 3))
        return CF_SCALING_TWO_VM;
    if (nodes == 2 && after.visible_s >= accumulation * after.compute_s * (1 - tol))
        return CF_SCALING_NETWORK_BOUND;
    /* The ring's latency grows by 2 hops per bucket with each VM (2(N−1) in
     * all): where it dominates the step, adding a VM adds more time than
     * its share. Named when the step without that added latency would not
     * fall (the visible part grows by at most the all-reduce's growth). */
    double added_latency = hop_latency(p, bytes, nodes) - hop_latency(p, bytes, nodes - 1);
    if (x_after < x_before && (after.step_s - added_latency) * (nodes - 1) <= before.step_s * nodes * (1 + tol))
        return CF_SCALING_LATENCY_BOUND;
    return CF_SCALING_UNEXPLAINED;
}

double cf_perf_compute_s(const cf_perf_params *p, double m, int g)
{
    cf_provenance src;
    return t1_at(p, p->gradient_bytes, g < 1 ? 1 : g, m, &src);
}

double cf_perf_sync_s(const cf_perf_params *p, double bytes, int nodes, int g)
{
    return nodes > 1 ? allreduce(p, bytes, nodes, g, nodes * g, NULL) : 0;
}

/* ---- normal quantiles (Acklam's rational approximation, refined by one
 * Halley step on erfc; |error| < 1e-12) ------------------------------------------------------- */

double cf_normal_quantile(double p)
{
    if (!(p > 0 && p < 1))
        return p <= 0 ? -INFINITY : INFINITY;
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01, -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    double q, x;
    if (p < 0.02425) {
        q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p > 1 - 0.02425) {
        q = sqrt(-2 * log(1 - p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        q = p - 0.5;
        double r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    double e = 0.5 * erfc(-x / sqrt(2)) - p;
    double u = e * sqrt(2 * 3.14159265358979323846) * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

double cf_step_quantile(double step_s, double sigma, double sigma_up, double q)
{
    double z = cf_normal_quantile(q);
    return step_s * exp(z * (z > 0 ? sigma_up : sigma));
}

double cf_normal_two_sided_z(double level) { return cf_normal_quantile(0.5 + 0.5 * level); }

/* ---- measured rows ---------------------------------------------------------------------------- */

int cf_measurement_gpus_per_node(const cf_measurement *row)
{
    /* Uneven placements ("1124"): the busiest node bounds compute
     * contention and NIC sharing. */
    if (row->placement[0]) {
        int busiest = 0;
        for (const char *c = row->placement; *c; c++)
            if (*c >= '0' && *c <= '9' && *c - '0' > busiest)
                busiest = *c - '0';
        if (busiest > 0)
            return busiest;
    }
    return (row->num_gpus + row->num_nodes - 1) / row->num_nodes;
}

cf_step cf_perf_predict_measurement(const cf_perf_params *p, const cf_measurement *row, double gradient_bytes)
{
    return cf_perf_predict(p, gradient_bytes, row->num_nodes, cf_measurement_gpus_per_node(row), row->num_gpus,
                           row->local_bsz, 1);
}
