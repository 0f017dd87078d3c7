#include "cloudfit/usecase/simulate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/common/fileio.h"
#include "cloudfit/common/number.h"
#include "cloudfit/pricing/offer_pick.h"

static void note(const cf_simulate_run_request *req, cf_note_kind kind, const char *text)
{
    if (req->note)
        req->note(req->note_ctx, kind, text);
}

/* A run's notes: passed on, and its warnings kept for the report (the
 * JSON document says them too, not only stderr). */
typedef struct {
    const cf_simulate_run_request *req;
    cf_simulate_run_result *out;
} run_notes;

static void keep_note(void *ctx, cf_note_kind kind, const char *text)
{
    run_notes *n = ctx;
    if (kind == CF_NOTE_WARNING && n->out->n_warnings < CF_SIMULATE_MAX_WARNINGS)
        snprintf(n->out->warnings[n->out->n_warnings++], sizeof n->out->warnings[0], "%s", text);
    note(n->req, kind, text);
}

cf_status cf_simulate_rules_of(const char *name, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bits;
    } rules[] = {{"fixed", CF_SIM_FIXED}, {"linear", CF_SIM_LINEAR}, {"sqrt", CF_SIM_SQRT}, {"gain", CF_SIM_GAIN},
                 {"all", CF_SIM_ALL_RULES}};
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (strcmp(name, rules[i].name) == 0) {
            *out = rules[i].bits;
            return CF_OK;
        }
    return cf_error_set(CF_ERR_INVALID, "unknown LR rule '%s' (fixed, linear, sqrt, gain or all)", name);
}

cf_status cf_simulate_batches_of(const char *name, unsigned *out)
{
    if (strcmp(name, "both") == 0)
        *out = CF_SIM_HOLD | CF_SIM_SHRINK;
    else if (strcmp(name, "hold") == 0 || strcmp(name, "shrink") == 0)
        *out = name[0] == 'h' ? CF_SIM_HOLD : CF_SIM_SHRINK;
    else
        return cf_error_set(CF_ERR_INVALID, "unknown batch policy '%s' (hold, shrink or both)", name);
    return CF_OK;
}

/* One file with a count column per VM type (docs/spot.md "Trace
 * folders") is the merged form of two traces: split into the two it
 * merges, each column then finds its VM as a trace file of its own does. */
static cf_status split_columns(const cf_simulate_run_request *req, cf_simulate_run_result *out)
{
    if (req->nodes > 0)
        return cf_error_set(CF_ERR_USAGE, "--nodes applies to a trace of one VM type; %s has a count column per type "
                            "(the largest count of each is its requested nodes)", out->traces[0].name);
    cf_spot_trace both = out->traces[0];
    memset(&out->traces[0], 0, sizeof out->traces[0]);
    out->n_traces = 0;
    cf_status st = CF_OK;
    for (int k = 0; k < 2 && st == CF_OK; k++)
        if ((st = cf_spot_trace_column(&both, k, &out->traces[k])) == CF_OK)
            out->n_traces++;
    cf_spot_trace_free(&both);
    return st;
}

static cf_status load_traces(const cf_simulate_run_request *req, cf_simulate_run_result *out)
{
    if (req->n_traces < 1 || req->n_traces > 2)
        return cf_error_set(CF_ERR_INVALID, "simulate takes one trace, or two to mix two VM types");
    for (size_t k = 0; k < req->n_traces; k++) {
        cf_status st = cf_spot_trace_load(req->trace_paths[k], req->n_traces == 1 ? req->nodes : 0, &out->traces[k]);
        if (st != CF_OK)
            return st;
        out->n_traces++;
        if (out->traces[k].n_types != 1 && req->n_traces == 2)
            return cf_error_set(CF_ERR_INVALID, "%s: with two --trace files, each holds one count column (one VM "
                                "type); a file with a column per type is given alone", req->trace_paths[k]);
    }
    int split = out->traces[0].n_types == 2;
    cf_status st = split ? split_columns(req, out) : CF_OK;
    if (st == CF_OK && req->n_gpus > out->n_traces && out->n_traces > 1) /* one --gpu per VM type */
        return cf_error_set(CF_ERR_USAGE, "more --gpu than VM types: give one --gpu per trace (or count column), in "
                            "their order");
    if (st == CF_OK && req->n_gpus > out->n_traces)
        return cf_error_set(CF_ERR_USAGE, "%s holds one VM type's counts: give one --gpu (a trace with two count "
                            "columns takes two)", out->traces[0].name);
    if (st == CF_OK && out->n_traces == 2 &&
        (st = cf_spot_trace_merge(&out->traces[0], &out->traces[1], &out->merged)) == CF_OK && split)
        snprintf(out->merged.name, sizeof out->merged.name, "%s", req->trace_paths[0]);
    return st;
}

