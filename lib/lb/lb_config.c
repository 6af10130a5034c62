/* SPDX-License-Identifier: BSD-3-Clause */
/* The "lb" configuration section: services, backends, flow table. */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_decode.h"
#include "pa_lb_config.h"
#include "pa_net.h"

#define CFG_DEFAULT_TABLE_SIZE	65537
#define CFG_MIN_TABLE_SIZE	1021
#define CFG_MAX_TABLE_SIZE	1048573
#define CFG_DEFAULT_FLOWS	1048576
#define CFG_MIN_FLOWS		1024
#define CFG_MAX_FLOWS		67108864
#define CFG_DEFAULT_TCP_TIMEOUT	300
#define CFG_DEFAULT_TCP_FIN_TIMEOUT	10
#define CFG_DEFAULT_UDP_TIMEOUT	30
#define CFG_MAX_TIMEOUT		86400
/* MSS clamp bounds: the smallest MSS every IPv4 host must accept
 * (RFC 879 / RFC 1122) and the largest an IPv4 datagram can carry */
#define CFG_MIN_MSS_CLAMP	536
#define CFG_MAX_MSS_CLAMP	65495
/* lb.fnat.time_wait_s: an hour at most (Linux's TIME_WAIT is 60 s) */
#define CFG_MAX_FNAT_TIME_WAIT_S	3600

static const char *const sched_names[] = {
	[PA_LB_MAGLEV] = "maglev",
	[PA_LB_RR] = "rr",
	[PA_LB_WRR] = "wrr",
	[PA_LB_LC] = "lc",
	NULL
};

static const char *const forward_names[] = {
	[PA_LB_IPIP] = "ipip",
	[PA_LB_NAT] = "nat",
	[PA_LB_DSR] = "dsr",
	[PA_LB_FNAT] = "fnat",
	NULL
};

/* "proxy_protocol" by enum pa_lb_proxy: "none" is no key of the file
 * (an absent key), the file's values start at v1 */
static const char *const proxy_names[] = {
	[PA_LB_PROXY_NONE] = "none",
	[PA_LB_PROXY_V1] = "v1",
	[PA_LB_PROXY_V2] = "v2",
	NULL
};

const char *const pa_lb_config_state_names[] = {
	[PA_LB_UP] = "up",
	[PA_LB_DOWN] = "down",
	[PA_LB_DRAIN] = "drain",
	NULL
};

static bool
is_prime(unsigned long n)
{
	unsigned long d;

	if (n < 2)
		return false;
	if (n % 2 == 0)
		return n == 2;
	for (d = 3; d * d <= n; d += 2)
		if (n % d == 0)
			return false;
	return true;
}

static const char *
proto_name(int proto)
{
	const char *n = pa_net_proto_name(proto);

	return n != NULL ? n : "?";
}

const char *
pa_lb_config_proto_name(int proto)
{
	return proto_name(proto);
}

const char *
pa_lb_config_sched_name(enum pa_lb_sched s)
{
	return (unsigned int)s <= PA_LB_LC ? sched_names[s] : "?";
}

const char *
pa_lb_config_forward_name(enum pa_lb_forward f)
{
	return (unsigned int)f <= PA_LB_FNAT ? forward_names[f] : "?";
}

const char *
pa_lb_config_proxy_name(enum pa_lb_proxy p)
{
	return (unsigned int)p <= PA_LB_PROXY_V2 ? proxy_names[p] : "?";
}

const char *
pa_lb_config_state_name(enum pa_lb_state s)
{
	return (unsigned int)s <= PA_LB_DRAIN ? pa_lb_config_state_names[s] :
		"?";
}

/* ------------------------------------------------------------------ */
/* Backends                                                            */
/* ------------------------------------------------------------------ */

/* The backend checks below take the service as @p arg. */

static int
backend_addr_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_service *svc = arg;
	const struct pa_config_backend *be = out;
	char buf[INET6_ADDRSTRLEN];

	/* full NAT translates between the families (RFC 7915); the
	 * other methods keep the client's packet as it is */
	if (be->addr.family != svc->vip.family && svc->forward != PA_LB_FNAT)
		return pa_decode_fail(err, err_len,
				"%s: %s backend '%s' for an %s service (only forward \"fnat\" mixes families)",
				path, pa_net_family_name(be->addr.family),
				pa_net_format_ip(&be->addr, buf, sizeof(buf)),
				pa_net_family_name(svc->vip.family));
	if (pa_ip_unicast_problem(&be->addr) != NULL)
		return pa_decode_fail(err, err_len,
				"%s: '%s' is %s, not a backend", path,
				pa_net_format_ip(&be->addr, buf, sizeof(buf)),
				pa_ip_unicast_problem(&be->addr));
	if (pa_ip_equal(&be->addr, &svc->vip))
		return pa_decode_fail(err, err_len,
				"%s: '%s' is the service's own VIP", path,
				pa_net_format_ip(&be->addr, buf, sizeof(buf)));
	return 0;
}

static int
backend_port_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_service *svc = arg;
	const struct pa_config_backend *be = out;

	if (svc->forward != PA_LB_NAT && svc->forward != PA_LB_FNAT &&
			be->port != 0 && be->port != svc->port)
		return pa_decode_fail(err, err_len,
				"%s: forward \"%s\" cannot change the destination port (only \"nat\" and \"fnat\" can); use 0 or %u",
				path, forward_names[svc->forward], svc->port);
	return 0;
}

/* Also called when "mac" is absent. */
static int
backend_mac_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_service *svc = arg;
	const struct pa_config_backend *be = out;

	if (svc->forward == PA_LB_DSR && !be->has_mac)
		return pa_decode_fail(err, err_len,
				"%s: required with \"forward\": \"dsr\"", path);
	return 0;
}

#define BACKEND(m)	PA_DECODE_AT(struct pa_config_backend, m)

static const struct pa_decode_field backend_fields[] = {
	{ .name = "addr", .type = PA_DECODE_IP, .required = true,
	  BACKEND(addr), .check = backend_addr_check,
	  .doc = "a unicast address, not the VIP; of the VIP's family unless forward is \"fnat\" (then of a family of lb.fnat.addrs)" },
	{ .name = "port", .type = PA_DECODE_PORT, .min = 0, .max = 65535,
	  BACKEND(port), .check = backend_port_check },
	{ .name = "weight", .type = PA_DECODE_INT, .min = 0, .max = 65535,
	  BACKEND(weight) },
	{ .name = "mac", .type = PA_DECODE_MAC, BACKEND(mac),
	  PA_DECODE_PRESENT(struct pa_config_backend, has_mac),
	  .check = backend_mac_check, .flags = PA_DECODE_ALWAYS,
	  .doc = "the backend's MAC address; required with \"forward\": \"dsr\"" },
	{ .name = "state", .type = PA_DECODE_ENUM,
	  .names = pa_lb_config_state_names,
	  BACKEND(state) },
};

