/* Gemma-3 prompt tokenisation as ltx-core's LTXGemmaTokenizer does it: the prompt stripped of
 * leading and trailing whitespace (Python's str.strip), BOS first, no EOS, truncated to the
 * length with BOS counted (the fast tokenizer's right truncation), then left-padded with PAD
 * (the EOS where the model declares no PAD) and an attention mask of 1 on the real tokens.
 * The text is first cut at the model's control, unknown and user-defined pieces written out
 * literally (leftmost, longest first), as the fast tokenizer matches its added tokens before its
 * normaliser; SentencePiece (spm.h) encodes what lies between. */
#ifndef LTX2_TEXT_GEMMA_TOKENIZER_H
#define LTX2_TEXT_GEMMA_TOKENIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/context.h"
#include "io/json.h"
#include "text/spm.h"
#include "text/spm_pieces.h"

/* ltx-core's TOKENIZER_MAX_LENGTH: every prompt becomes exactly this many tokens. */
#define LTX2_GEMMA_MAX_TOKENS 1024

typedef struct ltx2_gemma_tokenizer {
    ltx2_spm *sp;
    ltx2_spm_pieces pieces;
    /* The added tokens: ids sorted by first byte, then longest first; added_at[b] is where first
     * byte b starts in added[] (added_at[256] == n_added). */
    int32_t *added;
    int64_t n_added;
    int64_t added_at[257];
    int64_t vocab;       /* pieces in the model */
    int32_t bos, pad;    /* pad: the model's PAD, else its EOS (ltx-core's fallback) */
    uint8_t *special;    /* [vocab] 1: an id decoding with skip_special drops (gemma_detokenize.c) */
    char path[512];      /* for messages */
} ltx2_gemma_tokenizer;

/* Loads tokenizer.model; refuses a model without BOS or without both PAD and EOS. */
ltx2_status ltx2_gemma_tokenizer_load(ltx2_context *ctx, const char *path, ltx2_gemma_tokenizer **out);
void ltx2_gemma_tokenizer_free(ltx2_gemma_tokenizer *tok);
/* Fills tok->special from the tokenizer.json beside model_path (its added tokens flagged "special"),
 * or without one from the model's control and unknown pieces; ltx2_gemma_tokenizer_load calls it. */
ltx2_status ltx2_gemma_tokenizer_specials(ltx2_context *ctx, ltx2_gemma_tokenizer *tok, const char *model_path);
/* ids [n] as text, the way transformers' Gemma tokenizer decodes them (tokenizer.json's decoder:
 * '▁' -> ' ', byte pieces as bytes, a run of bytes that is not UTF-8 as one U+FFFD per byte), the
 * special ids dropped when skip_special: a malloc'd NUL-terminated string in *text. */
ltx2_status ltx2_gemma_detokenize(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok, const int32_t *ids, int64_t n,
                                  bool skip_special, char **text);

typedef struct ltx2_gemma_tokens {
    int64_t len;       /* the padded length asked for */
    int64_t n_real;    /* tokens with mask 1 (BOS included), at the end of the row */
    int64_t n_dropped; /* pieces cut by truncation (0 when the prompt fits) */
} ltx2_gemma_tokens;

/* One prompt (UTF-8, NUL-terminated; invalid UTF-8 is refused with its byte offset) into
 * ids[len] and mask[len]. len >= 1. */
ltx2_status ltx2_gemma_tokenize(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok, const char *prompt, int64_t len,
                                int32_t *ids, uint8_t *mask, ltx2_gemma_tokens *info);

/* text as the fast tokenizer encodes it with its special tokens added (transformers' tokenizer(text)
 * and Gemma3Processor(text=...)): BOS, then the text's ids, nothing stripped, truncated or padded;
 * added tokens written out in the text (a chat template's "<bos>" too) are matched as such. A
 * malloc'd array in *ids. */
ltx2_status ltx2_gemma_encode(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok, const char *text, int32_t **ids,
                              int64_t *n);

/* The byte range [*begin, *end) of text[0, n) without the leading and trailing characters that
 * Python's str.isspace() calls whitespace (ASCII and Unicode). text must be valid UTF-8
 * (ltx2_utf8_invalid_at, io/json.h, says where it is not). */
void ltx2_text_strip(const char *text, size_t n, size_t *begin, size_t *end);
/* The code point at s[i] of valid UTF-8 and its byte length (never past n, whatever the bytes). */
size_t ltx2_utf8_next(const unsigned char *s, size_t i, size_t n, uint32_t *cp);

#endif
