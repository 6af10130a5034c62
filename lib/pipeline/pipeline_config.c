/* SPDX-License-Identifier: BSD-3-Clause */
/* The "pipeline" configuration section: mode, stage lcores, rings, idle. */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_decode.h"

#define CFG_DEFAULT_RING_SIZE	1024
#define CFG_DEFAULT_BURST	32
#define CFG_DEFAULT_TX_DRAIN_US	100
#define CFG_DEFAULT_SPIN_POLLS	1000
#define CFG_MAX_SPIN_POLLS	100000000
#define CFG_DEFAULT_MAX_SLEEP_US	100
#define CFG_MAX_MAX_SLEEP_US	10000
/* The watchdog (lib/announce): at least 10 of the longest idle naps
 * (CFG_MAX_MAX_SLEEP_US), so a napping lcore is never taken for stalled. */
#define CFG_DEFAULT_STALL_MS	1000
#define CFG_MIN_STALL_MS	100
#define CFG_MAX_STALL_MS	600000

static const char *const stage_names[PA_CONFIG_STAGE_MAX + 1] = {
	[PA_CONFIG_STAGE_RX] = "rx",
	[PA_CONFIG_STAGE_CLASSIFY] = "classify",
	[PA_CONFIG_STAGE_LB] = "lb",
	[PA_CONFIG_STAGE_TX] = "tx",
	[PA_CONFIG_STAGE_WORKER] = "worker",
	[PA_CONFIG_STAGE_MAX] = NULL,
};

static const char *const mode_names[] = {
	[PA_PIPELINE_RTC] = "rtc",
	[PA_PIPELINE_STAGED] = "pipeline",
	NULL
};

static const char *const idle_mode_names[] = {
	[PA_IDLE_BUSY] = "busy",
	[PA_IDLE_ADAPTIVE] = "adaptive",
	NULL
};

static bool
stage_in_mode(int stage, enum pa_pipeline_mode mode)
{
	if (mode == PA_PIPELINE_RTC)
		return stage == PA_CONFIG_STAGE_WORKER;
	return stage != PA_CONFIG_STAGE_WORKER;
}

static bool
names_lcore(const struct pa_config_pipeline *pl, unsigned int st,
		unsigned int lcore)
{
	unsigned int i;

	for (i = 0; i < pl->n_lcores[st]; i++)
		if (pl->lcores[st][i] == lcore)
			return true;
	return false;
}

/*
 * Each lb lcore has its own flow table, so with several lb lcores a
 * flow's lb lcore must follow from its flow hash alone. A packet stays on
 * its lcore while the next stage runs there, so one received on an lcore
 * that also runs classify and lb would meet the lb stage there whatever
 * its hash (a reply or an ICMP error about the flow, received on another
 * lcore, would not find it): refused.
 */
static int
lb_by_hash(struct pa_config_pipeline *pl, const char *path, char *err,
		size_t err_len)
{
	unsigned int i, l;

	if (pl->n_lcores[PA_CONFIG_STAGE_LB] > 1) {
		for (i = 0; i < pl->n_lcores[PA_CONFIG_STAGE_LB]; i++) {
			l = pl->lcores[PA_CONFIG_STAGE_LB][i];
			if (names_lcore(pl, PA_CONFIG_STAGE_RX, l) &&
			    names_lcore(pl, PA_CONFIG_STAGE_CLASSIFY, l))
				return pa_decode_fail(err, err_len,
					"%s.lb[%u]: lcore %u also runs rx and classify: with several lb lcores each flow must reach its lb lcore by flow hash (each has its own flow table), and packets received there would stay there; use rtc mode (RSS steering), one lb lcore, or move rx or classify off lcore %u",
					path, i, l, l);
		}
	}
	pl->lcores_set = true;
	return 0;
}

/* "pipeline.lcores": a stage's lcores, each once */
static json_t *
pipeline_lcores_schema(const struct pa_decode_field *f)
{
	json_t *s, *props;
	unsigned int st;

	s = json_pack("{s:s, s:{}, s:b, s:s}", "type", "object",
			"properties", "additionalProperties", 0, "description",
			"mode \"pipeline\": rx, classify, lb and tx; mode \"rtc\": worker");
	if (s == NULL)
		return NULL;
	props = json_object_get(s, "properties");
	for (st = 0; st < PA_CONFIG_STAGE_MAX; st++)
		if (json_object_set_new(props, stage_names[st], json_pack(
				"{s:s, s:{s:s, s:i, s:i}, s:i, s:i, s:b}",
				"type", "array", "items", "type", "integer",
				"minimum", 0, "maximum", PA_CONFIG_MAX_LCORES - 1,
				"minItems", 1, "maxItems", PA_CONFIG_MAX_LCORES,
				"uniqueItems", 1)) != 0) {
			json_decref(s);
			return NULL;
		}
	return s;
}