json_t *
pa_lb_config_backend_schema(void)
{
	return pa_decode_schema_object(backend_fields,
			PA_DECODE_N(backend_fields));
}

int
pa_lb_config_parse_backend(const json_t *obj,
		const struct pa_config_service *svc, const char *path,
		struct pa_config_backend *be, char *err, size_t err_len)
{
	memset(be, 0, sizeof(*be));
	be->weight = 1;
	return pa_decode_object(obj, path != NULL ? path : "$",
			backend_fields, PA_DECODE_N(backend_fields), be,
			(void *)(uintptr_t)svc, err, err_len);
}

json_t *
pa_lb_config_backend_to_json(const struct pa_config_backend *be)
{
	json_t *o;
	int rc = 0;

	o = json_object();
	if (o == NULL)
		return NULL;
	rc |= json_object_set_new(o, "addr", pa_config_ip_json(&be->addr));
	rc |= json_object_set_new(o, "port", json_integer(be->port));
	rc |= json_object_set_new(o, "weight", json_integer(be->weight));
	if (be->has_mac)
		rc |= json_object_set_new(o, "mac", pa_config_mac_json(be->mac));
	rc |= json_object_set_new(o, "state",
			json_string(pa_lb_config_state_names[be->state]));
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Index of the first address of @p family in the pool, or -1. */
static int
pool_addr_of_family(const struct pa_config_fnat *fn, int family)
{
	unsigned int i;

	for (i = 0; fn->present && i < fn->n_addrs; i++)
		if (fn->addrs[i].family == family)
			return (int)i;
	return -1;
}

int
pa_lb_config_backend_pool_check(const struct pa_config_lb *lb,
		const struct pa_config_service *svc,
		const struct pa_config_backend *be, const char *path,
		char *err, size_t err_len)
{
	char p[PA_DECODE_PATH_MAX];

	if (svc->forward != PA_LB_FNAT)
		return 0;
	if (lb != NULL && pool_addr_of_family(&lb->fnat,
			be->addr.family) >= 0)
		return 0;
	return pa_decode_fail(err, err_len,
			"%s: forward \"fnat\" needs an %s address in lb.fnat.addrs (the source of what goes to this backend)",
			pa_decode_key_path(p, sizeof(p), path != NULL ? path :
				"$", "addr"),
			pa_net_family_name(be->addr.family));
}

/* ------------------------------------------------------------------ */
/* Services                                                            */
/* ------------------------------------------------------------------ */

/* The service decoders below take the "lb" section (or NULL) as @p arg. */

static int
service_vip_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_service *svc = out;
	const struct pa_config_lb *lb = arg;
	char buf[INET6_ADDRSTRLEN];
	bool v4 = svc->vip.family == AF_INET;
	unsigned int i;

	if (pa_ip_unicast_problem(&svc->vip) != NULL)
		return pa_decode_fail(err, err_len,
				"%s: '%s' is %s, not a VIP", path,
				pa_net_format_ip(&svc->vip, buf, sizeof(buf)),
				pa_ip_unicast_problem(&svc->vip));
	/* a VIP is the LB's whole address; local_addr is the outer source
	 * of ipip, which backends holding the VIP drop as their own */
	if (lb != NULL && (v4 ? lb->has_local_addr : lb->has_local_addr6) &&
	    pa_ip_equal(&svc->vip, v4 ? &lb->local_addr : &lb->local_addr6))
		return pa_decode_fail(err, err_len,
				"%s: '%s' is also $.lb.%s: a VIP cannot be the load balancer's source address (ipip backends hold the VIP and drop packets from it)",
				path, pa_net_format_ip(&svc->vip, buf,
					sizeof(buf)),
				v4 ? "local_addr" : "local_addr6");
	/* replies to a pool address are looked up by port, a VIP's
	 * packets by service: one address cannot be both */
	for (i = 0; lb != NULL && lb->fnat.present && i < lb->fnat.n_addrs;
	     i++)
		if (pa_ip_equal(&svc->vip, &lb->fnat.addrs[i]))
			return pa_decode_fail(err, err_len,
					"%s: '%s' is also $.lb.fnat.addrs[%u]: a VIP cannot be a full-NAT pool address",
					path, pa_net_format_ip(&svc->vip, buf,
						sizeof(buf)), i);
	return 0;
}

static int
service_proto(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_service *svc = out;
	int proto;

	if (pa_decode_proto(v, path, &proto, err, err_len) < 0)
		return -EINVAL;
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return pa_decode_fail(err, err_len,
				"%s: a service is \"tcp\" or \"udp\"", path);
	svc->proto = (uint8_t)proto;
	return 0;
}

static json_t *
service_proto_schema(const struct pa_decode_field *f)
{
	/* pa_decode_proto()'s forms of TCP and UDP */
	return json_pack("{s:[ss], s:[sisiss]}", "type", "string", "integer",
			"enum", "tcp", IPPROTO_TCP, "udp", IPPROTO_UDP,
			"6", "17");
}

/* Also called when "forward" is absent ("ipip", the default). */
static int
service_forward_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_service *svc = out;
	const struct pa_config_lb *lb = arg;
	bool need4, need6;

	need4 = svc->forward == PA_LB_IPIP && svc->vip.family == AF_INET &&
		(lb == NULL || !lb->has_local_addr);
	need6 = svc->forward == PA_LB_IPIP && svc->vip.family == AF_INET6 &&
		(lb == NULL || !lb->has_local_addr6);
	if (need4 || need6)
		return pa_decode_fail(err, err_len,
				"%s: \"ipip\"%s for an %s service needs $.lb.%s (the outer source address)",
				path, v == NULL ? " (the default)" : "",
				pa_net_family_name(svc->vip.family),
				need4 ? "local_addr" : "local_addr6");
	if (svc->forward == PA_LB_FNAT && (lb == NULL || !lb->fnat.present))
		return pa_decode_fail(err, err_len,
				"%s: \"fnat\" needs $.lb.fnat (the pool of source addresses)",
				path);
	return 0;
}

/* "proxy_protocol": "v1" or "v2"; TCP fnat services only ("forward"
 * and "proto" are decoded before it). */
static int
service_proxy(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_service *svc = out;
	int i;

	if (pa_decode_enum(v, path, proxy_names + PA_LB_PROXY_V1, &i, err,
			err_len) < 0)
		return -EINVAL;
	if (svc->forward != PA_LB_FNAT || svc->proto != IPPROTO_TCP)
		return pa_decode_fail(err, err_len,
				"%s: only on a \"tcp\" service with \"forward\": \"fnat\" (this one is %s with \"%s\")",
				path, proto_name(svc->proto),
				forward_names[svc->forward]);
	svc->proxy_protocol = (enum pa_lb_proxy)(i + PA_LB_PROXY_V1);
	return 0;
}

