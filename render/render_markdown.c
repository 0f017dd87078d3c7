/* `--format markdown`: a pull-request comment. Summary, the chosen
 * configuration, the top alternatives, what changed against the previous
 * recommendation, and the gate results. Text that comes from outside
 * (branch names, file names) is escaped so it cannot break the tables. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/db/history_diff.h"
#include "cloudfit/common/number.h"
#include "cloudfit/render.h"
#include "cloudfit/render/text_table.h"
#include "cloudfit/render/render_catalog.h"
#include "cloudfit/pricing/regions.h"
#include "cloudfit/common/escape.h"

#define MD_ALTERNATIVES 5

/* Appends text from outside (a name, a branch, a note) that renders as
 * itself in a table cell and in running text: HTML's < > & as entities,
 * every character markdown acts on backslash-escaped (emphasis, links and
 * images — with [ ] ! escaped no ( ) can make one —, code, headings, '|'
 * which splits a cell), an e-mail autolink broken by an empty HTML comment
 * after '@' (GFM finds one after the escapes are gone; GitHub hides the
 * comment), and an autolink's start broken ("https\://", "www\."): a
 * branch named "[docs](https://evil.example)" or "![x](…)" rendered a link
 * or an image, "spec NAME@PATH" a mailto: link. Line ends become spaces. */
static void cell(cf_buf *out, const char *text)
{
    for (const char *p = text; *p; p++) {
        switch (*p) {
        case '<': cf_buf_puts(out, "&lt;"); break;
        case '>': cf_buf_puts(out, "&gt;"); break;
        case '&': cf_buf_puts(out, "&amp;"); break;
        case '\n':
        case '\r': cf_buf_puts(out, " "); break;
        case '\\': case '`': case '*': case '_': case '[': case ']': case '!': case '|':
        case '#': case '~':
            cf_buf_append(out, "\\", 1);
            cf_buf_append(out, p, 1);
            break;
        case '@': /* the e-mail autolink is found after escapes are gone: an empty comment breaks it */
            cf_buf_puts(out, "@<!-- -->");
            break;
        case ':':
        case '.': {
            int autolink = *p == ':' ? strncmp(p + 1, "//", 2) == 0
                                     : p - text >= 3 && strncasecmp(p - 3, "www", 3) == 0;
            if (autolink)
                cf_buf_append(out, "\\", 1);
            cf_buf_append(out, p, 1);
            break;
        }
        default: cf_buf_append(out, p, 1);
        }
    }
}

/* Appends text from outside as a code span: opened and closed by a run of
 * backticks longer than any inside it (CommonMark), padded with a space
 * where it starts or ends with one; in a table a '|' is "\|" (GFM reads
 * it so there). A code span shows its text as it is: a command to copy
 * keeps its quoting (cell() turned ` into ' and & into &amp;, so the
 * copied command ran what a file name held). */
