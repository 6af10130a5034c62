/* SPDX-License-Identifier: BSD-3-Clause */
/* stats_get and pipeline_get (rendered by pipeline_stats.c), and
 * trace_packet. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <rte_byteorder.h>

#include "pa_decode.h"
#include "pa_rpc.h"
#include "pipeline_priv.h"

PA_RPC_SUBSYSTEM(pipeline, "pipeline", "data path not running");

/* Both methods: no parameters, a JSON view of the running pipeline. */
static json_t *
stats_view(void *ctx)
{
	return pa_pipeline_stats_json(ctx);
}

static json_t *
describe_view(void *ctx)
{
	return pa_pipeline_describe_json(ctx);
}

static int
rpc_stats_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return pa_rpc_view(params, stats_view, ctx, result, err);
}
PA_RPC_METHOD_SCHEMA(pipeline, "stats_get", rpc_stats_get,
	"packet, drop, port and lcore counters",
	.result_json = "{\"type\": \"object\", \"description\": \"rx_packets, tx_packets, dropped_packets, drops, ports, lcores, acl, lb, ... (docs/rpc.md)\"}")

static int
rpc_pipeline_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return pa_rpc_view(params, describe_view, ctx, result, err);
}
PA_RPC_METHOD_SCHEMA(pipeline, "pipeline_get", rpc_pipeline_get,
	"lcores, their stages, NUMA socket, queues and ring fill levels",
	.result_json = "{\"type\": \"object\", \"description\": \"mode, lcores with their stages, NUMA socket, queues and rings (docs/rpc.md)\"}")

/*
 * trace_packet: the verdict the data path would give a described packet,
 * from the live tables and the stages' own lookup code.
 *
 * {"src", "dst", "proto", "sport"?, "dport"?, "fragment"?, "in_port"?}
 */
struct trace_params {
	struct pa_ip_addr src;
	struct pa_ip_addr dst;
	int proto;
	uint16_t sport;
	uint16_t dport;
	bool fragment;
	int in_port;			/**< index in the configuration, or -1 */
};

static int
trace_dst_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct trace_params *p = out;

	if (p->src.family != p->dst.family)
		return pa_decode_fail(err, err_len,
				"%s: address family differs from params.src",
				path);
	return 0;
}

/* A packet has a protocol: "any" describes none. */
static int
trace_proto_check(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	const struct trace_params *p = out;

	if (p->proto == PA_PROTO_ANY)
		return pa_decode_fail(err, err_len,
				"%s: expected a protocol name or number 0..255, not \"any\"",
				path);
	return 0;
}

/* One port: an integer 0..65535 or a string naming a single port ("80",
 * "80-80"). */
static int
trace_port(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct pa_port_range r;

	if (!json_is_integer(v) && !json_is_string(v))
		return pa_decode_fail(err, err_len,
				"%s: expected a port number 0..65535, got %s",
				path, pa_decode_type_name(v));
	if (pa_decode_port_range(v, path, &r, err, err_len) != 0)
		return -EINVAL;
	if (r.lo != r.hi)
		return pa_decode_fail(err, err_len,
				"%s: expected one port, got the range %u-%u",
				path, r.lo, r.hi);
	pa_decode_store_int(f, out, r.lo);
	return 0;
}

/* A port of the configuration, by name; @p arg: the configuration. */
static int
trace_in_port(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg, char *err,
		size_t err_len)
{
	struct trace_params *p = out;
	const char *s;

	if (pa_decode_string(v, path, &s, err, err_len) != 0)
		return -EINVAL;
	p->in_port = pa_config_port_index(arg, s);
	if (p->in_port < 0)
		return pa_decode_fail(err, err_len, "%s: no such port", path);
	return 0;
}

/* what trace_port() takes: one port, never "any" or a wider range */
static json_t *
trace_port_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:[ss], s:i, s:i, s:s, s:s}",
			"type", "integer", "string", "minimum", 0,
			"maximum", 65535, "pattern", "^[0-9]{1,5}(-[0-9]{1,5})?$",
			"description", "one port: an integer, \"N\" or \"N-N\"");
}

/* a protocol as PA_DECODE_PROTO takes it, but not "any" */
static json_t *
trace_proto_schema(const struct pa_decode_field *f)
{
	return json_pack("{s:[ss], s:i, s:i, s:s, s:s}",
			"type", "integer", "string", "minimum", 0,
			"maximum", 255, "pattern", "^(tcp|udp|icmp|icmpv6|[0-9]{1,3})$",
			"description", "\"tcp\", \"udp\", \"icmp\", \"icmpv6\" or a protocol number 0..255");
}

#define TRACE(m)	PA_DECODE_AT(struct trace_params, m)

