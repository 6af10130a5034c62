/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Full NAT's replies steered by the NIC (docs/architecture.md, "Which
 * lcore gets a reply"): where a port spreads its packets over several RX
 * queues, each polled by an rtc worker, one rte_flow rule per (pool
 * address, protocol, lb lcore's share of the ports) sends what comes to
 * that share straight to a queue of the worker that holds its flows
 * (pattern ETH / IPV4 or IPV6 destination / TCP or UDP destination port
 * range, action QUEUE). Every rule of a port is validated first; one the
 * port refuses leaves the whole port to software steering (the hand-over
 * rings), with the device's reason. pipeline_get's "fnat_steer" says
 * which, by port.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_flow.h>
#include <rte_malloc.h>

#include "pipeline_priv.h"
#include "pa_err.h"

/* One rule's items and action, in one place (rte_flow keeps pointers). */
struct fnat_rule {
	struct rte_flow_attr attr;
	struct rte_flow_item pattern[4];
	struct rte_flow_action actions[2];
	struct rte_flow_item_ipv4 v4, v4_mask;
	struct rte_flow_item_ipv6 v6, v6_mask;
	struct rte_flow_item_tcp tcp, tcp_last, tcp_mask;
	struct rte_flow_item_udp udp, udp_last, udp_mask;
	struct rte_flow_action_queue queue;
};

/* The rule: to @p addr (@p family), @p proto, destination ports
 * [@p lo, @p hi] (host order) -> RX queue @p queue. */
static void
fnat_rule_fill(struct fnat_rule *r, uint8_t family, const uint8_t *addr,
		uint8_t proto, uint16_t lo, uint16_t hi, uint16_t queue)
{
	memset(r, 0, sizeof(*r));
	r->attr.ingress = 1;
	r->pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
	if (family == 4) {
		memcpy(&r->v4.hdr.dst_addr, addr, 4);
		r->v4_mask.hdr.dst_addr = UINT32_MAX;
		r->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
		r->pattern[1].spec = &r->v4;
		r->pattern[1].mask = &r->v4_mask;
	} else {
		memcpy(r->v6.hdr.dst_addr, addr, 16);
		memset(r->v6_mask.hdr.dst_addr, 0xff, 16);
		r->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV6;
		r->pattern[1].spec = &r->v6;
		r->pattern[1].mask = &r->v6_mask;
	}
	if (proto == IPPROTO_TCP) {
		r->tcp.hdr.dst_port = rte_cpu_to_be_16(lo);
		r->tcp_last.hdr.dst_port = rte_cpu_to_be_16(hi);
		r->tcp_mask.hdr.dst_port = UINT16_MAX;
		r->pattern[2].type = RTE_FLOW_ITEM_TYPE_TCP;
		r->pattern[2].spec = &r->tcp;
		r->pattern[2].last = lo != hi ? &r->tcp_last : NULL;
		r->pattern[2].mask = &r->tcp_mask;
	} else {
		r->udp.hdr.dst_port = rte_cpu_to_be_16(lo);
		r->udp_last.hdr.dst_port = rte_cpu_to_be_16(hi);
		r->udp_mask.hdr.dst_port = UINT16_MAX;
		r->pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
		r->pattern[2].spec = &r->udp;
		r->pattern[2].last = lo != hi ? &r->udp_last : NULL;
		r->pattern[2].mask = &r->udp_mask;
	}
	r->pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
	r->queue.index = queue;
	r->actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
	r->actions[0].conf = &r->queue;
	r->actions[1].type = RTE_FLOW_ACTION_TYPE_END;
}

/* The RX queue of port @p idx that worker @p widx polls, or -1. */
static int
queue_of(const struct pa_pipeline *pl, unsigned int idx, unsigned int widx)
{
	unsigned int q;

	for (q = 0; q < PA_PORT_MAX_QUEUES; q++)
		if (pl->queue_owner[idx][q] == widx + 1)
			return (int)q;
	return -1;
}

/* Walk every rule of port @p idx: validate each (@p create false) or
 * create each into @p fp (true). @return 0, or -errno with the reason in
 * @p fp. */
static int
port_rules(struct pa_pipeline *pl, unsigned int idx,
		struct pa_fnat_flow_port *fp, bool create)
{
	const struct pa_lb_dp *d = (const struct pa_lb_dp *)(const void *)pl->lb;
	const uint16_t port_id = pl->ports->port[idx].port_id;
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP };
	struct rte_flow_error fe;
	struct fnat_rule r;
	unsigned int a, p, k, n_addr = d->fnat_n4 + d->fnat_n6;
	int q;

	for (k = 0; k < d->fnat_n_lb; k++) {
		uint16_t lo = (uint16_t)(d->fnat_lo + k * d->fnat_share);
		uint16_t hi = k + 1u == d->fnat_n_lb ? d->fnat_hi :
			(uint16_t)(lo + d->fnat_share - 1);

		q = queue_of(pl, idx, d->fnat_lcore[k]);
		if (q < 0) {
			snprintf(fp->reason, sizeof(fp->reason),
				"no RX queue of this port is polled by lb lcore %u",
				d->fnat_lcore[k]);
			return -ENOENT;
		}
		for (a = 0; a < n_addr; a++) {
			const bool v4 = a < d->fnat_n4;
			const uint8_t *addr = v4 ?
				(const uint8_t *)&d->fnat_v4[a] :
				d->fnat_v6[a - d->fnat_n4];

			for (p = 0; p < RTE_DIM(protos); p++) {
				fnat_rule_fill(&r, v4 ? 4 : 6, addr, protos[p],
					lo, hi, (uint16_t)q);
				memset(&fe, 0, sizeof(fe));
				if (!create) {
					if (rte_flow_validate(port_id, &r.attr,
						r.pattern, r.actions, &fe) != 0)
						goto refused;
					continue;
				}
				fp->flows[fp->n] = rte_flow_create(port_id,
					&r.attr, r.pattern, r.actions, &fe);
				if (fp->flows[fp->n] == NULL)
					goto refused;
				fp->n++;
			}
		}
	}
	return 0;
refused:
	snprintf(fp->reason, sizeof(fp->reason), "rte_flow_%s: %s",
		create ? "create" : "validate",
		fe.message != NULL ? fe.message : rte_strerror(rte_errno));
	return -ENOTSUP;
}

