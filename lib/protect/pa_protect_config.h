/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The limits of the "protect" section of the configuration
 * (syn_timeout_s, src_new_flows, blocklist), which protect_config.c
 * registers and decodes; the section's structure (struct
 * pa_config_protect) is in pa_config.h.
 */
#ifndef PA_PROTECT_CONFIG_H
#define PA_PROTECT_CONFIG_H

#include "pa_config.h"

/** Largest "syn_timeout_s" (it must also stay below lb tcp_timeout). */
#define PA_PROTECT_MAX_SYN_TIMEOUT_S	3600u
/** Largest src_new_flows rate and burst. */
#define PA_PROTECT_MAX_RATE		100000000u

#endif /* PA_PROTECT_CONFIG_H */