/* A trace that says where it was recorded (its index.csv row or its path)
 * is that zone's availability: a --cloud or --region naming another one
 * is refused (exit 2), never replayed on another region's VMs (it was, on
 * the VM of --region's, without a word). */
static cf_status check_where(const cf_simulate_run_request *req, const char *name, const cf_spot_trace_vm *tv)
{
    int cloud = req->cloud && tv->cloud[0] && strcasecmp(req->cloud, tv->cloud) != 0;
    if (!cloud && !(req->region && tv->region[0] && strcasecmp(req->region, tv->region) != 0))
        return CF_OK;
    const char *option = cloud ? "--cloud" : "--region", *value = cloud ? req->cloud : req->region;
    cf_error_set(CF_ERR_USAGE, "%s: the trace was recorded in zone %s (%s%s%s); %s %s names another %s, whose "
                 "availability it does not hold", name, tv->zone[0] ? tv->zone : tv->region, tv->cloud,
                 tv->cloud[0] ? "/" : "", tv->region, option, value, cloud ? "cloud" : "region");
    cf_error_hint("drop %s (the replay runs on the trace's own %s), or give a trace recorded in %s", option,
                  cloud ? "cloud" : "region", value);
    return CF_ERR_USAGE;
}

/* The offer each trace was recorded on, with the request's GPU (one per
 * trace), instance type (the first), cloud and region on top. */
static cf_status pick_offers(const cf_simulate_run_request *req, cf_simulate_run_result *out, const cf_spot_trace *trace)
{
    for (size_t k = 0; k < out->n_traces; k++) {
        cf_status where = check_where(req, out->traces[k].name, &out->traces[k].vm[0]);
        if (where != CF_OK)
            return where;
        cf_trace_offer_query q = {.vm = &out->traces[k].vm[0], .gpu = req->n_gpus > k ? req->gpus[k] : NULL,
                                  .instance_type = k == 0 ? req->instance_type : NULL, .cloud = req->cloud,
                                  .region = req->region};
        cf_status st = cf_offer_for_trace(req->catalog, &q, &out->vms[k], out->notes[k], sizeof out->notes[k]);
        if (st != CF_OK) {
            cf_error_prefix("%s", out->traces[k].name);
            return st;
        }
        /* The VM looked for, as cf_offer_for_trace takes it: the user's
         * GPU or instance type, else the trace's own. A --cloud or
         * --region alone names no VM. */
        const cf_spot_trace_vm *tv = q.vm;
        const char *gpu = q.gpu ? q.gpu : tv->gpu[0] ? tv->gpu : NULL;
        const char *instance = q.instance_type                 ? q.instance_type
                               : !q.gpu && tv->instance_type[0] ? tv->instance_type
                                                                : NULL;
        if (!out->vms[k] && !gpu && !instance) {
            cf_error_set(CF_ERR_INVALID, "%s: which VM was this trace recorded on? no index.csv row names it",
                         out->traces[k].name);
            cf_error_hint("give --gpu GPU (one per trace) or --instance-type TYPE, and --cloud / --region");
            return CF_ERR_INVALID;
        }
        if (!out->vms[k]) {
            char size[32] = "";
            if (!instance && tv->gpus_per_vm > 0)
                snprintf(size, sizeof size, " × %d per VM", tv->gpus_per_vm);
            const char *cloud = q.cloud ? q.cloud : tv->cloud[0] ? tv->cloud : NULL;
            cf_error_set(CF_ERR_INVALID, "%s: no catalog offer is %s%s%s%s%s%s%s%s%s", out->traces[k].name,
                         instance ? "instance type " : "", instance ? instance : "",
                         gpu ? (instance ? ", GPU " : "GPU ") : "", gpu ? gpu : "", size, cloud ? " on " : "",
                         cloud ? cloud : "", q.region ? " in " : "", q.region ? q.region : "");
            cf_error_hint("'cloudfit prices%s%s' lists what the catalog sells", q.gpu ? " " : "", q.gpu ? q.gpu : "");
            return CF_ERR_INVALID;
        }
        out->nodes[k] = trace->vm[k].requested;
    }
    return CF_OK;
}

