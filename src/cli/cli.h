/* Subcommands of the `ltx2` binary and the small argument helpers they share. Exit codes:
 * 0 success, 1 a check failed (e.g. compare out of tolerance), 2 bad input or usage, 3 a runtime
 * failure (device, disk, memory, rank). */
#ifndef LTX2_CLI_H
#define LTX2_CLI_H

#include <stdbool.h>

#include "ltx2/ltx2.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_BAD_INPUT 2
#define CLI_EXIT_RUNTIME 3

/* The exit code of a failed run: bad input (2) for what the inputs caused (arguments, formats,
 * dtypes, shapes, missing tensors, unsupported models), else a runtime failure (3: out of memory,
 * the memory plan's refusal included, device, I/O such as a full disk, a failed rank, a bug). */
int cli_exit_for(ltx2_status st);

int cli_inspect(ltx2_context *ctx, int argc, char **argv);
int cli_compare(ltx2_context *ctx, int argc, char **argv);
/* `ltx2 inspect --sharding PROFILE --mesh d,f,c,t FILE` (src/cli/cmd_inspect_sharding.c). */
int cli_inspect_sharding(ltx2_context *ctx, const char *profile, const char *mesh, const char *path);
/* Entries of dir besides . and .. (0 when it does not exist, -1 when it cannot be read), and the
 * removal of the frame_*.png in it (cli_frames_dir.c). */
long cli_dir_entries(const char *dir);
void cli_remove_frames(const char *dir);
/* `inspect --verify`: loads what generate would load from path (or a Gemma-3 directory) with every
 * tensor checked, the DiT and Gemma without holding them; prints "will load" or why not
 * (cmd_inspect_verify.c). */
int cli_inspect_verify(ltx2_context *ctx, const char *path);
int cli_decode(ltx2_context *ctx, int argc, char **argv);
int cli_generate(ltx2_context *ctx, int argc, char **argv);

/* Parses a strictly numeric double; prints "ltx2 <cmd>: <flag> expects a number, got '...'" on failure. */
bool cli_parse_double(const char *cmd, const char *flag, const char *text, double *out);
/* argv[*i] is a flag that takes a value: returns argv[++*i] or prints an error and returns NULL. */
const char *cli_flag_value(const char *cmd, int argc, char **argv, int *i);
/* Prints the context's last error as "ltx2 <cmd>: error: ..." */
void cli_report_error(const char *cmd, const ltx2_context *ctx);
/* Human-readable count: 1.23 M, 4.5 G. */
const char *cli_human_count(double v, char *buf, int cap);
const char *cli_human_bytes(double v, char *buf, int cap);

#endif
