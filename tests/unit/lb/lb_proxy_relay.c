/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb_proxy_relay: lib/lb's PROXY module between two real TCP stacks.
 *
 *   lb_proxy_relay CLIENT_TUN BACKEND_TUN v1|v2 LOSS_PERMILLE SEED FORCED
 *
 * Opens two TUN devices (IPv4, no packet information) and relays between
 * them: what comes in on CLIENT_TUN goes through lb_proxy_to_backend()
 * (the header built by lb_proxy_build() from the segment's own addresses
 * when asked) and out on BACKEND_TUN; what comes back goes through
 * lb_proxy_to_client(). One state per client port. Addresses are not
 * rewritten: the client reaches the backend's own address, so the module
 * is what the two stacks see between them.
 *
 * Loss: after the module, each packet is dropped with probability
 * LOSS_PERMILLE / 1000 (xorshift from SEED), and the first FORCED
 * segments of each connection that carry the header are always dropped,
 * so that it has to ride again: on the client's answer to the backend's
 * SYN-ACK retransmission, on the first data segment, on its
 * retransmission.
 *
 * Prints "ready" on stdout once both devices exist (the caller then
 * moves them into namespaces and configures them); on SIGTERM or SIGINT
 * prints one JSON line of counters and exits 0. For
 * tests/integration/test_lb_proxy_relay.py. No EAL: the mbuf is one
 * built by hand around a static buffer.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <sys/ioctl.h>

#include <rte_mbuf.h>

#include "lb_proxy.h"

#define FLOWS		256
#define FRAME_MAX	4096

struct flow {
	uint16_t cport;			/* network order; 0: free */
	unsigned int forced;		/* header-carrying segments dropped */
	struct lb_proxy_state ps;
};

static struct flow flows[FLOWS];
static volatile sig_atomic_t quit;
static uint64_t rnd_state;
static enum pa_lb_proxy version;
static unsigned int loss, forced;

static struct {
	unsigned long to_backend, to_client, inserted, need_hdr, refused,
		write_errors, lost, forced, not_tcp;
} st;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static int
tun_open(const char *name)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR);

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool
lose(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (rnd_state >> 20) % 1000 < loss;
}

/* The flow of client port @p cport (network order), made when @p make. */
static struct flow *
flow_of(uint16_t cport, bool make)
{
	struct flow *free_slot = NULL;
	unsigned int i;

	for (i = 0; i < FLOWS; i++) {
		if (flows[i].cport == cport)
			return &flows[i];
		if (flows[i].cport == 0 && free_slot == NULL)
			free_slot = &flows[i];
	}
	if (!make || free_slot == NULL)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->cport = cport;
	return free_slot;
}

/* One packet of @p n bytes in @p m's buffer, from the client (@p to_backend)
 * or the backend. @return whether to send it on. */
static bool
relay(struct rte_mbuf *m, bool to_backend)
{
	uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *), hdr[LB_PROXY_MAX];
	struct pa_pkt_meta meta;
	struct flow *f;
	uint16_t cport, dport;
	uint32_t before;
	unsigned int hlen;
	int rc;

	if (m->data_len < 40 || (ip[0] >> 4) != 4 || ip[9] != IPPROTO_TCP ||
	    (ip[6] & 0x3f) != 0 || ip[7] != 0) {
		st.not_tcp++;
		return true;
	}
	memset(&meta, 0, sizeof(meta));
	meta.flags = PA_PKT_F_IPV4 | PA_PKT_F_L4;
	meta.l3_off = 0;
	meta.l4_off = (uint16_t)((ip[0] & 0xf) * 4);
	meta.l4_proto = IPPROTO_TCP;
	memcpy(&cport, ip + meta.l4_off + (to_backend ? 0 : 2), 2);
	memcpy(&dport, ip + meta.l4_off + 2, 2);
	f = flow_of(cport, to_backend);
	if (f == NULL)
		return true;
	if (!to_backend) {
		st.to_client++;
		lb_proxy_to_client(&f->ps, m, &meta);
		return !lose();
	}
	st.to_backend++;
	before = m->pkt_len;
	rc = lb_proxy_to_backend(&f->ps, m, &meta, NULL, 0, 1500);
	if (rc == LB_PROXY_NEED_HDR) {
		st.need_hdr++;
		hlen = lb_proxy_build(hdr, version, 4, ip + 12, ip + 16,
			cport, dport);
		rc = lb_proxy_to_backend(&f->ps, m, &meta, hdr, hlen, 1500);
	}
	if (rc != 0) {
		st.refused++;
		fprintf(stderr, "refused: %s (%u bytes)\n", strerror(-rc),
			m->pkt_len);
		return false;
	}
	if (m->pkt_len != before) {
		st.inserted++;
		if (f->forced < forced) {
			f->forced++;
			st.forced++;
			return false;
		}
	}
	return !lose();
}

int
main(int argc, char **argv)
{
	static uint8_t buf[RTE_PKTMBUF_HEADROOM + FRAME_MAX];
	struct rte_mbuf m;
	struct pollfd pfd[2];
	struct sigaction sa;
	unsigned int i;
	ssize_t n;
	int fd[2];

	if (argc != 7 || (strcmp(argv[3], "v1") != 0 &&
	    strcmp(argv[3], "v2") != 0)) {
		fprintf(stderr, "usage: %s CLIENT_TUN BACKEND_TUN v1|v2 "
			"LOSS_PERMILLE SEED FORCED\n", argv[0]);
		return 2;
	}
	version = argv[3][1] == '1' ? PA_LB_PROXY_V1 : PA_LB_PROXY_V2;
	loss = (unsigned int)strtoul(argv[4], NULL, 10);
	rnd_state = strtoull(argv[5], NULL, 10) | 1;
	forced = (unsigned int)strtoul(argv[6], NULL, 10);
	for (i = 0; i < 2; i++) {
		fd[i] = tun_open(argv[1 + i]);
		if (fd[i] < 0) {
			fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1 + i],
				strerror(errno));
			return 1;
		}
		pfd[i].fd = fd[i];
		pfd[i].events = POLLIN;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);

	while (!quit) {
		if (poll(pfd, 2, 200) <= 0)
			continue;
		for (i = 0; i < 2; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			memset(&m, 0, sizeof(m));
			m.buf_addr = buf;
			m.buf_len = sizeof(buf);
			m.data_off = RTE_PKTMBUF_HEADROOM;
			m.nb_segs = 1;
			rte_mbuf_refcnt_set(&m, 1);
			n = read(fd[i], buf + RTE_PKTMBUF_HEADROOM, FRAME_MAX);
			if (n <= 0)
				continue;
			m.data_len = (uint16_t)n;
			m.pkt_len = (uint32_t)n;
			if (!relay(&m, i == 0)) {
				st.lost++;
				continue;
			}
			if (write(fd[1 - i], rte_pktmbuf_mtod(&m, void *),
				  m.data_len) < 0)
				st.write_errors++;
		}
	}
	printf("{\"to_backend\": %lu, \"to_client\": %lu, \"inserted\": %lu, "
		"\"need_hdr\": %lu, \"refused\": %lu, \"write_errors\": %lu, "
		"\"lost\": %lu, \"forced\": %lu, \"not_tcp\": %lu}\n",
		st.to_backend, st.to_client, st.inserted, st.need_hdr,
		st.refused, st.write_errors, st.lost, st.forced, st.not_tcp);
	return 0;
}
