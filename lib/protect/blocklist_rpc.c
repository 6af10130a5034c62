/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapters of the blocklist: blocklist_replace, blocklist_add,
 * blocklist_delete, blocklist_get. A bad prefix is named by its index
 * ("params.prefixes[3]: ...") or, in a file, its line; either way nothing
 * is applied. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pa_blocklist.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(blocklist, "blocklist", "blocklist not running");

#define SAMPLE_DEFAULT	100

/* Only the keys in @p allowed (NULL-terminated). */
static int
check_keys(const json_t *params, const char *const *allowed,
		struct pa_rpc_error *err)
{
	const char *key;
	json_t *v;
	unsigned int i;

	json_object_foreach((json_t *)params, key, v) {
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (allowed[i] == NULL)
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.%s: unknown parameter", key);
	}
	return 0;
}

/* "prefixes": [...] into a normalised set. */
static int
decode_prefixes(const json_t *list, uint32_t max, struct pa_bl_set *s,
		struct pa_rpc_error *err)
{
	struct pa_ip_prefix p;
	char why[256];
	size_t i;
	json_t *v;

	memset(s, 0, sizeof(*s));
	if (!json_is_array(list))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.prefixes: expected an array of prefixes");
	if (json_array_size(list) > (size_t)max * 2)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.prefixes: %zu prefixes, more than the blocklist's limit of %u",
			json_array_size(list), max);
	json_array_foreach(list, i, v) {
		if (!json_is_string(v)) {
			pa_bl_set_free(s);
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.prefixes[%zu]: expected a prefix (string)",
				i);
		}
		if (pa_bl_parse_prefix(json_string_value(v), &p, why,
				sizeof(why)) != 0) {
			pa_bl_set_free(s);
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.prefixes[%zu]: %s", i, why);
		}
		if (pa_bl_set_push(s, &p) != 0) {
			pa_bl_set_free(s);
			return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
				"out of memory");
		}
	}
	pa_bl_set_normalise(s);
	if (pa_bl_set_count(s) > max) {
		pa_bl_set_free(s);
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.prefixes: %u prefixes, more than the blocklist's limit of %u",
			pa_bl_set_count(s), max);
	}
	return 0;
}

static int
total(struct pa_blocklist *bl, uint32_t before, json_t **result)
{
	struct pa_blocklist_info in;

	pa_blocklist_info(bl, &in);
	*result = json_pack("{s:I, s:I}", "prefixes", (json_int_t)in.prefixes,
		"changed", (json_int_t)(in.prefixes > before ?
			in.prefixes - before : before - in.prefixes));
	return 0;
}

static uint32_t
count_now(struct pa_blocklist *bl, uint32_t *max)
{
	struct pa_blocklist_info in;

	pa_blocklist_info(bl, &in);
	*max = in.max_prefixes;
	return in.prefixes;
}

/*
 * The params' schemas: these decoders are not field tables (check_keys(),
 * decode_prefixes(), the "limit" check), so the schemas follow them here,
 * and the API test checks them call by call.
 */
static json_t *
prefixes_schema(void)
{
	return json_pack("{s:s, s:I, s:{s:s, s:s, s:s}}", "type", "array",
		"maxItems", (json_int_t)PA_BLOCKLIST_MAX * 2, "items",
		"type", "string", "pattern", "^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$",
		"description", "an IPv4 or IPv6 prefix ADDRESS/LENGTH without host bits, or an address");
}

static json_t *
replace_schema(void)
{
	return json_pack("{s:s, s:{s:o, s:{s:s, s:s}}, s:b, s:[{s:[s]}, {s:[s]}]}",
		"type", "object", "properties", "prefixes", prefixes_schema(),
		"path", "type", "string", "description",
		"a file of the daemon's host: one prefix a line, # comments",
		"additionalProperties", 0,
		"oneOf", "required", "prefixes", "required", "path");
}

static json_t *
add_delete_schema(void)
{
	return json_pack("{s:s, s:{s:o}, s:[s], s:b}", "type", "object",
		"properties", "prefixes", prefixes_schema(),
		"required", "prefixes", "additionalProperties", 0);
}

static json_t *
get_schema(void)
{
	return json_pack("{s:s, s:{s:{s:s, s:i, s:I, s:s}}, s:b}",
		"type", "object", "properties", "limit", "type", "integer",
		"minimum", 0, "maximum", (json_int_t)PA_BLOCKLIST_MAX,
		"description", "prefixes in the sample (default 100)",
		"additionalProperties", 0);
}

