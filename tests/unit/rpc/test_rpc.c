/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/rpc: the JSON-RPC 2.0 rules of pa_rpc_handle() and the
 * Unix socket server end to end (framing, limits, locking).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <jansson.h>
#include <rte_errno.h>

#include "pa_rpc.h"
#include "pa_test_main.h"

#define IO_TIMEOUT_MS	5000

#define ECHO_REQ(id) "{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\"," \
	"\"params\":[" #id "],\"id\":" #id "}"

/* ---- test methods ---- */

static int notify_count;	/* bumped by test_count, read by the tests */

static int
test_echo(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	*result = params != NULL ? json_deep_copy(params) :
		json_string("no params");
	return 0;
}
PA_RPC_REGISTER("test_echo", test_echo, "echo the params")

static int
test_count(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	int n = __atomic_add_fetch(&notify_count, 1, __ATOMIC_SEQ_CST);

	*result = json_integer(n);
	return 0;
}
PA_RPC_REGISTER("test_count", test_count, "count calls")

static int
test_fail(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	err->data = json_pack("{s:i}", "widget", 7);
	return pa_rpc_error_set(err, PA_RPC_ERR_NOT_FOUND,
		"widget %d not found", 7);
}
PA_RPC_REGISTER_SCHEMA("test_fail", test_fail, "always fails",
	.result_json = "{\"const\": true}", .errors = PA_RPC_ERRS_BUSY)

static int
test_no_result(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return 0;
}
PA_RPC_REGISTER("test_no_result", test_no_result, "buggy: no result")

static int
test_fail_nocode(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return -1;
}
PA_RPC_REGISTER("test_fail_nocode", test_fail_nocode, "buggy: no code")

static int
test_long_message(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	char big[600];
	size_t i;

	/* "é" is two bytes: the 256-byte message cuts one in half */
	for (i = 0; i + 2 < sizeof(big); i += 2) {
		big[i] = (char)0xc3;
		big[i + 1] = (char)0xa9;
	}
	big[i] = '\0';
	return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "x%s", big);
}
PA_RPC_REGISTER("test_long_message", test_long_message, "long error")

static int
test_big(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	json_int_t n = 0;
	char *s;

	if (json_unpack((json_t *)params, "{s:I}", "n", &n) != 0 || n < 0 ||
			n > (64 << 20))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.n: expected 0..64M");
	s = malloc((size_t)n + 1);
	if (s == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR, "oom");
	memset(s, 'x', (size_t)n);
	s[n] = '\0';
	*result = json_string(s);
	free(s);
	return 0;
}
PA_RPC_REGISTER("test_big", test_big, "a string of n bytes")

/* A result rendered by the handler (pa_rpc_raw_result()). */
static int
test_raw(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	static const char txt[] = "[{\"a\":1,\"b\":[true,null,\"x\"]},2.5]";

	*result = pa_rpc_raw_result(txt, sizeof(txt) - 1);
	return *result != NULL ? 0 : pa_rpc_error_set(err,
		PA_RPC_INTERNAL_ERROR, "oom");
}
PA_RPC_REGISTER("test_raw", test_raw, "a result rendered as text")

static int sleep_count;	/* bumped by test_sleep */

static int
test_sleep(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct timespec ts = { 0, 1000 * 1000 };	/* 1 ms */

	nanosleep(&ts, NULL);
	*result = json_integer(__atomic_add_fetch(&sleep_count, 1,
		__ATOMIC_SEQ_CST));
	return 0;
}
PA_RPC_REGISTER("test_sleep", test_sleep, "sleep 1 ms, count calls")

/* A second registration of an existing name is ignored. */
static int
test_echo_dup(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	*result = json_string("duplicate");
	return 0;
}
PA_RPC_REGISTER("test_echo", test_echo_dup, "duplicate name")

/* A subsystem: its methods get the bound context, or are refused. */
PA_RPC_SUBSYSTEM(widgets, "test_widgets", "widgets not running");

static int
test_widget_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	*result = json_integer(*(const int *)ctx);
	return 0;
}
PA_RPC_METHOD(widgets, "test_widget_get", test_widget_get,
	"the bound widget count")

/* ---- helpers for pa_rpc_handle ---- */

static json_t *
call(const char *text)
{
	json_error_t jerr;
	json_t *req, *resp;

	req = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	ck_assert_msg(req != NULL, "bad test JSON %s: %s", text, jerr.text);
	resp = pa_rpc_handle(req);
	json_decref(req);
	return resp;
}

/* Check the envelope; return the error code (0 for a result). */
static int
envelope(const json_t *r, const char *id_json)
{
	const json_t *err, *id;
	char *s;

	ck_assert_ptr_nonnull(r);
	ck_assert(json_is_object(r));
	ck_assert_str_eq(json_string_value(json_object_get(r, "jsonrpc")),
		"2.0");
	id = json_object_get(r, "id");
	ck_assert_ptr_nonnull(id);
	s = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
	ck_assert_str_eq(s, id_json);
	free(s);
	err = json_object_get(r, "error");
	if (err == NULL) {
		ck_assert_ptr_nonnull(json_object_get(r, "result"));
		ck_assert_int_eq(json_object_size(r), 3);
		return 0;
	}
	ck_assert_ptr_null(json_object_get(r, "result"));
	ck_assert(json_is_integer(json_object_get(err, "code")));
	ck_assert(json_is_string(json_object_get(err, "message")));
	return (int)json_integer_value(json_object_get(err, "code"));
}

static const char *
err_message(const json_t *r)
{
	return json_string_value(json_object_get(json_object_get(r, "error"),
		"message"));
}

static void
expect_error(const char *text, const char *id_json, int code)
{
	json_t *r = call(text);

	ck_assert_msg(r != NULL, "no response to %s", text);
	ck_assert_int_eq(envelope(r, id_json), code);
	json_decref(r);
}

/* ---- pa_rpc_handle ---- */

START_TEST(request_gets_result_with_its_id)
{
	static const char *const ids[] = { "1", "\"abc\"", "null", "2.5", "-7" };
	char text[256];
	unsigned int i;
	json_t *r;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		snprintf(text, sizeof(text),
			"{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
			"\"params\":{\"a\":[1,2]},\"id\":%s}", ids[i]);
		r = call(text);
		ck_assert_int_eq(envelope(r, ids[i]), 0);
		ck_assert_int_eq(json_integer_value(json_array_get(
			json_object_get(json_object_get(r, "result"), "a"), 1)),
			2);
		json_decref(r);
	}
}
END_TEST

START_TEST(params_may_be_array_or_absent)
{
	json_t *r;

	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"params\":[1,\"x\"],\"id\":3}");
	ck_assert_int_eq(envelope(r, "3"), 0);
	ck_assert_int_eq(json_array_size(json_object_get(r, "result")), 2);
	json_decref(r);

	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\",\"id\":4}");
	ck_assert_int_eq(envelope(r, "4"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "result")),
		"no params");
	json_decref(r);
}
END_TEST

START_TEST(missing_or_wrong_jsonrpc_is_invalid_request_with_id_echoed)
{
	expect_error("{\"method\":\"test_echo\",\"id\":5}", "5",
		PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"1.0\",\"method\":\"test_echo\",\"id\":5}",
		"5", PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":2.0,\"method\":\"test_echo\",\"id\":\"a\"}",
		"\"a\"", PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\\u0000\",\"method\":\"test_echo\","
		"\"id\":5}", "5", PA_RPC_INVALID_REQUEST);
}
END_TEST

START_TEST(method_not_a_string_is_invalid_request)
{
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":1,\"id\":6}", "6",
		PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":6}", "6",
		PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":null,\"id\":6}", "6",
		PA_RPC_INVALID_REQUEST);
}
END_TEST

START_TEST(scalar_params_are_invalid_request)
{
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"params\":5,\"id\":7}", "7", PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"params\":\"x\",\"id\":7}", "7", PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"params\":true,\"id\":7}", "7", PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"params\":null,\"id\":7}", "7", PA_RPC_INVALID_REQUEST);
}
END_TEST

START_TEST(id_of_wrong_type_is_invalid_request_with_null_id)
{
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"id\":{}}", "null", PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"id\":[1]}", "null", PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"id\":true}", "null", PA_RPC_INVALID_REQUEST);
}
END_TEST

START_TEST(non_object_request_is_invalid_request)
{
	expect_error("5", "null", PA_RPC_INVALID_REQUEST);
	expect_error("\"rpc_get_methods\"", "null", PA_RPC_INVALID_REQUEST);
	expect_error("null", "null", PA_RPC_INVALID_REQUEST);
}
END_TEST

START_TEST(invalid_request_without_id_is_still_answered)
{
	/* the spec's {"foo": "boo"} example: answered with id null */
	expect_error("{\"foo\":\"boo\"}", "null", PA_RPC_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"params\":1}", "null", PA_RPC_INVALID_REQUEST);
}
END_TEST

START_TEST(notification_runs_and_gets_no_response)
{
	int before = __atomic_load_n(&notify_count, __ATOMIC_SEQ_CST);
	json_t *r;

	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"}");
	ck_assert_ptr_null(r);
	ck_assert_int_eq(__atomic_load_n(&notify_count, __ATOMIC_SEQ_CST),
		before + 1);
}
END_TEST

START_TEST(failed_notification_gets_no_response)
{
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"nope\"}"));
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"test_fail\"}"));
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\","
		"\"method\":\"test_no_result\"}"));
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\","
		"\"method\":\"rpc_get_methods\",\"params\":[1]}"));
}
END_TEST

START_TEST(unknown_method_is_method_not_found_naming_it)
{
	json_t *r;

	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"no_such\",\"id\":8}");
	ck_assert_int_eq(envelope(r, "8"), PA_RPC_METHOD_NOT_FOUND);
	ck_assert_str_eq(err_message(r), "method not found: no_such");
	json_decref(r);
}
END_TEST

START_TEST(method_name_with_nul_is_not_found)
{
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\\u0000x\","
		"\"id\":9}", "9", PA_RPC_METHOD_NOT_FOUND);
}
END_TEST

