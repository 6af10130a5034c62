/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * JSON-RPC 2.0 dispatch: the method table and the request rules
 * (https://www.jsonrpc.org/specification), independent of the transport.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "pa_rpc.h"

RTE_LOG_REGISTER(pa_rpc_logtype, pa.rpc, INFO);

#define RPC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, pa_rpc_logtype, "pa.rpc: " fmt "\n", ##__VA_ARGS__)

/* Registered methods, most recent first. Written at constructor time or by
 * the control thread only. */
static struct pa_rpc_method *methods;
static uint64_t unknown_calls;

void
pa_rpc_register(struct pa_rpc_method *m)
{
	struct pa_rpc_method *it;

	if (m == NULL || m->name == NULL || m->handler == NULL)
		return;
	for (it = methods; it != NULL; it = it->next) {
		if (it == m)
			return;
		if (strcmp(it->name, m->name) == 0) {
			RPC_LOG(ERR, "method %s registered twice, keeping the first",
				m->name);
			return;
		}
	}
	m->next = methods;
	methods = m;
}

int
pa_rpc_bind(const char *name, void *ctx)
{
	struct pa_rpc_method *it;
	int ret = -ENOENT;

	if (name == NULL)
		return -EINVAL;
	for (it = methods; it != NULL; it = it->next)
		if (it->subsys != NULL && strcmp(it->subsys->name, name) == 0) {
			it->subsys->ctx = ctx;
			ret = 0;
		}
	return ret;
}

static struct pa_rpc_method *
find_method(const char *name)
{
	struct pa_rpc_method *it;

	if (name == NULL)
		return NULL;
	for (it = methods; it != NULL; it = it->next)
		if (strcmp(it->name, name) == 0)
			return it;
	return NULL;
}

const struct pa_rpc_method *
pa_rpc_find(const char *name)
{
	return find_method(name);
}

const struct pa_rpc_method *
pa_rpc_methods(void)
{
	return methods;
}

uint64_t
pa_rpc_unknown_method_calls(void)
{
	return unknown_calls;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *
pa_rpc_method_names(void)
{
	const struct pa_rpc_method *it;
	const char **names;
	json_t *arr = NULL;
	size_t n = 0, i;

	for (it = methods; it != NULL; it = it->next)
		n++;
	names = calloc(n + 1, sizeof(*names));
	if (names == NULL)
		return NULL;
	n = 0;
	for (it = methods; it != NULL; it = it->next)
		names[n++] = it->name;
	qsort(names, n, sizeof(*names), cmp_names);

	arr = json_array();
	if (arr == NULL)
		goto out_free;
	for (i = 0; i < n; i++) {
		if (json_array_append_new(arr, json_string(names[i])) != 0) {
			json_decref(arr);
			arr = NULL;
			goto out_free;
		}
	}
out_free:
	free(names);
	return arr;
}

int
pa_rpc_error_set(struct pa_rpc_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -1;
}

json_t *
pa_rpc_raw_result(const char *text, size_t len)
{
	json_t *o = json_object();

	if (o == NULL || json_object_set_new_nocheck(o, PA_RPC_RAW_KEY,
			json_stringn_nocheck(text, len)) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

const char *
pa_rpc_raw_text(const json_t *v, size_t *len)
{
	const json_t *t;

	if (!json_is_object(v) || json_object_size(v) != 1)
		return NULL;
	t = json_object_get(v, PA_RPC_RAW_KEY);
	if (!json_is_string(t))
		return NULL;
	if (len != NULL)
		*len = json_string_length(t);
	return json_string_value(t);
}

int
pa_rpc_no_params(const json_t *params, struct pa_rpc_error *err)
{
	if (params == NULL || json_is_null(params) ||
			(json_is_array(params) && json_array_size(params) == 0) ||
			(json_is_object(params) && json_object_size(params) == 0))
		return 0;
	return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
		"params: method takes no parameters");
}

int
pa_rpc_view(const json_t *params, json_t *(*view)(void *ctx), void *ctx,
		json_t **result, struct pa_rpc_error *err)
{
	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	*result = view(ctx);
	if (*result == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	return 0;
}

int
pa_rpc_error_errno(struct pa_rpc_error *err, int ret,
		const char *params_prefix, const char *why)
{
	switch (ret) {
	case -EEXIST:
	case -EBUSY:
		return pa_rpc_error_set(err, PA_RPC_ERR_EXISTS, "%s", why);
	case -ENOENT:
		return pa_rpc_error_set(err, PA_RPC_ERR_NOT_FOUND, "%s", why);
	case -EINVAL:
	case -ENOSPC:
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "%s%s",
			params_prefix != NULL ? params_prefix : "", why);
	default:
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR, "%s", why);
	}
}

static const char *
default_message(int code)
{
	switch (code) {
	case PA_RPC_PARSE_ERROR:
		return "parse error";
	case PA_RPC_INVALID_REQUEST:
		return "invalid request";
	case PA_RPC_METHOD_NOT_FOUND:
		return "method not found";
	case PA_RPC_INVALID_PARAMS:
		return "invalid params";
	case PA_RPC_ERR_EXISTS:
		return "already exists";
	case PA_RPC_ERR_NOT_FOUND:
		return "not found";
	case PA_RPC_ERR_BUSY:
		return "busy, try again";
	default:
		return "internal error";
	}
}

/*
 * A message cut by vsnprintf may end in the middle of a UTF-8 sequence,
 * which jansson refuses: drop the partial sequence, and fall back to the
 * code's generic text if the message is still not valid UTF-8.
 */
static json_t *
message_json(const char *msg, int code)
{
	json_t *s;
	size_t len, back;

	if (msg == NULL || msg[0] == '\0')
		return json_string(default_message(code));
	len = strnlen(msg, PA_RPC_MSG_MAX);
	s = json_stringn(msg, len);
	if (s != NULL)
		return s;
	for (back = 0; back < 4 && back < len; back++) {
		if (((unsigned char)msg[len - back - 1] & 0xc0) != 0x80) {
			s = json_stringn(msg, len - back - 1);
			break;
		}
	}
	if (s == NULL)
		s = json_string(default_message(code));
	return s;
}

/* Build {"code","message"[,"data"]}; steals @p data. */
static json_t *
error_object(int code, const char *msg, json_t *data)
{
	json_t *e;

	e = json_object();
	if (e == NULL)
		goto out_data;
	if (json_object_set_new(e, "code", json_integer(code)) != 0 ||
			json_object_set_new(e, "message",
				message_json(msg, code)) != 0)
		goto out_obj;
	if (data != NULL && json_object_set_new(e, "data", data) != 0) {
		data = NULL;
		goto out_obj;
	}
	return e;
out_obj:
	json_decref(e);
out_data:
	json_decref(data);
	return NULL;
}

/* Build a response envelope around a result or error (both stolen). */
static json_t *
response(const json_t *id, json_t *result, json_t *error)
{
	json_t *r;

	r = json_object();
	if (r == NULL)
		goto out_err;
	if (json_object_set_new(r, "jsonrpc", json_string("2.0")) != 0 ||
			json_object_set_new(r, "id", id != NULL ?
				json_deep_copy(id) : json_null()) != 0)
		goto out_err;
	if (error != NULL) {
		if (json_object_set_new(r, "error", error) != 0) {
			error = NULL;
			goto out_err;
		}
		json_decref(result);
	} else {
		if (result == NULL ||
				json_object_set_new(r, "result", result) != 0) {
			result = NULL;
			goto out_err;
		}
	}
	return r;
out_err:
	json_decref(r);
	json_decref(result);
	json_decref(error);
	return NULL;
}

static json_t *
error_response(const json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static json_t *
error_response(const json_t *id, int code, const char *fmt, ...)
{
	char msg[PA_RPC_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return response(id, NULL, error_object(code, msg, NULL));
}

static bool
valid_id(const json_t *id)
{
	return json_is_string(id) || json_is_number(id) || json_is_null(id);
}

static void
count(struct pa_rpc_counters *c, bool failed)
{
	if (c == NULL)
		return;
	c->requests++;
	if (failed)
		c->errors++;
}

/* One request object (or a non-object batch element). */
static json_t *
handle_one(const json_t *req, struct pa_rpc_counters *c)
{
	struct pa_rpc_method *m;
	const json_t *id, *jsonrpc, *method, *params;
	struct pa_rpc_error err;
	json_t *result = NULL;
	const char *name;
	bool notification;
	int rc;

	if (!json_is_object(req)) {
		count(c, true);
		return error_response(NULL, PA_RPC_INVALID_REQUEST,
			"invalid request: not an object");
	}
	id = json_object_get(req, "id");
	notification = id == NULL;
	if (id != NULL && !valid_id(id)) {
		count(c, true);
		return error_response(NULL, PA_RPC_INVALID_REQUEST,
			"invalid request: id must be a string, a number or null");
	}
	/* An invalid request is answered even without an id (id null). */
	jsonrpc = json_object_get(req, "jsonrpc");
	if (!json_is_string(jsonrpc) ||
			strcmp(json_string_value(jsonrpc), "2.0") != 0 ||
			json_string_length(jsonrpc) != 3) {
		count(c, true);
		return error_response(id, PA_RPC_INVALID_REQUEST,
			"invalid request: jsonrpc must be \"2.0\"");
	}
	method = json_object_get(req, "method");
	if (!json_is_string(method)) {
		count(c, true);
		return error_response(id, PA_RPC_INVALID_REQUEST,
			"invalid request: method must be a string");
	}
	params = json_object_get(req, "params");
	if (params != NULL && !json_is_array(params) &&
			!json_is_object(params)) {
		count(c, true);
		return error_response(id, PA_RPC_INVALID_REQUEST,
			"invalid request: params must be an array or an object");
	}

	name = json_string_value(method);
	m = NULL;
	if (strlen(name) == json_string_length(method))
		m = find_method(name);
	if (m == NULL) {
		count(c, true);
		unknown_calls++;
		if (notification)
			return NULL;
		return error_response(id, PA_RPC_METHOD_NOT_FOUND,
			"method not found: %s", name);
	}

	memset(&err, 0, sizeof(err));
	m->calls++;
	if (m->subsys != NULL && m->subsys->ctx == NULL)
		rc = pa_rpc_error_set(&err, PA_RPC_INTERNAL_ERROR, "%s",
			m->subsys->unbound);
	else
		rc = m->handler(m->subsys != NULL ? m->subsys->ctx : NULL,
			params, &result, &err);
	if (rc == 0 && result != NULL) {
		json_decref(err.data);
		count(c, false);
		if (notification) {
			json_decref(result);
			return NULL;
		}
		return response(id, result, NULL);
	}

	count(c, true);
	m->errors++;
	json_decref(result);
	if (rc == 0) {
		json_decref(err.data);
		RPC_LOG(ERR, "method %s returned success without a result",
			m->name);
		if (notification)
			return NULL;
		return error_response(id, PA_RPC_INTERNAL_ERROR,
			"internal error: method %s returned no result",
			m->name);
	}
	if (notification) {
		json_decref(err.data);
		return NULL;
	}
	if (err.code == 0) {
		json_decref(err.data);
		RPC_LOG(ERR, "method %s failed without an error code", m->name);
		return response(id, NULL, error_object(PA_RPC_INTERNAL_ERROR,
			err.message[0] != '\0' ? err.message : "internal error",
			NULL));
	}
	err.message[sizeof(err.message) - 1] = '\0';
	return response(id, NULL, error_object(err.code, err.message,
		err.data));
}

json_t *
pa_rpc_handle_call(const json_t *request, struct pa_rpc_counters *c)
{
	return handle_one(request, c);
}

json_t *
pa_rpc_handle_count(const json_t *request, struct pa_rpc_counters *c)
{
	json_t *out, *r;
	size_t i;

	if (!json_is_array(request))
		return handle_one(request, c);

	if (json_array_size(request) == 0) {
		count(c, true);
		return error_response(NULL, PA_RPC_INVALID_REQUEST,
			"invalid request: empty batch");
	}
	out = json_array();
	for (i = 0; i < json_array_size(request); i++) {
		r = handle_one(json_array_get(request, i), c);
		if (r == NULL)
			continue;
		/* keep running the batch's calls even without memory */
		if (out == NULL) {
			json_decref(r);
			continue;
		}
		if (json_array_append_new(out, r) != 0) {	/* r stolen */
			json_decref(out);
			out = NULL;
		}
	}
	if (out == NULL)
		return error_response(NULL, PA_RPC_INTERNAL_ERROR,
			"internal error: out of memory");
	if (json_array_size(out) == 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

json_t *
pa_rpc_handle(const json_t *request)
{
	return pa_rpc_handle_count(request, NULL);
}

static json_t *
method_names_view(void *ctx)
{
	return pa_rpc_method_names();
}

static int
rpc_get_methods(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return pa_rpc_view(params, method_names_view, NULL, result, err);
}

PA_RPC_REGISTER_SCHEMA("rpc_get_methods", rpc_get_methods,
	"list the methods this daemon serves",
	.result_json = "{\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"uniqueItems\": true}")
