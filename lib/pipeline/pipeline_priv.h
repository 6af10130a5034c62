/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_PIPELINE_PRIV_H
#define PA_PIPELINE_PRIV_H

/*
 * The pipeline's private structures (workers, their rings and queues, the
 * pipeline itself), shared by pipeline.c, stages.c, pipeline_stats.c and
 * pipeline_rpc.c.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "pa_acl.h"
#include "pa_blocklist.h"
#include "pa_lb.h"
#include "pa_neigh.h"
#include "pa_pipeline.h"

#define PA_PIPELINE_MAX_BURST	256
/** Bursts a ring poll takes at once (stages.c, poll_seg()): the stages
 * still run a burst (pipeline.burst) at a time. */
#ifndef PA_PIPELINE_RING_BURSTS
#define PA_PIPELINE_RING_BURSTS	2
#endif

/** A (port, RX queue) pair polled by an lcore. */
struct pa_rxq {
	uint16_t port_id;
	uint16_t queue;
	uint16_t peer_port_id;		/**< where non-balanced traffic leaves */
	uint16_t port_index;
	bool routed;			/**< the port's role (pa_port.h) */
	uint64_t mac64;			/**< routed: its MAC, pa_port_mac64() */
	const struct pa_port *port;	/**< its addresses (routed) */
	struct rte_mempool *pool;	/**< the queue's pool (replay room check) */
};

/** One TX buffer: an lcore's pending packets for one port. */
struct pa_txbuf {
	uint16_t port_id;
	uint16_t queue;
	uint16_t count;
	bool shared;			/**< queue shared: take the port's lock */
	rte_spinlock_t *lock;
	struct rte_mbuf *pkts[PA_PIPELINE_MAX_BURST];
};

/** A port whose control-side frames (lib/neigh), or ICMP errors the
 * data path made (gen), this lcore sends. */
struct pa_ctrl_tx {
	struct rte_ring *ring;
	uint16_t port_index;
	bool gen;			/**< ICMP errors: counted as icmp_tx_* */
};

/** Slots of each port's ring of generated ICMP errors. */
#define PA_PIPELINE_GEN_RING	256
/** Slots of each rtc worker's hand-over ring (ICMP errors about the
 * flows its RX queues receive, from the other workers). */
#define PA_PIPELINE_HANDOVER_RING	256

/** A run of stages on one lcore fed by one input (pa_plan_seg): the
 * ports (first is rx) or the rings from the stage before. */
struct pa_seg {
	uint8_t first, last;		/**< enum pa_stage_id */
	bool run_classify, run_lb, run_tx;	/**< after first (rx) */
	unsigned int n_in;
	struct rte_ring *in[PA_PIPELINE_MAX_STAGE];
	/** !run_tx: the next stage's rings (w->out[last]) */
	const unsigned int *n_out;
	struct rte_ring *const *out;
	/** the next stage's lcores run lb and the LB has full NAT over
	 * several lb lcores: a reply goes to the lcore that holds its flow
	 * (pa_lb_fnat_owner()), by lcore index the ring's index + 1 in
	 * out[] (0: none) */
	bool fnat_steer;
	uint8_t fnat_out[PA_PIPELINE_MAX_LCORES];
};

/** Context of one data-path lcore; allocated on its socket. */
struct pa_worker {
	struct pa_lcore_stats stats;	/* first: cache aligned, hot */

	struct pa_pipeline *pl;
	unsigned int lcore_id;
	int socket;
	bool rtc;			/**< an rtc worker (all four stages) */
	unsigned int stages;		/**< bit per enum pa_stage_id it runs */
	unsigned int stages_done;	/**< stopping: stages it has finished */
	unsigned int widx;		/**< index among all data-path lcores */
	struct pa_acl *acl;		/**< classify: the ACL, or NULL */
	struct pa_blocklist *blocklist;	/**< classify: the source blocklist,
					 * or NULL */
	struct pa_lb *lb;		/**< lb: the load balancer, or NULL */
	uint16_t burst;
	bool replay;
	bool shared_cpu;		/**< its CPU shared (with the main lcore,
					 * another lcore, or floating): yield
					 * when idle */
	bool latency;			/**< stamp at rx, record at tx */
	bool adaptive;			/**< idle back-off (pipeline.idle) */
	uint32_t spin_polls;		/**< adaptive: empty polls before sleeping */
	uint32_t max_sleep_us;		/**< adaptive: longest sleep */
	bool run_rx, run_classify, run_lb, run_tx;	/**< stages it runs */
	struct pa_capture_tap *capture;	/**< dropped packets to capture, or NULL */
	const uint16_t *port_index_of;	/**< ethdev id -> port index */

	unsigned int n_rxq;
	struct pa_rxq rxq[PA_PIPELINE_MAX_RXQ];
	uint16_t segs_per_pkt;

