/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_PIPELINE_H
#define PA_PIPELINE_H

/**
 * @file
 * The data path: lcores running stages (rx, classify, lb, tx).
 *
 * In "pipeline" mode each stage has its own lcores; stage k hands packets
 * to stage k+1 through one single-producer/single-consumer rte_ring per
 * (producer lcore, consumer lcore) pair, allocated on the consumer's NUMA
 * socket, and chooses the consumer by the packet's flow hash, so a flow
 * stays on one lcore at every stage and keeps its order. One lcore may run
 * several stages in turn (pa_plan_layout()): a packet stays in its burst
 * while the next stage runs on its lcore, and takes a ring only where it
 * changes lcore. In "rtc" mode
 * every worker lcore runs all four stages on its own bursts; the same
 * stage functions serve both modes.
 *
 * Each lcore owns a TX buffer per port on its own TX queue (a queue is
 * shared under a spinlock only when a port has fewer TX queues than TX
 * lcores), drained every tx_drain_us.
 *
 * Every data-path lcore reports quiescence to an rte_rcu_qsbr variable once
 * per loop (pa_pipeline_rcu()): tables read by stages are replaced by
 * publishing a new pointer, waiting for quiescence and freeing the old one.
 *
 * Counters are per lcore (struct pa_lcore_stats) and summed on read, and
 * so are the latency histograms (pa_pipeline_latency_sum()).
 *
 * Idle lcores (pipeline.idle): in "busy" mode an lcore that finds no work
 * keeps polling (rte_pause, or sched_yield when it shares its CPU). In
 * "adaptive" mode, after idle.spin_polls empty polls in a row it sleeps
 * 1 us, then 2, 4, ... up to idle.max_sleep_us per sleep, until a poll
 * finds work, which resets the back-off; it flushes its TX buffers before
 * sleeping and is offline for RCU while asleep. A packet that arrives at
 * an idle lcore therefore waits at most max_sleep_us (plus the kernel's
 * wake-up) per stage lcore it crosses, and pa_pipeline_stop() is seen
 * within the same bound.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include <jansson.h>

#include "pa_acl.h"
#include "pa_blocklist.h"
#include "pa_capture.h"
#include "pa_config.h"
#include "pa_excp.h"
#include "pa_lb.h"
#include "pa_neigh.h"
#include "pa_port.h"
#include "pa_stats.h"

#define PA_PIPELINE_MAX_LCORES	64	/**< data-path lcores */
#define PA_PIPELINE_MAX_STAGE	16	/**< lcores per stage */
#define PA_PIPELINE_MAX_RXQ	64	/**< (port, queue) pairs per lcore */
/** rings an lcore consumes: from each stage before one it runs */
#define PA_PIPELINE_MAX_IN	(PA_PIPELINE_MAX_STAGE * (PA_STAGE_MAX - 1))

/** One lcore available to the planner. */
struct pa_plan_lcore {
	unsigned int lcore_id;
	int socket;
};

/** The lcores of each stage (worker only in rtc mode). */
struct pa_plan {
	enum pa_pipeline_mode mode;
	unsigned int n[PA_CONFIG_STAGE_MAX];
	unsigned int lcores[PA_CONFIG_STAGE_MAX][PA_PIPELINE_MAX_STAGE];
};

/**
 * Decide which lcores run which stages.
 *
 * With explicit lcores in @p pc, checks each is available (not the main
 * lcore, enabled in EAL). Otherwise plans automatically: lcores on the
 * NUMA sockets of the ports are preferred when there are enough of them;
 * rtc mode uses every chosen lcore as a worker; pipeline mode gives one
 * lcore to each stage and extra lcores to classify, lb, rx and tx in turn;
 * with fewer than four it puts stages together: three lcores run rx+tx,
 * classify and lb; two run rx+tx and classify+lb; one runs all four.
 *
 * @param avail    available lcores (main lcore excluded)
 * @param port_sockets  socket of each port
 * @return 0, or -EINVAL / -ENODEV with the reason in @p err.
 */
