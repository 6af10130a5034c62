/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration document: loading (file, text, JSON), the section
 * registry that reaches each library's section, freeing, serialization,
 * and the two small sections that belong to no library of their own
 * ("metrics" and "rpc").
 *
 * Every check writes "<json path>: <reason>" and returns -EINVAL; parsing
 * stops at the first error. Sections are parsed in a fixed order, and
 * within an object fields in the order of their table, so the reported
 * error does not depend on the key order of the document.
 */

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_decode.h"
#include "pa_net.h"
#include "pa_rpc.h"

#define CFG_DEFAULT_LISTEN	"127.0.0.1:9469"
#define CFG_MAX_RPC_CONNS	65536
#define CFG_MIN_RPC_REQUEST	1024
#define CFG_MAX_RPC_REQUEST	(1024LL * 1024 * 1024)
#define CFG_MIN_RPC_DEPTH	4	/* request, params, list, element */
#define CFG_MAX_RPC_DEPTH	4096
#define CFG_MAX_RPC_IDLE	86400

/* ------------------------------------------------------------------ */
/* Section registry                                                    */
/* ------------------------------------------------------------------ */

/* Sorted by order; filled by constructors before main(). */
static struct pa_config_section *sections;

void
pa_config_section_register(struct pa_config_section *s)
{
	struct pa_config_section **pp;

	if (s == NULL || s->key == NULL)
		return;
	for (pp = &sections; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == s || strcmp((*pp)->key, s->key) == 0)
			return;
		if ((*pp)->order > s->order)
			break;
	}
	s->next = *pp;
	*pp = s;
}

json_t *
pa_config_schema(void)
{
	const struct pa_config_section *sec;
	json_t *s, *props;

	s = json_pack("{s:s, s:{}, s:b}", "type", "object", "properties",
			"additionalProperties", 0);
	if (s == NULL)
		return NULL;
	props = json_object_get(s, "properties");
	for (sec = sections; sec != NULL; sec = sec->next)
		if (json_object_set_new(props, sec->key, sec->schema != NULL ?
				sec->schema() : json_object()) != 0) {
			json_decref(s);
			return NULL;
		}
	return s;
}

int
pa_config_port_index(const struct pa_config *cfg, const char *name)
{
	unsigned int i;

	if (cfg == NULL || name == NULL)
		return -1;
	for (i = 0; i < cfg->n_ports; i++)
		if (strcmp(cfg->ports[i].name, name) == 0)
			return i;
	return -1;
}

/* ------------------------------------------------------------------ */
/* Metrics                                                             */
/* ------------------------------------------------------------------ */

static int
listen_check(const char *s, char *why, size_t why_len)
{
	char host[INET6_ADDRSTRLEN + 1];
	struct pa_ip_addr a;
	const char *colon, *end, *h;
	unsigned long port;
	size_t hlen;

	if (s[0] == '[') {
		h = s + 1;
		colon = strstr(s, "]:");
		if (colon == NULL)
			goto bad;
		hlen = colon - h;
		colon++;
	} else {
		h = s;
		colon = strrchr(s, ':');
		if (colon == NULL)
			goto bad;
		hlen = colon - h;
	}
	if (hlen == 0 || hlen >= sizeof(host))
		goto bad;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (pa_net_parse_ip(host, &a, NULL, 0) < 0)
		return pa_decode_why(why, why_len,
				"invalid listen address '%s': invalid IP address '%s'",
				s, host);
	if ((s[0] == '[') != (a.family == AF_INET6))
		goto bad;
	if (pa_net_parse_number(colon + 1, &end, 65535, &port) < 0 ||
			*end != '\0' || port == 0)
		return pa_decode_why(why, why_len,
				"invalid listen address '%s': port must be 1..65535",
				s);
	return 0;
bad:
	return pa_decode_why(why, why_len,
			"invalid listen address '%s' (expected IPV4:PORT or [IPV6]:PORT)",
			s);
}

struct metrics_doc {
	const char *listen;
};

/* "listen": what listen_check() takes (the pattern says its shape) */
static json_t *
metrics_listen_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:s, s:s}", "type", "string",
			"pattern", "^([0-9.]+|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5}$",
			"description", "IPV4:PORT or [IPV6]:PORT, port 1..65535");
}

