/* Tests of render/render_svg.c and render_chart.c on a hand-made front:
 * p10–p90 whiskers exactly where configurations have intervals, the
 * chosen point, deadline and budget lines; the text chart's marks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/render/plots.h"

static cf_spec spec;
static cf_vm vms[3];
static cf_config configs[3];
static cf_report report;

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Three front points: an H100 spot one with intervals, an A100 one with
 * only a time interval, a T4 one without; the T4 one is chosen. */
static void front(cf_report_plots *p, cf_plot_point *pts)
{
    memset(p, 0, sizeof *p);
    snprintf(spec.job.name, sizeof spec.job.name, "tiny");
    report.spec = &spec;
    const char *gpus[] = {"H100", "A100-40GB", "T4"};
    double hours[] = {1.5, 4, 20}, usd[] = {300, 120, 40};
    for (int i = 0; i < 3; i++) {
        snprintf(vms[i].gpu_model, sizeof vms[i].gpu_model, "%s", gpus[i]);
        snprintf(vms[i].cloud, sizeof vms[i].cloud, "aws");
        snprintf(vms[i].region, sizeof vms[i].region, "us-east-1");
        snprintf(vms[i].instance_type, sizeof vms[i].instance_type, "vm-%d<&>", i);
        configs[i] = (cf_config){.vm = &vms[i], .nodes = i + 1, .gpus_per_node = 1, .spot = i == 0,
                                 .hours = hours[i], .total_usd = usd[i], .global_batch = 256, .local_batch = 256,
                                 .accumulation = 1};
        pts[i] = (cf_plot_point){.config = &configs[i], .hours = hours[i], .usd = usd[i], .gpu = (size_t)i,
                                 .chosen = i == 2};
        snprintf(p->gpus[i], sizeof p->gpus[i], "%s", gpus[i]);
    }
    pts[0].hours_p10 = 1.2;
    pts[0].hours_p90 = 1.9;
    pts[0].usd_p10 = 250;
    pts[0].usd_p90 = 380;
    pts[1].hours_p10 = 3.5;
    pts[1].hours_p90 = 5;
    p->report = &report;
    p->front = pts;
    p->n_front = 3;
    p->chosen = pts[2];
    p->n_gpus = 3;
    p->deadline_hours = 24;
    p->budget_usd = 500;
    p->have_intervals = 1;
}

static void test_front_svg(void **state)
{
    (void)state;
    cf_report_plots p;
    cf_plot_point pts[3];
    front(&p, pts);
    cf_buf b = CF_BUF_INIT;
    cf_render_front_svg(&p, &b);
    assert_false(cf_buf_failed(&b));
    const char *s = cf_buf_cstr(&b);
    assert_int_equal(count(s, "class=\"front-point\""), 3);
    assert_int_equal(count(s, "class=\"chosen-point\""), 1);
    assert_int_equal(count(s, "data-chosen=\"true\""), 2); /* the front point and the ring */
    /* whiskers: two lines for the point with both intervals, one for the other */
    assert_int_equal(count(s, "class=\"whisker\""), 3);
    assert_int_equal(count(s, "data-hours-p10="), 2);
    assert_int_equal(count(s, "data-usd-p10=\"250\""), 1);
    assert_non_null(strstr(s, "p10–p90 interval"));
    assert_non_null(strstr(s, "class=\"deadline\" data-hours=\"24\""));
    assert_non_null(strstr(s, "class=\"budget\" data-usd=\"500\""));
    assert_non_null(strstr(s, "data-spot=\"true\""));
    assert_non_null(strstr(s, "data-instance=\"vm-1&lt;&amp;&gt;\""));
    assert_null(strstr(s, "vm-1<&>"));
    /* spot is a triangle (a path), on-demand a circle */
    assert_int_equal(count(s, "<path d=\"M0,"), 2); /* the point and the legend's */
    assert_int_equal(count(s, "<g"), count(s, "</g>"));

    /* the tooltips label a mixed plan (spot, then on demand) spot+od, as the table, markdown and report do */
    assert_non_null(strstr(s, "on aws/us-east-1, spot: 1.5 h, $300 (80% interval 1.2–1.9 h, $250–$380)"));
    assert_non_null(strstr(s, "4 h, $120 (80% interval 3.5–5 h)")); /* no cost interval: none said */
    cf_buf_free(&b);
    configs[0].mixed = 1;
    cf_render_front_svg(&p, &b);
    assert_non_null(strstr(cf_buf_cstr(&b), "on aws/us-east-1, spot+od: 1.5 h"));
    assert_null(strstr(cf_buf_cstr(&b), ", spot: "));
    configs[0].mixed = 0;
    cf_buf_free(&b);

    /* no intervals: no whisker, no legend line for them */
    for (int i = 0; i < 3; i++)
        pts[i].hours_p10 = pts[i].hours_p90 = pts[i].usd_p10 = pts[i].usd_p90 = 0;
    p.have_intervals = 0;
    cf_render_front_svg(&p, &b);
    assert_null(strstr(cf_buf_cstr(&b), "whisker"));
    assert_null(strstr(cf_buf_cstr(&b), "p10–p90"));
    cf_buf_free(&b);
}

