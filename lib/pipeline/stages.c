/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stages and the lcore loop. Every packet that enters here leaves
 * through exactly one of: a TX queue (tx_packets), the next stage's ring,
 * or pa_drop() with a reason.
 */
#include <sched.h>
#include <sys/prctl.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "pa_pkt.h"
#include "pipeline_priv.h"

#define PA_OUT_UNKNOWN		UINT32_MAX
/* A burst whose packets may have different rx timestamps: read each. */
#define PA_STAMP_MIXED		UINT64_MAX
#define REPLAY_IDLE_POLLS	1024
#define REPLAY_IDLE_NAP_US	100

static __rte_always_inline void
wait_a_little(const struct pa_worker *w)
{
	if (w->shared_cpu)
		sched_yield();
	else
		rte_pause();
}

/* A dropped packet being captured goes to the capture ring; when it is
 * full, replay waits (its outcome never depends on timing) and live mode
 * frees the packet and counts it lost to the capture. */
static void
capture_drop(struct pa_worker *w, struct rte_mbuf *m, enum pa_drop_reason r)
{
	struct pa_capture_tap *t = w->capture;

	while (!pa_capture_offer(t, m, r)) {
		if (!pa_capture_should_wait(t) || w->pl->abort) {
			pa_capture_count_lost(t, w->widx, r);
			rte_pktmbuf_free(m);
			return;
		}
		wait_a_little(w);
	}
}

/* Counted once it is on the capture ring: when the replay sees every
 * packet counted, every captured one is there for the final drain. */
static __rte_always_inline void
pa_drop(struct pa_worker *w, struct rte_mbuf *m, enum pa_drop_reason r)
{
	if (unlikely(pa_capture_wanted(w->capture, r)))
		capture_drop(w, m, r);
	else
		rte_pktmbuf_free(m);
	w->stats.drops[r]++;
}

static void
drop_bulk(struct pa_worker *w, struct rte_mbuf **pkts, unsigned int n,
		enum pa_drop_reason r)
{
	unsigned int i;

	if (likely(!pa_capture_wanted(w->capture, r))) {
		w->stats.drops[r] += n;
		rte_pktmbuf_free_bulk(pkts, n);
		return;
	}
	for (i = 0; i < n; i++)
		pa_drop(w, pkts[i], r);
}

/* The frames the control side (lib/neigh) sends on the ports this lcore
 * serves for it: on the lcore's own TX queue, not counted in tx_packets
 * (they were never received). */
static void
ctrl_tx(struct pa_worker *w)
{
	struct rte_mbuf *pkts[32];
	unsigned int i, n, sent;

	for (i = 0; i < w->n_ctrl; i++) {
		const struct pa_txbuf *b = &w->txb[w->ctrl[i].port_index];

		n = rte_ring_sc_dequeue_burst(w->ctrl[i].ring, (void **)pkts,
			RTE_DIM(pkts), NULL);
		for (sent = 0; sent < n;) {
			if (unlikely(b->shared))
				rte_spinlock_lock(b->lock);
			sent += rte_eth_tx_burst(b->port_id, b->queue,
				pkts + sent, (uint16_t)(n - sent));
			if (unlikely(b->shared))
				rte_spinlock_unlock(b->lock);
			if (sent == n)
				break;
			if (!w->replay || w->pl->abort) {
				rte_pktmbuf_free_bulk(pkts + sent, n - sent);
				w->stats.ctrl_tx_dropped += n - sent;
				break;
			}
			wait_a_little(w);
		}
		w->stats.ctrl_tx_packets += RTE_MIN(sent, n);
	}
}

/* Hand ARP/ND for the appliance to the control side: counted as left
 * here ("local"); a full ring drops (live) or waits (replay, meanwhile
 * sending what the control side queued and reporting quiescence: it may
 * be waiting for either). */
