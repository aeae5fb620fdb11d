/* SentencePiece behind a plain C header. The library is C++; this seam is the only C++ in the
 * host code (spm_shim.cc) and it knows nothing of the engine: errors come back as text in the
 * caller's buffer, so the C side (gemma_tokenizer.c) reports them with the engine's context. */
#ifndef LTX2_TEXT_SPM_H
#define LTX2_TEXT_SPM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ltx2_spm ltx2_spm;

/* The special ids a model declares; -1 where the model has none. */
typedef struct ltx2_spm_ids {
    int32_t bos, eos, pad, unk;
} ltx2_spm_ids;

/* 1 when the library is linked in (LTX2_HAVE_SENTENCEPIECE), else 0 and every call fails with a
 * message saying how to build it. */
int ltx2_spm_available(void);
/* Loads a serialized SentencePiece model (tokenizer.model). 0 on success; otherwise -1 and a
 * message in err[cap]. */
int ltx2_spm_open(const char *path, ltx2_spm **out, char *err, size_t cap);
void ltx2_spm_close(ltx2_spm *sp);
/* Number of pieces (the vocabulary size) and the special ids. */
int64_t ltx2_spm_piece_count(const ltx2_spm *sp);
ltx2_spm_ids ltx2_spm_special_ids(const ltx2_spm *sp);
/* The ids of text[0, len) with no BOS/EOS added, in a malloc'd array (*ids, *n; free() it).
 * 0 on success; otherwise -1 and a message in err[cap]. */
int ltx2_spm_encode(const ltx2_spm *sp, const char *text, size_t len, int32_t **ids, size_t *n, char *err,
                    size_t cap);

#ifdef __cplusplus
}
#endif

#endif