static void test_lines_off_the_plot(void **state)
{
    (void)state;
    cf_report_plots p;
    cf_plot_point pts[3];
    front(&p, pts);
    p.deadline_hours = 500; /* far beyond the slowest point: said in the legend, not drawn */
    cf_buf b = CF_BUF_INIT;
    cf_render_front_svg(&p, &b);
    assert_null(strstr(cf_buf_cstr(&b), "class=\"deadline\""));
    assert_non_null(strstr(cf_buf_cstr(&b), "deadline 500 h (off the plot)"));
    cf_buf_free(&b);
}

static void test_text_chart(void **state)
{
    (void)state;
    cf_report_plots p;
    cf_plot_point pts[3];
    front(&p, pts);
    cf_buf b = CF_BUF_INIT;
    cf_report_front_chart(&p, 40, 8, 0, &b);
    assert_false(cf_buf_failed(&b));
    const char *s = cf_buf_cstr(&b);
    assert_int_equal(count(s, "@"), 2); /* the legend and the chosen point */
    assert_int_equal(count(s, "^"), 2); /* the legend and the spot point */
    assert_non_null(strstr(s, "deadline 24 h"));
    assert_null(strstr(s, "\033"));
    assert_null(strstr(s, " \n")); /* no trailing blanks */
    /* 8 rows of plot, the axis, the labels */
    assert_true(count(s, "\n") >= 11);
    cf_buf_free(&b);
    cf_report_front_chart(&p, 40, 8, 1, &b);
    assert_non_null(strstr(cf_buf_cstr(&b), "\033[1;32m@\033[0m"));
    cf_buf_free(&b);
    /* limits far beyond the points are not drawn, but named (they were left out without a word) */
    p.deadline_hours = 500;
    p.budget_usd = 90000;
    cf_report_front_chart(&p, 40, 8, 0, &b);
    assert_null(strstr(cf_buf_cstr(&b), ": deadline"));
    assert_non_null(strstr(cf_buf_cstr(&b), "(deadline 500 h and budget $90000: beyond the chart)"));
    cf_buf_free(&b);
}

/* The fill of every front point and legend row of `svg`, by its data-gpu / text. */
static size_t distinct_fills(const char *svg, const char *cls, char fills[][16], size_t max)
{
    size_t n = 0;
    char needle[64];
    snprintf(needle, sizeof needle, "class=\"%s\"", cls);
    for (const char *q = strstr(svg, needle); q; q = strstr(q + 1, needle)) {
        const char *f = strstr(q, "fill=\"");
        assert_non_null(f);
        char fill[16];
        snprintf(fill, sizeof fill, "%.7s", f + 6);
        size_t i = 0;
        while (i < n && strcmp(fills[i], fill) != 0)
            i++;
        if (i == n && n < max)
            snprintf(fills[n++], sizeof fills[0], "%s", fill);
    }
    return n;
}

/* Built from an advice with one front point per GPU type: each type has a
 * colour of its own (three-lines.json's front has ten types: T4 and A10G
 * were both #0072B2 with a palette of nine), and past the palette the rest
 * share the last colour, which the legend calls "other GPU types" — its
 * rows all inside the picture. */
static void test_front_colours_per_gpu_type(void **state)
{
    (void)state;
    enum { N = CF_PLOT_MAX_GPUS + 3 };
    static cf_vm v[N];
    static cf_config c[N];
    for (int k = 0; k < 2; k++) {
        size_t n = k == 0 ? 10 : N;
        for (size_t i = 0; i < n; i++) {
            memset(&v[i], 0, sizeof v[i]);
            snprintf(v[i].gpu_model, sizeof v[i].gpu_model, "GPU%zu", i);
            snprintf(v[i].cloud, sizeof v[i].cloud, "aws");
            snprintf(v[i].region, sizeof v[i].region, "us-east-1");
            snprintf(v[i].instance_type, sizeof v[i].instance_type, "vm-%zu", i);
            c[i] = (cf_config){.vm = &v[i], .nodes = 1, .gpus_per_node = 1, .hours = 1.0 + (double)i,
                               .total_usd = 100.0 - (double)i, .global_batch = 256, .local_batch = 256,
                               .accumulation = 1, .steps = 1};
        }
        cf_advice a = {.ranked = &c[0], .n_ranked = 1, .pareto = c, .n_pareto = n};
        snprintf(spec.job.name, sizeof spec.job.name, "many");
        cf_report r = {.spec = &spec, .advice = &a};
        cf_report_plots p;
        assert_int_equal(cf_report_plots_build(&r, &p), CF_OK);
        cf_buf b = CF_BUF_INIT;
        cf_render_front_svg(&p, &b);
        assert_false(cf_buf_failed(&b));
        const char *s = cf_buf_cstr(&b);
        char fills[N][16];
        size_t want = n <= CF_PLOT_MAX_GPUS ? n : CF_PLOT_MAX_GPUS;
        assert_int_equal(distinct_fills(s, "front-point", fills, N), want);
        if (k == 0) {
            assert_null(strstr(s, "other GPU types"));
        } else {
            assert_non_null(strstr(s, "other GPU types"));
            assert_null(strstr(s, ">GPU11<")); /* named only in its points' tooltips */
        }
        /* the legend's last line (the count) lies inside the picture */
        const char *last = strstr(s, "configurations on the front");
        assert_non_null(last);
        const char *y = last;
        while (y > s && strncmp(y, " y=\"", 4) != 0)
            y--;
        assert_true(atof(y + 4) < CF_PLOT_HEIGHT - 4);
        cf_buf_free(&b);
        cf_report_plots_free(&p);
    }
}

