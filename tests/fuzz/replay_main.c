/* Driver for fuzz targets in ordinary (non-libFuzzer) builds: replays every file in a corpus
 * directory (sorted) through LLVMFuzzerTestOneInput, plus deterministic mutations of each
 * (truncations, byte flips from a fixed-seed generator), so every CTest run exercises the
 * parsers on bad input. A crash or sanitizer report fails the test; otherwise it prints
 * "N passed, 0 failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Byte-flip mutations per corpus file; small so the replay stays well under a second. */
#define REPLAY_FLIPS_PER_FILE 48
#define REPLAY_SEED 0x9E3779B97F4A7C15ull

static uint64_t next_rand(uint64_t *s) {
    /* xorshift64*: tiny, deterministic, good enough to pick positions and bytes. */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* Runs one input from an exact-size heap copy, so ASan sees reads past the end. */
static void run_copy(const uint8_t *data, size_t size, int *count) {
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return;
    if (size) memcpy(copy, data, size);
    LLVMFuzzerTestOneInput(copy, size);
    free(copy);
    (*count)++;
}

static void run_mutations(const uint8_t *data, size_t size, uint64_t *rng, int *count) {
    run_copy(data, size, count);
    size_t cuts[] = {0, 1, 7, 8, 9, 10, 12, size / 4, size / 2, size * 3 / 4,
                     size > 1 ? size - 1 : 0, size > 8 ? size - 8 : 0};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
        if (cuts[i] < size) run_copy(data, cuts[i], count);
    if (size == 0) return;
    uint8_t *m = malloc(size);
    if (!m) return;
    for (int k = 0; k < REPLAY_FLIPS_PER_FILE; k++) {
        memcpy(m, data, size);
        int nflips = 1 + (int)(next_rand(rng) % 3);
        for (int f = 0; f < nflips; f++) {
            size_t pos = (size_t)(next_rand(rng) % size);
            uint64_t r = next_rand(rng);
            switch (r % 4) {
            case 0: m[pos] ^= (uint8_t)(1u << ((r >> 8) % 8)); break;
            case 1: m[pos] = 0xFF; break;
            case 2: m[pos] = 0x00; break;
            default: m[pos] = (uint8_t)(r >> 16); break;
            }
        }
        run_copy(m, size, count);
    }
    free(m);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    char **names = NULL;
    size_t n = 0;
    if (ltx2_dir_list(ctx, argv[1], &names, &n) != LTX2_OK) {
        fprintf(stderr, "%s\n0 passed, 1 failed\n", ltx2_last_error(ctx));
        ltx2_context_free(ctx);
        return 1;
    }
    int count = 0, failed = 0;
    uint64_t rng = REPLAY_SEED;
    run_copy(NULL, 0, &count);
    for (size_t i = 0; i < n; i++) {
        char *p = ltx2_path_join(argv[1], names[i]);
        if (!p || !ltx2_path_is_file(p)) {
            free(p);
            continue;
        }
        char *data = NULL;
        size_t size = 0;
        if (ltx2_file_read_all(ctx, p, &data, &size) != LTX2_OK) {
            fprintf(stderr, "%s\n", ltx2_last_error(ctx));
            failed++;
        } else {
            run_mutations((const uint8_t *)data, size, &rng, &count);
        }
        free(data);
        free(p);
    }
    ltx2_dir_list_free(names, n);
    ltx2_context_free(ctx);
    printf("%d passed, %d failed\n", count, failed);
    return failed ? 1 : 0;
}
