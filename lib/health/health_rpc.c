/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapter of the backend health checks: lb_health_get (the
 * prober's counters; each backend's verdict is in lb_service_list). */
#include "pa_health_lb.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(lb_health, "lb_health", "health checks not running (replay mode)");

static int
rpc_lb_health_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_health_lb_snapshot s;

	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	pa_health_lb_snapshot(ctx, &s);
	*result = pa_health_lb_snapshot_json(&s);
	if (*result == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	return 0;
}
PA_RPC_METHOD_SCHEMA(lb_health, "lb_health_get", rpc_lb_health_get,
	"the backend health checks: targets by verdict, probes by result, sockets in flight",
	.result_json = "{\"type\": \"object\", \"description\": \"targets by verdict, probes by result, sockets in flight\"}")
