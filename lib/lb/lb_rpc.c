/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapters of the load balancer: lb_service_add, _delete, _list,
 * lb_backend_add, _delete, _set. Services and backends are decoded by the
 * config loader's own parsers, so they mean the same in a file and over
 * RPC; messages name the parameter ("params.vip: ..."). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pa_lb.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(lb, "lb", "LB not running");

/* The LB's reasons do not name the parameter: "params: <why>". */
static int
core_error(int ret, const char *why, struct pa_rpc_error *err)
{
	return pa_rpc_error_errno(err, ret, "params: ", why);
}

/* Keep config_get / config_save in step with the live services. */
static void
sync_running(const struct pa_lb_rpc_ctx *x)
{
	if (x->running == NULL)
		return;
	if (pa_lb_export(x->lb, &x->running->lb) == 0)
		x->running->lb.present = true;
}

/* "service" (a name) of @p params. */
static int
get_service_name(const json_t *params, const char **name,
		struct pa_rpc_error *err)
{
	const json_t *v;

	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected an object with \"service\"");
	v = json_object_get(params, "service");
	if (v == NULL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.service: required key missing");
	if (!json_is_string(v))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.service: expected a service name");
	*name = json_string_value(v);
	return 0;
}

static int
get_addr(const json_t *params, struct pa_ip_addr *a, struct pa_rpc_error *err)
{
	char why[PA_RPC_MSG_MAX];
	const json_t *v = json_object_get(params, "addr");

	if (v == NULL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.addr: required key missing");
	if (!json_is_string(v) || pa_net_parse_ip(json_string_value(v), a,
			why, sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.addr: expected an IPv4 or IPv6 address");
	return 0;
}

/* Refuse keys of @p params outside @p keys. */
static int
only_keys(const json_t *params, const char *const *keys,
		struct pa_rpc_error *err)
{
	const char *k;
	const json_t *v;
	unsigned int i;

	json_object_foreach((json_t *)params, k, v) {
		for (i = 0; keys[i] != NULL; i++)
			if (strcmp(k, keys[i]) == 0)
				break;
		if (keys[i] == NULL)
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.%s: unknown key", k);
	}
	return 0;
}

static int
rpc_lb_service_add(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_lb_rpc_ctx *x = ctx;
	struct pa_config_service svc;
	char why[PA_RPC_MSG_MAX];
	int ret;

	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected a service object");
	if (pa_lb_config_parse_service(params, x->running != NULL ?
			&x->running->lb : NULL, "params", &svc, why, sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "%s", why);
	ret = pa_lb_service_add(x->lb, &svc, why, sizeof(why));
	if (ret == 0) {
		sync_running(x);
		*result = json_pack("{s:s}", "name", svc.name);
	}
	pa_lb_config_service_clear(&svc);
	return ret != 0 ? core_error(ret, why, err) : 0;
}
PA_RPC_METHOD(lb, "lb_service_add", rpc_lb_service_add,
	"add a service: name vip port proto [scheduler forward table_size backends]")

static int
rpc_lb_service_delete(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_lb_rpc_ctx *x = ctx;
	static const char *const keys[] = { "name", NULL };
	char why[PA_RPC_MSG_MAX];
	const json_t *v;
	int ret;

	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected {\"name\": \"...\"}");
	if (only_keys(params, keys, err) != 0)
		return -1;
	v = json_object_get(params, "name");
	if (!json_is_string(v))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.name: expected a service name");
	ret = pa_lb_service_delete(x->lb, json_string_value(v), why,
		sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	sync_running(x);
	*result = json_true();
	return 0;
}
PA_RPC_METHOD(lb, "lb_service_delete", rpc_lb_service_delete,
	"delete a service by name")

static int
rpc_lb_service_list(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_lb_rpc_ctx *x = ctx;
	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	*result = pa_lb_services_json(x->lb);
	if (*result == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	return 0;
}
PA_RPC_METHOD(lb, "lb_service_list", rpc_lb_service_list,
	"services with their backends' flows, packets and bytes")

static int
rpc_lb_backend_add(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_lb_rpc_ctx *x = ctx;
	struct pa_config_service svc;
	struct pa_config_backend be;
	char why[PA_RPC_MSG_MAX];
	const char *name = NULL;
	json_t *obj;
	int ret;

	if (get_service_name(params, &name, err) != 0)
		return -1;
	memset(&svc, 0, sizeof(svc));
	ret = pa_lb_service_get(x->lb, name, &svc);
	if (ret == -ENOENT)
		return pa_rpc_error_set(err, PA_RPC_ERR_NOT_FOUND,
			"params.service: no service '%s'", name);
	if (ret != 0)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	/* the backend object is params without "service" */
	obj = json_deep_copy(params);
	if (obj == NULL) {
		pa_lb_config_service_clear(&svc);
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	}
	json_object_del(obj, "service");
	ret = pa_lb_config_parse_backend(obj, &svc, "params", &be, why,
		sizeof(why));
	json_decref(obj);
	pa_lb_config_service_clear(&svc);
	if (ret != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "%s", why);
	ret = pa_lb_backend_add(x->lb, name, &be, why, sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	sync_running(x);
	*result = json_true();
	return 0;
}
PA_RPC_METHOD(lb, "lb_backend_add", rpc_lb_backend_add,
	"add a backend: service addr [port weight mac state]")

static int
rpc_lb_backend_delete(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_lb_rpc_ctx *x = ctx;
	static const char *const keys[] = { "service", "addr", NULL };
	char why[PA_RPC_MSG_MAX];
	struct pa_ip_addr a;
	const char *name = NULL;
	int ret;

	if (get_service_name(params, &name, err) != 0 ||
	    only_keys(params, keys, err) != 0 || get_addr(params, &a, err) != 0)
		return -1;
	ret = pa_lb_backend_delete(x->lb, name, &a, why, sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	sync_running(x);
	*result = json_true();
	return 0;
}
PA_RPC_METHOD(lb, "lb_backend_delete", rpc_lb_backend_delete,
	"delete a backend: service addr")

static int
rpc_lb_backend_set(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_lb_rpc_ctx *x = ctx;
	static const char *const keys[] = {
		"service", "addr", "weight", "state", NULL
	};
	static const char *const states[] = {
		[PA_LB_UP] = "up", [PA_LB_DOWN] = "down", [PA_LB_DRAIN] = "drain",
	};
	char why[PA_RPC_MSG_MAX];
	enum pa_lb_state st, *stp = NULL;
	uint32_t weight, *wp = NULL;
	struct pa_ip_addr a;
	const char *name = NULL;
	const json_t *v;
	unsigned int i;
	int ret;

	if (get_service_name(params, &name, err) != 0 ||
	    only_keys(params, keys, err) != 0 || get_addr(params, &a, err) != 0)
		return -1;
	v = json_object_get(params, "weight");
	if (v != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > 65535)
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.weight: expected an integer 0..65535");
		weight = (uint32_t)json_integer_value(v);
		wp = &weight;
	}
	v = json_object_get(params, "state");
	if (v != NULL) {
		for (i = 0; i < RTE_DIM(states); i++)
			if (json_is_string(v) &&
			    strcmp(json_string_value(v), states[i]) == 0)
				break;
		if (i == RTE_DIM(states))
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.state: expected \"up\", \"down\" or \"drain\"");
		st = (enum pa_lb_state)i;
		stp = &st;
	}
	if (wp == NULL && stp == NULL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: nothing to set (\"weight\" and/or \"state\")");
	ret = pa_lb_backend_set(x->lb, name, &a, wp, stp, why, sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	sync_running(x);
	*result = json_true();
	return 0;
}
PA_RPC_METHOD(lb, "lb_backend_set", rpc_lb_backend_set,
	"change a backend: service addr [weight] [state up|down|drain]")
