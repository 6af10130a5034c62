/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's life cycle: workers from the planner's plan, rings between
 * stages, RX/TX queues given to lcores, launch, stop, and the accessors
 * the appliance and the reporting use.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "pipeline_priv.h"
#include "pa_err.h"

RTE_LOG_REGISTER(pa_pipeline_logtype, pa.pipeline, INFO);
#define PL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_pipeline_logtype, "pa.pipeline: " fmt "\n", \
		##__VA_ARGS__)

/* Does data-path lcore @p k of the layout share its CPU, with the main
 * lcore or another data-path lcore (each counted once, whatever stages it
 * runs), or float over several? Only such an lcore yields when idle: one
 * with a CPU of its own keeps it (a yield would hand it to whatever else
 * the host runs, while its rings fill). */
static bool
cpu_shared(const struct pa_plan_layout *lay, unsigned int k)
{
	rte_cpuset_t a = rte_lcore_cpuset(lay->unit[k].lcore_id);
	unsigned int i, main_lcore = rte_get_main_lcore();

	if (CPU_COUNT(&a) > 1)
		return true;
	for (i = 0; i <= lay->n; i++) {
		unsigned int id = i < lay->n ? lay->unit[i].lcore_id : main_lcore;
		rte_cpuset_t b, both;

		if (i == k)
			continue;
		b = rte_lcore_cpuset(id);
		CPU_AND(&both, &a, &b);
		if (CPU_COUNT(&both) != 0)
			return true;
	}
	return false;
}

static struct pa_worker *
worker_new(struct pa_pipeline *pl, const struct pa_plan_unit *u,
		const struct pa_pipeline_opts *o, char *err, size_t err_len)
{
	unsigned int lcore = u->lcore_id;
	int socket = (int)rte_lcore_to_socket_id(lcore);
	struct pa_worker *w;

	if (socket < 0 || socket == SOCKET_ID_ANY)
		socket = 0;
	w = rte_zmalloc_socket("pa_worker", sizeof(*w), RTE_CACHE_LINE_SIZE,
		socket);
	if (w == NULL) {
		pa_seterr(err, err_len, "lcore %u: no memory for its context", lcore);
		return NULL;
	}
	w->pl = pl;
	w->lcore_id = lcore;
	w->widx = pl->n_workers;
	w->socket = socket;
	w->rtc = pl->plan.mode == PA_PIPELINE_RTC;
	w->stages = u->stages;
	w->burst = pl->burst;
	w->replay = o->replay;
	w->capture = o->capture;
	w->segs_per_pkt = RTE_MAX(o->segs_per_pkt, 1);
	w->port_index_of = pl->ports->index_of;
	w->drain_tsc = rte_get_tsc_hz() / 1000000 * pl->cfg->pipeline.tx_drain_us;
	if (w->drain_tsc == 0)
		w->drain_tsc = 1;
	w->latency = pl->cfg->pipeline.latency;
	w->adaptive = pl->cfg->pipeline.idle.mode == PA_IDLE_ADAPTIVE;
	w->spin_polls = pl->cfg->pipeline.idle.spin_polls;
	w->max_sleep_us = pl->cfg->pipeline.idle.max_sleep_us;
	w->run_rx = u->stages & (1u << PA_STAGE_RX);
	w->run_classify = u->stages & (1u << PA_STAGE_CLASSIFY);
	w->run_lb = u->stages & (1u << PA_STAGE_LB);
	w->run_tx = u->stages & (1u << PA_STAGE_TX);
	pl->workers[pl->n_workers++] = w;
	return w;
}

/* A segment's flags and output from its stage range. */
static void
seg_init(struct pa_worker *w, struct pa_seg *g, const struct pa_plan_seg *ps)
{
	g->first = ps->first;
	g->last = ps->last;
	g->run_classify = ps->first <= PA_STAGE_CLASSIFY &&
		ps->last >= PA_STAGE_CLASSIFY;
	g->run_lb = ps->first <= PA_STAGE_LB && ps->last >= PA_STAGE_LB;
	g->run_tx = ps->last == PA_STAGE_TX;
	g->n_out = &w->n_out[ps->last];
	g->out = w->out[ps->last];
}

