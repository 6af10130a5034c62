/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The blocklist's SmartNIC offload (pa_offload.h): the probe, the
 * translation of a prefix into an rte_flow drop rule, and keeping each
 * capable port's rules in step with the software set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "pa_offload.h"

#define OFF_LOG(level, fmt, ...) \
	RTE_LOG(level, USER1, "pa.offload: " fmt "\n", ##__VA_ARGS__)

struct off_port {
	uint16_t port_id;
	const char *name;
	bool capable4, capable6;
	bool count;			/* COUNT accepted with DROP */
	bool off;			/* turned off by a refused rule */
	uint32_t n_flows;
	uint32_t n_wanted;		/* prefixes the port could take */
	struct rte_flow **flows;	/* [max] */
	uint64_t hits_gone;		/* counts of destroyed rules */
	char reason[192];
};

struct pa_offload {
	unsigned int n_ports;
	uint32_t max;
	struct off_port port[PA_OFFLOAD_MAX_PORTS];
};

int
pa_offload_rule_prefix(const struct pa_ip_prefix *p, bool count,
		struct pa_flow_rule *r)
{
	unsigned int a = 0, i;

	memset(r, 0, sizeof(*r));
	r->attr.ingress = 1;
	r->pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;	/* any */
	if (p->addr.family == AF_INET) {
		if (p->len > 32)
			return -EINVAL;
		r->v4.hdr.src_addr = p->addr.v4.s_addr;
		r->v4_mask.hdr.src_addr = rte_cpu_to_be_32(p->len == 0 ? 0 :
			~UINT32_C(0) << (32 - p->len));
		r->v4.hdr.src_addr &= r->v4_mask.hdr.src_addr;
		r->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
		r->pattern[1].spec = &r->v4;
		r->pattern[1].mask = &r->v4_mask;
	} else if (p->addr.family == AF_INET6) {
		if (p->len > 128)
			return -EINVAL;
		for (i = 0; i < 16; i++) {
			unsigned int bits = p->len > 8 * i ?
				RTE_MIN(8u, p->len - 8 * i) : 0;
			uint8_t m = bits == 0 ? 0 : (uint8_t)(0xff << (8 - bits));

			r->v6_mask.hdr.src_addr[i] = m;
			r->v6.hdr.src_addr[i] = p->addr.v6.s6_addr[i] & m;
		}
		r->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV6;
		r->pattern[1].spec = &r->v6;
		r->pattern[1].mask = &r->v6_mask;
	} else {
		return -EINVAL;
	}
	r->pattern[2].type = RTE_FLOW_ITEM_TYPE_END;
	if (count) {
		r->actions[a].type = RTE_FLOW_ACTION_TYPE_COUNT;
		r->actions[a++].conf = &r->count;
	}
	r->actions[a++].type = RTE_FLOW_ACTION_TYPE_DROP;
	r->actions[a].type = RTE_FLOW_ACTION_TYPE_END;
	return 0;
}

static int
validate(struct off_port *op, const char *prefix, bool count, char *why,
		size_t why_len)
{
	struct rte_flow_error fe;
	struct pa_flow_rule r;
	struct pa_ip_prefix p;
	int ret;

	memset(&fe, 0, sizeof(fe));
	if (pa_net_parse_prefix_flags(prefix, &p, 0, NULL, 0) != 0 ||
	    pa_offload_rule_prefix(&p, count, &r) != 0)
		return -EINVAL;
	ret = rte_flow_validate(op->port_id, &r.attr, r.pattern, r.actions,
		&fe);
	if (ret != 0 && fe.message != NULL)
		snprintf(why, why_len, "rte_flow_validate: %s (%s)",
			fe.message, strerror(-ret));
	else if (ret != 0)
		snprintf(why, why_len, "rte_flow_validate: %s",
			strerror(-ret));
	return ret;
}

static void
probe(struct off_port *op)
{
	char why[160];

	if (validate(op, "192.0.2.0/24", true, why, sizeof(why)) == 0) {
		op->capable4 = op->count = true;
	} else if (validate(op, "192.0.2.0/24", false, why, sizeof(why)) ==
			0) {
		op->capable4 = true;
	} else {
		snprintf(op->reason, sizeof(op->reason),
			"no drop by IPv4 source prefix: %s", why);
		return;
	}
	op->capable6 = validate(op, "2001:db8::/32", op->count, why,
		sizeof(why)) == 0;
	snprintf(op->reason, sizeof(op->reason), "%s",
		op->capable6 ? "ipv4 and ipv6 source prefixes" :
		"ipv4 source prefixes only");
}

struct pa_offload *
pa_offload_create(const struct pa_offload_opts *o)
{
	struct pa_offload *off;
	unsigned int i;

	off = calloc(1, sizeof(*off));
	if (off == NULL)
		return NULL;
	off->max = o->max_rules != 0 ? o->max_rules : PA_OFFLOAD_MAX_RULES;
	off->n_ports = RTE_MIN(o->n_ports, PA_OFFLOAD_MAX_PORTS);
	for (i = 0; i < off->n_ports; i++) {
		struct off_port *op = &off->port[i];

		op->port_id = o->port_id[i];
		op->name = o->name[i];
		probe(op);
		OFF_LOG(INFO, "port %s: %s", op->name, op->capable4 ?
			"blocklist offload capable" : op->reason);
		if (!op->capable4)
			continue;
		op->flows = calloc(off->max, sizeof(*op->flows));
		if (op->flows == NULL) {
			pa_offload_destroy(off);
			errno = ENOMEM;
			return NULL;
		}
	}
	return off;
}

static void
flows_destroy(struct off_port *op)
{
	struct rte_flow_query_count q;
	struct rte_flow_action act[2] = {
		{ .type = RTE_FLOW_ACTION_TYPE_COUNT },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error fe;
	uint32_t i;

	for (i = 0; i < op->n_flows; i++) {
		if (op->count) {
			memset(&q, 0, sizeof(q));
			if (rte_flow_query(op->port_id, op->flows[i], act, &q,
					&fe) == 0 && q.hits_set)
				op->hits_gone += q.hits;
		}
		rte_flow_destroy(op->port_id, op->flows[i], &fe);
		op->flows[i] = NULL;
	}
	op->n_flows = 0;
}

void
pa_offload_destroy(struct pa_offload *off)
{
	unsigned int i;

	if (off == NULL)
		return;
	for (i = 0; i < off->n_ports; i++) {
		flows_destroy(&off->port[i]);
		free(off->port[i].flows);
	}
	free(off);
}

void
pa_offload_blocklist_pre(struct pa_offload *off)
{
	unsigned int i;

	for (i = 0; off != NULL && i < off->n_ports; i++)
		flows_destroy(&off->port[i]);
}

static void
port_post(struct pa_offload *off, struct off_port *op,
		const struct pa_bl_set *s)
{
	uint32_t i, n = pa_bl_set_count(s);
	struct rte_flow_error fe;
	struct pa_ip_prefix p;
	struct pa_flow_rule r;
	struct rte_flow *f;

	op->off = false;
	op->n_wanted = op->capable6 ? n : s->n4;
	for (i = 0; i < n && op->n_flows < off->max; i++) {
		pa_bl_set_get(s, i, &p);
		if (p.addr.family == AF_INET6 && !op->capable6)
			continue;
		memset(&fe, 0, sizeof(fe));
		if (pa_offload_rule_prefix(&p, op->count, &r) != 0)
			continue;
		f = rte_flow_create(op->port_id, &r.attr, r.pattern, r.actions,
			&fe);
		if (f == NULL) {
			char buf[PA_NET_PREFIX_STRLEN];

			/* a partial set is still consistent (software
			 * holds all); a refusal says the NIC is not what
			 * its probe said: off, all in software */
			snprintf(op->reason, sizeof(op->reason),
				"off: rte_flow_create of %s refused: %s",
				pa_net_format_prefix(&p, buf, sizeof(buf)),
				fe.message != NULL ? fe.message : "no reason");
			OFF_LOG(WARNING, "port %s: %s", op->name, op->reason);
			flows_destroy(op);
			op->off = true;
			return;
		}
		op->flows[op->n_flows++] = f;
	}
	if (op->n_flows < op->n_wanted)
		snprintf(op->reason, sizeof(op->reason),
			"%u of %u prefixes in the NIC (its bound), the rest in software",
			op->n_flows, op->n_wanted);
	else
		snprintf(op->reason, sizeof(op->reason), "%s",
			op->capable6 ? "ipv4 and ipv6 source prefixes" :
			"ipv4 source prefixes only");
}

void
pa_offload_blocklist_post(struct pa_offload *off, const struct pa_bl_set *s)
{
	unsigned int i;

	for (i = 0; off != NULL && i < off->n_ports; i++)
		if (off->port[i].capable4)
			port_post(off, &off->port[i], s);
}

static uint64_t
hits(const struct off_port *op)
{
	struct rte_flow_query_count q;
	struct rte_flow_action act[2] = {
		{ .type = RTE_FLOW_ACTION_TYPE_COUNT },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error fe;
	uint64_t h = op->hits_gone;
	uint32_t i;

	for (i = 0; op->count && i < op->n_flows; i++) {
		memset(&q, 0, sizeof(q));
		if (rte_flow_query(op->port_id, op->flows[i], act, &q, &fe) ==
				0 && q.hits_set)
			h += q.hits;
	}
	return h;
}

json_t *
pa_offload_json(struct pa_offload *off)
{
	json_t *o = json_object();
	unsigned int i;

	if (o == NULL)
		return NULL;
	for (i = 0; off != NULL && i < off->n_ports; i++) {
		const struct off_port *op = &off->port[i];

		json_object_set_new(o, op->name, json_pack(
			"{s:b, s:b, s:I, s:I, s:o, s:s}",
			"capable", op->capable4,
			"active", op->capable4 && !op->off,
			"blocklist", (json_int_t)op->n_flows,
			"acl_drop", (json_int_t)0,
			"hits", op->count ? json_integer((json_int_t)hits(op)) :
				json_null(),
			"reason", op->reason));
	}
	return o;
}
