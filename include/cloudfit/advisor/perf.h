/* The step-time model (advisor/model/perf.c, advisor/model/fit.c; docs/model.md "Step time",
 * docs/model.md "Step time"). Pure functions.
 *
 * Notation: N nodes (VMs) with g GPUs on the busiest one, K GPUs in all,
 * per-GPU micro-batch m, s micro-batches per optimizer step, S gradient
 * bytes, ring(n) = 2(n−1)/n.
 *
 *   single node:  T1(g, m)   the profile's own step time at g GPUs (linear
 *                            interpolation in m; linear in g between
 *                            profiled counts; else carried from the nearest
 *                            profiled count with the in-node contention κ
 *                            and the visible in-node ring all-reduce)
 *   N ≥ 2:        t = T1 + c0 + max(0, A − ρ·T1) + ψ·min(A, ρ·T1)
 *                 A = max(A_floor(K), A2' · G(N, K) · [N = 2] g^b2 + λ(N))
 *                 A2' = 8S/BW_eff (the 2 × 1 probe's all-reduce, latency excluded)
 *                 G  = ring(N)^a · (ring(K)/ring(N))^c        (1 at N = K = 2)
 *                 λ(N) = L · ceil(S / 25 MiB) · 2(N − 1)
 *                 A_floor(K) = ring(K) · 8S / NIC             (never faster than the NIC)
 *   accumulation: step = (s − 1)·T1 + t
 *
 * Per job (fitted from multi-node rows: the 2 × 1 probe or more):
 * BW_eff, ρ, c0, b2. Global constants (a, c, L, ψ, ρ_def, κ, interval
 * constants) are in cf_perf_constants, defaults below: the one place they
 * are written down. */
#ifndef CLOUDFIT_ADVISOR_PERF_H
#define CLOUDFIT_ADVISOR_PERF_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "cloudfit/common/shared_types.h"

/* ---- global constants ----------------------------------------------------------------- */

/* Chosen on the T4 cluster (bench/step_model_lab.py, docs/model.md "Where
 * each constant comes from"); the DGX cluster could not choose the network
 * ones (its inter-node all-reduce hides behind compute). */
#define CF_PERF_GROWTH_NODES 0.5        /* a: growth of the all-reduce in N, ring(N)^a */
#define CF_PERF_GROWTH_GPUS 0.0         /* c: extra growth in K at fixed N */
#define CF_PERF_HOP_LATENCY_S 2e-4      /* L: per DDP bucket per ring hop, over TCP (chosen on T4) */
/* L over RDMA (EFA, InfiniBand) as a share of L over TCP. DGX A100 (RDMA)
 * cannot tell any L from 0 (every value ties: the all-reduce hides); a
 * socket hop costs tens of µs where an RDMA verb costs a few, so a tenth is
 * declared, not fitted. TCP's L on an RDMA fabric made a 1.5 B-parameter
 * model (238 buckets) slower on 3 H100 VMs than on 2
 * (tests/test_curves.c, the catalog sweep). */
#define CF_PERF_RDMA_LATENCY_SHARE 0.1
#define CF_PERF_INTERFERENCE 0.1        /* ψ: cost of the hidden all-reduce to compute */
#define CF_PERF_HIDE_DEFAULT 0.1        /* ρ_def: hiding fraction with no multi-node measurement */
#define CF_PERF_CONTENTION_PCIE 0.05    /* κ of PCIe-only nodes (chosen on T4) */
#define CF_PERF_CONTENTION_NVLINK 0.01  /* κ of NVLink/NVSwitch nodes (chosen on DGX A100) */
#define CF_PERF_INTRA_EFFICIENCY 0.5    /* the in-node ring at this share of the nominal rate (not fitted) */
#define CF_PERF_FIXED_SHARE 0.148       /* fixed share of a step with a single profiled batch (carry rule's φ) */
/* Interval constants: log-normal, σ² = kT²(σ_T² + s0²) + [T1 estimated](u_ing ln g)²
 * + share²·σ_net² + σ_carry²; σ_net² = σ_fit² + (u0·[not the probe's shape] +
 * u_ext·|ln(A/A2)|)² with a measured network, u_def² without (on a NIC
 * the catalog does not give, each side at least as wide as the all-reduce
 * on its slowest and fastest NIC: CF_UNKNOWN_NIC_SLOWEST_GBPS). */