static json_t *
service_proxy_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:[ss], s:s}", "type", "string", "enum",
			proxy_names[PA_LB_PROXY_V1], proxy_names[PA_LB_PROXY_V2],
			"description", "PROXY protocol header sent to the backend; \"tcp\" services with \"forward\": \"fnat\" only (absent: none)");
}

static int
service_table_size_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_service *svc = out;

	if (!is_prime(svc->table_size))
		return pa_decode_fail(err, err_len, "%s: %u is not a prime",
				path, svc->table_size);
	return 0;
}

/* max_flows: at most the flow table (a larger limit could never be
 * reached: it would only hide a typo). */
static int
service_max_flows_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_service *svc = out;
	const struct pa_config_lb *lb = arg;
	uint32_t size = lb != NULL && lb->flow_table.size != 0 ?
		lb->flow_table.size : CFG_DEFAULT_FLOWS;

	(void)f;
	(void)v;
	if (svc->max_flows > size)
		return pa_decode_fail(err, err_len,
				"%s: %u is more than the flow table holds (lb.flow_table.size %u)",
				path, svc->max_flows, size);
	return 0;
}

/* What the element decoders of an array need: the object it belongs to
 * and the array's path (for "also <path>[j]"). */
struct elem_ctx {
	void *owner;
	const char *path;
	const struct pa_config_lb *lb;	/**< backends: the "lb" section */
};

/* One backend of a service's "backends", unique in it. */
static int
backend_elem(const json_t *v, const char *path, void *elems, size_t i,
		void *arg, char *err, size_t err_len)
{
	const struct elem_ctx *x = arg;
	struct pa_config_backend *be = elems;
	char buf[INET6_ADDRSTRLEN];
	size_t j;
	int rc;

	rc = pa_lb_config_parse_backend(v, x->owner, path, &be[i], err,
		err_len);
	if (rc == 0)
		rc = pa_lb_config_backend_pool_check(x->lb, x->owner, &be[i],
			path, err, err_len);
	if (rc < 0)
		return rc;
	for (j = 0; j < i; j++)
		if (pa_ip_equal(&be[j].addr, &be[i].addr))
			return pa_decode_fail(err, err_len,
					"%s.addr: duplicate backend '%s' (also %s[%zu])",
					path, pa_net_format_ip(&be[i].addr, buf,
						sizeof(buf)), x->path, j);
	return 0;
}

static json_t *
service_backends_schema(const struct pa_decode_field *f)
{
	return pa_decode_schema_array(pa_lb_config_backend_schema(), 0);
}

static int
service_backends(const struct pa_decode_field *f, const json_t *arr,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_service *svc = out;
	struct elem_ctx x = { svc, path, arg };

	return pa_decode_array(arr, path, sizeof(*svc->backends),
		backend_elem, &x, (void **)&svc->backends, &svc->n_backends,
		err, err_len);
}

/* ------------------------------------------------------------------ */
/* Health checks                                                       */
/* ------------------------------------------------------------------ */

const char *const pa_lb_config_health_names[] = {
	[PA_HEALTH_NONE] = "none",
	[PA_HEALTH_TCP] = "tcp",
	[PA_HEALTH_HTTP] = "http",
	[PA_HEALTH_UDP] = "udp",
	[PA_HEALTH_ICMP] = "icmp",
	NULL
};

const char *
pa_lb_config_health_name(enum pa_health_type t)
{
	return (unsigned int)t <= PA_HEALTH_ICMP ?
		pa_lb_config_health_names[t] : "?";
}

/* "path": an absolute path of printable characters without spaces, as
 * it goes on the request line. */
static int
health_path(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_health *h = out;
	const char *s;
	size_t i, n;

	if (pa_decode_string(v, path, &s, err, err_len) < 0)
		return -EINVAL;
	n = strlen(s);
	if (n == 0 || s[0] != '/')
		return pa_decode_fail(err, err_len,
				"%s: an absolute path (\"/...\") is needed", path);
	if (n >= sizeof(h->path))
		return pa_decode_fail(err, err_len,
				"%s: longer than %zu characters", path,
				sizeof(h->path) - 1);
	for (i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f)
			return pa_decode_fail(err, err_len,
					"%s: spaces and control or non-ASCII characters are not allowed (percent-encode them)",
					path);
	memcpy(h->path, s, n + 1);
	return 0;
}

/* "expect": http, the status code (an integer 100..599); udp, text the
 * reply must contain. Which one depends on "type", decoded before. */
static int
health_expect(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_health *h = out;
	const char *s;
	long long x;
	size_t i, n;

	if (h->type == PA_HEALTH_HTTP) {
		if (pa_decode_int(v, path, 100, 599, &x, err, err_len) < 0)
			return -EINVAL;
		h->expect_status = (uint16_t)x;
		return 0;
	}
	if (h->type != PA_HEALTH_UDP)
		return pa_decode_fail(err, err_len,
				"%s: only for \"http\" (a status code) and \"udp\" (text of the reply)",
				path);
	if (pa_decode_string(v, path, &s, err, err_len) < 0)
		return -EINVAL;
	n = strlen(s);
	if (n == 0 || n >= sizeof(h->expect))
		return pa_decode_fail(err, err_len,
				"%s: 1 to %zu characters", path,
				sizeof(h->expect) - 1);
	for (i = 0; i < n; i++)
		if (s[i] < ' ' || s[i] >= 0x7f)
			return pa_decode_fail(err, err_len,
					"%s: printable ASCII only", path);
	memcpy(h->expect, s, n + 1);
	return 0;
}

#define HEALTH(m)	PA_DECODE_AT(struct pa_config_health, m)

static json_t *
health_path_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:s, s:i, s:s}", "type", "string",
			"pattern", "^/[!-~]*$", "maxLength",
			(int)sizeof(((struct pa_config_health *)0)->path) - 1,
			"description", "\"http\": the request's absolute path, printable, no spaces");
}

static json_t *
health_expect_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:s, s:i, s:i, s:s}", "type", "string",
			"pattern", "^[ -~]+$", "minLength", 1, "maxLength",
			(int)sizeof(((struct pa_config_health *)0)->expect) - 1,
			"description", "\"http\": text the answer must contain; printable ASCII");
}

