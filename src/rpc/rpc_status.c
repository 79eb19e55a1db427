/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_status - status code names and the meaning of RPC errors.
 */
#include "rpc_status.h"

#include <errno.h>

#include "homa-rpc.h"

static const char *const code_names[HOMA_RPC_CODE_MAX + 1] = {
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
	"DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
	"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
	"UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
};

/* See homa-rpc.h. */
const char *homa_rpc_code_name(int code)
{
	if (code < 0 || code > HOMA_RPC_CODE_MAX)
		return "?";
	return code_names[code];
}

/* See rpc_status.h. */
int rpcs_from_errno(int err)
{
	switch (err) {
	case RPCS_ERR_DEADLINE:
		return HOMA_RPC_DEADLINE_EXCEEDED;
	case RPCS_ERR_CANCEL:
	case ESHUTDOWN:
		return HOMA_RPC_CANCELLED;
	case ENOMEM:
	case EMSGSIZE:
		return HOMA_RPC_RESOURCE_EXHAUSTED;
	default:
		return HOMA_RPC_UNAVAILABLE;
	}
}