#define CF_PERF_SIGMA_SCALE 1.25        /* kT */
#define CF_PERF_SIGMA_FLOOR 0.04        /* s0 */
#define CF_PERF_SIGMA_AWAY 0.0          /* u0 (0.20 before the shape term took its place; kept for the lab) */
#define CF_PERF_SIGMA_EXTRAPOLATE 0.0   /* u_ext (0.25 before the shape term; kept for the lab) */
#define CF_PERF_SIGMA_DEFAULT_NET 0.40  /* u_def */
#define CF_PERF_SIGMA_GPUS 0.10         /* u_ing, per ln g */
/* More GPUs per node than the network was measured with (g_m; without a
 * measurement the 1 GPU per node the default stands for) share the node's
 * NIC in ways a probe at g_m cannot show: the upper side widens by
 *     σ_shape = u_shape · √ln⁺(g/g_m)
 * (docs/model.md, "Intervals"). The growth in the node count is the growth
 * exponent's range below, not this term (it was both until the range took
 * NCCL's measured growth as its upper end). */
#define CF_PERF_SIGMA_SHAPE 0.57        /* u_shape: RMS of NCCL's five published points (neither cluster; docs/model.md) */
#define CF_PERF_SIGMA_SHAPE_BELOW 0.0   /* u_shape_lo: the share of σ_shape on the lower side (NCCL: none of five below) */
/* How the all-reduce grows with the node count is not known in advance:
 * NCCL's double binary tree moves about the same bytes per NIC at any N
 * (a ≈ 0), its ring 2(N−1)/N (a = 1), and NCCL's own benchmark on AWS
 * p4dn doubles from 2 to 4 nodes (NVIDIA/nccl#527: a ≈ 1.7–2.0). Beyond
 * the node count N_m the network was measured at, the all-reduce's growth
 * ring(N)/ring(N_m) carries the exponent's range: with a uniform belief
 * over [a_min, a_max], the all-reduce's 80 % interval reaches the growth
 * at its 10th and 90th percentiles,
 *     σ_growth,below = max(0, a − a_10) · ln(ring(N)/ring(N_m)) / 1.2816
 *     σ_growth,above = max(0, a_90 − a) · ln(ring(N)/ring(N_m)) / 1.2816
 * and the step's interval is the step at the all-reduce's percentiles,
 * through the overlap hinge (cf_perf_step_sigmas). Declared from NCCL's
 * algorithms and published scaling, not fitted; docs/model.md "Intervals". */
#define CF_PERF_GROWTH_NODES_MIN 0.0    /* a_min: NCCL's tree */
#define CF_PERF_GROWTH_NODES_MAX 2.0    /* a_max: NCCL's measured p4dn growth (NVIDIA/nccl#527) */
#define CF_PERF_SIGMA_PROFILE_NONE 0.05 /* σ_T when the profile cannot tell its own noise */
/* Compute estimated from FLOPs alone (no profile to carry over): the
 * peak-FLOP ratio's errors, 21.9 / 71.1 %, are those of σ ≈ 0.35; a
 * roofline with an assumed efficiency is cruder: 0.5, not validated. A
 * carried profile's σ is cf_carry_sigma (advisor/carry.h). */
#define CF_PERF_SIGMA_ROOFLINE 0.50

/* Hardware defaults (not fitted). */
#define CF_DDP_BUCKET_BYTES (25.0 * 1024 * 1024)      /* PyTorch DDP gradient buckets */
#define CF_DEFAULT_UNKNOWN_INTERCONNECT_GBS 16.0      /* PCIe 3.0 x16, GB/s per GPU */
/* A VM whose NIC the catalog does not give: its default network (no
 * measurement) assumes this nominal rate, and a network measured on a
 * known NIC and carried to it is bounded by it; but a network measured on
 * that unknown NIC itself is not — its fitted rate stands and no floor
 * A_floor applies (docs/model.md, "Bounded by the hardware"). */
#define CF_DEFAULT_UNKNOWN_NETWORK_GBPS 10.0
/* The fastest NIC any catalog VM has (AWS p6-b300.48xlarge, 6,400 Gbit/s
 * EFA; 3,200 until 2026-11-29, p5.48xlarge's, after the catalog had grown
 * past it): the bound of a network fit on a NIC the catalog does not give.
 * test_curves checks both ends against the embedded catalog. */
#define CF_UNKNOWN_NIC_FIT_BOUND_GBPS 6400.0
/* The default network on a NIC the catalog does not give is a guess: its
 * 80 % interval spans the all-reduce on the slowest NIC any catalog VM has
 * (2.5 Gbit/s: AWS g5.xlarge, g6.xlarge, p3.2xlarge, …, over TCP) and on
 * the fastest (CF_UNKNOWN_NIC_FIT_BOUND_GBPS, over RDMA), each with the
 * default efficiency of its class — a declared prior over the fabrics the
 * catalog sells, not fitted to any cluster (docs/model.md "Intervals"). */