/* "pipeline.lcores": its keys depend on the mode, decoded before it. */
static int
pipeline_lcores(const struct pa_decode_field *f, const json_t *obj,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_pipeline *pl = out;
	/* where each lcore id was first seen in the stage: index + 1 */
	unsigned int seen[PA_CONFIG_MAX_LCORES];
	char p[PA_DECODE_PATH_MAX], sp[PA_DECODE_PATH_MAX];
	const json_t *arr, *v;
	const char *key;
	long long x;
	unsigned int st, prev;
	size_t i;
	int s;

	if (pa_decode_want_object(obj, path, err, err_len) < 0)
		return -EINVAL;
	json_object_foreach((json_t *)(uintptr_t)obj, key, v) {
		s = pa_decode_enum_index(stage_names, key);
		if (s < 0)
			return pa_decode_fail(err, err_len,
					"%s.%s: unknown key", path, key);
		if (!stage_in_mode(s, pl->mode))
			return pa_decode_fail(err, err_len,
					pl->mode == PA_PIPELINE_RTC ?
					"%s.%s: stage lcores need \"mode\": \"pipeline\"; rtc mode has only \"worker\"" :
					"%s.%s: \"worker\" is for rtc mode; pipeline mode has \"rx\", \"classify\", \"lb\" and \"tx\"",
					path, key);
	}
	for (st = 0; st < PA_CONFIG_STAGE_MAX; st++) {
		if (!stage_in_mode(st, pl->mode))
			continue;
		pa_decode_key_path(sp, sizeof(sp), path, stage_names[st]);
		arr = json_object_get(obj, stage_names[st]);
		if (arr == NULL)
			return pa_decode_fail(err, err_len,
					pl->mode == PA_PIPELINE_RTC ?
					"%s: required key missing (rtc mode needs \"worker\")" :
					"%s: required key missing (pipeline mode needs \"rx\", \"classify\", \"lb\" and \"tx\")",
					sp);
		if (pa_decode_want_array(arr, sp, err, err_len) < 0)
			return -EINVAL;
		if (json_array_size(arr) == 0)
			return pa_decode_fail(err, err_len,
					"%s: needs at least one lcore", sp);
		if (json_array_size(arr) > PA_CONFIG_MAX_LCORES)
			return pa_decode_fail(err, err_len,
					"%s: more than %d lcores", sp,
					PA_CONFIG_MAX_LCORES);
		/* One lcore may run several stages (in turn), but is named
		 * once per stage. */
		memset(seen, 0, sizeof(seen));
		json_array_foreach(arr, i, v) {
			pa_decode_index_path(p, sizeof(p), sp, i);
			if (pa_decode_int(v, p, 0, PA_CONFIG_MAX_LCORES - 1, &x,
					err, err_len) < 0)
				return -EINVAL;
			prev = seen[x];
			if (prev != 0)
				return pa_decode_fail(err, err_len,
						"%s: lcore %lld already used by %s.%s[%u]",
						p, x, path, stage_names[st],
						prev - 1);
			seen[x] = (unsigned int)i + 1;
			pl->lcores[st][i] = (unsigned int)x;
		}
		pl->n_lcores[st] = json_array_size(arr);
	}
	if (pl->mode == PA_PIPELINE_STAGED)
		return lb_by_hash(pl, path, err, err_len);
	pl->lcores_set = true;
	return 0;
}

#define IDLE(m)	PA_DECODE_AT(struct pa_config_idle, m)

static const struct pa_decode_field idle_fields[] = {
	{ .name = "mode", .type = PA_DECODE_ENUM, .names = idle_mode_names,
	  IDLE(mode) },
	{ .name = "spin_polls", .type = PA_DECODE_INT,
	  .min = 0, .max = CFG_MAX_SPIN_POLLS, IDLE(spin_polls) },
	{ .name = "max_sleep_us", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_MAX_SLEEP_US, IDLE(max_sleep_us) },
};

static json_t *
pipeline_idle_schema(const struct pa_decode_field *f)
{
	return pa_decode_schema_object(idle_fields, PA_DECODE_N(idle_fields));
}

static int
pipeline_idle(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_pipeline *pl = out;

	return pa_decode_object(v, path, idle_fields, PA_DECODE_N(idle_fields),
			&pl->idle, NULL, err, err_len);
}

#define PIPELINE(m)	PA_DECODE_AT(struct pa_config_pipeline, m)

