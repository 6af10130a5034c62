/* SPDX-License-Identifier: BSD-3-Clause */
/* Network addresses, prefixes, port ranges, MACs, protocols: text <-> values. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "pa_err.h"
#include "pa_net.h"

/* Reasons are written with snprintf() directly: it accepts (NULL, 0). */

int
pa_net_parse_number(const char *s, const char **end, unsigned long max,
		unsigned long *out)
{
	char *e;
	unsigned long v;

	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &e, 10);
	if (errno != 0 || v > max)
		return -ERANGE;
	*end = e;
	*out = v;
	return 0;
}

int
pa_net_hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int
pa_net_parse_ip(const char *s, struct pa_ip_addr *a, char *why,
		size_t why_len)
{
	memset(a, 0, sizeof(*a));
	if (s == NULL) {
		pa_seterr(why, why_len, "missing IP address");
		return -EINVAL;
	}
	if (strchr(s, ':') != NULL) {
		if (inet_pton(AF_INET6, s, &a->v6) == 1) {
			a->family = AF_INET6;
			return 0;
		}
	} else if (inet_pton(AF_INET, s, &a->v4) == 1) {
		a->family = AF_INET;
		return 0;
	}
	memset(a, 0, sizeof(*a));
	pa_seterr(why, why_len, "invalid IP address '%s'", s);
	return -EINVAL;
}

/* The address bytes of @p p's family, and how many there are. */
static uint8_t *
prefix_bytes(struct pa_ip_addr *a, unsigned int *nbytes)
{
	if (a->family == AF_INET) {
		*nbytes = 4;
		return (uint8_t *)&a->v4;
	}
	*nbytes = 16;
	return a->v6.s6_addr;
}

static uint8_t
byte_mask(unsigned int *len)
{
	uint8_t mask = *len >= 8 ? 0xff : (uint8_t)(0xff00 >> *len);

	*len = *len >= 8 ? *len - 8 : 0;
	return mask;
}

bool
pa_ip_prefix_host_bits(const struct pa_ip_prefix *p)
{
	struct pa_ip_addr a = p->addr;
	unsigned int nbytes, i, len = p->len;
	const uint8_t *b = prefix_bytes(&a, &nbytes);

	for (i = 0; i < nbytes; i++)
		if (b[i] & (uint8_t)~byte_mask(&len))
			return true;
	return false;
}

void
pa_ip_prefix_mask(struct pa_ip_prefix *p)
{
	unsigned int nbytes, i, len = p->len;
	uint8_t *b = prefix_bytes(&p->addr, &nbytes);

	for (i = 0; i < nbytes; i++)
		b[i] &= byte_mask(&len);
}

/* Are the first @p len bits of @p x and @p y the same? */
static bool
same_leading_bits(const uint8_t *x, const uint8_t *y, unsigned int len)
{
	unsigned int bytes = len / 8, rem = len % 8;

	if (memcmp(x, y, bytes) != 0)
		return false;
	return rem == 0 ||
		((x[bytes] ^ y[bytes]) & (uint8_t)(0xff << (8 - rem))) == 0;
}

bool
pa_ip_prefix_overlap(const struct pa_ip_prefix *a, const struct pa_ip_prefix *b)
{
	if (a->addr.family == 0 || b->addr.family == 0)
		return true;
	if (a->addr.family != b->addr.family)
		return false;
	return same_leading_bits(pa_ip_bytes(&a->addr), pa_ip_bytes(&b->addr),
			a->len < b->len ? a->len : b->len);
}

bool
pa_ip_prefix_contains(const struct pa_ip_prefix *p, const struct pa_ip_addr *a)
{
	if (p->addr.family == 0)
		return true;
	if (p->addr.family != a->family)
		return false;
	return same_leading_bits(pa_ip_bytes(&p->addr), pa_ip_bytes(a), p->len);
}

