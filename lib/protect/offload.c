/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SmartNIC offload of the blocklist and of the ACL's drop rules
 * (pa_offload.h): the probe, the translation of a prefix or an ACL rule
 * into an rte_flow drop rule, and keeping each capable port's rules in
 * step with the software tables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "pa_err.h"
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
	/* ACL drop rules in the NIC */
	struct rte_flow **acl_flows;	/* [max_acl] */
	uint32_t n_acl_flows;
	uint32_t n_acl_rules;		/* rules they stand for */
	char acl_reason[160];
};

struct pa_offload {
	unsigned int n_ports;
	uint32_t max;
	uint32_t max_acl;
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

/* The netmask of an IPv4 prefix ("any": 0), network order. */
static rte_be32_t
mask4(const struct pa_ip_prefix *p)
{
	return rte_cpu_to_be_32(p->addr.family == 0 || p->len == 0 ? 0 :
		~UINT32_C(0) << (32 - p->len));
}

static void
prefix6_item(const struct pa_ip_prefix *p, uint8_t *spec, uint8_t *mask)
{
	unsigned int i, len = p->addr.family == 0 ? 0 : p->len;

	for (i = 0; i < 16; i++) {
		unsigned int bits = len > 8 * i ? RTE_MIN(8u, len - 8 * i) : 0;

		mask[i] = bits == 0 ? 0 : (uint8_t)(0xff << (8 - bits));
		spec[i] = p->addr.family == 0 ? 0 :
			p->addr.v6.s6_addr[i] & mask[i];
	}
}

static bool
port_any(const struct pa_port_range *r)
{
	return r->lo == 0 && r->hi == 65535;
}

int
pa_offload_rule_acl(const struct pa_config_acl_rule *r, int family,
		bool count, struct pa_flow_rule *fr)
{
	bool ports = !port_any(&r->sport) || !port_any(&r->dport);
	unsigned int a = 0;

	memset(fr, 0, sizeof(*fr));
	if (r->action != PA_ACL_DROP)
		return -ENOTSUP;
	if ((family != AF_INET && family != AF_INET6) ||
	    (r->src.addr.family != 0 && r->src.addr.family != family) ||
	    (r->dst.addr.family != 0 && r->dst.addr.family != family))
		return r->src.addr.family == 0 && r->dst.addr.family == 0 ?
			-EINVAL : -ENOTSUP;
	if (ports && ((r->proto != IPPROTO_TCP && r->proto != IPPROTO_UDP) ||
	    (!port_any(&r->sport) && r->sport.lo != r->sport.hi) ||
	    (!port_any(&r->dport) && r->dport.lo != r->dport.hi)))
		return -ENOTSUP;
	fr->attr.ingress = 1;
	fr->pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
	if (family == AF_INET) {
		fr->v4_mask.hdr.src_addr = mask4(&r->src);
		fr->v4.hdr.src_addr = r->src.addr.v4.s_addr & mask4(&r->src);
		fr->v4_mask.hdr.dst_addr = mask4(&r->dst);
		fr->v4.hdr.dst_addr = r->dst.addr.v4.s_addr & mask4(&r->dst);
		if (r->proto != PA_PROTO_ANY) {
			fr->v4.hdr.next_proto_id = (uint8_t)r->proto;
			fr->v4_mask.hdr.next_proto_id = 0xff;
		}
		fr->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
		fr->pattern[1].spec = &fr->v4;
		fr->pattern[1].mask = &fr->v4_mask;
	} else {
		prefix6_item(&r->src, fr->v6.hdr.src_addr,
			fr->v6_mask.hdr.src_addr);
		prefix6_item(&r->dst, fr->v6.hdr.dst_addr,
			fr->v6_mask.hdr.dst_addr);
		if (r->proto != PA_PROTO_ANY) {
			fr->v6.hdr.proto = (uint8_t)r->proto;
			fr->v6_mask.hdr.proto = 0xff;
		}
		fr->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV6;
		fr->pattern[1].spec = &fr->v6;
		fr->pattern[1].mask = &fr->v6_mask;
	}
	if (ports && r->proto == IPPROTO_TCP) {
		if (!port_any(&r->sport)) {
			fr->tcp.hdr.src_port = rte_cpu_to_be_16(r->sport.lo);
			fr->tcp_mask.hdr.src_port = 0xffff;
		}
		if (!port_any(&r->dport)) {
			fr->tcp.hdr.dst_port = rte_cpu_to_be_16(r->dport.lo);
			fr->tcp_mask.hdr.dst_port = 0xffff;
		}
		fr->pattern[2].type = RTE_FLOW_ITEM_TYPE_TCP;
		fr->pattern[2].spec = &fr->tcp;
		fr->pattern[2].mask = &fr->tcp_mask;
	} else if (ports) {
		if (!port_any(&r->sport)) {
			fr->udp.hdr.src_port = rte_cpu_to_be_16(r->sport.lo);
			fr->udp_mask.hdr.src_port = 0xffff;
		}
		if (!port_any(&r->dport)) {
			fr->udp.hdr.dst_port = rte_cpu_to_be_16(r->dport.lo);
			fr->udp_mask.hdr.dst_port = 0xffff;
		}
		fr->pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
		fr->pattern[2].spec = &fr->udp;
		fr->pattern[2].mask = &fr->udp_mask;
	}
	if (count) {
		fr->actions[a].type = RTE_FLOW_ACTION_TYPE_COUNT;
		fr->actions[a++].conf = &fr->count;
	}
	fr->actions[a++].type = RTE_FLOW_ACTION_TYPE_DROP;
	fr->actions[a].type = RTE_FLOW_ACTION_TYPE_END;
	return 0;
}

static int
rule_family(const struct pa_config_acl_rule *r)
{
	return r->src.addr.family != 0 ? r->src.addr.family :
		r->dst.addr.family;
}

bool
pa_offload_acl_safe(const struct pa_config_acl_rule *rules, unsigned int n,
		unsigned int i)
{
	const struct pa_config_acl_rule *r = &rules[i];
	unsigned int k;

	if (r->action != PA_ACL_DROP)
		return false;
	for (k = 0; k < n; k++) {
		const struct pa_config_acl_rule *x = &rules[k];
		int fx = rule_family(x), fr = rule_family(r);

		if (k == i || x->action == PA_ACL_DROP)
			continue;
		if (x->priority < r->priority ||
		    (x->priority == r->priority && x->id > r->id))
			continue;	/* ranked below */
		if ((fx == 0 || fr == 0 || fx == fr) &&
		    pa_ip_prefix_overlap(&x->src, &r->src) &&
		    pa_ip_prefix_overlap(&x->dst, &r->dst) &&
		    (x->proto == PA_PROTO_ANY || r->proto == PA_PROTO_ANY ||
		     x->proto == r->proto) &&
		    (x->in_port < 0 || r->in_port < 0 ||
		     x->in_port == r->in_port))
			return false;
	}
	return true;
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
	if (ret != 0 && fe.message != NULL &&
	    strcmp(fe.message, strerror(-ret)) != 0)
		pa_seterr(why, why_len, "rte_flow_validate: %s (%s)",
			fe.message, strerror(-ret));
	else if (ret != 0)
		pa_seterr(why, why_len, "rte_flow_validate: %s",
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
	off->max_acl = PA_OFFLOAD_MAX_ACL;
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
		op->acl_flows = calloc(off->max_acl, sizeof(*op->acl_flows));
		if (op->flows == NULL || op->acl_flows == NULL) {
			pa_offload_destroy(off);
			errno = ENOMEM;
			return NULL;
		}
	}
	return off;
}

/* Destroy @p n rules of @p flows, their hits kept in hits_gone. */
static void
rules_destroy(struct off_port *op, struct rte_flow **flows, uint32_t n)
{
	struct rte_flow_query_count q;
	struct rte_flow_action act[2] = {
		{ .type = RTE_FLOW_ACTION_TYPE_COUNT },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error fe;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (op->count) {
			memset(&q, 0, sizeof(q));
			if (rte_flow_query(op->port_id, flows[i], act, &q,
					&fe) == 0 && q.hits_set)
				op->hits_gone += q.hits;
		}
		rte_flow_destroy(op->port_id, flows[i], &fe);
		flows[i] = NULL;
	}
}

static void
flows_destroy(struct off_port *op)
{
	rules_destroy(op, op->flows, op->n_flows);
	op->n_flows = 0;
}

static void
acl_flows_destroy(struct off_port *op)
{
	rules_destroy(op, op->acl_flows, op->n_acl_flows);
	op->n_acl_flows = 0;
	op->n_acl_rules = 0;
}

void
pa_offload_acl_pre(void *arg)
{
	struct pa_offload *off = arg;
	unsigned int i;

	for (i = 0; off != NULL && i < off->n_ports; i++)
		acl_flows_destroy(&off->port[i]);
}

/* The NIC rules of ACL rule @p r on port @p op: one per family it
 * matches. false when the NIC refused one (the port's ACL offload is
 * then off until the next change). */
static bool
acl_rule_post(struct pa_offload *off, struct off_port *op,
		const struct pa_config_acl_rule *r, bool *installed)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	struct rte_flow_error fe;
	struct pa_flow_rule fr;
	unsigned int f;

