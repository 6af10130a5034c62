/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON-RPC adapter of the config library: config_get, config_save,
 * config_validate. */

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_decode.h"
#include "pa_rpc.h"

PA_RPC_SUBSYSTEM(config, "config", "no configuration loaded");

static json_t *
running_view(void *ctx)
{
	const struct pa_config_rpc_ctx *x = ctx;

	return pa_config_to_json(x->running);
}

static int
config_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return pa_rpc_view(params, running_view, ctx, result, err);
}

PA_RPC_METHOD_SCHEMA(config, "config_get", config_get,
		"the running configuration, in the file's schema",
		.result_json = "{\"type\": \"object\", \"description\": \"the running configuration (config_validate's params)\"}")

/* Errors that say the path is wrong are the caller's; the rest are ours. */
static bool
path_errno(int e)
{
	switch (e) {
	case EACCES: case EPERM: case ENOENT: case ENOTDIR: case EISDIR:
	case EROFS: case ENAMETOOLONG: case ELOOP: case EINVAL: case EXDEV:
		return true;
	default:
		return false;
	}
}

/* config_save: {"path"?: "FILE"}, or no params (the daemon's file). */
struct save_params {
	const char *path;
};

static int
save_path_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct save_params *p = out;

	if (p->path[0] == '\0')
		return pa_decode_fail(err, err_len, "%s: empty", path);
	if (strlen(p->path) >= PATH_MAX)
		return pa_decode_fail(err, err_len,
				"%s: longer than %d bytes", path,
				PATH_MAX - 1);
	return 0;
}

/* save_path_check: not empty, shorter than PATH_MAX */
static json_t *
save_path_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:i, s:i, s:s}", "type", "string",
			"minLength", 1, "maxLength", PATH_MAX - 1,
			"description", "the file to write (default: the daemon's own)");
}

static const struct pa_decode_field save_fields[] = {
	{ .name = "path", .type = PA_DECODE_STRING,
	  PA_DECODE_AT(struct save_params, path), .check = save_path_check,
	  .schema = save_path_schema },
};

static int
config_save(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	const struct pa_config_rpc_ctx *x = ctx;
	pa_config_saver_t saver = x->saver != NULL ? x->saver :
		pa_config_save_file;
	struct save_params p = { .path = NULL };
	char why[PA_RPC_MSG_MAX];
	const char *path;
	int rc;

	/* Absent, null, [] and {} ask for the daemon's own file; anything
	 * else is decoded, and the decoder names what is wrong with it. */
	if (pa_rpc_no_params(params, NULL) != 0) {
		rc = pa_decode_object(params, "params", save_fields,
				PA_DECODE_N(save_fields), &p, NULL, why,
				sizeof(why));
		if (rc != 0)
			return pa_rpc_error_errno(err, rc, "", why);
	}
	path = p.path;
	if (path == NULL)
		path = x->path;
	if (path == NULL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.path: required: the daemon was started without a configuration file");
	rc = saver(x->running, path, why, sizeof(why));
	if (rc != 0)
		return pa_rpc_error_set(err, path_errno(-rc) ?
			PA_RPC_INVALID_PARAMS : PA_RPC_INTERNAL_ERROR,
			"%s%s", path_errno(-rc) ? "params.path: " : "", why);
	*result = json_true();
	return 0;
}

PA_RPC_METHOD_SCHEMA(config, "config_save", config_save,
		"write the running configuration to its file (or params.path), atomically",
		PA_RPC_PARAMS(save_fields), .result_json = "{\"const\": true}")

static int
config_validate(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	const struct pa_config_rpc_ctx *x = ctx;
	char why[PA_RPC_MSG_MAX];
	struct pa_config *cfg;

	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected a configuration document (an object)");
	cfg = pa_config_load_json(params, &x->opts, why, sizeof(why));
	if (cfg == NULL)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS, "%s", why);
	pa_config_free(cfg);
	*result = json_true();
	return 0;
}

PA_RPC_METHOD_SCHEMA(config, "config_validate", config_validate,
		"check a configuration document without applying it",
		.params_fn = pa_config_schema, .result_json = "{\"const\": true}")
