#include "recommend/emit_common.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/hash.h"

/* ---- environment ------------------------------------------------------------- */

/* Takes `value` (a cf_buf) into the list. */
static cf_status add_env(cf_emit_env_list *list, const char *name, cf_buf *value)
{
    cf_buf_append(value, "", 0); /* allocates an empty value too */
    if (cf_buf_failed(value)) {
        cf_buf_free(value);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    list->items[list->n].name = name;
    list->items[list->n].value = value->data;
    list->n++;
    *value = (cf_buf)CF_BUF_INIT;
    return CF_OK;
}

static cf_status add_env_long(cf_emit_env_list *list, const char *name, long v)
{
    cf_buf text = CF_BUF_INIT;
    cf_buf_printf(&text, "%ld", v);
    return add_env(list, name, &text);
}

cf_status cf_emit_envs(const cf_report *r, cf_emit_env_list *out)
{
    const cf_config *c = &r->advice->ranked[0];
    memset(out, 0, sizeof *out);
    cf_buf text = CF_BUF_INIT;
    cf_buf_puts(&text, r->spec->job.name);
    cf_status st = add_env(out, "CLOUDFIT_SPEC", &text);
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_NODES", c->nodes);
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_GPUS_PER_NODE", c->gpus_per_node);
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_LOCAL_BATCH", c->local_batch);
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_ACCUMULATION", c->accumulation);
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_GLOBAL_BATCH", c->global_batch);
    if (st == CF_OK) {
        cf_buf_printf(&text, "%.6g", c->lr.lr);
        st = add_env(out, "CLOUDFIT_LR", &text);
    }
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_WARMUP", c->lr.warmup_recommended ? 1 : 0);
    cf_elastic_plan *e = NULL;
    if (st == CF_OK)
        st = cf_report_elastic(r, c, &e);
    if (st == CF_OK) {
        /* "nodes:lr,..." for every node count up to the chosen one: with
         * spot/elastic training the node count changes at run time, and
         * with it the global batch where it cannot be held, and so the LR. */
        for (int k = 1; k <= e->max_nodes; k++)
            cf_buf_printf(&text, "%s%d:%.6g", k > 1 ? "," : "", k, e->points[k - 1].lr);
        st = add_env(out, "CLOUDFIT_LR_BY_NODES", &text);
    }
    if (st == CF_OK) {
        /* "nodes:per_gpu_batch:accumulation:global_batch,...": the batch is
         * held while memory and max_accumulation allow (docs/spot.md). */
        for (int k = 1; k <= e->max_nodes; k++)
            cf_buf_printf(&text, "%s%d:%d:%d:%ld", k > 1 ? "," : "", k, e->points[k - 1].local_batch,
                          e->points[k - 1].accumulation, e->points[k - 1].global_batch);
        st = add_env(out, "CLOUDFIT_BATCH_BY_NODES", &text);
    }
    if (st == CF_OK) {
        /* The LR as a function of the global batch, for any batch the job
         * ends up with: lr(M) = lr0·((B+M0)·M/((B+M)·M0))^exponent (gain),
         * lr0·M/M0 (linear), lr0·√(M/M0) (sqrt), lr0 (none); a jump of the
         * LR by warmup_factor or more is reached linearly over warmup_steps. */
        cf_buf_printf(&text, "{\"rule\":\"%s\",\"lr0\":%.9g,\"m0\":%.9g,\"b_noise\":%.9g,\"exponent\":%g,"
                             "\"warmup_factor\":%g,\"warmup_steps\":%d,\"min_nodes\":%d,\"max_nodes\":%d}",
                      cf_lr_rule_name(e->lr.rule), e->lr.lr0, e->lr.m0, e->lr.b_noise, e->lr.exponent,
                      e->warmup_factor, e->warmup_steps, e->min_nodes, e->max_nodes);
        st = add_env(out, "CLOUDFIT_LR_FUNCTION", &text);
    }
    free(e);
    cf_buf_free(&text);
    if (st != CF_OK)
        cf_emit_envs_free(out);
    return st;
}

void cf_emit_envs_free(cf_emit_env_list *list)
{
    for (size_t i = 0; i < list->n; i++)
        free(list->items[i].value);
    memset(list, 0, sizeof *list);
}

int cf_emit_min_nodes(const cf_report *r, const cf_config *c)
{
    if (!c->spot)
        return c->nodes;
    cf_elastic_plan *e = NULL;
    if (cf_report_elastic(r, c, &e) != CF_OK) {
        cf_error_clear();
        return c->nodes;
    }
    int n = e->min_nodes;
    free(e);
    return n;
}

/* ---- entry point words ---------------------------------------------------------- */

/* Takes `word` into the list. */
static cf_status push_word(cf_emit_words *w, cf_buf *word)
{
    cf_buf_append(word, "", 0); /* an empty word ('') is a word */
    char **grown = cf_buf_failed(word) ? NULL : realloc(w->words, (w->n + 1) * sizeof *grown);
    if (!grown) {
        cf_buf_free(word);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    w->words = grown;
    w->words[w->n++] = word->data;
    *word = (cf_buf)CF_BUF_INIT;
    return CF_OK;
}

static cf_status refuse(const char *text, const char *p, const char *what)
{
    cf_error_set(CF_ERR_USAGE, "--entrypoint: %s at character %zu of '%s'", what, (size_t)(p - text) + 1, text);
    cf_error_hint("the entry point is split into words like a POSIX shell command line but nothing is expanded; "
                  "put text that a shell would act on in single quotes (docs/launch.md)");
    return CF_ERR_USAGE;
}

cf_status cf_emit_split_words(const char *text, cf_emit_words *out)
{
    memset(out, 0, sizeof *out);
    cf_buf word = CF_BUF_INIT;
    int in_word = 0;
    cf_status st = CF_OK;
    const char *p = text;
    while (st == CF_OK) {
        char ch = *p;
        if (ch == '\0' || ch == ' ' || ch == '\t') {
            if (in_word) {
                st = push_word(out, &word);
                in_word = 0;
            }
            if (ch == '\0')
                break;
            p++;
            continue;
        }
        if (ch == '\n')
            st = refuse(text, p, "a newline outside quotes (it would end a shell command)");
        else if (strchr("|&;<>(){}", ch))
            st = refuse(text, p, "an unquoted shell operator");
        else if (ch == '$' || ch == '`')
            st = refuse(text, p, "an unquoted '$' or '`' (a shell would expand it)");
        else if (strchr("*?[", ch))
            st = refuse(text, p, "an unquoted glob character (a shell would expand it)");
        else if (!in_word && (ch == '~' || ch == '#'))
            st = refuse(text, p, ch == '~' ? "a word starting with an unquoted '~' (a shell would expand it)"
                                           : "a word starting with an unquoted '#' (a shell comment)");
        if (st != CF_OK)
            break;
        in_word = 1;
        if (ch == '\'') {
            const char *end = strchr(p + 1, '\'');
            if (!end) {
                st = refuse(text, p, "an unterminated single quote");
                break;
            }
            cf_buf_append(&word, p + 1, (size_t)(end - p - 1));
            p = end + 1;
        } else if (ch == '"') {
            const char *q = p + 1;
            for (; *q && *q != '"'; q++) {
                if (*q == '\\' && q[1] && strchr("$`\"\\\n", q[1])) {
                    if (q[1] != '\n') /* backslash-newline is a line continuation */
                        cf_buf_append(&word, q + 1, 1);
                    q++;
                } else if (*q == '$' || *q == '`') {
                    st = refuse(text, q, "a '$' or '`' in double quotes (a shell would expand it)");
                    break;
                } else {
                    cf_buf_append(&word, q, 1);
                }
            }
            if (st != CF_OK)
                break;
            if (*q != '"') {
                st = refuse(text, p, "an unterminated double quote");
                break;
            }
            p = q + 1;
        } else if (ch == '\\') {
            if (p[1] == '\0') {
                st = refuse(text, p, "a backslash at the end");
                break;
            }
            if (p[1] != '\n')
                cf_buf_append(&word, p + 1, 1);
            else if (!word.len && !(p > text && (p[-1] == '\'' || p[-1] == '"')))
                in_word = 0; /* a line continuation between words is no word */
            p += 2;
        } else {
            cf_buf_append(&word, p, 1);
            p++;
        }
    }
    cf_buf_free(&word);
    if (st == CF_OK && out->n == 0)
        st = cf_error_set(CF_ERR_USAGE, "--entrypoint: no words in '%s'", text);
    if (st != CF_OK)
        cf_emit_words_free(out);
    return st;
}

void cf_emit_words_free(cf_emit_words *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->words[i]);
    free(w->words);
    memset(w, 0, sizeof *w);
}

void cf_emit_shell_quote(cf_buf *out, const char *word)
{
    cf_buf_puts(out, "'");
    for (const char *p = word; *p; p++) {
        if (*p == '\'')
            cf_buf_puts(out, "'\\''");
        else
            cf_buf_append(out, p, 1);
    }
    cf_buf_puts(out, "'");
}

/* ---- job name ----------------------------------------------------------------- */

cf_status cf_emit_job_name(const char *spec_name, char **out)
{
    *out = NULL;
    cf_buf base = CF_BUF_INIT;
    int dash = 0;
    for (const char *p = spec_name; *p; p++) {
        unsigned char ch = (unsigned char)tolower((unsigned char)*p);
        if (isalnum(ch) && ch < 128) {
            if (dash && base.len)
                cf_buf_puts(&base, "-");
            dash = 0;
            cf_buf_append(&base, (const char *)&ch, 1);
        } else {
            dash = 1;
        }
    }
    cf_buf name = CF_BUF_INIT;
    if (!base.len || !isalpha((unsigned char)base.data[0]))
        cf_buf_puts(&name, base.len ? "cf-" : "cf");
    if (base.len)
        cf_buf_append(&name, base.data, base.len);
    cf_buf_free(&base);
    if (cf_buf_failed(&name)) {
        cf_buf_free(&name);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    int changed = strcmp(name.data, spec_name) != 0 || name.len > CF_EMIT_NAME_MAX_CHARS;
    if (changed) {
        char hex[CF_SHA256_HEX_LEN + 1];
        cf_status st = cf_sha256_hex(spec_name, strlen(spec_name), hex);
        if (st != CF_OK) {
            cf_buf_free(&name);
            return st;
        }
        size_t keep = CF_EMIT_NAME_MAX_CHARS - 9; /* "-" and 8 hex digits */
        if (name.len > keep)
            name.len = keep;
        while (name.len && name.data[name.len - 1] == '-')
            name.len--;
        name.data[name.len] = '\0';
        cf_buf_printf(&name, "-%.8s", hex);
    }
    if (cf_buf_failed(&name)) {
        cf_buf_free(&name);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    *out = name.data;
    return CF_OK;
}

/* ---- header ------------------------------------------------------------------- */

void cf_emit_header(const cf_report *r, const char *what, cf_buf *out)
{
    const cf_config *c = &r->advice->ranked[0];
    cf_buf_printf(out, "# %s for %s, generated by cloudfit at %s\n", what, r->spec->job.name, r->created_at);
    cf_buf_printf(out, "# chosen: %d × %s (%d×%s) on %s/%s%s; predicted %s%.1f h, $%.2f\n", c->nodes,
                  c->vm->instance_type, c->gpus_per_node, c->vm->gpu_model, c->vm->cloud, c->vm->region,
                  !c->spot ? "" : c->mixed ? ", spot with an on-demand fallback near the deadline" : ", spot",
                  c->spot ? "p50 " : "", c->hours, c->total_usd);
    cf_buf_puts(out, "# The training script reads CLOUDFIT_LOCAL_BATCH, CLOUDFIT_ACCUMULATION and CLOUDFIT_LR\n"
                     "# (CLOUDFIT_BATCH_BY_NODES and CLOUDFIT_LR_BY_NODES when the node count changes at run\n"
                     "# time; CLOUDFIT_LR_FUNCTION gives the LR for any global batch, examples/elastic/).\n");
}
