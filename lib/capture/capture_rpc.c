/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapters of the capture: capture_start, capture_stop,
 * capture_get (docs/rpc.md). Parameters are decoded strictly; messages
 * name the parameter ("params.max_bytes: ..."). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pa_capture.h"
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

/* A string without embedded NULs, or NULL. */
static const char *
plain_string(const json_t *v)
{
	const char *s;

	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	return strlen(s) == json_string_length(v) ? s : NULL;
}

static int
get_u64(const json_t *v, const char *key, uint64_t lo, uint64_t hi,
		uint64_t dflt, uint64_t *out, struct pa_rpc_error *err)
{
	json_int_t i;

	if (v == NULL) {
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v) || (i = json_integer_value(v)) < 0 ||
	    (uint64_t)i < lo || (uint64_t)i > hi)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.%s: expected an integer %llu..%llu", key,
			(unsigned long long)lo, (unsigned long long)hi);
	*out = (uint64_t)i;
	return 0;
}

/*
 * {"reason": "acl" | ... | "any", "path": "NAME", "max_packets"?: N,
 *  "max_bytes"?: N, "snaplen"?: N}
 */
static int
decode_start(const json_t *params, struct pa_capture_params *p,
		struct pa_rpc_error *err)
{
	json_t *reason = NULL, *path = NULL, *maxp = NULL, *maxb = NULL;
	json_t *snap = NULL;
	char why[PA_RPC_MSG_MAX], names[160];
	const char *s;
	json_error_t jerr;
	uint64_t snaplen = 0;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected {\"reason\": \"...\", \"path\": \"...\", \"max_packets\"?: N, \"max_bytes\"?: N, \"snaplen\"?: N}");
	if (json_unpack_ex((json_t *)params, &jerr, JSON_STRICT,
			"{s?o, s?o, s?o, s?o, s?o}", "reason", &reason,
			"path", &path, "max_packets", &maxp, "max_bytes", &maxb,
			"snaplen", &snap) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: %s (known: reason, path, max_packets, max_bytes, snaplen)",
			jerr.text);
	reason_list(names, sizeof(names));
	if (reason == NULL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.reason: required (%s)", names);
	s = plain_string(reason);
	if (s == NULL || pa_capture_parse_reason(s, &p->reasons) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.reason: expected a drop reason: %s", names);
	if (path == NULL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.path: required (a file name in the capture directory)");
	s = plain_string(path);
	if (s == NULL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.path: expected a file name (a string)");
	if (pa_capture_check_name(s, why, sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.path: %s", why);
	snprintf(p->name, sizeof(p->name), "%s", s);
	if (get_u64(maxp, "max_packets", 1, PA_CAPTURE_LIMIT_MAX_PACKETS,
			PA_CAPTURE_DEFAULT_MAX_PACKETS, &p->max_packets, err) != 0 ||
	    get_u64(maxb, "max_bytes", PA_CAPTURE_MIN_MAX_BYTES,
			PA_CAPTURE_LIMIT_MAX_BYTES, PA_CAPTURE_DEFAULT_MAX_BYTES,
			&p->max_bytes, err) != 0 ||
	    get_u64(snap, "snaplen", PA_CAPTURE_MIN_SNAPLEN,
			PA_CAPTURE_MAX_SNAPLEN, PA_CAPTURE_DEFAULT_SNAPLEN,
			&snaplen, err) != 0)
		return -1;
	p->snaplen = (uint32_t)snaplen;
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
PA_RPC_METHOD(capture, "capture_start", rpc_capture_start,
	"write dropped packets to a pcap file: reason (acl, ..., any) path [max_packets max_bytes snaplen]")

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
PA_RPC_METHOD(capture, "capture_stop", rpc_capture_stop,
	"stop the running capture: packets written, bytes, lost")

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
PA_RPC_METHOD(capture, "capture_get", rpc_capture_get,
	"the running capture, or the last one: state, counts, why it stopped")
