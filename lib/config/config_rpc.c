/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapter of the config library: "config_get". */

#include <stddef.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_rpc.h"

/* Borrowed from the daemon; only the control thread reads or sets it. */
static const struct pa_config *running_cfg;

void
pa_config_rpc_set_running(const struct pa_config *cfg)
{
	running_cfg = cfg;
}

static int
config_get(const json_t *params, json_t **result, struct pa_rpc_error *err)
{
	json_t *doc;

	if (pa_rpc_no_params(params, err) < 0)
		return -1;
	if (running_cfg == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
				"no configuration loaded");
	doc = pa_config_to_json(running_cfg);
	if (doc == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
				"out of memory");
	*result = doc;
	return 0;
}

PA_RPC_REGISTER("config_get", config_get,
		"the running configuration, in the file's schema")
