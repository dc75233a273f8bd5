/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_EXTENDED_RESOURCE_H
#define KQOS_STRATEGIES_EXTENDED_RESOURCE_H

#include <stdint.h>

/* koordinator MilliCPUToShares: milli*1024/1000 in [2, 262144]; <= 0 -> 2. */
uint64_t ext_milli_to_shares(int64_t milli);
/* koordinator MilliCPUToQuota: milli*100; <= 0 -> -1; below 1000 us -> 1000. */
int64_t ext_milli_to_quota(int64_t milli);

#endif