#define CF_UNKNOWN_NIC_SLOWEST_GBPS 2.5
#define CF_RDMA_MIN_NOMINAL_GBPS 400.0                /* the catalog's EFA / InfiniBand aggregates */
#define CF_DEFAULT_RDMA_EFFICIENCY 0.5                /* RDMA: half the nominal rate */
/* TCP (NCCL sockets): AWS documents a 5 Gbit/s limit per flow between
 * instances outside a cluster placement group; the T4 probes measured
 * 2.9–5.2 Gbit/s effective on 50 Gbit/s VMs. Other clouds document no
 * figure; the same is assumed. */
#define CF_DEFAULT_TCP_ALLREDUCE_GBPS 5.0

typedef struct {
    double growth_nodes, growth_gpus, hop_latency_s, interference;
    double hide_default;
    double contention_pcie, contention_nvlink, intra_efficiency;
    double sigma_scale, sigma_floor, sigma_away, sigma_extrapolate, sigma_default_net, sigma_gpus;
    double sigma_shape, sigma_shape_below;
    double growth_nodes_min, growth_nodes_max;
} cf_perf_constants;

/* The constants above. */
cf_perf_constants cf_perf_constants_default(void);
/* Sets one constant by name ("growth_nodes", ..., as in the struct; also
 * the lab's short names a, c, L, psi, rho_def, kappa_pcie, kappa_nvlink,
 * kT, s0, u0, u_ext, u_def, u_ing, u_shape, u_shape_lo, a_min, a_max). CF_ERR_INVALID for an unknown name or
 * a value out of range. */
cf_status cf_perf_constant_set(cf_perf_constants *k, const char *name, double value);
/* Checks what no single constant can: the growth exponent's range is a
 * range (a_min ≤ a_max). CF_ERR_INVALID with the two values otherwise. */
cf_status cf_perf_constants_check(const cf_perf_constants *k);
/* Sets constants from `items`, each "NAME=VALUE[,NAME=VALUE...]" (the
 * lab's --model-constants), over *k, then checks the whole: CF_ERR_USAGE
 * for an item that is not NAME=VALUE with a number, CF_ERR_INVALID as
 * cf_perf_constant_set and cf_perf_constants_check (a hint names the
 * constants). Any length: nothing is cut (a list cut at 511 bytes read
 * kT=0...01.25 as kT=0). */
cf_status cf_perf_constants_parse(const char *const *items, size_t n, cf_perf_constants *k);

/* ---- a GPU type's parameters ------------------------------------------------------------ */

#define CF_PERF_MAX_CURVES 16     /* GPU counts profiled on one node */
#define CF_PERF_MAX_POINTS 48     /* batches per GPU count */

/* Single-node step times at one GPU count, batches ascending and distinct. */
typedef struct {
    int gpus;
    int n;
    double batch[CF_PERF_MAX_POINTS];
    double step_s[CF_PERF_MAX_POINTS];
} cf_perf_curve;

typedef struct {
    /* Compute: the single-node step T1(g, m). Profiled curves (ascending
     * g), or with none the line α + β·m for one GPU (an inline profile, a
     * 1-GPU `cloudfit profile`, an estimate). */
    cf_perf_curve curves[CF_PERF_MAX_CURVES];
    int n_curves;
    double alpha_s, beta_s;
    double compute_scale;       /* factor on T1 (carry-over, recorded runs); 0 = 1 */
    double contention;          /* κ: from the profile's GPU counts, else the class default */
    double sigma_profile;       /* σ_T, log sd of one profiled step time */
    double sigma_compute;       /* extra log sd: compute carried over / estimated (0 = measured) */
    /* In-node hardware (never fitted). */
    double gradient_bytes;      /* S of the job (the in-node ring of GPU counts not profiled) */
    double intra_gbps;          /* nominal GPU-to-GPU rate per GPU, Gbit/s */
    int nvlink;                 /* NVLink/NVSwitch inside the node (else PCIe) */
    /* Network. */
    double nic_gbps;            /* nominal NIC of the VM the predictions are for; 0 = unknown */
    /* The NICs the VM may have where which VM it is was inferred, not
     * given (validate: a cluster's GPU and GPUs per VM match catalog VMs of
     * several NICs; nic_gbps is the slowest): the default network's
     * interval spans the all-reduce on both ends. {0, 0}: none (a known
     * VM, or an unknown NIC, which spans the catalog's). */
    double nic_span_gbps[2];
    double inter_gbps;          /* effective all-reduce rate of the 2 × 1 probe, Gbit/s; 0 = the default for the NIC */
    double hide;                /* ρ */
    double overhead_s;          /* c0 */
    double two_vm_exponent;     /* b2 (N = 2 only) */
    double sigma_fit;           /* log sd of the network fit's residuals */
    int bound_hit;              /* the fit reached the NIC's nominal rate */
    int max_nodes_measured;     /* most VMs of a multi-node measurement the network was fitted on; 0 = none.
                                   How the all-reduce grows beyond it differs between clusters (docs/model.md) */
    int max_node_gpus_measured; /* most GPUs per VM in those measurements; 0 = none */
    int max_local_batch;        /* memory ceiling; 0 = unknown, < 0 = the model does not fit */
    cf_provenance compute_provenance;
    cf_provenance network_provenance;
    cf_provenance memory_provenance;
    cf_perf_constants k;
} cf_perf_params;

