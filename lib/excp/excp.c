/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exception path's control side: the TAP of each kernel_if (a net_tap
 * ethdev), its addresses (rtnetlink), the punt rings, and the poll that
 * moves frames between the rings, the TAPs and lib/neigh's TX rings.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <rte_dev.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "pa_err.h"
#include "pa_excp.h"
#include "pa_neigh.h"

RTE_LOG_REGISTER(pa_excp_logtype, pa.excp, INFO);
#define EXCP_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_excp_logtype, "pa.excp: " fmt "\n", \
		##__VA_ARGS__)

#define EXCP_BURST		32
#define EXCP_POLL_ROUNDS	4	/* bursts per direction and poll */
#define EXCP_POOL_CACHE		0	/* control thread and TX lcores share it */

struct excp_if {
	char ifname[PA_CONFIG_IFNAME_MAX];
	char port_name[PA_CONFIG_NAME_MAX];
	char vdev[32];
	uint16_t port_index;
	uint16_t tap_id;		/* the TAP's ethdev id */
	bool probed, started;
	int fd;				/* readable: the kernel sent a frame; -1 */
	struct rte_ether_addr mac;
	struct rte_ring *ring;		/* wire -> kernel (MP/SC) */
	struct rte_ring *tx;		/* kernel -> wire: lib/neigh's TX ring */
	uint64_t to_kernel, to_kernel_dropped;
	uint64_t from_kernel, from_kernel_dropped, from_kernel_foreign;
	uint64_t from_kernel_held;	/* polls that left the kernel's frames in
					 * the TAP's queue: TX ring full */
	uint32_t rate_pps, burst;
};

/* One sysctl of an af_packet port's interface, as it was before. */
struct excp_sysctl {
	char path[96];
	char old[24];
};

#define EXCP_QUIET_PER_IF	3
#define EXCP_SYSCTL_ROOT	"/proc/sys/net/"

struct pa_excp {
	struct pa_excp_fast fast;
	unsigned int n;
	struct excp_if ifs[PA_CONFIG_MAX_PORTS];
	/* af_packet ports' interfaces made quiet (excp_quiet()), in the
	 * order they were set: restored in reverse at close */
	unsigned int n_quiet;
	struct excp_sysctl quiet[PA_CONFIG_MAX_PORTS * EXCP_QUIET_PER_IF];
	struct rte_mempool *pool;	/* what the TAPs receive into */
	unsigned int n_lcores;
	/* the thread (pa_excp_start()) */
	bool started;
	bool stop;			/* atomic: the thread ends */
	int wake_fd;			/* eventfd: wakes it to stop */
	pthread_t tid;
};

unsigned int
pa_excp_count(const struct pa_config *cfg)
{
	unsigned int i, n = 0;

	for (i = 0; i < cfg->n_ports; i++)
		if (cfg->ports[i].kernel_if[0] != '\0')
			n++;
	return n;
}

const struct pa_excp_fast *
pa_excp_fast(const struct pa_excp *x)
{
	return x != NULL ? &x->fast : NULL;
}

/* ---- rtnetlink: one address on an interface ---- */

struct nl_req {
	struct nlmsghdr nh;
	struct ifaddrmsg ifa;
	char attrs[64];
};