static void
neigh_put(struct pa_worker *w, struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int sent = 0;

	for (;;) {
		sent += rte_ring_mp_enqueue_burst(w->neigh->rx,
			(void **)(pkts + sent), n - sent, NULL);
		if (likely(sent == n))
			break;
		if (!w->replay || w->pl->abort) {
			drop_bulk(w, pkts + sent, n - sent, w->replay ?
				PA_DROP_SHUTDOWN : PA_DROP_NEIGH_RING_FULL);
			break;
		}
		ctrl_tx(w);
		rte_rcu_qsbr_quiescent(w->pl->rcu, w->lcore_id);
		wait_a_little(w);
	}
	w->stats.drops[PA_DROP_LOCAL] += RTE_MIN(sent, n);
}

/* rx: parse each frame once; malformed frames leave here, and ARP/ND
 * for the appliance (to the control side). @p stamp: the burst's rx TSC
 * (latency on). */
static __rte_always_inline uint16_t
stage_rx(struct pa_worker *w, const struct pa_rxq *q, struct rte_mbuf **pkts,
		uint16_t n, uint64_t stamp)
{
	struct rte_mbuf *local[PA_PIPELINE_MAX_BURST];
	uint16_t i, kept = 0, n_local = 0;
	int nv;

	w->stats.rx_packets += n;
	w->stats.stage_packets[PA_STAGE_RX] += n;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (unlikely(pa_pkt_parse_mbuf(m) < 0)) {
			pa_drop(w, m, PA_DROP_MALFORMED);
			continue;
		}
		if (w->neigh != NULL) {
			nv = pa_neigh_rx_classify(w->neigh, m, pa_pkt_meta(m),
				q->port_index);
			if (unlikely(nv != PA_NEIGH_RX_PASS)) {
				if (nv == PA_NEIGH_RX_LOCAL)
					local[n_local++] = m;
				else
					pa_drop(w, m, PA_DROP_MALFORMED);
				continue;
			}
		}
		pa_pkt_meta(m)->out_port = q->peer_port_id;
		if (w->latency)
			pa_pkt_rx_tsc_set(pa_pkt_meta(m), stamp);
		pkts[kept++] = m;
	}
	if (unlikely(n_local != 0))
		neigh_put(w, local, n_local);
	return kept;
}

/* classify: the ACL decides; drops leave here with their reason. */
static __rte_always_inline uint16_t
stage_classify(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	static const uint8_t reason[] = {
		[PA_ACL_V_DROP_ACL] = PA_DROP_ACL,
		[PA_ACL_V_DROP_POLICE] = PA_DROP_POLICE,
		[PA_ACL_V_DROP_NON_IP] = PA_DROP_NON_IP,
	};
	uint8_t verdict[PA_PIPELINE_MAX_BURST];
	uint16_t i, kept = 0;

	w->stats.stage_packets[PA_STAGE_CLASSIFY] += n;
	if (w->acl == NULL || n == 0)
		return n;
	pa_acl_classify(w->acl, w->widx, pkts, n, verdict);
	for (i = 0; i < n; i++) {
		if (likely(verdict[i] == PA_ACL_V_FORWARD))
			pkts[kept++] = pkts[i];
		else
			pa_drop(w, pkts[i], (enum pa_drop_reason)reason[verdict[i]]);
	}
	return kept;
}

