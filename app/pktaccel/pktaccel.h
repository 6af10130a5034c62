/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lab replay mode (replay.c): the input file's scan, the losses of the
 * replay port, the summary line and its table for people.
 */
#ifndef PKTACCEL_H
#define PKTACCEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ring.h>

#include <jansson.h>

#include "pa_pipeline.h"
#include "pa_port.h"

/** What a pcap file holds, learned before the replay starts. */
struct replay_input {
	uint64_t packets;		/**< records in the file */
	uint32_t max_caplen;		/**< longest record */
};

/**
 * Count the records of an Ethernet pcap file.
 * @return 0, or -errno with a one-line reason in @p err.
 */
int replay_scan(const char *path, struct replay_input *in, char *err,
		size_t err_len);

/**
 * Packets the PMD lost on receive (rx errors, no buffer) on the replay
 * port: counted as drops with reason rx_error so that every record of the
 * input is accounted for.
 */
uint64_t replay_port_losses(const struct pa_port_set *ps);

struct pa_lb;
struct pa_neigh;

/**
 * The replay summary: {"rx_packets","tx_packets","dropped_packets",
 * "drops":{...},"mbufs_in_use", ..., "lb":{...}, "neigh":{...}}; "lb"
 * (the load balancer's counters, as in stats_get) only when services
 * exist; "neigh" (as in stats_get) when @p neigh is given.
 */
json_t *replay_summary(const struct pa_pipeline *pl,
		const struct pa_port_set *ps, struct pa_lb *lb,
		struct pa_neigh *neigh, unsigned int mbufs_in_use,
		double seconds);

/**
 * The replay summary for people: a small table of @p summary (the
 * totals with their shares, the drop reasons that counted, the load
 * balancer's work, mbufs in use) on @p f. The JSON line stays the
 * machine's; this is printed before it.
 */
void replay_summary_table(FILE *f, const json_t *summary);

#endif /* PKTACCEL_H */