int pa_plan_make(const struct pa_config_pipeline *pc,
		const struct pa_plan_lcore *avail, unsigned int n_avail,
		const int *port_sockets, unsigned int n_ports,
		struct pa_plan *plan, char *err, size_t err_len);

/** Packets of one segment stay in the burst from stage first to last. */
struct pa_plan_seg {
	uint8_t first;			/**< enum pa_stage_id: its input's stage */
	uint8_t last;			/**< the last stage it runs here */
};

/**
 * One data-path lcore of a plan: the stages it runs, in turn, and its
 * segments. A segment is a run of consecutive stages on this lcore fed by
 * one kind of input: the ports (it starts at rx) or the rings from the
 * lcores of the stage before that do not run its first stage. A packet
 * stays on its lcore while the next stage runs there; it changes lcore
 * (a ring, the consumer chosen by flow hash among all the next stage's
 * lcores) only where it leaves the last stage of a run.
 */
struct pa_plan_unit {
	unsigned int lcore_id;
	unsigned int stages;		/**< bit per enum pa_stage_id */
	unsigned int n_seg;
	struct pa_plan_seg seg[PA_STAGE_MAX];	/**< in stage order */
};

/** A plan per lcore (pa_plan_layout()). */
struct pa_plan_layout {
	unsigned int n;			/**< distinct lcores */
	struct pa_plan_unit unit[PA_PIPELINE_MAX_LCORES];
	/** per stage: its lcores' indexes in unit[] (rtc: every stage
	 * lists every worker) */
	unsigned int n_stage[PA_STAGE_MAX];
	unsigned int of_stage[PA_STAGE_MAX][PA_PIPELINE_MAX_STAGE];
};

/**
 * Build each lcore's plan from @p plan: units in order of first
 * appearance (rx, classify, lb, tx; rtc: the workers). Pure.
 * @return 0, or -E2BIG when there are more distinct lcores than
 * PA_PIPELINE_MAX_LCORES.
 */
int pa_plan_layout(const struct pa_plan *plan, struct pa_plan_layout *lay);

/** Does unit @p u hand what leaves its stage @p s (not tx) to the next
 * stage's lcores by ring (it does not run stage s + 1 itself)? */
static inline bool
pa_plan_unit_hops(const struct pa_plan_unit *u, unsigned int s)
{
	return (u->stages & (1u << s)) && !(u->stages & (1u << (s + 1)));
}

/** "rx+tx": the stages of @p mask joined by '+' (static string). */
const char *pa_plan_stages_name(unsigned int mask);

/**
 * Lcores an automatic or explicit plan will need when the daemon chooses
 * the EAL lcores itself (replay mode, or no lcore option given): the
 * explicit ones, or 1 (rtc) / 1..4 (pipeline). Lcore 0 is the main lcore.
 * @return number written to @p ids (at most @p max).
 */
unsigned int pa_plan_wanted_lcores(const struct pa_config_pipeline *pc,
		unsigned int *ids, unsigned int max);

/**
 * Format an EAL "--lcores" value mapping lcore 0 and @p ids onto @p cpus:
 * one CPU each when there are enough ("0@2,1@3"), otherwise every lcore
 * floats over all the CPUs ("(0,1,2,3,4)@(0,1)").
 * @return 0, or -ENOSPC.
 */
int pa_plan_lcores_arg(const unsigned int *ids, unsigned int n_ids,
		const unsigned int *cpus, unsigned int n_cpus,
		char *buf, size_t len);

/** Most CPUs pa_plan_order_cpus() handles. */
#define PA_PLAN_MAX_CPUS	1024

/**
 * Put the CPUs of NUMA node @p node first, keeping the order otherwise
 * (stable), so that the lcores mapped first land next to the ports.
 * @param cpu_node  node of each CPU (-1 unknown); @p node < 0: no change.
 */
