/* SPDX-License-Identifier: BSD-3-Clause */
/* The "acl" configuration section: rules parsed, checked and serialized. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pa_acl_config.h"
#include "pa_config.h"
#include "pa_decode.h"
#include "pa_net.h"

#define CFG_MAX_RULE_ID		2147483648LL

static const char *const action_names[] = {
	[PA_ACL_PERMIT] = "permit",
	[PA_ACL_DROP] = "drop",
	[PA_ACL_MARK] = "mark",
	[PA_ACL_POLICE] = "police",
	NULL
};

/* Index = the stored value: PA_ACL_PERMIT, PA_ACL_DROP / false, true. */
static const char *const default_names[] = { "permit", "drop", NULL };
static const char *const non_ip_names[] = { "forward", "drop", NULL };

/* ------------------------------------------------------------------ */
/* One rule                                                            */
/* ------------------------------------------------------------------ */

static int
rule_dst_family(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_acl_rule *r = out;
	char buf[PA_NET_PREFIX_STRLEN];

	if (r->src.addr.family != 0 && r->dst.addr.family != 0 &&
			r->src.addr.family != r->dst.addr.family)
		return pa_decode_fail(err, err_len,
				"%s: %s prefix '%s' but src is %s; a rule matches one address family (use \"any\" or two rules)",
				path, pa_net_family_name(r->dst.addr.family),
				pa_net_format_prefix(&r->dst, buf, sizeof(buf)),
				pa_net_family_name(r->src.addr.family));
	return 0;
}

/* A field that only one action takes: refused with the others, required
 * with it. */
static int
action_field(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, enum pa_acl_action action,
		char *err, size_t err_len)
{
	const struct pa_config_acl_rule *r = out;
	long long x;

	if (r->action != action) {
		if (v != NULL)
			return pa_decode_fail(err, err_len,
					"%s: only valid with \"action\": \"%s\"",
					path, action_names[action]);
		return 0;
	}
	if (v == NULL)
		return pa_decode_fail(err, err_len,
				"%s: required with \"action\": \"%s\"", path,
				action_names[action]);
	if (pa_decode_int(v, path, f->min, f->max, &x, err, err_len) < 0)
		return -EINVAL;
	pa_decode_store_int(f, out, x);
	return 0;
}

static int
rule_mark_field(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	return action_field(f, v, path, out, PA_ACL_MARK, err, err_len);
}

static int
rule_police_field(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	return action_field(f, v, path, out, PA_ACL_POLICE, err, err_len);
}

/* @p arg: the configuration whose ports "in_port" names. */
static int
rule_in_port(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_acl_rule *r = out;
	const char *s;

	if (pa_decode_string(v, path, &s, err, err_len) < 0)
		return -EINVAL;
	r->in_port = pa_config_port_index(arg, s);
	if (r->in_port < 0)
		return pa_decode_fail(err, err_len, "%s: unknown port '%s'",
				path, s);
	return 0;
}

#define RULE(m)	PA_DECODE_AT(struct pa_config_acl_rule, m)

