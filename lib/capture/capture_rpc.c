/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapters of the capture: capture_start, capture_stop,
 * capture_get (docs/rpc.md). Parameters are decoded strictly by a field
 * table of the decoding kit (pa_decode.h); messages name the parameter
 * ("params.max_bytes: ..."). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pa_capture.h"
#include "pa_decode.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(capture, "capture", "capture not running");

/* "name1, name2, ..." of every drop reason, for messages. */
static void
reason_list(char *buf, size_t len)
{
	size_t used = 0;
	unsigned int r;
	int w;

	buf[0] = '\0';
	for (r = 0; r < PA_DROP_MAX && used < len; r++) {
		w = snprintf(buf + used, len - used, "%s, ",
			pa_stats_drop_name((enum pa_drop_reason)r));
		if (w < 0)
			return;
		used += (size_t)w;
	}
	snprintf(buf + RTE_MIN(used, len - 1), len - RTE_MIN(used, len - 1),
		"any");
}

/*
 * capture_start: {"reason": "acl" | ... | "any", "path": "NAME",
 * "max_packets"?: N, "max_bytes"?: N, "snaplen"?: N}
 */
struct start_params {
	struct pa_capture_params cap;
	const char *reason;
	const char *path;
};

/* A string with a NUL inside would pass the checks on its first part. */
static bool
has_nul(const json_t *v, const char *s)
{
	return strlen(s) != json_string_length(v);
}

static int
start_reason_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct start_params *p = out;
	char names[160];

	if (has_nul(v, p->reason) ||
	    pa_capture_parse_reason(p->reason, &p->cap.reasons) != 0) {
		reason_list(names, sizeof(names));
		return pa_decode_fail(err, err_len,
				"%s: expected a drop reason: %s", path, names);
	}
	return 0;
}

static int
start_path_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct start_params *p = out;
	char why[PA_RPC_MSG_MAX];

	if (has_nul(v, p->path))
		return pa_decode_fail(err, err_len,
				"%s: a file name may not contain NUL", path);
	if (pa_capture_check_name(p->path, why, sizeof(why)) != 0)
		return pa_decode_fail(err, err_len, "%s: %s", path, why);
	snprintf(p->cap.name, sizeof(p->cap.name), "%s", p->path);
	return 0;
}

/* "reason": a drop reason's name or "any" (start_reason_check) */
static json_t *
start_reason_schema(const struct pa_decode_field *f)
{
	json_t *s, *e;
	unsigned int r;

	s = json_pack("{s:s, s:[]}", "type", "string", "enum");
	if (s == NULL)
		return NULL;
	e = json_object_get(s, "enum");
	for (r = 0; r < PA_DROP_MAX; r++)
		if (json_array_append_new(e, json_string(pa_stats_drop_name(
				(enum pa_drop_reason)r))) != 0)
			goto fail;
	if (json_array_append_new(e, json_string("any")) != 0)
		goto fail;
	return s;
fail:
	json_decref(s);
	return NULL;
}

/* "path": what pa_capture_check_name() takes (start_path_check) */
static json_t *
start_path_schema(const struct pa_decode_field *f)
{
	char pat[64];

	snprintf(pat, sizeof(pat), "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,%u}$",
		PA_CAPTURE_NAME_MAX - 1);
	return json_pack("{s:s, s:s, s:s}", "type", "string", "pattern", pat,
		"description", "a file name in the capture directory");
}

#define START(m)	PA_DECODE_AT(struct start_params, m)

static const struct pa_decode_field start_fields[] = {
	{ .name = "reason", .type = PA_DECODE_STRING, .required = true,
	  START(reason), .check = start_reason_check,
	  .schema = start_reason_schema },
	{ .name = "path", .type = PA_DECODE_STRING, .required = true,
	  START(path), .check = start_path_check,
	  .schema = start_path_schema },
	{ .name = "max_packets", .type = PA_DECODE_INT,
	  .min = 1, .max = PA_CAPTURE_LIMIT_MAX_PACKETS,
	  START(cap.max_packets) },
	{ .name = "max_bytes", .type = PA_DECODE_INT,
	  .min = PA_CAPTURE_MIN_MAX_BYTES, .max = PA_CAPTURE_LIMIT_MAX_BYTES,
	  START(cap.max_bytes) },
	{ .name = "snaplen", .type = PA_DECODE_INT,
	  .min = PA_CAPTURE_MIN_SNAPLEN, .max = PA_CAPTURE_MAX_SNAPLEN,
	  START(cap.snaplen) },
};

