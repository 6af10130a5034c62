/* SPDX-License-Identifier: BSD-3-Clause */
/* The decoding kit: field tables, JSON primitives, paths and messages. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pa_decode.h"
#include "pa_err.h"
#include "pa_net.h"

int
pa_decode_why(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pa_vseterr(why, why_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int
pa_decode_fail(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	pa_vseterr(err, err_len, fmt, ap);
	va_end(ap);
	/* Messages quote the document (jansson's "near '...'", names): a
	 * control character from a damaged file must not break the one-line
	 * message or reach a terminal. */
	if (err != NULL && err_len > 0)
		for (p = err; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
	return -EINVAL;
}

int
pa_decode_nomem(char *err, size_t err_len, const char *path)
{
	pa_decode_fail(err, err_len, "%s: out of memory", path);
	return -ENOMEM;
}

const char *
pa_decode_type_name(const json_t *v)
{
	if (v == NULL)
		return "nothing";
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "an unknown type";
}

/* A path too long for its buffer ends in "..." (still a usable prefix). */
static const char *
path_done(char *buf, size_t len, int n)
{
	if ((n < 0 || (size_t)n >= len) && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

const char *
pa_decode_key_path(char *buf, size_t len, const char *path, const char *key)
{
	return path_done(buf, len, snprintf(buf, len, "%s.%s", path, key));
}

const char *
pa_decode_index_path(char *buf, size_t len, const char *path, size_t i)
{
	return path_done(buf, len, snprintf(buf, len, "%s[%zu]", path, i));
}

int
pa_decode_want_object(const json_t *v, const char *path, char *err,
		size_t err_len)
{
	if (!json_is_object(v))
		return pa_decode_fail(err, err_len,
				"%s: expected an object, got %s", path,
				pa_decode_type_name(v));
	return 0;
}

int
pa_decode_want_array(const json_t *v, const char *path, char *err,
		size_t err_len)
{
	if (!json_is_array(v))
		return pa_decode_fail(err, err_len,
				"%s: expected an array, got %s", path,
				pa_decode_type_name(v));
	return 0;
}

int
pa_decode_array(const json_t *arr, const char *path, size_t elem_size,
		pa_decode_elem_fn fn, void *arg, void **out, unsigned int *n,
		char *err, size_t err_len)
{
	char p[PA_DECODE_PATH_MAX];
	const json_t *v;
	size_t i;
	int rc;

	if (pa_decode_want_array(arr, path, err, err_len) < 0)
		return -EINVAL;
	if (json_array_size(arr) == 0)
		return 0;
	*out = calloc(json_array_size(arr), elem_size);
	if (*out == NULL)
		return pa_decode_nomem(err, err_len, path);
	json_array_foreach(arr, i, v) {
		pa_decode_index_path(p, sizeof(p), path, i);
		rc = fn(v, p, *out, i, arg, err, err_len);
		if (rc < 0)
			return rc;
		*n = (unsigned int)i + 1;
	}
	return 0;
}

int
pa_decode_enum_index(const char *const *names, const char *s)
{
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

void
pa_decode_enum_list(const char *const *names, char *buf, size_t len)
{
	size_t off = 0;
	int i, n;

	buf[0] = '\0';
	for (i = 0; names[i] != NULL; i++) {
		n = snprintf(buf + off, len - off, "%s\"%s\"",
				i == 0 ? "" : ", ", names[i]);
		if (n < 0 || (size_t)n >= len - off)
			return;
		off += n;
	}
}

/* ------------------------------------------------------------------ */
/* Primitives                                                          */
/* ------------------------------------------------------------------ */

int
pa_decode_int(const json_t *v, const char *path, long long min,
		long long max, long long *out, char *err, size_t err_len)
{
	long long x;

	if (!json_is_integer(v))
		return pa_decode_fail(err, err_len,
				"%s: expected an integer, got %s", path,
				pa_decode_type_name(v));
	x = json_integer_value(v);
	if (x < min || x > max)
		return pa_decode_fail(err, err_len,
				"%s: %lld out of range %lld..%lld", path, x,
				min, max);
	*out = x;
	return 0;
}

int
pa_decode_pow2(const json_t *v, const char *path, long long min,
		long long max, long long *out, char *err, size_t err_len)
{
	long long x;
	int rc;

	rc = pa_decode_int(v, path, min, max, &x, err, err_len);
	if (rc < 0)
		return rc;
	if (x <= 0 || (x & (x - 1)) != 0)
		return pa_decode_fail(err, err_len,
				"%s: %lld is not a power of two", path, x);
	*out = x;
	return 0;
}

int
pa_decode_bool(const json_t *v, const char *path, bool *out, char *err,
		size_t err_len)
{
	if (!json_is_boolean(v))
		return pa_decode_fail(err, err_len,
				"%s: expected a boolean, got %s", path,
				pa_decode_type_name(v));
	*out = json_is_true(v);
	return 0;
}

int
pa_decode_string(const json_t *v, const char *path, const char **out,
		char *err, size_t err_len)
{
	if (!json_is_string(v))
		return pa_decode_fail(err, err_len,
				"%s: expected a string, got %s", path,
				pa_decode_type_name(v));
	*out = json_string_value(v);
	return 0;
}

int
pa_decode_enum(const json_t *v, const char *path, const char *const *names,
		int *out, char *err, size_t err_len)
{
	char list[160];
	const char *s;
	int i;

	if (pa_decode_string(v, path, &s, err, err_len) < 0)
		return -EINVAL;
	i = pa_decode_enum_index(names, s);
	if (i < 0) {
		pa_decode_enum_list(names, list, sizeof(list));
		return pa_decode_fail(err, err_len,
				"%s: invalid value '%s' (expected one of %s)",
				path, s, list);
	}
	*out = i;
	return 0;
}

int
pa_decode_check_name(const char *s, char *why, size_t why_len)
{
	size_t n, i;
	unsigned char ch;

	n = strlen(s);
	if (n == 0 || n >= PA_DECODE_NAME_MAX)
		return pa_decode_why(why, why_len,
				"invalid name '%s': must be 1..%d characters",
				s, PA_DECODE_NAME_MAX - 1);
	for (i = 0; i < n; i++) {
		ch = (unsigned char)s[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				(ch >= '0' && ch <= '9') || ch == '_' ||
				ch == '.' || ch == '-')
			continue;
		if (ch >= 0x20 && ch < 0x7f)
			return pa_decode_why(why, why_len,
					"invalid name '%s': character '%c' not allowed (use A-Z a-z 0-9 _ . -)",
					s, ch);
		return pa_decode_why(why, why_len,
				"invalid name: character 0x%02x not allowed (use A-Z a-z 0-9 _ . -)",
				ch);
	}
	return 0;
}

int
pa_decode_name(const json_t *v, const char *path,
		char out[PA_DECODE_NAME_MAX], char *err, size_t err_len)
{
	char why[PA_DECODE_WHY_MAX];
	const char *s;

	if (pa_decode_string(v, path, &s, err, err_len) < 0)
		return -EINVAL;
	if (pa_decode_check_name(s, why, sizeof(why)) < 0)
		return pa_decode_fail(err, err_len, "%s: %s", path, why);
	snprintf(out, PA_DECODE_NAME_MAX, "%s", s);
	return 0;
}

int
pa_decode_ip(const json_t *v, const char *path, struct pa_ip_addr *out,
		char *err, size_t err_len)
{
	char why[PA_DECODE_WHY_MAX];
	const char *s;

	if (pa_decode_string(v, path, &s, err, err_len) < 0)
		return -EINVAL;
	if (pa_net_parse_ip(s, out, why, sizeof(why)) < 0)
		return pa_decode_fail(err, err_len, "%s: %s", path, why);
	return 0;
}

int
pa_decode_prefix(const json_t *v, const char *path, struct pa_ip_prefix *out,
		char *err, size_t err_len)
{
	char why[PA_DECODE_WHY_MAX];
	const char *s;

	if (pa_decode_string(v, path, &s, err, err_len) < 0)
		return -EINVAL;
	if (pa_net_parse_prefix(s, out, why, sizeof(why)) < 0)
		return pa_decode_fail(err, err_len, "%s: %s", path, why);
	return 0;
}

int
pa_decode_mac(const json_t *v, const char *path, uint8_t out[6], char *err,
		size_t err_len)
{
	char why[PA_DECODE_WHY_MAX];
	const char *s;

	if (pa_decode_string(v, path, &s, err, err_len) < 0)
		return -EINVAL;
	if (pa_net_parse_mac(s, out, why, sizeof(why)) < 0)
		return pa_decode_fail(err, err_len, "%s: %s", path, why);
	return 0;
}

int
pa_decode_port(const json_t *v, const char *path, unsigned long min,
		unsigned long max, unsigned long *out, char *err,
		size_t err_len)
{
	const char *s, *end;
	unsigned long x;
	long long ll;

	if (json_is_integer(v)) {
		if (pa_decode_int(v, path, (long long)min, (long long)max, &ll,
				err, err_len) < 0)
			return -EINVAL;
		*out = (unsigned long)ll;
		return 0;
	}
	if (!json_is_string(v))
		return pa_decode_fail(err, err_len,
				"%s: expected an integer or a string of digits, got %s",
				path, pa_decode_type_name(v));
	s = json_string_value(v);
	if (pa_net_parse_number(s, &end, 65535, &x) < 0 || *end != '\0')
		return pa_decode_fail(err, err_len,
				"%s: invalid port number '%s'", path, s);
	if (x < min || x > max)
		return pa_decode_fail(err, err_len,
				"%s: %lu out of range %lu..%lu", path, x, min, max);
	*out = x;
	return 0;
}

int
pa_decode_port_range(const json_t *v, const char *path,
		struct pa_port_range *out, char *err, size_t err_len)
{
	char why[PA_DECODE_WHY_MAX];
	unsigned long x;

	out->lo = 0;
	out->hi = 65535;
	if (json_is_integer(v)) {
		if (pa_decode_port(v, path, 0, 65535, &x, err, err_len) < 0)
			return -EINVAL;
		out->lo = out->hi = (uint16_t)x;
		return 0;
	}
	if (!json_is_string(v))
		return pa_decode_fail(err, err_len,
				"%s: expected a string (\"any\", \"N\", \"LO-HI\") or an integer, got %s",
				path, pa_decode_type_name(v));
	if (pa_net_parse_port_range(json_string_value(v), out, why,
			sizeof(why)) < 0)
		return pa_decode_fail(err, err_len, "%s: %s", path, why);
	return 0;
}

int
pa_decode_parse_proto(const json_t *v, int *proto, char *why, size_t why_len)
{
	if (v == NULL)
		return pa_decode_why(why, why_len, "missing protocol");
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0 || json_integer_value(v) > 255)
			return pa_decode_why(why, why_len,
					"protocol %lld out of range 0..255",
					(long long)json_integer_value(v));
		*proto = (int)json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return pa_decode_why(why, why_len,
				"expected a protocol name or number, got %s",
				pa_decode_type_name(v));
	return pa_net_parse_proto(json_string_value(v), proto, why, why_len);
}

int
pa_decode_proto(const json_t *v, const char *path, int *out, char *err,
		size_t err_len)
{
	char why[PA_DECODE_WHY_MAX];

	if (pa_decode_parse_proto(v, out, why, sizeof(why)) < 0)
		return pa_decode_fail(err, err_len, "%s: %s", path, why);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Field tables                                                        */
/* ------------------------------------------------------------------ */

/* An integer of f->size bytes at f->offset; bounds are the table's. */
void
pa_decode_store_int(const struct pa_decode_field *f, void *out, long long x)
{
	char *p = (char *)out + f->offset;

	switch (f->size) {
	case 1: {
		uint8_t v = (uint8_t)x;

		memcpy(p, &v, 1);
		break;
	}
	case 2: {
		uint16_t v = (uint16_t)x;

		memcpy(p, &v, 2);
		break;
	}
	case 4: {
		uint32_t v = (uint32_t)x;

		memcpy(p, &v, 4);
		break;
	}
	default: {
		uint64_t v = (uint64_t)x;

		memcpy(p, &v, 8);
		break;
	}
	}
}

static int
decode_field(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	char *dst = (char *)out + f->offset;
	unsigned long ul;
	long long x;
	int rc, i, proto;
	bool b;
	const char *s;

	switch (f->type) {
	case PA_DECODE_INT:
		rc = pa_decode_int(v, path, f->min, f->max, &x, err, err_len);
		if (rc == 0)
			pa_decode_store_int(f, out, x);
		break;
	case PA_DECODE_POW2:
		rc = pa_decode_pow2(v, path, f->min, f->max, &x, err, err_len);
		if (rc == 0)
			pa_decode_store_int(f, out, x);
		break;
	case PA_DECODE_BOOL:
		rc = pa_decode_bool(v, path, &b, err, err_len);
		if (rc == 0)
			memcpy(dst, &b, sizeof(b));
		break;
	case PA_DECODE_STRING:
		rc = pa_decode_string(v, path, &s, err, err_len);
		if (rc == 0)
			memcpy(dst, &s, sizeof(s));
		break;
	case PA_DECODE_ENUM:
		rc = pa_decode_enum(v, path, f->names, &i, err, err_len);
		if (rc == 0)
			pa_decode_store_int(f, out, i);
		break;
	case PA_DECODE_NAME:
		rc = pa_decode_name(v, path, dst, err, err_len);
		break;
	case PA_DECODE_IP:
		rc = pa_decode_ip(v, path, (struct pa_ip_addr *)dst, err,
				err_len);
		break;
	case PA_DECODE_PREFIX:
		rc = pa_decode_prefix(v, path, (struct pa_ip_prefix *)dst, err,
				err_len);
		break;
	case PA_DECODE_MAC:
		rc = pa_decode_mac(v, path, (uint8_t *)dst, err, err_len);
		break;
	case PA_DECODE_PORT:
		rc = pa_decode_port(v, path, (unsigned long)f->min,
				(unsigned long)f->max, &ul, err, err_len);
		if (rc == 0)
			pa_decode_store_int(f, out, (long long)ul);
		break;
	case PA_DECODE_PORT_RANGE:
		rc = pa_decode_port_range(v, path, (struct pa_port_range *)dst,
				err, err_len);
		break;
	case PA_DECODE_PROTO:
		rc = pa_decode_proto(v, path, &proto, err, err_len);
		if (rc == 0)
			memcpy(dst, &proto, sizeof(proto));
		break;
	case PA_DECODE_CUSTOM:
		return f->decode(f, v, path, out, arg, err, err_len);
	default:
		return pa_decode_fail(err, err_len,
				"%s: internal error: unknown field type", path);
	}
	if (rc < 0)
		return rc;
	if (f->has_present)
		*(bool *)((char *)out + f->present_offset) = true;
	if (f->check != NULL)
		return f->check(f, v, path, out, arg, err, err_len);
	return 0;
}

int
pa_decode_object(const json_t *obj, const char *path,
		const struct pa_decode_field *fields, size_t n_fields,
		void *out, void *arg, char *err, size_t err_len)
{
	char p[PA_DECODE_PATH_MAX];
	const struct pa_decode_field *f;
	const char *key;
	const json_t *v;
	size_t i;
	int rc;

	if (pa_decode_want_object(obj, path, err, err_len) < 0)
		return -EINVAL;
	json_object_foreach((json_t *)(uintptr_t)obj, key, v) {
		for (i = 0; i < n_fields; i++)
			if (strcmp(fields[i].name, key) == 0)
				break;
		if (i == n_fields)
			return pa_decode_fail(err, err_len,
					"%s.%s: unknown key", path, key);
	}
	for (i = 0; i < n_fields; i++) {
		f = &fields[i];
		pa_decode_key_path(p, sizeof(p), path, f->name);
		v = json_object_get(obj, f->name);
		if (v == NULL) {
			if (f->required)
				return pa_decode_fail(err, err_len,
						"%s.%s: required key missing",
						path, f->name);
			if (!(f->flags & PA_DECODE_ALWAYS))
				continue;
			if (f->type == PA_DECODE_CUSTOM)
				rc = f->decode(f, NULL, p, out, arg, err,
						err_len);
			else if (f->check != NULL)
				rc = f->check(f, NULL, p, out, arg, err,
						err_len);
			else
				rc = 0;
		} else {
			rc = decode_field(f, v, p, out, arg, err, err_len);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}