static struct pa_seg *
seg_from(struct pa_worker *w, unsigned int first)
{
	unsigned int i;

	for (i = 0; i < w->n_seg; i++)
		if (w->seg[i].first == first)
			return &w->seg[i];
	return NULL;
}

/* Rings where a packet changes lcore: from each lcore of stage s that
 * does not run s + 1 to every lcore of s + 1 (SP/SC, on the consumer's
 * socket); into the consumer's segment that starts at s + 1. */
static int
make_rings(struct pa_pipeline *pl, char *err, size_t err_len)
{
	unsigned int st, i, j;

	if (pl->plan.mode == PA_PIPELINE_RTC)
		return 0;
	for (st = 0; st + 1 < PA_STAGE_MAX; st++) {
		for (i = 0; i < pl->n_stage[st]; i++) {
			struct pa_worker *p = pl->stage_workers[st][i];

			if (!pa_plan_unit_hops(&pl->layout.unit[p->widx], st))
				continue;
			for (j = 0; j < pl->n_stage[st + 1]; j++) {
				struct pa_worker *c = pl->stage_workers[st + 1][j];
				struct pa_seg *g = seg_from(c, st + 1);
				char name[RTE_RING_NAMESIZE];
				struct rte_ring *r;

				snprintf(name, sizeof(name), "pa_%s%u_%s%u",
					pa_stats_stage_name((enum pa_stage_id)st), i,
					pa_stats_stage_name((enum pa_stage_id)(st + 1)), j);
				r = rte_ring_create(name, pl->ring_size, c->socket,
					RING_F_SP_ENQ | RING_F_SC_DEQ |
					RING_F_EXACT_SZ);
				if (r == NULL) {
					pa_seterr(err, err_len,
						"ring %s (%u slots, socket %d): %s",
						name, pl->ring_size, c->socket,
						rte_strerror(rte_errno));
					return -rte_errno;
				}
				pl->rings[pl->n_rings++] = r;
				/* the layout gives c a segment from st + 1 */
				RTE_VERIFY(g != NULL);
				g->in[g->n_in++] = r;
				c->in[c->n_in++] = r;
				p->out[st][p->n_out[st]++] = r;
			}
		}
	}
	return 0;
}

/* Per port, a ring of the ICMP errors the data path makes (time exceeded
 * on routed ports, fragmentation needed / packet too big from the lb
 * stage on any port), drained by one TX lcore (pa_pipeline_set_neigh()
 * wires them); and each lcore's token bucket for time exceeded (replay:
 * unlimited, so that the outcome never depends on timing). */