static const struct pa_decode_field metrics_fields[] = {
	{ .name = "listen", .type = PA_DECODE_STRING,
	  PA_DECODE_AT(struct metrics_doc, listen),
	  .schema = metrics_listen_schema },
};

static void
metrics_defaults(struct pa_config *cfg, const struct pa_config_opts *opts)
{
	/* Absent: on in live mode, off in replay (docs/lab.md). */
	cfg->metrics.enabled = !(opts != NULL && opts->replay);
	snprintf(cfg->metrics.listen, sizeof(cfg->metrics.listen), "%s",
			CFG_DEFAULT_LISTEN);
}

static int
metrics_parse(const json_t *v, struct pa_config *cfg,
		const struct pa_config_opts *opts, char *err, size_t err_len)
{
	static const char *const path = "$.metrics";
	struct pa_config_metrics *m = &cfg->metrics;
	struct metrics_doc d = { .listen = CFG_DEFAULT_LISTEN };
	char why[PA_DECODE_WHY_MAX];
	int rc;

	if (v == NULL)
		return 0;
	m->present = true;
	m->enabled = false;
	memset(m->listen, 0, sizeof(m->listen));
	if (json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return pa_decode_fail(err, err_len,
				"%s: expected an object or null, got %s", path,
				pa_decode_type_name(v));
	rc = pa_decode_object(v, path, metrics_fields,
			PA_DECODE_N(metrics_fields), &d, NULL, err, err_len);
	if (rc < 0)
		return rc;
	if (strlen(d.listen) >= sizeof(m->listen))
		return pa_decode_fail(err, err_len, "%s.listen: too long", path);
	if (listen_check(d.listen, why, sizeof(why)) < 0)
		return pa_decode_fail(err, err_len, "%s.listen: %s", path, why);
	snprintf(m->listen, sizeof(m->listen), "%s", d.listen);
	m->enabled = true;
	return 0;
}

static int
metrics_to_json(const struct pa_config *cfg, json_t **out)
{
	if (!cfg->metrics.present)
		return 0;
	if (cfg->metrics.enabled)
		*out = json_pack("{s:s}", "listen", cfg->metrics.listen);
	else
		*out = json_null();
	return *out != NULL ? 0 : -ENOMEM;
}

/* an object, or null: off */
static json_t *
metrics_schema(void)
{
	json_t *o = pa_decode_schema_object(metrics_fields,
			PA_DECODE_N(metrics_fields));

	if (o == NULL)
		return NULL;
	return json_pack("{s:[o{s:s}]}", "anyOf", o, "type", "null");
}

static struct pa_config_section metrics_section = {
	.key = "metrics",
	.order = PA_CONFIG_ORDER_METRICS,
	.defaults = metrics_defaults,
	.parse = metrics_parse,
	.to_json = metrics_to_json,
	.schema = metrics_schema,
};

PA_CONFIG_SECTION_REGISTER(metrics_section)

/* ------------------------------------------------------------------ */
/* RPC server limits                                                   */
/* ------------------------------------------------------------------ */

static void
rpc_defaults(struct pa_config *cfg, const struct pa_config_opts *opts)
{
	struct pa_config_rpc *r = &cfg->rpc;

	r->max_connections = PA_RPC_DEFAULT_MAX_CONNS;
	r->max_request_bytes = PA_RPC_DEFAULT_MAX_REQUEST;
	r->max_depth = PA_RPC_DEFAULT_MAX_DEPTH;
	r->idle_timeout = PA_RPC_DEFAULT_IDLE_TIMEOUT_MS / 1000;
}

/* "rpc.group": a group name or number; must exist on this host. */
static int
rpc_group(const struct pa_decode_field *f, const json_t *g, const char *path,
		void *out, void *arg, char *err, size_t err_len)
{
	struct pa_config_rpc *r = out;
	char buf[4096];
	struct group gr, *res = NULL;
	const char *name;
	char *end;
	unsigned long n;

	if (!json_is_string(g) || json_string_length(g) == 0 ||
	    json_string_length(g) >= sizeof(r->group))
		return pa_decode_fail(err, err_len,
				"%s: expected a group name or number (1..%zu characters)",
				path, sizeof(r->group) - 1);
	name = json_string_value(g);
	errno = 0;
	n = strtoul(name, &end, 10);
	if (*end == '\0' && errno == 0 && n <= UINT32_MAX - 1) {
		if (getgrgid_r((gid_t)n, &gr, buf, sizeof(buf), &res) != 0 ||
		    res == NULL)
			return pa_decode_fail(err, err_len,
					"%s: no group with id %lu", path, n);
	} else if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) != 0 ||
		   res == NULL) {
		return pa_decode_fail(err, err_len, "%s: no group '%s'", path,
				name);
	}
	r->has_group = true;
	r->gid = (uint32_t)gr.gr_gid;
	snprintf(r->group, sizeof(r->group), "%s", name);
	return 0;
}

