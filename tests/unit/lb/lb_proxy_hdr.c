/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb_proxy_hdr v1|v2 SRC DST SPORT DPORT: write the PROXY protocol header
 * that lb_proxy_build() makes for a client SRC:SPORT connected to
 * DST:DPORT (both IPv4 or both IPv6) to stdout. For the test that feeds
 * it to real PROXY readers (tests/integration/test_lb_proxy_reader.py).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_proxy.h"

static int
port_of(const char *s, uint16_t *port)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v > 65535)
		return -1;
	*port = htons((uint16_t)v);
	return 0;
}

int
main(int argc, char **argv)
{
	uint8_t src[16], dst[16], buf[LB_PROXY_MAX];
	enum pa_lb_proxy v;
	uint16_t sport, dport;
	unsigned int n;
	int af;

	if (argc != 6) {
		fprintf(stderr, "usage: %s v1|v2 SRC DST SPORT DPORT\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "v1") == 0)
		v = PA_LB_PROXY_V1;
	else if (strcmp(argv[1], "v2") == 0)
		v = PA_LB_PROXY_V2;
	else {
		fprintf(stderr, "%s: version '%s' is not v1 or v2\n", argv[0],
			argv[1]);
		return 2;
	}
	af = strchr(argv[2], ':') != NULL ? AF_INET6 : AF_INET;
	if (inet_pton(af, argv[2], src) != 1 ||
	    inet_pton(af, argv[3], dst) != 1 ||
	    port_of(argv[4], &sport) != 0 || port_of(argv[5], &dport) != 0) {
		fprintf(stderr, "%s: bad address or port\n", argv[0]);
		return 2;
	}
	n = lb_proxy_build(buf, v, af == AF_INET ? 4 : 6, src, dst, sport,
		dport);
	if (n == 0 || fwrite(buf, 1, n, stdout) != n || fflush(stdout) != 0)
		return 1;
	return 0;
}
