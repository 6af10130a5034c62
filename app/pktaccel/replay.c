/* SPDX-License-Identifier: BSD-3-Clause */
/* Lab replay: input scan, the drops file and the summary line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <pcap/pcap.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "pa_lb.h"
#include "pa_neigh.h"
#include "pktaccel.h"

int
replay_scan(const char *path, struct replay_input *in, char *err,
		size_t err_len)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p;
	int ret;

	memset(in, 0, sizeof(*in));
	p = pcap_open_offline(path, ebuf);
	if (p == NULL) {
		snprintf(err, err_len, "--replay %s: %s", path, ebuf);
		return -EINVAL;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		snprintf(err, err_len,
			"--replay %s: link type %s is not supported (Ethernet only)",
			path, pcap_datalink_val_to_name(pcap_datalink(p)) != NULL ?
			pcap_datalink_val_to_name(pcap_datalink(p)) : "unknown");
		pcap_close(p);
		return -ENOTSUP;
	}
	while ((ret = pcap_next_ex(p, &h, &data)) == 1) {
		in->packets++;
		if (h->caplen > in->max_caplen)
			in->max_caplen = h->caplen;
	}
	pcap_close(p);
	/* A damaged tail ends the file for net_pcap too; what was read is
	 * what will be replayed. */
	return 0;
}

struct replay_drops {
	pcap_t *pcap;
	pcap_dumper_t *dumper;
	uint8_t buf[UINT16_MAX + 1];
};

struct replay_drops *
replay_drops_open(const char *path, char *err, size_t err_len)
{
	struct replay_drops *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		snprintf(err, err_len, "--replay-drops: out of memory");
		return NULL;
	}
	d->pcap = pcap_open_dead(DLT_EN10MB, UINT16_MAX);
	if (d->pcap == NULL) {
		snprintf(err, err_len, "--replay-drops: cannot create a pcap handle");
		free(d);
		return NULL;
	}
	d->dumper = pcap_dump_open(d->pcap, path);
	if (d->dumper == NULL) {
		snprintf(err, err_len, "--replay-drops %s: %s", path,
			pcap_geterr(d->pcap));
		pcap_close(d->pcap);
		free(d);
		return NULL;
	}
	return d;
}

unsigned int
replay_drops_drain(struct replay_drops *d, struct rte_ring *ring)
{
	struct rte_mbuf *m;
	unsigned int n = 0;

	while (rte_ring_sc_dequeue(ring, (void **)&m) == 0) {
		if (d != NULL) {
			struct pcap_pkthdr h;
			const void *data;
			uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(m),
				(uint32_t)sizeof(d->buf));

			memset(&h, 0, sizeof(h));
			gettimeofday(&h.ts, NULL);
			h.caplen = len;
			h.len = rte_pktmbuf_pkt_len(m);
			data = rte_pktmbuf_read(m, 0, len, d->buf);
			if (data != NULL)
				pcap_dump((u_char *)d->dumper, &h, data);
		}
		rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

void
replay_drops_close(struct replay_drops *d)
{
	if (d == NULL)
		return;
	pcap_dump_close(d->dumper);
	pcap_close(d->pcap);
	free(d);
}

uint64_t
replay_port_losses(const struct pa_port_set *ps)
{
	struct rte_eth_stats st;
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < ps->n; i++) {
		if (ps->port[i].port_id == UINT16_MAX ||
		    rte_eth_stats_get(ps->port[i].port_id, &st) != 0)
			continue;
		n += st.ierrors + st.rx_nombuf;
	}
	return n;
}

json_t *
replay_summary(const struct pa_pipeline *pl, const struct pa_port_set *ps,
		struct pa_lb *lb, struct pa_neigh *neigh, unsigned int mbufs_in_use,
		double seconds)
{
	struct pa_lcore_stats sum;
	uint64_t lost = replay_port_losses(ps);
	json_t *drops;

	pa_pipeline_stats_sum(pl, &sum);
	sum.rx_packets += lost;
	sum.drops[PA_DROP_RX_ERROR] += lost;
	drops = pa_stats_drops_json(&sum);
	return json_pack("{s:I, s:I, s:I, s:o?, s:i, s:f, s:i, s:o*, s:o*}",
		"rx_packets", (json_int_t)sum.rx_packets,
		"tx_packets", (json_int_t)sum.tx_packets,
		"dropped_packets", (json_int_t)pa_stats_total_drops(&sum),
		"drops", drops,
		"mbufs_in_use", (int)mbufs_in_use,
		"duration_s", seconds,
		"lcores", (int)pa_pipeline_lcore_count(pl),
		"lb", pa_lb_active(lb) ? pa_lb_stats_json(lb) : NULL,
		"neigh", neigh != NULL ? pa_neigh_stats_json(neigh, &sum) :
			NULL);
}