START_TEST(handler_error_carries_code_message_and_data)
{
	json_t *r, *e;

	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"test_fail\",\"id\":10}");
	ck_assert_int_eq(envelope(r, "10"), PA_RPC_ERR_NOT_FOUND);
	e = json_object_get(r, "error");
	ck_assert_str_eq(err_message(r), "widget 7 not found");
	ck_assert_int_eq(json_integer_value(json_object_get(
		json_object_get(e, "data"), "widget")), 7);
	ck_assert_int_eq(json_object_size(e), 3);
	json_decref(r);
}
END_TEST

START_TEST(subsystem_method_gets_bound_context_and_is_refused_unbound)
{
	const char *req = "{\"jsonrpc\":\"2.0\",\"method\":\"test_widget_get\","
		"\"id\":13}";
	const struct pa_rpc_method *m = pa_rpc_find("test_widget_get");
	int widgets = 42;
	uint64_t errors;
	json_t *r;

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pa_rpc_bind("test_widgets", &widgets), 0);
	r = call(req);
	ck_assert_int_eq(envelope(r, "13"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "result")), 42);
	json_decref(r);

	ck_assert_int_eq(pa_rpc_bind("test_widgets", NULL), 0);
	errors = m->errors;
	r = call(req);
	ck_assert_int_eq(envelope(r, "13"), PA_RPC_INTERNAL_ERROR);
	ck_assert_str_eq(err_message(r), "widgets not running");
	json_decref(r);
	/* counted like any failed call */
	ck_assert_uint_eq(m->errors, errors + 1);
	ck_assert_int_eq(pa_rpc_bind("no_such_subsystem", &widgets), -ENOENT);
}
END_TEST

START_TEST(errno_map_gives_one_code_per_errno)
{
	static const struct { int ret; int code; const char *msg; } cases[] = {
		{ -EEXIST, PA_RPC_ERR_EXISTS, "why" },
		{ -EBUSY, PA_RPC_ERR_EXISTS, "why" },
		{ -ENOENT, PA_RPC_ERR_NOT_FOUND, "why" },
		{ -EINVAL, PA_RPC_INVALID_PARAMS, "params.why" },
		{ -ENOSPC, PA_RPC_INVALID_PARAMS, "params.why" },
		{ -ENOMEM, PA_RPC_INTERNAL_ERROR, "why" },
		{ -EIO, PA_RPC_INTERNAL_ERROR, "why" },
	};
	struct pa_rpc_error e;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&e, 0, sizeof(e));
		ck_assert_int_eq(pa_rpc_error_errno(&e, cases[i].ret,
			"params.", "why"), -1);
		ck_assert_int_eq(e.code, cases[i].code);
		ck_assert_str_eq(e.message, cases[i].msg);
	}
	memset(&e, 0, sizeof(e));
	pa_rpc_error_errno(&e, -EINVAL, NULL, "why");
	ck_assert_str_eq(e.message, "why");
}
END_TEST

static unsigned int views_built;

static json_t *
counted_view(void *ctx)
{
	views_built++;
	return ctx != NULL ? json_string(ctx) : NULL;
}

START_TEST(view_method_refuses_params_before_building_and_reports_no_memory)
{
	struct pa_rpc_error e;
	json_t *r = NULL, *p = json_pack("{s:i}", "x", 1);

	views_built = 0;
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(pa_rpc_view(p, counted_view, "v", &r, &e), -1);
	ck_assert_int_eq(e.code, PA_RPC_INVALID_PARAMS);
	ck_assert_uint_eq(views_built, 0);
	ck_assert_int_eq(pa_rpc_view(NULL, counted_view, "v", &r, &e), 0);
	ck_assert_str_eq(json_string_value(r), "v");
	json_decref(r);
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(pa_rpc_view(json_null(), counted_view, NULL, &r,
		&e), -1);
	ck_assert_int_eq(e.code, PA_RPC_INTERNAL_ERROR);
	ck_assert_str_eq(e.message, "out of memory");
	ck_assert_uint_eq(views_built, 2);
	json_decref(p);
}
END_TEST

START_TEST(success_without_result_is_internal_error)
{
	expect_error("{\"jsonrpc\":\"2.0\",\"method\":\"test_no_result\","
		"\"id\":11}", "11", PA_RPC_INTERNAL_ERROR);
}
END_TEST

START_TEST(failure_without_code_is_internal_error)
{
	json_t *r;

	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"test_fail_nocode\","
		"\"id\":12}");
	ck_assert_int_eq(envelope(r, "12"), PA_RPC_INTERNAL_ERROR);
	ck_assert_int_eq(json_object_size(json_object_get(r, "error")), 2);
	json_decref(r);
}
END_TEST

START_TEST(truncated_utf8_message_stays_valid)
{
	const char *m;
	json_t *r;

	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"test_long_message\","
		"\"id\":13}");
	ck_assert_int_eq(envelope(r, "13"), PA_RPC_INVALID_PARAMS);
	m = err_message(r);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_ge(strlen(m), 200);
	ck_assert_int_lt(strlen(m), PA_RPC_MSG_MAX);
	json_decref(r);
}
END_TEST

START_TEST(empty_batch_is_one_invalid_request_object)
{
	json_t *r = call("[]");

	ck_assert(json_is_object(r));
	ck_assert_int_eq(envelope(r, "null"), PA_RPC_INVALID_REQUEST);
	json_decref(r);
}
END_TEST

START_TEST(batch_answers_each_call_in_order_skipping_notifications)
{
	json_t *r;

	r = call("[{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"params\":[1],\"id\":\"a\"},"
		"{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"},"
		"1,"
		"{\"foo\":\"boo\"},"
		"{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":\"b\"},"
		"[{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\",\"id\":1}],"
		"{\"jsonrpc\":\"2.0\",\"method\":\"test_fail\",\"id\":\"c\"}]");
	ck_assert(json_is_array(r));
	ck_assert_int_eq(json_array_size(r), 6);
	ck_assert_int_eq(envelope(json_array_get(r, 0), "\"a\""), 0);
	ck_assert_int_eq(envelope(json_array_get(r, 1), "null"),
		PA_RPC_INVALID_REQUEST);
	ck_assert_int_eq(envelope(json_array_get(r, 2), "null"),
		PA_RPC_INVALID_REQUEST);
	ck_assert_int_eq(envelope(json_array_get(r, 3), "\"b\""),
		PA_RPC_METHOD_NOT_FOUND);
	ck_assert_int_eq(envelope(json_array_get(r, 4), "null"),
		PA_RPC_INVALID_REQUEST);
	ck_assert_int_eq(envelope(json_array_get(r, 5), "\"c\""),
		PA_RPC_ERR_NOT_FOUND);
	json_decref(r);
}
END_TEST

START_TEST(batch_of_non_objects_gives_one_error_each)
{
	json_t *r = call("[1,2,3]");
	size_t i;

	ck_assert(json_is_array(r));
	ck_assert_int_eq(json_array_size(r), 3);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(envelope(json_array_get(r, i), "null"),
			PA_RPC_INVALID_REQUEST);
	json_decref(r);
}
END_TEST

START_TEST(batch_of_notifications_gets_no_response)
{
	int before = __atomic_load_n(&notify_count, __ATOMIC_SEQ_CST);

	ck_assert_ptr_null(call("[{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"},"
		"{\"jsonrpc\":\"2.0\",\"method\":\"test_count\",\"params\":[]},"
		"{\"jsonrpc\":\"2.0\",\"method\":\"nope\"}]"));
	ck_assert_int_eq(__atomic_load_n(&notify_count, __ATOMIC_SEQ_CST),
		before + 2);
}
END_TEST

START_TEST(rpc_get_methods_returns_sorted_names)
{
	json_t *r, *list;
	size_t i;
	bool seen_self = false, seen_test = false;

	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_methods\",\"id\":1}");
	ck_assert_int_eq(envelope(r, "1"), 0);
	list = json_object_get(r, "result");
	ck_assert(json_is_array(list));
	ck_assert_int_ge(json_array_size(list), 8);
	for (i = 0; i < json_array_size(list); i++) {
		const char *n = json_string_value(json_array_get(list, i));

		ck_assert_ptr_nonnull(n);
		if (i > 0)
			ck_assert_int_lt(strcmp(json_string_value(
				json_array_get(list, i - 1)), n), 0);
		seen_self |= strcmp(n, "rpc_get_methods") == 0;
		seen_test |= strcmp(n, "test_echo") == 0;
	}
	ck_assert(seen_self && seen_test);
	json_decref(r);

	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_methods\","
		"\"params\":{},\"id\":2}");
	ck_assert_int_eq(envelope(r, "2"), 0);
	json_decref(r);
}
END_TEST

START_TEST(rpc_get_methods_with_params_is_invalid_params)
{
	json_t *r;

	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"rpc_get_methods\","
		"\"params\":[1],\"id\":1}");
	ck_assert_int_eq(envelope(r, "1"), PA_RPC_INVALID_PARAMS);
	ck_assert_str_eq(err_message(r), "params: method takes no parameters");
	json_decref(r);
}
END_TEST

START_TEST(no_params_accepts_only_empty_values)
{
	struct pa_rpc_error err;
	json_t *v;

	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(pa_rpc_no_params(NULL, &err), 0);
	v = json_null();
	ck_assert_int_eq(pa_rpc_no_params(v, &err), 0);
	v = json_array();
	ck_assert_int_eq(pa_rpc_no_params(v, &err), 0);
	json_decref(v);
	v = json_object();
	ck_assert_int_eq(pa_rpc_no_params(v, &err), 0);
	json_decref(v);
	ck_assert_int_eq(err.code, 0);

	v = json_pack("{s:i}", "a", 1);
	ck_assert_int_eq(pa_rpc_no_params(v, &err), -1);
	ck_assert_int_eq(err.code, PA_RPC_INVALID_PARAMS);
	ck_assert_str_eq(err.message, "params: method takes no parameters");
	json_decref(v);
	v = json_pack("[i]", 1);
	ck_assert_int_eq(pa_rpc_no_params(v, &err), -1);
	json_decref(v);
	v = json_string("x");
	ck_assert_int_eq(pa_rpc_no_params(v, &err), -1);
	json_decref(v);
}
END_TEST

