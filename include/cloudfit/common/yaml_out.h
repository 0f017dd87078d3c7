/* A thin layer over libyaml's emitter that writes into a cf_buf: the
 * emitters build documents as events, so quoting and escaping are
 * libyaml's job, never ours. Errors are sticky; check yo_end's status. */
#ifndef CLOUDFIT_COMMON_YAML_OUT_H
#define CLOUDFIT_COMMON_YAML_OUT_H
#include <yaml.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/status.h"

typedef struct {
    yaml_emitter_t emitter;
    cf_buf *out;
    int failed;
    int event_refused; /* libyaml refused an event: a value that is not UTF-8 */
} cf_yaml_out;

void yo_begin(cf_yaml_out *y, cf_buf *out);
/* Ends the document and stream; CF_OK or CF_ERR_INTERNAL with libyaml's message. */
cf_status yo_end(cf_yaml_out *y);
void yo_map(cf_yaml_out *y);
void yo_map_end(cf_yaml_out *y);
void yo_seq(cf_yaml_out *y);
void yo_seq_end(cf_yaml_out *y);
/* A string scalar: libyaml picks a safe style; `quoted` forces double
 * quotes (for strings that look like numbers, e.g. Kubernetes env values). */
void yo_str(cf_yaml_out *y, const char *text, int quoted);
void yo_literal(cf_yaml_out *y, const char *text);      /* block scalar "|" */
void yo_int(cf_yaml_out *y, long v);
void yo_num(cf_yaml_out *y, double v);
void yo_bool(cf_yaml_out *y, int v);
/* key: value shorthands */
void yo_kv_str(cf_yaml_out *y, const char *key, const char *value);
void yo_kv_quoted(cf_yaml_out *y, const char *key, const char *value);
void yo_kv_int(cf_yaml_out *y, const char *key, long value);
void yo_kv_bool(cf_yaml_out *y, const char *key, int value);

#endif