void
pa_fnat_flow_setup(struct pa_pipeline *pl)
{
	const struct pa_lb_dp *d;
	unsigned int i, n_rules;

	if (pl->lb == NULL || pl->ports == NULL || pl->replay ||
	    pl->plan.mode != PA_PIPELINE_RTC || !pa_lb_fnat_steers(pl->lb))
		return;
	d = (const struct pa_lb_dp *)(const void *)pl->lb;
	n_rules = (unsigned int)d->fnat_n_lb * (d->fnat_n4 + d->fnat_n6) * 2;
	for (i = 0; i < pl->ports->n && i < PA_CONFIG_MAX_PORTS; i++) {
		struct pa_fnat_flow_port *fp = &pl->fnat_flow[i];

		if (pl->ports->port[i].nb_rxq < 2)
			continue;
		fp->state = "software";
		if (port_rules(pl, i, fp, false) != 0)
			continue;
		fp->flows = rte_zmalloc("pa_fnat_flows", n_rules *
			sizeof(*fp->flows), 0);
		if (fp->flows == NULL) {
			snprintf(fp->reason, sizeof(fp->reason), "out of memory");
			continue;
		}
		if (port_rules(pl, i, fp, true) != 0) {
			pa_fnat_flow_teardown_port(pl, i);
			fp->state = "software";
			continue;
		}
		fp->state = "rte_flow";
		fp->reason[0] = '\0';
	}
}

void
pa_fnat_flow_teardown_port(struct pa_pipeline *pl, unsigned int i)
{
	struct pa_fnat_flow_port *fp = &pl->fnat_flow[i];
	struct rte_flow_error fe;

	while (fp->n > 0)
		rte_flow_destroy(pl->ports->port[i].port_id,
			fp->flows[--fp->n], &fe);
	rte_free(fp->flows);
	fp->flows = NULL;
	fp->state = NULL;
}

void
pa_fnat_flow_teardown(struct pa_pipeline *pl)
{
	unsigned int i;

	for (i = 0; pl->ports != NULL && i < pl->ports->n &&
	     i < PA_CONFIG_MAX_PORTS; i++)
		if (pl->fnat_flow[i].flows != NULL)
			pa_fnat_flow_teardown_port(pl, i);
}

json_t *
pa_fnat_flow_json(const struct pa_pipeline *pl)
{
	json_t *o = json_object();
	unsigned int i;

	for (i = 0; o != NULL && pl->ports != NULL && i < pl->ports->n &&
	     i < PA_CONFIG_MAX_PORTS; i++) {
		const struct pa_fnat_flow_port *fp = &pl->fnat_flow[i];

		if (fp->state == NULL)
			continue;
		json_object_set_new(o, pl->ports->port[i].name,
			json_pack("{s:s, s:I, s:s}", "mode", fp->state,
				"rules", (json_int_t)fp->n,
				"reason", fp->reason));
	}
	return o;
}