/* One prediction and its parts. */
typedef struct {
    double step_s;              /* one optimizer step */
    double compute_s;           /* T1(g, m): one micro-batch on a node of g GPUs (in-node sync included) */
    double allreduce_s;         /* A: the inter-node all-reduce before overlap (0 for one node) */
    double visible_s;           /* what of it shows, with c0 and interference */
    double sigma;               /* log sd of step_s below the point (and above it up to the shape term) */
    double sigma_up;            /* log sd above the point: the 80 % interval is [step·e^(−1.2816σ), step·e^(1.2816σ_up)]
                                   (a two-piece log-normal with its median at step_s); σ_up ≥ σ */
    double sigma_base, sigma_net; /* the profile's part; the network fit's (or default's), both sides */
    double sigma_shape;         /* more GPUs per node than measured (the upper side; u_shape_lo of it below) */
    double sigma_net_below, sigma_net_above; /* the network's whole log sd on each side (σ_net, shape, growth range),
                                   of the all-reduce and c0 (cf_perf_net) */
    double visible_below_s, visible_above_s; /* visible_s with the all-reduce and c0 at their 10th / 90th percentile
                                   (e^(∓1.2816·sigma_net_below/above)): through the hinge, not a linearisation */
    double sigma_noise;         /* the part of σ_base that is the profile's own scatter, kT·√(σ_T² + s0²) */
    cf_provenance compute_source; /* measured (profiled g), fitted (interpolated g), estimated */
} cf_step;

/* The two halves of cf_perf_predict, for callers that evaluate many
 * batches on one shape (the enumeration): the single-node part at (g, m)
 * and the inter-node part at (N, g, K), which does not depend on m;
 *   cf_perf_predict(p, S, N, g, K, m, s)
 *     == cf_perf_combine(p, cf_perf_node_step(p, S, g, m), &net(p, S, N, g, K), s). */
typedef struct {
    int nodes;
    double allreduce_s;         /* A */
    double a2_s;                /* the probe's A2 (latency included) */
    double sigma_net;           /* σ_net at this shape, the wider side's (0 for one node) */
    double sigma_shape;         /* σ_shape: more GPUs per node than measured, the upper side (u_shape_lo of it below) */
    double sigma_net_below, sigma_net_above; /* σ_net, σ_shape and the growth exponent's range, each side */
    double factor_below, factor_above; /* e^(−z·sigma_net_below), e^(z·sigma_net_above), z = 1.2816 (1 for one node) */
} cf_perf_net;

/* Adding a VM at the same per-GPU batch and accumulation should raise the
 * throughput, by at most its own share (X(N) ≤ X(N−1)·N/(N−1)). Where the
 * model predicts otherwise it says why: */
typedef enum {
    CF_SCALING_REGULAR,         /* X(N−1) ≤ X(N) ≤ X(N−1)·N/(N−1) */
    CF_SCALING_NETWORK_BOUND,   /* N = 2: the visible all-reduce between the VMs takes longer than a one-VM step */
    CF_SCALING_TWO_VM,          /* N = 2 or 3: two VMs of g > 1 GPUs were measured slower than three (b2) */
    CF_SCALING_LATENCY_BOUND,   /* the throughput falls, and would not without the ring's latency that the added
                                   VM brings (2 hops per DDP bucket): a step the per-hop latency dominates */
    CF_SCALING_UNEXPLAINED      /* none of these: a defect of the model (tests/test_curves.c sweeps the catalog) */
} cf_scaling_reason;

#define CF_INTERVAL_LEVEL 0.8
#define CF_INTERVAL_Z 1.2815515655446004 /* cf_normal_two_sided_z(CF_INTERVAL_LEVEL); tests/test_advisor.c checks it */

/* ---- fitting --------------------------------------------------------------------------- */

typedef struct {
    double rel_rmse;            /* root mean square relative residual over the rows (in-sample) */
    double r2_single_gpu;       /* kept for reports: NaN */
    size_t n_rows;
    size_t n_single_gpu, n_multi_gpu_node, n_multi_node;
    int n_curves;               /* GPU counts profiled */
    int fitted_inter;           /* the network was fitted (≥ 1 multi-node row) */
    int fitted_hide;            /* ρ fitted (multi-node rows at ≥ 2 batches) */
    int fitted_two_vm;          /* b2 fitted (2-node rows with g > 1) */
    int bound_hit;              /* the fitted all-reduce reached the NIC's nominal rate */
} cf_perf_fit_report;

#endif
