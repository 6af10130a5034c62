/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapter of the neighbour subsystem: neigh_list. */
#include "pa_neigh.h"
#include "pa_rpc.h"

static struct pa_neigh *rpc_neigh;

void
pa_neigh_rpc_set(struct pa_neigh *n)
{
	rpc_neigh = n;
}

static int
rpc_neigh_list(const json_t *params, json_t **result, struct pa_rpc_error *err)
{
	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	*result = pa_neigh_list_json(rpc_neigh, pa_neigh_now_ms());
	if (*result == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	return 0;
}
PA_RPC_REGISTER("neigh_list", rpc_neigh_list,
	"the neighbour cache: address, MAC, port, state, age, target, probes")