static void
nl_attr(struct nl_req *r, unsigned short type, const void *data,
		unsigned short len)
{
	struct rtattr *rta = (struct rtattr *)((char *)r +
		NLMSG_ALIGN(r->nh.nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/* Send one request and read its acknowledgement. @return 0 or -errno. */
static int
nl_talk(const struct nlmsghdr *req)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr err;
	} ack;
	ssize_t got;
	int fd, ret;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (sendto(fd, req, req->nlmsg_len, 0, (struct sockaddr *)&sa,
	    sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}
	got = recv(fd, &ack, sizeof(ack), 0);
	if (got < 0)
		ret = -errno;
	else if ((size_t)got < sizeof(ack) || ack.nh.nlmsg_type != NLMSG_ERROR)
		ret = -EPROTO;
	else
		ret = ack.err.error;	/* 0 or -errno */
out:
	close(fd);
	return ret;
}

/*
 * No address of the kernel's own making on interface @p ifindex: IPv6
 * addr_gen_mode "none" (IFLA_INET6_ADDR_GEN_MODE), so that its only
 * link-local is the one the appliance gives it (pa_port.ll6), without
 * duplicate address detection, from the moment it is up.
 * @return 0 or -errno (-EAFNOSUPPORT, -EACCES: no IPv6 on it).
 */
static int
nl_addr_gen_none(int ifindex)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[64];
	} r;
	struct rtattr *spec, *in6, *mode;

	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	r.nh.nlmsg_type = RTM_SETLINK;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r.nh.nlmsg_seq = 1;
	r.ifi.ifi_family = AF_UNSPEC;
	r.ifi.ifi_index = ifindex;
	spec = (struct rtattr *)((char *)&r + NLMSG_ALIGN(r.nh.nlmsg_len));
	spec->rta_type = IFLA_AF_SPEC | NLA_F_NESTED;
	in6 = (struct rtattr *)RTA_DATA(spec);
	in6->rta_type = AF_INET6 | NLA_F_NESTED;
	mode = (struct rtattr *)RTA_DATA(in6);
	mode->rta_type = IFLA_INET6_ADDR_GEN_MODE;
	mode->rta_len = RTA_LENGTH(1);
	*(uint8_t *)RTA_DATA(mode) = IN6_ADDR_GEN_MODE_NONE;
	in6->rta_len = (unsigned short)RTA_LENGTH(RTA_ALIGN(mode->rta_len));
	spec->rta_len = (unsigned short)RTA_LENGTH(RTA_ALIGN(in6->rta_len));
	r.nh.nlmsg_len = NLMSG_ALIGN(r.nh.nlmsg_len) + RTA_ALIGN(spec->rta_len);
	return nl_talk(&r.nh);
}

/* Add @p p (address and prefix length) to interface @p ifindex; IPv6
 * without duplicate address detection (lib/neigh defends the address).
 * @return 0 or -errno. */
static int
nl_addr_add(int ifindex, const struct pa_ip_prefix *p)
{
	uint32_t flags = IFA_F_NODAD | IFA_F_PERMANENT;
	struct nl_req r;
	unsigned short alen;

	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg));
	r.nh.nlmsg_type = RTM_NEWADDR;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE |
		NLM_F_EXCL;
	r.nh.nlmsg_seq = 1;
	r.ifa.ifa_family = p->addr.family;
	r.ifa.ifa_prefixlen = p->len;
	r.ifa.ifa_scope = RT_SCOPE_UNIVERSE;
	r.ifa.ifa_index = (unsigned int)ifindex;
	alen = p->addr.family == AF_INET ? 4 : 16;
	nl_attr(&r, IFA_LOCAL, &p->addr.v6, alen);	/* v4 and v6 share it */
	nl_attr(&r, IFA_ADDRESS, &p->addr.v6, alen);
	if (p->addr.family == AF_INET6)
		nl_attr(&r, IFA_FLAGS, &flags, sizeof(flags));
	return nl_talk(&r.nh);
}

/* ---- create ---- */

static int
if_fail(const struct excp_if *e, char *err, size_t err_len, const char *what,
		int ret)
{
	pa_seterr(err, err_len, "port %s: kernel_if '%s': %s: %s", e->port_name,
		e->ifname, what, strerror(ret < 0 ? -ret : ret));
	return ret < 0 ? ret : -ret;
}