static json_t *
rpc_group_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:i, s:i, s:s}", "type", "string",
			"minLength", 1, "maxLength",
			(int)sizeof(((struct pa_config_rpc *)0)->group) - 1,
			"description", "a group name or number of this host");
}

static const struct pa_decode_field rpc_fields[] = {
	{ .name = "max_connections", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_RPC_CONNS,
	  PA_DECODE_AT(struct pa_config_rpc, max_connections) },
	{ .name = "max_request_bytes", .type = PA_DECODE_INT,
	  .min = CFG_MIN_RPC_REQUEST, .max = CFG_MAX_RPC_REQUEST,
	  PA_DECODE_AT(struct pa_config_rpc, max_request_bytes) },
	{ .name = "max_depth", .type = PA_DECODE_INT,
	  .min = CFG_MIN_RPC_DEPTH, .max = CFG_MAX_RPC_DEPTH,
	  PA_DECODE_AT(struct pa_config_rpc, max_depth) },
	{ .name = "idle_timeout", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_RPC_IDLE,
	  PA_DECODE_AT(struct pa_config_rpc, idle_timeout) },
	{ .name = "group", .type = PA_DECODE_CUSTOM, .decode = rpc_group,
	  .schema = rpc_group_schema },
};

static json_t *
rpc_schema(void)
{
	return pa_decode_schema_object(rpc_fields, PA_DECODE_N(rpc_fields));
}

static int
rpc_parse(const json_t *v, struct pa_config *cfg,
		const struct pa_config_opts *opts, char *err, size_t err_len)
{
	if (v == NULL)
		return 0;
	cfg->rpc.present = true;
	return pa_decode_object(v, "$.rpc", rpc_fields,
			PA_DECODE_N(rpc_fields), &cfg->rpc, NULL, err, err_len);
}

static int
rpc_to_json(const struct pa_config *cfg, json_t **out)
{
	json_t *r;

	if (!cfg->rpc.present)
		return 0;
	r = json_pack("{s:I, s:I, s:I, s:I}",
			"max_connections", (json_int_t)cfg->rpc.max_connections,
			"max_request_bytes",
			(json_int_t)cfg->rpc.max_request_bytes,
			"max_depth", (json_int_t)cfg->rpc.max_depth,
			"idle_timeout", (json_int_t)cfg->rpc.idle_timeout);
	if (r != NULL && cfg->rpc.has_group &&
			json_object_set_new(r, "group",
				json_string(cfg->rpc.group)) != 0) {
		json_decref(r);
		r = NULL;
	}
	*out = r;
	return r != NULL ? 0 : -ENOMEM;
}

static struct pa_config_section rpc_section = {
	.key = "rpc",
	.order = PA_CONFIG_ORDER_RPC,
	.defaults = rpc_defaults,
	.parse = rpc_parse,
	.to_json = rpc_to_json,
	.schema = rpc_schema,
};

PA_CONFIG_SECTION_REGISTER(rpc_section)

/* ------------------------------------------------------------------ */
/* Document                                                            */
/* ------------------------------------------------------------------ */

void
pa_config_free(struct pa_config *cfg)
{
	const struct pa_config_section *s;

	if (cfg == NULL)
		return;
	for (s = sections; s != NULL; s = s->next)
		if (s->clear != NULL)
			s->clear(cfg);
	free(cfg);
}