static int
make_gen_rings(struct pa_pipeline *pl, char *err, size_t err_len)
{
	static unsigned int seq;
	char name[RTE_RING_NAMESIZE];
	unsigned int p, i;

	for (p = 0; p < pl->ports->n; p++) {
		snprintf(name, sizeof(name), "pa_gen%u_%u", seq, p);
		pl->gen[p] = rte_ring_create(name, PA_PIPELINE_GEN_RING,
			pl->ports->port[p].socket, RING_F_SC_DEQ);
		if (pl->gen[p] == NULL) {
			pa_seterr(err, err_len, "ring %s: %s", name,
				rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	seq++;
	for (i = 0; i < pl->n_workers; i++)
		pa_port_bucket_init(&pl->workers[i]->icmp_bucket, rte_rdtsc(),
			pl->replay ? 0 : rte_get_tsc_hz() / PA_PORT_ICMP_RATE,
			PA_PORT_ICMP_BURST);
	return 0;
}

/* rtc with several workers and a port that may steer (rss_steer not
 * "off"): each worker gets a hand-over ring (MP/SC), on its socket. */
static bool
wants_handover(const struct pa_pipeline *pl)
{
	unsigned int i, n_rx_lb = 0;

	/* full NAT: lcores that run lb right after rx (no ring before it
	 * that could steer a reply), several of them */
	if (pl->cfg->lb.fnat.present && pl->cfg->lb.fnat.n_addrs != 0) {
		for (i = 0; i < pl->n_workers; i++)
			if (pl->workers[i]->run_rx && pl->workers[i]->rx_seg.run_lb)
				n_rx_lb++;
		if (n_rx_lb >= 2)
			return true;
	}
	if (pl->plan.mode != PA_PIPELINE_RTC || pl->n_workers < 2)
		return false;
	for (i = 0; i < pl->cfg->n_ports; i++)
		if (pl->cfg->ports[i].rss_steer != PA_CONFIG_RSS_STEER_OFF)
			return true;
	return false;
}

static int
make_handover_rings(struct pa_pipeline *pl, char *err, size_t err_len)
{
	static unsigned int seq;
	char name[RTE_RING_NAMESIZE];
	struct pa_worker *w;
	unsigned int i;

	if (!wants_handover(pl))
		return 0;
	for (i = 0; i < pl->n_workers; i++) {
		w = pl->workers[i];
		snprintf(name, sizeof(name), "pa_ho%u_%u", seq, i);
		w->handover = rte_ring_create(name, PA_PIPELINE_HANDOVER_RING,
			w->socket, RING_F_SC_DEQ);
		if (w->handover == NULL) {
			pa_seterr(err, err_len, "ring %s: %s", name,
				rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	seq++;
	return 0;
}

/* After the queues are given out: who polls each (port, RX queue), and
 * which workers receive from a port whose RSS is known. */
static void
wire_steering(struct pa_pipeline *pl)
{
	struct pa_worker *w;
	unsigned int i, j;

	for (i = 0; i < pl->n_workers; i++) {
		w = pl->workers[i];
		if (w->handover == NULL)
			continue;
		for (j = 0; j < w->n_rxq; j++) {
			const struct pa_rxq *q = &w->rxq[j];

			if (q->queue < PA_PORT_MAX_QUEUES)
				pl->queue_owner[q->port_index][q->queue] =
					(uint8_t)(i + 1);
			if (q->port->steer != PA_PORT_STEER_OFF)
				w->steer = true;
		}
	}
}

/* Worker @p index of stage @p st. */
static struct pa_worker *
worker_at(struct pa_pipeline *pl, unsigned int st, unsigned int index)
{
	return pl->stage_workers[st][index];
}

/* Give each (port, RX queue) to an rx-capable lcore, preferring lcores
 * on the port's socket; and each TX lcore its TX queue on every port. */
static int
assign_queues(struct pa_pipeline *pl, char *err, size_t err_len)
{
	struct pa_port_set *ps = pl->ports;
	unsigned int n_rx = pl->n_stage[PA_STAGE_RX];
	unsigned int tx_rank = PA_STAGE_TX;
	unsigned int n_tx = pl->n_stage[tx_rank];
	unsigned int p, q, i, next = 0;

	for (p = 0; p < ps->n; p++) {
		struct pa_port *port = &ps->port[p];

		for (q = 0; q < port->nb_rxq; q++) {
			struct pa_worker *w = NULL;

			/* next rx lcore on the port's socket, round robin */
			for (i = 0; i < n_rx; i++) {
				struct pa_worker *c = worker_at(pl, 0,
					(next + i) % n_rx);

				if (c->socket == port->socket) {
					w = c;
					next = (next + i + 1) % n_rx;
					break;
				}
			}
			if (w == NULL) {
				w = worker_at(pl, 0, next % n_rx);
				next = (next + 1) % n_rx;
			}
			if (w->n_rxq >= PA_PIPELINE_MAX_RXQ) {
				pa_seterr(err, err_len,
					"lcore %u: more than %u RX queues to poll",
					w->lcore_id, PA_PIPELINE_MAX_RXQ);
				return -E2BIG;
			}
			w->rxq[w->n_rxq++] = (struct pa_rxq){
				.port_id = port->port_id,
				.queue = (uint16_t)q,
				.peer_port_id = ps->port[port->peer].port_id,
				.port_index = (uint16_t)p,
				.routed = port->routed,
				.mac64 = pa_port_mac64(&port->mac),
				.port = port,
				.pool = port->pool,
			};
		}
	}
	/* only rx on a routed port sets PA_PKT_F_ROUTE, and any lcore's
	 * route pass may see its packets (rings, hand-over) */
	for (p = 0; p < ps->n; p++)
		if (ps->port[p].routed)
			for (i = 0; i < pl->n_workers; i++)
				pl->workers[i]->route = true;
	for (i = 0; i < n_tx; i++) {
		struct pa_worker *w = worker_at(pl, tx_rank, i);

		w->txb = rte_zmalloc_socket("pa_txbuf",
			sizeof(*w->txb) * ps->n, RTE_CACHE_LINE_SIZE, w->socket);
		if (w->txb == NULL) {
			pa_seterr(err, err_len, "lcore %u: no memory for TX buffers",
				w->lcore_id);
			return -ENOMEM;
		}
		w->n_txb = ps->n;
		for (p = 0; p < ps->n; p++) {
			struct pa_port *port = &ps->port[p];
			struct pa_txbuf *b = &w->txb[p];

			b->port_id = port->port_id;
			b->queue = (uint16_t)(i % port->nb_txq);
			b->shared = port->tx_shared;
			b->lock = &port->tx_lock[b->queue];
		}
	}
	return 0;
}

static int
avail_lcores(struct pa_plan_lcore *avail, unsigned int max)
{
	unsigned int lcore, n = 0;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (n == max)
			break;
		avail[n].lcore_id = lcore;
		avail[n].socket = (int)rte_lcore_to_socket_id(lcore);
		n++;
	}
	return (int)n;
}

struct pa_pipeline *
pa_pipeline_create(const struct pa_pipeline_opts *o, char *err, size_t err_len)
{
	struct pa_plan_lcore avail[PA_PIPELINE_MAX_LCORES];
	int port_sockets[PA_CONFIG_MAX_PORTS];
	struct pa_port_setup_req req;
	struct pa_port_set *ps = o->ports;
	const struct pa_config_pipeline *pc = &o->cfg->pipeline;
	struct pa_pipeline *pl;
	unsigned int i, s, n_avail, n_rx, n_tx, n_slots = 0;
	size_t sz;

	/* the capture's loss counters are indexed by widx */
	RTE_BUILD_BUG_ON(PA_CAPTURE_MAX_LCORES < PA_PIPELINE_MAX_LCORES);
	pl = rte_zmalloc("pa_pipeline", sizeof(*pl), RTE_CACHE_LINE_SIZE);
	if (pl == NULL) {
		pa_seterr(err, err_len, "no memory for the pipeline");
		return NULL;
	}
	pl->cfg = o->cfg;
	pl->ports = ps;
	pl->replay = o->replay;
	pl->burst = RTE_MIN(pc->burst, PA_PIPELINE_MAX_BURST);
	pl->ring_size = pc->ring_size;

	for (i = 0; i < ps->n; i++)
		port_sockets[i] = ps->port[i].socket;
	n_avail = (unsigned int)avail_lcores(avail, RTE_DIM(avail));
	if (pa_plan_make(pc, avail, n_avail, port_sockets, ps->n, &pl->plan,
			err, err_len) != 0)
		goto fail;

	/* One worker per lcore, running its stages in turn (rtc: all four;
	 * pipeline: those the configuration names it for). */
	if (pa_plan_layout(&pl->plan, &pl->layout) != 0) {
		pa_seterr(err, err_len, "$.pipeline.lcores: more than %u lcores",
			PA_PIPELINE_MAX_LCORES);
		goto fail;
	}
	for (i = 0; i < pl->layout.n; i++) {
		const struct pa_plan_unit *u = &pl->layout.unit[i];
		struct pa_worker *w = worker_new(pl, u, o, err, err_len);

		if (w == NULL)
			goto fail;
		w->shared_cpu = cpu_shared(&pl->layout, i);
		for (s = 0; s < u->n_seg; s++) {
			if (u->seg[s].first == PA_STAGE_RX) {
				seg_init(w, &w->rx_seg, &u->seg[s]);
				w->hash_later = w->rx_seg.run_tx;
				w->stamp_later = w->latency &&
					w->rx_seg.run_tx;
				w->rx_bare = w->hash_later &&
					(!w->latency || w->stamp_later);
			} else {
				seg_init(w, &w->seg[w->n_seg++], &u->seg[s]);
			}
		}
	}
	for (s = 0; s < PA_STAGE_MAX; s++) {
		pl->n_stage[s] = pl->layout.n_stage[s];
		n_slots += pl->n_stage[s];
		for (i = 0; i < pl->n_stage[s]; i++)
			pl->stage_workers[s][i] =
				pl->workers[pl->layout.of_stage[s][i]];
	}

	if (make_rings(pl, err, err_len) != 0)
		goto fail;
	if (make_gen_rings(pl, err, err_len) != 0)
		goto fail;
	if (make_handover_rings(pl, err, err_len) != 0)
		goto fail;

	/* Queues and the mbuf budget for the ports' pools. */
	n_rx = pl->n_stage[PA_STAGE_RX];
	n_tx = pl->n_stage[PA_STAGE_TX];
	memset(&req, 0, sizeof(req));
	for (i = 0; i < ps->n; i++) {
		const struct pa_config_port *cp = &o->cfg->ports[i];
		uint16_t rxq = pa_port_conf_queues(cp, true);
		uint16_t txq = pa_port_conf_queues(cp, false);

		req.nb_rxq[i] = rxq != 0 ? rxq : n_rx;
		req.nb_txq[i] = txq != 0 ? txq : n_tx;
		req.tx_users[i] = n_tx;
	}
	req.inflight = pl->n_rings * pl->ring_size +
		PA_NEIGH_INFLIGHT(ps->n) + ps->n * PA_PIPELINE_GEN_RING +
		PA_EXCP_INFLIGHT(pa_excp_count(o->cfg)) +
		/* per stage an lcore runs: what it has in hand (a burst;
		 * a ring poll's PA_PIPELINE_RING_BURSTS), one burst per ring
		 * bucket (an lcore waiting on a ring drains the later
		 * stages it runs meanwhile) */
		n_slots * pl->burst * (1 + PA_PIPELINE_RING_BURSTS) +
		n_tx * ps->n * pl->burst +
		(wants_handover(pl) ? pl->n_workers * PA_PIPELINE_HANDOVER_RING : 0) +
		(o->capture != NULL ? rte_ring_get_capacity(o->capture->ring) : 0);
	req.n_lcores = pl->n_workers + 1;
	req.burst = pl->burst;
	req.no_cache = o->replay;
	req.segs_per_pkt = RTE_MAX(o->segs_per_pkt, 1);
	if (pa_port_setup(ps, &req, err, err_len) != 0)
		goto fail;
	if (assign_queues(pl, err, err_len) != 0)
		goto fail;
	wire_steering(pl);

	sz = rte_rcu_qsbr_get_memsize(RTE_MAX_LCORE);
	pl->rcu = rte_zmalloc("pa_rcu", sz, RTE_CACHE_LINE_SIZE);
	if (pl->rcu == NULL || rte_rcu_qsbr_init(pl->rcu, RTE_MAX_LCORE) != 0) {
		pa_seterr(err, err_len, "cannot set up the RCU variable");
		goto fail;
	}
	for (s = 0; s < pl->n_workers; s++) {
		const struct pa_worker *w = pl->workers[s];
		unsigned int n_out = 0, k;

		for (k = 0; k < PA_STAGE_MAX; k++)
			n_out += w->n_out[k];
		PL_LOG(INFO, "lcore %u (socket %d): %s, %u RX queue(s), %u input ring(s), %u output ring(s)",
			w->lcore_id, w->socket,
			pa_plan_stages_name(w->stages), w->n_rxq, w->n_in,
			n_out);
	}
	return pl;
fail:
	pa_port_stop_all(ps);
	pa_pipeline_destroy(pl);
	return NULL;
}

void
pa_pipeline_set_acl(struct pa_pipeline *pl, struct pa_acl *acl)
{
	unsigned int i;

	pl->acl = acl;
	for (i = 0; i < pl->n_workers; i++)
		if (pl->workers[i]->run_classify)
			pl->workers[i]->acl = acl;
}

void
pa_pipeline_set_blocklist(struct pa_pipeline *pl, struct pa_blocklist *bl)
{
	unsigned int i;

	pl->blocklist = bl;
	for (i = 0; i < pl->n_workers; i++)
		if (pl->workers[i]->run_classify)
			pl->workers[i]->blocklist = bl;
}

void
pa_pipeline_set_offload(struct pa_pipeline *pl, struct pa_offload *off)
{
	pl->offload = off;
}

/*
 * Full NAT over several lb lcores (pa_lb_fnat_owner()): a segment whose
 * next stage's lcores run lb sends a reply down the ring of the lcore
 * that holds its flow; an lcore that runs lb right after rx, beside
 * others, hands such a reply to the holder's hand-over ring.
 */
static void
fnat_steering(struct pa_pipeline *pl)
{
	unsigned int i, k, j, st;

	for (i = 0; i < pl->n_workers; i++) {
		struct pa_worker *w = pl->workers[i];

		if (w->run_rx && w->rx_seg.run_lb && w->handover != NULL)
			w->fnat_steer = true;
		for (k = 0; k <= w->n_seg; k++) {
			struct pa_seg *g = k < w->n_seg ? &w->seg[k] :
				(w->run_rx ? &w->rx_seg : NULL);

			if (g == NULL || g->run_tx)
				continue;
			st = g->last + 1u;
			memset(g->fnat_out, 0, sizeof(g->fnat_out));
			for (j = 0; j < pl->n_stage[st] && j < *g->n_out; j++) {
				struct pa_worker *c = pl->stage_workers[st][j];
				const struct pa_seg *cg = seg_from(c, st);

				if (cg == NULL || !cg->run_lb)
					continue;
				g->fnat_out[c->widx] = (uint8_t)(j + 1);
				g->fnat_steer = true;
			}
		}
	}
}

void
pa_pipeline_set_lb(struct pa_pipeline *pl, struct pa_lb *lb)
{
	unsigned int i;

	pl->lb = lb;
	for (i = 0; i < pl->n_workers; i++)
		if (pl->workers[i]->run_lb)
			pl->workers[i]->lb = lb;
	if (lb != NULL && pa_lb_fnat_steers(lb))
		fnat_steering(pl);
}

void
pa_pipeline_set_neigh(struct pa_pipeline *pl, struct pa_neigh *n)
{
	unsigned int i, p, n_tx = pl->n_stage[PA_STAGE_TX];
	struct pa_worker *w;

	pl->neigh = n;
	for (i = 0; i < pl->n_workers; i++) {
		w = pl->workers[i];
		w->neigh = n != NULL && w->run_rx ? pa_neigh_fast(n) : NULL;
		w->addrs = n != NULL ? pa_neigh_fast(n) : NULL;
		w->n_ctrl = 0;
	}
	if (n_tx == 0)
		return;
	for (p = 0; p < pl->ports->n; p++) {
		w = worker_at(pl, PA_STAGE_TX, p % n_tx);
		if (pl->gen[p] != NULL && w->n_ctrl < RTE_DIM(w->ctrl))
			w->ctrl[w->n_ctrl++] = (struct pa_ctrl_tx){
				.ring = pl->gen[p],
				.port_index = (uint16_t)p,
				.gen = true,
			};
		if (n == NULL || pa_neigh_tx_ring(n, p) == NULL ||
		    w->n_ctrl >= RTE_DIM(w->ctrl))
			continue;
		w->ctrl[w->n_ctrl].ring = pa_neigh_tx_ring(n, p);
		w->ctrl[w->n_ctrl].port_index = (uint16_t)p;
		w->ctrl[w->n_ctrl].gen = false;
		w->n_ctrl++;
	}
}

void
pa_pipeline_set_excp(struct pa_pipeline *pl, struct pa_excp *x)
{
	unsigned int i;

	pl->excp = x;
	for (i = 0; i < pl->n_workers; i++)
		pl->workers[i]->excp = pl->workers[i]->run_rx ?
			pa_excp_fast(x) : NULL;
}

unsigned int
pa_pipeline_rx_lcore_count(const struct pa_pipeline *pl)
{
	return pl->n_stage[PA_STAGE_RX];
}

void
pa_pipeline_lb_lcores(const struct pa_pipeline *pl, bool *runs_lb)
{
	unsigned int i;

	for (i = 0; i < pl->n_workers; i++)
		runs_lb[pl->workers[i]->widx] = pl->workers[i]->run_lb;
}

int
pa_pipeline_classify_socket(const struct pa_pipeline *pl)
{
	unsigned int i;

	for (i = 0; i < pl->n_workers; i++)
		if (pl->workers[i]->run_classify)
			return pl->workers[i]->socket;
	return 0;
}

int
pa_pipeline_start(struct pa_pipeline *pl)
{
	unsigned int i;
	int ret;

	for (i = 0; i < pl->n_workers; i++) {
		ret = rte_eal_remote_launch(pa_worker_main, pl->workers[i],
			pl->workers[i]->lcore_id);
		if (ret != 0) {
			PL_LOG(ERR, "cannot launch lcore %u: %s",
				pl->workers[i]->lcore_id, rte_strerror(-ret));
			pl->stop = true;
			pl->launched = i > 0;
			if (i > 0)
				pa_pipeline_stop(pl);
			return ret;
		}
	}
	pl->launched = true;
	return 0;
}

void
pa_pipeline_stop(struct pa_pipeline *pl)
{
	unsigned int i;

	if (pl == NULL || pl->stopped)
		return;
	pl->stop = true;
	if (pl->launched)
		for (i = 0; i < pl->n_workers; i++)
			rte_eal_wait_lcore(pl->workers[i]->lcore_id);
	pl->stopped = true;
}

void
pa_pipeline_abort(struct pa_pipeline *pl)
{
	if (pl != NULL)
		pl->abort = true;
}

void
pa_pipeline_destroy(struct pa_pipeline *pl)
{
	struct rte_mbuf *m;
	unsigned int i;

	if (pl == NULL)
		return;
	pa_pipeline_stop(pl);
	for (i = 0; i < pl->n_rings; i++) {
		/* After a clean stop the rings are empty; free what a failed
		 * start may have left. */
		while (rte_ring_dequeue(pl->rings[i], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(pl->rings[i]);
	}
	for (i = 0; i < RTE_DIM(pl->gen); i++) {
		if (pl->gen[i] == NULL)
			continue;
		while (rte_ring_dequeue(pl->gen[i], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(pl->gen[i]);
	}
	for (i = 0; i < pl->n_workers; i++) {
		if (pl->workers[i]->handover != NULL) {
			while (rte_ring_dequeue(pl->workers[i]->handover,
					(void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(pl->workers[i]->handover);
		}
		rte_free(pl->workers[i]->txb);
		rte_free(pl->workers[i]);
	}
	rte_free(pl->rcu);
	rte_free(pl);
}

void
pa_pipeline_stats_sum(const struct pa_pipeline *pl, struct pa_lcore_stats *sum)
{
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < pl->n_workers; i++)
		pa_stats_accumulate(sum, &pl->workers[i]->stats);
}

int
pa_pipeline_lcore_stats(const struct pa_pipeline *pl, unsigned int idx,
		unsigned int *lcore_id, struct pa_lcore_stats *out)
{
	if (idx >= pl->n_workers)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	pa_stats_accumulate(out, &pl->workers[idx]->stats);
	if (lcore_id != NULL)
		*lcore_id = pl->workers[idx]->lcore_id;
	return 0;
}

bool
pa_pipeline_latency_enabled(const struct pa_pipeline *pl)
{
	return pl->cfg->pipeline.latency;
}

int
pa_pipeline_latency_sum(const struct pa_pipeline *pl,
		struct pa_stats_latency *out)
{
	unsigned int i;

	memset(out, 0, sizeof(*out));
	if (!pl->cfg->pipeline.latency)
		return -ENOTSUP;
	for (i = 0; i < pl->n_workers; i++)
		pa_stats_latency_merge(out, &pl->workers[i]->lat);
	return 0;
}

int
pa_pipeline_lcore_latency(const struct pa_pipeline *pl, unsigned int idx,
		struct pa_stats_latency *out)
{
	memset(out, 0, sizeof(*out));
	if (idx >= pl->n_workers)
		return -ENOENT;
	if (!pl->cfg->pipeline.latency)
		return -ENOTSUP;
	pa_stats_latency_merge(out, &pl->workers[idx]->lat);
	return 0;
}

struct rte_rcu_qsbr *
pa_pipeline_rcu(struct pa_pipeline *pl)
{
	return pl->rcu;
}

bool
pa_pipeline_rings_empty(const struct pa_pipeline *pl)
{
	unsigned int i;

	for (i = 0; i < pl->n_rings; i++)
		if (!rte_ring_empty(pl->rings[i]))
			return false;
	for (i = 0; i < RTE_DIM(pl->gen); i++)
		if (pl->gen[i] != NULL && !rte_ring_empty(pl->gen[i]))
			return false;
	for (i = 0; i < pl->n_workers; i++)
		if (pl->workers[i]->handover != NULL &&
		    !rte_ring_empty(pl->workers[i]->handover))
			return false;
	return true;
}

unsigned int
pa_pipeline_lcore_count(const struct pa_pipeline *pl)
{
	return pl->n_workers;
}
