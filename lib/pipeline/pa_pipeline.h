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
 * stays on one lcore at every stage and keeps its order. In "rtc" mode
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
 * Counters are per lcore (struct pa_lcore_stats) and summed on read.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include <jansson.h>

#include "pa_capture.h"
#include "pa_config.h"
#include "pa_port.h"
#include "pa_stats.h"

#define PA_PIPELINE_MAX_LCORES	64	/**< data-path lcores */
#define PA_PIPELINE_MAX_STAGE	16	/**< lcores per stage */
#define PA_PIPELINE_MAX_RXQ	64	/**< (port, queue) pairs per lcore */

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
 * rtc mode uses every chosen lcore as a worker; pipeline mode needs four
 * and gives extra lcores to classify, lb, rx and tx in turn.
 *
 * @param avail    available lcores (main lcore excluded)
 * @param port_sockets  socket of each port
 * @return 0, or -EINVAL / -ENODEV with the reason in @p err.
 */
int pa_plan_make(const struct pa_config_pipeline *pc,
		const struct pa_plan_lcore *avail, unsigned int n_avail,
		const int *port_sockets, unsigned int n_ports,
		struct pa_plan *plan, char *err, size_t err_len);

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

struct pa_acl;

/** Give the classify stage its ACL (before pa_pipeline_start()). */
void pa_pipeline_set_acl(struct pa_pipeline *pl, struct pa_acl *acl);

struct pa_lb;

/** Give the lb stage its load balancer (before pa_pipeline_start()). */
void pa_pipeline_set_lb(struct pa_pipeline *pl, struct pa_lb *lb);

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

/** The RCU variable that every data-path lcore reports to. */
struct rte_rcu_qsbr *pa_pipeline_rcu(struct pa_pipeline *pl);

/** True when every ring between stages is empty. */
bool pa_pipeline_rings_empty(const struct pa_pipeline *pl);

/** Number of data-path lcores. */
unsigned int pa_pipeline_lcore_count(const struct pa_pipeline *pl);

/**
 * stats_get result: {"rx_packets", "tx_packets", "dropped_packets",
 * "drops", "ports", "lcores", "acl", "lb"}.
 */
json_t *pa_pipeline_stats_json(const struct pa_pipeline *pl);

/** pipeline_get result: mode, burst, ring size, lcores with their
 * stages, socket, CPU set, queues and input ring fill levels. */
json_t *pa_pipeline_describe_json(const struct pa_pipeline *pl);

/** Make @p pl the pipeline that stats_get / pipeline_get report (NULL to
 * detach). Called by the daemon. */
void pa_pipeline_rpc_set(struct pa_pipeline *pl);

extern int pa_pipeline_logtype;

#endif /* PA_PIPELINE_H */