START_TEST(error_set_formats_truncates_and_returns_minus_one)
{
	struct pa_rpc_error err;
	char big[400];

	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(pa_rpc_error_set(&err, PA_RPC_ERR_EXISTS,
		"rule %d exists", 10), -1);
	ck_assert_int_eq(err.code, PA_RPC_ERR_EXISTS);
	ck_assert_str_eq(err.message, "rule 10 exists");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pa_rpc_error_set(&err, PA_RPC_ERR_BUSY, "%s", big);
	ck_assert_int_eq(strlen(err.message), PA_RPC_MSG_MAX - 1);
}
END_TEST

START_TEST(find_knows_registered_methods_and_first_registration_wins)
{
	const struct pa_rpc_method *m;
	json_t *r;

	ck_assert_ptr_null(pa_rpc_find("no_such_method"));
	m = pa_rpc_find("rpc_get_methods");
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(m->help);
	m = pa_rpc_find("test_echo");
	ck_assert_ptr_nonnull(m);
	r = call("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"params\":[\"orig\"],\"id\":1}");
	ck_assert_str_eq(json_string_value(json_array_get(
		json_object_get(r, "result"), 0)), "orig");
	json_decref(r);
}
END_TEST

START_TEST(handle_call_treats_an_array_as_a_non_object_call)
{
	struct pa_rpc_counters c = { 0 };
	json_t *req, *r;

	req = json_loads("[" ECHO_REQ(1) "]", 0, NULL);
	ck_assert_ptr_nonnull(req);
	r = pa_rpc_handle_call(req, &c);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r,
		"error"), "code")), PA_RPC_INVALID_REQUEST);
	ck_assert(json_is_null(json_object_get(r, "id")));
	json_decref(r);
	json_decref(req);
	req = json_loads(ECHO_REQ(2), 0, NULL);
	r = pa_rpc_handle_call(req, &c);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 2);
	ck_assert_ptr_nonnull(json_object_get(r, "result"));
	json_decref(r);
	json_decref(req);
	req = json_loads("{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\"}",
		0, NULL);
	ck_assert_ptr_null(pa_rpc_handle_call(req, &c));
	json_decref(req);
	ck_assert_uint_eq(c.requests, 3);
	ck_assert_uint_eq(c.errors, 1);
}
END_TEST

START_TEST(handle_count_counts_calls_and_errors)
{
	struct pa_rpc_counters c;
	json_t *req, *r;

	memset(&c, 0, sizeof(c));
	req = json_loads("[{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\",\"id\":1},"
		"{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"},"
		"{\"jsonrpc\":\"2.0\",\"method\":\"nope\"},"
		"{\"jsonrpc\":\"2.0\",\"method\":\"test_fail\",\"id\":2},7]",
		0, NULL);
	ck_assert_ptr_nonnull(req);
	r = pa_rpc_handle_count(req, &c);
	ck_assert_int_eq(json_array_size(r), 3);
	ck_assert_int_eq(c.requests, 5);
	ck_assert_int_eq(c.errors, 3);
	json_decref(r);
	json_decref(req);
}
END_TEST

/* ---- socket server helpers ---- */

struct srv {
	struct pa_rpc_server *s;
	pthread_t th;
	int stop;
	bool threaded;
	char dir[64];
	char path[100];
};

struct client {
	int fd;
	char *buf;
	size_t len;
	size_t cap;
};

static void *
srv_loop(void *arg)
{
	struct srv *t = arg;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE))
		pa_rpc_server_poll(t->s, 5);
	return NULL;
}

static void
make_dir(struct srv *t)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/pa_rpc_test.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/rpc.sock", t->dir);
}

/* Start a server on a fresh path; polled by a thread if @p threaded. */
static void
srv_start(struct srv *t, struct pa_rpc_server_opts *o, bool threaded)
{
	struct pa_rpc_server_opts def = { 0 };
	char err[256];

	memset(t, 0, sizeof(*t));
	make_dir(t);
	if (o == NULL)
		o = &def;
	o->path = t->path;
	t->s = pa_rpc_server_create(o, err, sizeof(err));
	ck_assert_msg(t->s != NULL, "create: %s", err);
	t->threaded = threaded;
	if (threaded)
		ck_assert_int_eq(pthread_create(&t->th, NULL, srv_loop, t), 0);
}

static void
srv_stop(struct srv *t, struct pa_rpc_counters *c)
{
	if (t->threaded) {
		__atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
		pthread_join(t->th, NULL);
	}
	if (c != NULL)
		pa_rpc_server_counters(t->s, c);
	pa_rpc_server_destroy(t->s);
	ck_assert_int_eq(access(t->path, F_OK), -1);
	rmdir(t->dir);
}

static int
client_connect(struct client *c, const char *path)
{
	struct sockaddr_un sa;

	memset(c, 0, sizeof(*c));
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(c->fd, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		return -e;
	}
	return 0;
}

static void
client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

static void
client_sendn(struct client *c, const char *data, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = send(c->fd, data, len, MSG_NOSIGNAL);
		ck_assert_msg(n > 0, "send: %s", strerror(errno));
		data += n;
		len -= (size_t)n;
	}
}

static void
client_send(struct client *c, const char *data)
{
	client_sendn(c, data, strlen(data));
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Poll the server from this thread (unthreaded tests) for up to @p ms. */
static void
pump(struct srv *t, int ms)
{
	int64_t end = now_ms() + ms;

	do {
		pa_rpc_server_poll(t->s, 1);
	} while (now_ms() < end);
}

/*
 * Next response line, parsed; NULL on EOF, reset or timeout. With @p t
 * unthreaded, the server is polled between reads.
 */
static json_t *
client_read(struct client *c, struct srv *t)
{
	int64_t end = now_ms() + IO_TIMEOUT_MS;
	struct pollfd pfd;
	json_error_t jerr;
	json_t *v;
	char *nl;
	ssize_t n;

	for (;;) {
		nl = c->len > 0 ? memchr(c->buf, '\n', c->len) : NULL;
		if (nl != NULL) {
			size_t l = (size_t)(nl - c->buf);

			v = json_loadb(c->buf, l, 0, &jerr);
			ck_assert_msg(v != NULL, "bad response line: %s",
				jerr.text);
			memmove(c->buf, nl + 1, c->len - l - 1);
			c->len -= l + 1;
			return v;
		}
		if (now_ms() >= end)
			return NULL;
		if (t != NULL && !t->threaded)
			pa_rpc_server_poll(t->s, 0);
		pfd.fd = c->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, t != NULL && !t->threaded ? 1 : 50) <= 0)
			continue;
		if (c->cap - c->len < 65536) {
			c->cap = c->cap * 2 + 65536;
			c->buf = realloc(c->buf, c->cap);
			ck_assert_ptr_nonnull(c->buf);
		}
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (n <= 0)
			return NULL;
		c->len += (size_t)n;
	}
}

/* True when the server closed the connection (after any unread lines). */
static bool
client_sees_eof(struct client *c, struct srv *t)
{
	int64_t end = now_ms() + IO_TIMEOUT_MS;
	struct pollfd pfd;
	char b[4096];
	ssize_t n;

	while (now_ms() < end) {
		if (t != NULL && !t->threaded)
			pa_rpc_server_poll(t->s, 0);
		pfd.fd = c->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		n = recv(c->fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		if (n > 0)
			return false;
	}
	return false;
}

static json_t *
roundtrip(struct client *c, struct srv *t, const char *req)
{
	client_send(c, req);
	return client_read(c, t);
}

static json_int_t
id_int(const json_t *r)
{
	ck_assert_ptr_nonnull(r);
	return json_integer_value(json_object_get(r, "id"));
}

static int
error_code(const json_t *r)
{
	ck_assert_ptr_nonnull(r);
	return (int)json_integer_value(json_object_get(
		json_object_get(r, "error"), "code"));
}


/* ---- server end to end ---- */

START_TEST(server_answers_two_requests_in_one_write_in_order)
{
	struct client c;
	struct srv t;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	client_send(&c, ECHO_REQ(1) ECHO_REQ(2));
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 1);
	json_decref(r);
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 2);
	json_decref(r);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_answers_request_split_byte_by_byte)
{
	const char *req = ECHO_REQ(42) "\n";
	struct client c;
	struct srv t;
	json_t *r;
	size_t i;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	for (i = 0; req[i] != '\0'; i++) {
		client_sendn(&c, req + i, 1);
		if (i % 4 == 0)
			usleep(500);
	}
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 42);
	ck_assert_int_eq(json_integer_value(json_array_get(
		json_object_get(r, "result"), 0)), 42);
	json_decref(r);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_skips_whitespace_and_newlines_between_requests)
{
	struct client c;
	struct srv t;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	client_send(&c, "\n\n \t\r\n" ECHO_REQ(1) "\n\n   " ECHO_REQ(2)
		"\r\n\t" "{\n \"jsonrpc\" : \"2.0\",\n\"method\":\"test_echo\",\n"
		"\"id\": 3\n}\n");
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 1);
	json_decref(r);
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 2);
	json_decref(r);
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 3);
	json_decref(r);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_answers_batch_with_one_array_line)
{
	struct client c;
	struct srv t;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	r = roundtrip(&c, &t, "[" ECHO_REQ(1) ","
		"{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"},"
		ECHO_REQ(2) "]");
	ck_assert(json_is_array(r));
	ck_assert_int_eq(json_array_size(r), 2);
	ck_assert_int_eq(id_int(json_array_get(r, 0)), 1);
	ck_assert_int_eq(id_int(json_array_get(r, 1)), 2);
	json_decref(r);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_writes_nothing_for_a_notification)
{
	struct client c;
	struct srv t;
	int before = __atomic_load_n(&notify_count, __ATOMIC_SEQ_CST);
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"}");
	client_send(&c, "[{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"}]");
	/* the first bytes to come back answer the request after them */
	r = roundtrip(&c, &t, ECHO_REQ(7));
	ck_assert_int_eq(id_int(r), 7);
	json_decref(r);
	ck_assert_int_eq(__atomic_load_n(&notify_count, __ATOMIC_SEQ_CST),
		before + 2);
	ck_assert_uint_eq(c.len, 0);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_reports_parse_error_then_serves_next_request)
{
	struct pa_rpc_counters cnt;
	struct client c;
	struct srv t;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	client_send(&c, "{\"jsonrpc\": bad, \"x\": [{}]}\n" "[1,,\"\xff\"]"
		ECHO_REQ(5));
	r = client_read(&c, &t);
	ck_assert_int_eq(error_code(r), PA_RPC_PARSE_ERROR);
	ck_assert(json_is_null(json_object_get(r, "id")));
	json_decref(r);
	r = client_read(&c, &t);
	ck_assert_int_eq(error_code(r), PA_RPC_PARSE_ERROR);
	json_decref(r);
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 5);
	ck_assert_ptr_nonnull(json_object_get(r, "result"));
	json_decref(r);
	client_close(&c);
	srv_stop(&t, &cnt);
	ck_assert_uint_eq(cnt.requests, 3);
	ck_assert_uint_eq(cnt.errors, 2);
	ck_assert_uint_eq(cnt.connections, 1);
}
END_TEST