static const struct pa_decode_field health_fields[] = {
	{ .name = "type", .type = PA_DECODE_ENUM, .required = true,
	  .names = pa_lb_config_health_names, HEALTH(type) },
	{ .name = "port", .type = PA_DECODE_PORT, .min = 1, .max = 65535,
	  HEALTH(port) },
	{ .name = "path", .type = PA_DECODE_CUSTOM, .decode = health_path,
	  .schema = health_path_schema },
	{ .name = "expect", .type = PA_DECODE_CUSTOM, .decode = health_expect,
	  .schema = health_expect_schema },
	{ .name = "interval_ms", .type = PA_DECODE_INT,
	  .min = PA_CONFIG_HEALTH_MIN_INTERVAL_MS,
	  .max = PA_CONFIG_HEALTH_MAX_INTERVAL_MS, HEALTH(interval_ms) },
	{ .name = "timeout_ms", .type = PA_DECODE_INT,
	  .min = PA_CONFIG_HEALTH_MIN_TIMEOUT_MS,
	  .max = PA_CONFIG_HEALTH_MAX_INTERVAL_MS, HEALTH(timeout_ms) },
	{ .name = "rise", .type = PA_DECODE_INT, .min = 1,
	  .max = PA_CONFIG_HEALTH_MAX_COUNT, HEALTH(rise) },
	{ .name = "fall", .type = PA_DECODE_INT, .min = 1,
	  .max = PA_CONFIG_HEALTH_MAX_COUNT, HEALTH(fall) },
	{ .name = "agent_port", .type = PA_DECODE_PORT, .min = 1,
	  .max = 65535, HEALTH(agent_port) },
	{ .name = "grace_ms", .type = PA_DECODE_INT, .min = 0,
	  .max = PA_CONFIG_HEALTH_MAX_GRACE_MS, HEALTH(grace_ms) },
};

void
pa_lb_config_health_defaults(struct pa_config_health *h)
{
	memset(h, 0, sizeof(*h));
	h->interval_ms = PA_CONFIG_HEALTH_DEF_INTERVAL_MS;
	h->timeout_ms = PA_CONFIG_HEALTH_DEF_TIMEOUT_MS;
	h->rise = PA_CONFIG_HEALTH_DEF_RISE;
	h->fall = PA_CONFIG_HEALTH_DEF_FALL;
}

static json_t *
service_health_schema(const struct pa_decode_field *f)
{
	return pa_decode_schema_object(health_fields,
			PA_DECODE_N(health_fields));
}

/* A service's "health": the fields, then what they say together and
 * against the service (its protocol; @p arg, the "lb" section, says
 * which families have a kernel_if to probe through). */
static int
service_health(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_service *svc = out;
	const struct pa_config_lb *lb = arg;
	struct pa_config_health *h = &svc->health;
	char p[PA_DECODE_PATH_MAX];
	bool tcp_probe;
	int rc;

	pa_lb_config_health_defaults(h);
	rc = pa_decode_object(v, path, health_fields,
			PA_DECODE_N(health_fields), h, NULL, err, err_len);
	if (rc < 0)
		return rc;
	h->present = true;
	if (h->type == PA_HEALTH_HTTP && h->expect_status == 0)
		h->expect_status = 200;
	if (h->type == PA_HEALTH_HTTP && h->path[0] == '\0')
		memcpy(h->path, "/", 2);
	if (h->path[0] != '\0' && h->type != PA_HEALTH_HTTP)
		return pa_decode_fail(err, err_len,
				"%s: only for \"type\": \"http\"",
				pa_decode_key_path(p, sizeof(p), path, "path"));
	if (h->port != 0 && (h->type == PA_HEALTH_ICMP ||
			h->type == PA_HEALTH_NONE))
		return pa_decode_fail(err, err_len,
				"%s: \"%s\" checks have no port",
				pa_decode_key_path(p, sizeof(p), path, "port"),
				pa_lb_config_health_names[h->type]);
	if (h->timeout_ms >= h->interval_ms)
		return pa_decode_fail(err, err_len,
				"%s: %u ms is not below interval_ms (%u ms): a probe must end before the next one starts",
				pa_decode_key_path(p, sizeof(p), path,
					"timeout_ms"),
				h->timeout_ms, h->interval_ms);
	tcp_probe = h->type == PA_HEALTH_TCP || h->type == PA_HEALTH_HTTP;
	if (h->port == 0 && ((tcp_probe && svc->proto != IPPROTO_TCP) ||
			(h->type == PA_HEALTH_UDP &&
			 svc->proto != IPPROTO_UDP)))
		return pa_decode_fail(err, err_len,
				"%s: \"%s\" probes a %s port and the service is %s: give \"port\"",
				pa_decode_key_path(p, sizeof(p), path, "type"),
				pa_lb_config_health_names[h->type],
				tcp_probe ? "TCP" : "UDP",
				proto_name(svc->proto));
	if (lb != NULL && (h->type != PA_HEALTH_NONE || h->agent_port != 0) &&
	    !(svc->vip.family == AF_INET ? lb->health_v4 : lb->health_v6))
		return pa_decode_fail(err, err_len,
				"%s: probes leave from the appliance's own address through a port's \"kernel_if\", and no routed port with a kernel_if has an %s address (docs/configuration.md, \"Health checks\")",
				path, pa_net_family_name(svc->vip.family));
	return 0;
}

