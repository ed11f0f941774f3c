/* A small, tolerant parser for the flat JSON objects of an audit log line
 * (string, number, true/false/null values; nested objects/arrays are kept
 * as raw text). Written for untrusted input: every path is bounds-checked,
 * nesting is capped, and a parsed object allocates nothing per line once its
 * buffers have grown (a 1-million-line log parses in constant memory). */
#pragma once
#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	VR_JSON_STRING,
	VR_JSON_NUMBER,  /* value: the number's text, as written */
	VR_JSON_TRUE,
	VR_JSON_FALSE,
	VR_JSON_NULL,
	VR_JSON_NESTED,  /* value: the raw text of an object or array */
} VrJsonKind;

typedef struct {
	const char *key;     /* decoded, NUL-terminated */
	const char *value;   /* decoded string (never holds a NUL), or raw text */
	size_t value_len;
	VrJsonKind kind;
} VrJsonField;

typedef struct {
	VrJsonField *fields;
	size_t n_fields;
	size_t cap_fields;
	char *buf;       /* holds every decoded key and value of the last parse */
	size_t buf_cap;
} VrJsonObject;

#define VR_JSON_MAX_FIELDS 256
#define VR_JSON_MAX_DEPTH 32

void vr_json_object_init(VrJsonObject *o);
void vr_json_object_clear(VrJsonObject *o);

/* Parses TEXT[0..len) as one JSON object (surrounding white space allowed).
 * 0 on success; -EINVAL for malformed input, with *ret_error (may be NULL)
 * set to a static description and *ret_offset (may be NULL) to the byte
 * where it went wrong; -ENOMEM. Duplicate keys are refused: a log line that
 * could be read two ways is not evidence. The object's previous content is
 * invalidated. */
int vr_json_parse_object(VrJsonObject *o, const char *text, size_t len,
                         const char **ret_error, size_t *ret_offset);

const VrJsonField *vr_json_get(const VrJsonObject *o, const char *key);
/* The value when KEY is present and a string, else NULL. */
const char *vr_json_get_string(const VrJsonObject *o, const char *key);
/* True when KEY is present and an integer that fits int64_t. */
bool vr_json_get_int64(const VrJsonObject *o, const char *key, int64_t *ret);

/* Appends S as a JSON string literal (with quotes) to OUT, as the audit log
 * and the journal write it: UTF-8 as is, a byte that is not UTF-8 as
 * \udcXX, which vr_json_parse_object turns back into the byte. */
void vr_json_append_string(GString *out, const char *s);
void vr_audit_json_str(GString *s, const char *str);  /* the same */
/* Appends ,"KEY":"V" (KEY is a plain literal, V escaped as above). */
void vr_audit_json_member(GString *s, const char *key, const char *v);
/* Appends US (µs since the epoch) as a quoted RFC 3339 UTC timestamp. */
void vr_audit_json_ts(GString *s, gint64 us);
/* "ENOENT" for ENOENT; "EIO" for a number without a name. */
const char *vr_errno_name(int err);