START_TEST(server_ignores_brackets_inside_strings)
{
	struct client c;
	struct srv t;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	r = roundtrip(&c, &t, "{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\","
		"\"params\":[\"}]}]{[\", \"\\\"}\\\\\", \"\\\\\"],\"id\":9}");
	ck_assert_int_eq(id_int(r), 9);
	ck_assert_str_eq(json_string_value(json_array_get(
		json_object_get(r, "result"), 0)), "}]}]{[");
	ck_assert_str_eq(json_string_value(json_array_get(
		json_object_get(r, "result"), 1)), "\"}\\");
	ck_assert_str_eq(json_string_value(json_array_get(
		json_object_get(r, "result"), 2)), "\\");
	json_decref(r);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_closes_after_bare_scalar)
{
	struct client c;
	struct srv t;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	client_send(&c, "  42 " ECHO_REQ(1));
	r = client_read(&c, &t);
	ck_assert_int_eq(error_code(r), PA_RPC_PARSE_ERROR);
	ck_assert(json_is_null(json_object_get(r, "id")));
	json_decref(r);
	ck_assert(client_sees_eof(&c, &t));
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_closes_on_mismatched_bracket)
{
	struct client c;
	struct srv t;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"params\":[}" ECHO_REQ(1));
	r = client_read(&c, &t);
	ck_assert_int_eq(error_code(r), PA_RPC_PARSE_ERROR);
	ck_assert_ptr_nonnull(strstr(err_message(r), "mismatched"));
	json_decref(r);
	ck_assert(client_sees_eof(&c, &t));
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_closes_on_oversized_request)
{
	struct pa_rpc_server_opts o = { .max_request = 1024 };
	struct client c;
	struct srv t;
	char req[1100];
	json_t *r;
	int n;

	srv_start(&t, &o, true);
	/* exactly the limit is fine */
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	n = snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"method\":"
		"\"test_echo\",\"id\":1,\"params\":[\"%*s\"]}", 1024 - 59, "");
	ck_assert_int_eq(n, 1024);
	r = roundtrip(&c, &t, req);
	ck_assert_int_eq(id_int(r), 1);
	ck_assert_ptr_nonnull(json_object_get(r, "result"));
	json_decref(r);
	/* one byte more, still incomplete: refused and closed */
	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"method\":"
		"\"test_echo\",\"id\":2,\"params\":[\"%*s", 1000, "");
	client_send(&c, req);
	r = client_read(&c, &t);
	ck_assert_int_eq(error_code(r), PA_RPC_INVALID_REQUEST);
	ck_assert_str_eq(err_message(r), "request too large (limit 1024 bytes)");
	json_decref(r);
	ck_assert(client_sees_eof(&c, &t));
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_closes_on_nesting_deeper_than_limit)
{
	struct pa_rpc_server_opts o = { .max_depth = 8 };
	char req[256], open[16], close_[16];
	struct client c;
	struct srv t;
	json_t *r;

	srv_start(&t, &o, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	/* the request object is level 1: 7 arrays make 8 levels */
	memset(open, '[', 7);
	open[7] = '\0';
	memset(close_, ']', 7);
	close_[7] = '\0';
	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"method\":"
		"\"test_echo\",\"id\":1,\"params\":%s%s}", open, close_);
	r = roundtrip(&c, &t, req);
	ck_assert_int_eq(id_int(r), 1);
	ck_assert_ptr_nonnull(json_object_get(r, "result"));
	json_decref(r);

	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"method\":"
		"\"test_echo\",\"id\":2,\"params\":[%s%s]}", open, close_);
	r = roundtrip(&c, &t, req);
	ck_assert_int_eq(error_code(r), PA_RPC_PARSE_ERROR);
	ck_assert_ptr_nonnull(strstr(err_message(r), "nesting too deep"));
	json_decref(r);
	ck_assert(client_sees_eof(&c, &t));
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_drops_client_that_hangs_up_mid_request)
{
	struct pa_rpc_counters cnt;
	struct client a, b, d;
	struct srv t;
	int before = __atomic_load_n(&notify_count, __ATOMIC_SEQ_CST);
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&a, t.path), 0);
	ck_assert_int_eq(client_connect(&b, t.path), 0);
	r = roundtrip(&b, &t, ECHO_REQ(1));
	ck_assert_int_eq(id_int(r), 1);
	json_decref(r);

	client_send(&a, "{\"jsonrpc\":\"2.0\",\"method\":\"test_count\",\"id\":1");
	usleep(20000);
	client_close(&a);
	/* a request sent just before hanging up is not answered, harmlessly */
	ck_assert_int_eq(client_connect(&d, t.path), 0);
	client_send(&d, ECHO_REQ(3) ECHO_REQ(4) "[" ECHO_REQ(5));
	client_close(&d);

	r = roundtrip(&b, &t, ECHO_REQ(2));
	ck_assert_int_eq(id_int(r), 2);
	json_decref(r);
	client_close(&b);
	srv_stop(&t, &cnt);
	ck_assert_int_eq(__atomic_load_n(&notify_count, __ATOMIC_SEQ_CST),
		before);
	ck_assert_uint_eq(cnt.connections, 3);
}
END_TEST

START_TEST(server_answers_client_that_half_closes)
{
	struct client c;
	struct srv t;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	client_send(&c, ECHO_REQ(1) ECHO_REQ(2) "{\"partial\":");
	shutdown(c.fd, SHUT_WR);
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 1);
	json_decref(r);
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 2);
	json_decref(r);
	ck_assert(client_sees_eof(&c, &t));
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

/* ---- pa_rpc_server_feed: the framing without a socket ---- */

/* Split @p text into its response lines (an array of decoded values). */
static json_t *
feed_lines(const char *text, size_t len)
{
	json_t *a = json_array(), *v;
	const char *p = text, *nl;

	ck_assert_ptr_nonnull(a);
	while (p != NULL && p < text + len) {
		nl = memchr(p, '\n', (size_t)(text + len - p));
		ck_assert_msg(nl != NULL, "response not ended by a newline");
		v = json_loadb(p, (size_t)(nl - p), 0, NULL);
		ck_assert_msg(v != NULL, "response line is not JSON");
		json_array_append_new(a, v);
		p = nl + 1;
	}
	return a;
}

START_TEST(server_feed_answers_like_a_connection_and_drops_partial_tail)
{
	const char in[] = "\n " ECHO_REQ(1) "{\"jsonrpc\": bad}"
		"[" ECHO_REQ(2) ",{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"}]"
		"{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"}" ECHO_REQ(3)
		"{\"jsonrpc\":\"2.0\",\"id\":4,";
	struct pa_rpc_counters cnt = { 0 };
	size_t len = 99;
	char *out = NULL;
	json_t *r;

	ck_assert_int_eq(pa_rpc_server_feed(NULL, in, sizeof(in) - 1, &out,
		&len, &cnt), 0);
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(strlen(out), len);
	r = feed_lines(out, len);
	ck_assert_int_eq(json_array_size(r), 4);
	ck_assert_int_eq(id_int(json_array_get(r, 0)), 1);
	ck_assert_int_eq(error_code(json_array_get(r, 1)), PA_RPC_PARSE_ERROR);
	ck_assert(json_is_array(json_array_get(r, 2)));
	ck_assert_int_eq(json_array_size(json_array_get(r, 2)), 1);
	ck_assert_int_eq(id_int(json_array_get(json_array_get(r, 2), 0)), 2);
	ck_assert_int_eq(id_int(json_array_get(r, 3)), 3);
	json_decref(r);
	free(out);
	/* 1, parse error, 2 + notification, notification, 3 */
	ck_assert_uint_eq(cnt.requests, 6);
	ck_assert_uint_eq(cnt.errors, 1);
}
END_TEST

