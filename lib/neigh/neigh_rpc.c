/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapter of the neighbour subsystem: neigh_list. */
#include "pa_neigh.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(neigh, "neigh", "neighbours not running");

static int
rpc_neigh_list(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	*result = pa_neigh_list_json(ctx, pa_neigh_now_ms());
	if (*result == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	return 0;
}
PA_RPC_METHOD_SCHEMA(neigh, "neigh_list", rpc_neigh_list,
	"the neighbour cache: address, MAC, port, state, age, target, probes",
	.result_json = "{\"type\": \"array\", \"items\": {\"type\": \"object\"}, \"description\": \"one entry per neighbour: address, MAC, port, state, age\"}")
