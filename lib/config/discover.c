/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpc.discover: the OpenRPC document of the registered methods
 * (docs/openrpc.json is its copy). Here, not in lib/rpc, because the
 * params' schemas come from the decoding kit's field tables
 * (decode_schema.c) and the configuration's sections (config_validate).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_decode.h"
#include "pa_rpc.h"

#define OPENRPC_VERSION	"1.2.6"

static const struct {
	const char *key;
	int code;
	const char *message;
	unsigned int flag;		/**< PA_RPC_ERRS_*; 0: every method */
} errors[] = {
	{ "InvalidParams", PA_RPC_INVALID_PARAMS,
	  "invalid params: the message names the parameter (\"params.id: ...\")",
	  0 },
	{ "InternalError", PA_RPC_INTERNAL_ERROR,
	  "internal error (out of memory, or the subsystem is not running)",
	  0 },
	{ "Exists", PA_RPC_ERR_EXISTS, "the object already exists",
	  PA_RPC_ERRS_EXISTS },
	{ "NotFound", PA_RPC_ERR_NOT_FOUND, "no such object",
	  PA_RPC_ERRS_NOT_FOUND },
	{ "Busy", PA_RPC_ERR_BUSY, "busy: try again", PA_RPC_ERRS_BUSY },
};

#define N_ERRORS	(sizeof(errors) / sizeof(errors[0]))

/* The params object's schema: {} (no params) unless the method says. */
static json_t *
params_schema(const struct pa_rpc_schema *sc)
{
	if (sc != NULL && sc->params != NULL)
		return pa_decode_schema_object(sc->params, sc->n_params);
	if (sc != NULL && sc->params_fn != NULL)
		return sc->params_fn();
	return json_pack("{s:s, s:{}, s:b}", "type", "object", "properties",
			"additionalProperties", 0);
}

/* One OpenRPC content descriptor per property of the params' schema. */
static int
add_params(json_t *method, const json_t *ps)
{
	const json_t *props = json_object_get(ps, "properties");
	const json_t *req = json_object_get(ps, "required");
	json_t *list, *cd, *r;
	const char *key;
	json_t *sch;
	bool required;
	size_t i;

	list = json_array();
	if (list == NULL || json_object_set_new(method, "params", list) != 0)
		return -ENOMEM;
	json_object_foreach((json_t *)props, key, sch) {
		required = false;
		json_array_foreach(req, i, r)
			if (json_is_string(r) &&
			    strcmp(json_string_value(r), key) == 0)
				required = true;
		cd = json_pack("{s:s, s:b, s:O}", "name", key,
				"required", required, "schema", sch);
		if (cd == NULL || json_array_append_new(list, cd) != 0)
			return -ENOMEM;
	}
	return 0;
}

static json_t *
method_json(const struct pa_rpc_method *m)
{
	const struct pa_rpc_schema *sc = m->schema;
	json_t *o, *ps, *res, *errs;
	char ref[64];
	size_t i;

	ps = params_schema(sc);
	if (ps == NULL)
		return NULL;
	res = sc != NULL && sc->result_json != NULL ?
		pa_decode_schema_text(sc->result_json) : json_object();
	o = json_pack("{s:s, s:s, s:s}", "name", m->name,
			"summary", m->help != NULL ? m->help : m->name,
			"paramStructure", "by-name");
	if (o == NULL || res == NULL || add_params(o, ps) != 0)
		goto fail;
	if (json_object_set_new(o, "result", json_pack("{s:s, s:O}",
			"name", "result", "schema", res)) != 0)
		goto fail;
	errs = json_array();
	if (errs == NULL || json_object_set_new(o, "errors", errs) != 0)
		goto fail;
	for (i = 0; i < N_ERRORS; i++) {
		if (errors[i].flag != 0 &&
		    (sc == NULL || !(sc->errors & errors[i].flag)))
			continue;
		snprintf(ref, sizeof(ref), "#/components/errors/%s",
				errors[i].key);
		if (json_array_append_new(errs,
				json_pack("{s:s}", "$ref", ref)) != 0)
			goto fail;
	}
	/* the whole params object, unknown keys refused: what OpenRPC's
	 * by-name content descriptors cannot say */
	if (json_object_set_new(o, "x-params-schema", ps) != 0) {
		ps = NULL;
		goto fail;
	}
	json_decref(res);
	return o;
fail:
	json_decref(ps);
	json_decref(res);
	json_decref(o);
	return NULL;
}

json_t *
pa_config_openrpc(void)
{
	json_t *doc, *methods, *names, *comp, *m, *n;
	const struct pa_rpc_method *rm;
	size_t i;

	names = pa_rpc_method_names();
	doc = json_pack("{s:s, s:{s:s, s:s, s:s, s:{s:s}}, s:[], s:{s:{}}}",
		"openrpc", OPENRPC_VERSION,
		"info",
		  "title", "pktaccel JSON-RPC API",
		  "version", PA_VERSION,
		  "description", "JSON-RPC 2.0 over the daemon's Unix stream socket (default /run/pktaccel/pktaccel.sock): requests are objects or batch arrays, each response is one line. Every method takes its params by name (an object; absent, null, [] or {} when it takes none) and refuses unknown keys (x-params-schema). docs/rpc.md says what each method does.",
		  "license", "name", "BSD-3-Clause",
		"methods",
		"components", "errors");
	if (doc == NULL || names == NULL)
		goto fail;
	methods = json_object_get(doc, "methods");
	json_array_foreach(names, i, n) {
		rm = pa_rpc_find(json_string_value(n));
		if (rm == NULL)
			continue;
		m = method_json(rm);
		if (m == NULL || json_array_append_new(methods, m) != 0)
			goto fail;
	}
	comp = json_object_get(json_object_get(doc, "components"), "errors");
	for (i = 0; i < N_ERRORS; i++)
		if (json_object_set_new(comp, errors[i].key,
				json_pack("{s:i, s:s}", "code", errors[i].code,
				"message", errors[i].message)) != 0)
			goto fail;
	json_decref(names);
	return doc;
fail:
	json_decref(names);
	json_decref(doc);
	return NULL;
}

static json_t *
discover_view(void *ctx)
{
	(void)ctx;
	return pa_config_openrpc();
}

static int
rpc_discover(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return pa_rpc_view(params, discover_view, ctx, result, err);
}
PA_RPC_REGISTER_SCHEMA("rpc.discover", rpc_discover,
	"the OpenRPC document of this API: every method, its params (JSON Schema), result and errors",
	.result_json = "{\"type\": \"object\", \"required\": [\"openrpc\", \"info\", \"methods\"], \"description\": \"an OpenRPC 1.2.x document (docs/openrpc.json)\"}")
