/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "protect" section: {"syn_timeout_s": S, "syn_defer": bool,
 * "src_new_flows": {"rate": R, "burst": B, "prefix4": 32, "prefix6": 64},
 * "blocklist": "FILE"}.
 * Parsed after "lb" (PA_CONFIG_ORDER_PROTECT), whose tcp_timeout bounds
 * syn_timeout_s.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pa_protect_config.h"

#define PROTECT(m)	PA_DECODE_AT(struct pa_config_protect, m)
#define SRC(m)		PA_DECODE_AT(struct pa_protect_src_tmp, m)

/* src_new_flows decoded into plain members, then copied. */
struct pa_protect_src_tmp {
	uint32_t rate;
	uint32_t burst;
	bool has_burst;
	uint8_t prefix4;
	uint8_t prefix6;
};

static const struct pa_decode_field src_fields[] = {
	{ .name = "rate", .type = PA_DECODE_INT, .required = true,
	  .min = 1, .max = PA_PROTECT_MAX_RATE, SRC(rate) },
	{ .name = "burst", .type = PA_DECODE_INT,
	  .min = 1, .max = PA_PROTECT_MAX_RATE, SRC(burst),
	  PA_DECODE_PRESENT(struct pa_protect_src_tmp, has_burst) },
	{ .name = "prefix4", .type = PA_DECODE_INT, .min = 1, .max = 32,
	  SRC(prefix4) },
	{ .name = "prefix6", .type = PA_DECODE_INT, .min = 1, .max = 128,
	  SRC(prefix6) },
};

static int
src_decode(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_protect *p = out;
	struct pa_protect_src_tmp t = { .prefix4 = 32, .prefix6 = 64 };
	int rc;

	(void)f;
	(void)arg;
	rc = pa_decode_object(v, path, src_fields, PA_DECODE_N(src_fields),
		&t, NULL, err, err_len);
	if (rc != 0)
		return rc;
	p->src_new_flows.enabled = true;
	p->src_new_flows.rate = t.rate;
	p->src_new_flows.burst = t.has_burst ? t.burst : t.rate;
	p->src_new_flows.prefix4 = t.prefix4;
	p->src_new_flows.prefix6 = t.prefix6;
	return 0;
}

static json_t *
src_schema(const struct pa_decode_field *f)
{
	return pa_decode_schema_object(src_fields, PA_DECODE_N(src_fields));
}

static json_t *
blocklist_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:i, s:s}", "type", "string", "minLength", 1,
		"description", "a file of prefixes, one a line, loaded at start");
}

static int
blocklist_decode(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_protect *p = out;
	const char *s;

	(void)f;
	(void)arg;
	if (!json_is_string(v))
		return pa_decode_fail(err, err_len,
			"%s: expected a file name (string)", path);
	s = json_string_value(v);
	if (s[0] == '\0')
		return pa_decode_fail(err, err_len, "%s: empty file name",
			path);
	free(p->blocklist);
	p->blocklist = strdup(s);
	if (p->blocklist == NULL)
		return pa_decode_nomem(err, err_len, path);
	return 0;
}

static const struct pa_decode_field protect_fields[] = {
	{ .name = "syn_timeout_s", .type = PA_DECODE_INT, .min = 1,
	  .max = PA_PROTECT_MAX_SYN_TIMEOUT_S, PROTECT(syn_timeout_s) },
	{ .name = "syn_defer", .type = PA_DECODE_BOOL, PROTECT(syn_defer) },
	{ .name = "src_new_flows", .type = PA_DECODE_CUSTOM,
	  .decode = src_decode, .schema = src_schema },
	{ .name = "blocklist", .type = PA_DECODE_CUSTOM,
	  .decode = blocklist_decode, .schema = blocklist_schema },
};

static json_t *
protect_schema(void)
{
	return pa_decode_schema_object(protect_fields,
		PA_DECODE_N(protect_fields));
}

static int
protect_parse(const json_t *v, struct pa_config *cfg,
		const struct pa_config_opts *opts, char *err, size_t err_len)
{
	struct pa_config_protect *p = &cfg->protect;
	int rc;

	(void)opts;
	if (v == NULL)
		return 0;
	rc = pa_decode_object(v, "$.protect", protect_fields,
		PA_DECODE_N(protect_fields), p, NULL, err, err_len);
	if (rc != 0)
		return rc;
	if (p->syn_timeout_s != 0 &&
	    p->syn_timeout_s >= cfg->lb.flow_table.tcp_timeout)
		return pa_decode_fail(err, err_len,
			"$.protect.syn_timeout_s: %u is not below lb.flow_table.tcp_timeout (%u)",
			p->syn_timeout_s, cfg->lb.flow_table.tcp_timeout);
	p->present = true;
	return 0;
}

static void
protect_clear(struct pa_config *cfg)
{
	free(cfg->protect.blocklist);
	cfg->protect.blocklist = NULL;
}

static int
protect_to_json(const struct pa_config *cfg, json_t **out)
{
	const struct pa_config_protect *p = &cfg->protect;
	json_t *o, *src;

	if (!p->present)
		return 0;
	o = json_object();
	if (o == NULL)
		return -ENOMEM;
	if (p->syn_timeout_s != 0)
		json_object_set_new(o, "syn_timeout_s",
			json_integer(p->syn_timeout_s));
	if (p->syn_defer)
		json_object_set_new(o, "syn_defer", json_true());
	if (p->src_new_flows.enabled) {
		src = json_pack("{s:I, s:I, s:I, s:I}",
			"rate", (json_int_t)p->src_new_flows.rate,
			"burst", (json_int_t)p->src_new_flows.burst,
			"prefix4", (json_int_t)p->src_new_flows.prefix4,
			"prefix6", (json_int_t)p->src_new_flows.prefix6);
		if (src == NULL || json_object_set_new(o, "src_new_flows",
				src) != 0) {
			json_decref(o);
			return -ENOMEM;
		}
	}
	if (p->blocklist != NULL)
		json_object_set_new(o, "blocklist",
			json_string(p->blocklist));
	*out = o;
	return 0;
}

static struct pa_config_section protect_section = {
	.key = "protect",
	.order = PA_CONFIG_ORDER_PROTECT,
	.parse = protect_parse,
	.clear = protect_clear,
	.to_json = protect_to_json,
	.schema = protect_schema,
};
PA_CONFIG_SECTION_REGISTER(protect_section)
