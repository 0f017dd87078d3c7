/* Renders the result of `cloudfit profile` (profile_report.h). */
#include "cloudfit/render/profile_report.h"
#include "cloudfit/common/csvwrite.h"
#include "cloudfit/advisor/inputs.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The runs of a runner profile, and what became of its probe (named by
 * the shape it ran: "2-node × 1-GPU probe", "16-node × 4-GPU probe"). */
static void runner_table(const cf_profile *p, cf_buf *out)
{
    char probe[64];
    cf_profile_probe_name(p, probe, sizeof probe);
    cf_buf_printf(out, "%s on %s through %s: %d run%s (light profile + %s)\n", p->spec_name, p->device.name,
                  p->runner, p->n_runs, p->n_runs == 1 ? "" : "s", probe);
    cf_buf_printf(out, "  %-8s  %-20s  %9s  %5s  %11s  %10s  %10s\n", "RUN", "INSTANCE", "PLACEMENT", "NODES",
                  "LOCAL BATCH", "STEP s", "SAMPLES/s");
    for (int i = 0; i < p->n_runs; i++) {
        const cf_profile_run_row *r = &p->runs[i];
        char placement[24] = "";
        for (int n = 0; n < r->nodes && n < 8; n++)
            snprintf(placement + n, sizeof placement - (size_t)n, "%d", r->gpus_per_node % 10);
        cf_buf_printf(out, "  %-8s  %-20s  %9s  %5d  %11d  %10.4g  %10.0f\n", r->kind,
                      r->instance_type[0] ? r->instance_type : "-", placement, r->nodes, r->local_batch,
                      r->step_time_s, (double)r->nodes * r->gpus_per_node * r->local_batch / r->step_time_s);
    }
    cf_buf_printf(out, "%s: %s%s%s\n", probe, p->probe_status, p->probe_note[0] ? ": " : "", p->probe_note);
}

void cf_profile_table(const cf_profile *p, const char *gpu_model, cf_buf *out)
{
    if (p->n_runs > 0)
        runner_table(p, out);
    else
        cf_buf_printf(out, "%s on %s (%s backend): %d batch size%s, median of %d timed steps after %d warm-up\n",
                      p->spec_name, p->device.name, p->backend, p->n_points, p->n_points == 1 ? "" : "s", p->steps,
                      p->warmup_steps);
    cf_buf_printf(out, "  %11s  %13s  %10s  %10s  %11s  %10s\n", "LOCAL BATCH", "MEDIAN STEP s", "MIN s", "MAX s",
                  "RESIDUAL s", "SAMPLES/s");
    for (int i = 0; i < p->n_points; i++) {
        const cf_profile_point *pt = &p->points[i];
        char residual[32] = "-";
        if (p->has_fit)
            snprintf(residual, sizeof residual, "%+.3g", pt->residual_s);
        cf_buf_printf(out, "  %11d  %13.4g  %10.4g  %10.4g  %11s  %10.0f\n", pt->local_batch, pt->step_time_s,
                      pt->min_s, pt->max_s, residual, pt->local_batch / pt->step_time_s);
    }
    if (p->precision[0] || p->memory_format[0])
        cf_buf_printf(out, "trained in: %s%s%s (as the probe reported)\n", p->precision[0] ? p->precision : "precision "
                      "not reported", p->memory_format[0] ? ", memory format " : "", p->memory_format);
    if (p->has_fit && isfinite(p->r2))
        cf_buf_printf(out, "fit: t_c(m) = %.4g + %.4g·m s, R² %.4f, rms residual %.1f%%\n", p->alpha_s, p->beta_s,
                      p->r2, 100 * p->rel_rmse);
    else if (p->has_fit) /* every batch the same step time: nothing for R² to explain */
        cf_buf_printf(out, "fit: t_c(m) = %.4g + %.4g·m s, R² n/a (the same step time at every batch), rms residual "
                      "%.1f%%\n", p->alpha_s, p->beta_s, 100 * p->rel_rmse);
    else
        cf_buf_puts(out, "fit: needs at least 2 batch sizes that fit\n");
    if (p->ceiling_found)
        cf_buf_printf(out, "memory: largest local batch that fits %d (%d does not)\n", p->max_local_batch,
                      p->oom_batch);
    else
        cf_buf_printf(out, "memory: every batch up to %d fits (no out-of-memory answer; the ceiling is higher)\n",
                      p->max_local_batch);
    if (p->has_noise) {
        char err[96] = " (standard error not known: the run averages fewer than 2 steps)";
        if (isfinite(p->b_noise_stderr))
            snprintf(err, sizeof err, " ± %.2g", p->b_noise_stderr);
        cf_buf_printf(out, "noise scale: B_noise = %.4g%s (%d steps of %d micro-batches × %d samples, %.0f samples)\n",
                      p->b_noise, err, p->noise_steps, p->noise_micro_batches, p->noise_local_batch, p->noise_samples);
        if (p->n_noise_trace > 1)
            cf_buf_printf(out, "  trace: %.4g after %.0f samples → %.4g after %.0f samples (%d points)\n",
                          p->noise_trace[0].b_noise, p->noise_trace[0].samples_seen,
                          p->noise_trace[p->n_noise_trace - 1].b_noise, p->noise_trace[p->n_noise_trace - 1].samples_seen,
                          p->n_noise_trace);
    } else if (p->noise_failed) {
        cf_buf_printf(out, "noise scale: FAILED: %s\n", p->noise_error);
        cf_buf_puts(out, "  the sweep above is kept; 'cloudfit profile --resume' re-runs only the noise run\n");
    } else {
        cf_buf_printf(out, "noise scale: not measured: %s\n", p->noise_error);
    }
    if (!p->device.is_gpu)
        cf_buf_puts(out, "note: a CPU profile: recommend uses its noise scale (hardware-independent), not its step "
                         "times\n");
    else if (!gpu_model)
        cf_buf_printf(out, "note: '%s' is not a GPU model of the catalog: recommend uses the noise scale only\n",
                      p->device.name);
}