/* lb: packets to a service go to a backend; the rest pass unchanged. */
static __rte_always_inline uint16_t
stage_lb(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now)
{
	static const uint8_t reason[] = {
		[PA_LB_V_NO_BACKEND] = PA_DROP_NO_BACKEND,
		[PA_LB_V_MTU] = PA_DROP_MTU,
		[PA_LB_V_NO_ROOM] = PA_DROP_MALFORMED,
		[PA_LB_V_ICMP_BAD_QUOTE] = PA_DROP_ICMP_BAD_QUOTE,
		[PA_LB_V_ICMP_NO_SERVICE] = PA_DROP_ICMP_NO_SERVICE,
	};
	uint8_t verdict[PA_PIPELINE_MAX_BURST];
	uint16_t i, kept = 0;

	w->stats.stage_packets[PA_STAGE_LB] += n;
	if (w->lb == NULL || n == 0 || !pa_lb_active(w->lb))
		return n;
	pa_lb_process(w->lb, w->widx, pkts, n, now, verdict);
	for (i = 0; i < n; i++) {
		if (likely(verdict[i] == PA_LB_V_FORWARD)) {
			pkts[kept++] = pkts[i];
		} else if (verdict[i] == PA_LB_V_MTU_ICMP) {
			/* dropped, and made into the ICMP error its source
			 * gets (the mbuf is reused: nothing to capture) */
			w->stats.drops[PA_DROP_MTU]++;
			w->stats.generated++;
			pkts[kept++] = pkts[i];
		} else {
			pa_drop(w, pkts[i], (enum pa_drop_reason)reason[verdict[i]]);
		}
	}
	return kept;
}

/* Cycles from an rx stamp to @p now; a stamp taken on another lcore whose
 * TSC runs a little ahead counts as 0, not as 2^48. */
static __rte_always_inline uint64_t
lat_cycles(uint64_t now, uint64_t stamp)
{
	uint64_t d = pa_pkt_tsc_since(now, stamp);

	return likely(d <= PA_PKT_TSC_MASK >> 1) ? d : 0;
}

/* Split a burst into runs of equal rx stamps (packets of one rx burst
 * share theirs). Read before the TX queue owns the mbufs. */
static __rte_always_inline unsigned int
lat_runs(struct rte_mbuf **pkts, uint16_t n, uint64_t *run_stamp,
		uint16_t *run_end)
{
	uint64_t prev = pa_pkt_rx_tsc(pa_pkt_meta(pkts[0])), st;
	unsigned int r = 0;
	uint16_t i;

	for (i = 1; i < n; i++) {
		st = pa_pkt_rx_tsc(pa_pkt_meta(pkts[i]));
		if (st != prev) {
			run_stamp[r] = prev;
			run_end[r++] = i;
			prev = st;
		}
	}
	run_stamp[r] = prev;
	run_end[r++] = n;
	return r;
}

/* Record the latency of the first @p sent packets of a burst. */
static __rte_always_inline void
lat_record(struct pa_worker *w, uint64_t now, uint64_t stamp,
		const uint64_t *run_stamp, const uint16_t *run_end,
		unsigned int n_runs, uint16_t sent)
{
	uint16_t start = 0, end;
	unsigned int r;

	if (stamp != PA_STAMP_MIXED) {
		pa_stats_latency_add(&w->lat, lat_cycles(now, stamp), sent);
		return;
	}
	for (r = 0; r < n_runs && start < sent; r++) {
		end = RTE_MIN(run_end[r], sent);
		pa_stats_latency_add(&w->lat, lat_cycles(now, run_stamp[r]),
			end - start);
		start = run_end[r];
	}
}

/* Hand @p n packets to a TX queue; what the queue refuses is waited for
 * (replay) or dropped and counted (live). With latency on, the packets
 * the queue takes are recorded: now - rx stamp (@p stamp for the whole
 * burst, or PA_STAMP_MIXED: each packet's own). */