static double trace_hours(const cf_spot_trace *t)
{
    double h = 0;
    for (size_t i = 0; i < t->n_ticks; i++)
        h += t->dt_h[i];
    return h;
}

/* Two traces are replayed together over the shorter one's length
 * (cf_spot_trace_merge): say what of the longer is not used (a 45-day
 * trace beside a 2-hour one was cut to 2 hours without a word). */
static void note_cut(const cf_simulate_run_request *req, const cf_simulate_run_result *out)
{
    double h[2] = {trace_hours(&out->traces[0]), trace_hours(&out->traces[1])};
    int longer = h[1] > h[0];
    double used = h[!longer];
    if (!(h[longer] - used > 1e-9 * h[longer]))
        return;
    char text[512];
    snprintf(text, sizeof text, "the two traces cover %.1f h and %.1f h: they are replayed together over their first "
             "%.1f h, and the last %.1f h of %s are not used", h[0], h[1], used, h[longer] - used,
             cf_basename(out->traces[longer].name));
    note(req, CF_NOTE_WARNING, text);
}

/* A job longer than the trace replays it more than once from every start
 * (the trace is circular: after its last tick comes its first): say so,
 * and how often, since the spread then says little about the process. */
static void note_outlasting(const cf_simulate_run_request *req, const cf_simulate_run_result *out)
{
    const cf_simulate_request *sim = &out->setup.req;
    const cf_spot_path *path = &out->path;
    double longest = 0;
    for (int i = 0; i < out->result.n_rows; i++)
        longest = out->result.rows[i].spread.p50_h > longest ? out->result.rows[i].spread.p50_h : longest;
    if (!(sim->work_h > path->total_h / 2) && !(longest > path->total_h / 2))
        return;
    char text[1024], limit[160];
    cf_spot_spread stops = {0}; /* what stopped the unfinished starts, over every row */
    for (int i = 0; i < out->result.n_rows; i++) {
        stops.n_unfinished += out->result.rows[i].spread.n_unfinished;
        stops.n_unfinished_passes += out->result.rows[i].spread.n_unfinished_passes;
    }
    cf_simulate_stop_text(&stops, path->total_h, limit, sizeof limit);
    if (!isfinite(longest) && !(sim->work_h > path->total_h / 2)) {
        /* A short job that never ends: not the trace's length but its runs
         * (each shorter than a restart and the work before the next
         * checkpoint, or no VM held at all), or the LR rule of the rows that
         * do not end (no expected progress at the counts the trace holds).
         * The rows are named where others end: the warning said the job
         * "finishes from no start" and blamed the trace while the gain rule
         * finished in 84 h. */
        char work[32]; /* a short job's hours to 3 digits, never "1.5e+02" as %.2g wrote 148 h */
        cf_number_plain_text(sim->work_h, 3, work, sizeof work);
        char rows[200] = "";
        int n_never = 0, n_stalled = 0, n_some = 0;
        for (int i = 0; i < out->result.n_rows; i++) {
            const cf_simulate_row *row = &out->result.rows[i];
            if (isfinite(row->spread.p50_h))
                continue;
            n_never++;
            n_stalled += row->no_progress_max_nodes > 0;
            n_some += row->spread.n_unfinished < row->spread.n;
            size_t used = strlen(rows);
            snprintf(rows + used, sizeof rows - used, "%s%s%s", used ? ", " : "",
                     out->setup.n_types > 1 ? "" : row->batch == CF_ELASTIC_HOLD ? "hold/" : "shrink/", row->rule);
        }
        char which[240];
        if (n_never == out->result.n_rows)
            snprintf(which, sizeof which, "%s", n_never > 1 ? " under every rule" : "");
        else
            snprintf(which, sizeof which, " under %s (the other rows finish)", rows);
        const char *stalled = "the LR rule makes no expected progress on the VMs the trace holds (the notes under "
                              "the table)";
        char runs[200];
        snprintf(runs, sizeof runs, "its runs of held VMs are too short for a restart (%.1f min) and the work up to a "
                 "checkpoint, or the VMs it needs are never held", 60 * sim->restart_h);
        snprintf(text, sizeof text, "the job (%s h of work) replayed on the trace (%.1f h) finishes from %s %s%s: %s%s%s",
                 work, path->total_h, n_some ? "fewer than half the starts" : "no start", limit, which,
                 n_stalled ? stalled : runs, n_stalled && n_stalled < n_never ? ", or " : "",
                 n_stalled && n_stalled < n_never ? runs : "");
        note(req, CF_NOTE_WARNING, text);
        return;
    }
    if (isfinite(longest))
        snprintf(text, sizeof text,
                 "the job (%.1f h of work, a median of %.1f h of wall time) outlasts half the trace (%.1f h): each "
                 "start replays the trace circularly, its end joined to its start, %.1f times for the median start; "
                 "the spread then reflects this trace's average more than its variation",
                 sim->work_h, longest, path->total_h, longest / path->total_h);
    else
        snprintf(text, sizeof text,
                 "the job (%.1f h of work) outlasts the trace (%.1f h): each start replays the trace circularly, its "
                 "end joined to its start, until the job ends or %g h or %d passes have passed",
                 sim->work_h, path->total_h, CF_SPOT_MAX_HOURS, CF_SPOT_MAX_PASSES);
    note(req, CF_NOTE_WARNING, text);
    note(req, CF_NOTE_HINT, "a trace of at least twice the job's wall time says more (or use --calibrate, which "
                            "scores shorter lengths too)");
}

