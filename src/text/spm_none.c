/* spm.h for a build without SentencePiece (CMake found no libsentencepiece-dev): every entry
 * fails with the install hint, so text input is refused with the reason instead of missing. */
#include <stdio.h>

#include "text/spm.h"

struct ltx2_spm {
    int unused;
};

static const char k_no_spm[] = "this build has no SentencePiece: install libsentencepiece-dev (deps.sh) and reconfigure";

int ltx2_spm_available(void) { return 0; }

int ltx2_spm_open(const char *path, ltx2_spm **out, char *err, size_t cap) {
    (void)path;
    *out = NULL;
    snprintf(err, cap, "%s", k_no_spm);
    return -1;
}

void ltx2_spm_close(ltx2_spm *sp) { (void)sp; }

int64_t ltx2_spm_piece_count(const ltx2_spm *sp) {
    (void)sp;
    return 0;
}

ltx2_spm_ids ltx2_spm_special_ids(const ltx2_spm *sp) {
    (void)sp;
    const ltx2_spm_ids ids = {-1, -1, -1, -1};
    return ids;
}

int ltx2_spm_encode(const ltx2_spm *sp, const char *text, size_t len, int32_t **ids, size_t *n, char *err,
                    size_t cap) {
    (void)sp, (void)text, (void)len;
    *ids = NULL;
    *n = 0;
    snprintf(err, cap, "%s", k_no_spm);
    return -1;
}