json_t *
pa_lb_config_health_to_json(const struct pa_config_health *h)
{
	json_t *o = json_object();
	int rc = 0;

	if (o == NULL)
		return NULL;
	rc |= json_object_set_new(o, "type",
		json_string(pa_lb_config_health_name(h->type)));
	if (h->port != 0)
		rc |= json_object_set_new(o, "port", json_integer(h->port));
	if (h->type == PA_HEALTH_HTTP) {
		rc |= json_object_set_new(o, "path", json_string(h->path));
		rc |= json_object_set_new(o, "expect",
			json_integer(h->expect_status));
	}
	if (h->type == PA_HEALTH_UDP && h->expect[0] != '\0')
		rc |= json_object_set_new(o, "expect", json_string(h->expect));
	rc |= json_object_set_new(o, "interval_ms",
		json_integer(h->interval_ms));
	rc |= json_object_set_new(o, "timeout_ms", json_integer(h->timeout_ms));
	rc |= json_object_set_new(o, "rise", json_integer(h->rise));
	rc |= json_object_set_new(o, "fall", json_integer(h->fall));
	if (h->agent_port != 0)
		rc |= json_object_set_new(o, "agent_port",
			json_integer(h->agent_port));
	if (h->grace_ms != 0)
		rc |= json_object_set_new(o, "grace_ms",
			json_integer(h->grace_ms));
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

#define SERVICE(m)	PA_DECODE_AT(struct pa_config_service, m)

static const struct pa_decode_field service_fields[] = {
	{ .name = "name", .type = PA_DECODE_NAME, .required = true,
	  SERVICE(name) },
	{ .name = "vip", .type = PA_DECODE_IP, .required = true,
	  SERVICE(vip), .check = service_vip_check },
	{ .name = "port", .type = PA_DECODE_PORT, .required = true,
	  .min = 1, .max = 65535, SERVICE(port) },
	{ .name = "proto", .type = PA_DECODE_CUSTOM, .required = true,
	  .decode = service_proto, .schema = service_proto_schema },
	{ .name = "scheduler", .type = PA_DECODE_ENUM, .names = sched_names,
	  SERVICE(scheduler) },
	{ .name = "forward", .type = PA_DECODE_ENUM, .names = forward_names,
	  SERVICE(forward), .check = service_forward_check,
	  .flags = PA_DECODE_ALWAYS },
	{ .name = "proxy_protocol", .type = PA_DECODE_CUSTOM,
	  .decode = service_proxy, .schema = service_proxy_schema },
	{ .name = "table_size", .type = PA_DECODE_INT,
	  .min = CFG_MIN_TABLE_SIZE, .max = CFG_MAX_TABLE_SIZE,
	  SERVICE(table_size), .check = service_table_size_check,
	  .doc = "a prime" },
	{ .name = "mss_clamp", .type = PA_DECODE_INT,
	  .min = CFG_MIN_MSS_CLAMP, .max = CFG_MAX_MSS_CLAMP,
	  SERVICE(mss_clamp) },
	{ .name = "max_flows", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_FLOWS, SERVICE(max_flows),
	  .check = service_max_flows_check,
	  .doc = "at most lb.flow_table.size" },
	{ .name = "health", .type = PA_DECODE_CUSTOM,
	  .decode = service_health, .schema = service_health_schema },
	{ .name = "backends", .type = PA_DECODE_CUSTOM,
	  .decode = service_backends, .schema = service_backends_schema },
};

json_t *
pa_lb_config_service_schema(void)
{
	json_t *s = pa_decode_schema_object(service_fields,
			PA_DECODE_N(service_fields));

	/* what service_proxy() says of the other fields: "proxy_protocol"
	 * only with "forward": "fnat" and TCP (pa_decode_proto()'s forms) */
	if (s != NULL && json_object_set_new(s, "allOf", json_pack(
			"[{s:{s:[s]}, s:{s:{s:{s:s}, s:{s:[sis]}}, s:[s]}}]",
			"if", "required", "proxy_protocol",
			"then", "properties",
			"forward", "const", forward_names[PA_LB_FNAT],
			"proto", "enum", "tcp", IPPROTO_TCP, "6",
			"required", "forward")) != 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}

void
pa_lb_config_service_clear(struct pa_config_service *svc)
{
	if (svc == NULL)
		return;
	free(svc->backends);
	svc->backends = NULL;
	svc->n_backends = 0;
}

int
pa_lb_config_parse_service(const json_t *obj, const struct pa_config_lb *lb,
		const char *path, struct pa_config_service *svc,
		char *err, size_t err_len)
{
	int rc;

	memset(svc, 0, sizeof(*svc));
	svc->table_size = CFG_DEFAULT_TABLE_SIZE;
	rc = pa_decode_object(obj, path != NULL ? path : "$", service_fields,
			PA_DECODE_N(service_fields), svc,
			(void *)(uintptr_t)lb, err, err_len);
	if (rc < 0)
		pa_lb_config_service_clear(svc);
	return rc;
}

json_t *
pa_lb_config_service_to_json(const struct pa_config_service *svc)
{
	json_t *o, *arr;
	unsigned int i;
	int rc = 0;

	o = json_object();
	arr = json_array();
	if (o == NULL || arr == NULL)
		goto fail;
	rc |= json_object_set_new(o, "name", json_string(svc->name));
	rc |= json_object_set_new(o, "vip", pa_config_ip_json(&svc->vip));
	rc |= json_object_set_new(o, "port", json_integer(svc->port));
	rc |= json_object_set_new(o, "proto",
			json_string(proto_name(svc->proto)));
	rc |= json_object_set_new(o, "scheduler",
			json_string(sched_names[svc->scheduler]));
	rc |= json_object_set_new(o, "forward",
			json_string(forward_names[svc->forward]));
	if (svc->proxy_protocol != PA_LB_PROXY_NONE)
		rc |= json_object_set_new(o, "proxy_protocol",
				json_string(pa_lb_config_proxy_name(
					svc->proxy_protocol)));
	rc |= json_object_set_new(o, "table_size",
			json_integer(svc->table_size));
	if (svc->mss_clamp != 0)
		rc |= json_object_set_new(o, "mss_clamp",
				json_integer(svc->mss_clamp));
	if (svc->max_flows != 0)
		rc |= json_object_set_new(o, "max_flows",
				json_integer(svc->max_flows));
	if (svc->health.present)
		rc |= json_object_set_new(o, "health",
				pa_lb_config_health_to_json(&svc->health));
	for (i = 0; i < svc->n_backends; i++)
		rc |= json_array_append_new(arr,
				pa_lb_config_backend_to_json(&svc->backends[i]));
	rc |= json_object_set_new(o, "backends", arr);
	arr = NULL;
	if (rc != 0)
		goto fail;
	return o;
fail:
	json_decref(arr);
	json_decref(o);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The section                                                         */
/* ------------------------------------------------------------------ */

#define FLOWS(m)	PA_DECODE_AT(struct pa_config_flow_table, m)

static const struct pa_decode_field flow_table_fields[] = {
	{ .name = "size", .type = PA_DECODE_INT,
	  .min = CFG_MIN_FLOWS, .max = CFG_MAX_FLOWS, FLOWS(size) },
	{ .name = "tcp_timeout", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_TIMEOUT, FLOWS(tcp_timeout) },
	{ .name = "tcp_fin_timeout", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_TIMEOUT, FLOWS(tcp_fin_timeout) },
	{ .name = "udp_timeout", .type = PA_DECODE_INT,
	  .min = 1, .max = CFG_MAX_TIMEOUT, FLOWS(udp_timeout) },
};

static json_t *
lb_flow_table_schema(const struct pa_decode_field *f)
{
	return pa_decode_schema_object(flow_table_fields,
			PA_DECODE_N(flow_table_fields));
}

static int
lb_flow_table(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_lb *lb = out;

	return pa_decode_object(v, path, flow_table_fields,
			PA_DECODE_N(flow_table_fields), &lb->flow_table, NULL,
			err, err_len);
}

/* "local_addr" is the IPv4 outer source address, "local_addr6" the IPv6
 * one; each refuses the other family. */
static int
lb_local_addr_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct pa_config_lb *lb = out;
	bool v4 = f->offset == offsetof(struct pa_config_lb, local_addr);
	const struct pa_ip_addr *a = v4 ? &lb->local_addr : &lb->local_addr6;

	if (a->family != (v4 ? AF_INET : AF_INET6))
		return pa_decode_fail(err, err_len,
				"%s: expected an %s address, got '%s' (%s goes in %s)",
				path, v4 ? "IPv4" : "IPv6", json_string_value(v),
				v4 ? "IPv6" : "IPv4",
				v4 ? "local_addr6" : "local_addr");
	return 0;
}

/* "lb.fnat.addrs": 1..PA_CONFIG_FNAT_MAX_ADDRS unicast addresses, IPv4
 * and IPv6 in any order, each once. */
static int
fnat_addrs(const struct pa_decode_field *f, const json_t *arr,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_fnat *fn = out;
	char p[PA_DECODE_PATH_MAX], buf[INET6_ADDRSTRLEN];
	struct pa_ip_addr *a;
	size_t i, j, n;

	if (pa_decode_want_array(arr, path, err, err_len) < 0)
		return -EINVAL;
	n = json_array_size(arr);
	if (n == 0 || n > PA_CONFIG_FNAT_MAX_ADDRS)
		return pa_decode_fail(err, err_len,
				"%s: 1 to %u addresses (got %zu)", path,
				PA_CONFIG_FNAT_MAX_ADDRS, n);
	for (i = 0; i < n; i++) {
		a = &fn->addrs[i];
		pa_decode_index_path(p, sizeof(p), path, i);
		if (pa_decode_ip(json_array_get(arr, i), p, a, err,
				err_len) < 0)
			return -EINVAL;
		if (pa_ip_unicast_problem(a) != NULL)
			return pa_decode_fail(err, err_len,
					"%s: '%s' is %s, not a source address",
					p, pa_net_format_ip(a, buf, sizeof(buf)),
					pa_ip_unicast_problem(a));
		for (j = 0; j < i; j++)
			if (pa_ip_equal(&fn->addrs[j], a))
				return pa_decode_fail(err, err_len,
						"%s: duplicate address '%s' (also %s[%zu])",
						p, pa_net_format_ip(a, buf,
							sizeof(buf)), path, j);
	}
	fn->n_addrs = (unsigned int)n;
	return 0;
}

static json_t *
fnat_addrs_schema(const struct pa_decode_field *f)
{
	json_t *s = pa_decode_schema_array(pa_decode_schema_ip(f),
			PA_CONFIG_FNAT_MAX_ADDRS);

	if (s != NULL && (json_object_set_new(s, "minItems",
			json_integer(1)) != 0 ||
	    json_object_set_new(s, "uniqueItems", json_true()) != 0 ||
	    json_object_set_new(s, "description", json_string(
			"this appliance's full-NAT source addresses, unicast, IPv4 and IPv6")) != 0)) {
		json_decref(s);
		return NULL;
	}
	return s;
}

/* "lb.fnat.ports": "LO-HI" or "N", ports 1..65535. */
static int
fnat_ports(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_fnat *fn = out;
	struct pa_port_range r;
	const char *s;

	if (pa_decode_string(v, path, &s, err, err_len) < 0)
		return -EINVAL;
	if (strcmp(s, "any") == 0 ||
	    pa_decode_port_range(v, path, &r, err, err_len) < 0 || r.lo == 0)
		return pa_decode_fail(err, err_len,
				"%s: expected \"LO-HI\" or \"N\" with ports 1..65535 and LO <= HI, got '%s'",
				path, s);
	fn->port_lo = r.lo;
	fn->port_hi = r.hi;
	return 0;
}

static json_t *
fnat_ports_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:s, s:s, s:s}", "type", "string", "pattern",
			"^[0-9]{1,5}(-[0-9]{1,5})?$", "description",
			"the source ports of the pool, \"LO-HI\" (LO <= HI) or \"N\", ports 1..65535; default \"1024-65535\"");
}

