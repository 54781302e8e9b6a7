/*
 * loomdbd_report.h - loomdbd's report handlers (docs/proto/messages.md
 * §6.3): dbd.report.cluster (sreport cluster utilization) and
 * dbd.report.users (sreport user top, cluster AccountUtilizationByUser).
 * They run on the worker thread like every handler of loomdbd_ops.c.
 */
#ifndef LOOM_DBD_LOOMDBD_REPORT_H
#define LOOM_DBD_LOOMDBD_REPORT_H

#include "dbd/loomdbd.h"

int dbd_report_cluster(dbd_t *d, const dbd_peer_t *peer, const json_t *req, json_t *out,
                       loom_err_t *err);
int dbd_report_users(dbd_t *d, const dbd_peer_t *peer, const json_t *req, json_t *out,
                     loom_err_t *err);

#endif
