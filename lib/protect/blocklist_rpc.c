/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapters of the blocklist: blocklist_replace, blocklist_add,
 * blocklist_delete, blocklist_get, their params decoded by field tables
 * (pa_decode.h). A bad prefix is named by its index
 * ("params.prefixes[3]: ...") or, in a file, its line; either way nothing
 * is applied. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "pa_blocklist.h"
#include "pa_decode.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(blocklist, "blocklist", "blocklist not running");

#define SAMPLE_DEFAULT	100

/* The params of a change: the prefixes decoded into a set, or a file. */
struct change_params {
	struct pa_bl_set set;
	bool has_set;
	const char *path;
	uint32_t max;			/* the blocklist's limit */
	uint32_t before;		/* its count before the change */
};

/*
 * "prefixes": [...] into a normalised set, at most the blocklist's limit
 * (cp->max) of them; a bad one is named by its index. On failure nothing
 * of the set is left allocated.
 */
static int
decode_prefixes(const struct pa_decode_field *f, const json_t *list,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct change_params *cp = out;
	struct pa_bl_set *s = &cp->set;
	uint32_t max = cp->max;
	struct pa_ip_prefix p;
	char why[256];
	size_t i;
	json_t *v;

	memset(s, 0, sizeof(*s));
	if (!json_is_array(list))
		return pa_decode_fail(err, err_len,
			"%s: expected an array of prefixes", path);
	if (json_array_size(list) > (size_t)max * 2)
		return pa_decode_fail(err, err_len,
			"%s: %zu prefixes, more than the blocklist's limit of %u",
			path, json_array_size(list), max);
	json_array_foreach(list, i, v) {
		if (!json_is_string(v)) {
			pa_bl_set_free(s);
			return pa_decode_fail(err, err_len,
				"%s[%zu]: expected a prefix (string)", path, i);
		}
		if (pa_bl_parse_prefix(json_string_value(v), &p, why,
				sizeof(why)) != 0) {
			pa_bl_set_free(s);
			return pa_decode_fail(err, err_len, "%s[%zu]: %s",
				path, i, why);
		}
		if (pa_bl_set_push(s, &p) != 0) {
			pa_bl_set_free(s);
			return pa_decode_nomem(err, err_len, path);
		}
	}
	pa_bl_set_normalise(s);
	if (pa_bl_set_count(s) > max) {
		pa_bl_set_free(s);
		return pa_decode_fail(err, err_len,
			"%s: %u prefixes, more than the blocklist's limit of %u",
			path, pa_bl_set_count(s), max);
	}
	cp->has_set = true;
	return 0;
}

/* What decode_prefixes() takes, for rpc.discover. */
static json_t *
prefixes_schema(const struct pa_decode_field *f)
{
	RTE_SET_USED(f);
	return json_pack("{s:s, s:I, s:{s:s, s:s}}", "type", "array",
		"maxItems", (json_int_t)PA_BLOCKLIST_MAX * 2, "items",
		"type", "string", "pattern", "^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$");
}

static const struct pa_decode_field replace_fields[] = {
	{ .name = "prefixes", .type = PA_DECODE_CUSTOM,
	  .decode = decode_prefixes, .schema = prefixes_schema,
	  .doc = "IPv4 or IPv6 prefixes ADDRESS/LENGTH without host bits, "
		"or addresses" },
	{ .name = "path", .type = PA_DECODE_STRING,
	  PA_DECODE_AT(struct change_params, path),
	  .doc = "a file of the daemon's host: one prefix a line, # comments" },
};

static const struct pa_decode_field change_fields[] = {
	{ .name = "prefixes", .type = PA_DECODE_CUSTOM, .required = true,
	  .decode = decode_prefixes, .schema = prefixes_schema,
	  .doc = "IPv4 or IPv6 prefixes ADDRESS/LENGTH without host bits, "
		"or addresses" },
};

/* replace's params: its table, and one of its two keys (the check
 * rpc_blocklist_replace() makes after the table). */