/* Columns of groundtruth/pollux_aws_t4/throughput.csv (docs/profiler.md "The measurements CSV"). One
 * device, one node: the step is all compute, no all-reduce. */
void cf_profile_csv(const cf_profile *p, const char *gpu_model, cf_buf *out)
{
    /* The optional precision column when the probe said how it trained
     * (measurements.c reads it; recommend moves rows of another precision
     * than the spec's by the GPU's peak ratio). */
    int with_precision = p->precision[0] != '\0';
    cf_buf_printf(out, "model,gpu,profile,hw_gpus_per_node,source,placement,num_nodes,num_gpus,local_bsz,global_bsz,"
                       "step_time_s,sync_time_s,compute_time_s,samples_per_s%s\n", with_precision ? ",precision" : "");
    char profile[32];
    snprintf(profile, sizeof profile, "cloudfit-%s", p->backend);
    /* A runner profile: every run, placement = GPUs busy per node ("1", "4", "11"), one digit per node;
     * empty where that cannot say it (10 or more GPUs on a node, more nodes than the field holds): every
     * node runs the same count, so num_nodes and num_gpus say the same (a 16-GPU VM was written "6"). */
    for (int i = 0; i < p->n_runs; i++) {
        const cf_profile_run_row *r = &p->runs[i];
        char placement[24] = "";
        if (r->gpus_per_node >= 1 && r->gpus_per_node <= 9 && r->nodes < (int)sizeof placement)
            for (int n = 0; n < r->nodes; n++)
                placement[n] = (char)('0' + r->gpus_per_node);
        int gpus = r->nodes * r->gpus_per_node;
        cf_csv_put_data_field(out, p->spec_name);
        cf_buf_puts(out, ",");
        cf_csv_put_data_field(out, gpu_model ? gpu_model : p->device.name);
        cf_buf_printf(out, ",%s,%d,cloudfit profile --runner,%s,%d,%d,%d,%d,%.9g,,,%.9g%s%s\n", profile,
                      r->hw_gpus_per_node, placement, r->nodes, gpus, r->local_batch, gpus * r->local_batch,
                      r->step_time_s, gpus * r->local_batch / r->step_time_s, with_precision ? "," : "", p->precision);
    }
    for (int i = 0; i < p->n_points && p->n_runs == 0; i++) {
        const cf_profile_point *pt = &p->points[i];
        cf_csv_put_data_field(out, p->spec_name);
        cf_buf_puts(out, ",");
        cf_csv_put_data_field(out, gpu_model ? gpu_model : p->device.name);
        cf_buf_printf(out, ",%s,1,cloudfit profile,1,1,1,%d,%d,%.9g,0,%.9g,%.9g%s%s\n", profile, pt->local_batch,
                      pt->local_batch, pt->step_time_s, pt->step_time_s, pt->local_batch / pt->step_time_s,
                      with_precision ? "," : "", p->precision);
    }
}