static const struct pa_decode_field rule_fields[] = {
	{ .name = "id", .type = PA_DECODE_INT, .required = true,
	  .min = 1, .max = CFG_MAX_RULE_ID, RULE(id) },
	{ .name = "priority", .type = PA_DECODE_INT,
	  .min = 0, .max = INT32_MAX, RULE(priority) },
	{ .name = "src", .type = PA_DECODE_PREFIX, RULE(src) },
	{ .name = "dst", .type = PA_DECODE_PREFIX, RULE(dst),
	  .check = rule_dst_family },
	{ .name = "sport", .type = PA_DECODE_PORT_RANGE, RULE(sport) },
	{ .name = "dport", .type = PA_DECODE_PORT_RANGE, RULE(dport) },
	{ .name = "proto", .type = PA_DECODE_PROTO, RULE(proto) },
	{ .name = "action", .type = PA_DECODE_ENUM, .required = true,
	  .names = action_names, RULE(action) },
	{ .name = "dscp", .type = PA_DECODE_CUSTOM, .flags = PA_DECODE_ALWAYS,
	  .decode = rule_mark_field, .min = 0, .max = 63, RULE(dscp),
	  .schema = pa_decode_schema_int,
	  .doc = "with \"action\": \"mark\" only, and required with it" },
	{ .name = "rate_pps", .type = PA_DECODE_CUSTOM,
	  .flags = PA_DECODE_ALWAYS, .decode = rule_police_field,
	  .min = 1, .max = INT64_MAX, RULE(rate_pps),
	  .schema = pa_decode_schema_int,
	  .doc = "with \"action\": \"police\" only, and required with it" },
	{ .name = "burst", .type = PA_DECODE_CUSTOM, .flags = PA_DECODE_ALWAYS,
	  .decode = rule_police_field, .min = 1, .max = INT64_MAX,
	  RULE(burst), .schema = pa_decode_schema_int,
	  .doc = "with \"action\": \"police\" only, and required with it" },
	{ .name = "in_port", .type = PA_DECODE_CUSTOM, .decode = rule_in_port,
	  .schema = pa_decode_schema_string,
	  .doc = "the name of a port of the configuration" },
};

/* What action_field() says of dscp, rate_pps and burst, for the schema:
 * required with their action, refused with the others. */
static json_t *
action_fields_schema(const char *action, const char *f1, const char *f2)
{
	json_t *need = f2 != NULL ? json_pack("[ss]", f1, f2) :
		json_pack("[s]", f1);
	json_t *refuse = f2 != NULL ?
		json_pack("{s:[{s:[s]}, {s:[s]}]}", "anyOf", "required", f1,
			"required", f2) :
		json_pack("{s:[s]}", "required", f1);

	return json_pack("{s:{s:{s:{s:s}}, s:[s]}, s:{s:o}, s:{s:o}}",
		"if", "properties", "action", "const", action,
		"required", "action",
		"then", "required", need,
		"else", "not", refuse);
}

