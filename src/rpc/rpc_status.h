/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_status - status codes: their names (homa_rpc_code_name) and the code a
 * failed Homa client RPC stands for.
 */
#ifndef RPC_STATUS_H
#define RPC_STATUS_H

/* The errors homa-rpc gives homa_abort, so that the failure tells why. */
#define RPCS_ERR_DEADLINE ETIME       /* the deadline passed */
#define RPCS_ERR_CANCEL ECANCELED     /* homa_rpc_cancel */

/*
 * rpcs_from_errno - the status code of a client RPC that failed with errno
 * @err (from homa_recvmsg or homa_send): DEADLINE_EXCEEDED for
 * RPCS_ERR_DEADLINE, CANCELLED for RPCS_ERR_CANCEL and ESHUTDOWN,
 * RESOURCE_EXHAUSTED for ENOMEM and EMSGSIZE, UNAVAILABLE for the rest (the
 * server stopped answering, is not bound, cannot be reached).
 */
int rpcs_from_errno(int err);

#endif /* RPC_STATUS_H */
