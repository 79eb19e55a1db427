// SPDX-License-Identifier: BSD-2-Clause
/* Names of the engine's counters: see homa_stats.h. */

#include "homa_stats.h"

static const char *const stat_names[HOMA_STAT_COUNT] = {
#define HOMA_STAT_NAME(name) #name,
	HOMA_STAT_LIST(HOMA_STAT_NAME)
#undef HOMA_STAT_NAME
};

const char *homa_stat_name(enum homa_stat stat)
{
	if ((unsigned)stat >= HOMA_STAT_COUNT)
		return "unknown";
	return stat_names[stat];
}
