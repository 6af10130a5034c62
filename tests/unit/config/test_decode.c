/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/config's decoding kit (pa_decode.h): field tables,
 * primitives, paths and messages, as the RPC adapters will use them. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "pa_decode.h"
#include "pa_net.h"
#include "pa_test_main.h"

/* JSON written as C tokens: J({"a": 1}) is the string "{\"a\": 1}". */
#define J(...) #__VA_ARGS__

static char err[512];

struct thing {
	uint32_t id;
	uint16_t port;
	uint8_t small;
	int kind;
	bool flag;
	const char *label;
	char name[PA_DECODE_NAME_MAX];
	struct pa_ip_addr addr;
	bool has_addr;
	struct pa_ip_prefix src;
	struct pa_port_range sport;
	int proto;
	uint8_t mac[6];
	uint64_t big;
	int custom_calls;
	int always_calls;
};

static const char *const kinds[] = { "one", "two", "three", NULL };

static int
big_check(const struct pa_decode_field *f, const json_t *v, const char *path,
		void *out, void *arg, char *err_, size_t err_len)
{
	const struct thing *t = out;

	if (t->big % 2 != 0)
		return pa_decode_fail(err_, err_len, "%s: %llu is odd", path,
				(unsigned long long)t->big);
	return 0;
}

static int
count_always(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err_,
		size_t err_len)
{
	struct thing *t = out;

	t->always_calls++;
	if (v == NULL && arg != NULL)
		return pa_decode_fail(err_, err_len, "%s: wanted here", path);
	return 0;
}

static int
custom_label(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err_,
		size_t err_len)
{
	struct thing *t = out;

	t->custom_calls++;
	return pa_decode_string(v, path, &t->label, err_, err_len);
}

#define T(m)	PA_DECODE_AT(struct thing, m)

static const struct pa_decode_field fields[] = {
	{ .name = "id", .type = PA_DECODE_INT, .required = true,
	  .min = 1, .max = 4294967295LL, T(id) },
	{ .name = "port", .type = PA_DECODE_PORT, .min = 1, .max = 65535,
	  T(port) },
	{ .name = "small", .type = PA_DECODE_POW2, .min = 1, .max = 128,
	  T(small) },
	{ .name = "kind", .type = PA_DECODE_ENUM, .names = kinds, T(kind) },
	{ .name = "flag", .type = PA_DECODE_BOOL, T(flag) },
	{ .name = "label", .type = PA_DECODE_CUSTOM, .decode = custom_label },
	{ .name = "name", .type = PA_DECODE_NAME, T(name) },
	{ .name = "addr", .type = PA_DECODE_IP, T(addr),
	  PA_DECODE_PRESENT(struct thing, has_addr) },
	{ .name = "src", .type = PA_DECODE_PREFIX, T(src) },
	{ .name = "sport", .type = PA_DECODE_PORT_RANGE, T(sport) },
	{ .name = "proto", .type = PA_DECODE_PROTO, T(proto) },
	{ .name = "mac", .type = PA_DECODE_MAC, T(mac) },
	{ .name = "big", .type = PA_DECODE_INT, .min = 0, .max = INT64_MAX,
	  T(big), .check = big_check },
	{ .name = "always", .type = PA_DECODE_CUSTOM, .decode = count_always,
	  .flags = PA_DECODE_ALWAYS },
};

/* The document of the last decode(): strings stored are borrowed from it. */
static json_t *doc;

static void
doc_release(void)
{
	json_decref(doc);
	doc = NULL;
}

static int
decode(const char *text, const char *path, struct thing *t, void *arg)
{
	json_error_t jerr;
	int rc;

	doc_release();
	doc = json_loads(text, 0, &jerr);
	ck_assert_msg(doc != NULL, "bad test JSON: %s", jerr.text);
	memset(t, 0, sizeof(*t));
	t->proto = PA_PROTO_ANY;
	err[0] = '\0';
	rc = pa_decode_object(doc, path, fields, PA_DECODE_N(fields), t, arg,
			err, sizeof(err));
	return rc;
}

static void
assert_err(const char *text, const char *path, const char *expect)
{
	struct thing t;

	ck_assert_int_eq(decode(text, path, &t, NULL), -EINVAL);
	ck_assert_str_eq(err, expect);
}