START_TEST(server_feed_stops_at_protocol_errors_and_limits)
{
	struct pa_rpc_server_opts o = { .max_request = 64, .max_depth = 4 };
	char big[256];
	size_t len;
	char *out;
	json_t *r;

	/* bare scalar: answered, the rest is not read */
	ck_assert_int_eq(pa_rpc_server_feed(NULL, " 42 " ECHO_REQ(1),
		strlen(" 42 " ECHO_REQ(1)), &out, &len, NULL), 0);
	r = feed_lines(out, len);
	ck_assert_int_eq(json_array_size(r), 1);
	ck_assert_int_eq(error_code(json_array_get(r, 0)), PA_RPC_PARSE_ERROR);
	json_decref(r);
	free(out);
	/* mismatched bracket */
	ck_assert_int_eq(pa_rpc_server_feed(NULL, "[}" ECHO_REQ(1),
		strlen("[}" ECHO_REQ(1)), &out, &len, NULL), 0);
	r = feed_lines(out, len);
	ck_assert_int_eq(json_array_size(r), 1);
	ck_assert_ptr_nonnull(strstr(err_message(json_array_get(r, 0)),
		"mismatched"));
	json_decref(r);
	free(out);
	/* deeper than max_depth */
	ck_assert_int_eq(pa_rpc_server_feed(&o, "[[[[[]]]]]" ECHO_REQ(1),
		strlen("[[[[[]]]]]" ECHO_REQ(1)), &out, &len, NULL), 0);
	r = feed_lines(out, len);
	ck_assert_int_eq(json_array_size(r), 1);
	ck_assert_ptr_nonnull(strstr(err_message(json_array_get(r, 0)),
		"too deep"));
	json_decref(r);
	free(out);
	/* longer than max_request */
	snprintf(big, sizeof(big), "[\"%150s\"]" ECHO_REQ(1), "");
	ck_assert_int_eq(pa_rpc_server_feed(&o, big, strlen(big), &out, &len,
		NULL), 0);
	r = feed_lines(out, len);
	ck_assert_int_eq(json_array_size(r), 1);
	ck_assert_int_eq(error_code(json_array_get(r, 0)),
		PA_RPC_INVALID_REQUEST);
	json_decref(r);
	free(out);
	/* nothing to answer: no buffer */
	ck_assert_int_eq(pa_rpc_server_feed(NULL, " \n{", 3, &out, &len,
		NULL), 0);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(pa_rpc_server_feed(NULL, NULL, 0, NULL, NULL, NULL), 0);
}
END_TEST

START_TEST(server_closes_connections_over_max_conns)
{
	struct pa_rpc_server_opts o = { .max_conns = 2 };
	struct pa_rpc_counters cnt;
	struct client a, b, c, d;
	struct srv t;
	json_t *r;

	srv_start(&t, &o, true);
	ck_assert_int_eq(client_connect(&a, t.path), 0);
	r = roundtrip(&a, &t, ECHO_REQ(1));
	ck_assert_int_eq(id_int(r), 1);
	json_decref(r);
	ck_assert_int_eq(client_connect(&b, t.path), 0);
	r = roundtrip(&b, &t, ECHO_REQ(2));
	ck_assert_int_eq(id_int(r), 2);
	json_decref(r);

	ck_assert_int_eq(client_connect(&c, t.path), 0);
	ck_assert(client_sees_eof(&c, &t));
	client_close(&c);

	/* a freed slot is usable again */
	client_close(&a);
	usleep(50000);
	ck_assert_int_eq(client_connect(&d, t.path), 0);
	r = roundtrip(&d, &t, ECHO_REQ(3));
	ck_assert_int_eq(id_int(r), 3);
	json_decref(r);
	client_close(&d);
	client_close(&b);
	srv_stop(&t, &cnt);
	ck_assert_uint_eq(cnt.rejected_connections, 1);
	ck_assert_uint_eq(cnt.connections, 3);
}
END_TEST

