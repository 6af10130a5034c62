/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapters of the load balancer: lb_service_add, _delete, _list,
 * lb_backend_add, _delete, _set. Services and backends are decoded by the
 * config loader's own parsers, so they mean the same in a file and over
 * RPC, the other parameters by field tables of the decoding kit
 * (pa_decode.h); messages name the parameter ("params.vip: ..."). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pa_decode.h"
#include "pa_lb.h"
#include "pa_lb_config.h"
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

/*
 * The parameters of lb_service_delete, lb_backend_delete and
 * lb_backend_set; a service is named by any string (an unknown one is
 * "no service", -32001, from the core).
 */
struct lb_params {
	const char *name;		/**< lb_service_delete */
	const char *service;
	struct pa_ip_addr addr;
	uint32_t weight;
	enum pa_lb_state state;
	bool has_weight;
	bool has_state;
};

#define LB_PARAM(m)	PA_DECODE_AT(struct lb_params, m)

static const struct pa_decode_field service_delete_fields[] = {
	{ .name = "name", .type = PA_DECODE_STRING, .required = true,
	  LB_PARAM(name) },
};

static const struct pa_decode_field backend_delete_fields[] = {
	{ .name = "service", .type = PA_DECODE_STRING, .required = true,
	  LB_PARAM(service) },
	{ .name = "addr", .type = PA_DECODE_IP, .required = true,
	  LB_PARAM(addr) },
};

static const struct pa_decode_field backend_set_fields[] = {
	{ .name = "service", .type = PA_DECODE_STRING, .required = true,
	  LB_PARAM(service) },
	{ .name = "addr", .type = PA_DECODE_IP, .required = true,
	  LB_PARAM(addr) },
	{ .name = "weight", .type = PA_DECODE_INT, .min = 0, .max = 65535,
	  LB_PARAM(weight), PA_DECODE_PRESENT(struct lb_params, has_weight) },
	{ .name = "state", .type = PA_DECODE_ENUM,
	  .names = pa_lb_config_state_names, LB_PARAM(state),
	  PA_DECODE_PRESENT(struct lb_params, has_state) },
};

/* Decode @p params with @p fields into @p p; -32602 naming the field
 * (-32603 if out of memory). */
static int
decode_params(const json_t *params, const struct pa_decode_field *fields,
		size_t n_fields, struct lb_params *p, struct pa_rpc_error *err)
{
	char why[PA_RPC_MSG_MAX];
	int ret;

	memset(p, 0, sizeof(*p));
	ret = pa_decode_object(params, "params", fields, n_fields, p, NULL,
			why, sizeof(why));
	return ret != 0 ? pa_rpc_error_errno(err, ret, "", why) : 0;
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
	if (pa_lb_config_vip_port_check(x->running, &svc, "params.vip", why,
			sizeof(why)) != 0) {
		pa_lb_config_service_clear(&svc);
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "%s", why);
	}
	ret = pa_lb_service_add(x->lb, &svc, why, sizeof(why));
	if (ret == 0) {
		sync_running(x);
		*result = json_pack("{s:s}", "name", svc.name);
	}
	pa_lb_config_service_clear(&svc);
	return ret != 0 ? core_error(ret, why, err) : 0;
}
PA_RPC_METHOD_SCHEMA(lb, "lb_service_add", rpc_lb_service_add,
	"add a service: name vip port proto [scheduler forward proxy_protocol table_size mss_clamp max_flows health backends]",
	.params_fn = pa_lb_config_service_schema,
	.result_json = "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}}, \"required\": [\"name\"]}",
	.errors = PA_RPC_ERRS_EXISTS)