#define FNAT(m)	PA_DECODE_AT(struct pa_config_fnat, m)

static const struct pa_decode_field fnat_fields[] = {
	{ .name = "addrs", .type = PA_DECODE_CUSTOM, .required = true,
	  .decode = fnat_addrs, .schema = fnat_addrs_schema },
	{ .name = "ports", .type = PA_DECODE_CUSTOM, .decode = fnat_ports,
	  .schema = fnat_ports_schema },
	{ .name = "time_wait_s", .type = PA_DECODE_INT, .min = 0,
	  .max = CFG_MAX_FNAT_TIME_WAIT_S, FNAT(time_wait_s),
	  .doc = "seconds before a pool address and port whose flow ended serves the same backend again (its TIME_WAIT); default 60" },
};

static json_t *
lb_fnat_schema(const struct pa_decode_field *f)
{
	json_t *s = pa_decode_schema_object(fnat_fields,
			PA_DECODE_N(fnat_fields));

	if (s != NULL && json_object_set_new(s, "description", json_string(
			"the full-NAT source pool of this appliance (forward \"fnat\")")) != 0) {
		json_decref(s);
		return NULL;
	}
	return s;
}

static int
lb_fnat(const struct pa_decode_field *f, const json_t *v, const char *path,
		void *out, void *arg, char *err, size_t err_len)
{
	struct pa_config_lb *lb = out;
	int rc;

	rc = pa_decode_object(v, path, fnat_fields, PA_DECODE_N(fnat_fields),
			&lb->fnat, NULL, err, err_len);
	if (rc == 0)
		lb->fnat.present = true;
	return rc;
}

static void
fnat_defaults(struct pa_config_fnat *fn)
{
	memset(fn, 0, sizeof(*fn));
	fn->port_lo = PA_CONFIG_FNAT_DEF_PORT_LO;
	fn->port_hi = PA_CONFIG_FNAT_DEF_PORT_HI;
	fn->time_wait_s = PA_CONFIG_FNAT_DEF_TIME_WAIT_S;
}

static json_t *
fnat_to_json(const struct pa_config_fnat *fn)
{
	char ports[16];
	json_t *o, *a;
	unsigned int i;
	int rc = 0;

	o = json_object();
	a = json_array();
	if (o == NULL || a == NULL)
		goto fail;
	for (i = 0; i < fn->n_addrs; i++)
		rc |= json_array_append_new(a, pa_config_ip_json(&fn->addrs[i]));
	rc |= json_object_set_new(o, "addrs", a);
	a = NULL;
	if (fn->port_lo == fn->port_hi)
		snprintf(ports, sizeof(ports), "%u", fn->port_lo);
	else
		snprintf(ports, sizeof(ports), "%u-%u", fn->port_lo,
			fn->port_hi);
	rc |= json_object_set_new(o, "ports", json_string(ports));
	rc |= json_object_set_new(o, "time_wait_s",
			json_integer(fn->time_wait_s));
	if (rc != 0)
		goto fail;
	return o;
fail:
	json_decref(a);
	json_decref(o);
	return NULL;
}

