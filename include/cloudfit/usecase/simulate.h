/* `simulate` (docs/spot.md) as library calls: a request in, a result out.
 *
 * cf_simulate_run replays one availability trace (or two, one per VM
 * type) against the spec's plan on the trace's VMs: the traces read, the
 * offers they were recorded on, the evidence read through the caller's
 * database handle, the plan, the replay per LR rule and batch policy.
 * cf_simulate_calibrate_run scores the preemption model on a folder of
 * traces (docs/spot.md "Calibration"): the traces, their offers and model
 * rows (the shipped table, or one fitted on another folder), the plan on
 * each trace's VMs, the scores. What stays with the caller: options,
 * opening the spec, the catalog and the database, rendering (the results
 * carry render/'s report) and writing the bytes. */
#ifndef CLOUDFIT_USECASE_SIMULATE_H
#define CLOUDFIT_USECASE_SIMULATE_H
#include <stddef.h>

#include "cloudfit/advisor/spot_calibrate.h"
#include "cloudfit/advisor/spot_simulate.h"
#include "cloudfit/advisor/spot_table.h"
#include "cloudfit/pricing.h"
#include "cloudfit/profiler/spot_traces.h"
#include "cloudfit/render/calibrate_report.h"
#include "cloudfit/render/simulate_report.h"
#include "cloudfit/spec.h"

#define CF_SIMULATE_MAX_WARNINGS 8
#include "cloudfit/usecase/evidence.h"

typedef struct {
    const cf_spec *spec;             /* the effective spec */
    const cf_catalog *catalog;
    cf_db *db;                       /* cached profiles and recorded runs; NULL = none */
    const char *db_name;             /* how the database may be shown; NULL = "" */
    const char *const *trace_paths;  /* one trace, or two to mix two VM types (each of one type); one
                                        trace with a count column per type is split into two */
    size_t n_traces;
    int nodes;                       /* one trace of one type: the nodes asked for; 0 = its index.csv row's or
                                        largest count */
    /* The offer each trace was recorded on, on top of its index.csv row
     * (pricing/offer_pick.c): a GPU per trace, the first trace's instance
     * type, a cloud and a region; NULL = none. */
    const char *const *gpus;
    size_t n_gpus;
    const char *instance_type;
    const char *cloud;
    const char *region;
    unsigned rules;                  /* CF_SIM_* rule bits; 0 = all */
    unsigned batches;                /* CF_SIM_HOLD | CF_SIM_SHRINK; 0 = both */
    int gang;                        /* all nodes or none (CF_SPOT_GANG); else elastic */
    cf_note_fn note;                 /* the job outlasts the trace (warning + hint), two traces in two
                                        regions (warning), the plan outside the spec's search (warning +
                                        hint); NULL = nothing */
    void *note_ctx;
} cf_simulate_run_request;

/* Filled in place: `report` points into the struct, so do not copy it. */
typedef struct {
    cf_spot_trace traces[2], merged; /* merged: two traces on one clock */
    size_t n_traces;
    const cf_vm *vms[2];             /* the offer of each trace */
    int nodes[2];
    char notes[2][320];              /* how each offer was found ("" = by its index row) */
    char note[1024];                 /* the notes as one (each after its trace's name when both have one) */
    char warnings[CF_SIMULATE_MAX_WARNINGS][1024]; /* what `note` was told as warnings, for the JSON */
    int n_warnings;
    cf_inputs inputs;
    int have_inputs;
    cf_spot_path path;
    cf_simulate_setup setup;
    int have_setup;
    cf_simulate_result result;
    cf_simulate_report report;       /* what render/ shows */
} cf_simulate_run_result;

/* CF_OK and `out` filled, or a status with the last error set: a trace
 * or the index.csv beside it that does not parse (the message names it
 * and the line), a trace's VM that no row or option names, or whose GPU
 * name is no GPU or an ambiguous family (with a hint), more GPUs than VM
 * types or --nodes for two types (CF_ERR_USAGE), evidence that cannot be
 * read, a plan the spec cannot make. cf_simulate_run_result_free `out` either way. */
cf_status cf_simulate_run(const cf_simulate_run_request *req, cf_simulate_run_result *out);
void cf_simulate_run_result_free(cf_simulate_run_result *out);

/* The CF_SIM_* bits of an LR rule's name (fixed, linear, sqrt, gain, all)
 * or a batch policy's (hold, shrink, both); CF_ERR_INVALID for another. */
cf_status cf_simulate_rules_of(const char *name, unsigned *out);
cf_status cf_simulate_batches_of(const char *name, unsigned *out);

typedef struct {
    const cf_spec *spec;
    const cf_catalog *catalog;
    cf_db *db;                       /* NULL = none */
    const char *db_name;
    const char *traces_dir;          /* the traces to score (index.csv and its files) */
    const char *fit_dir;             /* fit the model table on these instead of the shipped one; NULL = shipped */
    cf_note_fn note;                 /* what reading the evidence says; NULL = nothing */
    void *note_ctx;
} cf_simulate_calibrate_request;

/* Filled in place: `report` points into the struct, so do not copy it. */
typedef struct {
    cf_spot_trace_set set, fit_set;
    cf_spot_table_row *fitted;       /* with fit_dir */
    size_t n_fitted;
    const cf_vm **vms;               /* per trace: its offer */
    cf_spot_path *paths;
    cf_calibrate_trace *traces;      /* per trace: the spec's plan on its VMs */
    cf_spot_lookup *rows;            /* per trace: the model row used */
    size_t n;
    double confidence;
    cf_calibrate_result result;
    cf_calibrate_report report;      /* what render/ shows */
} cf_simulate_calibration;

/* CF_OK and `out` filled, or a status with the last error set: a folder
 * or trace that cannot be read, a trace whose VM the catalog lacks (with
 * a hint), a trace the fitted table has no row for, a plan that cannot be
 * made (the message names the trace). cf_simulate_calibration_free `out`
 * either way. */
cf_status cf_simulate_calibrate_run(const cf_simulate_calibrate_request *req, cf_simulate_calibration *out);
void cf_simulate_calibration_free(cf_simulate_calibration *out);

#endif
