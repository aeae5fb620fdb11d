/* Fuzz target: the safetensors header validator (ltx2_st_open_memory). For every accepted file,
 * each tensor's first and last data byte is read (ASan catches any offset that escaped
 * validation) and lookups by name must find the same entry. */
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "io/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ltx2_context *ctx = fuzz_context();
    if (!ctx) return 0;
    ltx2_st_file *f = NULL;
    ltx2_status st = ltx2_st_open_memory(ctx, data, size, "fuzz.safetensors", &f);
    fuzz_check_error(ctx, st);
    if (st == LTX2_OK) {
        volatile uint8_t sink = 0;
        for (size_t i = 0; i < f->n_tensors; i++) {
            const ltx2_st_tensor *t = &f->tensors[i];
            ltx2_tensor v = ltx2_st_view(t);
            size_t nb = ltx2_tensor_nbytes(&v);
            if (nb != t->end - t->begin) abort();
            if (nb) {
                sink ^= ((const uint8_t *)t->data)[0];
                sink ^= ((const uint8_t *)t->data)[nb - 1];
            }
            if (ltx2_st_find(f, t->name) != t) abort();
        }
        for (size_t i = 0; i < f->n_meta; i++)
            if (!ltx2_st_meta_get(f, f->meta[i].key)) abort();
        (void)sink;
        ltx2_st_close(f);
    }
    ltx2_context_free(ctx);
    return 0;
}
