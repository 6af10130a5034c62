/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_config: configuration documents into the loader (lib/config/).
 *
 * Each input is the text of a config file. It is loaded in live mode and
 * in replay mode; whenever it loads, pa_config_to_json() must give a
 * document that loads again (same mode) and serializes to the same JSON
 * ("Loading the result gives an equal config", pa_config.h). Anything
 * else aborts.
 */
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "pa_config.h"

#define TARGET	"fuzz_config"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
round_trip(const char *text, const struct pa_config_opts *opts,
		const char *mode)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config *cfg, *again;
	json_t *doc, *doc2;
	char *dump;

	cfg = pa_config_load_string(text, opts, err, sizeof(err));
	if (cfg == NULL)
		return;
	doc = pa_config_to_json(cfg);
	if (doc == NULL)
		fuzz_fail(TARGET, "%s: pa_config_to_json failed", mode);
	dump = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	if (dump == NULL)
		fuzz_fail(TARGET, "%s: cannot dump the serialized config", mode);
	again = pa_config_load_string(dump, opts, err, sizeof(err));
	if (again == NULL)
		fuzz_fail(TARGET, "%s: the serialized config does not load: %s\n%s",
			mode, err, dump);
	doc2 = pa_config_to_json(again);
	if (doc2 == NULL)
		fuzz_fail(TARGET, "%s: pa_config_to_json failed (reloaded)", mode);
	if (!json_equal(doc, doc2)) {
		char *dump2 = json_dumps(doc2, JSON_COMPACT | JSON_SORT_KEYS);

		fuzz_fail(TARGET, "%s: reloaded config serializes differently\nfirst:  %s\nsecond: %s",
			mode, dump, dump2 != NULL ? dump2 : "?");
	}
	json_decref(doc2);
	pa_config_free(again);
	free(dump);
	json_decref(doc);
	pa_config_free(cfg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pa_config_opts live = { .replay = false };
	static const struct pa_config_opts replay = { .replay = true };
	char *text = fuzz_strndup(data, size);

	round_trip(text, &live, "live");
	round_trip(text, &replay, "replay");
	free(text);
	return 0;
}