/* Where a text of `svg` that starts with `prefix` ends on the right, at
 * 0.62 em a character (DejaVu Sans bold as Chromium lays it out). */
static double text_right(const char *svg, const char *prefix)
{
    char needle[96];
    snprintf(needle, sizeof needle, ">%s", prefix);
    const char *t = strstr(svg, needle);
    assert_non_null(t);
    const char *open = t;
    while (open > svg && strncmp(open, "<text ", 6) != 0)
        open--;
    double x = atof(strstr(open, " x=\"") + 4), size = atof(strstr(open, "font-size=\"") + 11);
    size_t chars = 0;
    for (const char *c = t + 1; *c && *c != '<'; c++)
        chars += ((unsigned char)*c & 0xC0) != 0x80;
    const char *anchor = strstr(open, "text-anchor=\"") + 13;
    double w = 0.62 * size * (double)chars;
    return strncmp(anchor, "end", 3) == 0 ? x : strncmp(anchor, "middle", 6) == 0 ? x + w / 2 : x + w;
}

/* The report's scaling and statistical-efficiency plots: the "chosen"
 * labels stay inside the picture when the chosen point is at the right
 * edge (they were written from 12 units right of it: at the largest node
 * count "chosen" began at x = 752 of 760), and a long caption is made to
 * fit (a 26-character Azure instance type ran it to x = 768). */
static void test_labels_inside_the_picture(void **state)
{
    (void)state;
    cf_report_plots p;
    cf_plot_point pts[3];
    front(&p, pts);
    snprintf(vms[2].instance_type, sizeof vms[2].instance_type, "Standard_ND96isr_MI300X_v5");
    configs[2].nodes = 8;
    configs[2].gpus_per_node = 8;
    configs[2].global_batch = 8192;
    configs[2].stat_efficiency = 0.6;
    cf_scaling_point sc[8];
    for (int i = 0; i < 8; i++)
        sc[i] = (cf_scaling_point){.nodes = i + 1, .samples_per_s = 1000.0 * (i + 1) * 0.95,
                                   .ideal_samples_per_s = 1000.0 * (i + 1), .hours = 1};
    p.scaling = sc;
    p.n_scaling = 8;
    for (size_t i = 0; i < CF_PLOT_STATEFF_POINTS; i++) {
        double m = 512.0 * pow(8192.0 * 4 / 512.0, (double)i / (CF_PLOT_STATEFF_POINTS - 1));
        p.stateff[i] = (cf_stateff_point){.global_batch = m, .efficiency = 1 / (1 + m / 8192.0)};
    }
    p.n_stateff = CF_PLOT_STATEFF_POINTS;
    p.recipe_batch = 2048;
    cf_buf b = CF_BUF_INIT;
    cf_render_scaling_svg(&p, &b);
    assert_false(cf_buf_failed(&b));
    assert_true(text_right(cf_buf_cstr(&b), "chosen<") <= CF_PLOT_WIDTH);
    assert_true(text_right(cf_buf_cstr(&b), "Throughput vs nodes") <= CF_PLOT_WIDTH);
    cf_buf_free(&b);
    /* three nodes: the node axis has whole numbers only (it had 0.5, 1.5, 2.5) */
    p.n_scaling = 3;
    configs[2].nodes = 3;
    cf_render_scaling_svg(&p, &b);
    const char *ticks = strstr(cf_buf_cstr(&b), "class=\"axes\"");
    assert_non_null(ticks);
    assert_null(strstr(ticks, "class=\"tick\">0.5<"));
    assert_null(strstr(ticks, "class=\"tick\">1.5<"));
    assert_non_null(strstr(ticks, "class=\"tick\">3<"));
    cf_buf_free(&b);
    cf_render_stateff_svg(&p, &b);
    assert_false(cf_buf_failed(&b));
    assert_true(text_right(cf_buf_cstr(&b), "chosen: batch 8192") <= CF_PLOT_WIDTH);
    cf_buf_free(&b);
    p.scaling = NULL;
    p.n_scaling = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_front_svg),
        cmocka_unit_test(test_lines_off_the_plot),
        cmocka_unit_test(test_text_chart),
        cmocka_unit_test(test_front_colours_per_gpu_type),
        cmocka_unit_test(test_labels_inside_the_picture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
