/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_CONFIG_H
#define PA_LB_CONFIG_H

/**
 * @file
 * The "lb" section of the configuration (docs/configuration.md), owned by
 * the LB library (lib/lb/lb_config.c): it registers the section with
 * lib/config's registry (pa_config.h) and exports the parsers and
 * serializers of one service and one backend for the RPC adapter. The
 * section's structures (struct pa_config_lb, pa_config_service,
 * pa_config_backend) are in pa_config.h. Control thread only.
 */

#include <stddef.h>

#include <jansson.h>

#include "pa_config.h"

/**
 * Is the VIP of @p svc a routed port's own address of @p cfg (NULL: no
 * ports)? Refused: a VIP is the load balancer's whole address, a port's
 * address is the port's (its kernel_if's); lb.local_addr / local_addr6
 * may be shared with a port, a VIP may not (docs/configuration.md, "One
 * address, shared"). The message names @p path (the service's "vip")
 * and the port's address ("$.ports[I].addr[J]").
 * @return 0, or -EINVAL.
 */
int pa_lb_config_vip_port_check(const struct pa_config *cfg,
		const struct pa_config_service *svc, const char *path,
		char *err, size_t err_len);

/**
 * Parse one LB service object, backends included (allocated: release with
 * pa_lb_config_service_clear()). Uniqueness of the name and of (vip, port,
 * proto) across services is the caller's check.
 * @param lb    for the ipip check of local_addr/local_addr6, fnat's of
 *              lb.fnat (a pool address of each backend's family), and
 *              the VIP that may be none of them (NULL: none set)
 * @param path  JSON path of @p obj used in messages ("$" if NULL)
 * @return 0, -EINVAL or -ENOMEM; on failure nothing is left allocated.
 */
int pa_lb_config_parse_service(const json_t *obj,
		const struct pa_config_lb *lb, const char *path,
		struct pa_config_service *svc, char *err, size_t err_len);

/**
 * Parse one backend object of @p svc (family, forward mode and port of the
 * service are checked against it: a backend of the other family than the
 * VIP, or with another port, only with "fnat"; the pool's family is
 * pa_lb_config_backend_pool_check()'s). Uniqueness within the service is
 * the caller's check.
 */
int pa_lb_config_parse_backend(const json_t *obj,
		const struct pa_config_service *svc, const char *path,
		struct pa_config_backend *be, char *err, size_t err_len);

/**
 * A backend of an "fnat" service needs a pool address of its family
 * (lb.fnat.addrs); other services need nothing. The config loader checks
 * each backend of a file with it, lb_backend_add each one it adds.
 * @param lb    the "lb" section (NULL: no pool)
 * @param path  JSON path of the backend object ("$" if NULL); the
 *              message names its "addr" and lb.fnat.addrs
 * @return 0, or -EINVAL.
 */
int pa_lb_config_backend_pool_check(const struct pa_config_lb *lb,
		const struct pa_config_service *svc,
		const struct pa_config_backend *be, const char *path,
		char *err, size_t err_len);

/** The JSON Schema of a service object and of a backend object, from
 * the field tables the two parsers above decode with (new references,
 * NULL when out of memory). */
json_t *pa_lb_config_service_schema(void);
json_t *pa_lb_config_backend_schema(void);

/* "health" bounds and defaults */
#define PA_CONFIG_HEALTH_DEF_INTERVAL_MS	2000
#define PA_CONFIG_HEALTH_DEF_TIMEOUT_MS		1000
#define PA_CONFIG_HEALTH_DEF_RISE		2
#define PA_CONFIG_HEALTH_DEF_FALL		3
#define PA_CONFIG_HEALTH_MIN_INTERVAL_MS	100
#define PA_CONFIG_HEALTH_MAX_INTERVAL_MS	3600000
#define PA_CONFIG_HEALTH_MIN_TIMEOUT_MS		10
#define PA_CONFIG_HEALTH_MAX_COUNT		100
#define PA_CONFIG_HEALTH_MAX_GRACE_MS		3600000

/** A "health" object with its defaults (type none, not present). */
void pa_lb_config_health_defaults(struct pa_config_health *h);

/** "health" in the file's schema (new reference). */
json_t *pa_lb_config_health_to_json(const struct pa_config_health *h);

/** The names of "health.type" by enum pa_health_type, NULL-terminated,
 * and one of them ("?" out of range). */
extern const char *const pa_lb_config_health_names[];
const char *pa_lb_config_health_name(enum pa_health_type t);

/** Free a service's backends (the struct itself is the caller's). */
void pa_lb_config_service_clear(struct pa_config_service *svc);

/** Serializers of one object, in the file's schema (new references). */
json_t *pa_lb_config_service_to_json(const struct pa_config_service *svc);
json_t *pa_lb_config_backend_to_json(const struct pa_config_backend *be);

/** The file's names of a service's protocol ("tcp", "udp", ...; "?" for
 * one without a name), scheduler ("maglev", ...), forwarding method
 * ("ipip", "nat", "dsr", "fnat"), PROXY protocol ("none" — no key in
 * the file —, "v1", "v2") and a backend's state ("up", "down",
 * "drain"), as the serializers above write them ("?" out of range).
 * Static strings. */
const char *pa_lb_config_proto_name(int proto);
const char *pa_lb_config_sched_name(enum pa_lb_sched s);
const char *pa_lb_config_forward_name(enum pa_lb_forward f);
const char *pa_lb_config_proxy_name(enum pa_lb_proxy p);
const char *pa_lb_config_state_name(enum pa_lb_state s);

/** A backend's states by enum pa_lb_state, NULL-terminated: the names
 * of a PA_DECODE_ENUM field ("state" of a backend, of lb_backend_set). */
extern const char *const pa_lb_config_state_names[];

#endif /* PA_LB_CONFIG_H */