static void code(cf_buf *out, const char *text, int in_table)
{
    size_t longest = 0, run = 0;
    for (const char *p = text; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    int pad = text[0] == '`' || (text[0] && text[strlen(text) - 1] == '`');
    for (size_t i = 0; i <= longest; i++)
        cf_buf_puts(out, "`");
    if (pad)
        cf_buf_puts(out, " ");
    for (const char *p = text; *p; p++) {
        if (*p == '\n' || *p == '\r')
            cf_buf_puts(out, " ");
        else if (*p == '|' && in_table)
            cf_buf_puts(out, "\\|");
        else
            cf_buf_append(out, p, 1);
    }
    if (pad)
        cf_buf_puts(out, " ");
    for (size_t i = 0; i <= longest; i++)
        cf_buf_puts(out, "`");
}

static void config_row(cf_buf *out, const char *label, const cf_config *c)
{
    cf_buf_printf(out, "| %s | ", label);
    cell(out, c->vm->cloud);
    cf_buf_puts(out, "/");
    cell(out, c->vm->region);
    cf_buf_puts(out, " | ");
    code(out, c->vm->instance_type, 1);
    cf_buf_printf(out, "%s%s%s | %d×%d ", c->spot ? " (" : "", cf_config_capacity_label(c), c->spot ? ")" : "", c->nodes,
                  c->gpus_per_node);
    cell(out, c->vm->gpu_model);
    /* the time as the table writes it: "18.9 h (16.4–21.8)", "12 min (10–15)" (in hours a 12-minute plan and
     * its interval all read "0.2 h (0.2–0.2)") */
    char time[64];
    cf_text_duration_range(c->hours, c->hours_p10, c->hours_p90, time, sizeof time);
    cf_buf_printf(out, " | %d | %d | %ld | %.4g | %s | %.2f | %.2f (%.2f–%.2f) |\n", c->local_batch, c->accumulation,
                  c->global_batch, c->lr.lr, time, c->usd_per_hour, c->total_usd, c->total_usd_p10, c->total_usd_p90);
}

static void configs(const cf_report *r, cf_buf *out)
{
    cf_buf_puts(out, "| # | cloud/region | instance | nodes×GPUs | batch/GPU | accum | global batch | LR | time (80%) "
                     "| $/hr | total $ (80%) |\n|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    config_row(out, "**1** ✔", &r->advice->ranked[0]);
    for (size_t i = 1; i < r->advice->n_ranked && i <= MD_ALTERNATIVES; i++) {
        char label[16];
        snprintf(label, sizeof label, "%zu", i + 1);
        config_row(out, label, &r->advice->ranked[i]);
    }
    if (r->advice->n_ranked > MD_ALTERNATIVES + 1)
        cf_buf_printf(out, "\n%zu more alternatives in the JSON output.\n", r->advice->n_ranked - MD_ALTERNATIVES - 1);
}

static void diff_section(const cf_report *r, cf_buf *out)
{
    cf_buf_puts(out, "\n### Compared with the previous recommendation\n\n");
    const cf_baseline *b = r->baseline;
    if (!b || !b->have) {
        cf_buf_puts(out, "No earlier recommendation for this spec to compare with.\n");
        return;
    }
    cf_buf_puts(out, "Against ");
    cell(out, b->source);
    cf_buf_puts(out, ".\n\n");
    if (b->spec_changes[0]) {
        cf_buf_puts(out, b->spec_known ? "Spec changes: " : "Spec: ");
        cell(out, b->spec_changes);
        cf_buf_puts(out, "\n\n");
    }
    if (!r->advice->explained)
        return;
    const cf_history_config *now = &r->advice->explained->stored;
    cf_diff_entry entries[CF_DIFF_FIELDS];
    size_t n = cf_config_diff(&b->chosen, now, entries), changed = 0;
    for (size_t i = 0; i < n; i++)
        changed += entries[i].changed;
    char catalog_now[96];
    snprintf(catalog_now, sizeof catalog_now, "%s %s", r->catalog->name, r->catalog->data_date);
    int catalog_changed = b->catalog[0] && strcmp(b->catalog, catalog_now) != 0;
    if (!changed && !catalog_changed) {
        cf_buf_puts(out, "Nothing changed: same configuration, time and cost.\n");
        return;
    }
    cf_buf_puts(out, "| what | before | now | change |\n|---|---|---|---:|\n");
    for (size_t i = 0; i < n; i++) {
        const cf_diff_entry *e = &entries[i];
        if (!e->changed)
            continue;
        cf_buf_printf(out, "| %s (%s) | ", e->key, e->group);
        cell(out, e->before);
        cf_buf_puts(out, " | ");
        cell(out, e->after);
        double pct = cf_diff_pct(e);
        if (isfinite(pct))
            cf_buf_printf(out, " | %+.1f%% |\n", pct);
        else
            cf_buf_puts(out, " | |\n");
    }
    if (catalog_changed) {
        cf_buf_puts(out, "| catalog | ");
        cell(out, b->catalog);
        cf_buf_puts(out, " | ");
        cell(out, catalog_now);
        cf_buf_puts(out, " | |\n");
    }
}

static void gates_section(const cf_report *r, cf_buf *out)
{
    if (!r->n_gates)
        return;
    int all = cf_gates_passed(r->gates, r->n_gates);
    cf_buf_printf(out, "\n### Gates: %s\n\n| gate | limit | value | result | |\n|---|---:|---:|---|---|\n",
                  all ? "passed" : "**failed**");
    for (size_t i = 0; i < r->n_gates; i++) {
        const cf_history_gate *g = &r->gates[i];
        char value[32] = "–";
        if (isfinite(g->value))
            snprintf(value, sizeof value, "%.2f", g->value);
        char limit[48]; /* as given: "%g" read a --max-cost 1234567.89 as 1.23457e+06 */
        cf_number_plain_text(g->limit, CF_NUMBER_AS_GIVEN, limit, sizeof limit);
        cf_buf_printf(out, "| `%s` | %s | %s | %s | ", g->name, limit, value, g->passed ? "✅ pass" : "❌ fail");
        cell(out, g->note);
        cf_buf_puts(out, " |\n");
    }
}

/* The table's Why lines ("  - TEXT", a continuation indented further) as
 * list items, each escaped as outside text: the spot plan's lines
 * (render_spot.c) say the same in both. */
static void text_items(cf_buf *out, const cf_buf *text)
{
    cf_buf line = CF_BUF_INIT;
    for (const char *p = cf_buf_cstr(text); *p;) {
        size_t len = strcspn(p, "\n");
        line.len = 0;
        cf_buf_append(&line, p, len);
        const char *body = cf_buf_cstr(&line);
        if (strncmp(body, "  - ", 4) == 0) {
            cf_buf_puts(out, "- ");
            body += 4;
        } else { /* a continuation of the item above */
            body += strspn(body, " ");
            cf_buf_puts(out, "  ");
        }
        cell(out, body);
        cf_buf_puts(out, "\n");
        p += len + (p[len] == '\n');
    }
    if (line.failed || text->failed)
        out->failed = 1;
    cf_buf_free(&line);
}

static void reasons(const cf_report *r, cf_buf *out)
{
    const cf_config *c = &r->advice->ranked[0];
    const cf_inputs *in = r->inputs;
    cf_buf_puts(out, "\n<details><summary>Why this configuration</summary>\n\n");
    cf_buf_printf(out, "- %zu offer%s searched, %zu configuration%s the constraints (objective: %s)\n",
                  r->n_offers, r->n_offers == 1 ? "" : "s", r->advice->n_feasible,
                  r->advice->n_feasible == 1 ? " meets" : "s meet", cf_objective_name(r->spec->search.objective));
    /* the figures the deadline and the budget were held to, as the table gives them */
    cf_buf held = CF_BUF_INIT;
    cf_report_constraint_text(r, c, &held);
    cf_buf_puts(out, "- ");
    cell(out, cf_buf_cstr(&held));
    cf_buf_puts(out, "\n");
    if (held.failed)
        out->failed = 1;
    cf_buf_free(&held);
    char efficiency[16];
    cf_number_share_text(c->parallel_efficiency, efficiency, sizeof efficiency);
    /* the step's 80 % interval, as the table gives it: on a guessed NIC it is what the guess costs */
    const cf_advice_explained *e = r->advice->explained;
    cf_buf_printf(out, "- step %.3f s (", c->step_time_s);
    if (e && e->step_p90_s > 0)
        cf_buf_printf(out, "80%%: %.3f–%.3f; ", e->step_p10_s, e->step_p90_s);
    cf_buf_printf(out, "compute %.3f s, all-reduce %.3f s); parallel efficiency %s, statistical efficiency %.0f%%\n",
                  c->compute_s, c->sync_s, efficiency, 100 * c->stat_efficiency);
    cf_buf_printf(out, "- learning rate %.4g (%s rule)%s\n", c->lr.lr, cf_lr_rule_name(c->lr.rule_used),
                  c->lr.warmup_recommended ? ", warm up over the first ~5% of steps" : "");
    if (c->spot) { /* the preemption model, spot alone against the deadline, checkpoints, the mixed plan, elastic */
        cf_buf spot = CF_BUF_INIT;
        cf_report_spot_text(r, c, &spot);
        cf_report_elastic_text(r, c, &spot);
        text_items(out, &spot);
        cf_buf_free(&spot);
    }
    cf_buf_printf(out, "- provenance: throughput %s, noise scale %s, network %s, price %s\n",
                  cf_provenance_name(c->prov_throughput), cf_provenance_name(c->prov_noise),
                  cf_provenance_name(c->prov_network), cf_provenance_name(c->prov_price));
    char price_origin[192], price_age[48], availability[384];
    cf_vm_price_origin(c->vm, c->spot, price_origin, sizeof price_origin);
    cf_vm_price_age_text(c->vm, c->spot, price_age, sizeof price_age);
    cf_buf_puts(out, "- price: ");
    cell(out, price_origin);
    cell(out, price_age);
    cf_buf_puts(out, "\n- ");
    cf_vm_availability(c->vm, availability, sizeof availability);
    cell(out, availability);
    cf_buf_puts(out, "\n");
    /* the table's lines on the price overrides: the rule of each price the plan pays (render_catalog.c) */
    cf_buf overrides = CF_BUF_INIT;
    cf_catalog_source_overrides_text(r->catalog_source, c->vm, c->spot, c->mixed, &overrides);
    for (const char *p = cf_buf_cstr(&overrides); *p;) {
        size_t len = strcspn(p, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        cf_buf_puts(out, "- ");
        cell(out, line);
        cf_buf_puts(out, "\n");
        p += len + (p[len] == '\n');
    }
    if (overrides.failed)
        out->failed = 1;
    cf_buf_free(&overrides);
    for (size_t i = 0; i < in->n_perf; i++)
        if (strcmp(in->perf[i].gpu, c->vm->gpu_model) == 0) {
            cf_buf_puts(out, "- ");
            cell(out, c->vm->gpu_model);
            cf_buf_puts(out, " throughput: ");
            cell(out, in->perf[i].note);
            cf_buf_puts(out, "\n");
        }
    /* the table's network line: what the all-reduce rests on, a guessed NIC's interval */
    cf_buf network = CF_BUF_INIT;
    cf_report_network_text(r, c, &network);
    cf_buf_puts(out, "- network: ");
    cell(out, cf_buf_cstr(&network));
    cf_buf_puts(out, "\n");
    if (network.failed)
        out->failed = 1;
    cf_buf_free(&network);
    if (r->advice->next.kind != CF_MEASURE_NONE) {
        cf_buf_puts(out, "- **next measurement**: ");
        cf_buf sentence = CF_BUF_INIT, cmd = CF_BUF_INIT;
        cf_next_measurement_sentence(&r->advice->next, &sentence);
        cf_next_measurement_command(&r->advice->next, r->spec->job.source, r->history, &cmd);
        cell(out, sentence.data ? sentence.data : "");
        cf_buf_puts(out, " ");
        code(out, cmd.data ? cmd.data : "", 0);
        cf_buf_puts(out, "\n");
        if (sentence.failed || cmd.failed)
            out->failed = 1;
        cf_buf_free(&sentence);
        cf_buf_free(&cmd);
    }
    if (c->network_measured_max_nodes > 0) {
        cf_buf_puts(out, "- note: ");
        cf_report_extrapolation_note(c, out);
        cf_buf_puts(out, "\n");
    }
    for (int i = 0; i < in->n_notes; i++) {
        cf_buf_puts(out, strncmp(in->notes[i], "hint: ", 6) == 0 ? "- " : "- note: ");
        cell(out, in->notes[i]);
        cf_buf_puts(out, "\n");
    }
    if (r->catalog_source && r->catalog_source->in_use.n_restricted_left_out) { /* the table's line */
        cf_buf restricted = CF_BUF_INIT;
        cf_catalog_source_restricted_text(r->catalog_source, &restricted);
        cf_buf_puts(out, "- ");
        cell(out, cf_buf_cstr(&restricted));
        cf_buf_puts(out, "\n");
        if (restricted.failed)
            out->failed = 1;
        cf_buf_free(&restricted);
    }
    if (r->catalog_source && r->catalog_source->too_old) { /* the table's note: a comment left it out */
        cf_buf note = CF_BUF_INIT;
        cf_catalog_source_too_old_text(r->catalog_source, &note);
        cf_buf_puts(out, "- note: ");
        cell(out, cf_buf_cstr(&note));
        cf_buf_puts(out, "\n");
        if (note.failed)
            out->failed = 1;
        cf_buf_free(&note);
    }
    cf_buf_puts(out, "\n</details>\n");
}

/* --mix: the table's text, its heading a markdown heading and each
 * "  - " line a list item (the markdown left it out). */
static void mix_section(const cf_report *r, cf_buf *out)
{
    if (!r->hetero)
        return;
    cf_buf text = CF_BUF_INIT;
    cf_report_hetero_text(r, &text);
    const char *p = cf_buf_cstr(&text);
    while (*p == '\n')
        p++;
    cf_buf line = CF_BUF_INIT;
    for (int first = 1; *p; first = 0) {
        size_t len = strcspn(p, "\n");
        line.len = 0;
        cf_buf_append(&line, p, len);
        const char *body = cf_buf_cstr(&line);
        if (first) {
            cf_buf_puts(out, "\n### ");
        } else if (strncmp(body, "  - ", 4) == 0) {
            cf_buf_puts(out, "- ");
            body += 4;
        }
        cell(out, body);
        cf_buf_puts(out, first ? "\n\n" : "\n");
        p += len;
        while (*p == '\n')
            p++;
    }
    cf_buf_free(&line);
    cf_buf_free(&text);
}

void cf_report_markdown(const cf_report *r, cf_buf *out)
{
    const cf_config *c = &r->advice->ranked[0];
    cf_buf_puts(out, "## cloudfit: ");
    code(out, r->spec->job.name, 0);
    cf_buf_printf(out, "\n\n**%d × ", c->nodes);
    code(out, c->vm->instance_type, 0);
    cf_buf_printf(out, "** (%d×", c->gpus_per_node);
    cell(out, c->vm->gpu_model);
    cf_buf_puts(out, " per node) on ");
    cell(out, c->vm->cloud);
    cf_buf_puts(out, "/");
    cell(out, c->vm->region);
    char time[64];
    cf_text_duration_range(c->hours, c->hours_p10, c->hours_p90, time, sizeof time);
    cf_buf_printf(out, "%s%s: **%s**, **$%.2f (%.2f–%.2f)** (80%% intervals; objective: %s", c->spot ? ", " : "",
                  cf_config_capacity_label(c), time, c->total_usd, c->total_usd_p10, c->total_usd_p90,
                  cf_objective_name(r->spec->search.objective));
    char limit[48];
    if (r->spec->search.deadline_hours > 0) {
        cf_number_plain_text(r->spec->search.deadline_hours, CF_NUMBER_AS_GIVEN, limit, sizeof limit);
        cf_buf_printf(out, "; deadline %s h", limit);
    }
    if (r->spec->search.budget_usd > 0) {
        cf_number_plain_text(r->spec->search.budget_usd, CF_NUMBER_AS_GIVEN, limit, sizeof limit);
        cf_buf_printf(out, "; budget $%s", limit);
    }
    if (r->spec->search.deadline_hours > 0 || r->spec->search.budget_usd > 0) {
        char conf[16];
        cf_number_percent_text(r->spec->search.confidence > 0 ? r->spec->search.confidence : CF_DEFAULT_CONFIDENCE, conf,
                        sizeof conf);
        cf_buf_printf(out, "; met with %s confidence", conf);
    }
    cf_buf_printf(out, "). Batch %d per GPU × %d accumulation = global batch %ld, learning rate %.4g.\n\n",
                  c->local_batch, c->accumulation, c->global_batch, c->lr.lr);
    configs(r, out);
    cf_report_side_by_side_markdown(r, out);
    mix_section(r, out);
    diff_section(r, out);
    gates_section(r, out);
    reasons(r, out);
    const cf_prices_in_use *in_use = r->catalog_source ? &r->catalog_source->in_use : NULL;
    cf_buf_printf(out, "\n<sub>cloudfit · %s · spec `%.12s` · catalog ", r->created_at, r->spec->hash);
    cell(out, r->catalog->name); /* a snapshot's name: from a shared history */
    cf_buf_printf(out, ", prices in use of %s or later (the oldest %.0f days old)",
                  in_use && in_use->oldest_date[0] ? in_use->oldest_date : r->catalog->oldest_date,
                  floor(r->catalog_age_days));
    if (r->ci && r->ci->provider[0]) {
        cf_buf_printf(out, " · %s", r->ci->provider);
        if (r->ci->commit[0]) {
            char commit[13];
            snprintf(commit, sizeof commit, "%.*s", (int)cf_utf8_prefix(r->ci->commit, 12), r->ci->commit);
            cf_buf_puts(out, " ");
            cell(out, commit); /* from the environment: escaped like any outside text */
        }
    }
    cf_buf_puts(out, "</sub>\n");
}