START_TEST(test_every_type_is_stored_at_its_offset)
{
	struct thing t;
	char buf[64];

	ck_assert_int_eq(decode(J({"id": 4000000000, "port": "8080",
			"small": 64, "kind": "three", "flag": true,
			"label": "x", "name": "web-1", "addr": "2001:db8::1",
			"src": "10.0.0.0/8", "sport": "1-2", "proto": "udp",
			"mac": "02:00:00:00:00:0a", "big": 9007199254740992}),
			"params", &t, NULL), 0);
	ck_assert_uint_eq(t.id, 4000000000u);
	ck_assert_uint_eq(t.port, 8080);
	ck_assert_uint_eq(t.small, 64);
	ck_assert_int_eq(t.kind, 2);
	ck_assert(t.flag);
	ck_assert_str_eq(t.label, "x");
	ck_assert_str_eq(t.name, "web-1");
	ck_assert(t.has_addr);
	ck_assert_str_eq(pa_net_format_ip(&t.addr, buf, sizeof(buf)),
			"2001:db8::1");
	ck_assert_str_eq(pa_net_format_prefix(&t.src, buf, sizeof(buf)),
			"10.0.0.0/8");
	ck_assert_uint_eq(t.sport.lo, 1);
	ck_assert_uint_eq(t.sport.hi, 2);
	ck_assert_int_eq(t.proto, IPPROTO_UDP);
	ck_assert_uint_eq(t.mac[5], 0x0a);
	ck_assert_uint_eq(t.big, 9007199254740992ULL);
	ck_assert_int_eq(t.custom_calls, 1);
}
END_TEST

START_TEST(test_absent_fields_keep_their_defaults)
{
	struct thing t;

	ck_assert_int_eq(decode(J({"id": 1}), "params", &t, NULL), 0);
	ck_assert(!t.has_addr);
	ck_assert_int_eq(t.proto, PA_PROTO_ANY);
	ck_assert_int_eq(t.custom_calls, 0);
	ck_assert_int_eq(t.always_calls, 1);
	ck_assert_ptr_null(t.label);
}
END_TEST

START_TEST(test_messages_name_the_params_path)
{
	assert_err(J([]), "params", "params: expected an object, got an array");
	assert_err(J({"id": 1, "nope": 2}), "params",
			"params.nope: unknown key");
	assert_err(J({}), "params", "params.id: required key missing");
	assert_err(J({"id": 0}), "params",
			"params.id: 0 out of range 1..4294967295");
	assert_err(J({"id": "1"}), "params",
			"params.id: expected an integer, got a string");
	assert_err(J({"id": 1, "port": "x"}), "params",
			"params.port: invalid port number 'x'");
	assert_err(J({"id": 1, "port": 0}), "params",
			"params.port: 0 out of range 1..65535");
	assert_err(J({"id": 1, "small": 3}), "params",
			"params.small: 3 is not a power of two");
	assert_err(J({"id": 1, "kind": "four"}), "params",
			"params.kind: invalid value 'four' (expected one of \"one\", \"two\", \"three\")");
	assert_err(J({"id": 1, "flag": 1}), "params",
			"params.flag: expected a boolean, got an integer");
	assert_err(J({"id": 1, "name": "a b"}), "params",
			"params.name: invalid name 'a b': character ' ' not allowed (use A-Z a-z 0-9 _ . -)");
	assert_err(J({"id": 1, "addr": "10.0.0.256"}), "params",
			"params.addr: invalid IP address '10.0.0.256'");
	assert_err(J({"id": 1, "src": "10.0.0.1/8"}), "params",
			"params.src: invalid prefix '10.0.0.1/8': host bits set (did you mean '10.0.0.0/8'?)");
	assert_err(J({"id": 1, "sport": true}), "params",
			"params.sport: expected a string (\"any\", \"N\", \"LO-HI\") or an integer, got a boolean");
	assert_err(J({"id": 1, "proto": 256}), "params",
			"params.proto: protocol 256 out of range 0..255");
	assert_err(J({"id": 1, "mac": "02:00"}), "params",
			"params.mac: invalid MAC address '02:00' (expected aa:bb:cc:dd:ee:ff)");
	assert_err(J({"id": 1, "big": 3}), "$.x[2]", "$.x[2].big: 3 is odd");
}
END_TEST

