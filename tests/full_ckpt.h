/* Synthetic full-size single-file checkpoints for tests: the real tensor table of LTX-2 19B or
 * LTX-2.3 22B (tests/data/full_<v>.keys.txt, made from ltx-core's own configurators by
 * tests/golden/gen_full_synthetic.py) with the full metadata config (tests/data/config_full_<v>.json),
 * every weight a bf16 zero written as a hole: 40-43 GiB apparent, next to no disk blocks. Loading,
 * version detection, the memory plan and residency then run on the real names and sizes. */
#ifndef LTX2_TEST_FULL_CKPT_H
#define LTX2_TEST_FULL_CKPT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"
#include "io/safetensors.h"

/* A key-table line: "name dtype [d0, d1, ...]" (dtype "bfloat16"). */
#define FULL_CKPT_LINE_CAP 512

static inline bool full_ckpt_parse_line(const char *line, char *name, size_t cap, int *ndim, int64_t *shape) {
    const char *sp = strchr(line, ' ');
    if (!sp || (size_t)(sp - line) >= cap || strncmp(sp + 1, "bfloat16 [", 10) != 0) return false;
    memcpy(name, line, (size_t)(sp - line));
    name[sp - line] = '\0';
    const char *p = sp + 11;
    *ndim = 0;
    while (*p && *p != ']' && *ndim < LTX2_MAX_DIMS) {
        char *end = NULL;
        const long long d = strtoll(p, &end, 10);
        if (end == p || d < 0) return false;
        shape[(*ndim)++] = d;
        p = end;
        while (*p == ',' || *p == ' ') p++;
    }
    return *p == ']';
}

/* Writes the synthetic checkpoint of version v ("2.0" / "2.3") to path; *params gets its element
 * count. Tensors whose name starts with data_prefix (NULL: none) are written from `pool` (bf16
 * values, at least pool_elems of them; every such tensor gets the pool's first values, so a bench
 * gets nonzero weights of any size for the disk space of those tensors alone); the rest are holes.
 * Returns false with the error in ctx (or on stderr for a malformed table). */
static inline bool full_ckpt_write_ex(ltx2_context *ctx, const char *v, const char *path, uint64_t *params,
                               const char *data_prefix, const void *pool, int64_t pool_elems) {
    char kpath[1024], cpath[1024], line[FULL_CKPT_LINE_CAP], name[FULL_CKPT_LINE_CAP];
    snprintf(kpath, sizeof kpath, "%s/tests/data/full_%s.keys.txt", LTX2_SOURCE_DIR, v);
    snprintf(cpath, sizeof cpath, "%s/tests/data/config_full_%s.json", LTX2_SOURCE_DIR, v);
    char *config = NULL;
    size_t config_len = 0;
    FILE *kf = fopen(kpath, "r");
    ltx2_st_writer *w = NULL;
    bool ok = kf && ltx2_file_read_all(ctx, cpath, &config, &config_len) == LTX2_OK &&
              ltx2_st_writer_create(ctx, &w) == LTX2_OK && ltx2_st_writer_set_meta(ctx, w, "config", config) == LTX2_OK;
    *params = 0;
    while (ok && fgets(line, sizeof line, kf)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        int ndim = 0;
        int64_t shape[LTX2_MAX_DIMS];
        if (!full_ckpt_parse_line(line, name, sizeof name, &ndim, shape)) {
            fprintf(stderr, "%s: malformed line: %s", kpath, line);
            ok = false;
            break;
        }
        ltx2_tensor t = ltx2_tensor_make(NULL, LTX2_BF16, ndim, shape); /* no data: zeros, a hole */
        if (data_prefix && strncmp(name, data_prefix, strlen(data_prefix)) == 0) {
            if (ltx2_tensor_numel(&t) > pool_elems) {
                fprintf(stderr, "%s: %s has %lld elements, over the %lld of the value pool\n", kpath, name,
                        (long long)ltx2_tensor_numel(&t), (long long)pool_elems);
                ok = false;
                break;
            }
            t.data = (void *)pool;
        }
        ok = ltx2_st_writer_add(ctx, w, name, &t) == LTX2_OK;
        *params += (uint64_t)ltx2_tensor_numel(&t);
    }
    ok = ok && ltx2_st_writer_write(ctx, w, path) == LTX2_OK;
    if (!kf) fprintf(stderr, "%s: cannot open\n", kpath);
    if (kf) fclose(kf);
    ltx2_st_writer_free(w);
    free(config);
    return ok;
}

static inline bool full_ckpt_write(ltx2_context *ctx, const char *v, const char *path, uint64_t *params) {
    return full_ckpt_write_ex(ctx, v, path, params, NULL, NULL, 0);
}

#endif
