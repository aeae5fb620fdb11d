/* `ltx2`: one binary, several subcommands (inspect, compare, decode, generate). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/mp4.h"
#include "io/png.h"

static void usage(FILE *out) {
    fprintf(out,
            "ltx2 %s: native C/CUDA engine for LTX-2 / LTX-2.3\n"
            "\n"
            "usage: ltx2 <command> [options]\n"
            "\n"
            "commands:\n"
            "  generate             a text prompt (or prompt embeddings) -> MP4/PNG/WAV; no model given: the\n"
            "                       embedded tiny one\n"
            "  inspect FILE|DIR     what a checkpoint or tensor file holds (format, LTX-2 version,\n"
            "                       components, dtypes, parameters, config); --tensors lists them\n"
            "  compare A B          match tensors by name across .safetensors/.npy/.npz/dump dirs and\n"
            "                       report errors; exit 0 iff all are within tolerance\n"
            "  decode LATENT.npy    decode a video latent to PNG frames (--checkpoint, --png-dir; tiled)\n"
            "  help [COMMAND]       this text, or a command's own help\n"
            "  version              print the version\n"
            "\n"
            "Run 'ltx2 <command> --help' for a command's options.\n",
            ltx2_version());
}

bool cli_parse_double(const char *cmd, const char *flag, const char *text, double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v)) {
        fprintf(stderr, "ltx2 %s: %s expects a number, got '%s'\n", cmd, flag, text);
        return false;
    }
    *out = v;
    return true;
}

const char *cli_flag_value(const char *cmd, int argc, char **argv, int *i) {
    if (*i + 1 >= argc) {
        fprintf(stderr, "ltx2 %s: %s needs a value\n", cmd, argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int cli_exit_for(ltx2_status st) {
    switch (st) {
    case LTX2_OK: return CLI_EXIT_OK;
    case LTX2_ERR_INVALID_ARG:
    case LTX2_ERR_FORMAT:
    case LTX2_ERR_DTYPE:
    case LTX2_ERR_SHAPE:
    case LTX2_ERR_NOT_FOUND:
    case LTX2_ERR_UNSUPPORTED: return CLI_EXIT_BAD_INPUT;
    default: return CLI_EXIT_RUNTIME;
    }
}

void cli_report_error(const char *cmd, const ltx2_context *ctx) {
    fprintf(stderr, "ltx2 %s: error: %s\n", cmd, ltx2_last_error(ctx));
}

const char *cli_human_count(double v, char *buf, int cap) {
    static const char *const units[] = {"", " K", " M", " B", " T"};
    int u = 0;
    while (v >= 1000.0 && u < 4) {
        v /= 1000.0;
        u++;
    }
    snprintf(buf, (size_t)cap, u ? "%.2f%s" : "%.0f%s", v, units[u]);
    return buf;
}

const char *cli_human_bytes(double v, char *buf, int cap) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, (size_t)cap, u ? "%.2f %s" : "%.0f %s", v, units[u]);
    return buf;
}

/* OpenMP threads spin while they wait by default; with other processes busy that made runs 10-30x
 * slower (#16). Unless the user chose (OMP_WAIT_POLICY set, e.g. "active" on a dedicated machine),
 * ltx2 waits passively. libgomp reads the variable when it loads, before main, so the choice is
 * made by executing this program once more with it set; a failed exec just runs on as is. */
static void prefer_passive_waiting(char **argv) {
    if (getenv("OMP_WAIT_POLICY")) return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
    execv("/proc/self/exe", argv);
}

int main(int argc, char **argv) {
    prefer_passive_waiting(argv);
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_BAD_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    char *help_argv[4];
    if (!strcmp(cmd, "help")) {
        if (argc < 3) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        help_argv[0] = argv[0];
        help_argv[1] = argv[2];
        help_argv[2] = "--help";
        help_argv[3] = NULL;
        argv = help_argv;
        argc = 3;
        cmd = argv[1];
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        /* what this build can do: scripts (and the CLI tests) read the features line */
        printf("ltx2 %s\nfeatures:", ltx2_version());
#ifdef LTX2_HAVE_CUDA
        printf(" cuda");
#endif
#ifdef LTX2_HAVE_CUDNN
        printf(" cudnn");
#endif
#ifdef LTX2_HAVE_NCCL
        printf(" nccl");
#endif
#ifdef LTX2_HAVE_SENTENCEPIECE
        printf(" text");
#endif
        printf("%s%s\n", ltx2_mp4_available() ? " mp4" : "", ltx2_png_available() ? " png" : "");
        printf("openmp wait policy: %s\n", getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "(runtime default)");
        return CLI_EXIT_OK;
    }
    ltx2_context_params p;
    ltx2_context_params_init(&p);
    ltx2_context *ctx = ltx2_context_create(&p);
    if (!ctx) {
        fprintf(stderr, "ltx2: out of memory\n");
        return CLI_EXIT_BAD_INPUT;
    }
    int rc;
    if (!strcmp(cmd, "inspect")) {
        rc = cli_inspect(ctx, argc - 2, argv + 2);
    } else if (!strcmp(cmd, "compare")) {
        rc = cli_compare(ctx, argc - 2, argv + 2);
    } else if (!strcmp(cmd, "generate")) {
        rc = cli_generate(ctx, argc - 2, argv + 2);
    } else if (!strcmp(cmd, "decode")) {
        rc = cli_decode(ctx, argc - 2, argv + 2);
    } else {
        fprintf(stderr, "ltx2: unknown command '%s'\n\n", cmd);
        usage(stderr);
        rc = CLI_EXIT_BAD_INPUT;
    }
    ltx2_context_free(ctx);
    return rc;
}