void pa_plan_order_cpus(unsigned int *cpus, const int *cpu_node,
		unsigned int n, int node);

struct pa_pipeline;

struct pa_pipeline_opts {
	const struct pa_config *cfg;
	struct pa_port_set *ports;
	/** Replay (lab) mode: full rings and TX queues make the producer
	 * wait instead of dropping, so the outcome never depends on timing. */
	bool replay;
	/** If set, dropped mbufs whose reason is in the tap's mask are put
	 * on its ring instead of being freed (lib/capture); the capture
	 * frees them. */
	struct pa_capture_tap *capture;
	/** Replay: mbufs one packet may need (chained jumbo frames). */
	uint16_t segs_per_pkt;
};

/**
 * Plan lcores, set up ports (pools, queues), rings, per-lcore contexts and
 * the RCU variable. Nothing runs yet.
 * @return the pipeline, or NULL with the reason in @p err.
 */
struct pa_pipeline *pa_pipeline_create(const struct pa_pipeline_opts *o,
		char *err, size_t err_len);

/** Give the classify stage its ACL (before pa_pipeline_start()). */
void pa_pipeline_set_acl(struct pa_pipeline *pl, struct pa_acl *acl);

struct pa_blocklist;

/** Give the classify stage its source blocklist, looked up before the
 * ACL (before pa_pipeline_start()). */
void pa_pipeline_set_blocklist(struct pa_pipeline *pl,
		struct pa_blocklist *bl);

struct pa_offload;

/** What pipeline_get reports as "offload" (the NIC's share of the
 * blocklist; NULL: {}). */
void pa_pipeline_set_offload(struct pa_pipeline *pl,
		struct pa_offload *off);

/** Give the lb stage its load balancer (before pa_pipeline_start()). */
void pa_pipeline_set_lb(struct pa_pipeline *pl, struct pa_lb *lb);

/**
 * Give the rx stage the neighbour subsystem's ring and table, and each
 * port's control-side TX ring to one TX-capable lcore (port i to the
 * (i mod n)th), which sends its frames on its own queue of the port
 * (before pa_pipeline_start()). Its counters join stats_get ("neigh").
 */
void pa_pipeline_set_neigh(struct pa_pipeline *pl, struct pa_neigh *n);

/**
 * Give the rx stage the exception path (kernel_if; NULL: none), after
 * pa_pipeline_set_neigh() and before pa_pipeline_start(). Its counters
 * join stats_get ("excp").
 */
void pa_pipeline_set_excp(struct pa_pipeline *pl, struct pa_excp *x);

/** Data-path lcores that run the rx stage. */
unsigned int pa_pipeline_rx_lcore_count(const struct pa_pipeline *pl);

/**
 * Which data-path lcores (by index, 0..pa_pipeline_lcore_count() - 1)
 * run the lb stage: @p runs_lb receives one flag per lcore.
 */
void pa_pipeline_lb_lcores(const struct pa_pipeline *pl, bool *runs_lb);

/** NUMA socket of the lcores that run the classify stage. */
int pa_pipeline_classify_socket(const struct pa_pipeline *pl);

/** Launch the lcores. @return 0 or -errno. */
int pa_pipeline_start(struct pa_pipeline *pl);

/**
 * Stop: rx lcores stop polling ports; each later stage finishes when every
 * lcore before it has finished and its rings are empty; TX buffers are
 * flushed. Waits for every lcore. Idempotent.
 */
void pa_pipeline_stop(struct pa_pipeline *pl);

/** Make packets still waiting behind a full ring or TX queue be dropped
 * (reason "shutdown") instead of waited for: the second SIGINT. */
void pa_pipeline_abort(struct pa_pipeline *pl);

/** Free everything pa_pipeline_create() made (ports stay). */
void pa_pipeline_destroy(struct pa_pipeline *pl);