static json_t *
replace_schema(void)
{
	json_t *s = pa_decode_schema_object(replace_fields,
		PA_DECODE_N(replace_fields));

	if (s != NULL && json_object_set_new(s, "oneOf", json_pack(
			"[{s:[s]}, {s:[s]}]", "required", "prefixes",
			"required", "path")) != 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}

#define CHANGE_RESULT "{\"type\": \"object\", \"properties\": " \
	"{\"prefixes\": {\"type\": \"integer\"}, \"changed\": " \
	"{\"type\": \"integer\"}}, \"required\": [\"prefixes\", \"changed\"]}"

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
 * The params of a change to @p bl: an object (else "params: expected
 * <@p shape>"), decoded with @p fields, its prefixes bounded by the
 * blocklist's limit; p->before is the count before the change.
 */
static int
decode_change(struct pa_blocklist *bl, const json_t *params,
		const char *shape, const struct pa_decode_field *fields,
		size_t n_fields, struct change_params *p,
		struct pa_rpc_error *err)
{
	char why[PA_RPC_MSG_MAX];
	int ret;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected %s", shape);
	p->before = count_now(bl, &p->max);
	ret = pa_decode_object(params, "params", fields, n_fields, p,
			NULL, why, sizeof(why));
	if (ret != 0) {
		pa_bl_set_free(&p->set);
		return pa_rpc_error_errno(err, ret, "", why);
	}
	return 0;
}

static int
rpc_blocklist_replace(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_blocklist_rpc_ctx *x = ctx;
	struct change_params p;
	char why[PA_RPC_MSG_MAX];
	int ret;

	if (decode_change(x->bl, params,
			"{\"prefixes\": [...]} or {\"path\": \"FILE\"}",
			replace_fields, PA_DECODE_N(replace_fields), &p,
			err) != 0)
		return -1;
	if (p.has_set == (p.path != NULL)) {
		pa_bl_set_free(&p.set);
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: give one of \"prefixes\" or \"path\"");
	}
	if (p.path != NULL) {
		ret = pa_bl_read_file(p.path, p.max, &p.set, why,
				sizeof(why));
		if (ret == -ENOMEM)
			return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
				"%s", why);
		if (ret != 0)
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.path: %s", why);
	}
	ret = pa_blocklist_replace(x->bl, &p.set, why, sizeof(why));
	if (ret != 0)
		return pa_rpc_error_errno(err, ret, "params: ", why);
	return total(x->bl, p.before, result);
}
PA_RPC_METHOD_SCHEMA(blocklist, "blocklist_replace", rpc_blocklist_replace,
	"replace the source blocklist: {\"prefixes\": [...]} or {\"path\": FILE}",
	.params_fn = replace_schema, .result_json = CHANGE_RESULT)

static int
add_or_delete(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err, bool add)
{
	struct pa_blocklist_rpc_ctx *x = ctx;
	struct change_params p;
	char why[PA_RPC_MSG_MAX];
	int ret;

	if (decode_change(x->bl, params, "{\"prefixes\": [...]}",
			change_fields, PA_DECODE_N(change_fields), &p,
			err) != 0)
		return -1;
	ret = add ? pa_blocklist_add(x->bl, &p.set, why, sizeof(why)) :
		pa_blocklist_delete(x->bl, &p.set, why, sizeof(why));
	pa_bl_set_free(&p.set);
	if (ret != 0)
		return pa_rpc_error_errno(err, ret, "params.prefixes: ", why);
	return total(x->bl, p.before, result);
}

static int
rpc_blocklist_add(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return add_or_delete(ctx, params, result, err, true);
}
PA_RPC_METHOD_SCHEMA(blocklist, "blocklist_add", rpc_blocklist_add,
	"add source prefixes to the blocklist: {\"prefixes\": [...]}",
	PA_RPC_PARAMS(change_fields), .result_json = CHANGE_RESULT)

static int
rpc_blocklist_delete(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return add_or_delete(ctx, params, result, err, false);
}
PA_RPC_METHOD_SCHEMA(blocklist, "blocklist_delete", rpc_blocklist_delete,
	"delete source prefixes from the blocklist: {\"prefixes\": [...]}",
	PA_RPC_PARAMS(change_fields), .result_json = CHANGE_RESULT)

struct get_params {
	uint32_t limit;
};

static const struct pa_decode_field get_fields[] = {
	{ .name = "limit", .type = PA_DECODE_INT, .min = 0,
	  .max = PA_BLOCKLIST_MAX, PA_DECODE_AT(struct get_params, limit),
	  .doc = "prefixes in the sample (default 100)" },
};

static int
rpc_blocklist_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_blocklist_rpc_ctx *x = ctx;
	struct get_params p = { .limit = SAMPLE_DEFAULT };
	char why[PA_RPC_MSG_MAX];
	int ret;

	if (pa_rpc_no_params(params, NULL) != 0) {
		if (!json_is_object(params))
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params: expected {\"limit\"?: N}");
		ret = pa_decode_object(params, "params", get_fields,
				PA_DECODE_N(get_fields), &p, NULL, why,
				sizeof(why));
		if (ret != 0)
			return pa_rpc_error_errno(err, ret, "", why);
	}
	*result = pa_blocklist_json(x->bl, p.limit);
	if (*result == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	return 0;
}
PA_RPC_METHOD_SCHEMA(blocklist, "blocklist_get", rpc_blocklist_get,
	"the source blocklist: prefixes, hits, memory_bytes, sample [limit]",
	PA_RPC_PARAMS(get_fields),
	.result_json = "{\"type\": \"object\", \"properties\": {\"prefixes\": {\"type\": \"integer\"}, \"hits\": {\"type\": \"integer\"}, \"sample\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}, \"required\": [\"prefixes\", \"hits\", \"sample\"]}")
