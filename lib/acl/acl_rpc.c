/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapters of the ACL: acl_rule_add, acl_rule_delete,
 * acl_rule_list, acl_rules_replace. Parameters are decoded by the config
 * loader's own rule parser, so a rule means the same in a file and over
 * RPC; messages name the parameter ("params.src: ..."). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pa_acl.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(acl, "acl", "ACL not running");

/* The ACL's reasons name their field already ("params.src: ..."). */
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
PA_RPC_METHOD(acl, "acl_rule_add", rpc_acl_rule_add,
	"add an ACL rule: id priority src dst sport dport proto action [dscp rate_pps burst in_port]")

static int
rpc_acl_rule_delete(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_acl_rpc_ctx *x = ctx;
	char why[PA_RPC_MSG_MAX];
	json_error_t jerr;
	json_int_t id;
	int ret;

	if (params == NULL || json_unpack_ex((json_t *)params, &jerr,
			JSON_STRICT, "{s:I}", "id", &id) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.id: expected {\"id\": N} (%s)",
			params == NULL ? "no params" : jerr.text);
	if (id < 1 || id > 2147483648LL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.id: %lld out of range 1..2147483648",
			(long long)id);
	ret = pa_acl_rule_delete(x->acl, (uint32_t)id, why, sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	sync_running(x);
	*result = json_true();
	return 0;
}
PA_RPC_METHOD(acl, "acl_rule_delete", rpc_acl_rule_delete,
	"delete the ACL rule with this id")

static int
rpc_acl_rule_list(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_acl_rpc_ctx *x = ctx;
	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	*result = pa_acl_rules_json(x->acl);
	if (*result == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	return 0;
}
PA_RPC_METHOD(acl, "acl_rule_list", rpc_acl_rule_list,
	"the ACL rules, best first, with hit counters")

static int
id_cmp(const void *a, const void *b)
{
	const struct pa_config_acl_rule *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id ? 1 : 0;
}

static int
parse_choice(const json_t *v, const char *path, const char *a, const char *b,
		bool *is_b, struct pa_rpc_error *err)
{
	if (json_is_string(v) && strcmp(json_string_value(v), a) == 0) {
		*is_b = false;
		return 0;
	}
	if (json_is_string(v) && strcmp(json_string_value(v), b) == 0) {
		*is_b = true;
		return 0;
	}
	return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
		"%s: expected \"%s\" or \"%s\"", path, a, b);
}

static int
rpc_acl_rules_replace(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_acl_rpc_ctx *x = ctx;
	struct pa_config_acl table;
	char why[PA_RPC_MSG_MAX], path[64];
	const char *key;
	const json_t *v, *rules;
	bool drop = false;
	size_t i;
	int ret = -1;

	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected {\"default\": ..., \"rules\": [...]}");
	json_object_foreach((json_t *)params, key, v) {
		if (strcmp(key, "default") != 0 && strcmp(key, "rules") != 0 &&
		    strcmp(key, "non_ip") != 0)
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.%s: unknown key", key);
	}
	memset(&table, 0, sizeof(table));
	pa_acl_export(x->acl, &table);	/* current default and non_ip */
	free(table.rules);
	table.rules = NULL;
	table.n_rules = 0;
	v = json_object_get(params, "default");
	if (v != NULL) {
		if (parse_choice(v, "params.default", "permit", "drop", &drop,
				err) != 0)
			return -1;
		table.def = drop ? PA_ACL_DROP : PA_ACL_PERMIT;
	}
	v = json_object_get(params, "non_ip");
	if (v != NULL) {
		if (parse_choice(v, "params.non_ip", "forward", "drop", &drop,
				err) != 0)
			return -1;
		table.non_ip_drop = drop;
	}
	rules = json_object_get(params, "rules");
	if (!json_is_array(rules))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.rules: expected an array of rules");
	table.rules = calloc(json_array_size(rules) + 1, sizeof(*table.rules));
	if (table.rules == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR, "out of memory");
	json_array_foreach(rules, i, v) {
		snprintf(path, sizeof(path), "params.rules[%zu]", i);
		if (pa_acl_config_parse_rule(v, x->running, path,
				&table.rules[i], why, sizeof(why)) != 0) {
			pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "%s", why);
			goto out;
		}
		table.n_rules = (unsigned int)i + 1;
	}
	qsort(table.rules, table.n_rules, sizeof(*table.rules), id_cmp);
	for (i = 1; i < table.n_rules; i++) {
		if (table.rules[i].id == table.rules[i - 1].id) {
			pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.rules: duplicate id %u",
				table.rules[i].id);
			goto out;
		}
	}
	ret = pa_acl_rules_replace(x->acl, &table, why, sizeof(why));
	if (ret != 0) {
		core_error(ret, why, err);
		ret = -1;
		goto out;
	}
	sync_running(x);
	*result = json_pack("{s:i}", "rules", (int)table.n_rules);
	ret = 0;
out:
	free(table.rules);
	return ret;
}
PA_RPC_METHOD(acl, "acl_rules_replace", rpc_acl_rules_replace,
	"replace the whole ACL atomically: {\"default\", \"rules\", \"non_ip\"?}")
