/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_NET_H
#define PA_NET_H

/**
 * @file
 * Network address types and their text forms: IPv4/IPv6 addresses,
 * prefixes, port ranges, MAC addresses and IP protocol numbers.
 *
 * The ground floor of the libraries: it depends on nothing of ours (libc
 * only), so every other library may use it. Naming: pa_net_parse_*() and
 * pa_net_format_*() convert between text and values, pa_ip_*() are
 * predicates and operations on values.
 *
 * Parsers return 0, or -EINVAL and write the reason (without any JSON
 * path) to @p why. @p why may be NULL when @p why_len is 0. Formatters
 * return their @p buf. Everything here is reentrant and thread-safe.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

/** An IPv4 or IPv6 address. */
struct pa_ip_addr {
	uint8_t family;			/**< AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	};
};

/** A prefix; family 0 means "any" (matches both families). */
struct pa_ip_prefix {
	struct pa_ip_addr addr;		/**< host bits are zero */
	uint8_t len;			/**< prefix length */
};

/** Port range, inclusive, host order. "any" is 0-65535. */
struct pa_port_range {
	uint16_t lo;
	uint16_t hi;
};

/** Protocol value meaning "any". */
#define PA_PROTO_ANY	(-1)

/** Room for pa_net_format_prefix(): an IPv6 address, '/', length. */
#define PA_NET_PREFIX_STRLEN	(INET6_ADDRSTRLEN + 8)
/** Room for pa_net_format_mac(). */
#define PA_NET_MAC_STRLEN	18

/** pa_net_parse_prefix_flags() options. */
#define PA_NET_PREFIX_ANY_OK	0x1	/**< "any" accepted (family 0) */
#define PA_NET_PREFIX_HOST_OK	0x2	/**< host bits may be set (an
					 * interface address) */
#define PA_NET_PREFIX_NEED_LEN	0x4	/**< "/LENGTH" required */

/**
 * Decimal digits only (no sign, no blanks, at least one digit), at most
 * @p max. @p end receives the first character after the digits.
 * @return 0, -EINVAL (no digit) or -ERANGE (above @p max).
 */
int pa_net_parse_number(const char *s, const char **end, unsigned long max,
		unsigned long *out);

/** Value of one hexadecimal digit, or -1. */
int pa_net_hex_digit(char ch);

/** "192.0.2.1" or "2001:db8::1". On failure @p a is zeroed. */
int pa_net_parse_ip(const char *s, struct pa_ip_addr *a,
		char *why, size_t why_len);

/**
 * "ADDR/LEN", "ADDR" (a host prefix) or "any" (family 0), with
 * PA_NET_PREFIX_ANY_OK only; host bits must be clear unless
 * PA_NET_PREFIX_HOST_OK. On failure @p p is zeroed.
 */
int pa_net_parse_prefix_flags(const char *s, struct pa_ip_prefix *p,
		unsigned int flags, char *why, size_t why_len);

/** A rule prefix: pa_net_parse_prefix_flags() with PA_NET_PREFIX_ANY_OK. */
int pa_net_parse_prefix(const char *s, struct pa_ip_prefix *p,
		char *why, size_t why_len);

/** "any" (0-65535), "N" or "LO-HI". On failure @p r is 0-65535. */
int pa_net_parse_port_range(const char *s, struct pa_port_range *r,
		char *why, size_t why_len);

/**
 * A protocol as text: "any" (PA_PROTO_ANY), "tcp", "udp", "icmp",
 * "icmpv6" or a number 0..255.
 */
int pa_net_parse_proto(const char *s, int *proto, char *why, size_t why_len);

/** "aa:bb:cc:dd:ee:ff" (either case). */
int pa_net_parse_mac(const char *s, uint8_t mac[6], char *why,
		size_t why_len);

/** The address; "" for family 0. */
const char *pa_net_format_ip(const struct pa_ip_addr *a, char *buf,
		size_t len);

/** "ADDR/LEN", or "any" for family 0. */
const char *pa_net_format_prefix(const struct pa_ip_prefix *p, char *buf,
		size_t len);

/** "any", "N" or "LO-HI". */
const char *pa_net_format_port_range(const struct pa_port_range *r,
		char *buf, size_t len);

/** "aa:bb:cc:dd:ee:ff" (lower case). */
const char *pa_net_format_mac(const uint8_t mac[6], char *buf, size_t len);

/** "tcp", "udp", "icmp", "icmpv6", or NULL for another number. */
const char *pa_net_proto_name(int proto);

/** "IPv4" for AF_INET, "IPv6" otherwise. */
const char *pa_net_family_name(int family);

/** Same family and same address (two family-0 addresses are equal). */
bool pa_ip_equal(const struct pa_ip_addr *a, const struct pa_ip_addr *b);

/** The address bytes in network order: 4 for AF_INET, else 16. */
static inline const uint8_t *
pa_ip_bytes(const struct pa_ip_addr *a)
{
	return a->family == AF_INET ? (const uint8_t *)&a->v4 :
		a->v6.s6_addr;
}

/** Whether bits beyond @p p's length are set in its address. */
bool pa_ip_prefix_host_bits(const struct pa_ip_prefix *p);

/** Clear the bits beyond @p p's length. */
void pa_ip_prefix_mask(struct pa_ip_prefix *p);

/**
 * Whether some address is in both @p a and @p b (one holds the other).
 * A prefix of family 0 ("any") overlaps everything; IPv4 and IPv6
 * prefixes never overlap each other.
 */
bool pa_ip_prefix_overlap(const struct pa_ip_prefix *a,
		const struct pa_ip_prefix *b);

/**
 * Whether address @p a is in prefix @p p: its first p->len bits are
 * p's (host bits written in @p p, as an interface address has them, are
 * ignored). A prefix of family 0 ("any") holds every address; an IPv4
 * prefix holds no IPv6 address and the reverse.
 */
bool pa_ip_prefix_contains(const struct pa_ip_prefix *p,
		const struct pa_ip_addr *a);

/**
 * The Internet checksum's sum (RFC 1071) of @p len bytes at @p p added to
 * @p sum: 16-bit big-endian words, an odd last byte padded with a zero
 * byte, the carries folded back in. Start from 0, or from the sum of a
 * pseudo-header's words (any 32-bit value); a result fed back in goes on
 * with the bytes that follow (@p len even, but for the last). @return
 * the sum, at most 0xffff and not complemented: a message whose checksum
 * field is right sums to 0xffff.
 */
uint32_t pa_ip_csum_add(uint32_t sum, const void *p, size_t len);

/** The checksum field (host order) for a sum of pa_ip_csum_add() over
 * the message with its checksum field 0: the sum folded and
 * complemented. */
uint16_t pa_ip_csum_fold(uint32_t sum);

/**
 * Why @p a cannot be a unicast destination (a VIP, a backend): "the
 * unspecified address", "a multicast address", "the broadcast address"
 * (IPv4) or "a loopback address"; NULL when it can.
 */
const char *pa_ip_unicast_problem(const struct pa_ip_addr *a);

#endif /* PA_NET_H */
