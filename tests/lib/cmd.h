/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_CMD_H
#define KQOS_TESTS_CMD_H

/* Run a shell command: its whole stdout (malloc'd, "" when none) and its exit status (-1 when
 * it did not exit normally). Asserts that the command could be started. */
char *cmd_run(const char *cmd, int *ret_status);

#endif