static int
tap_create(struct pa_excp *x, struct excp_if *e, const struct pa_port *pp,
		const struct pa_config_port *cp, int socket, char *err,
		size_t err_len)
{
	struct rte_eth_conf conf;
	char args[128], why[64];
	const uint8_t *m = e->mac.addr_bytes;
	unsigned int i;
	int ret, ifindex;
	bool ll_ok;

	if (if_nametoindex(e->ifname) != 0) {
		pa_seterr(err, err_len,
			"port %s: kernel_if '%s': an interface of that name already exists",
			e->port_name, e->ifname);
		return -EEXIST;
	}
	snprintf(e->vdev, sizeof(e->vdev), "net_tap_excp%u", e->port_index);
	ret = snprintf(args, sizeof(args),
		"%s,iface=%s,mac=%02x:%02x:%02x:%02x:%02x:%02x", e->vdev,
		e->ifname, m[0], m[1], m[2], m[3], m[4], m[5]);
	if (ret < 0 || (size_t)ret >= sizeof(args))
		return if_fail(e, err, err_len, "devargs", -ENAMETOOLONG);
	ret = rte_dev_probe(args);
	if (ret != 0)
		return if_fail(e, err, err_len,
			"cannot create the TAP (net_tap)",
			ret < 0 ? ret : -EIO);
	e->probed = true;
	ret = rte_eth_dev_get_port_by_name(e->vdev, &e->tap_id);
	if (ret != 0)
		return if_fail(e, err, err_len, "no TAP ethdev", ret);

	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = 1;
	ret = rte_eth_dev_configure(e->tap_id, 1, 1, &conf);
	if (ret != 0) {
		/* no rx interrupt: the control thread's short poll still
		 * picks the frames up */
		conf.intr_conf.rxq = 0;
		ret = rte_eth_dev_configure(e->tap_id, 1, 1, &conf);
	}
	if (ret != 0)
		return if_fail(e, err, err_len, "configure", ret);
	ret = rte_eth_rx_queue_setup(e->tap_id, 0, PA_EXCP_TAP_DESC, socket,
		NULL, x->pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(e->tap_id, 0, PA_EXCP_TAP_DESC,
			socket, NULL);
	if (ret != 0)
		return if_fail(e, err, err_len, "queue setup", ret);
	if (pp->mtu != 0) {
		ret = rte_eth_dev_set_mtu(e->tap_id, pp->mtu);
		if (ret != 0)
			return if_fail(e, err, err_len, "MTU", ret);
	}
	ret = rte_eth_dev_start(e->tap_id);
	if (ret != 0)
		return if_fail(e, err, err_len, "start", ret);
	e->started = true;
	ifindex = (int)if_nametoindex(e->ifname);
	if (ifindex == 0)
		return if_fail(e, err, err_len, "interface not found", -ENODEV);
	/* net_tap brings the link up at start, and the kernel makes its own
	 * link-local then (with DAD): down, no addresses of its own, up
	 * again; going down removed what it made */
	ll_ok = false;
	if (pp->has_ll6) {
		(void)rte_eth_dev_set_link_down(e->tap_id);
		ret = nl_addr_gen_none(ifindex);
		if (ret == 0)
			ll_ok = true;
		else
			EXCP_LOG(WARNING, "port %s: kernel_if %s: no IPv6 link-local (addr_gen_mode: %s)",
				e->port_name, e->ifname, strerror(-ret));
	}
	ret = rte_eth_dev_set_link_up(e->tap_id);
	if (ret != 0 && ret != -ENOTSUP)
		return if_fail(e, err, err_len, "up", ret);
	e->fd = -1;
	if (conf.intr_conf.rxq) {
		e->fd = rte_eth_dev_rx_intr_ctl_q_get_fd(e->tap_id, 0);
		if (e->fd < 0)
			e->fd = -1;
	}
	for (i = 0; i < cp->n_addrs; i++) {
		ret = nl_addr_add(ifindex, &cp->addrs[i]);
		if (ret != 0) {
			pa_seterr(why, sizeof(why), "address %s",
				pa_net_format_prefix(&cp->addrs[i], args,
					sizeof(args)));
			return if_fail(e, err, err_len, why, ret);
		}
	}
	if (ll_ok) {
		struct pa_ip_prefix ll = { .len = 64 };

		ll.addr.family = AF_INET6;
		memcpy(&ll.addr.v6, pp->ll6, 16);
		ret = nl_addr_add(ifindex, &ll);
		if (ret != 0)
			EXCP_LOG(WARNING, "port %s: kernel_if %s: IPv6 link-local %s: %s",
				e->port_name, e->ifname,
				pa_net_format_prefix(&ll, args, sizeof(args)),
				strerror(-ret));
	}
	EXCP_LOG(INFO, "port %s: kernel_if %s (ethdev %u, mtu %u, %u address(es), %s)",
		e->port_name, e->ifname, e->tap_id, pp->mtu, cp->n_addrs,
		e->fd >= 0 ? "rx interrupt" : "polled");
	return 0;
}

static int
excp_rings(struct pa_excp *x, struct excp_if *e, struct pa_neigh *neigh,
		int socket, char *err, size_t err_len)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "pa_excp_%u", e->port_index);
	e->ring = rte_ring_create(name, PA_EXCP_RING, socket, RING_F_SC_DEQ);
	if (e->ring == NULL)
		return if_fail(e, err, err_len, "punt ring", -rte_errno);
	e->tx = pa_neigh_tx_ring(neigh, e->port_index);
	if (e->tx == NULL)
		return if_fail(e, err, err_len, "no TX ring for the port",
			-ENOENT);
	x->fast.ring[e->port_index] = e->ring;
	x->fast.ports |= 1u << e->port_index;
	return 0;
}