static int
rpc_blocklist_replace(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	static const char *const keys[] = { "prefixes", "path", NULL };
	struct pa_blocklist_rpc_ctx *x = ctx;
	const json_t *list, *path;
	struct pa_bl_set s;
	char why[PA_RPC_MSG_MAX];
	uint32_t max, before;
	int ret;

	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected {\"prefixes\": [...]} or {\"path\": \"FILE\"}");
	if (check_keys(params, keys, err) != 0)
		return -1;
	list = json_object_get(params, "prefixes");
	path = json_object_get(params, "path");
	if ((list == NULL) == (path == NULL))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: give one of \"prefixes\" or \"path\"");
	before = count_now(x->bl, &max);
	if (path != NULL) {
		if (!json_is_string(path))
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.path: expected a file name (string)");
		ret = pa_bl_read_file(json_string_value(path), max, &s, why,
			sizeof(why));
		if (ret == -ENOMEM)
			return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
				"%s", why);
		if (ret != 0)
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.path: %s", why);
	} else if (decode_prefixes(list, max, &s, err) != 0) {
		return -1;
	}
	ret = pa_blocklist_replace(x->bl, &s, why, sizeof(why));
	if (ret != 0)
		return pa_rpc_error_errno(err, ret, "params: ", why);
	return total(x->bl, before, result);
}
PA_RPC_METHOD_SCHEMA(blocklist, "blocklist_replace", rpc_blocklist_replace,
	"replace the source blocklist: {\"prefixes\": [...]} or {\"path\": FILE}",
	.params_fn = replace_schema, .result_json = "{\"type\": \"object\", \"properties\": {\"prefixes\": {\"type\": \"integer\"}, \"changed\": {\"type\": \"integer\"}}, \"required\": [\"prefixes\", \"changed\"]}")

static int
add_or_delete(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err, bool add)
{
	static const char *const keys[] = { "prefixes", NULL };
	struct pa_blocklist_rpc_ctx *x = ctx;
	const json_t *list;
	struct pa_bl_set s;
	char why[PA_RPC_MSG_MAX];
	uint32_t max, before;
	int ret;

	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected {\"prefixes\": [...]}");
	if (check_keys(params, keys, err) != 0)
		return -1;
	list = json_object_get(params, "prefixes");
	if (list == NULL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.prefixes: missing");
	before = count_now(x->bl, &max);
	if (decode_prefixes(list, max, &s, err) != 0)
		return -1;
	ret = add ? pa_blocklist_add(x->bl, &s, why, sizeof(why)) :
		pa_blocklist_delete(x->bl, &s, why, sizeof(why));
	pa_bl_set_free(&s);
	if (ret != 0)
		return pa_rpc_error_errno(err, ret, "params.prefixes: ", why);
	return total(x->bl, before, result);
}

static int
rpc_blocklist_add(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return add_or_delete(ctx, params, result, err, true);
}
PA_RPC_METHOD_SCHEMA(blocklist, "blocklist_add", rpc_blocklist_add,
	"add source prefixes to the blocklist: {\"prefixes\": [...]}",
	.params_fn = add_delete_schema, .result_json = "{\"type\": \"object\", \"properties\": {\"prefixes\": {\"type\": \"integer\"}, \"changed\": {\"type\": \"integer\"}}, \"required\": [\"prefixes\", \"changed\"]}")

static int
rpc_blocklist_delete(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return add_or_delete(ctx, params, result, err, false);
}
PA_RPC_METHOD_SCHEMA(blocklist, "blocklist_delete", rpc_blocklist_delete,
	"delete source prefixes from the blocklist: {\"prefixes\": [...]}",
	.params_fn = add_delete_schema, .result_json = "{\"type\": \"object\", \"properties\": {\"prefixes\": {\"type\": \"integer\"}, \"changed\": {\"type\": \"integer\"}}, \"required\": [\"prefixes\", \"changed\"]}")

static int
rpc_blocklist_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	static const char *const keys[] = { "limit", NULL };
	struct pa_blocklist_rpc_ctx *x = ctx;
	json_int_t limit = SAMPLE_DEFAULT;
	const json_t *l;

	if (params != NULL && !json_is_null(params) &&
	    !(json_is_array(params) && json_array_size(params) == 0)) {
		if (!json_is_object(params))
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params: expected {\"limit\"?: N}");
		if (check_keys(params, keys, err) != 0)
			return -1;
		l = json_object_get(params, "limit");
		if (l != NULL) {
			if (!json_is_integer(l) || json_integer_value(l) < 0 ||
			    json_integer_value(l) > PA_BLOCKLIST_MAX)
				return pa_rpc_error_set(err,
					PA_RPC_INVALID_PARAMS,
					"params.limit: expected an integer 0..%u",
					PA_BLOCKLIST_MAX);
			limit = json_integer_value(l);
		}
	}
	*result = pa_blocklist_json(x->bl, (uint32_t)limit);
	if (*result == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	return 0;
}
PA_RPC_METHOD_SCHEMA(blocklist, "blocklist_get", rpc_blocklist_get,
	"the source blocklist: prefixes, hits, memory_bytes, sample [limit]",
	.params_fn = get_schema,
	.result_json = "{\"type\": \"object\", \"properties\": {\"prefixes\": {\"type\": \"integer\"}, \"hits\": {\"type\": \"integer\"}, \"sample\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}, \"required\": [\"prefixes\", \"hits\", \"sample\"]}")
