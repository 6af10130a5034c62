/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_ACL_CONFIG_H
#define PA_ACL_CONFIG_H

/**
 * @file
 * The "acl" section of the configuration (docs/configuration.md), owned by
 * the ACL library (lib/acl/acl_config.c): it registers the section with
 * lib/config's registry (pa_config.h) and exports the parsers of the
 * section and of one rule, and the serializer of one rule, for the RPC
 * adapter. The section's structures
 * (struct pa_config_acl, struct pa_config_acl_rule) are in pa_config.h.
 * Control thread only.
 */

#include <stddef.h>

#include <jansson.h>

#include "pa_config.h"

/**
 * Parse one ACL rule object (docs/configuration.md) as the loader does.
 * @param cfg   resolves "in_port" names (NULL: no ports, any in_port fails)
 * @param path  JSON path of @p obj used in messages ("$" if NULL)
 * @param err   receives "<path>.<field>: <reason>"
 * @return 0, -EINVAL or -ENOMEM. Uniqueness of ids is the caller's check.
 */
int pa_acl_config_parse_rule(const json_t *obj, const struct pa_config *cfg,
		const char *path, struct pa_config_acl_rule *rule,
		char *err, size_t err_len);

/**
 * Parse an "acl" object ({"default"?, "non_ip"?, "rules"?}, CONTRACT
 * section 4) as the loader does: rules checked one by one and for
 * duplicate ids. Absent keys leave @p acl as the caller initialised it.
 * @param cfg   resolves the rules' "in_port" names (as above)
 * @param path  JSON path of @p obj used in messages ("$" if NULL)
 * @param acl   on return, acl->rules may be allocated (also on failure):
 *              the caller frees it
 * @return 0, -EINVAL or -ENOMEM (message in @p err).
 */
int pa_acl_config_parse_acl(const json_t *obj, const struct pa_config *cfg,
		const char *path, struct pa_config_acl *acl,
		char *err, size_t err_len);

/**
 * A rule in the file's schema (new reference, NULL when out of memory).
 * @param cfg  names "in_port" (NULL: in_port is left out)
 */
json_t *pa_acl_config_rule_to_json(const struct pa_config_acl_rule *r,
		const struct pa_config *cfg);

/** The JSON Schema of a rule object and of an "acl" object, from the
 * field tables pa_acl_config_parse_rule() and pa_acl_config_parse_acl()
 * decode with (new references, NULL when out of memory). */
json_t *pa_acl_config_rule_schema(void);
json_t *pa_acl_config_schema(void);

#endif /* PA_ACL_CONFIG_H */