START_TEST(second_server_on_same_path_fails_with_eaddrinuse)
{
	struct pa_rpc_server_opts o = { 0 };
	struct pa_rpc_server *s2;
	struct client c;
	struct srv t;
	char err[256];
	json_t *r;

	srv_start(&t, NULL, true);
	o.path = t.path;
	errno = 0;
	s2 = pa_rpc_server_create(&o, err, sizeof(err));
	ck_assert_ptr_null(s2);
	ck_assert_int_eq(errno, EADDRINUSE);
	ck_assert_int_eq(rte_errno, EADDRINUSE);
	ck_assert_msg(strstr(err, "is in use by another pktaccel") != NULL,
		"message: %s", err);
	ck_assert_ptr_nonnull(strstr(err, ".lock held"));
	/* the first one still serves */
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	r = roundtrip(&c, &t, ECHO_REQ(1));
	ck_assert_int_eq(id_int(r), 1);
	json_decref(r);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(stale_socket_without_lock_holder_is_replaced)
{
	struct pa_rpc_server_opts o = { 0 };
	struct sockaddr_un sa;
	struct client c;
	struct srv t;
	char err[256];
	json_t *r;
	int fd;

	memset(&t, 0, sizeof(t));
	make_dir(&t);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", t.path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);	/* the file stays: a dead daemon's socket */
	ck_assert_int_eq(client_connect(&c, t.path), -ECONNREFUSED);

	o.path = t.path;
	t.s = pa_rpc_server_create(&o, err, sizeof(err));
	ck_assert_msg(t.s != NULL, "create: %s", err);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	client_send(&c, ECHO_REQ(1));
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 1);
	json_decref(r);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(non_socket_file_at_path_is_not_replaced)
{
	struct pa_rpc_server_opts o = { 0 };
	struct srv t;
	char err[256];
	int fd;

	memset(&t, 0, sizeof(t));
	make_dir(&t);
	fd = open(t.path, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	o.path = t.path;
	ck_assert_ptr_null(pa_rpc_server_create(&o, err, sizeof(err)));
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_ptr_nonnull(strstr(err, "not a socket"));
	ck_assert_int_eq(access(t.path, F_OK), 0);
	unlink(t.path);
	rmdir(t.dir);
}
END_TEST

START_TEST(socket_is_created_mode_0660_or_as_asked)
{
	struct pa_rpc_server_opts o = { .mode = 0600 };
	struct stat st;
	struct srv t;

	srv_start(&t, NULL, false);
	ck_assert_int_eq(stat(t.path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0660);
	srv_stop(&t, NULL);

	srv_start(&t, &o, false);
	ck_assert_int_eq(stat(t.path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(missing_socket_directory_is_created_0750)
{
	struct pa_rpc_server_opts o = { 0 };
	struct pa_rpc_server *s;
	char dir[64], sub[128], path[192], err[256];
	struct stat st;
	mode_t old;

	snprintf(dir, sizeof(dir), "/tmp/pa_rpc_test.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/run/pktaccel", dir);
	snprintf(path, sizeof(path), "%s/pktaccel.sock", sub);
	o.path = path;
	old = umask(022);
	s = pa_rpc_server_create(&o, err, sizeof(err));
	umask(old);
	ck_assert_msg(s != NULL, "create: %s", err);
	ck_assert_int_eq(stat(sub, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0750);
	pa_rpc_server_destroy(s);
	ck_assert_int_eq(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/pktaccel.sock.lock", sub);
	ck_assert_int_eq(access(path, F_OK), -1);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/run", dir);
	rmdir(sub);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(too_long_socket_path_fails_with_enametoolong)
{
	struct pa_rpc_server_opts o = { 0 };
	char path[200], err[256];

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[1] = 't';
	path[2] = 'm';
	path[3] = 'p';
	path[4] = '/';
	path[sizeof(path) - 1] = '\0';
	o.path = path;
	ck_assert_ptr_null(pa_rpc_server_create(&o, err, sizeof(err)));
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ck_assert_ptr_nonnull(strstr(err, "too long"));
}
END_TEST

START_TEST(server_fd_signals_pending_work_and_budget_spreads_it)
{
	enum { N = 300 };
	struct pollfd pfd, spfd;
	struct client c, other;
	struct srv t;
	char *burst;
	size_t len, one;
	json_t *r;
	int i;

	srv_start(&t, NULL, false);
	pfd.fd = pa_rpc_server_fd(t.s);
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);

	ck_assert_int_eq(client_connect(&c, t.path), 0);
	ck_assert_int_eq(poll(&pfd, 1, 1000), 1);	/* accept pending */
	pa_rpc_server_poll(t.s, 0);
	ck_assert_int_eq(client_connect(&other, t.path), 0);
	pa_rpc_server_poll(t.s, 0);

	one = strlen(ECHO_REQ(1));
	burst = malloc(one * N + 1);
	ck_assert_ptr_nonnull(burst);
	for (i = 0, len = 0; i < N; i++)
		len += (size_t)snprintf(burst + len, one * N + 1 - len,
			"%s", ECHO_REQ(1));
	client_sendn(&c, burst, len);
	free(burst);
	client_send(&other, ECHO_REQ(2));

	ck_assert_int_eq(poll(&pfd, 1, 1000), 1);
	pa_rpc_server_poll(t.s, 0);
	/* more than one poll's budget: the fd stays readable */
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	/* the other client is served meanwhile: answered while the first
	 * one's backlog (N calls, REQ_BUDGET a poll) is still pending. As a
	 * rule in that same poll; on a loaded machine a connection's time
	 * budget (TIME_BUDGET_NS) can run out before its first call, which
	 * then waits for the next poll: poll again while the backlog lasts. */
	spfd = pfd;
	pfd.fd = other.fd;
	for (i = 0; poll(&pfd, 1, 0) == 0; i++) {
		ck_assert_msg(poll(&spfd, 1, 0) == 1, "the first client's "
			"backlog was drained before the other was answered "
			"(%d more polls)", i);
		pa_rpc_server_poll(t.s, 0);
	}
	r = client_read(&other, NULL);
	ck_assert_int_eq(id_int(r), 2);
	json_decref(r);

	for (i = 0; i < N; i++) {
		r = client_read(&c, &t);
		ck_assert_msg(r != NULL, "response %d missing", i);
		ck_assert_int_eq(id_int(r), 1);
		json_decref(r);
	}
	pfd.fd = pa_rpc_server_fd(t.s);
	pa_rpc_server_poll(t.s, 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	client_close(&c);
	client_close(&other);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(slow_reader_does_not_block_server_or_others)
{
	enum { N = 12 };
	struct client slow, fast;
	struct srv t;
	char req[128];
	json_t *r;
	int i;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&slow, t.path), 0);
	ck_assert_int_eq(client_connect(&fast, t.path), 0);
	/* 12 responses of 1 MiB each, not read for now */
	for (i = 0; i < N; i++) {
		snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"method\":"
			"\"test_big\",\"params\":{\"n\":1048576},\"id\":%d}", i);
		client_send(&slow, req);
	}
	usleep(100000);
	r = roundtrip(&fast, &t, ECHO_REQ(99));
	ck_assert_int_eq(id_int(r), 99);
	json_decref(r);
	for (i = 0; i < N; i++) {
		r = client_read(&slow, &t);
		ck_assert_msg(r != NULL, "response %d missing", i);
		ck_assert_int_eq(id_int(r), i);
		ck_assert_int_eq(json_string_length(json_object_get(r,
			"result")), 1048576);
		json_decref(r);
	}
	client_close(&slow);
	client_close(&fast);
	srv_stop(&t, NULL);
}
END_TEST

/*
 * Read and discard until the server closes; true on EOF or reset within
 * @p ms. @p bytes (if not NULL) gets the number of bytes read.
 */
static bool
client_drain_to_eof(struct client *c, struct srv *t, int ms, size_t *bytes)
{
	int64_t end = now_ms() + ms;
	struct pollfd pfd;
	static char b[65536];
	ssize_t n;

	if (bytes != NULL)
		*bytes = c->len;
	while (now_ms() < end) {
		if (t != NULL && !t->threaded)
			pa_rpc_server_poll(t->s, 0);
		pfd.fd = c->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, t != NULL && !t->threaded ? 1 : 20) <= 0)
			continue;
		n = recv(c->fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		if (n > 0 && bytes != NULL)
			*bytes += (size_t)n;
	}
	return false;
}

/* client_read() with a few times its patience (slow machines, valgrind). */
static json_t *
client_read_long(struct client *c, struct srv *t)
{
	json_t *r = NULL;
	int i;

	for (i = 0; i < 4 && r == NULL; i++)
		r = client_read(c, t);
	return r;
}

START_TEST(server_closes_partial_request_after_idle_timeout)
{
	struct pa_rpc_server_opts o = { .idle_timeout_ms = 200 };
	struct pa_rpc_counters cnt;
	struct client a, b;
	struct srv t;
	int64_t t0, dt;
	json_t *r;

	srv_start(&t, &o, true);
	ck_assert_int_eq(client_connect(&a, t.path), 0);
	ck_assert_int_eq(client_connect(&b, t.path), 0);
	t0 = now_ms();
	client_send(&a, "{\"jsonrpc\":\"2.0\",\"method\":\"test_echo\",");
	/* others are served meanwhile */
	r = roundtrip(&b, &t, ECHO_REQ(1));
	ck_assert_int_eq(id_int(r), 1);
	json_decref(r);
	r = client_read(&a, &t);
	dt = now_ms() - t0;
	ck_assert_int_eq(error_code(r), PA_RPC_INVALID_REQUEST);
	ck_assert_ptr_nonnull(strstr(err_message(r), "incomplete"));
	ck_assert(json_is_null(json_object_get(r, "id")));
	json_decref(r);
	ck_assert(client_sees_eof(&a, &t));
	ck_assert_msg(dt >= 190 && dt < 2000, "closed after %lld ms",
		(long long)dt);
	client_close(&a);
	r = roundtrip(&b, &t, ECHO_REQ(2));
	ck_assert_int_eq(id_int(r), 2);
	json_decref(r);
	client_close(&b);
	srv_stop(&t, &cnt);
	ck_assert_uint_eq(cnt.timed_out_connections, 1);
}
END_TEST

START_TEST(server_keeps_idle_connection_without_partial_request)
{
	struct pa_rpc_server_opts o = { .idle_timeout_ms = 100 };
	struct pa_rpc_counters cnt;
	struct client a, w;
	struct srv t;
	json_t *r;

	srv_start(&t, &o, true);
	ck_assert_int_eq(client_connect(&a, t.path), 0);
	ck_assert_int_eq(client_connect(&w, t.path), 0);
	r = roundtrip(&a, &t, ECHO_REQ(1));
	ck_assert_int_eq(id_int(r), 1);
	json_decref(r);
	client_send(&w, " \n\t ");	/* whitespace only: nothing pending */
	usleep(400 * 1000);
	r = roundtrip(&a, &t, ECHO_REQ(2));
	ck_assert_int_eq(id_int(r), 2);
	json_decref(r);
	r = roundtrip(&w, &t, ECHO_REQ(3));
	ck_assert_int_eq(id_int(r), 3);
	json_decref(r);
	/* a request trickled slower than nothing-at-all is still answered,
	 * as long as no gap reaches the timeout */
	client_send(&a, "{\"jsonrpc\":\"2.0\",");
	usleep(60 * 1000);
	client_send(&a, "\"method\":\"test_echo\",");
	usleep(60 * 1000);
	r = roundtrip(&a, &t, "\"params\":[4],\"id\":4}");
	ck_assert_int_eq(id_int(r), 4);
	json_decref(r);
	client_close(&a);
	client_close(&w);
	srv_stop(&t, &cnt);
	ck_assert_uint_eq(cnt.timed_out_connections, 0);
}
END_TEST

START_TEST(idle_deadline_makes_server_fd_readable)
{
	struct pa_rpc_server_opts o = { .idle_timeout_ms = 150 };
	struct pollfd pfd;
	struct client c;
	struct srv t;
	int64_t t0, t_sent, woke;
	json_t *r;

	srv_start(&t, &o, false);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	pump(&t, 20);
	/* the connection's last activity is after this: the deadline
	 * cannot wake the fd sooner than idle_timeout_ms after it, however
	 * slow the machine */
	t_sent = now_ms();
	client_send(&c, "[" ECHO_REQ(1));
	pump(&t, 20);
	pfd.fd = pa_rpc_server_fd(t.s);
	pfd.events = POLLIN;
	t0 = now_ms();
	/* nothing to do until the deadline; then the fd wakes the caller */
	ck_assert_int_eq(poll(&pfd, 1, 3000), 1);
	woke = now_ms();
	ck_assert_msg(woke - t_sent >= 150 && woke - t0 < 1000,
		"woke after %lld ms (%lld after the send)",
		(long long)(woke - t0), (long long)(woke - t_sent));
	pa_rpc_server_poll(t.s, 0);
	r = client_read(&c, NULL);
	ck_assert_int_eq(error_code(r), PA_RPC_INVALID_REQUEST);
	json_decref(r);
	ck_assert(client_sees_eof(&c, NULL));
	/* the timer is not left firing */
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_closes_client_that_never_reads_after_idle_timeout)
{
	enum { N = 64 };
	struct pa_rpc_server_opts o = { .idle_timeout_ms = 300 };
	struct pa_rpc_counters cnt;
	struct client slow, fast;
	struct srv t;
	char req[128];
	size_t got;
	int64_t t0, t_first;
	json_t *r;
	int i, sent = 0;

	srv_start(&t, &o, true);
	ck_assert_int_eq(client_connect(&slow, t.path), 0);
	ck_assert_int_eq(client_connect(&fast, t.path), 0);
	/* the slow client's last activity is after this: its time out
	 * cannot come sooner than idle_timeout_ms after it, however slow
	 * the machine (a bound by events, not by the steps' durations) */
	t_first = now_ms();
	/* 64 responses of 1 MiB asked for, none read: the server holds
	 * about 4 MiB, stops reading, then gives up on the client */
	for (i = 0; i < N; i++) {
		snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"method\":"
			"\"test_big\",\"params\":{\"n\":1048576},\"id\":%d}", i);
		if (send(slow.fd, req, strlen(req), MSG_NOSIGNAL |
				MSG_DONTWAIT) != (ssize_t)strlen(req))
			break;
		sent++;
	}
	ck_assert_int_eq(sent, N);	/* small requests: all fit */
	usleep(100 * 1000);
	r = roundtrip(&fast, &t, ECHO_REQ(99));
	ck_assert_int_eq(id_int(r), 99);
	json_decref(r);
	t0 = now_ms();
	do {
		usleep(20 * 1000);
		pa_rpc_server_counters(t.s, &cnt);	/* racy, good enough */
	} while (cnt.timed_out_connections == 0 &&
			now_ms() - t0 < 2 * IO_TIMEOUT_MS);
	ck_assert_uint_eq(cnt.timed_out_connections, 1);
	ck_assert_int_ge(now_ms() - t_first, 300);
	ck_assert_uint_lt(cnt.requests, 20);	/* most never ran */
	ck_assert(client_drain_to_eof(&slow, &t, IO_TIMEOUT_MS, &got));
	ck_assert_uint_lt(got, 12u << 20);
	client_close(&slow);
	r = roundtrip(&fast, &t, ECHO_REQ(100));
	ck_assert_int_eq(id_int(r), 100);
	json_decref(r);
	client_close(&fast);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(batch_runs_across_polls_and_others_are_served_between)
{
	enum { N = 200 };
	struct client a, b;
	struct srv t;
	char *batch;
	size_t len, cap;
	json_t *r;
	int i, at_b;

	__atomic_store_n(&sleep_count, 0, __ATOMIC_SEQ_CST);
	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&a, t.path), 0);
	ck_assert_int_eq(client_connect(&b, t.path), 0);
	cap = (size_t)N * 80 + 16;
	batch = malloc(cap);
	ck_assert_ptr_nonnull(batch);
	len = (size_t)snprintf(batch, cap, "[");
	for (i = 0; i < N; i++)
		len += (size_t)snprintf(batch + len, cap - len,
			"%s{\"jsonrpc\":\"2.0\",\"method\":\"test_sleep\",\"id\":%d}",
			i == 0 ? "" : ",", i);
	len += (size_t)snprintf(batch + len, cap - len, "]");
	client_sendn(&a, batch, len);
	free(batch);
	while (__atomic_load_n(&sleep_count, __ATOMIC_SEQ_CST) == 0)
		usleep(1000);
	/* 200 calls of 1 ms: b's call is answered between two of them */
	r = roundtrip(&b, &t, ECHO_REQ(1));
	at_b = __atomic_load_n(&sleep_count, __ATOMIC_SEQ_CST);
	ck_assert_int_eq(id_int(r), 1);
	json_decref(r);
	ck_assert_msg(at_b < N, "b answered only after the whole batch");
	/* a still gets one line: the whole batch, in order */
	r = client_read_long(&a, &t);
	ck_assert_ptr_nonnull(r);
	ck_assert(json_is_array(r));
	ck_assert_int_eq(json_array_size(r), N);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(id_int(json_array_get(r, i)), i);
	json_decref(r);
	client_close(&a);
	client_close(&b);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(batch_output_is_bounded_for_a_client_that_does_not_read)
{
	enum { N = 24 };
	struct pa_rpc_counters cnt;
	struct client c;
	struct srv t;
	char *batch;
	size_t len, cap;
	json_t *r;
	int i;

	srv_start(&t, NULL, false);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	pump(&t, 20);
	cap = (size_t)N * 100 + 16;
	batch = malloc(cap);
	ck_assert_ptr_nonnull(batch);
	len = (size_t)snprintf(batch, cap, "[");
	for (i = 0; i < N; i++)
		len += (size_t)snprintf(batch + len, cap - len,
			"%s{\"jsonrpc\":\"2.0\",\"method\":\"test_big\","
			"\"params\":{\"n\":1048576},\"id\":%d}",
			i == 0 ? "" : ",", i);
	len += (size_t)snprintf(batch + len, cap - len, "]");
	client_sendn(&c, batch, len);
	free(batch);
	/* not read: the batch stops once ~4 MiB wait (+ socket buffers) */
	pump(&t, 200);
	pa_rpc_server_counters(t.s, &cnt);
	ck_assert_uint_lt(cnt.requests, 10);
	/* read: the rest runs, one line holds all 24 answers */
	r = client_read_long(&c, &t);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(json_array_size(r), N);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(json_string_length(json_object_get(
			json_array_get(r, i), "result")), 1048576);
	json_decref(r);
	client_close(&c);
	srv_stop(&t, &cnt);
	ck_assert_uint_eq(cnt.requests, N);
}
END_TEST

START_TEST(batch_of_notifications_mixed_with_calls_streams_valid_json)
{
	struct client c;
	struct srv t;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	/* notifications first, last and between: no stray ',' or '[' */
	r = roundtrip(&c, &t, "[{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"},"
		ECHO_REQ(1) ",{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"},"
		"[1]," ECHO_REQ(2) ",{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"}]"
		"[{\"jsonrpc\":\"2.0\",\"method\":\"test_count\"}]" ECHO_REQ(3));
	ck_assert(json_is_array(r));
	ck_assert_int_eq(json_array_size(r), 3);
	ck_assert_int_eq(id_int(json_array_get(r, 0)), 1);
	ck_assert_int_eq(error_code(json_array_get(r, 1)),
		PA_RPC_INVALID_REQUEST);
	ck_assert_int_eq(id_int(json_array_get(r, 2)), 2);
	json_decref(r);
	/* the all-notification batch wrote nothing: next is 3 */
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 3);
	json_decref(r);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

/* "{...,"params":[X,X,...]}" with @p n copies of @p item (malloc'd). */
static char *
dense_request(const char *method, int id, const char *item, size_t n,
		size_t *len)
{
	size_t il = strlen(item), cap = n * (il + 1) + 128, l;
	char *b = malloc(cap);
	size_t i;

	ck_assert_ptr_nonnull(b);
	l = (size_t)snprintf(b, cap, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\","
		"\"id\":%d,\"params\":[", method, id);
	for (i = 0; i < n; i++) {
		if (i > 0)
			b[l++] = ',';
		memcpy(b + l, item, il);
		l += il;
	}
	l += (size_t)snprintf(b + l, cap - l, "]}");
	*len = l;
	return b;
}

START_TEST(big_request_is_parsed_aside_while_others_are_served)
{
	struct pollfd pfd;
	struct client a, b;
	struct srv t;
	size_t len;
	char *req;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&a, t.path), 0);
	ck_assert_int_eq(client_connect(&b, t.path), 0);
	/* 400k empty objects: a parse of some 100s of ms */
	req = dense_request("test_count", 1, "{}", 400000, &len);
	client_sendn(&a, req, len);
	free(req);
	usleep(20 * 1000);
	r = roundtrip(&b, &t, ECHO_REQ(2));
	ck_assert_int_eq(id_int(r), 2);
	json_decref(r);
	/* b was answered while a's request was still being parsed */
	pfd.fd = a.fd;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	r = client_read_long(&a, &t);
	ck_assert_int_eq(id_int(r), 1);
	ck_assert(json_is_integer(json_object_get(r, "result")));
	json_decref(r);
	/* and a's connection goes on */
	r = roundtrip(&a, &t, ECHO_REQ(3));
	ck_assert_int_eq(id_int(r), 3);
	json_decref(r);
	client_close(&a);
	client_close(&b);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(raw_result_is_written_as_the_result)
{
	struct client c;
	struct srv t;
	json_t *r, *want;

	want = json_loads("[{\"a\":1,\"b\":[true,null,\"x\"]},2.5]", 0,
		NULL);
	ck_assert_ptr_nonnull(want);
	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	r = roundtrip(&c, &t, "{\"jsonrpc\":\"2.0\",\"method\":\"test_raw\","
		"\"id\":\"x1\"}");
	ck_assert_str_eq(json_string_value(json_object_get(r, "id")), "x1");
	ck_assert_str_eq(json_string_value(json_object_get(r, "jsonrpc")),
		"2.0");
	ck_assert(json_equal(json_object_get(r, "result"), want));
	ck_assert_uint_eq(json_object_size(r), 3);
	json_decref(r);
	/* in a batch, beside a plain result */
	r = roundtrip(&c, &t, "[{\"jsonrpc\":\"2.0\",\"method\":\"test_raw\","
		"\"id\":1}," ECHO_REQ(2) "]");
	ck_assert(json_is_array(r));
	ck_assert_uint_eq(json_array_size(r), 2);
	ck_assert(json_equal(json_object_get(json_array_get(r, 0), "result"),
		want));
	ck_assert_int_eq(id_int(json_array_get(r, 1)), 2);
	json_decref(r);
	json_decref(want);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(big_batch_and_big_invalid_value_go_through_the_parser)
{
	struct client c;
	struct srv t;
	char *req, *p;
	size_t len, i;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	/* a batch of 2000 calls (> 8 KiB), then a small request */
	len = 2000 * 64 + 16;
	req = malloc(len);
	ck_assert_ptr_nonnull(req);
	p = req;
	*p++ = '[';
	for (i = 0; i < 2000; i++)
		p += snprintf(p, len - (size_t)(p - req), "%s" ECHO_REQ(7),
			i > 0 ? "," : "");
	*p++ = ']';
	p += snprintf(p, len - (size_t)(p - req), "%s", ECHO_REQ(8));
	ck_assert((size_t)(p - req) < len);
	client_sendn(&c, req, (size_t)(p - req));
	free(req);
	r = client_read_long(&c, &t);
	ck_assert(json_is_array(r));
	ck_assert_int_eq(json_array_size(r), 2000);
	json_decref(r);
	r = client_read(&c, &t);
	ck_assert_int_eq(id_int(r), 8);
	json_decref(r);
	/* a long value that does not parse: -32700, the stream goes on */
	req = dense_request("test_count", 9, "nul", 5000, &len);
	client_sendn(&c, req, len);
	free(req);
	r = client_read_long(&c, &t);
	ck_assert_int_eq(error_code(r), PA_RPC_PARSE_ERROR);
	json_decref(r);
	r = roundtrip(&c, &t, ECHO_REQ(10));
	ck_assert_int_eq(id_int(r), 10);
	json_decref(r);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(client_leaving_during_a_parse_or_destroy_during_one_is_harmless)
{
	struct client a, b;
	struct srv t;
	size_t len;
	char *req;
	json_t *r;

	srv_start(&t, NULL, true);
	req = dense_request("test_count", 1, "{}", 300000, &len);
	ck_assert_int_eq(client_connect(&a, t.path), 0);
	client_sendn(&a, req, len);
	usleep(30 * 1000);
	client_close(&a);
	ck_assert_int_eq(client_connect(&b, t.path), 0);
	r = roundtrip(&b, &t, ECHO_REQ(2));
	ck_assert_int_eq(id_int(r), 2);
	json_decref(r);
	/* and one still being parsed when the server goes */
	client_sendn(&b, req, len);
	free(req);
	usleep(30 * 1000);
	srv_stop(&t, NULL);
	client_close(&b);
}
END_TEST

/* "[req,req,...]" of @p n copies of @p req (malloc'd). */
static char *
batch_of(const char *req, size_t n, size_t *len)
{
	size_t rl = strlen(req), l = 0, i;
	char *b = malloc(n * (rl + 1) + 2);

	ck_assert_ptr_nonnull(b);
	b[l++] = '[';
	for (i = 0; i < n; i++) {
		if (i > 0)
			b[l++] = ',';
		memcpy(b + l, req, rl);
		l += rl;
	}
	b[l++] = ']';
	*len = l;
	return b;
}

START_TEST(third_long_batch_waits_while_two_are_held_by_non_readers)
{
	struct client a, b, c;
	struct srv t;
	struct pollfd pfd;
	size_t len;
	char *req;
	json_t *r;

	srv_start(&t, NULL, true);
	ck_assert_int_eq(client_connect(&a, t.path), 0);
	ck_assert_int_eq(client_connect(&b, t.path), 0);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	/* a and b: batches of 1 MiB answers, never read: they stall */
	req = batch_of("{\"jsonrpc\":\"2.0\",\"method\":\"test_big\","
		"\"params\":{\"n\":1048576},\"id\":1}", 200, &len);
	client_sendn(&a, req, len);
	client_sendn(&b, req, len);
	free(req);
	usleep(200 * 1000);
	/* c: a long batch too; it waits for one of the two slots */
	req = batch_of(ECHO_REQ(5), 1000, &len);
	client_sendn(&c, req, len);
	free(req);
	pfd.fd = c.fd;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, 300), 0);
	/* short requests are not held up: d is served at once */
	{
		struct client d;

		ck_assert_int_eq(client_connect(&d, t.path), 0);
		r = roundtrip(&d, &t, ECHO_REQ(6));
		ck_assert_int_eq(id_int(r), 6);
		json_decref(r);
		client_close(&d);
	}
	/* a leaves: its slot goes to c */
	client_close(&a);
	r = client_read_long(&c, &t);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(json_array_size(r), 1000);
	json_decref(r);
	client_close(&c);
	client_close(&b);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(server_closes_on_too_many_containers_or_values)
{
	struct pa_rpc_server_opts o = { .max_request = 1 << 20 };
	struct client c;
	struct srv t;
	size_t len;
	char *req;
	json_t *r;

	srv_start(&t, &o, true);
	/* 1 MiB: 16384 objects and arrays (with the request and params) */
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	req = dense_request("test_count", 1, "{}", 16382, &len);
	r = roundtrip(&c, &t, req);
	free(req);
	ck_assert_int_eq(id_int(r), 1);
	ck_assert_ptr_nonnull(json_object_get(r, "result"));
	json_decref(r);
	req = dense_request("test_count", 2, "[]", 16383, &len);
	client_sendn(&c, req, len);
	free(req);
	r = client_read(&c, &t);
	ck_assert_int_eq(error_code(r), PA_RPC_INVALID_REQUEST);
	ck_assert_str_eq(err_message(r),
		"request too complex (limit 16384 objects and arrays)");
	json_decref(r);
	ck_assert(client_sees_eof(&c, &t));
	client_close(&c);
	/* and 131072 commas (3 in the envelope) */
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	req = dense_request("test_count", 3, "0", 131072 - 3 + 1, &len);
	r = roundtrip(&c, &t, req);
	free(req);
	ck_assert_int_eq(id_int(r), 3);
	json_decref(r);
	req = dense_request("test_count", 4, "0", 131072 - 3 + 2, &len);
	client_sendn(&c, req, len);
	free(req);
	r = client_read(&c, &t);
	ck_assert_int_eq(error_code(r), PA_RPC_INVALID_REQUEST);
	ck_assert_str_eq(err_message(r),
		"request too complex (limit 131072 values)");
	json_decref(r);
	ck_assert(client_sees_eof(&c, &t));
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

struct reader {
	struct client *c;
	json_t *resp;
};

static void *
reader_main(void *arg)
{
	struct reader *rd = arg;

	rd->resp = client_read(rd->c, NULL);
	return NULL;
}

START_TEST(flush_writes_pending_responses)
{
	struct reader rd;
	struct client c;
	pthread_t th;
	struct srv t;

	srv_start(&t, NULL, false);
	ck_assert_int_eq(client_connect(&c, t.path), 0);
	pump(&t, 20);
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"test_big\","
		"\"params\":{\"n\":2000000},\"id\":1}");
	/* not read yet: most of the 2 MB wait in the server */
	pump(&t, 50);
	rd.c = &c;
	rd.resp = NULL;
	ck_assert_int_eq(pthread_create(&th, NULL, reader_main, &rd), 0);
	/* no more polls: only the flush can deliver the rest */
	pa_rpc_server_flush(t.s, IO_TIMEOUT_MS);
	pthread_join(th, NULL);
	ck_assert_int_eq(id_int(rd.resp), 1);
	ck_assert_int_eq(json_string_length(json_object_get(rd.resp,
		"result")), 2000000);
	json_decref(rd.resp);
	client_close(&c);
	srv_stop(&t, NULL);
}
END_TEST

START_TEST(destroy_removes_socket_and_lock_file)
{
	char lock[192];
	struct srv t;

	srv_start(&t, NULL, false);
	snprintf(lock, sizeof(lock), "%s.lock", t.path);
	ck_assert_int_eq(access(lock, F_OK), 0);
	pa_rpc_server_destroy(t.s);
	ck_assert_int_eq(access(t.path, F_OK), -1);
	ck_assert_int_eq(access(lock, F_OK), -1);
	ck_assert_int_eq(rmdir(t.dir), 0);
}
END_TEST

START_TEST(registration_carries_the_schema_for_discovery)
{
	const struct pa_rpc_method *m = pa_rpc_find("test_fail");

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(m->schema);
	ck_assert_str_eq(m->schema->result_json, "{\"const\": true}");
	ck_assert_uint_eq(m->schema->errors, PA_RPC_ERRS_BUSY);
	ck_assert_ptr_null(m->schema->params);
	/* registered without one: no params, any result */
	ck_assert_ptr_null(pa_rpc_find("test_echo")->schema);
}
END_TEST

static Suite *
rpc_suite(void)
{
	Suite *s = suite_create("rpc");
	TCase *tc;

	tc = tcase_create("handle");
	tcase_add_test(tc, request_gets_result_with_its_id);
	tcase_add_test(tc, registration_carries_the_schema_for_discovery);
	tcase_add_test(tc, params_may_be_array_or_absent);
	tcase_add_test(tc, missing_or_wrong_jsonrpc_is_invalid_request_with_id_echoed);
	tcase_add_test(tc, method_not_a_string_is_invalid_request);
	tcase_add_test(tc, scalar_params_are_invalid_request);
	tcase_add_test(tc, id_of_wrong_type_is_invalid_request_with_null_id);
	tcase_add_test(tc, non_object_request_is_invalid_request);
	tcase_add_test(tc, invalid_request_without_id_is_still_answered);
	tcase_add_test(tc, notification_runs_and_gets_no_response);
	tcase_add_test(tc, failed_notification_gets_no_response);
	tcase_add_test(tc, unknown_method_is_method_not_found_naming_it);
	tcase_add_test(tc, method_name_with_nul_is_not_found);
	tcase_add_test(tc, handler_error_carries_code_message_and_data);
	tcase_add_test(tc, subsystem_method_gets_bound_context_and_is_refused_unbound);
	tcase_add_test(tc, errno_map_gives_one_code_per_errno);
	tcase_add_test(tc, view_method_refuses_params_before_building_and_reports_no_memory);
	tcase_add_test(tc, success_without_result_is_internal_error);
	tcase_add_test(tc, failure_without_code_is_internal_error);
	tcase_add_test(tc, truncated_utf8_message_stays_valid);
	tcase_add_test(tc, empty_batch_is_one_invalid_request_object);
	tcase_add_test(tc, batch_answers_each_call_in_order_skipping_notifications);
	tcase_add_test(tc, batch_of_non_objects_gives_one_error_each);
	tcase_add_test(tc, batch_of_notifications_gets_no_response);
	tcase_add_test(tc, rpc_get_methods_returns_sorted_names);
	tcase_add_test(tc, rpc_get_methods_with_params_is_invalid_params);
	tcase_add_test(tc, no_params_accepts_only_empty_values);
	tcase_add_test(tc, error_set_formats_truncates_and_returns_minus_one);
	tcase_add_test(tc, find_knows_registered_methods_and_first_registration_wins);
	tcase_add_test(tc, handle_call_treats_an_array_as_a_non_object_call);
	tcase_add_test(tc, handle_count_counts_calls_and_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("server");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, server_answers_two_requests_in_one_write_in_order);
	tcase_add_test(tc, server_answers_request_split_byte_by_byte);
	tcase_add_test(tc, server_skips_whitespace_and_newlines_between_requests);
	tcase_add_test(tc, server_answers_batch_with_one_array_line);
	tcase_add_test(tc, server_writes_nothing_for_a_notification);
	tcase_add_test(tc, server_reports_parse_error_then_serves_next_request);
	tcase_add_test(tc, server_ignores_brackets_inside_strings);
	tcase_add_test(tc, server_closes_after_bare_scalar);
	tcase_add_test(tc, server_closes_on_mismatched_bracket);
	tcase_add_test(tc, server_closes_on_oversized_request);
	tcase_add_test(tc, server_closes_on_nesting_deeper_than_limit);
	tcase_add_test(tc, server_drops_client_that_hangs_up_mid_request);
	tcase_add_test(tc, server_answers_client_that_half_closes);
	tcase_add_test(tc, server_closes_connections_over_max_conns);
	tcase_add_test(tc, server_feed_answers_like_a_connection_and_drops_partial_tail);
	tcase_add_test(tc, server_feed_stops_at_protocol_errors_and_limits);
	tcase_add_test(tc, second_server_on_same_path_fails_with_eaddrinuse);
	tcase_add_test(tc, stale_socket_without_lock_holder_is_replaced);
	tcase_add_test(tc, non_socket_file_at_path_is_not_replaced);
	tcase_add_test(tc, socket_is_created_mode_0660_or_as_asked);
	tcase_add_test(tc, missing_socket_directory_is_created_0750);
	tcase_add_test(tc, too_long_socket_path_fails_with_enametoolong);
	tcase_add_test(tc, server_fd_signals_pending_work_and_budget_spreads_it);
	tcase_add_test(tc, slow_reader_does_not_block_server_or_others);
	tcase_add_test(tc, server_closes_partial_request_after_idle_timeout);
	tcase_add_test(tc, server_keeps_idle_connection_without_partial_request);
	tcase_add_test(tc, idle_deadline_makes_server_fd_readable);
	tcase_add_test(tc, server_closes_client_that_never_reads_after_idle_timeout);
	tcase_add_test(tc, batch_runs_across_polls_and_others_are_served_between);
	tcase_add_test(tc, batch_output_is_bounded_for_a_client_that_does_not_read);
	tcase_add_test(tc, batch_of_notifications_mixed_with_calls_streams_valid_json);
	tcase_add_test(tc, big_request_is_parsed_aside_while_others_are_served);
	tcase_add_test(tc, big_batch_and_big_invalid_value_go_through_the_parser);
	tcase_add_test(tc, raw_result_is_written_as_the_result);
	tcase_add_test(tc, client_leaving_during_a_parse_or_destroy_during_one_is_harmless);
	tcase_add_test(tc, server_closes_on_too_many_containers_or_values);
	tcase_add_test(tc, third_long_batch_waits_while_two_are_held_by_non_readers);
	tcase_add_test(tc, flush_writes_pending_responses);
	tcase_add_test(tc, destroy_removes_socket_and_lock_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { rpc_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_rpc",
		.suites = suites,
	};

	return pa_test_main(&t);
}
