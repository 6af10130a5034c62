/* SPDX-License-Identifier: BSD-3-Clause */
/* stats_get and pipeline_get (rendered by pipeline_stats.c), and
 * trace_packet. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <rte_byteorder.h>

#include "pa_rpc.h"
#include "pipeline_priv.h"

PA_RPC_SUBSYSTEM(pipeline, "pipeline", "data path not running");

/* Both methods: no parameters, a JSON view of the running pipeline. */
static int
reply_view(json_t *(*view)(const struct pa_pipeline *),
		const struct pa_pipeline *pl, const json_t *params,
		json_t **result, struct pa_rpc_error *err)
{
	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	*result = view(pl);
	if (*result == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	return 0;
}

static int
rpc_stats_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return reply_view(pa_pipeline_stats_json, ctx, params, result, err);
}
PA_RPC_METHOD(pipeline, "stats_get", rpc_stats_get,
	"packet, drop, port and lcore counters")

static int
rpc_pipeline_get(void *ctx, const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	return reply_view(pa_pipeline_describe_json, ctx, params, result, err);
}
PA_RPC_METHOD(pipeline, "pipeline_get", rpc_pipeline_get,
	"lcores, their stages, NUMA socket, queues and ring fill levels")

/*
 * trace_packet: the verdict the data path would give a described packet,
 * from the live tables and the stages' own lookup code.
 */
static int
trace_port(const json_t *v, const char *name, uint16_t *port,
		struct pa_rpc_error *err)
{
	char why[PA_RPC_MSG_MAX];
	struct pa_port_range r;

	if (v == NULL) {
		*port = 0;
		return 0;
	}
	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) <= UINT16_MAX) {
		*port = (uint16_t)json_integer_value(v);
		return 0;
	}
	if (json_is_string(v) && pa_net_parse_port_range(json_string_value(v),
			&r, why, sizeof(why)) == 0 && r.lo == r.hi) {
		*port = r.lo;
		return 0;
	}
	return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
		"params.%s: expected a port number 0..65535", name);
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
	bool fragment = false;
	struct pa_ip_addr src, dst;
	struct pa_flow_key key;
	enum pa_acl_action action = PA_ACL_PERMIT;
	char why[PA_RPC_MSG_MAX];
	const char *k;
	const json_t *v;
	uint16_t sport, dport;
	uint32_t rule = 0;
	int proto, in_port = -1;
	bool ports;

	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected {\"src\", \"dst\", \"sport\", \"dport\", \"proto\", \"in_port\"?}");
	json_object_foreach((json_t *)params, k, v) {
		if (strcmp(k, "src") != 0 && strcmp(k, "dst") != 0 &&
		    strcmp(k, "sport") != 0 && strcmp(k, "dport") != 0 &&
		    strcmp(k, "proto") != 0 && strcmp(k, "in_port") != 0 &&
		    strcmp(k, "fragment") != 0)
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.%s: unknown key", k);
	}
	v = json_object_get(params, "src");
	if (!json_is_string(v) || pa_net_parse_ip(json_string_value(v),
			&src, why, sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.src: expected an IPv4 or IPv6 address");
	v = json_object_get(params, "dst");
	if (!json_is_string(v) || pa_net_parse_ip(json_string_value(v),
			&dst, why, sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.dst: expected an IPv4 or IPv6 address");
	if (src.family != dst.family)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.dst: address family differs from params.src");
	v = json_object_get(params, "proto");
	if (v == NULL || pa_decode_parse_proto(v, &proto, why, sizeof(why)) != 0 ||
	    proto == PA_PROTO_ANY)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.proto: expected a protocol name or number 0..255");
	if (trace_port(json_object_get(params, "sport"), "sport", &sport, err) != 0 ||
	    trace_port(json_object_get(params, "dport"), "dport", &dport, err) != 0)
		return -1;
	v = json_object_get(params, "fragment");
	if (v != NULL) {
		if (!json_is_boolean(v))
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.fragment: expected true or false");
		fragment = json_is_true(v);
	}
	v = json_object_get(params, "in_port");
	if (v != NULL) {
		in_port = json_is_string(v) ? pa_config_port_index(
			pl->cfg, json_string_value(v)) : -1;
		if (in_port < 0)
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.in_port: no such port");
	}

	memset(&key, 0, sizeof(key));
	key.family = src.family == AF_INET ? 4 : 6;
	key.proto = (uint8_t)proto;
	ports = proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
		proto == IPPROTO_SCTP;
	key.sport = ports ? rte_cpu_to_be_16(sport) : 0;
	key.dport = ports ? rte_cpu_to_be_16(dport) : 0;
	if (key.family == 4) {
		key.v4.src = src.v4.s_addr;
		key.v4.dst = dst.v4.s_addr;
	} else {
		memcpy(key.v6.src, src.v6.s6_addr, 16);
		memcpy(key.v6.dst, dst.v6.s6_addr, 16);
	}
	if (acl != NULL && pa_acl_trace(acl, &key, ports, in_port, &rule,
			&action) != 0)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"cannot classify");
	memset(&lbr, 0, sizeof(lbr));
	if (action != PA_ACL_DROP && lb != NULL) {
		int r = pa_lb_trace(lb, &key, fragment, &lbr);

		if (r == -EBUSY)
			return pa_rpc_error_set(err, PA_RPC_ERR_BUSY,
				"an lcore did not answer about its flow table in time; try again");
		if (r != 0)
			return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
				"cannot trace the load balancer");
	}
	if (lbr.service_found && !lbr.backend_found && lbr.reason != NULL &&
	    strcmp(lbr.reason, "no_backend") == 0)
		verdict = "drop";
	else if (action == PA_ACL_DROP)
		verdict = "drop";
	*result = json_pack("{s:s, s:o, s:s, s:o, s:o, s:b, s:o}",
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
			json_null());
	return 0;
}
PA_RPC_METHOD(pipeline, "trace_packet", rpc_trace_packet,
	"verdict for a described packet: src dst sport dport proto [in_port]")