/** Sum of every lcore's counters. */
void pa_pipeline_stats_sum(const struct pa_pipeline *pl,
		struct pa_lcore_stats *sum);

/**
 * Counters of one data-path lcore (busy and idle polls, sleeps, ...).
 * @param idx       0..pa_pipeline_lcore_count() - 1
 * @param lcore_id  if not NULL, receives the lcore's EAL id
 * @return 0, or -ENOENT for an index out of range.
 */
int pa_pipeline_lcore_stats(const struct pa_pipeline *pl, unsigned int idx,
		unsigned int *lcore_id, struct pa_lcore_stats *out);

/** Whether latency histograms are kept (config pipeline.latency). */
bool pa_pipeline_latency_enabled(const struct pa_pipeline *pl);

/**
 * Latency: each forwarded packet's time in the appliance, from the TSC
 * read when its rx burst arrived (one read per burst) to the TSC read
 * when its burst was handed to a TX queue (rte_eth_tx_burst), whichever
 * lcore does that. Only packets the TX queue accepted are counted:
 * dropped packets are not. Values are TSC cycles (rte_get_tsc_hz() turns
 * them into time), in the buckets of struct pa_stats_latency; the
 * exporter can publish the buckets as a histogram with
 * pa_stats_latency_bucket_upper() as the bounds.
 *
 * Merged histogram of every lcore (control thread; the owners keep
 * writing theirs, so counts may lag by a burst). @p out is 7.8 KB.
 * @return 0, or -ENOTSUP when latency is off (@p out zeroed).
 */
int pa_pipeline_latency_sum(const struct pa_pipeline *pl,
		struct pa_stats_latency *out);

/** One lcore's latency histogram (see pa_pipeline_latency_sum()).
 * @return 0, -ENOENT for an index out of range, or -ENOTSUP. */
int pa_pipeline_lcore_latency(const struct pa_pipeline *pl, unsigned int idx,
		struct pa_stats_latency *out);

/** The RCU variable that every data-path lcore reports to. */
struct rte_rcu_qsbr *pa_pipeline_rcu(struct pa_pipeline *pl);

/** True when every ring between stages is empty. */
bool pa_pipeline_rings_empty(const struct pa_pipeline *pl);

/** Number of data-path lcores. */
unsigned int pa_pipeline_lcore_count(const struct pa_pipeline *pl);

/* ------------------------------------------------------------------ */
/* Reporting (pipeline_stats.c): one typed snapshot of the data path's
 * counters, which stats_get, the Prometheus exporter, telemetry and the
 * replay summary all render. */

/** A ring between stages, seen from its consumer lcore. */
struct pa_pipeline_ring_snapshot {
	char name[RTE_RING_NAMESIZE];
	uint64_t count;			/**< packets waiting */
	uint64_t capacity;		/**< packets it can hold */
};

/** One data-path lcore in a struct pa_pipeline_snapshot. */
struct pa_pipeline_lcore_snapshot {
	unsigned int lcore_id;		/**< EAL lcore id */
	int socket;			/**< NUMA socket */
	const char *role;		/**< "worker" (rtc) or its stages'
					 * names, "rx+tx" (static string) */
	struct pa_lcore_stats stats;	/**< its counters */
	/** its latency histogram summed up (enabled false when off) */
	struct pa_stats_latency_summary latency;
	unsigned int n_rings;		/**< rings it consumes */
	struct pa_pipeline_ring_snapshot rings[PA_PIPELINE_MAX_IN];
};

/**
 * The data path's counters at one moment: totals, ports, lcores,
 * latency and the counters of the tables the stages use. Counters count
 * since start. Filled by pa_pipeline_snapshot(), released by
 * pa_pipeline_snapshot_free(); control thread.
 */
