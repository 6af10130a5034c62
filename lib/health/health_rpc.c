/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapter of the backend health checks: lb_health_get (the
 * prober's counters; each backend's verdict is in lb_service_list). */
#include "pa_health_lb.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(lb_health, "lb_health", "health checks not running (replay mode)");

static json_t *
snapshot_view(void *ctx)
{
	struct pa_health_lb_snapshot s;

	pa_health_lb_snapshot(ctx, &s);
	return pa_health_lb_snapshot_json(&s);
}

static int
rpc_lb_health_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return pa_rpc_view(params, snapshot_view, ctx, result, err);
}
PA_RPC_METHOD_SCHEMA(lb_health, "lb_health_get", rpc_lb_health_get,
	"the backend health checks: targets by verdict, probes by result, sockets in flight",
	.result_json = "{\"type\": \"object\", \"description\": \"targets by verdict, probes by result, sockets in flight\"}")