static int
rpc_lb_service_delete(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_lb_rpc_ctx *x = ctx;
	char why[PA_RPC_MSG_MAX];
	struct lb_params p;
	int ret;

	if (decode_params(params, service_delete_fields,
			PA_DECODE_N(service_delete_fields), &p, err) != 0)
		return -1;
	ret = pa_lb_service_delete(x->lb, p.name, why, sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	sync_running(x);
	*result = json_true();
	return 0;
}
PA_RPC_METHOD_SCHEMA(lb, "lb_service_delete", rpc_lb_service_delete,
	"delete a service by name",
	PA_RPC_PARAMS(service_delete_fields), .result_json = "{\"const\": true}",
	.errors = PA_RPC_ERRS_NOT_FOUND)

/* Rendered as text, not as a jansson tree: 10,000 backends. */
static json_t *
services_view(void *ctx)
{
	struct pa_lb_rpc_ctx *x = ctx;
	json_t *r;
	size_t len;
	char *txt;

	txt = pa_lb_services_text(x->lb, &len);
	r = txt != NULL ? pa_rpc_raw_result(txt, len) : NULL;
	free(txt);
	return r;
}

static int
rpc_lb_service_list(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return pa_rpc_view(params, services_view, ctx, result, err);
}
PA_RPC_METHOD_SCHEMA(lb, "lb_service_list", rpc_lb_service_list,
	"services with their backends' flows, packets and bytes",
	.result_json = "{\"type\": \"array\", \"items\": {\"type\": \"object\", \"description\": \"a service with its backends' flows, packets and health\"}}")

static int
rpc_lb_backend_add(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_lb_rpc_ctx *x = ctx;
	struct pa_config_service svc;
	struct pa_config_backend be;
	char why[PA_RPC_MSG_MAX];
	const char *name;
	json_t *obj;
	int ret;

	/* "service" here; the rest of params is the backend object, decoded
	 * by the loader's own backend parser against that service. */
	if (pa_decode_want_object(params, "params", why, sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "%s", why);
	if (json_object_get(params, "service") == NULL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.service: required key missing");
	if (pa_decode_string(json_object_get(params, "service"),
			"params.service", &name, why, sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "%s", why);
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
	/* an fnat backend needs a pool address of its family */
	if (ret == 0)
		ret = pa_lb_config_backend_pool_check(x->running != NULL ?
			&x->running->lb : NULL, &svc, &be, "params", why,
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
/* a backend object, and the service's name */
static json_t *
backend_add_schema(void)
{
	json_t *s = pa_lb_config_backend_schema();

	if (s == NULL ||
	    json_object_set_new(json_object_get(s, "properties"), "service",
			json_pack("{s:s}", "type", "string")) != 0 ||
	    json_array_insert_new(json_object_get(s, "required"), 0,
			json_string("service")) != 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}
PA_RPC_METHOD_SCHEMA(lb, "lb_backend_add", rpc_lb_backend_add,
	"add a backend: service addr [port weight mac state]",
	.params_fn = backend_add_schema, .result_json = "{\"const\": true}",
	.errors = PA_RPC_ERRS_EXISTS | PA_RPC_ERRS_NOT_FOUND)

static int
rpc_lb_backend_delete(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_lb_rpc_ctx *x = ctx;
	char why[PA_RPC_MSG_MAX];
	struct lb_params p;
	int ret;

	if (decode_params(params, backend_delete_fields,
			PA_DECODE_N(backend_delete_fields), &p, err) != 0)
		return -1;
	ret = pa_lb_backend_delete(x->lb, p.service, &p.addr, why,
		sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	sync_running(x);
	*result = json_true();
	return 0;
}
PA_RPC_METHOD_SCHEMA(lb, "lb_backend_delete", rpc_lb_backend_delete,
	"delete a backend: service addr",
	PA_RPC_PARAMS(backend_delete_fields), .result_json = "{\"const\": true}",
	.errors = PA_RPC_ERRS_NOT_FOUND)

static int
rpc_lb_backend_set(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_lb_rpc_ctx *x = ctx;
	char why[PA_RPC_MSG_MAX];
	struct lb_params p;
	int ret;

	if (decode_params(params, backend_set_fields,
			PA_DECODE_N(backend_set_fields), &p, err) != 0)
		return -1;
	if (!p.has_weight && !p.has_state)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: nothing to set (\"weight\" and/or \"state\")");
	ret = pa_lb_backend_set(x->lb, p.service, &p.addr,
		p.has_weight ? &p.weight : NULL,
		p.has_state ? &p.state : NULL, why, sizeof(why));
	if (ret != 0)
		return core_error(ret, why, err);
	sync_running(x);
	*result = json_true();
	return 0;
}
/* backend_set_fields, and at least one of "weight" and "state" */
static json_t *
backend_set_schema(void)
{
	json_t *s = pa_decode_schema_object(backend_set_fields,
			PA_DECODE_N(backend_set_fields));

	if (s == NULL || json_object_set_new(s, "anyOf", json_pack(
			"[{s:[s]}, {s:[s]}]", "required", "weight",
			"required", "state")) != 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}
PA_RPC_METHOD_SCHEMA(lb, "lb_backend_set", rpc_lb_backend_set,
	"change a backend: service addr [weight] [state up|down|drain]",
	.params_fn = backend_set_schema, .result_json = "{\"const\": true}",
	.errors = PA_RPC_ERRS_NOT_FOUND)