START_TEST(test_absent_object_is_refused_not_dereferenced)
{
	struct thing t;

	/* an RPC without "params" hands the decoder NULL */
	ck_assert_int_eq(pa_decode_object(NULL, "params", fields,
			PA_DECODE_N(fields), &t, NULL, err, sizeof(err)),
			-EINVAL);
	ck_assert_str_eq(err, "params: expected an object, got nothing");
	ck_assert_str_eq(pa_decode_type_name(NULL), "nothing");
}
END_TEST

START_TEST(test_fields_are_checked_in_table_order_not_key_order)
{
	/* "mac" comes after "addr" in the table, whatever the document says */
	assert_err(J({"mac": "bad", "addr": "bad", "id": 1}), "params",
			"params.addr: invalid IP address 'bad'");
}
END_TEST

START_TEST(test_always_fields_run_when_absent)
{
	struct thing t;

	ck_assert_int_eq(decode(J({"id": 1}), "params", &t, (void *)1),
			-EINVAL);
	ck_assert_str_eq(err, "params.always: wanted here");
	ck_assert_int_eq(decode(J({"id": 1, "always": 0}), "params", &t,
			(void *)1), 0);
	ck_assert_int_eq(t.always_calls, 1);
}
END_TEST

START_TEST(test_control_characters_never_reach_the_message)
{
	assert_err("{\"id\": 1, \"kind\": \"a\\u0001\\u001b[2J\"}", "params",
			"params.kind: invalid value 'a??[2J' (expected one of \"one\", \"two\", \"three\")");
}
END_TEST

START_TEST(test_why_writes_nothing_without_a_buffer)
{
	char why[8];

	ck_assert_int_eq(pa_decode_why(NULL, 0, "%s", "x"), -EINVAL);
	ck_assert_int_eq(pa_decode_why(why, sizeof(why), "%s", "0123456789"),
			-EINVAL);
	ck_assert_str_eq(why, "0123456");
}
END_TEST

START_TEST(test_long_paths_end_in_dots)
{
	char buf[16];

	ck_assert_str_eq(pa_decode_key_path(buf, sizeof(buf), "$.abcdefgh",
			"ijklmnop"), "$.abcdefgh.i...");
	ck_assert_str_eq(pa_decode_index_path(buf, sizeof(buf), "$.a", 7),
			"$.a[7]");
}
END_TEST

/* ---- JSON Schema of a table ---- */

static json_t *
label_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:i}", "type", "string", "maxLength", 8);
}

static const struct pa_decode_field schema_fields[] = {
	{ .name = "id", .type = PA_DECODE_INT, .required = true,
	  .min = 1, .max = 4294967295LL, T(id) },
	{ .name = "small", .type = PA_DECODE_POW2, .min = 4, .max = 100,
	  T(small) },
	{ .name = "kind", .type = PA_DECODE_ENUM, .names = kinds, T(kind),
	  .doc = "which one" },
	{ .name = "port", .type = PA_DECODE_PORT, .min = 1, .max = 65535,
	  T(port) },
	{ .name = "label", .type = PA_DECODE_CUSTOM, .decode = custom_label,
	  .schema = label_schema },
	{ .name = "always", .type = PA_DECODE_CUSTOM, .decode = count_always },
};

static json_t *
prop(json_t *s, const char *name)
{
	json_t *p = json_object_get(json_object_get(s, "properties"), name);

	ck_assert_msg(p != NULL, "no property %s", name);
	return p;
}