/* One service of "lb.services", unique by name and by (VIP, port,
 * protocol); a refused one leaves none of its backends allocated. */
static int
service_elem(const json_t *v, const char *path, void *elems, size_t i,
		void *arg, char *err, size_t err_len)
{
	const struct elem_ctx *x = arg;
	struct pa_config_service *a, *b, *svcs = elems;
	char buf[INET6_ADDRSTRLEN];
	size_t j;
	int rc;

	rc = pa_lb_config_parse_service(v, x->owner, path, &svcs[i], err,
		err_len);
	if (rc < 0)
		return rc;
	a = &svcs[i];
	for (j = 0; j < i; j++) {
		b = &svcs[j];
		if (strcmp(a->name, b->name) == 0)
			rc = pa_decode_fail(err, err_len,
					"%s.name: duplicate service name '%s' (also %s[%zu])",
					path, a->name, x->path, j);
		else if (pa_ip_equal(&a->vip, &b->vip) &&
				a->port == b->port && a->proto == b->proto)
			rc = pa_decode_fail(err, err_len,
					"%s.vip: %s port %u %s is already service '%s' (%s[%zu])",
					path, pa_net_format_ip(&a->vip, buf,
						sizeof(buf)),
					a->port, proto_name(a->proto), b->name,
					x->path, j);
		if (rc < 0) {
			pa_lb_config_service_clear(a);
			return rc;
		}
	}
	return 0;
}

static json_t *
lb_services_schema(const struct pa_decode_field *f)
{
	return pa_decode_schema_array(pa_lb_config_service_schema(), 0);
}

static int
lb_services(const struct pa_decode_field *f, const json_t *arr,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_config_lb *lb = out;
	struct elem_ctx x = { lb, path, lb };

	return pa_decode_array(arr, path, sizeof(*lb->services), service_elem,
		&x, (void **)&lb->services, &lb->n_services, err, err_len);
}

#define LB(m)	PA_DECODE_AT(struct pa_config_lb, m)

static const struct pa_decode_field lb_fields[] = {
	{ .name = "local_addr", .type = PA_DECODE_IP, LB(local_addr),
	  PA_DECODE_PRESENT(struct pa_config_lb, has_local_addr),
	  .check = lb_local_addr_check },
	{ .name = "local_addr6", .type = PA_DECODE_IP, LB(local_addr6),
	  PA_DECODE_PRESENT(struct pa_config_lb, has_local_addr6),
	  .check = lb_local_addr_check },
	{ .name = "fnat", .type = PA_DECODE_CUSTOM, .decode = lb_fnat,
	  .schema = lb_fnat_schema },
	{ .name = "flow_table", .type = PA_DECODE_CUSTOM,
	  .decode = lb_flow_table, .schema = lb_flow_table_schema },
	{ .name = "icmp_echo", .type = PA_DECODE_BOOL, LB(icmp_echo) },
	{ .name = "table_history_s", .type = PA_DECODE_INT, .min = 0,
	  .max = PA_CONFIG_TABLE_HISTORY_MAX_S, LB(table_history_s),
	  .doc = "seconds: a TCP packet without SYN that matches no flow of a maglev service goes to the backend its table chose this long ago, if still usable; 0 = off; default 60" },
	{ .name = "services", .type = PA_DECODE_CUSTOM, .decode = lb_services,
	  .schema = lb_services_schema },
};

static json_t *
lb_schema(void)
{
	return pa_decode_schema_object(lb_fields, PA_DECODE_N(lb_fields));
}

static void
lb_defaults(struct pa_config *cfg, const struct pa_config_opts *opts)
{
	struct pa_config_flow_table *ft = &cfg->lb.flow_table;

	ft->size = CFG_DEFAULT_FLOWS;
	ft->tcp_timeout = CFG_DEFAULT_TCP_TIMEOUT;
	ft->tcp_fin_timeout = CFG_DEFAULT_TCP_FIN_TIMEOUT;
	ft->udp_timeout = CFG_DEFAULT_UDP_TIMEOUT;
	cfg->lb.icmp_echo = true;
	cfg->lb.table_history_s = PA_CONFIG_TABLE_HISTORY_DEF_S;
	fnat_defaults(&cfg->lb.fnat);
}

/*
 * One address, shared (docs/configuration.md): lb.local_addr and
 * local_addr6 may be a routed port's own address (the LB keeps its part,
 * pa_lb_local_owns(); the port's kernel_if the rest), a VIP may not: the
 * whole address would be the LB's, and the port, its kernel_if and its
 * neighbours would lose it (the rx stage takes a port's own addresses for
 * the port before any service sees them).
 */
int
pa_lb_config_vip_port_check(const struct pa_config *cfg,
		const struct pa_config_service *svc, const char *path,
		char *err, size_t err_len)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned int j, k;

	for (j = 0; cfg != NULL && j < cfg->n_ports; j++) {
		const struct pa_config_port *p = &cfg->ports[j];

		for (k = 0; k < p->n_addrs; k++)
			if (pa_ip_equal(&svc->vip, &p->addrs[k].addr))
				return pa_decode_fail(err, err_len,
					"%s: '%s' is also $.ports[%u].addr[%u] (port '%s'): a VIP cannot be a port's own address (lb.local_addr can)",
					path, pa_net_format_ip(&svc->vip, buf,
						sizeof(buf)),
					j, k, p->name);
	}
	return 0;
}

static int
lb_vip_port_check(const struct pa_config *cfg, char *err, size_t err_len)
{
	char path[PA_DECODE_PATH_MAX];
	unsigned int i;
	int rc;

	for (i = 0; i < cfg->lb.n_services; i++) {
		snprintf(path, sizeof(path), "$.lb.services[%u].vip", i);
		rc = pa_lb_config_vip_port_check(cfg, &cfg->lb.services[i],
				path, err, err_len);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The kernel's ephemeral ports (net.ipv4.ip_local_port_range, which
 * IPv6 shares), less those it reserves (ip_local_reserved_ports):
 * bit i of @p eph set for port i. false when they cannot be read. */
static bool
kernel_ephemeral_ports(uint8_t *eph)
{
	unsigned int lo, hi, a, b, i;
	char buf[4096], *p, *end;
	FILE *f;

	f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (f == NULL)
		return false;
	if (fscanf(f, "%u %u", &lo, &hi) != 2 || lo > hi || hi > 65535) {
		fclose(f);
		return false;
	}
	fclose(f);
	memset(eph, 0, 65536 / 8);
	for (i = lo; i <= hi; i++)
		eph[i / 8] |= (uint8_t)(1u << (i % 8));
	f = fopen("/proc/sys/net/ipv4/ip_local_reserved_ports", "r");
	if (f == NULL)
		return true;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		/* "a,b-c,..." */
		for (p = buf; *p != '\0' && *p != '\n'; p = end + (*end == ',')) {
			a = (unsigned int)strtoul(p, &end, 10);
			b = a;
			if (end == p)
				break;
			if (*end == '-') {
				p = end + 1;
				b = (unsigned int)strtoul(p, &end, 10);
				if (end == p)
					break;
			}
			for (i = a; i <= b && i <= 65535; i++)
				eph[i / 8] &= (uint8_t)~(1u << (i % 8));
		}
	}
	fclose(f);
	return true;
}

