/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtnetlink for the VIP host routes: request building and answer parsing
 * over plain buffers (unit-tested), and a NETLINK_ROUTE socket whose every
 * wait is bounded (SO_RCVTIMEO), so that the control thread never hangs.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <rte_common.h>

#include "pa_announce.h"

#define NL_BUF		(32 * 1024)
#define FLUSH_MAX	4096	/* routes of ours removed in one flush */

static void *
nl_put_attr(struct nlmsghdr *nh, size_t room, unsigned short type,
		const void *data, unsigned short len)
{
	struct rtattr *rta;
	size_t at = NLMSG_ALIGN(nh->nlmsg_len);

	if (at + RTA_SPACE(len) > room)
		return NULL;
	rta = (struct rtattr *)((char *)nh + at);
	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	nh->nlmsg_len = (uint32_t)(at + RTA_ALIGN(rta->rta_len));
	return rta;
}

size_t
pa_announce_nl_route_msg(void *buf, size_t len, int type,
		const struct pa_announce_route *r, uint32_t seq)
{
	struct nlmsghdr *nh = buf;
	struct rtmsg *rtm;
	unsigned short alen;

	if (buf == NULL || r == NULL ||
	    (type != RTM_NEWROUTE && type != RTM_DELROUTE))
		return 0;
	if (r->dst.family == AF_INET)
		alen = 4;
	else if (r->dst.family == AF_INET6)
		alen = 16;
	else
		return 0;
	if (len < NLMSG_SPACE(sizeof(*rtm)))
		return 0;
	memset(buf, 0, NLMSG_SPACE(sizeof(*rtm)));
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*rtm));
	nh->nlmsg_type = (uint16_t)type;
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	if (type == RTM_NEWROUTE)
		nh->nlmsg_flags |= NLM_F_CREATE | NLM_F_REPLACE;
	nh->nlmsg_seq = seq;
	rtm = NLMSG_DATA(nh);
	rtm->rtm_family = r->dst.family;
	rtm->rtm_dst_len = r->dst_len;
	/* tables above 255 travel in RTA_TABLE only */
	rtm->rtm_table = r->table < 256 ? (uint8_t)r->table : RT_TABLE_UNSPEC;
	rtm->rtm_protocol = r->protocol;
	rtm->rtm_type = RTN_UNICAST;
	/* "ip route add A/32 dev X" gives a IPv4 device route link scope;
	 * IPv6 routes are universe */
	rtm->rtm_scope = type == RTM_DELROUTE ? RT_SCOPE_NOWHERE :
		r->dst.family == AF_INET ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
	if (nl_put_attr(nh, len, RTA_DST, &r->dst.v6, alen) == NULL ||
	    nl_put_attr(nh, len, RTA_TABLE, &r->table, sizeof(r->table)) == NULL)
		return 0;
	if (r->oif != 0 && nl_put_attr(nh, len, RTA_OIF, &r->oif,
			sizeof(r->oif)) == NULL)
		return 0;
	return nh->nlmsg_len;
}

size_t
pa_announce_nl_dump_msg(void *buf, size_t len, int family, uint32_t seq)
{
	struct nlmsghdr *nh = buf;
	struct rtmsg *rtm;

	if (buf == NULL || len < NLMSG_SPACE(sizeof(*rtm)) ||
	    (family != AF_INET && family != AF_INET6))
		return 0;
	memset(buf, 0, NLMSG_SPACE(sizeof(*rtm)));
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*rtm));
	nh->nlmsg_type = RTM_GETROUTE;
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nh->nlmsg_seq = seq;
	rtm = NLMSG_DATA(nh);
	rtm->rtm_family = (uint8_t)family;
	return nh->nlmsg_len;
}

int
pa_announce_nl_parse_route(const void *msg, size_t msg_len,
		struct pa_announce_route *out)
{
	const struct nlmsghdr *nh = msg;
	const struct rtmsg *rtm;
	const struct rtattr *rta;
	unsigned int alen, rlen;
	bool has_dst = false;

	if (msg == NULL || out == NULL || msg_len < NLMSG_HDRLEN ||
	    nh->nlmsg_len > msg_len || nh->nlmsg_len < NLMSG_HDRLEN)
		return -EINVAL;
	if (nh->nlmsg_type != RTM_NEWROUTE)
		return -ENOENT;
	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
		return -EINVAL;
	rtm = NLMSG_DATA(nh);
	if (rtm->rtm_family == AF_INET)
		alen = 4;
	else if (rtm->rtm_family == AF_INET6)
		alen = 16;
	else
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->dst.family = rtm->rtm_family;
	out->dst_len = rtm->rtm_dst_len;
	out->table = rtm->rtm_table;
	out->protocol = rtm->rtm_protocol;
	rlen = (unsigned int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*rtm)));
	for (rta = RTM_RTA(rtm); RTA_OK(rta, rlen); rta = RTA_NEXT(rta, rlen)) {
		switch (rta->rta_type) {
		case RTA_DST:
			if (RTA_PAYLOAD(rta) != alen)
				return -EINVAL;
			memcpy(&out->dst.v6, RTA_DATA(rta), alen);
			has_dst = true;
			break;
		case RTA_TABLE:
			if (RTA_PAYLOAD(rta) != sizeof(uint32_t))
				return -EINVAL;
			memcpy(&out->table, RTA_DATA(rta), sizeof(uint32_t));
			break;
		case RTA_OIF:
			if (RTA_PAYLOAD(rta) != sizeof(uint32_t))
				return -EINVAL;
			memcpy(&out->oif, RTA_DATA(rta), sizeof(uint32_t));
			break;
		default:
			break;
		}
	}
	if (!has_dst || rtm->rtm_type != RTN_UNICAST)
		return -ENOENT;
	return 0;
}