/* "search.KEY LIMIT (the median … at best)" in `limits` when the rows' best
 * median (`best`, hours or dollars; infinite when no start finishes) is past
 * a limit given. */
static void median_past(cf_buf *limits, const char *key, double limit, double best, int dollars)
{
    if (!(limit > 0) || best <= limit)
        return;
    cf_buf_printf(limits, "%ssearch.%s %g (", limits->len ? ", " : "", key, limit);
    if (isfinite(best))
        cf_buf_printf(limits, "the median %s is %s%.*f%s at best)", dollars ? "cost" : "wall time", dollars ? "$" : "",
                      dollars ? 2 : 1, best, dollars ? "" : " h");
    else
        cf_buf_puts(limits, "the median start never finishes)");
}

/* simulate replays the trace's VMs whatever the spec's search allows
 * (docs/spot.md): say which of its limits the replayed plan is outside (a
 * spec limited to gcp, 2 nodes and A100 was replayed on 16 × aws V100
 * without a word). Clouds, regions and GPUs as recommend filters offers
 * (cf_catalog_filter_misses); the nodes and GPUs of both types together,
 * as recommend --mix counts them; the deadline and budget against the
 * best row's median; an explicit spot policy of never (the trace is a spot
 * VM's availability), or only on a VM without a spot price. */