/*
 * A pool address that is also a routed port's address with a kernel_if
 * shares it with the kernel: a port of lb.fnat.ports that the kernel may
 * take as the source port of a connection of its own (a health check, a
 * BGP session it opens) would bring that connection's replies to the
 * load balancer, and could even give a backend two connections with the
 * same four numbers. Refused, naming both, with what to change.
 */
static int
lb_pool_kernel_check(const struct pa_config *cfg, char *err, size_t err_len)
{
	static uint8_t eph[65536 / 8];
	const struct pa_config_fnat *fn = &cfg->lb.fnat;
	char buf[INET6_ADDRSTRLEN];
	unsigned int i, j, k, port, first = 0, n = 0;
	bool read = false;

	for (i = 0; fn->present && i < fn->n_addrs; i++) {
		for (j = 0; j < cfg->n_ports; j++) {
			const struct pa_config_port *p = &cfg->ports[j];

			if (p->kernel_if[0] == '\0')
				continue;
			for (k = 0; k < p->n_addrs; k++) {
				if (!pa_ip_equal(&fn->addrs[i],
						&p->addrs[k].addr))
					continue;
				if (!read && !kernel_ephemeral_ports(eph))
					return 0;	/* nothing to check */
				read = true;
				for (port = fn->port_lo, n = 0;
				     port <= fn->port_hi; port++) {
					if (!(eph[port / 8] & (1u << (port % 8))))
						continue;
					if (n++ == 0)
						first = port;
				}
				if (n == 0)
					continue;
				return pa_decode_fail(err, err_len,
					"$.lb.fnat.ports: %u-%u holds %u of the kernel's ephemeral ports (net.ipv4.ip_local_port_range, from %u) and $.lb.fnat.addrs[%u] '%s' is also $.ports[%u].addr[%u], shared with kernel_if '%s': the kernel's own connections from that address would lose their replies to the pool; keep the pool's ports out of that range (e.g. \"1024-%u\") or reserve them (net.ipv4.ip_local_reserved_ports)",
					fn->port_lo, fn->port_hi, n, first, i,
					pa_net_format_ip(&fn->addrs[i], buf,
						sizeof(buf)), j, k, p->kernel_if,
					first > 1024 ? first - 1 : 32767);
			}
		}
	}
	return 0;
}

static int
lb_parse(const json_t *v, struct pa_config *cfg,
		const struct pa_config_opts *opts, char *err, size_t err_len)
{
	unsigned int i, j;
	int rc;

	/* where health probes can leave from (service_health()) */
	cfg->lb.health_v4 = cfg->lb.health_v6 = opts != NULL && opts->replay;
	for (i = 0; i < cfg->n_ports; i++) {
		const struct pa_config_port *p = &cfg->ports[i];

		if (p->kernel_if[0] == '\0')
			continue;
		for (j = 0; j < p->n_addrs; j++) {
			if (p->addrs[j].addr.family == AF_INET)
				cfg->lb.health_v4 = true;
			else
				cfg->lb.health_v6 = true;
		}
	}
	if (v == NULL)
		return 0;
	cfg->lb.present = true;
	rc = pa_decode_object(v, "$.lb", lb_fields, PA_DECODE_N(lb_fields),
			&cfg->lb, NULL, err, err_len);
	if (rc < 0)
		return rc;
	rc = lb_vip_port_check(cfg, err, err_len);
	if (rc < 0)
		return rc;
	/* (replay has no kernel: kernel_if is not made) */
	if (opts != NULL && opts->replay)
		return 0;
	return lb_pool_kernel_check(cfg, err, err_len);
}

static void
lb_clear(struct pa_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->lb.n_services; i++)
		pa_lb_config_service_clear(&cfg->lb.services[i]);
	free(cfg->lb.services);
	cfg->lb.services = NULL;
	cfg->lb.n_services = 0;
}

static int
lb_to_json(const struct pa_config *cfg, json_t **out)
{
	const struct pa_config_lb *lb = &cfg->lb;
	json_t *o, *arr;
	unsigned int i;
	int rc = 0;

	if (!lb->present)
		return 0;
	o = json_object();
	arr = json_array();
	if (o == NULL || arr == NULL)
		goto fail;
	if (lb->has_local_addr)
		rc |= json_object_set_new(o, "local_addr",
				pa_config_ip_json(&lb->local_addr));
	if (lb->has_local_addr6)
		rc |= json_object_set_new(o, "local_addr6",
				pa_config_ip_json(&lb->local_addr6));
	if (lb->fnat.present)
		rc |= json_object_set_new(o, "fnat", fnat_to_json(&lb->fnat));
	rc |= json_object_set_new(o, "flow_table", json_pack(
			"{s:I, s:I, s:I, s:I}",
			"size", (json_int_t)lb->flow_table.size,
			"tcp_timeout", (json_int_t)lb->flow_table.tcp_timeout,
			"tcp_fin_timeout",
			(json_int_t)lb->flow_table.tcp_fin_timeout,
			"udp_timeout", (json_int_t)lb->flow_table.udp_timeout));
	rc |= json_object_set_new(o, "icmp_echo", json_boolean(lb->icmp_echo));
	rc |= json_object_set_new(o, "table_history_s",
			json_integer((json_int_t)lb->table_history_s));
	for (i = 0; i < lb->n_services; i++)
		rc |= json_array_append_new(arr,
				pa_lb_config_service_to_json(&lb->services[i]));
	rc |= json_object_set_new(o, "services", arr);
	arr = NULL;
	if (rc != 0)
		goto fail;
	*out = o;
	return 0;
fail:
	json_decref(arr);
	json_decref(o);
	return -ENOMEM;
}

static struct pa_config_section lb_section = {
	.key = "lb",
	.order = PA_CONFIG_ORDER_LB,
	.defaults = lb_defaults,
	.parse = lb_parse,
	.clear = lb_clear,
	.to_json = lb_to_json,
	.schema = lb_schema,
};

PA_CONFIG_SECTION_REGISTER(lb_section)