	/** its segments: rx_seg from the ports (run_rx), seg[] from rings */
	struct pa_seg rx_seg;
	unsigned int n_seg;
	struct pa_seg seg[PA_STAGE_MAX];
	/** every ring it consumes */
	unsigned int n_in;
	struct rte_ring *in[PA_PIPELINE_MAX_IN];
	/** per stage it leaves by ring: the next stage's lcores' rings */
	unsigned int n_out[PA_STAGE_MAX];
	struct rte_ring *out[PA_STAGE_MAX][PA_PIPELINE_MAX_STAGE];

	unsigned int n_txb;
	struct pa_txbuf *txb;		/**< one per port (run_tx) */
	/** rx: ARP/ND for the appliance go to the control side here */
	const struct pa_neigh_fast *neigh;
	/** the appliance's addresses (lib/neigh's table: VIPs,
	 * lb.local_addr, ports' own), for the route pass; every lcore */
	const struct pa_neigh_fast *addrs;
	/** rx: frames for a port's own addresses go to its kernel_if */
	const struct pa_excp_fast *excp;
	unsigned int n_ctrl;
	struct pa_ctrl_tx ctrl[2 * PA_CONFIG_MAX_PORTS];
	/** rtc with RSS steering: ICMP errors about this worker's flows
	 * that other workers received (MP/SC), or NULL */
	struct rte_ring *handover;
	/** rtc: one of the ports it polls steers (pa_port "RSS steering"):
	 * look where each quoted ICMP error's flow arrives */
	bool steer;
	/** its rx segment runs lb, beside other such lcores, and the LB has
	 * full NAT: a reply whose flow another holds goes to that one's
	 * hand-over ring (pa_lb_fnat_owner()) */
	bool fnat_steer;
	bool rx_stopped;		/**< stopping: polls no port any more */
	/** its rx segment runs to TX (rtc): no ring after rx, so the rx
	 * stage leaves the common packet's flow hash to the lb stage
	 * (pa_pkt_parse_mbuf_nohash(), pa_pkt_hash_later()). Hand-overs
	 * are quoted ICMP errors, always hashed at rx. */
	bool hash_later;
	/** latency on and the rx segment runs to TX (rtc): the rx stamp is
	 * the burst's until TX, written into a packet's metadata only when
	 * it leaves the burst (a TX buffer, a hand-over ring), not at rx */
	bool stamp_later;
	/** hash_later and no rx stamp to write (latency off, or
	 * stamp_later): the rx pass writes neither (stage_rx()) */
	bool rx_bare;
	/** a port of the pipeline is routed: the route pass looks for
	 * PA_PKT_F_ROUTE (no packet has it otherwise) */
	bool route;
	/** lb: the ICMP errors this lcore may still send (routed ports) */
	struct pa_port_bucket icmp_bucket;
	uint64_t drain_tsc;
	uint64_t last_drain;

	/** rx timestamp to TX queue, TSC cycles (latency on); written by
	 * this lcore only */
	struct pa_stats_latency lat;
	/** latency on, rtc: packets sent this loop pass with the pass's
	 * own rx stamp (@p lat_pend_stamp), recorded at the next pass's
	 * TSC read (tx_send(), pa_worker_main()) */
	uint32_t lat_pend;
	uint64_t lat_pend_stamp;
} __rte_cache_aligned;

struct pa_pipeline {
	struct pa_plan plan;
	const struct pa_config *cfg;
	struct pa_port_set *ports;
	bool replay;
	uint16_t burst;
	uint32_t ring_size;
	unsigned int n_workers;
	struct pa_worker *workers[PA_PIPELINE_MAX_LCORES];
	/** each lcore's stages and segments */
	struct pa_plan_layout layout;
	/** per stage: its lcores (rtc: every stage, every worker) */
	unsigned int n_stage[PA_STAGE_MAX];
	struct pa_worker *stage_workers[PA_STAGE_MAX][PA_PIPELINE_MAX_STAGE];
	unsigned int n_rings;
	struct rte_ring *rings[PA_PIPELINE_MAX_STAGE * PA_PIPELINE_MAX_STAGE * 3];
	struct rte_rcu_qsbr *rcu;
	struct pa_acl *acl;
	struct pa_blocklist *blocklist;
	struct pa_offload *offload;	/* pipeline_get's "offload" */
	struct pa_lb *lb;
	struct pa_neigh *neigh;
	struct pa_excp *excp;
	/** per port: ICMP errors from the lb lcores to a TX lcore (MP/SC) */
	struct rte_ring *gen[PA_CONFIG_MAX_PORTS];
	/** rtc, per port and RX queue: 1 + the index in workers[] of the
	 * worker that polls it (0: none) */
	uint8_t queue_owner[PA_CONFIG_MAX_PORTS][PA_PORT_MAX_QUEUES];
	/** rtc workers that stopped polling ports (hand-over rings: a
	 * worker leaves once no other can hand it anything) */
	unsigned int rx_stopped;
	volatile bool stop;
	volatile bool abort;
	/** stopping: lcores that finished each stage (nothing more of it
	 * will reach a ring) */
	unsigned int done[PA_STAGE_MAX];
	bool launched;
	bool stopped;
};

int pa_worker_main(void *arg);

#endif /* PA_PIPELINE_PRIV_H */