static void note_limits(const cf_simulate_run_request *req, const cf_simulate_run_result *out)
{
    const cf_constraints *c = &req->spec->search;
    cf_catalog_filter_storage fs;
    cf_catalog_filter_from(c, c->spot, &fs);
    static const cf_filter_field fields[3] = {CF_FILTER_CLOUDS, CF_FILTER_REGIONS, CF_FILTER_GPUS};
    static const char *const names[3] = {"clouds", "regions", "gpus"};
    cf_buf plan = CF_BUF_INIT, missed[3] = {CF_BUF_INIT, CF_BUF_INIT, CF_BUF_INIT}, limits = CF_BUF_INIT;
    unsigned misses = 0;
    int nodes = 0, gpus = 0;
    for (size_t k = 0; k < out->n_traces; k++) {
        const cf_vm *vm = out->vms[k];
        unsigned m = cf_catalog_filter_misses(req->catalog, &fs.filter, vm);
        const char *value[3] = {vm->cloud, vm->region, vm->gpu_model};
        for (int f = 0; f < 3; f++) /* each value once */
            if (m & 1u << fields[f] && (!missed[f].len || strcmp(cf_buf_cstr(&missed[f]), value[f]) != 0))
                cf_buf_printf(&missed[f], "%s%s", missed[f].len ? ", " : "", value[f]);
        misses |= m;
        nodes += out->nodes[k];
        gpus += out->nodes[k] * vm->gpu_count;
        cf_buf_printf(&plan, "%s%d × %s/%s %s, %s", k ? " + " : "", out->nodes[k], vm->cloud, vm->region,
                      vm->instance_type, vm->gpu_model);
    }
    double best_h = INFINITY, best_usd = INFINITY;
    for (int i = 0; i < out->result.n_rows; i++) {
        const cf_spot_spread *sp = &out->result.rows[i].spread;
        best_h = sp->p50_h < best_h ? sp->p50_h : best_h;
        best_usd = sp->p50_usd < best_usd ? sp->p50_usd : best_usd;
    }
    for (int f = 0; f < 3; f++)
        if (misses & 1u << fields[f])
            cf_buf_printf(&limits, "%ssearch.%s (%s not in it)", limits.len ? ", " : "", names[f],
                          cf_buf_cstr(&missed[f]));
    if (c->max_nodes > 0 && nodes > c->max_nodes)
        cf_buf_printf(&limits, "%ssearch.max_nodes %d (%d VMs)", limits.len ? ", " : "", c->max_nodes, nodes);
    if (c->max_gpus > 0 && gpus > c->max_gpus)
        cf_buf_printf(&limits, "%ssearch.max_gpus %d (%d GPUs)", limits.len ? ", " : "", c->max_gpus, gpus);
    if ((c->spot == CF_SPOT_NEVER && c->spot_given) || (misses & 1u << CF_FILTER_SPOT))
        cf_buf_printf(&limits, "%ssearch.spot %s (%s)", limits.len ? ", " : "", cf_spot_policy_name(c->spot),
                      c->spot == CF_SPOT_NEVER ? "the trace is a spot VM's availability" : "the VM has no spot price");
    median_past(&limits, "deadline_hours", c->deadline_hours, best_h, 0);
    median_past(&limits, "budget_usd", c->budget_usd, best_usd, 1);
    if (limits.len) {
        cf_buf text = CF_BUF_INIT;
        cf_buf_printf(&text, "the replayed plan (%s) is outside the spec's %s: simulate replays the trace's VMs, "
                      "whatever the spec's search allows", cf_buf_cstr(&plan), cf_buf_cstr(&limits));
        note(req, CF_NOTE_WARNING, cf_buf_cstr(&text));
        note(req, CF_NOTE_HINT, "'cloudfit recommend --spot allow' plans within the search; replay its plan on a "
                                "trace recorded on its VMs (docs/spot.md, \"`cloudfit simulate`\")");
        cf_buf_free(&text);
    }
    cf_buf_free(&plan);
    cf_buf_free(&limits);
    for (int f = 0; f < 3; f++)
        cf_buf_free(&missed[f]);
}

/* The notes of how each trace's offer was found, as one: both when two
 * traces each have one (each retired GPU's stand-in), each after its
 * trace's name (only the first trace's was kept). */
static void join_notes(cf_simulate_run_result *out)
{
    int both = out->n_traces > 1 && out->notes[0][0] && out->notes[1][0];
    size_t used = 0;
    for (size_t k = 0; k < out->n_traces; k++) {
        if (!out->notes[k][0])
            continue;
        if (both)
            used += (size_t)snprintf(out->note + used, sizeof out->note - used, "%s%s: %s", k ? "; " : "",
                                     cf_basename(out->traces[k].name), out->notes[k]);
        else
            snprintf(out->note, sizeof out->note, "%s", out->notes[k]);
        if (used >= sizeof out->note)
            break;
    }
}