json_t *
pa_acl_config_rule_schema(void)
{
	json_t *s = pa_decode_schema_object(rule_fields,
			PA_DECODE_N(rule_fields));

	if (s != NULL && json_object_set_new(s, "allOf", json_pack("[oo]",
			action_fields_schema(action_names[PA_ACL_MARK], "dscp",
				NULL),
			action_fields_schema(action_names[PA_ACL_POLICE],
				"rate_pps", "burst"))) != 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}

int
pa_acl_config_parse_rule(const json_t *obj, const struct pa_config *cfg,
		const char *path, struct pa_config_acl_rule *r,
		char *err, size_t err_len)
{
	memset(r, 0, sizeof(*r));
	r->in_port = -1;
	r->proto = PA_PROTO_ANY;
	r->sport.hi = 65535;
	r->dport.hi = 65535;
	return pa_decode_object(obj, path != NULL ? path : "$", rule_fields,
			PA_DECODE_N(rule_fields), r, (void *)(uintptr_t)cfg,
			err, err_len);
}

json_t *
pa_acl_config_rule_to_json(const struct pa_config_acl_rule *r,
		const struct pa_config *cfg)
{
	char buf[16];
	const char *proto;
	json_t *o;
	int rc = 0;

	o = json_object();
	if (o == NULL)
		return NULL;
	rc |= json_object_set_new(o, "id", json_integer(r->id));
	rc |= json_object_set_new(o, "priority", json_integer(r->priority));
	rc |= json_object_set_new(o, "src", pa_config_prefix_json(&r->src));
	rc |= json_object_set_new(o, "dst", pa_config_prefix_json(&r->dst));
	rc |= json_object_set_new(o, "sport", json_string(
			pa_net_format_port_range(&r->sport, buf, sizeof(buf))));
	rc |= json_object_set_new(o, "dport", json_string(
			pa_net_format_port_range(&r->dport, buf, sizeof(buf))));
	proto = pa_net_proto_name(r->proto);
	if (r->proto == PA_PROTO_ANY)
		rc |= json_object_set_new(o, "proto", json_string("any"));
	else if (proto != NULL)
		rc |= json_object_set_new(o, "proto", json_string(proto));
	else
		rc |= json_object_set_new(o, "proto", json_integer(r->proto));
	rc |= json_object_set_new(o, "action",
			json_string(action_names[r->action]));
	if (r->action == PA_ACL_MARK)
		rc |= json_object_set_new(o, "dscp", json_integer(r->dscp));
	if (r->action == PA_ACL_POLICE) {
		rc |= json_object_set_new(o, "rate_pps",
				json_integer((json_int_t)r->rate_pps));
		rc |= json_object_set_new(o, "burst",
				json_integer((json_int_t)r->burst));
	}
	if (r->in_port >= 0 && cfg != NULL &&
			(unsigned int)r->in_port < cfg->n_ports)
		rc |= json_object_set_new(o, "in_port",
				json_string(cfg->ports[r->in_port].name));
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ------------------------------------------------------------------ */
/* The section                                                         */
/* ------------------------------------------------------------------ */

struct id_idx {
	uint32_t id;
	unsigned int idx;
};

static int
id_idx_cmp(const void *a, const void *b)
{
	const struct id_idx *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* Report the first rule (in document order) whose id was used before. */
static int
rules_check_ids(const struct pa_config_acl *acl, const char *path, char *err,
		size_t err_len)
{
	struct id_idx *v;
	unsigned int i, first = 0, dup = UINT32_MAX, dup_first = 0;

	if (acl->n_rules < 2)
		return 0;
	v = malloc(acl->n_rules * sizeof(*v));
	if (v == NULL)
		return pa_decode_nomem(err, err_len, path);
	for (i = 0; i < acl->n_rules; i++) {
		v[i].id = acl->rules[i].id;
		v[i].idx = i;
	}
	qsort(v, acl->n_rules, sizeof(*v), id_idx_cmp);
	for (i = 1; i < acl->n_rules; i++) {
		if (v[i].id != v[i - 1].id) {
			first = i;
			continue;
		}
		if (v[i].idx < dup) {
			dup = v[i].idx;
			dup_first = v[first].idx;
		}
	}
	free(v);
	if (dup != UINT32_MAX)
		return pa_decode_fail(err, err_len,
				"%s[%u].id: duplicate id %u (also %s[%u])",
				path, dup, acl->rules[dup].id, path, dup_first);
	return 0;
}

/* One rule of "acl.rules"; @p arg: the configuration (for "in_port"). */
static int
acl_rule_elem(const json_t *v, const char *path, void *elems, size_t i,
		void *arg, char *err, size_t err_len)
{
	struct pa_config_acl_rule *rules = elems;

	return pa_acl_config_parse_rule(v, arg, path, &rules[i], err,
		err_len);
}

/* "acl.rules"; @p arg: the configuration (for "in_port"). */
static int
acl_rules(const struct pa_decode_field *f, const json_t *arr,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_acl *acl = out;
	int rc;

	rc = pa_decode_array(arr, path, sizeof(*acl->rules), acl_rule_elem,
		arg, (void **)&acl->rules, &acl->n_rules, err, err_len);
	if (rc < 0)
		return rc;
	return rules_check_ids(acl, path, err, err_len);
}

/* 0 turns the cache off; a handful of entries would only cost. */
static int
acl_flow_cache_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_acl *acl = out;

	if (acl->flow_cache != 0 &&
	    acl->flow_cache < PA_CONFIG_ACL_FLOW_CACHE_MIN)
		return pa_decode_fail(err, err_len,
			"%s: expected 0 (no flow cache) or %u..%u entries, got %u",
			path, PA_CONFIG_ACL_FLOW_CACHE_MIN,
			PA_CONFIG_ACL_FLOW_CACHE_MAX, acl->flow_cache);
	return 0;
}

static json_t *
acl_rules_schema(const struct pa_decode_field *f)
{
	return pa_decode_schema_array(pa_acl_config_rule_schema(), 0);
}

/* 0, or PA_CONFIG_ACL_FLOW_CACHE_MIN..MAX (acl_flow_cache_check) */
static json_t *
acl_flow_cache_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:I, s:I, s:{s:I, s:I}, s:s}",
			"type", "integer", "minimum", (json_int_t)f->min,
			"maximum", (json_int_t)f->max,
			"not", "minimum", (json_int_t)1,
			"maximum", (json_int_t)PA_CONFIG_ACL_FLOW_CACHE_MIN - 1,
			"description", "entries of the flow cache; 0: none");
}

