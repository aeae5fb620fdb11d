/* Test helper: copies a checkpoint with one thing broken (a tensor dropped, a 2-D tensor's shape
 * transposed in the header, or a substring of the `config` metadata replaced), so loader tests can
 * check that each defect gives a clear error naming it. Header-only; include after test_util.h. */
#ifndef LTX2_TESTS_CKPT_EDIT_H
#define LTX2_TESTS_CKPT_EDIT_H

#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"
#include "test_util.h"

/* Any of drop / reshape / cfg_from may be NULL. Returns false (after a failed CHECK) when the
 * copy could not be written. */
static bool ckpt_write_broken(const char *src, const char *dst, const char *drop, const char *reshape,
                              const char *cfg_from, const char *cfg_to) {
    ltx2_context *wctx = ltx2_context_create(NULL);
    ltx2_st_file *f = NULL;
    ltx2_st_writer *wr = NULL;
    if (ltx2_st_open(wctx, src, &f) != LTX2_OK || ltx2_st_writer_create(wctx, &wr) != LTX2_OK) {
        CHECK(0, "setup: %s", ltx2_last_error(wctx));
        ltx2_st_close(f);
        ltx2_context_free(wctx);
        return false;
    }
    for (size_t i = 0; i < f->n_tensors; i++) {
        const ltx2_st_tensor *t = &f->tensors[i];
        if (drop && strcmp(t->name, drop) == 0) continue;
        ltx2_tensor v = ltx2_st_view(t);
        if (reshape && strcmp(t->name, reshape) == 0 && v.ndim == 2) {
            /* same bytes, rows and columns swapped in the header */
            int64_t s[2] = {v.shape[1], v.shape[0]};
            v = ltx2_tensor_make(v.data, v.dtype, 2, s);
        }
        ltx2_st_writer_add(wctx, wr, t->name, &v);
    }
    const char *cfg = ltx2_st_meta_get(f, "config");
    char *edited = NULL;
    if (cfg && cfg_from) {
        const char *at = strstr(cfg, cfg_from);
        CHECK(at != NULL, "config has no %s", cfg_from);
        edited = malloc(strlen(cfg) + strlen(cfg_to) + 1);
        size_t pre = at ? (size_t)(at - cfg) : strlen(cfg);
        memcpy(edited, cfg, pre);
        strcpy(edited + pre, cfg_to);
        if (at) strcat(edited, at + strlen(cfg_from));
        cfg = edited;
    }
    if (cfg) ltx2_st_writer_set_meta(wctx, wr, "config", cfg);
    ltx2_status wst = ltx2_st_writer_write(wctx, wr, dst);
    CHECK(wst == LTX2_OK, "write %s: %s", dst, ltx2_last_error(wctx));
    ltx2_st_writer_free(wr);
    ltx2_st_close(f);
    free(edited);
    ltx2_context_free(wctx);
    return wst == LTX2_OK;
}

#endif
