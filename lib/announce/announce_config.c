/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "announce" section: {"table": N, "drain_s": S}. The routes' device
 * is the first port's kernel_if, so a port with one is required (except
 * in replay mode, whose one port replaces "ports" and announces nothing).
 */
#include <errno.h>
#include <string.h>

#include "pa_announce.h"

#define ANNOUNCE(m)	PA_DECODE_AT(struct pa_config_announce, m)

static const struct pa_decode_field announce_fields[] = {
	{ .name = "table", .type = PA_DECODE_INT, .required = true,
	  .min = 1, .max = UINT32_MAX, ANNOUNCE(table),
	  .doc = "a kernel routing table, not 253..255" },
	{ .name = "drain_s", .type = PA_DECODE_INT, .min = 0,
	  .max = PA_ANNOUNCE_MAX_DRAIN_S, ANNOUNCE(drain_s) },
};

int
pa_announce_port(const struct pa_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->n_ports; i++)
		if (cfg->ports[i].kernel_if[0] != '\0')
			return (int)i;
	return -1;
}

static int
announce_parse(const json_t *v, struct pa_config *cfg,
		const struct pa_config_opts *opts, char *err, size_t err_len)
{
	struct pa_config_announce *a = &cfg->announce;
	int rc;

	if (v == NULL)
		return 0;
	rc = pa_decode_object(v, "$.announce", announce_fields,
		PA_DECODE_N(announce_fields), a, NULL, err, err_len);
	if (rc != 0)
		return rc;
	if (a->table >= 253 && a->table <= 255)
		return pa_decode_fail(err, err_len,
			"$.announce.table: %u is a reserved table (253 default, 254 main, 255 local): use 1..252 or 256..4294967295",
			a->table);
	if ((opts == NULL || !opts->replay) && pa_announce_port(cfg) < 0)
		return pa_decode_fail(err, err_len,
			"$.announce: needs a routed port with \"kernel_if\" (the routes' device)");
	a->present = true;
	return 0;
}

static int
announce_to_json(const struct pa_config *cfg, json_t **out)
{
	const struct pa_config_announce *a = &cfg->announce;

	if (!a->present)
		return 0;
	*out = json_pack("{s:I, s:I}", "table", (json_int_t)a->table,
		"drain_s", (json_int_t)a->drain_s);
	return *out != NULL ? 0 : -ENOMEM;
}

static json_t *
announce_schema(void)
{
	return pa_decode_schema_object(announce_fields,
		PA_DECODE_N(announce_fields));
}

static struct pa_config_section announce_section = {
	.key = "announce",
	.order = PA_CONFIG_ORDER_ANNOUNCE,
	.parse = announce_parse,
	.to_json = announce_to_json,
	.schema = announce_schema,
};
PA_CONFIG_SECTION_REGISTER(announce_section)