static const struct pa_decode_field trace_fields[] = {
	{ .name = "src", .type = PA_DECODE_IP, .required = true, TRACE(src) },
	{ .name = "dst", .type = PA_DECODE_IP, .required = true, TRACE(dst),
	  .check = trace_dst_check, .doc = "of the family of src" },
	{ .name = "proto", .type = PA_DECODE_PROTO, .required = true,
	  TRACE(proto), .check = trace_proto_check,
	  .schema = trace_proto_schema },
	{ .name = "sport", .type = PA_DECODE_CUSTOM, .decode = trace_port,
	  TRACE(sport), .schema = trace_port_schema },
	{ .name = "dport", .type = PA_DECODE_CUSTOM, .decode = trace_port,
	  TRACE(dport), .schema = trace_port_schema },
	{ .name = "fragment", .type = PA_DECODE_BOOL, TRACE(fragment) },
	{ .name = "in_port", .type = PA_DECODE_CUSTOM, .decode = trace_in_port,
	  TRACE(in_port), .schema = pa_decode_schema_string,
	  .doc = "the name of a port of the configuration" },
};

/* trace_packet's nat_reply: null, or how a nat backend's reply is
 * translated back (its service, the VIP and port it then comes from). */
static json_t *
trace_nat_json(const struct pa_lb_trace_result *r)
{
	char buf[INET6_ADDRSTRLEN];

	if (r->nat_reply == NULL)
		return json_null();
	if (strcmp(r->nat_reply, "flow") != 0 &&
	    strcmp(r->nat_reply, "maglev") != 0)
		return json_pack("{s:s, s:n, s:n, s:n}", "match", r->nat_reply,
			"service", "vip", "vport");
	return json_pack("{s:s, s:s, s:s, s:i}", "match", r->nat_reply,
		"service", r->nat_service,
		"vip", pa_net_format_ip(&r->nat_vip, buf, sizeof(buf)),
		"vport", (int)r->nat_vport);
}

/* trace_packet's fnat: null, or the pool address and port of an fnat
 * service's flow (held), or the addresses a new flow takes one of. */
static json_t *
trace_fnat_json(const struct pa_lb_trace_result *r)
{
	char buf[INET6_ADDRSTRLEN];
	json_t *addrs;
	unsigned int i;

	if (!r->fnat)
		return json_null();
	addrs = json_array();
	for (i = 0; addrs != NULL && i < r->fnat_n_addrs; i++)
		json_array_append_new(addrs, json_string(pa_net_format_ip(
			&r->fnat_addrs[i], buf, sizeof(buf))));
	if (addrs == NULL)
		return NULL;
	return json_pack("{s:o, s:o, s:b, s:o}",
		"addr", r->fnat_n_addrs == 1 ? json_string(pa_net_format_ip(
			&r->fnat_addrs[0], buf, sizeof(buf))) : json_null(),
		"port", r->fnat_held ? json_integer(r->fnat_port) :
			json_null(),
		"held", r->fnat_held,
		"addrs", addrs);
}

/* trace_packet's fnat_reply: null, or the fnat flow a backend's reply
 * to a pool address and port belongs to (its service, the VIP and port
 * it then comes from, the client it goes to). */
static json_t *
trace_fnat_reply_json(const struct pa_lb_trace_result *r)
{
	char vip[INET6_ADDRSTRLEN], cl[INET6_ADDRSTRLEN];

	if (r->fnat_reply == NULL)
		return json_null();
	if (strcmp(r->fnat_reply, "flow") != 0)
		return json_pack("{s:s, s:n, s:n, s:n, s:n, s:n}",
			"match", r->fnat_reply, "service", "vip", "vport",
			"client", "client_port");
	return json_pack("{s:s, s:s, s:s, s:i, s:s, s:i}",
		"match", r->fnat_reply, "service", r->fnat_service,
		"vip", pa_net_format_ip(&r->fnat_vip, vip, sizeof(vip)),
		"vport", (int)r->fnat_vport,
		"client", pa_net_format_ip(&r->fnat_client, cl, sizeof(cl)),
		"client_port", (int)r->fnat_cport);
}

