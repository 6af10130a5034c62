/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The readiness's RPC adapter, the "health" subsystem (the methods' names
 * are the contract; lib/health is the backends' prober): health_get
 * (readiness, drain, services, lcores, routes) and health_set (drain,
 * undrain). Context: the struct pa_ready.
 */
#include <errno.h>

#include "pa_announce.h"
#include "pa_clock.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(health, "health", "health not running");

static json_t *
ready_view(void *ctx)
{
	return pa_ready_json(ctx);
}

static int
rpc_health_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return pa_rpc_view(params, ready_view, ctx, result, err);
}
PA_RPC_METHOD_SCHEMA(health, "health_get", rpc_health_get,
	"readiness, drain, services and announced routes",
	.result_json = "{\"type\": \"object\", \"properties\": {\"ready\": {\"type\": \"boolean\"}, \"draining\": {\"type\": \"boolean\"}, \"reasons\": {\"type\": \"array\"}, \"services\": {\"type\": \"object\"}}, \"required\": [\"ready\", \"draining\", \"reasons\", \"services\"]}")

struct set_params {
	bool draining;
};

static const struct pa_decode_field set_fields[] = {
	{ .name = "draining", .type = PA_DECODE_BOOL, .required = true,
	  PA_DECODE_AT(struct set_params, draining) },
};

static int
rpc_health_set(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct set_params p = { 0 };
	char why[PA_CONFIG_ERR_MAX];

	if (pa_decode_object(params, "params", set_fields,
			PA_DECODE_N(set_fields), &p, NULL, why, sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "%s", why);
	pa_ready_set_draining(ctx, p.draining);
	/* answered once the routes follow (within one poll) */
	pa_ready_poll(ctx, (uint64_t)pa_clock_ms());
	*result = json_true();
	return 0;
}
PA_RPC_METHOD_SCHEMA(health, "health_set", rpc_health_set,
	"{\"draining\": bool}: withdraw the VIPs (keep forwarding), or announce again",
	PA_RPC_PARAMS(set_fields), .result_json = "{\"const\": true}")