/* ---- the kernel's own stack on af_packet ports' interfaces ---- */

/* The interface a net_af_packet port's devargs name ("iface=NAME"), in
 * @p name; false for every other port. */
static bool
af_packet_iface(const struct pa_config_port *cp, char *name, size_t len)
{
	const char *d = cp->devargs, *k, *end;
	size_t n;

	if (d == NULL || strncmp(d, "net_af_packet", 13) != 0)
		return false;
	for (k = strchr(d, ','); k != NULL; k = strchr(k + 1, ',')) {
		if (strncmp(k + 1, "iface=", 6) != 0)
			continue;
		k += 7;
		end = strchr(k, ',');
		n = end != NULL ? (size_t)(end - k) : strlen(k);
		/* a name that could leave its directory is nobody's */
		if (n == 0 || n >= len || n >= IF_NAMESIZE ||
		    memchr(k, '/', n) != NULL || (k[0] == '.' &&
		    (n == 1 || (n == 2 && k[1] == '.'))))
			return false;
		memcpy(name, k, n);
		name[n] = '\0';
		return true;
	}
	return false;
}

static int
sysctl_read(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (f == NULL)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return n > 0 ? 0 : -EIO;
}

static int
sysctl_write(const char *path, const char *val)
{
	FILE *f = fopen(path, "we");
	int rc = 0;

	if (f == NULL)
		return -errno;
	if (fputs(val, f) < 0)
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Set sysctl net/@p key of interface @p ifname (in the daemon's network
 * namespace) to @p val, keeping the old value for excp_unquiet(). */
static void
quiet_one(struct pa_excp *x, const char *port, const char *ifname,
		const char *fam, const char *key, const char *val)
{
	struct excp_sysctl *q = &x->quiet[x->n_quiet];
	int rc;

	if (x->n_quiet == RTE_DIM(x->quiet))
		return;
	snprintf(q->path, sizeof(q->path), EXCP_SYSCTL_ROOT "%s/conf/%s/%s",
		fam, ifname, key);
	rc = sysctl_read(q->path, q->old, sizeof(q->old));
	if (rc == 0 && strcmp(q->old, val) == 0)
		return;
	if (rc == 0)
		rc = sysctl_write(q->path, val);
	if (rc == -ENOENT && strcmp(fam, "ipv6") == 0)
		return;		/* no IPv6 in this kernel: nothing to quiet */
	if (rc != 0) {
		EXCP_LOG(WARNING, "port %s: cannot set %s to %s (%s): the kernel may answer its frames on %s too",
			port, q->path, val, strerror(-rc), ifname);
		return;
	}
	x->n_quiet++;
}

/*
 * An af_packet port's frames also reach its interface's own stack, which
 * would answer ARP for the kernel_ifs' addresses (arp_ignore 0: any
 * local address, any interface), take the IPv4 packets to them (the weak
 * host model: a second copy beside the kernel_if's) and run IPv6 there.
 * For as long as the daemon runs that stack ignores them: arp_ignore 8
 * (no ARP answered), rp_filter 1 (nothing is routed through the
 * interface, so every IPv4 packet arriving there fails the strict
 * reverse-path check), disable_ipv6 1. Every af_packet port of the
 * appliance, not only those with a kernel_if: the kernel_ifs' addresses
 * are the namespace's, answered on any of its interfaces.
 */
static void
excp_quiet(struct pa_excp *x, const struct pa_config *cfg)
{
	char ifname[IF_NAMESIZE];
	unsigned int i;

	for (i = 0; i < cfg->n_ports; i++) {
		const struct pa_config_port *cp = &cfg->ports[i];

		if (!af_packet_iface(cp, ifname, sizeof(ifname)))
			continue;
		quiet_one(x, cp->name, ifname, "ipv4", "arp_ignore", "8");
		quiet_one(x, cp->name, ifname, "ipv4", "rp_filter", "1");
		quiet_one(x, cp->name, ifname, "ipv6", "disable_ipv6", "1");
		EXCP_LOG(INFO, "port %s: the kernel ignores the frames of %s while the appliance runs (arp_ignore 8, rp_filter 1, disable_ipv6 1)",
			cp->name, ifname);
	}
}

/* Give the interfaces back their sysctls, last set first. */
static void
excp_unquiet(struct pa_excp *x)
{
	while (x->n_quiet > 0) {
		const struct excp_sysctl *q = &x->quiet[--x->n_quiet];

		if (sysctl_write(q->path, q->old) != 0)
			EXCP_LOG(WARNING, "cannot restore %s to %s", q->path,
				q->old);
	}
}

struct pa_excp *
pa_excp_create(const struct pa_excp_opts *o, char *err, size_t err_len)
{
	unsigned int i, n_if = pa_excp_count(o->cfg), n_rx;
	struct pa_excp *x;
	struct excp_if *e;
	uint64_t hz;

	if (err_len != 0)
		err[0] = '\0';
	if (n_if == 0)
		return NULL;
	if (o->neigh == NULL || o->n_lcores == 0) {
		pa_seterr(err, err_len, "kernel_if: no neighbour subsystem or no lcores");
		return NULL;
	}
	x = rte_zmalloc_socket("pa_excp", sizeof(*x), RTE_CACHE_LINE_SIZE,
		o->socket);
	if (x == NULL) {
		pa_seterr(err, err_len, "kernel_if: out of memory");
		return NULL;
	}
	x->n_lcores = o->n_lcores;
	x->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (x->wake_fd < 0) {
		pa_seterr(err, err_len, "kernel_if: eventfd: %s",
			strerror(errno));
		rte_free(x);
		return NULL;
	}
	n_rx = RTE_MAX(o->n_rx_lcores, 1u);
	hz = rte_get_tsc_hz();
	x->fast.neigh = pa_neigh_fast(o->neigh);
	x->fast.rows = rte_zmalloc_socket("pa_excp_rows",
		sizeof(struct pa_excp_row) * o->n_lcores, RTE_CACHE_LINE_SIZE,
		o->socket);
	x->pool = rte_pktmbuf_pool_create("pa_excp_pool",
		n_if * (PA_EXCP_TAP_DESC + PA_NEIGH_TX_RING + 2 * EXCP_BURST) +
		EXCP_BURST, EXCP_POOL_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
		o->socket);
	if (x->fast.rows == NULL || x->pool == NULL) {
		pa_seterr(err, err_len, "kernel_if: cannot allocate its pool: %s",
			rte_strerror(rte_errno));
		goto fail;
	}
	/* before the TAPs have addresses that the kernel could answer for */
	excp_quiet(x, o->cfg);
	for (i = 0; i < o->cfg->n_ports && i < o->ports->n; i++) {
		const struct pa_config_port *cp = &o->cfg->ports[i];

		if (cp->kernel_if[0] == '\0')
			continue;
		e = &x->ifs[x->n++];
		e->fd = -1;
		e->port_index = (uint16_t)i;
		snprintf(e->ifname, sizeof(e->ifname), "%s", cp->kernel_if);
		snprintf(e->port_name, sizeof(e->port_name), "%s", cp->name);
		e->mac = o->ports->port[i].mac;
		/* each rx lcore gets its share of the port's rate, and the
		 * whole burst */
		e->rate_pps = cp->kernel_if_pps != 0 ? cp->kernel_if_pps :
			PA_EXCP_DEF_RATE_PPS;
		e->burst = cp->kernel_if_burst != 0 ? cp->kernel_if_burst :
			PA_EXCP_DEF_BURST;
		x->fast.interval[i] = RTE_MAX(hz * n_rx / e->rate_pps,
			UINT64_C(1));
		x->fast.tolerance[i] = (uint64_t)(e->burst - 1) *
			x->fast.interval[i];
		if (excp_rings(x, e, o->neigh, o->socket, err, err_len) != 0 ||
		    tap_create(x, e, &o->ports->port[i], cp, o->socket, err,
		    err_len) != 0)
			goto fail;
	}
	return x;
fail:
	pa_excp_close(x);
	pa_excp_destroy(x);
	return NULL;
}

/* ---- the control thread's poll ---- */

static unsigned int
to_kernel(struct excp_if *e)
{
	struct rte_mbuf *pkts[EXCP_BURST];
	unsigned int n, sent, total = 0, r;

	for (r = 0; r < EXCP_POLL_ROUNDS; r++) {
		n = rte_ring_sc_dequeue_burst(e->ring, (void **)pkts,
			EXCP_BURST, NULL);
		if (n == 0)
			break;
		sent = rte_eth_tx_burst(e->tap_id, 0, pkts, (uint16_t)n);
		if (sent < n) {
			rte_pktmbuf_free_bulk(pkts + sent, n - sent);
			e->to_kernel_dropped += n - sent;
		}
		e->to_kernel += sent;
		total += n;
	}
	return total;
}

/* The kernel's frames, as many as the port's TX ring has room for: the
 * rest wait in the TAP's own queue (the kernel's txqueuelen) rather than
 * being read and dropped while a data-path lcore is late draining the
 * ring (a burst of health probes' frames on a busy host). */
static unsigned int
from_kernel(struct excp_if *e)
{
	struct rte_mbuf *pkts[EXCP_BURST];
	unsigned int n, i, k, q, total = 0, r, room;

	for (r = 0; r < EXCP_POLL_ROUNDS; r++) {
		/* lib/neigh (the control thread) also queues on it: the
		 * room may shrink meanwhile, what then does not fit counts
		 * as from_kernel_dropped */
		room = rte_ring_free_count(e->tx);
		if (room == 0) {
			e->from_kernel_held++;
			break;
		}
		n = rte_eth_rx_burst(e->tap_id, 0, pkts,
			(uint16_t)RTE_MIN(room, (unsigned int)EXCP_BURST));
		if (n == 0)
			break;
		total += n;
		/* only the kernel's own frames leave (a TAP may be bridged) */
		for (i = 0, k = 0; i < n; i++) {
			const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(pkts[i],
				const struct rte_ether_hdr *);

			if (rte_pktmbuf_data_len(pkts[i]) >= sizeof(*eh) &&
			    rte_is_same_ether_addr(&eh->src_addr, &e->mac)) {
				pkts[k++] = pkts[i];
				continue;
			}
			rte_pktmbuf_free(pkts[i]);
			e->from_kernel_foreign++;
		}
		q = rte_ring_mp_enqueue_burst(e->tx, (void **)pkts, k, NULL);
		if (q < k) {
			rte_pktmbuf_free_bulk(pkts + q, k - q);
			e->from_kernel_dropped += k - q;
		}
		e->from_kernel += q;
	}
	return total;
}

unsigned int
pa_excp_poll(struct pa_excp *x)
{
	unsigned int i, moved = 0;

	if (x == NULL)
		return 0;
	for (i = 0; i < x->n; i++) {
		moved += to_kernel(&x->ifs[i]);
		moved += from_kernel(&x->ifs[i]);
	}
	return moved;
}

/* The TAPs' fds to wait on: not one whose frames wait for room on the TX
 * ring (its fd stays readable, the thread would spin; it polls again
 * within PA_EXCP_POLL_MS). */
static unsigned int
excp_fds(const struct pa_excp *x, struct pollfd *pfd, unsigned int max)
{
	unsigned int i, n = 0;

	for (i = 0; i < x->n && n < max; i++)
		if (x->ifs[i].fd >= 0 && rte_ring_free_count(x->ifs[i].tx) != 0)
			pfd[n++] = (struct pollfd){ .fd = x->ifs[i].fd,
				.events = POLLIN };
	return n;
}

/* The exception path's thread: the TAPs' fds and the stop eventfd in one
 * poll(), at most PA_EXCP_POLL_MS for the punt rings (the data path makes
 * no system call to wake it), not at all while frames keep coming. */
static void *
excp_main(void *arg)
{
	struct pa_excp *x = arg;
	struct pollfd pfd[1 + PA_CONFIG_MAX_PORTS];
	bool busy = false;
	unsigned int n;
	uint64_t v;

	pfd[0] = (struct pollfd){ .fd = x->wake_fd, .events = POLLIN };
	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		n = 1 + excp_fds(x, pfd + 1, RTE_DIM(pfd) - 1);
		pfd[0].revents = 0;
		(void)poll(pfd, n, busy ? 0 : PA_EXCP_POLL_MS); /* EINTR: round */
		if (pfd[0].revents != 0 &&
		    read(x->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			EXCP_LOG(WARNING, "thread: eventfd: %s",
				strerror(errno));
		busy = pa_excp_poll(x) != 0;
	}
	return NULL;
}

int
pa_excp_start(struct pa_excp *x, char *err, size_t err_len)
{
	int ret;

	if (x == NULL || x->started)
		return 0;
	__atomic_store_n(&x->stop, false, __ATOMIC_RELEASE);
	ret = rte_ctrl_thread_create(&x->tid, "pa-excp", NULL, excp_main, x);
	if (ret != 0) {
		pa_seterr(err, err_len,
			"kernel_if: cannot start the exception path's thread: %s",
			strerror(ret < 0 ? -ret : ret));
		return ret < 0 ? ret : -ret;
	}
	x->started = true;
	return 0;
}

void
pa_excp_stop(struct pa_excp *x)
{
	uint64_t one = 1;

	if (x == NULL || !x->started)
		return;
	__atomic_store_n(&x->stop, true, __ATOMIC_RELEASE);
	if (write(x->wake_fd, &one, sizeof(one)) != sizeof(one))
		EXCP_LOG(WARNING, "cannot wake the exception path's thread: %s (it sees the stop within %u ms)",
			strerror(errno), PA_EXCP_POLL_MS);
	pthread_join(x->tid, NULL);
	x->started = false;
}

/* ---- teardown ---- */

void
pa_excp_close(struct pa_excp *x)
{
	struct rte_mbuf *m;
	unsigned int i;

	if (x == NULL)
		return;
	pa_excp_stop(x);
	for (i = 0; i < x->n; i++) {
		struct excp_if *e = &x->ifs[i];

		if (e->started)
			(void)rte_eth_dev_stop(e->tap_id);
		e->started = false;
		if (e->probed) {
			struct rte_eth_dev_info info;

			if (rte_eth_dev_info_get(e->tap_id, &info) != 0)
				info.device = NULL;
			(void)rte_eth_dev_close(e->tap_id);
			if (info.device != NULL)
				(void)rte_dev_remove(info.device);
			EXCP_LOG(INFO, "port %s: kernel_if %s removed",
				e->port_name, e->ifname);
		}
		e->probed = false;
		e->fd = -1;
		if (e->ring != NULL)
			while (rte_ring_sc_dequeue(e->ring, (void **)&m) == 0)
				rte_pktmbuf_free(m);
	}
	excp_unquiet(x);
}

void
pa_excp_destroy(struct pa_excp *x)
{
	unsigned int i;

	if (x == NULL)
		return;
	pa_excp_stop(x);
	for (i = 0; i < x->n; i++)
		rte_ring_free(x->ifs[i].ring);
	if (x->wake_fd >= 0)
		close(x->wake_fd);
	rte_mempool_free(x->pool);
	rte_free(x->fast.rows);
	rte_free(x);
}

/* ---- counters ---- */

void
pa_excp_snapshot(const struct pa_excp *x, struct pa_excp_snapshot *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	if (x == NULL)
		return;
	s->n = x->n;
	for (i = 0; i < x->n_lcores; i++) {
		s->clones += x->fast.rows[i].clones;
		s->clones_skipped += x->fast.rows[i].clones_skipped;
	}
	for (i = 0; i < x->n; i++) {
		const struct excp_if *e = &x->ifs[i];
		struct pa_excp_if_snapshot *o = &s->ifs[i];

		snprintf(o->port, sizeof(o->port), "%s", e->port_name);
		snprintf(o->ifname, sizeof(o->ifname), "%s", e->ifname);
		o->rate_pps = e->rate_pps;
		o->burst = e->burst;
		o->to_kernel = e->to_kernel;
		o->to_kernel_dropped = e->to_kernel_dropped;
		o->from_kernel = e->from_kernel;
		o->from_kernel_dropped = e->from_kernel_dropped;
		o->from_kernel_foreign = e->from_kernel_foreign;
		o->from_kernel_held = e->from_kernel_held;
		o->queued = e->ring != NULL ? rte_ring_count(e->ring) : 0;
	}
}

json_t *
pa_excp_snapshot_json(const struct pa_excp_snapshot *s)
{
	json_t *ifs = json_object(), *o;
	unsigned int i;

	if (ifs == NULL)
		return NULL;
	for (i = 0; i < s->n; i++) {
		const struct pa_excp_if_snapshot *e = &s->ifs[i];

		o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"kernel_if", e->ifname,
			"rate_pps", (json_int_t)e->rate_pps,
			"burst", (json_int_t)e->burst,
			"to_kernel", (json_int_t)e->to_kernel,
			"to_kernel_dropped", (json_int_t)e->to_kernel_dropped,
			"from_kernel", (json_int_t)e->from_kernel,
			"from_kernel_dropped", (json_int_t)e->from_kernel_dropped,
			"from_kernel_foreign", (json_int_t)e->from_kernel_foreign,
			"from_kernel_held", (json_int_t)e->from_kernel_held,
			"queued", (json_int_t)e->queued);
		if (o == NULL || json_object_set_new(ifs, e->port, o) != 0) {
			json_decref(ifs);
			return NULL;
		}
	}
	return json_pack("{s:I, s:I, s:o}",
		"clones", (json_int_t)s->clones,
		"clones_skipped", (json_int_t)s->clones_skipped,
		"interfaces", ifs);
}