struct pa_pipeline_snapshot {
	const char *mode;		/**< "rtc" or "pipeline" (static) */
	uint64_t tsc_hz;		/**< TSC cycles per second */
	uint16_t burst;			/**< burst size */
	struct pa_lcore_stats sum;	/**< every lcore's counters summed */
	uint64_t mbufs_in_use;		/**< taken from all pools */
	/** every lcore's latency histograms merged, summed up */
	struct pa_stats_latency_summary latency;
	unsigned int n_ports;
	struct pa_port_snapshot ports[PA_CONFIG_MAX_PORTS];
	unsigned int n_lcores;
	/** [n_lcores], in pa_pipeline_lcore_stats() order (owned) */
	struct pa_pipeline_lcore_snapshot *lcores;
	bool has_acl;			/**< the classify stage has an ACL */
	struct pa_acl_snapshot acl;	/**< its totals (no per-rule counters) */
	bool has_lb;			/**< the lb stage has a load balancer */
	struct pa_lb_snapshot lb;	/**< its totals (no services) */
	bool has_neigh;			/**< the neighbour subsystem is set */
	struct pa_neigh_snapshot neigh;	/**< its counters, with the lcores'
					 * tx_sent / tx_dropped */
	bool has_excp;			/**< a kernel_if exists */
	struct pa_excp_snapshot excp;	/**< the exception path's counters */
	bool has_blocklist;		/**< the classify stage has one */
	struct pa_blocklist_info blocklist; /**< its size and hits */
};

/**
 * Fill @p s from the running data path and the tables set on it.
 * @return 0, or -ENOMEM (@p s then holds nothing to free).
 */
int pa_pipeline_snapshot(const struct pa_pipeline *pl,
		struct pa_pipeline_snapshot *s);

/** Free what a snapshot holds; NULL ignored. */
void pa_pipeline_snapshot_free(struct pa_pipeline_snapshot *s);

/**
 * stats_get rendered from a snapshot: {"rx_packets", "tx_packets",
 * "dropped_packets", "drops", "ports", "lcores", "acl", "lb", "neigh",
 * "mbufs_in_use", "latency", "blocklist"}.
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_pipeline_snapshot_json(const struct pa_pipeline_snapshot *s);

/** The "ports" object of stats_get: {"name": {"port_id", "driver",
 * "socket", "link", "speed_mbps", "rx_packets", "tx_packets", "rx_bytes",
 * "tx_bytes", "rx_missed", "rx_errors", "tx_errors", "rx_nombuf",
 * "rx_queues", "tx_queues", "rx_desc", "tx_desc", "mbufs_in_use",
 * "pool_size"}}. @return new reference, or NULL. */
json_t *pa_pipeline_ports_json(const struct pa_pipeline_snapshot *s);

/** One lcore of the "lcores" object of stats_get: {"rx_packets",
 * "tx_packets", "dropped_packets", "stage_packets", "drops",
 * "busy_polls", "idle_polls", "busy_cycles", "sleeps", "sleep_cycles",
 * "latency"}. @return new reference, or NULL. */
json_t *pa_pipeline_lcore_json(const struct pa_pipeline_lcore_snapshot *l);

/** The "lcores" object of stats_get: each lcore by its id.
 * @return new reference, or NULL. */
json_t *pa_pipeline_lcores_json(const struct pa_pipeline_snapshot *s);

/**
 * stats_get result: pa_pipeline_snapshot() rendered by
 * pa_pipeline_snapshot_json().
 */
json_t *pa_pipeline_stats_json(const struct pa_pipeline *pl);

/** pipeline_get result: mode, burst, ring size, lcores with their
 * stages, socket, CPU set, queues and input ring fill levels. */
json_t *pa_pipeline_describe_json(const struct pa_pipeline *pl);

/* stats_get, pipeline_get and trace_packet are the RPC subsystem
 * "pipeline": bind the pipeline with pa_rpc_bind("pipeline", pl).
 * trace_packet takes the ACL and the LB from the pipeline
 * (pa_pipeline_set_acl(), pa_pipeline_set_lb()). */

extern int pa_pipeline_logtype;

#endif /* PA_PIPELINE_H */