int
pa_announce_nl_ack(const void *buf, size_t len, uint32_t seq)
{
	const struct nlmsghdr *nh;
	const struct nlmsgerr *e;
	size_t left = len;

	if (buf == NULL)
		return -EPROTO;
	for (nh = buf; NLMSG_OK(nh, left); nh = NLMSG_NEXT(nh, left)) {
		if (nh->nlmsg_seq != seq || nh->nlmsg_type != NLMSG_ERROR)
			continue;
		if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			return -EPROTO;
		e = NLMSG_DATA(nh);
		return e->error > 0 ? -EPROTO : e->error;
	}
	return left != 0 && left < NLMSG_HDRLEN ? -EPROTO : -EAGAIN;
}

int
pa_announce_nl_open(struct pa_announce_nl *nl, int timeout_ms)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
		NETLINK_ROUTE);
	if (nl->fd < 0)
		return -errno;
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int ret = -errno;

		close(nl->fd);
		nl->fd = -1;
		return ret;
	}
	nl->seq = 1;
	nl->timeout_ms = timeout_ms;
	return 0;
}

void
pa_announce_nl_close(struct pa_announce_nl *nl)
{
	if (nl != NULL && nl->fd >= 0) {
		close(nl->fd);
		nl->fd = -1;
	}
}

/* Receive one datagram within the socket's bound. @return bytes, or
 * -ETIMEDOUT / -errno. */
static ssize_t
nl_recv(struct pa_announce_nl *nl, void *buf, size_t len)
{
	struct pollfd pfd = { .fd = nl->fd, .events = POLLIN };
	ssize_t got;
	int ret;

	for (;;) {
		got = recv(nl->fd, buf, len, 0);
		if (got >= 0)
			return got;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		ret = poll(&pfd, 1, nl->timeout_ms);
		if (ret == 0)
			return -ETIMEDOUT;
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
}

/* Answers to earlier requests that timed out may still be queued:
 * throw them away before a new request. */
static void
nl_drain(struct pa_announce_nl *nl, void *buf, size_t len)
{
	while (recv(nl->fd, buf, len, MSG_DONTWAIT) > 0)
		;
}

int
pa_announce_nl_route(struct pa_announce_nl *nl, int type,
		const struct pa_announce_route *r)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char req[256];
	char *buf;
	uint32_t seq;
	size_t n;
	ssize_t got;
	int ret;

	if (nl == NULL || nl->fd < 0)
		return -EBADF;
	buf = malloc(NL_BUF);
	if (buf == NULL)
		return -ENOMEM;
	nl_drain(nl, buf, NL_BUF);
	seq = ++nl->seq;
	n = pa_announce_nl_route_msg(req, sizeof(req), type, r, seq);
	if (n == 0) {
		ret = -EINVAL;
		goto out;
	}
	if (sendto(nl->fd, req, n, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		got = nl_recv(nl, buf, NL_BUF);
		if (got < 0) {
			ret = (int)got;
			break;
		}
		ret = pa_announce_nl_ack(buf, (size_t)got, seq);
		if (ret != -EAGAIN)
			break;
	}
	if (type == RTM_DELROUTE && ret == -ESRCH)
		ret = 0;	/* already gone (its device went, say) */
out:
	free(buf);
	return ret;
}

/* Dump family @p family and collect our routes of @p table. */
static int
nl_collect(struct pa_announce_nl *nl, int family, uint32_t table,
		uint8_t protocol, struct pa_announce_route *found,
		unsigned int *n_found, char *buf)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	const struct nlmsghdr *nh;
	struct pa_announce_route r;
	char req[64];
	uint32_t seq = ++nl->seq;
	size_t n, left;
	ssize_t got;

	n = pa_announce_nl_dump_msg(req, sizeof(req), family, seq);
	if (sendto(nl->fd, req, n, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	for (;;) {
		got = nl_recv(nl, buf, NL_BUF);
		if (got < 0)
			return (int)got;
		left = (size_t)got;
		for (nh = (const struct nlmsghdr *)buf; NLMSG_OK(nh, left);
		     nh = NLMSG_NEXT(nh, left)) {
			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				return nh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) ?
					e->error : -EPROTO;
			}
			if (pa_announce_nl_parse_route(nh, nh->nlmsg_len, &r) != 0)
				continue;
			if (r.table == table && r.protocol == protocol &&
			    *n_found < FLUSH_MAX)
				found[(*n_found)++] = r;
		}
	}
}

int
pa_announce_nl_flush(struct pa_announce_nl *nl, uint32_t table,
		uint8_t protocol, unsigned int *removed)
{
	static const int families[] = { AF_INET, AF_INET6 };
	struct pa_announce_route *found;
	unsigned int n_found = 0, i, f;
	char *buf;
	int ret = 0, r;

	if (removed != NULL)
		*removed = 0;
	if (nl == NULL || nl->fd < 0)
		return -EBADF;
	buf = malloc(NL_BUF);
	found = calloc(FLUSH_MAX, sizeof(*found));
	if (buf == NULL || found == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (f = 0; f < RTE_DIM(families); f++) {
		nl_drain(nl, buf, NL_BUF);
		ret = nl_collect(nl, families[f], table, protocol, found,
			&n_found, buf);
		if (ret != 0)
			goto out;
	}
	for (i = 0; i < n_found; i++) {
		found[i].oif = 0;	/* any device */
		r = pa_announce_nl_route(nl, RTM_DELROUTE, &found[i]);
		if (r != 0 && ret == 0)
			ret = r;
		else if (r == 0 && removed != NULL)
			(*removed)++;
	}
out:
	free(found);
	free(buf);
	return ret;
}
