/* The piece list of a SentencePiece model file, read from its protobuf directly: the library's
 * public API (0.1.97, Debian's) does not say which pieces are user-defined, and the fast
 * tokenizer the reference uses treats exactly the control, unknown and user-defined pieces as
 * "added tokens" matched in the raw text before anything else (gemma_tokenizer.c). */
#ifndef LTX2_TEXT_SPM_PIECES_H
#define LTX2_TEXT_SPM_PIECES_H

#include <stddef.h>
#include <stdint.h>

#include "core/context.h"
#include "io/file.h"

/* sentencepiece_model.proto, SentencePiece.Type */
typedef enum ltx2_spm_type {
    LTX2_SPM_NORMAL = 1,
    LTX2_SPM_UNKNOWN = 2,
    LTX2_SPM_CONTROL = 3,
    LTX2_SPM_USER_DEFINED = 4,
    LTX2_SPM_UNUSED = 5,
    LTX2_SPM_BYTE = 6
} ltx2_spm_type;

typedef struct ltx2_spm_piece {
    const char *text; /* not NUL-terminated: len bytes inside the owning buffer */
    uint32_t len;
    uint8_t type;     /* ltx2_spm_type */
} ltx2_spm_piece;

typedef struct ltx2_spm_pieces {
    ltx2_file_map map;      /* the model file, mapped */
    ltx2_spm_piece *pieces; /* id order */
    int64_t n;
} ltx2_spm_pieces;

/* Reads path (a ModelProto) and lists its pieces; a malformed protobuf is refused with the
 * offset. */
ltx2_status ltx2_spm_pieces_read(ltx2_context *ctx, const char *path, ltx2_spm_pieces *out);
void ltx2_spm_pieces_free(ltx2_spm_pieces *p);

#endif