static int
decode_start(const json_t *params, struct pa_capture_params *cap,
		struct pa_rpc_error *err)
{
	struct start_params p;
	char why[PA_RPC_MSG_MAX];
	int ret;

	memset(&p, 0, sizeof(p));
	p.cap.max_packets = PA_CAPTURE_DEFAULT_MAX_PACKETS;
	p.cap.max_bytes = PA_CAPTURE_DEFAULT_MAX_BYTES;
	p.cap.snaplen = PA_CAPTURE_DEFAULT_SNAPLEN;
	ret = pa_decode_object(params, "params", start_fields,
			PA_DECODE_N(start_fields), &p, NULL, why, sizeof(why));
	if (ret != 0)
		return pa_rpc_error_errno(err, ret, "", why);
	*cap = p.cap;
	return 0;
}

/* A capture's status as the result; capture_get adds the directory. */
static int
status_result(struct pa_capture *cap, const struct pa_capture_status *st,
		bool with_dir, json_t **result, struct pa_rpc_error *err)
{
	*result = pa_capture_status_json(st);
	if (*result == NULL || (with_dir &&
	    json_object_set_new(*result, "directory",
			json_string(pa_capture_dir(cap))) != 0)) {
		json_decref(*result);
		*result = NULL;
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	}
	return 0;
}

static int
rpc_capture_start(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_capture *cap = ctx;
	struct pa_capture_params p;
	struct pa_capture_status st;
	char why[PA_RPC_MSG_MAX];
	uint64_t id;
	int ret;

	if (decode_start(params, &p, err) != 0)
		return -1;
	ret = pa_capture_start(cap, &p, &id, why, sizeof(why));
	/* the capture's reasons start with the parameter ("max_bytes: ") */
	if (ret != 0)
		return pa_rpc_error_errno(err, ret, "params.", why);
	pa_capture_get(cap, &st);
	return status_result(cap, &st, false, result, err);
}
PA_RPC_METHOD_SCHEMA(capture, "capture_start", rpc_capture_start,
	"write dropped packets to a pcap file: reason (acl, ..., any) path [max_packets max_bytes snaplen]",
	PA_RPC_PARAMS(start_fields),
	.result_json = "{\"type\": \"object\", \"description\": \"the capture's status\"}",
	.errors = PA_RPC_ERRS_EXISTS)

static int
rpc_capture_stop(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_capture *cap = ctx;
	struct pa_capture_status st;

	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	if (pa_capture_stop(cap, &st) != 0) {
		pa_capture_get(cap, &st);
		if (st.state == PA_CAPTURE_STOPPED)
			return pa_rpc_error_set(err, PA_RPC_ERR_NOT_FOUND,
				"no capture running (capture %llu ended: %s; see capture_get)",
				(unsigned long long)st.id,
				pa_capture_end_name(st.ended_by) != NULL ?
				pa_capture_end_name(st.ended_by) : "?");
		return pa_rpc_error_set(err, PA_RPC_ERR_NOT_FOUND,
			"no capture running");
	}
	return status_result(cap, &st, false, result, err);
}
PA_RPC_METHOD_SCHEMA(capture, "capture_stop", rpc_capture_stop,
	"stop the running capture: packets written, bytes, lost",
	.result_json = "{\"type\": \"object\", \"description\": \"the capture's status\"}",
	.errors = PA_RPC_ERRS_NOT_FOUND)

static int
rpc_capture_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_capture *cap = ctx;
	struct pa_capture_status st;

	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	pa_capture_get(cap, &st);
	return status_result(cap, &st, true, result, err);
}
PA_RPC_METHOD_SCHEMA(capture, "capture_get", rpc_capture_get,
	"the running capture, or the last one: state, counts, why it stopped",
	.result_json = "{\"type\": \"object\", \"description\": \"the capture's status and directory\"}")
