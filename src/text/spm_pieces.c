/* A minimal protobuf walk over a SentencePiece ModelProto: field 1 (repeated SentencePiece
 * {1: piece, 2: score, 3: type}) is read, every other field skipped by its wire type. */
#include "text/spm_pieces.h"

#include <stdlib.h>
#include <string.h>

#include "io/file.h"

typedef struct pb {
    const uint8_t *p, *end, *base;
} pb;

static int pb_varint(pb *r, uint64_t *v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) return -1;
        const uint8_t b = *r->p++;
        x |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* Skips one field's payload of the given wire type. */
static int pb_skip(pb *r, unsigned wire) {
    uint64_t n;
    switch (wire) {
    case 0: return pb_varint(r, &n);
    case 1: n = 8; break;
    case 2:
        if (pb_varint(r, &n)) return -1;
        break;
    case 5: n = 4; break;
    default: return -1;
    }
    if (n > (uint64_t)(r->end - r->p)) return -1;
    r->p += n;
    return 0;
}

static int pb_piece(pb *r, ltx2_spm_piece *out) {
    out->text = "";
    out->len = 0;
    out->type = LTX2_SPM_NORMAL;
    while (r->p < r->end) {
        uint64_t key, v;
        if (pb_varint(r, &key)) return -1;
        const unsigned field = (unsigned)(key >> 3), wire = (unsigned)(key & 7);
        if (field == 1 && wire == 2) {
            if (pb_varint(r, &v) || v > (uint64_t)(r->end - r->p) || v > UINT32_MAX) return -1;
            out->text = (const char *)r->p;
            out->len = (uint32_t)v;
            r->p += v;
        } else if (field == 3 && wire == 0) {
            if (pb_varint(r, &v) || v < LTX2_SPM_NORMAL || v > LTX2_SPM_BYTE) return -1;
            out->type = (uint8_t)v;
        } else if (pb_skip(r, wire)) {
            return -1;
        }
    }
    return 0;
}

ltx2_status ltx2_spm_pieces_read(ltx2_context *ctx, const char *path, ltx2_spm_pieces *out) {
    memset(out, 0, sizeof *out);
    LTX2_TRY(ltx2_file_map_open(ctx, path, &out->map));
    const uint8_t *base = out->map.data;
    const size_t size = out->map.size;
    /* Two passes: count, then fill. */
    for (int pass = 0; pass < 2; pass++) {
        pb r = {base, base + size, base};
        int64_t n = 0;
        while (r.p < r.end) {
            const uint8_t *at = r.p;
            uint64_t key, len;
            if (pb_varint(&r, &key)) goto bad;
            if ((key >> 3) == 1 && (key & 7) == 2) {
                if (pb_varint(&r, &len) || len > (uint64_t)(r.end - r.p)) goto bad;
                if (pass == 1) {
                    pb sub = {r.p, r.p + len, r.base};
                    if (pb_piece(&sub, &out->pieces[n])) {
                        r.p = at;
                        goto bad;
                    }
                }
                r.p += len;
                n++;
            } else if (pb_skip(&r, (unsigned)(key & 7))) {
                r.p = at;
                goto bad;
            }
            continue;
        bad:
            ltx2_spm_pieces_free(out);
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: not a SentencePiece model (malformed protobuf at byte %zu)",
                              path, (size_t)(at - r.base));
        }
        if (pass == 0) {
            if (n == 0) {
                ltx2_spm_pieces_free(out);
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: a SentencePiece model without pieces", path);
            }
            out->pieces = calloc((size_t)n, sizeof *out->pieces);
            if (!out->pieces) {
                ltx2_spm_pieces_free(out);
                return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory for %lld pieces", path, (long long)n);
            }
        }
        out->n = n;
    }
    return LTX2_OK;
}

void ltx2_spm_pieces_free(ltx2_spm_pieces *p) {
    free(p->pieces);
    ltx2_file_map_close(&p->map);
    memset(p, 0, sizeof *p);
}