static void
tx_send(struct pa_worker *w, const struct pa_txbuf *b, struct rte_mbuf **pkts,
		uint16_t n, uint64_t stamp)
{
	uint64_t run_stamp[PA_PIPELINE_MAX_BURST];
	uint16_t run_end[PA_PIPELINE_MAX_BURST];
	unsigned int n_runs = 0;
	uint64_t now = 0;
	uint16_t sent = 0;

	if (w->latency) {
		if (stamp == PA_STAMP_MIXED)
			n_runs = lat_runs(pkts, n, run_stamp, run_end);
		now = rte_rdtsc();
	}
	for (;;) {
		if (unlikely(b->shared))
			rte_spinlock_lock(b->lock);
		sent += rte_eth_tx_burst(b->port_id, b->queue, pkts + sent,
			n - sent);
		if (unlikely(b->shared))
			rte_spinlock_unlock(b->lock);
		if (likely(sent == n))
			break;
		if (!w->replay || w->pl->abort) {
			drop_bulk(w, pkts + sent, n - sent,
				w->replay ? PA_DROP_SHUTDOWN : PA_DROP_TX_FULL);
			break;
		}
		wait_a_little(w);
	}
	w->stats.tx_packets += sent;
	if (w->latency && sent != 0)
		lat_record(w, now, stamp, run_stamp, run_end, n_runs, sent);
}

static void
txbuf_flush(struct pa_worker *w, struct pa_txbuf *b)
{
	if (b->count == 0)
		return;
	tx_send(w, b, b->pkts, b->count, PA_STAMP_MIXED);
	b->count = 0;
}

/* @p uniform_out: the out port every packet of the burst has, when a
 * stage before knows it (rx sets the input port's peer on a whole burst),
 * or PA_OUT_UNKNOWN. @p stamp: the rx stamp the whole burst shares (rtc:
 * one rx burst), or PA_STAMP_MIXED. */
static __rte_always_inline void
stage_tx(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n,
		uint32_t uniform_out, uint64_t stamp)
{
	const uint16_t *index_of = w->port_index_of;
	uint16_t i, out, first;
	struct pa_txbuf *b;

	if (unlikely(n == 0))
		return;
	w->stats.stage_packets[PA_STAGE_TX] += n;

	/* A burst bound for one port with nothing waiting before it there
	 * goes out as it is (l3fwd's send_packetsx4 does the same); the
	 * buffers gather mixed or small bursts. */
	if (uniform_out != PA_OUT_UNKNOWN) {
		first = (uint16_t)uniform_out;
		i = n;
	} else {
		first = pa_pkt_meta(pkts[0])->out_port;
		for (i = 1; i < n; i++)
			if (pa_pkt_meta(pkts[i])->out_port != first)
				break;
	}
	if (likely(i == n && first < RTE_MAX_ETHPORTS &&
	    index_of[first] < w->n_txb)) {
		b = &w->txb[index_of[first]];
		if (likely(b->count == 0)) {
			tx_send(w, b, pkts, n, stamp);
			return;
		}
	}

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		out = pa_pkt_meta(m)->out_port;
		if (unlikely(out >= RTE_MAX_ETHPORTS ||
		    index_of[out] >= w->n_txb)) {
			pa_drop(w, m, PA_DROP_MALFORMED);
			continue;
		}
		b = &w->txb[index_of[out]];
		b->pkts[b->count++] = m;
		if (b->count == w->burst)
			txbuf_flush(w, b);
	}
}

static void
txbuf_flush_all(struct pa_worker *w)
{
	unsigned int i;

	for (i = 0; i < w->n_txb; i++)
		txbuf_flush(w, &w->txb[i]);
}

static void
ring_put(struct pa_worker *w, struct rte_ring *r, struct rte_mbuf **pkts,
		unsigned int n)
{
	unsigned int sent = 0;

	for (;;) {
		sent += rte_ring_sp_enqueue_burst(r, (void **)(pkts + sent),
			n - sent, NULL);
		if (likely(sent == n))
			return;
		if (!w->replay || w->pl->abort) {
			drop_bulk(w, pkts + sent, n - sent,
				w->replay ? PA_DROP_SHUTDOWN : PA_DROP_RING_FULL);
			return;
		}
		wait_a_little(w);
	}
}