cf_status cf_simulate_run(const cf_simulate_run_request *caller_req, cf_simulate_run_result *out)
{
    memset(out, 0, sizeof *out);
    run_notes notes = {caller_req, out};
    cf_simulate_run_request own = *caller_req;
    own.note = keep_note;
    own.note_ctx = &notes;
    const cf_simulate_run_request *req = &own;
    const cf_spec *spec = req->spec;
    cf_status st = load_traces(req, out);
    if (st != CF_OK)
        return st;
    const cf_spot_trace *trace = out->n_traces == 2 ? &out->merged : &out->traces[0];
    if ((st = pick_offers(req, out, trace)) != CF_OK)
        return st;
    if (out->n_traces == 2 && (strcmp(out->vms[0]->cloud, out->vms[1]->cloud) ||
                               strcmp(out->vms[0]->region, out->vms[1]->region))) {
        char text[400];
        snprintf(text, sizeof text, "the two traces are in different regions (%s/%s, %s/%s): the plan's all-reduce "
                 "across them is modelled as within one region; inter-region latency, bandwidth and traffic cost are "
                 "not modelled", out->vms[0]->cloud, out->vms[0]->region, out->vms[1]->cloud, out->vms[1]->region);
        note(req, CF_NOTE_WARNING, text);
    }
    if (out->n_traces == 2)
        note_cut(req, out);
    cf_evidence evidence;
    if ((st = cf_evidence_read(req->db, req->db_name, spec, 1, req->note, req->note_ctx, &evidence)) != CF_OK)
        return st;
    cf_inputs_request request;
    cf_evidence_request(&evidence, spec, req->catalog, out->vms, out->n_traces, &request);
    st = cf_inputs_build(&request, &out->inputs);
    cf_evidence_free(&evidence);
    if (st != CF_OK)
        return st;
    out->have_inputs = 1;
    if ((st = cf_spot_path_from_trace(trace, &out->path)) != CF_OK)
        return st;
    cf_advisor_input in = {.job = &spec->job, .constraints = &spec->search, .vms = out->vms,
                           .n_vms = out->n_traces, .perf = out->inputs.perf, .n_perf = out->inputs.n_perf,
                           .noise = &out->inputs.noise, .top = 1};
    out->have_setup = 1; /* freed also after a failed prepare */
    st = cf_simulate_prepare(&in, out->vms, out->nodes, (int)out->n_traces, &out->path,
                             req->gang ? CF_SPOT_GANG : CF_SPOT_ELASTIC, &out->setup);
    if (st == CF_ERR_INVALID)
        cf_error_prefix("%s", trace->name);
    if (st != CF_OK)
        return st;
    out->setup.req.rules = req->rules ? req->rules : CF_SIM_ALL_RULES;
    out->setup.req.batches = req->batches ? req->batches : CF_SIM_HOLD | CF_SIM_SHRINK;
    if ((st = cf_simulate(&out->setup.req, &out->result)) != CF_OK)
        return st;
    note_outlasting(req, out);
    note_limits(req, out);
    join_notes(out);
    out->report = (cf_simulate_report){.spec = spec, .trace = trace, .path = &out->path, .setup = &out->setup,
                                       .result = &out->result,
                                       .note = out->note,
                                       .warnings = out->warnings, .n_warnings = out->n_warnings};
    return CF_OK;
}

void cf_simulate_run_result_free(cf_simulate_run_result *out)
{
    if (out->have_setup)
        cf_simulate_setup_free(&out->setup);
    cf_spot_path_free(&out->path);
    if (out->have_inputs)
        cf_inputs_free(&out->inputs);
    for (size_t k = 0; k < out->n_traces; k++)
        cf_spot_trace_free(&out->traces[k]);
    cf_spot_trace_free(&out->merged);
    memset(out, 0, sizeof *out);
}