static int
rpc_trace_packet(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	const struct pa_pipeline *pl = ctx;
	struct pa_acl *acl = pl->acl;
	struct pa_lb *lb = pl->lb;
	struct pa_lb_trace_result lbr;
	char buf[INET6_ADDRSTRLEN];
	const char *verdict = "forward";
	struct trace_params p;
	struct pa_flow_key key;
	enum pa_acl_action action = PA_ACL_PERMIT;
	char why[PA_RPC_MSG_MAX];
	uint32_t rule = 0;
	bool ports;
	int ret;

	memset(&p, 0, sizeof(p));
	p.in_port = -1;
	ret = pa_decode_object(params, "params", trace_fields,
			PA_DECODE_N(trace_fields), &p,
			(void *)(uintptr_t)pl->cfg, why, sizeof(why));
	if (ret != 0)
		return pa_rpc_error_errno(err, ret, "", why);

	memset(&key, 0, sizeof(key));
	key.family = p.src.family == AF_INET ? 4 : 6;
	key.proto = (uint8_t)p.proto;
	ports = p.proto == IPPROTO_TCP || p.proto == IPPROTO_UDP ||
		p.proto == IPPROTO_SCTP;
	key.sport = ports ? rte_cpu_to_be_16(p.sport) : 0;
	key.dport = ports ? rte_cpu_to_be_16(p.dport) : 0;
	if (key.family == 4) {
		key.v4.src = p.src.v4.s_addr;
		key.v4.dst = p.dst.v4.s_addr;
	} else {
		memcpy(key.v6.src, p.src.v6.s6_addr, 16);
		memcpy(key.v6.dst, p.dst.v6.s6_addr, 16);
	}
	/* the classify stage drops a blocklisted source before the ACL:
	 * neither the ACL nor the LB sees it */
	if (pl->blocklist != NULL && pa_blocklist_trace(pl->blocklist,
			&p.src)) {
		*result = json_pack("{s:s, s:s, s:n, s:n, s:n, s:n, s:b, s:n, s:b}",
			"verdict", "drop", "drop_reason", "blocklist",
			"acl_rule", "acl_action", "service", "backend",
			"existing_flow", 0, "lb_note", "blocklist", 1,
			"nat_reply");
		return 0;
	}
	if (acl != NULL && pa_acl_trace(acl, &key, ports, p.in_port, &rule,
			&action) != 0)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"cannot classify");
	memset(&lbr, 0, sizeof(lbr));
	if (action != PA_ACL_DROP && lb != NULL) {
		int r = pa_lb_trace(lb, &key, p.fragment, &lbr);

		if (r == -EBUSY)
			return pa_rpc_error_set(err, PA_RPC_ERR_BUSY,
				"an lcore did not answer about its flow table in time; try again");
		if (r != 0)
			return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
				"cannot trace the load balancer");
	}
	if (lbr.service_found && !lbr.backend_found && lbr.reason != NULL &&
	    (strcmp(lbr.reason, "no_backend") == 0 ||
	     strcmp(lbr.reason, "fnat_fragment") == 0))
		verdict = "drop";
	else if (action == PA_ACL_DROP)
		verdict = "drop";
	else if (lbr.nat_reply != NULL &&
		 strcmp(lbr.nat_reply, "ambiguous") == 0)
		verdict = "drop";
	else if (lbr.fnat_reply != NULL &&
		 strcmp(lbr.fnat_reply, "unmatched") == 0)
		verdict = "drop";
	*result = json_pack("{s:s, s:o, s:s, s:o, s:o, s:b, s:o, s:b, s:o}",
		"verdict", verdict,
		"acl_rule", rule != 0 ? json_integer(rule) : json_null(),
		"acl_action", action == PA_ACL_DROP ? "drop" :
			action == PA_ACL_MARK ? "mark" :
			action == PA_ACL_POLICE ? "police" : "permit",
		"service", lbr.service_found ? json_string(lbr.service) :
			json_null(),
		"backend", lbr.backend_found ? json_string(
			pa_net_format_ip(&lbr.backend, buf, sizeof(buf))) :
			json_null(),
		"existing_flow", lbr.existing_flow,
		"lb_note", lbr.reason != NULL ? json_string(lbr.reason) :
			json_null(),
		"blocklist", 0,
		"nat_reply", trace_nat_json(&lbr));
	if (*result != NULL && (json_object_set_new(*result, "fnat",
			trace_fnat_json(&lbr)) != 0 ||
	    json_object_set_new(*result, "fnat_reply",
			trace_fnat_reply_json(&lbr)) != 0)) {
		json_decref(*result);
		*result = NULL;
	}
	/* the lb's own drops that the other keys do not name */
	if (*result != NULL && strcmp(verdict, "drop") == 0 &&
	    action != PA_ACL_DROP) {
		const char *why = lbr.nat_reply != NULL ? "nat_ambiguous" :
			lbr.fnat_reply != NULL ? "fnat_unmatched" :
			lbr.reason != NULL &&
			strcmp(lbr.reason, "fnat_fragment") == 0 ?
				"fnat_fragment" : NULL;

		if (why != NULL)
			json_object_set_new(*result, "drop_reason",
				json_string(why));
	}
	return 0;
}
PA_RPC_METHOD_SCHEMA(pipeline, "trace_packet", rpc_trace_packet,
	"verdict for a described packet: src dst sport dport proto [in_port]",
	PA_RPC_PARAMS(trace_fields),
	.result_json = "{\"type\": \"object\", \"properties\": {\"verdict\": {\"enum\": [\"forward\", \"drop\"]}, \"acl_rule\": {\"type\": [\"integer\", \"null\"]}, \"service\": {\"type\": [\"string\", \"null\"]}, \"backend\": {\"type\": [\"string\", \"null\"]}}, \"required\": [\"verdict\", \"acl_rule\", \"service\", \"backend\"]}",
	.errors = PA_RPC_ERRS_BUSY)