int
pa_net_parse_prefix_flags(const char *s, struct pa_ip_prefix *p,
		unsigned int flags, char *why, size_t why_len)
{
	char addr[INET6_ADDRSTRLEN + 1];
	char buf[PA_NET_PREFIX_STRLEN];
	struct pa_ip_prefix masked;
	const char *slash, *end;
	unsigned long len;
	unsigned int max;
	size_t alen;

	memset(p, 0, sizeof(*p));
	if (s == NULL) {
		pa_seterr(why, why_len, "missing prefix");
		return -EINVAL;
	}
	if (strcmp(s, "any") == 0) {
		if (flags & PA_NET_PREFIX_ANY_OK)
			return 0;
		pa_seterr(why, why_len,
				"invalid prefix 'any': an address is required here");
		return -EINVAL;
	}
	slash = strchr(s, '/');
	alen = slash != NULL ? (size_t)(slash - s) : strlen(s);
	if (alen == 0 || alen >= sizeof(addr)) {
		pa_seterr(why, why_len,
				"invalid prefix '%s': expected ADDRESS/LENGTH", s);
		return -EINVAL;
	}
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (pa_net_parse_ip(addr, &p->addr, NULL, 0) < 0) {
		pa_seterr(why, why_len,
				"invalid prefix '%s': invalid IP address '%s'",
				s, addr);
		return -EINVAL;
	}
	max = p->addr.family == AF_INET ? 32 : 128;
	if (slash == NULL) {
		if (flags & PA_NET_PREFIX_NEED_LEN) {
			memset(p, 0, sizeof(*p));
			pa_seterr(why, why_len,
					"invalid prefix '%s': missing /LENGTH", s);
			return -EINVAL;
		}
		p->len = max;
		return 0;
	}
	if (pa_net_parse_number(slash + 1, &end, 1000, &len) < 0 ||
			*end != '\0') {
		memset(p, 0, sizeof(*p));
		pa_seterr(why, why_len,
				"invalid prefix '%s': length is not a number", s);
		return -EINVAL;
	}
	if (len > max) {
		memset(p, 0, sizeof(*p));
		pa_seterr(why, why_len,
				"invalid prefix '%s': length %lu exceeds %u",
				s, len, max);
		return -EINVAL;
	}
	p->len = (uint8_t)len;
	if (!(flags & PA_NET_PREFIX_HOST_OK) && pa_ip_prefix_host_bits(p)) {
		masked = *p;
		pa_ip_prefix_mask(&masked);
		pa_net_format_prefix(&masked, buf, sizeof(buf));
		memset(p, 0, sizeof(*p));
		pa_seterr(why, why_len,
				"invalid prefix '%s': host bits set (did you mean '%s'?)",
				s, buf);
		return -EINVAL;
	}
	return 0;
}

int
pa_net_parse_prefix(const char *s, struct pa_ip_prefix *p, char *why,
		size_t why_len)
{
	return pa_net_parse_prefix_flags(s, p, PA_NET_PREFIX_ANY_OK, why,
			why_len);
}

int
pa_net_parse_port_range(const char *s, struct pa_port_range *r,
		char *why, size_t why_len)
{
	unsigned long lo, hi;
	const char *end;

	r->lo = 0;
	r->hi = 65535;
	if (s == NULL) {
		pa_seterr(why, why_len, "missing port range");
		return -EINVAL;
	}
	if (strcmp(s, "any") == 0)
		return 0;
	if (pa_net_parse_number(s, &end, 65535, &lo) < 0)
		goto bad;
	if (*end == '\0') {
		hi = lo;
	} else if (*end == '-') {
		if (pa_net_parse_number(end + 1, &end, 65535, &hi) < 0 ||
				*end != '\0')
			goto bad;
	} else {
		goto bad;
	}
	if (lo > hi) {
		pa_seterr(why, why_len, "invalid port range '%s': %lu > %lu",
				s, lo, hi);
		return -EINVAL;
	}
	r->lo = (uint16_t)lo;
	r->hi = (uint16_t)hi;
	return 0;
bad:
	pa_seterr(why, why_len,
			"invalid port range '%s': expected \"any\", \"N\" or \"LO-HI\" with ports 0..65535",
			s);
	return -EINVAL;
}

static const struct {
	const char *name;
	int proto;
} proto_names[] = {
	{ "tcp", IPPROTO_TCP },
	{ "udp", IPPROTO_UDP },
	{ "icmp", IPPROTO_ICMP },
	{ "icmpv6", IPPROTO_ICMPV6 },
};