static const struct pa_decode_field acl_fields[] = {
	{ .name = "default", .type = PA_DECODE_ENUM, .names = default_names,
	  PA_DECODE_AT(struct pa_config_acl, def) },
	{ .name = "non_ip", .type = PA_DECODE_ENUM, .names = non_ip_names,
	  PA_DECODE_AT(struct pa_config_acl, non_ip_drop) },
	{ .name = "rules", .type = PA_DECODE_CUSTOM, .decode = acl_rules,
	  .schema = acl_rules_schema },
	{ .name = "flow_cache", .type = PA_DECODE_INT, .min = 0,
	  .max = PA_CONFIG_ACL_FLOW_CACHE_MAX, .check = acl_flow_cache_check,
	  PA_DECODE_AT(struct pa_config_acl, flow_cache),
	  .schema = acl_flow_cache_schema },
};

json_t *
pa_acl_config_schema(void)
{
	return pa_decode_schema_object(acl_fields, PA_DECODE_N(acl_fields));
}

int
pa_acl_config_parse_acl(const json_t *obj, const struct pa_config *cfg,
		const char *path, struct pa_config_acl *acl,
		char *err, size_t err_len)
{
	return pa_decode_object(obj, path != NULL ? path : "$", acl_fields,
			PA_DECODE_N(acl_fields), acl, (void *)(uintptr_t)cfg,
			err, err_len);
}

static void
acl_defaults(struct pa_config *cfg, const struct pa_config_opts *opts)
{
	cfg->acl.def = PA_ACL_PERMIT;
	cfg->acl.flow_cache = PA_CONFIG_ACL_FLOW_CACHE_DEFAULT;
}

static int
acl_parse(const json_t *v, struct pa_config *cfg,
		const struct pa_config_opts *opts, char *err, size_t err_len)
{
	if (v == NULL)
		return 0;
	cfg->acl.present = true;
	return pa_acl_config_parse_acl(v, cfg, "$.acl", &cfg->acl, err,
			err_len);
}

static void
acl_clear(struct pa_config *cfg)
{
	free(cfg->acl.rules);
	cfg->acl.rules = NULL;
	cfg->acl.n_rules = 0;
}

static int
acl_to_json(const struct pa_config *cfg, json_t **out)
{
	const struct pa_config_acl *acl = &cfg->acl;
	json_t *o, *rules;
	unsigned int i;
	int rc = 0;

	if (!acl->present)
		return 0;
	o = json_object();
	rules = json_array();
	if (o == NULL || rules == NULL)
		goto fail;
	rc |= json_object_set_new(o, "default",
			json_string(action_names[acl->def]));
	rc |= json_object_set_new(o, "non_ip",
			json_string(acl->non_ip_drop ? "drop" : "forward"));
	if (acl->flow_cache != PA_CONFIG_ACL_FLOW_CACHE_DEFAULT)
		rc |= json_object_set_new(o, "flow_cache",
				json_integer((json_int_t)acl->flow_cache));
	for (i = 0; i < acl->n_rules; i++)
		rc |= json_array_append_new(rules,
				pa_acl_config_rule_to_json(&acl->rules[i], cfg));
	rc |= json_object_set_new(o, "rules", rules);
	rules = NULL;
	if (rc != 0)
		goto fail;
	*out = o;
	return 0;
fail:
	json_decref(rules);
	json_decref(o);
	return -ENOMEM;
}

static struct pa_config_section acl_section = {
	.key = "acl",
	.order = PA_CONFIG_ORDER_ACL,
	.defaults = acl_defaults,
	.parse = acl_parse,
	.clear = acl_clear,
	.to_json = acl_to_json,
	.schema = pa_acl_config_schema,
};

PA_CONFIG_SECTION_REGISTER(acl_section)
