/* SPDX-License-Identifier: BSD-3-Clause */
/* The JSON Schema of a field table (pa_decode.h): what rpc.discover and
 * docs/openrpc.json say each parameter accepts, derived from the tables
 * the decoders run, so that the description cannot drift from them. */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "pa_decode.h"

/* Patterns of the string forms. They say the shape; the decoder's own
 * parse (an address that inet_pton takes, no host bits in a prefix, a
 * range whose low end is not above its high end) is the last word, and
 * what the pattern lets through that the parse refuses is named by
 * "format" or the description. */
#define PAT_IP		"^[0-9A-Fa-f:.]+$"
#define PAT_PREFIX	"^(any|[0-9A-Fa-f:.]+(/[0-9]{1,3})?)$"
#define PAT_MAC		"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"
#define PAT_NAME	"^[A-Za-z0-9_.-]{1,31}$"
#define PAT_PORT	"^[0-9]{1,5}$"
#define PAT_PORT_RANGE	"^(any|[0-9]{1,5}(-[0-9]{1,5})?)$"
#define PAT_PROTO	"^(any|tcp|udp|icmp|icmpv6|[0-9]{1,3})$"

json_t *
pa_decode_schema_text(const char *text)
{
	return json_loads(text, JSON_REJECT_DUPLICATES, NULL);
}

json_t *
pa_decode_schema_array(json_t *items, size_t max_items)
{
	json_t *s;

	if (items == NULL)
		return NULL;
	s = json_pack("{s:s, s:o}", "type", "array", "items", items);
	if (s != NULL && max_items != 0 && json_object_set_new(s, "maxItems",
			json_integer((json_int_t)max_items)) != 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}

static json_t *
int_schema(long long min, long long max)
{
	return json_pack("{s:s, s:I, s:I}", "type", "integer",
			"minimum", (json_int_t)min, "maximum", (json_int_t)max);
}

/* The powers of two in min..max, all of them (at most 63). */
static json_t *
pow2_schema(long long min, long long max)
{
	json_t *s, *e;
	long long x;

	s = json_pack("{s:s, s:[]}", "type", "integer", "enum");
	if (s == NULL)
		return NULL;
	e = json_object_get(s, "enum");
	for (x = 1; x > 0 && x <= max; x <<= 1) {
		if (x < min)
			continue;
		if (json_array_append_new(e, json_integer(x)) != 0) {
			json_decref(s);
			return NULL;
		}
		if (x > INT64_MAX / 2)
			break;
	}
	return s;
}

static json_t *
enum_schema(const char *const *names)
{
	json_t *s, *e;
	size_t i;

	s = json_pack("{s:s, s:[]}", "type", "string", "enum");
	if (s == NULL)
		return NULL;
	e = json_object_get(s, "enum");
	for (i = 0; names != NULL && names[i] != NULL; i++)
		if (json_array_append_new(e, json_string(names[i])) != 0) {
			json_decref(s);
			return NULL;
		}
	return s;
}

static json_t *
string_schema(const char *pattern, const char *description)
{
	return json_pack("{s:s, s:s, s:s}", "type", "string",
			"pattern", pattern, "description", description);
}

/* An integer in min..max, or the same as a string of digits. */
static json_t *
int_or_string_schema(long long min, long long max, const char *pattern,
		const char *description)
{
	return json_pack("{s:[ss], s:I, s:I, s:s, s:s}",
			"type", "integer", "string",
			"minimum", (json_int_t)min, "maximum", (json_int_t)max,
			"pattern", pattern, "description", description);
}

static json_t *
typed_schema(const struct pa_decode_field *f)
{
	switch (f->type) {
	case PA_DECODE_INT:
		return int_schema(f->min, f->max);
	case PA_DECODE_POW2:
		return pow2_schema(f->min, f->max);
	case PA_DECODE_BOOL:
		return json_pack("{s:s}", "type", "boolean");
	case PA_DECODE_STRING:
		return json_pack("{s:s}", "type", "string");
	case PA_DECODE_ENUM:
		return enum_schema(f->names);
	case PA_DECODE_NAME:
		return string_schema(PAT_NAME,
				"a name: 1..31 characters of A-Z a-z 0-9 _ . -");
	case PA_DECODE_IP:
		return json_pack("{s:s, s:s, s:[{s:s}{s:s}], s:s}",
				"type", "string", "pattern", PAT_IP,
				"anyOf", "format", "ipv4", "format", "ipv6",
				"description", "an IPv4 or IPv6 address");
	case PA_DECODE_PREFIX:
		return string_schema(PAT_PREFIX,
				"an IPv4 or IPv6 prefix ADDRESS/LENGTH without host bits (an address alone: its host prefix), or \"any\"");
	case PA_DECODE_MAC:
		return string_schema(PAT_MAC, "a MAC address xx:xx:xx:xx:xx:xx");
	case PA_DECODE_PORT:
		return int_or_string_schema(f->min, f->max, PAT_PORT,
				"a port number, as an integer or a string of digits");
	case PA_DECODE_PORT_RANGE:
		return int_or_string_schema(0, 65535, PAT_PORT_RANGE,
				"\"any\", a port \"N\" or a range \"LO-HI\" (LO <= HI) of ports 0..65535, or one port as an integer");
	case PA_DECODE_PROTO:
		return int_or_string_schema(0, 255, PAT_PROTO,
				"\"any\", \"tcp\", \"udp\", \"icmp\", \"icmpv6\" or a protocol number 0..255 (integer or string)");
	case PA_DECODE_CUSTOM:
		return json_object();
	}
	return json_object();
}

json_t *
pa_decode_schema_int(const struct pa_decode_field *f)
{
	return int_schema(f->min, f->max);
}

json_t *
pa_decode_schema_name(const struct pa_decode_field *f)
{
	struct pa_decode_field t = { .type = PA_DECODE_NAME };

	return typed_schema(&t);
}

json_t *
pa_decode_schema_string(const struct pa_decode_field *f)
{
	return json_pack("{s:s}", "type", "string");
}

json_t *
pa_decode_schema_ip(const struct pa_decode_field *f)
{
	struct pa_decode_field t = { .type = PA_DECODE_IP };

	return typed_schema(&t);
}

json_t *
pa_decode_schema_field(const struct pa_decode_field *f)
{
	json_t *s;

	s = f->schema != NULL ? f->schema(f) : typed_schema(f);
	if (s != NULL && f->doc != NULL &&
	    json_object_set_new(s, "description", json_string(f->doc)) != 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}

json_t *
pa_decode_schema_object(const struct pa_decode_field *fields,
		size_t n_fields)
{
	json_t *s, *props, *req;
	size_t i;

	s = json_pack("{s:s, s:{}, s:[], s:b}", "type", "object",
			"properties", "required", "additionalProperties", 0);
	if (s == NULL)
		return NULL;
	props = json_object_get(s, "properties");
	req = json_object_get(s, "required");
	for (i = 0; i < n_fields; i++) {
		if (json_object_set_new(props, fields[i].name,
				pa_decode_schema_field(&fields[i])) != 0)
			goto fail;
		if (fields[i].required &&
		    json_array_append_new(req, json_string(fields[i].name)) != 0)
			goto fail;
	}
	/* draft 4 (OpenRPC's meta-schema) wants a non-empty "required" */
	if (json_array_size(req) == 0)
		json_object_del(s, "required");
	return s;
fail:
	json_decref(s);
	return NULL;
}