int
pa_net_parse_proto(const char *s, int *proto, char *why, size_t why_len)
{
	const char *end;
	unsigned long x;
	size_t i;

	if (s == NULL) {
		pa_seterr(why, why_len, "missing protocol");
		return -EINVAL;
	}
	if (strcmp(s, "any") == 0) {
		*proto = PA_PROTO_ANY;
		return 0;
	}
	for (i = 0; i < sizeof(proto_names) / sizeof(proto_names[0]); i++) {
		if (strcmp(s, proto_names[i].name) == 0) {
			*proto = proto_names[i].proto;
			return 0;
		}
	}
	if (pa_net_parse_number(s, &end, 255, &x) == 0 && *end == '\0') {
		*proto = (int)x;
		return 0;
	}
	pa_seterr(why, why_len,
			"unknown protocol '%s' (expected \"any\", \"tcp\", \"udp\", \"icmp\", \"icmpv6\" or a number 0..255)",
			s);
	return -EINVAL;
}

const char *
pa_net_proto_name(int proto)
{
	size_t i;

	for (i = 0; i < sizeof(proto_names) / sizeof(proto_names[0]); i++)
		if (proto_names[i].proto == proto)
			return proto_names[i].name;
	return NULL;
}

int
pa_net_parse_mac(const char *s, uint8_t mac[6], char *why, size_t why_len)
{
	int i, hi, lo;

	if (s == NULL) {
		pa_seterr(why, why_len, "missing MAC address");
		return -EINVAL;
	}
	if (strlen(s) != 17)
		goto bad;
	for (i = 0; i < 6; i++) {
		hi = pa_net_hex_digit(s[3 * i]);
		lo = pa_net_hex_digit(s[3 * i + 1]);
		if (hi < 0 || lo < 0)
			goto bad;
		if (i < 5 && s[3 * i + 2] != ':')
			goto bad;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
bad:
	pa_seterr(why, why_len,
			"invalid MAC address '%s' (expected aa:bb:cc:dd:ee:ff)", s);
	return -EINVAL;
}

const char *
pa_net_format_ip(const struct pa_ip_addr *a, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (a->family == AF_INET)
		inet_ntop(AF_INET, &a->v4, buf, len);
	else if (a->family == AF_INET6)
		inet_ntop(AF_INET6, &a->v6, buf, len);
	return buf;
}

const char *
pa_net_format_prefix(const struct pa_ip_prefix *p, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (p->addr.family == 0)
		snprintf(buf, len, "any");
	else
		snprintf(buf, len, "%s/%u",
				pa_net_format_ip(&p->addr, ip, sizeof(ip)),
				p->len);
	return buf;
}

const char *
pa_net_format_port_range(const struct pa_port_range *r, char *buf,
		size_t len)
{
	if (r->lo == 0 && r->hi == 65535)
		snprintf(buf, len, "any");
	else if (r->lo == r->hi)
		snprintf(buf, len, "%u", r->lo);
	else
		snprintf(buf, len, "%u-%u", r->lo, r->hi);
	return buf;
}

const char *
pa_net_format_mac(const uint8_t mac[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x",
			mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	return buf;
}

const char *
pa_net_family_name(int family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

uint32_t
pa_ip_csum_add(uint32_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t s = sum;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		s += (uint32_t)b[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint32_t)s;
}

uint16_t
pa_ip_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

bool
pa_ip_equal(const struct pa_ip_addr *a, const struct pa_ip_addr *b)
{
	if (a->family != b->family)
		return false;
	if (a->family == AF_INET)
		return a->v4.s_addr == b->v4.s_addr;
	if (a->family == AF_INET6)
		return memcmp(&a->v6, &b->v6, sizeof(a->v6)) == 0;
	return true;
}

const char *
pa_ip_unicast_problem(const struct pa_ip_addr *a)
{
	if (a->family == AF_INET) {
		uint32_t x = ntohl(a->v4.s_addr);

		if (x == 0)
			return "the unspecified address";
		if ((x >> 28) == 0xe)
			return "a multicast address";
		if (x == 0xffffffffu)
			return "the broadcast address";
		if ((x >> 24) == 127)
			return "a loopback address";
		return NULL;
	}
	if (IN6_IS_ADDR_UNSPECIFIED(&a->v6))
		return "the unspecified address";
	if (IN6_IS_ADDR_MULTICAST(&a->v6))
		return "a multicast address";
	if (IN6_IS_ADDR_LOOPBACK(&a->v6))
		return "a loopback address";
	return NULL;
}