static int
config_parse(const json_t *doc, const struct pa_config_opts *opts,
		struct pa_config *cfg, char *err, size_t err_len)
{
	const struct pa_config_section *s;
	const char *key;
	const json_t *v;
	int rc;

	for (s = sections; s != NULL; s = s->next)
		if (s->defaults != NULL)
			s->defaults(cfg, opts);
	if (doc == NULL)
		return pa_decode_fail(err, err_len, "$: no document");
	if (pa_decode_want_object(doc, "$", err, err_len) < 0)
		return -EINVAL;
	json_object_foreach((json_t *)(uintptr_t)doc, key, v) {
		for (s = sections; s != NULL; s = s->next)
			if (strcmp(s->key, key) == 0)
				break;
		if (s == NULL)
			return pa_decode_fail(err, err_len,
					"$.%s: unknown key", key);
	}
	for (s = sections; s != NULL; s = s->next) {
		rc = s->parse(json_object_get(doc, s->key), cfg, opts, err,
				err_len);
		if (rc < 0)
			return rc;
	}
	return 0;
}

struct pa_config *
pa_config_load_json(const json_t *doc, const struct pa_config_opts *opts,
		char *err, size_t err_len)
{
	struct pa_config *cfg;

	if (err != NULL && err_len > 0)
		err[0] = '\0';
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL) {
		pa_decode_nomem(err, err_len, "$");
		return NULL;
	}
	if (config_parse(doc, opts, cfg, err, err_len) < 0) {
		pa_config_free(cfg);
		return NULL;
	}
	return cfg;
}

struct pa_config *
pa_config_load_file(const char *path, const struct pa_config_opts *opts,
		char *err, size_t err_len)
{
	struct pa_config *cfg;
	json_error_t jerr;
	json_t *doc;
	FILE *f;

	f = fopen(path, "r");
	if (f == NULL) {
		pa_decode_fail(err, err_len, "%s: %s", path, strerror(errno));
		return NULL;
	}
	doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	if (doc == NULL) {
		pa_decode_fail(err, err_len, "%s:%d:%d: JSON syntax error: %s",
				path, jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	cfg = pa_config_load_json(doc, opts, err, err_len);
	json_decref(doc);
	return cfg;
}

struct pa_config *
pa_config_load_string(const char *text, const struct pa_config_opts *opts,
		char *err, size_t err_len)
{
	struct pa_config *cfg;
	json_error_t jerr;
	json_t *doc;

	if (text == NULL) {
		pa_decode_fail(err, err_len, "$: no document");
		return NULL;
	}
	doc = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (doc == NULL) {
		pa_decode_fail(err, err_len,
				"<string>:%d:%d: JSON syntax error: %s",
				jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	cfg = pa_config_load_json(doc, opts, err, err_len);
	json_decref(doc);
	return cfg;
}

/* ------------------------------------------------------------------ */
/* Serialization                                                       */
/* ------------------------------------------------------------------ */

json_t *
pa_config_ip_json(const struct pa_ip_addr *a)
{
	char buf[INET6_ADDRSTRLEN];

	return json_string(pa_net_format_ip(a, buf, sizeof(buf)));
}

json_t *
pa_config_prefix_json(const struct pa_ip_prefix *p)
{
	char buf[PA_NET_PREFIX_STRLEN];

	return json_string(pa_net_format_prefix(p, buf, sizeof(buf)));
}

json_t *
pa_config_mac_json(const uint8_t mac[6])
{
	char buf[PA_NET_MAC_STRLEN];

	return json_string(pa_net_format_mac(mac, buf, sizeof(buf)));
}

json_t *
pa_config_to_json(const struct pa_config *cfg)
{
	const struct pa_config_section *s;
	json_t *doc, *o;

	if (cfg == NULL)
		return NULL;
	doc = json_object();
	if (doc == NULL)
		return NULL;
	for (s = sections; s != NULL; s = s->next) {
		if (s->to_json == NULL)
			continue;
		o = NULL;
		if (s->to_json(cfg, &o) < 0)
			goto fail;
		if (o != NULL && json_object_set_new(doc, s->key, o) != 0)
			goto fail;
	}
	return doc;
fail:
	json_decref(doc);
	return NULL;
}
