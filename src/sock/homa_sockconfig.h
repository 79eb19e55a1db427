/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_sockconfig - the settings from the process environment: the core
 * parses variables HOMA_<NAME> (homa_config_apply_vars, homa_config.h);
 * this reads them with getenv and reports the rejected ones on stderr.
 */
#ifndef HOMA_SOCKCONFIG_H
#define HOMA_SOCKCONFIG_H

#include "homa_config.h"

/*
 * homa_config_load_env - apply every HOMA_<NAME> variable of the environment
 * to cfg.  A variable that does not parse or is out of range is reported on
 * stderr (once) and ignored.  Returns the number of variables rejected.
 */
int homa_config_load_env(struct homa_config *cfg);

#endif /* HOMA_SOCKCONFIG_H */