static const struct pa_decode_field pipeline_fields[] = {
	{ .name = "mode", .type = PA_DECODE_ENUM, .names = mode_names,
	  PIPELINE(mode) },
	{ .name = "lcores", .type = PA_DECODE_CUSTOM,
	  .decode = pipeline_lcores, .schema = pipeline_lcores_schema },
	{ .name = "ring_size", .type = PA_DECODE_POW2,
	  .min = 64, .max = 65536, PIPELINE(ring_size) },
	{ .name = "burst", .type = PA_DECODE_INT, .min = 1, .max = 256,
	  PIPELINE(burst) },
	{ .name = "tx_drain_us", .type = PA_DECODE_INT, .min = 1, .max = 100000,
	  PIPELINE(tx_drain_us) },
	{ .name = "latency", .type = PA_DECODE_BOOL, PIPELINE(latency) },
	{ .name = "idle", .type = PA_DECODE_CUSTOM, .decode = pipeline_idle,
	  .schema = pipeline_idle_schema },
	{ .name = "stall_ms", .type = PA_DECODE_INT, .min = CFG_MIN_STALL_MS,
	  .max = CFG_MAX_STALL_MS, PIPELINE(stall_ms) },
};

static void
pipeline_defaults(struct pa_config *cfg, const struct pa_config_opts *opts)
{
	struct pa_config_pipeline *pl = &cfg->pipeline;

	pl->mode = PA_PIPELINE_RTC;
	pl->ring_size = CFG_DEFAULT_RING_SIZE;
	pl->burst = CFG_DEFAULT_BURST;
	pl->tx_drain_us = CFG_DEFAULT_TX_DRAIN_US;
	pl->latency = true;
	pl->idle.mode = PA_IDLE_BUSY;
	pl->idle.spin_polls = CFG_DEFAULT_SPIN_POLLS;
	pl->idle.max_sleep_us = CFG_DEFAULT_MAX_SLEEP_US;
	pl->stall_ms = CFG_DEFAULT_STALL_MS;
}

static int
pipeline_parse(const json_t *v, struct pa_config *cfg,
		const struct pa_config_opts *opts, char *err, size_t err_len)
{
	if (v == NULL)
		return 0;
	return pa_decode_object(v, "$.pipeline", pipeline_fields,
			PA_DECODE_N(pipeline_fields), &cfg->pipeline, NULL, err,
			err_len);
}

/* Always written, defaults included. */
static int
pipeline_to_json(const struct pa_config *cfg, json_t **out)
{
	const struct pa_config_pipeline *pl = &cfg->pipeline;
	json_t *o, *lc = NULL, *arr;
	unsigned int st, i;
	int rc = 0;

	o = json_object();
	if (o == NULL)
		return -ENOMEM;
	rc |= json_object_set_new(o, "mode", json_string(mode_names[pl->mode]));
	if (pl->lcores_set) {
		lc = json_object();
		if (lc == NULL)
			goto fail;
		for (st = 0; st < PA_CONFIG_STAGE_MAX; st++) {
			if (!stage_in_mode(st, pl->mode))
				continue;
			arr = json_array();
			for (i = 0; arr != NULL && i < pl->n_lcores[st]; i++)
				rc |= json_array_append_new(arr,
						json_integer(pl->lcores[st][i]));
			rc |= json_object_set_new(lc, stage_names[st], arr);
		}
		rc |= json_object_set_new(o, "lcores", lc);
	}
	rc |= json_object_set_new(o, "ring_size", json_integer(pl->ring_size));
	rc |= json_object_set_new(o, "burst", json_integer(pl->burst));
	rc |= json_object_set_new(o, "tx_drain_us",
			json_integer(pl->tx_drain_us));
	rc |= json_object_set_new(o, "latency", json_boolean(pl->latency));
	rc |= json_object_set_new(o, "idle", json_pack("{s:s, s:I, s:I}",
			"mode", idle_mode_names[pl->idle.mode],
			"spin_polls", (json_int_t)pl->idle.spin_polls,
			"max_sleep_us", (json_int_t)pl->idle.max_sleep_us));
	rc |= json_object_set_new(o, "stall_ms", json_integer(pl->stall_ms));
	if (rc != 0)
		goto fail;
	*out = o;
	return 0;
fail:
	json_decref(o);
	return -ENOMEM;
}

static json_t *
pipeline_schema(void)
{
	return pa_decode_schema_object(pipeline_fields,
			PA_DECODE_N(pipeline_fields));
}

static struct pa_config_section pipeline_section = {
	.key = "pipeline",
	.order = PA_CONFIG_ORDER_PIPELINE,
	.defaults = pipeline_defaults,
	.parse = pipeline_parse,
	.to_json = pipeline_to_json,
	.schema = pipeline_schema,
};

PA_CONFIG_SECTION_REGISTER(pipeline_section)