	*installed = false;
	for (f = 0; f < RTE_DIM(fams); f++) {
		struct rte_flow *flow;

		if (fams[f] == AF_INET6 && !op->capable6)
			continue;
		if (pa_offload_rule_acl(r, fams[f], op->count, &fr) != 0)
			continue;
		if (op->n_acl_flows >= off->max_acl)
			return true;
		memset(&fe, 0, sizeof(fe));
		flow = rte_flow_create(op->port_id, &fr.attr, fr.pattern,
			fr.actions, &fe);
		if (flow == NULL) {
			snprintf(op->acl_reason, sizeof(op->acl_reason),
				"off: rule %u refused: %s", r->id,
				fe.message != NULL ? fe.message : "no reason");
			return false;
		}
		op->acl_flows[op->n_acl_flows++] = flow;
		*installed = true;
	}
	return true;
}

void
pa_offload_acl_post(void *arg, const struct pa_config_acl_rule *rules,
		unsigned int n)
{
	struct pa_offload *off = arg;
	unsigned int i, p, safe = 0, capable = 0;
	uint8_t *ok;

	for (p = 0; off != NULL && p < off->n_ports; p++)
		capable += off->port[p].capable4;
	if (capable == 0)
		return;		/* nothing to do: every change stays cheap */
	ok = calloc(n + 1, 1);
	if (ok == NULL)
		return;
	/* quadratic in the worst case: stop at what a port can take */
	for (i = 0; i < n && safe < off->max_acl; i++) {
		ok[i] = pa_offload_acl_safe(rules, n, i);
		safe += ok[i];
	}
	for (p = 0; p < off->n_ports; p++) {
		struct off_port *op = &off->port[p];

		if (!op->capable4 || op->acl_flows == NULL)
			continue;
		snprintf(op->acl_reason, sizeof(op->acl_reason),
			"%u of %u rules are drops safe to offload (no better permit, mark or police rule overlaps them; a port takes %u)",
			safe, n, off->max_acl);
		for (i = 0; i < n; i++) {
			bool in;

			if (!ok[i] || (rules[i].in_port >= 0 &&
			    (unsigned int)rules[i].in_port != p))
				continue;
			if (!acl_rule_post(off, op, &rules[i], &in)) {
				OFF_LOG(WARNING, "port %s: ACL %s", op->name,
					op->acl_reason);
				acl_flows_destroy(op);
				break;
			}
			op->n_acl_rules += in;
		}
	}
	free(ok);
}

