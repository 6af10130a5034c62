/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_PROXY_H
#define PA_LB_PROXY_H

#include <stdint.h>

/** A flow's PROXY protocol state (lib/lb/lb_proxy.c). */
struct lb_proxy_state {
	uint32_t isn1;			/* client's ISN + 1, host order */
	uint8_t hlen;			/* header length; 0: no SYN seen */
	uint8_t flags;
	uint16_t pad;
};

#endif /* PA_LB_PROXY_H */
