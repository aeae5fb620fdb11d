/* The layering rules of DESIGN.md and issue #12 ("a house that shows it"), checked on the source
 * tree so a change that breaks one fails CI instead of waiting for a reader:
 * 1. only the CUDA backend (src/backend/backend_cuda.c and its cuDNN conv, backend_cudnn.c) and
 *    src/dist/comm_nccl.c include CUDA, cuBLAS, cuDNN or NCCL headers (everything else reaches the
 *    GPU through the op table);
 * 2. src/dist is the ground floor: it includes nothing from src/model, src/pipeline or src/cli;
 * 3. src/cpu implements the op descriptors of src/backend and defines none (no *_desc / *_args
 *    types in its headers);
 * 4. bench-only code stays in bench/: no src header declares a baseline. */
#define _DEFAULT_SOURCE /* DT_DIR, DT_REG */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* A source line longer than this is read in pieces; an #include is never that long. */
#define LINE_CAP 4096
/* Paths under the source tree (relative ones, then with the root in front). */
#define REL_CAP 1024
#define PATH_CAP 4096

static const char *const gpu_headers[] = {"<cuda", "<cublas", "<cudnn", "<nccl", "<cuda_runtime", "\"cuda", "\"nccl"};
static const char *const gpu_allowed[] = {"src/backend/backend_cuda.c", "src/backend/backend_cudnn.c",
                                          "src/dist/comm_nccl.c"};
static const char *const dist_forbidden[] = {"\"model/", "\"pipeline/", "\"cli/"};

static int files_seen;

static bool ends_with(const char *s, const char *suffix) {
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static bool starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

/* The include target of line ("<x.h>" or "\"x.h\"" with its delimiter), or NULL. */
static const char *include_of(const char *line) {
    while (*line == ' ' || *line == '\t') line++;
    if (*line != '#') return NULL;
    line++;
    while (*line == ' ' || *line == '\t') line++;
    if (!starts_with(line, "include")) return NULL;
    line += strlen("include");
    while (*line == ' ' || *line == '\t') line++;
    return *line == '<' || *line == '"' ? line : NULL;
}

static void check_file(const char *root, const char *rel) {
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot read %s", path);
    if (!f) return;
    files_seen++;
    bool gpu_ok = false;
    for (size_t i = 0; i < sizeof gpu_allowed / sizeof gpu_allowed[0]; i++) gpu_ok = gpu_ok || !strcmp(rel, gpu_allowed[i]);
    const bool in_dist = starts_with(rel, "src/dist/"), cpu_header = starts_with(rel, "src/cpu/") && ends_with(rel, ".h");
    const bool header = ends_with(rel, ".h");
    char line[LINE_CAP];
    int no = 0;
    while (fgets(line, sizeof line, f)) {
        no++;
        const char *inc = include_of(line);
        for (size_t i = 0; inc && !gpu_ok && i < sizeof gpu_headers / sizeof gpu_headers[0]; i++)
            CHECK(!starts_with(inc, gpu_headers[i]), "%s:%d includes %.*s: only the CUDA backend and the NCCL "
                  "communicator include GPU headers", rel, no, (int)strcspn(inc, "\n"), inc);
        for (size_t i = 0; inc && in_dist && i < sizeof dist_forbidden / sizeof dist_forbidden[0]; i++)
            CHECK(!starts_with(inc, dist_forbidden[i]), "%s:%d includes %.*s: src/dist is the ground floor", rel, no,
                  (int)strcspn(inc, "\n"), inc);
        if (cpu_header && strstr(line, "typedef struct ltx2_")) {
            const char *name = strstr(line, "ltx2_");
            const size_t len = strcspn(name, " {;\n");
            const bool desc = (len > 5 && !strncmp(name + len - 5, "_desc", 5)) ||
                              (len > 5 && !strncmp(name + len - 5, "_args", 5));
            CHECK(!desc, "%s:%d defines %.*s: op descriptors live in src/backend", rel, no, (int)len, name);
        }
        if (header)
            CHECK(!strstr(line, "_baseline("), "%s:%d declares a baseline: bench-only code lives in bench/", rel, no);
    }
    fclose(f);
}

static void walk(const char *root, const char *rel) {
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    DIR *d = opendir(path);
    CHECK(d != NULL, "cannot list %s", path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char sub[REL_CAP];
        snprintf(sub, sizeof sub, "%s/%s", rel, e->d_name);
        if (e->d_type == DT_DIR) walk(root, sub);
        else if (ends_with(e->d_name, ".c") || ends_with(e->d_name, ".h")) check_file(root, sub);
    }
    closedir(d);
}

int main(void) {
    walk(LTX2_SOURCE_DIR, "src");
    CHECK(files_seen > 100, "only %d source files under %s/src", files_seen, LTX2_SOURCE_DIR);
    printf("%d files of src/ checked against the layering rules\n", files_seen);
    return test_finish();
}
