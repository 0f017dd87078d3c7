#include "cloudfit/common/yaml_out.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
    cf_yaml_out *y = data;
    cf_buf_append(y->out, (const char *)buffer, size);
    return !cf_buf_failed(y->out);
}

static void emit(cf_yaml_out *y, yaml_event_t *event, int ok)
{
    if (y->failed)
        return;
    if (!ok)
        y->event_refused = 1; /* libyaml checks a scalar's UTF-8 and sets no problem text */
    if (!ok || !yaml_emitter_emit(&y->emitter, event))
        y->failed = 1;
}

void yo_begin(cf_yaml_out *y, cf_buf *out)
{
    memset(y, 0, sizeof *y);
    y->out = out;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&y->emitter)) {
        y->failed = 1;
        return;
    }
    yaml_emitter_set_output(&y->emitter, write_handler, y);
    yaml_emitter_set_unicode(&y->emitter, 1);
    yaml_emitter_set_width(&y->emitter, 120);
    emit(y, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
    emit(y, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
}

cf_status yo_end(cf_yaml_out *y)
{
    yaml_event_t ev;
    emit(y, &ev, yaml_document_end_event_initialize(&ev, 1));
    emit(y, &ev, yaml_stream_end_event_initialize(&ev));
    if (!y->failed && !yaml_emitter_flush(&y->emitter))
        y->failed = 1;
    cf_status st = CF_OK;
    if (y->failed)
        st = cf_error_set(cf_buf_failed(y->out) ? CF_ERR_NOMEM : CF_ERR_INTERNAL, "cannot write YAML: %s",
                          y->emitter.problem  ? y->emitter.problem
                          : y->event_refused ? "a value is not valid UTF-8"
                                             : "out of memory");
    yaml_emitter_delete(&y->emitter);
    return st;
}

void yo_map(cf_yaml_out *y)
{
    yaml_event_t ev;
    emit(y, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
}

void yo_map_end(cf_yaml_out *y)
{
    yaml_event_t ev;
    emit(y, &ev, yaml_mapping_end_event_initialize(&ev));
}

void yo_seq(cf_yaml_out *y)
{
    yaml_event_t ev;
    emit(y, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE));
}

void yo_seq_end(cf_yaml_out *y)
{
    yaml_event_t ev;
    emit(y, &ev, yaml_sequence_end_event_initialize(&ev));
}

static void scalar(cf_yaml_out *y, const char *text, yaml_scalar_style_t style, int plain_implicit)
{
    yaml_event_t ev;
    emit(y, &ev,
         yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)(uintptr_t)text, (int)strlen(text),
                                      plain_implicit, 1, style));
}

/* Plain only when no YAML reader could take it for anything but a
 * string: YAML 1.1's implicit types (numbers with '_', 0b, 0o, 0x,
 * sexagesimal 1:30, .inf, .nan, timestamps, '<<', '=', '~') all begin
 * with a digit, a sign, '.', or one of those characters, or are one of the
 * boolean and null words; a text that begins with a letter, '_' or '/'
 * (or a non-ASCII character) and is not such a word is plain, anything
 * else is double-quoted. (A number test by strtod missed 1_000, 0b101,
 * .inf, 1:30, 2024-01-01, '=' and '<<': a PyTorchJob's command word
 * became a number, or the file would not load.) */
static int looks_typed(const char *t)
{
    static const char *const words[] = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", ""};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcasecmp(t, words[i]) == 0)
            return 1;
    unsigned char c = (unsigned char)t[0];
    return !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '/' || c >= 0x80);
}

void yo_str(cf_yaml_out *y, const char *text, int quoted)
{
    scalar(y, text, quoted || looks_typed(text) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE,
           !(quoted || looks_typed(text)));
}

void yo_literal(cf_yaml_out *y, const char *text) { scalar(y, text, YAML_LITERAL_SCALAR_STYLE, 0); }

void yo_int(cf_yaml_out *y, long v)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", v);
    scalar(y, text, YAML_PLAIN_SCALAR_STYLE, 1);
}

void yo_num(cf_yaml_out *y, double v)
{
    char text[32];
    snprintf(text, sizeof text, "%.6g", v);
    scalar(y, text, YAML_PLAIN_SCALAR_STYLE, 1);
}

void yo_bool(cf_yaml_out *y, int v) { scalar(y, v ? "true" : "false", YAML_PLAIN_SCALAR_STYLE, 1); }

void yo_kv_str(cf_yaml_out *y, const char *key, const char *value)
{
    yo_str(y, key, 0);
    yo_str(y, value, 0);
}

void yo_kv_quoted(cf_yaml_out *y, const char *key, const char *value)
{
    yo_str(y, key, 0);
    yo_str(y, value, 1);
}

void yo_kv_int(cf_yaml_out *y, const char *key, long value)
{
    yo_str(y, key, 0);
    yo_int(y, value);
}

void yo_kv_bool(cf_yaml_out *y, const char *key, int value)
{
    yo_str(y, key, 0);
    yo_bool(y, value);
}
