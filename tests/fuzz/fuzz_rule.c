/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_rule: the field and object parsers that the loader and the RPC
 * adapters share (lib/config/).
 *
 * Each input is taken as a NUL-terminated string by pa_net_parse_ip,
 * _prefix, _port_range and _mac (what parses must format and parse back
 * to the same value), and, when it is JSON, by pa_decode_parse_proto and,
 * for an object, by pa_acl_config_parse_rule and pa_lb_config_parse_service
 * (what parses must serialize and parse back to the same JSON). Anything
 * else aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "pa_acl_config.h"
#include "pa_config.h"
#include "pa_lb_config.h"
#include "pa_net.h"

#define TARGET	"fuzz_rule"

/* Ports for in_port names; local addresses for ipip services. */
static const char base_doc[] =
	"{\"ports\": [{\"name\": \"wan0\", \"devargs\": \"net_null0\"},"
	" {\"name\": \"lan0\", \"devargs\": \"net_null1\"}],"
	" \"lb\": {\"local_addr\": \"192.0.2.254\","
	" \"local_addr6\": \"2001:db8::fe\"}}";

static struct pa_config *base;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[PA_CONFIG_ERR_MAX];

	base = pa_config_load_string(base_doc, NULL, err, sizeof(err));
	if (base == NULL)
		fuzz_fail(TARGET, "base config: %s", err);
	return 0;
}

static void
strings(const char *s)
{
	char why[PA_CONFIG_ERR_MAX], buf[64];
	struct pa_ip_addr a, a2;
	struct pa_ip_prefix p, p2;
	struct pa_port_range r;
	uint8_t mac[6], mac2[6];

	if (pa_net_parse_ip(s, &a, why, sizeof(why)) == 0) {
		pa_net_format_ip(&a, buf, sizeof(buf));
		if (pa_net_parse_ip(buf, &a2, why, sizeof(why)) != 0 ||
				memcmp(&a, &a2, sizeof(a)) != 0)
			fuzz_fail(TARGET, "IP '%s' formats as '%s', which parses differently",
				s, buf);
	}
	if (pa_net_parse_prefix(s, &p, why, sizeof(why)) == 0) {
		pa_net_format_prefix(&p, buf, sizeof(buf));
		if (pa_net_parse_prefix(buf, &p2, why, sizeof(why)) != 0 ||
				memcmp(&p, &p2, sizeof(p)) != 0)
			fuzz_fail(TARGET, "prefix '%s' formats as '%s', which parses differently",
				s, buf);
	}
	if (pa_net_parse_port_range(s, &r, why, sizeof(why)) == 0 &&
			r.lo > r.hi)
		fuzz_fail(TARGET, "port range '%s' parses as %u-%u", s, r.lo,
			r.hi);
	if (pa_net_parse_mac(s, mac, why, sizeof(why)) == 0) {
		pa_net_format_mac(mac, buf, sizeof(buf));
		if (pa_net_parse_mac(buf, mac2, why, sizeof(why)) != 0 ||
				memcmp(mac, mac2, sizeof(mac)) != 0)
			fuzz_fail(TARGET, "MAC '%s' formats as '%s', which parses differently",
				s, buf);
	}
}

static void
rule(const json_t *obj)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_acl_rule r, r2;
	json_t *j, *j2;

	if (pa_acl_config_parse_rule(obj, base, "$", &r, err, sizeof(err)) != 0)
		return;
	j = pa_acl_config_rule_to_json(&r, base);
	if (j == NULL)
		fuzz_fail(TARGET, "pa_acl_config_rule_to_json failed");
	if (pa_acl_config_parse_rule(j, base, "$", &r2, err, sizeof(err)) != 0)
		fuzz_fail(TARGET, "serialized ACL rule does not parse: %s", err);
	j2 = pa_acl_config_rule_to_json(&r2, base);
	if (j2 == NULL || !json_equal(j, j2))
		fuzz_fail(TARGET, "reparsed ACL rule serializes differently");
	json_decref(j2);
	json_decref(j);
}

static void
service(const json_t *obj)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_service s, s2;
	json_t *j, *j2;

	if (pa_lb_config_parse_service(obj, &base->lb, "$", &s, err,
			sizeof(err)) != 0)
		return;
	j = pa_lb_config_service_to_json(&s);
	if (j == NULL)
		fuzz_fail(TARGET, "pa_lb_config_service_to_json failed");
	if (pa_lb_config_parse_service(j, &base->lb, "$", &s2, err,
			sizeof(err)) != 0)
		fuzz_fail(TARGET, "serialized service does not parse: %s", err);
	j2 = pa_lb_config_service_to_json(&s2);
	if (j2 == NULL || !json_equal(j, j2))
		fuzz_fail(TARGET, "reparsed service serializes differently");
	json_decref(j2);
	json_decref(j);
	pa_lb_config_service_clear(&s2);
	pa_lb_config_service_clear(&s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	char why[PA_CONFIG_ERR_MAX];
	json_error_t jerr;
	json_t *doc;
	int proto;

	strings(s);
	free(s);

	doc = json_loadb((const char *)data, size,
		JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (doc == NULL)
		return 0;
	if (pa_decode_parse_proto(doc, &proto, why, sizeof(why)) == 0 &&
			(proto < PA_PROTO_ANY || proto > 255))
		fuzz_fail(TARGET, "protocol out of range: %d", proto);
	if (json_is_object(doc)) {
		rule(doc);
		service(doc);
	}
	json_decref(doc);
	return 0;
}