void
pa_offload_destroy(struct pa_offload *off)
{
	unsigned int i;

	if (off == NULL)
		return;
	for (i = 0; i < off->n_ports; i++) {
		flows_destroy(&off->port[i]);
		acl_flows_destroy(&off->port[i]);
		free(off->port[i].flows);
		free(off->port[i].acl_flows);
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

uint32_t
pa_offload_blocklist_want(const struct pa_offload *off)
{
	unsigned int i;

	for (i = 0; off != NULL && i < off->n_ports; i++)
		if (off->port[i].capable4)
			return off->max;
	return 0;
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
	for (i = 0; op->count && i < op->n_acl_flows; i++) {
		memset(&q, 0, sizeof(q));
		if (rte_flow_query(op->port_id, op->acl_flows[i], act, &q,
				&fe) == 0 && q.hits_set)
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
			"{s:b, s:b, s:I, s:I, s:o, s:s, s:s}",
			"capable", op->capable4,
			"active", op->capable4 && !op->off,
			"blocklist", (json_int_t)op->n_flows,
			"acl_drop", (json_int_t)op->n_acl_rules,
			"hits", op->count ? json_integer((json_int_t)hits(op)) :
				json_null(),
			"reason", op->reason,
			"acl_reason", op->capable4 ? op->acl_reason :
				"not capable"));
	}
	return o;
}