START_TEST(test_schema_of_a_table_says_types_bounds_enums_required)
{
	json_t *s = pa_decode_schema_object(schema_fields,
			PA_DECODE_N(schema_fields));
	json_t *want;

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(json_string_value(json_object_get(s, "type")),
			"object");
	ck_assert(json_is_false(json_object_get(s, "additionalProperties")));
	want = json_pack("[s]", "id");
	ck_assert(json_equal(json_object_get(s, "required"), want));
	json_decref(want);
	/* properties in table order */
	ck_assert_int_eq(json_object_size(json_object_get(s, "properties")),
			PA_DECODE_N(schema_fields));
	want = json_pack("{s:s, s:I, s:I}", "type", "integer",
			"minimum", (json_int_t)1, "maximum",
			(json_int_t)4294967295LL);
	ck_assert(json_equal(prop(s, "id"), want));
	json_decref(want);
	want = json_pack("{s:s, s:[iiiii]}", "type", "integer", "enum",
			4, 8, 16, 32, 64);
	ck_assert(json_equal(prop(s, "small"), want));
	json_decref(want);
	want = json_pack("{s:s, s:[sss], s:s}", "type", "string", "enum",
			"one", "two", "three", "description", "which one");
	ck_assert(json_equal(prop(s, "kind"), want));
	json_decref(want);
	/* a port: an integer in its bounds, or a string of digits */
	ck_assert_int_eq(json_integer_value(json_object_get(prop(s, "port"),
			"minimum")), 1);
	ck_assert_int_eq(json_array_size(json_object_get(prop(s, "port"),
			"type")), 2);
	/* CUSTOM: its own hook; none: any value */
	ck_assert_int_eq(json_integer_value(json_object_get(prop(s, "label"),
			"maxLength")), 8);
	ck_assert_int_eq(json_object_size(prop(s, "always")), 0);
	json_decref(s);
}
END_TEST

START_TEST(test_schema_of_a_table_without_required_keys_has_no_required)
{
	json_t *s = pa_decode_schema_object(schema_fields + 1,
			PA_DECODE_N(schema_fields) - 1);

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(json_object_get(s, "required"));
	json_decref(s);
}
END_TEST

START_TEST(test_schema_of_string_forms_has_a_pattern)
{
	/* each typed field of the test table: its JSON type, and the
	 * "pattern" of a string form; PORT_RANGE and PROTO are integers or
	 * strings */
	size_t i;
	json_t *s;

	for (i = 0; i < PA_DECODE_N(fields); i++) {
		s = pa_decode_schema_field(&fields[i]);
		ck_assert_ptr_nonnull(s);
		switch (fields[i].type) {
		case PA_DECODE_IP:
		case PA_DECODE_PREFIX:
		case PA_DECODE_MAC:
		case PA_DECODE_NAME:
			ck_assert_str_eq(json_string_value(
					json_object_get(s, "type")), "string");
			ck_assert_ptr_nonnull(json_object_get(s, "pattern"));
			break;
		case PA_DECODE_PORT_RANGE:
		case PA_DECODE_PROTO:
			ck_assert(json_is_array(json_object_get(s, "type")));
			ck_assert_ptr_nonnull(json_object_get(s, "pattern"));
			break;
		case PA_DECODE_BOOL:
			ck_assert_str_eq(json_string_value(
					json_object_get(s, "type")), "boolean");
			break;
		default:
			break;
		}
		json_decref(s);
	}
}
END_TEST

START_TEST(test_schema_array_steals_its_items)
{
	json_t *s = pa_decode_schema_array(json_pack("{s:s}", "type",
			"string"), 3);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(json_integer_value(json_object_get(s, "maxItems")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(s,
			"items"), "type")), "string");
	json_decref(s);
	ck_assert_ptr_null(pa_decode_schema_array(NULL, 0));
}
END_TEST

static Suite *
decode_suite(void)
{
	Suite *s = suite_create("decode");
	TCase *tc = tcase_create("decode");

	tcase_add_checked_fixture(tc, NULL, doc_release);

	tcase_add_test(tc, test_every_type_is_stored_at_its_offset);
	tcase_add_test(tc, test_absent_fields_keep_their_defaults);
	tcase_add_test(tc, test_messages_name_the_params_path);
	tcase_add_test(tc, test_absent_object_is_refused_not_dereferenced);
	tcase_add_test(tc, test_fields_are_checked_in_table_order_not_key_order);
	tcase_add_test(tc, test_always_fields_run_when_absent);
	tcase_add_test(tc, test_control_characters_never_reach_the_message);
	tcase_add_test(tc, test_why_writes_nothing_without_a_buffer);
	tcase_add_test(tc, test_long_paths_end_in_dots);
	tcase_add_test(tc, test_schema_of_a_table_says_types_bounds_enums_required);
	tcase_add_test(tc, test_schema_of_a_table_without_required_keys_has_no_required);
	tcase_add_test(tc, test_schema_of_string_forms_has_a_pattern);
	tcase_add_test(tc, test_schema_array_steals_its_items);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { decode_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_decode",
		.suites = suites,
	};

	return pa_test_main(&t);
}
