/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-method views of pktaccelctl: how the results of particular methods
 * (acl_rule_list, lb_service_list) are shown, instead of the generic
 * printer's tables and "key: value" lines. -j never uses them.
 *
 * A view either formats (the result turned into what the generic printer
 * shows) or prints on its own; both leave a result of another shape
 * (e.g. from a newer daemon) to the generic printer.
 */
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "pktaccelctl.h"

/* Port field of a rule: "any", "N", "LO-HI" (a string, or an integer). */
static void
ports_text(const json_t *v, char *buf, size_t len)
{
	if (json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else
		snprintf(buf, len, "any");
}

/*
 * One side of a rule's match: "any" when both address and ports are any,
 * else ADDR:PORTS with "any" for the part that is. Host prefixes (/32,
 * /128) lose their length; an IPv6 address before a port is bracketed.
 */
static void
endpoint_text(const json_t *addr, const json_t *ports, char *buf, size_t len)
{
	const char *a = json_is_string(addr) ? json_string_value(addr) : "any";
	bool v6 = strchr(a, ':') != NULL;
	const char *host = v6 ? "/128" : "/32";
	size_t alen = strlen(a), hlen = strlen(host);
	char p[32];

	ports_text(ports, p, sizeof(p));
	if (alen > hlen && strcmp(a + alen - hlen, host) == 0)
		alen -= hlen;
	if (strcmp(a, "any") == 0 && strcmp(p, "any") == 0)
		snprintf(buf, len, "any");
	else if (v6)
		snprintf(buf, len, "[%.*s]:%s", (int)alen, a, p);
	else
		snprintf(buf, len, "%.*s:%s", (int)alen, a, p);
}

/* "udp 10.0.0.0/8:any -> any:53 in wan0": what an ACL rule matches,
 * leaving out what is "any". */
static json_t *
acl_match_text(const json_t *rule)
{
	const json_t *proto = json_object_get(rule, "proto");
	const json_t *in = json_object_get(rule, "in_port");
	char src[96], dst[96], pr[24], buf[320];

	endpoint_text(json_object_get(rule, "src"),
		json_object_get(rule, "sport"), src, sizeof(src));
	endpoint_text(json_object_get(rule, "dst"),
		json_object_get(rule, "dport"), dst, sizeof(dst));
	pr[0] = '\0';
	if (json_is_integer(proto))
		snprintf(pr, sizeof(pr), "proto %" JSON_INTEGER_FORMAT " ",
			json_integer_value(proto));
	else if (json_is_string(proto) &&
			strcmp(json_string_value(proto), "any") != 0)
		snprintf(pr, sizeof(pr), "%s ", json_string_value(proto));
	snprintf(buf, sizeof(buf), "%s%s -> %s%s%s", pr, src, dst,
		json_is_string(in) ? " in " : "",
		json_is_string(in) ? json_string_value(in) : "");
	return json_string(buf);
}

/* "drop", "mark dscp 46", "police 1000pps/100". */
static json_t *
acl_action_text(const json_t *rule)
{
	const json_t *a = json_object_get(rule, "action");
	const char *name = json_is_string(a) ? json_string_value(a) : "?";
	char buf[96];

	if (strcmp(name, "mark") == 0)
		snprintf(buf, sizeof(buf), "mark dscp %" JSON_INTEGER_FORMAT,
			json_integer_value(json_object_get(rule, "dscp")));
	else if (strcmp(name, "police") == 0)
		snprintf(buf, sizeof(buf), "police %" JSON_INTEGER_FORMAT
			"pps/%" JSON_INTEGER_FORMAT,
			json_integer_value(json_object_get(rule, "rate_pps")),
			json_integer_value(json_object_get(rule, "burst")));
	else
		snprintf(buf, sizeof(buf), "%s", name);
	return json_string(buf);
}

json_t *
ctl_view_acl_match(const json_t *rule)
{
	return acl_match_text(rule);
}

json_t *
ctl_view_acl_action(const json_t *rule)
{
	return acl_action_text(rule);
}

/* acl_rule_list: id, priority, match, action, hits, bytes. */
static json_t *
format_acl_rule_list(const json_t *r)
{
	static const char *const nums[] = { "hits", "bytes" };
	json_t *out, *row, *rule;
	size_t i, k;

	if (!ctl_fmt_is_table(r))
		return NULL;
	out = json_array();
	if (out == NULL)
		return NULL;
	json_array_foreach(r, i, rule) {
		row = json_object();
		if (row == NULL || json_array_append_new(out, row) != 0)
			goto fail;
		if (json_object_set(row, "id", json_object_get(rule, "id")) != 0 ||
		    json_object_set(row, "priority",
				json_object_get(rule, "priority")) != 0 ||
		    json_object_set_new(row, "match", acl_match_text(rule)) != 0 ||
		    json_object_set_new(row, "action", acl_action_text(rule)) != 0)
			goto fail;
		for (k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
			if (json_object_get(rule, nums[k]) != NULL &&
			    json_object_set(row, nums[k],
					json_object_get(rule, nums[k])) != 0)
				goto fail;
	}
	return out;
fail:
	json_decref(out);
	return NULL;
}

/* Copy the members @p keys of @p from that it has into @p to. */
static int
copy_keys(json_t *to, const json_t *from, const char *const *keys)
{
	const json_t *v;

	for (; *keys != NULL; keys++) {
		v = json_object_get(from, *keys);
		if (v != NULL && json_object_set(to, *keys, (json_t *)v) != 0)
			return -1;
	}
	return 0;
}

/* "192.0.2.10:80 tcp", "[2001:db8::10]:443 tcp": a service's address. */
static void
service_addr_text(const json_t *svc, char *buf, size_t len)
{
	const json_t *vip = json_object_get(svc, "vip");
	const json_t *port = json_object_get(svc, "port");
	const json_t *proto = json_object_get(svc, "proto");
	const char *a = json_is_string(vip) ? json_string_value(vip) : "?";
	const char *pr = json_is_string(proto) ? json_string_value(proto) : "?";
	char p[32];

	ports_text(port, p, sizeof(p));
	if (strchr(a, ':') != NULL)
		snprintf(buf, len, "[%s]:%s %s", a, p, pr);
	else
		snprintf(buf, len, "%s:%s %s", a, p, pr);
}

/* "ok 1.25ms", "refused 0.40ms": a backend's last health probe. */
static json_t *
last_check_text(const json_t *be)
{
	const json_t *last = json_object_get(be, "health_last");
	const json_t *ms = json_object_get(be, "health_latency_ms");
	char buf[64];

	if (!json_is_string(last))
		return json_string("-");
	snprintf(buf, sizeof(buf), "%s %.2fms", json_string_value(last),
		json_is_number(ms) ? json_number_value(ms) : 0.0);
	return json_string(buf);
}

/* A backend's health: "up", "down", or "down grace 4.2s" while its
 * flows stay for the service's health.grace_ms. */
static json_t *
health_text(const json_t *be)
{
	const json_t *left = json_object_get(be, "health_grace_ms_left");
	char buf[64];

	if (!json_is_integer(left))
		return json_incref(json_object_get(be, "health"));
	snprintf(buf, sizeof(buf), "%s grace %.1fs",
		json_string_value(json_object_get(be, "health")) != NULL ?
		json_string_value(json_object_get(be, "health")) : "?",
		(double)json_integer_value(left) / 1000.0);
	return json_string(buf);
}

/* A service's backends as table rows: addr, port, weight, state, mac
 * (only when one of them has a MAC), health and the last check (when
 * the daemon reports them), flows, packets, bytes. */
static json_t *
lb_backend_rows(const json_t *bes)
{
	static const char *const head[] = {
		"addr", "port", "weight", "state", NULL
	};
	static const char *const tail[] = {
		"flows", "packets", "bytes", NULL
	};
	json_t *out, *row, *be;
	bool macs = false;
	size_t i;

	json_array_foreach(bes, i, be)
		if (json_object_get(be, "mac") != NULL)
			macs = true;
	out = json_array();
	if (out == NULL)
		return NULL;
	json_array_foreach(bes, i, be) {
		row = json_object();
		if (row == NULL || json_array_append_new(out, row) != 0 ||
		    copy_keys(row, be, head) != 0 ||
		    (macs && json_object_set_new(row, "mac",
				json_object_get(be, "mac") != NULL ?
				json_incref(json_object_get(be, "mac")) :
				json_null()) != 0) ||
		    (json_object_get(be, "health") != NULL &&
		     (json_object_set_new(row, "health",
				health_text(be)) != 0 ||
		      json_object_set_new(row, "last_check",
				last_check_text(be)) != 0)) ||
		    copy_keys(row, be, tail) != 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/*
 * lb_service_list: a table of the services (name, vip, port, proto,
 * scheduler, forward, backends, usable, flows), then for each service the
 * table of its backends. @return false (nothing printed) for a result of
 * another shape, which the generic printer then shows.
 */
static bool
print_lb_service_list(const json_t *r)
{
	static const char *const head[] = {
		"name", "vip", "port", "proto", "scheduler", "forward", NULL
	};
	json_t *rows, *row, *svc, *bes;
	char where[128];
	const json_t *n;
	size_t i;

	if (!ctl_fmt_is_table(r))
		return false;
	json_array_foreach(r, i, svc)
		if (!json_is_string(json_object_get(svc, "name")) ||
		    !json_is_array(json_object_get(svc, "backends")))
			return false;
	rows = json_array();
	if (rows == NULL)
		return false;
	json_array_foreach(r, i, svc) {
		row = json_object();
		if (row == NULL || json_array_append_new(rows, row) != 0 ||
		    copy_keys(row, svc, head) != 0 ||
		    json_object_set_new(row, "backends", json_integer(
				(json_int_t)json_array_size(json_object_get(svc,
					"backends")))) != 0) {
			json_decref(rows);
			return false;
		}
		n = json_object_get(svc, "usable_backends");
		if (n != NULL)
			json_object_set(row, "usable", (json_t *)n);
		n = json_object_get(svc, "flows");
		if (n != NULL)
			json_object_set(row, "flows", (json_t *)n);
		/* health checks: their kind, and panic when it is on */
		n = json_object_get(json_object_get(svc, "health"), "type");
		json_object_set_new(row, "checks", n != NULL ?
			json_incref((json_t *)n) : json_string("-"));
		if (json_is_true(json_object_get(svc, "panic")))
			json_object_set_new(row, "checks", json_pack("s++",
				json_string_value(n), ",", "PANIC"));
	}
	ctl_fmt_table(rows, 0);
	json_decref(rows);
	json_array_foreach(r, i, svc) {
		service_addr_text(svc, where, sizeof(where));
		printf("\nbackends of %s (%s):\n",
			json_string_value(json_object_get(svc, "name")), where);
		bes = json_object_get(svc, "backends");
		if (json_array_size(bes) == 0 || !ctl_fmt_is_table(bes)) {
			printf("  (none)\n");
			continue;
		}
		rows = lb_backend_rows(bes);
		if (rows == NULL)
			continue;
		ctl_fmt_table(rows, 2);
		json_decref(rows);
	}
	return true;
}

/*
 * health_get: a verdict line ("ready", "NOT READY", "draining"), the
 * reasons one a line, a table of the services (vip, port, proto,
 * backends, usable, announced), the lcores that make no progress, and
 * the announced routes. @return false for a result of another shape.
 */
static bool
print_health_get(const json_t *r)
{
	static const char *const head[] = {
		"vip", "port", "proto", "backends", "usable_backends",
		"announced", NULL
	};
	const json_t *ready = json_object_get(r, "ready");
	const json_t *draining = json_object_get(r, "draining");
	const json_t *reasons = json_object_get(r, "reasons");
	const json_t *services = json_object_get(r, "services");
	const json_t *lcores = json_object_get(r, "lcores");
	const json_t *an = json_object_get(r, "announce");
	const json_t *v, *routes;
	json_t *rows, *row;
	const char *key;
	size_t i;

	if (!json_is_boolean(ready) || !json_is_boolean(draining) ||
	    !json_is_array(reasons) || !json_is_object(services))
		return false;
	printf("%s%s\n", json_is_true(ready) ? "ready" : "NOT READY",
		json_is_true(draining) ? ", draining (VIPs withdrawn)" : "");
	json_array_foreach(reasons, i, v)
		printf("  - %s\n", json_string_value(v) != NULL ?
			json_string_value(v) : "?");
	json_object_foreach((json_t *)(uintptr_t)lcores, key, v)
		if (json_is_false(json_object_get(v, "progress")))
			printf("  lcore %s: stalled for %lld ms\n", key,
				(long long)json_integer_value(json_object_get(v,
					"stalled_ms")));
	if (json_is_object(an)) {
		routes = json_object_get(an, "routes");
		printf("announce: table %lld proto %lld dev %s, %zu route(s)",
			(long long)json_integer_value(json_object_get(an, "table")),
			(long long)json_integer_value(json_object_get(an,
				"protocol")),
			json_string_value(json_object_get(an, "dev")) != NULL ?
			json_string_value(json_object_get(an, "dev")) : "?",
			json_array_size(routes));
		json_array_foreach(routes, i, v)
			printf("%s%s", i == 0 ? ": " : ", ",
				json_string_value(v) != NULL ?
				json_string_value(v) : "?");
		printf("\n");
	} else {
		printf("announce: off\n");
	}
	if (json_object_size(services) == 0)
		return true;
	rows = json_array();
	if (rows == NULL)
		return true;
	json_object_foreach((json_t *)(uintptr_t)services, key, v) {
		row = json_object();
		if (row == NULL || json_array_append_new(rows, row) != 0)
			break;
		json_object_set_new(row, "service", json_string(key));
		copy_keys(row, v, head);
	}
	printf("\n");
	ctl_fmt_table(rows, 0);
	json_decref(rows);
	return true;
}

/*
 * Per-method output: either a formatter (result → what the generic
 * printer shows) or a printer of its own (true: printed).
 */
static const struct view {
	const char *method;
	json_t *(*format)(const json_t *result);
	bool (*print)(const json_t *result);
} views[] = {
	{ "acl_rule_list", format_acl_rule_list, NULL },
	{ "lb_service_list", NULL, print_lb_service_list },
	{ "health_get", NULL, print_health_get },
};

/* The method's entry in views[], or NULL. */
static const struct view *
find_view(const char *method)
{
	size_t i;

	if (method == NULL)
		return NULL;
	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (strcmp(views[i].method, method) == 0)
			return &views[i];
	return NULL;
}

json_t *
ctl_view_format(const char *method, const json_t *result)
{
	const struct view *v = find_view(method);

	if (v == NULL || v->format == NULL)
		return NULL;
	return v->format(result);
}

bool
ctl_view_print(const char *method, const json_t *result)
{
	const struct view *v = find_view(method);

	return v != NULL && v->print != NULL && v->print(result);
}
