/* SPDX-License-Identifier: BSD-3-Clause */
/* Lab replay: input scan, the summary line and its table for people
 * (the drops file is a capture sink: lib/capture). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "pa_err.h"
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
		pa_seterr(err, err_len, "--replay %s: %s", path, ebuf);
		return -EINVAL;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		pa_seterr(err, err_len,
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

/* The summary repeats stats_get's counters: it renders the same
 * snapshot (lb and neigh are the pipeline's own), with the packets the
 * ports lost on receive counted in. */
json_t *
replay_summary(const struct pa_pipeline *pl, const struct pa_port_set *ps,
		struct pa_lb *lb, struct pa_neigh *neigh, unsigned int mbufs_in_use,
		double seconds)
{
	struct pa_pipeline_snapshot s;
	uint64_t lost = replay_port_losses(ps);
	json_t *o;

	if (pa_pipeline_snapshot(pl, &s) != 0)
		return NULL;
	s.sum.rx_packets += lost;
	s.sum.drops[PA_DROP_RX_ERROR] += lost;
	o = json_pack("{s:I, s:I, s:I, s:o?, s:i, s:f, s:i, s:o*, s:o*, s:o?}",
		"rx_packets", (json_int_t)s.sum.rx_packets,
		"tx_packets", (json_int_t)s.sum.tx_packets,
		"dropped_packets", (json_int_t)pa_stats_total_drops(&s.sum),
		"drops", pa_stats_drops_json(&s.sum),
		"mbufs_in_use", (int)mbufs_in_use,
		"duration_s", seconds,
		"lcores", (int)s.n_lcores,
		"lb", pa_lb_active(lb) && s.has_lb ?
			pa_lb_snapshot_json(&s.lb) : NULL,
		"neigh", neigh != NULL && s.has_neigh ?
			pa_neigh_snapshot_json(&s.neigh) : NULL,
		"icmp_errors", pa_stats_icmp_errors_json(&s.sum));
	pa_pipeline_snapshot_free(&s);
	return o;
}

static double
num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

/* Full NAT (lb.fnat, with a pool): its flows, the replies translated
 * back, and each pool address's ports in use. */
static void
replay_fnat_table(FILE *f, const json_t *fn)
{
	const json_t *pool = json_object_get(fn, "pool"), *a;
	size_t i;

	if (!json_is_object(fn))
		return;
	fprintf(f, "  %-20s %12.0f  (replies %.0f, active %.0f)\n",
		"lb fnat flows", num(fn, "flows_created"), num(fn, "replies"),
		num(fn, "flows"));
	json_array_foreach(pool, i, a) {
		const json_t *addr = json_object_get(a, "addr");
		double ports = num(a, "ports");

		fprintf(f, "    %-18s %12.0f  %5.1f%% of %.0f ports\n",
			json_is_string(addr) ? json_string_value(addr) : "?",
			num(a, "in_use"),
			ports > 0 ? num(a, "in_use") / ports * 100 : 0, ports);
	}
}

void
replay_summary_table(FILE *f, const json_t *s)
{
	const json_t *drops = json_object_get(s, "drops");
	const json_t *lb = json_object_get(s, "lb"), *v;
	double rx = num(s, "rx_packets"), secs = num(s, "duration_s");
	const char *reason;

	fprintf(f, "replay summary: %.0f packets in %.3f s\n", rx, secs);
	fprintf(f, "  %-20s %12.0f\n", "rx_packets", rx);
	fprintf(f, "  %-20s %12.0f  %5.1f%%\n", "tx_packets",
		num(s, "tx_packets"), rx > 0 ? num(s, "tx_packets") / rx * 100 : 0);
	fprintf(f, "  %-20s %12.0f  %5.1f%%\n", "dropped_packets",
		num(s, "dropped_packets"),
		rx > 0 ? num(s, "dropped_packets") / rx * 100 : 0);
	json_object_foreach((json_t *)drops, reason, v)
		if (json_is_number(v) && json_number_value(v) > 0)
			fprintf(f, "    %-18s %12.0f  %5.1f%%\n", reason,
				json_number_value(v),
				rx > 0 ? json_number_value(v) / rx * 100 : 0);
	if (json_is_object(lb))
		fprintf(f, "  %-20s %12.0f  (services %.0f, backends %.0f, flows %.0f)\n",
			"lb balanced", num(lb, "balanced"), num(lb, "services"),
			num(lb, "backends"), num(lb, "flows_created"));
	replay_fnat_table(f, json_object_get(lb, "fnat"));
	fprintf(f, "  %-20s %12.0f\n", "mbufs_in_use", num(s, "mbufs_in_use"));
	fflush(f);
}