/* Hand a burst to the next stage, the lcore chosen by flow hash. */
static __rte_always_inline void
dispatch(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *bucket[PA_PIPELINE_MAX_STAGE][PA_PIPELINE_MAX_BURST];
	uint16_t count[PA_PIPELINE_MAX_STAGE];
	unsigned int i, d, n_out = w->n_out;

	if (n == 0)
		return;
	if (n_out == 1) {
		ring_put(w, w->out[0], pkts, n);
		return;
	}
	memset(count, 0, sizeof(count[0]) * n_out);
	for (i = 0; i < n; i++) {
		d = (unsigned int)(((uint64_t)pa_pkt_meta(pkts[i])->hash *
			n_out) >> 32);
		bucket[d][count[d]++] = pkts[i];
	}
	for (d = 0; d < n_out; d++)
		if (count[d] != 0)
			ring_put(w, w->out[d], bucket[d], count[d]);
}

/* The stages after rx, then the sink: TX or the next ring. */
static __rte_always_inline void
process_rest(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n,
		uint32_t uniform_out, uint64_t now, uint64_t stamp)
{
	if (w->run_classify)
		n = stage_classify(w, pkts, n);
	if (w->run_lb)
		n = stage_lb(w, pkts, n, now);
	if (w->run_tx)
		stage_tx(w, pkts, n, uniform_out, stamp);
	else
		dispatch(w, pkts, n);
}

static __rte_always_inline bool
replay_room(const struct pa_worker *w, const struct pa_rxq *q)
{
	/* net_pcap consumes a record before allocating its mbuf: poll only
	 * when every packet of a burst is sure to get its buffers. */
	return rte_mempool_avail_count(q->pool) >=
		(unsigned int)w->burst * w->segs_per_pkt;
}

static __rte_always_inline unsigned int
poll_ports(struct pa_worker *w, struct rte_mbuf **pkts, uint64_t now)
{
	unsigned int i, total = 0;
	uint64_t stamp = 0;
	uint16_t n;

	for (i = 0; i < w->n_rxq; i++) {
		const struct pa_rxq *q = &w->rxq[i];

		if (unlikely(w->replay) && !replay_room(w, q))
			continue;
		n = rte_eth_rx_burst(q->port_id, q->queue, pkts, w->burst);
		if (n == 0)
			continue;
		total += n;
		/* one TSC read per burst: the packets' time in the appliance
		 * starts here */
		if (w->latency)
			stamp = rte_rdtsc();
		n = stage_rx(w, q, pkts, n, stamp);
		process_rest(w, pkts, n, q->peer_port_id, now, stamp);
	}
	return total;
}

static __rte_always_inline unsigned int
poll_rings(struct pa_worker *w, struct rte_mbuf **pkts, uint64_t now)
{
	unsigned int i, n, total = 0;

	for (i = 0; i < w->n_in; i++) {
		n = rte_ring_sc_dequeue_burst(w->in[i], (void **)pkts,
			w->burst, NULL);
		if (n == 0)
			continue;
		total += n;
		process_rest(w, pkts, (uint16_t)n, PA_OUT_UNKNOWN, now,
			PA_STAMP_MIXED);
	}
	return total;
}

static bool
inputs_empty(const struct pa_worker *w)
{
	unsigned int i;

	for (i = 0; i < w->n_in; i++)
		if (!rte_ring_empty(w->in[i]))
			return false;
	return true;
}

/* May this lcore leave? Only once every lcore upstream has left and its
 * rings are empty, so that nothing is stranded. */
static bool
may_finish(const struct pa_worker *w)
{
	const struct pa_pipeline *pl = w->pl;

	if (w->rank == 0)
		return true;
	if (__atomic_load_n(&pl->done[w->rank - 1], __ATOMIC_ACQUIRE) <
	    pl->rank_count[w->rank - 1])
		return false;
	return inputs_empty(w);
}

/*
 * Adaptive polling: the lcore has found no work for spin_polls polls.
 * Sleep @p nap_us (1 us, doubling each time, up to max_sleep_us), so a
 * packet that arrives meanwhile waits at most max_sleep_us (plus the
 * kernel's wake-up). Sleeping is a syscall, but only when there is no
 * work: any work resets the back-off. The lcore is offline for RCU while
 * it sleeps (it holds no table), so that no update waits for it.
 */
