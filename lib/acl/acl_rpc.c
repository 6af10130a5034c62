/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapters of the ACL: acl_rule_add, acl_rule_delete,
 * acl_rule_list, acl_rules_replace. Parameters are decoded by the config
 * loader's own parsers (a rule, the "acl" section) or a field table of
 * the decoding kit (pa_decode.h), so a rule means the same in a file and
 * over RPC; messages name the parameter ("params.src: ..."). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pa_acl.h"
#include "pa_acl_config.h"
#include "pa_decode.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(acl, "acl", "ACL not running");

/* The ACL's reasons and the decoder's messages name their field already
 * ("params.src: ..."). */
static int
core_error(int ret, const char *why, struct pa_rpc_error *err)
{
	return pa_rpc_error_errno(err, ret, "", why);
}

/* Keep config_get / config_save in step with the live table. */
static void
sync_running(const struct pa_acl_rpc_ctx *x)
{
	if (x->running != NULL)
		pa_acl_export(x->acl, &x->running->acl);
}

static int
rpc_acl_rule_add(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_acl_rpc_ctx *x = ctx;
	struct pa_config_acl_rule rule;
	char why[PA_RPC_MSG_MAX];
	int ret;

	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected a rule object");
	memset(&rule, 0, sizeof(rule));
	if (pa_acl_config_parse_rule(params, x->running, "params", &rule, why,
			sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "%s", why);
	ret = pa_acl_rule_add(x->acl, &rule, why, sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	sync_running(x);
	*result = json_pack("{s:I}", "id", (json_int_t)rule.id);
	return 0;
}
PA_RPC_METHOD_SCHEMA(acl, "acl_rule_add", rpc_acl_rule_add,
	"add an ACL rule: id priority src dst sport dport proto action [dscp rate_pps burst in_port]",
	.params_fn = pa_acl_config_rule_schema,
	.result_json = "{\"type\": \"object\", \"properties\": {\"id\": {\"type\": \"integer\"}}, \"required\": [\"id\"]}",
	.errors = PA_RPC_ERRS_EXISTS)

/* acl_rule_delete: {"id": N} */
struct delete_params {
	uint32_t id;
};

static const struct pa_decode_field delete_fields[] = {
	{ .name = "id", .type = PA_DECODE_INT, .required = true,
	  .min = 1, .max = 2147483648LL,
	  PA_DECODE_AT(struct delete_params, id) },
};

static int
rpc_acl_rule_delete(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_acl_rpc_ctx *x = ctx;
	struct delete_params p;
	char why[PA_RPC_MSG_MAX];
	int ret;

	memset(&p, 0, sizeof(p));
	ret = pa_decode_object(params, "params", delete_fields,
			PA_DECODE_N(delete_fields), &p, NULL, why, sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	ret = pa_acl_rule_delete(x->acl, p.id, why, sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	sync_running(x);
	*result = json_true();
	return 0;
}
PA_RPC_METHOD_SCHEMA(acl, "acl_rule_delete", rpc_acl_rule_delete,
	"delete the ACL rule with this id",
	PA_RPC_PARAMS(delete_fields),
	.result_json = "{\"const\": true}",
	.errors = PA_RPC_ERRS_NOT_FOUND)

static json_t *
rules_view(void *ctx)
{
	const struct pa_acl_rpc_ctx *x = ctx;

	return pa_acl_rules_json(x->acl);
}

static int
rpc_acl_rule_list(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return pa_rpc_view(params, rules_view, ctx, result, err);
}
PA_RPC_METHOD_SCHEMA(acl, "acl_rule_list", rpc_acl_rule_list,
	"the ACL rules, best first, with hit counters",
	.result_json = "{\"type\": \"array\", \"items\": {\"type\": \"object\", \"description\": \"a rule with its hits and bytes\"}}")

/*
 * acl_rules_replace: the "acl" section's object, decoded by the section's
 * own parser, with "rules" required; absent "default" and "non_ip" keep
 * the running values.
 */
static int
rpc_acl_rules_replace(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_acl_rpc_ctx *x = ctx;
	struct pa_config_acl table;
	char why[PA_RPC_MSG_MAX];
	uint32_t flow_cache;
	int ret;

	memset(&table, 0, sizeof(table));
	/* current default, non_ip and flow_cache */
	pa_acl_export(x->acl, &table);
	free(table.rules);
	table.rules = NULL;
	table.n_rules = 0;
	flow_cache = table.flow_cache;
	ret = pa_acl_config_parse_acl(params, x->running, "params", &table,
			why, sizeof(why));
	if (ret == 0 && json_object_get(params, "rules") == NULL)
		ret = pa_decode_fail(why, sizeof(why),
				"params.rules: required key missing");
	if (ret == 0 && table.flow_cache != flow_cache)
		ret = pa_decode_fail(why, sizeof(why),
				"params.flow_cache: the flow cache is sized at start (%u): restart the daemon to change it",
				flow_cache);
	if (ret == 0)
		ret = pa_acl_rules_replace(x->acl, &table, why, sizeof(why));
	if (ret == 0) {
		sync_running(x);
		*result = json_pack("{s:i}", "rules", (int)table.n_rules);
	}
	free(table.rules);
	return ret != 0 ? core_error(ret, why, err) : 0;
}
/* the "acl" section's schema, "rules" required */
static json_t *
replace_schema(void)
{
	json_t *s = pa_acl_config_schema();

	if (s != NULL && json_object_set_new(s, "required",
			json_pack("[s]", "rules")) != 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}
PA_RPC_METHOD_SCHEMA(acl, "acl_rules_replace", rpc_acl_rules_replace,
	"replace the whole ACL atomically: {\"default\", \"rules\", \"non_ip\"?}",
	.params_fn = replace_schema,
	.result_json = "{\"type\": \"object\", \"properties\": {\"rules\": {\"type\": \"integer\"}}, \"required\": [\"rules\"]}")
