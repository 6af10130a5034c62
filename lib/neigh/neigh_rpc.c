/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapter of the neighbour subsystem: neigh_list. */
#include "pa_neigh.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(neigh, "neigh", "neighbours not running");

static json_t *
list_view(void *ctx)
{
	return pa_neigh_list_json(ctx, pa_neigh_now_ms());
}

static int
rpc_neigh_list(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return pa_rpc_view(params, list_view, ctx, result, err);
}
PA_RPC_METHOD_SCHEMA(neigh, "neigh_list", rpc_neigh_list,
	"the neighbour cache: address, MAC, port, state, age, target, probes",
	.result_json = "{\"type\": \"array\", \"items\": {\"type\": \"object\"}, \"description\": \"one entry per neighbour: address, MAC, port, state, age\"}")