static void
idle_sleep(struct pa_worker *w, uint32_t *nap_us)
{
	struct pa_pipeline *pl = w->pl;
	uint64_t t0;

	/* nothing may wait in a TX buffer for the length of a sleep */
	if (w->run_tx) {
		txbuf_flush_all(w);
		w->last_drain = rte_rdtsc();
	}
	*nap_us = *nap_us == 0 ? 1 : RTE_MIN(*nap_us * 2, w->max_sleep_us);
	t0 = rte_rdtsc();
	rte_rcu_qsbr_thread_offline(pl->rcu, w->lcore_id);
	rte_delay_us_sleep(*nap_us);
	rte_rcu_qsbr_thread_online(pl->rcu, w->lcore_id);
	w->stats.sleeps++;
	w->stats.sleep_cycles += rte_rdtsc() - t0;
}

int
pa_worker_main(void *arg)
{
	struct pa_worker *w = arg;
	struct pa_pipeline *pl = w->pl;
	struct rte_mbuf *pkts[PA_PIPELINE_MAX_BURST];
	uint64_t now, prev;
	unsigned int got, idle_streak = 0;
	uint32_t nap_us = 0;
	bool busy = false;

	/* the kernel's default timer slack (50 us) would stretch every short
	 * sleep: make them as short as asked */
	if (w->adaptive)
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	rte_rcu_qsbr_thread_register(pl->rcu, w->lcore_id);
	rte_rcu_qsbr_thread_online(pl->rcu, w->lcore_id);
	prev = rte_rdtsc();
	w->last_drain = prev;
	for (;;) {
		bool stopping = pl->stop;

		now = rte_rdtsc();
		if (busy) {
			w->stats.busy_cycles += now - prev;
			w->stats.busy_polls++;
		} else {
			w->stats.idle_polls++;
		}
		prev = now;

		got = 0;
		if (likely(!stopping))
			got += poll_ports(w, pkts, now);
		got += poll_rings(w, pkts, now);
		if (w->run_tx && now - w->last_drain >= w->drain_tsc) {
			txbuf_flush_all(w);
			w->last_drain = now;
		}
		if (unlikely(w->n_ctrl != 0))
			ctrl_tx(w);
		rte_rcu_qsbr_quiescent(pl->rcu, w->lcore_id);
		busy = got != 0;
		if (w->lb != NULL)
			pa_lb_poll(w->lb, w->widx, now, !busy);
		if (busy) {
			idle_streak = 0;
			nap_us = 0;
			continue;
		}
		if (stopping && may_finish(w))
			break;
		if (idle_streak < UINT32_MAX)
			idle_streak++;
		if (w->adaptive) {
			if (idle_streak > w->spin_polls)
				idle_sleep(w, &nap_us);
			else
				wait_a_little(w);
		} else if (unlikely(w->replay) && idle_streak > REPLAY_IDLE_POLLS) {
			/* A replay that has run dry (--stay) need not spin. */
			uint64_t t0 = rte_rdtsc();

			rte_delay_us_sleep(REPLAY_IDLE_NAP_US);
			w->stats.sleeps++;
			w->stats.sleep_cycles += rte_rdtsc() - t0;
		} else {
			wait_a_little(w);
		}
	}
	if (w->run_tx)
		txbuf_flush_all(w);
	ctrl_tx(w);
	pa_lb_lcore_exit(w->lb, w->widx);
	rte_rcu_qsbr_thread_offline(pl->rcu, w->lcore_id);
	rte_rcu_qsbr_thread_unregister(pl->rcu, w->lcore_id);
	__atomic_fetch_add(&pl->done[w->rank], 1, __ATOMIC_RELEASE);
	return 0;
}
