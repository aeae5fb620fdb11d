/* NumPy .npz = a zip archive of .npy members. Reader: finds the end-of-central-directory record
 * (after an optional zip comment), follows zip64 records when present (numpy writes members with
 * force_zip64), walks the central directory, checks each local header, and reads stored (method
 * 0) or deflated (method 8, needs zlib) members with their CRC-32 checked. Sizes come from the
 * central directory, so data descriptors and zip64 local headers need no special case.
 * Writer: stored members like numpy.savez, fixed 1980-01-01 timestamps so output is
 * reproducible, no zip64 (archives over 4 GiB are refused: use safetensors). */
#include "io/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LTX2_HAVE_ZLIB
#include <zlib.h>
#endif

#include "core/context.h"
#include "io/file.h"

#define ZIP_LOCAL_SIG 0x04034b50u
#define ZIP_CENTRAL_SIG 0x02014b50u
#define ZIP_EOCD_SIG 0x06054b50u
#define ZIP64_LOCATOR_SIG 0x07064b50u
#define ZIP64_EOCD_SIG 0x06064b50u
#define ZIP_LOCAL_LEN 30
#define ZIP_CENTRAL_LEN 46
#define ZIP_EOCD_LEN 22
#define ZIP64_LOCATOR_LEN 20
#define ZIP64_EOCD_LEN 56
#define ZIP_MAX_COMMENT 0xFFFFu
#define ZIP64_EXTRA_ID 0x0001u
#define ZIP_U32_MAX 0xFFFFFFFFu
#define ZIP_U16_MAX 0xFFFFu
/* Deflate cannot expand better than about 1032:1; a member claiming more is corrupt, and
 * refusing it bounds what a hostile file can make us allocate. */
#define DEFLATE_MAX_RATIO 1032
/* zlib counts in uInt; we feed it at most this much at a time. */
#define ZLIB_CHUNK ((uint64_t)1 << 30)
/* "version needed to extract" 2.0: plain stored members. */
#define ZIP_VERSION_20 20
/* DOS date for 1980-01-01: ((1980-1980) << 9) | (1 << 5) | 1. */
#define ZIP_DOS_DATE_1980 0x21
/* Unix mode 0644 in the high half of the external attributes, as Python's zipfile writes. */
#define ZIP_EXTERNAL_ATTR (0644u << 16)

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr16(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void wr32(unsigned char *p, uint32_t v) {
    wr16(p, v & 0xFFFF);
    wr16(p + 2, v >> 16);
}

/* CRC-32 (IEEE, reflected 0xEDB88320), continuing from crc. zlib's is faster when we have it;
 * otherwise a table is built on the stack per call (1 KiB, negligible next to the data). */
static uint32_t crc32_update(uint32_t crc, const void *data, uint64_t n) {
    const unsigned char *p = data;
#ifdef LTX2_HAVE_ZLIB
    uLong c = crc;
    while (n) {
        uInt chunk = (uInt)(n < ZLIB_CHUNK ? n : ZLIB_CHUNK);
        c = crc32(c, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)c;
#else
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    crc = ~crc;
    for (uint64_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
#endif
}

void ltx2_npz_free(ltx2_npz *z) {
    if (!z) return;
    for (size_t i = 0; i < z->n; i++) {
        free(z->names[i]);
        ltx2_array_free(&z->arrays[i]);
    }
    free(z->names);
    free(z->arrays);
    memset(z, 0, sizeof(*z));
}

typedef struct zip_dir {
    uint64_t n_entries, cd_off, cd_size, cd_limit; /* cd_limit: where the directory must end */
} zip_dir;

static ltx2_status find_directory(ltx2_context *ctx, const unsigned char *b, uint64_t size,
                                  const char *label, zip_dir *d) {
    if (size < ZIP_EOCD_LEN)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %llu bytes is too short for a zip (.npz) file",
                          label, (unsigned long long)size);
    uint64_t eocd = UINT64_MAX;
    uint64_t lowest = size - ZIP_EOCD_LEN > ZIP_MAX_COMMENT ? size - ZIP_EOCD_LEN - ZIP_MAX_COMMENT : 0;
    for (uint64_t off = size - ZIP_EOCD_LEN + 1; off-- > lowest;) {
        if (rd32(b + off) == ZIP_EOCD_SIG && off + ZIP_EOCD_LEN + rd16(b + off + 20) == size) {
            eocd = off;
            break;
        }
    }
    if (eocd == UINT64_MAX)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: no zip end-of-central-directory record (not an .npz file, or "
                          "truncated)", label);
    const unsigned char *e = b + eocd;
    uint32_t disk = rd16(e + 4), cd_disk = rd16(e + 6);
    d->n_entries = rd16(e + 10);
    d->cd_size = rd32(e + 12);
    d->cd_off = rd32(e + 16);
    d->cd_limit = eocd;
    if (d->n_entries == ZIP_U16_MAX || d->cd_size == ZIP_U32_MAX || d->cd_off == ZIP_U32_MAX) {
        if (eocd < ZIP64_LOCATOR_LEN || rd32(b + eocd - ZIP64_LOCATOR_LEN) != ZIP64_LOCATOR_SIG)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                              "%s: zip directory fields are saturated but no zip64 locator precedes "
                              "the end record", label);
        uint64_t z = rd64(b + eocd - ZIP64_LOCATOR_LEN + 8);
        if (z > eocd - ZIP64_LOCATOR_LEN || eocd - ZIP64_LOCATOR_LEN - z < ZIP64_EOCD_LEN ||
            rd32(b + z) != ZIP64_EOCD_SIG)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: zip64 end record missing at offset %llu",
                              label, (unsigned long long)z);
        disk = rd32(b + z + 16);
        cd_disk = rd32(b + z + 20);
        d->n_entries = rd64(b + z + 32);
        d->cd_size = rd64(b + z + 40);
        d->cd_off = rd64(b + z + 48);
        d->cd_limit = z;
    }
    if (disk != 0 || cd_disk != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: multi-disk zip archives are not supported",
                          label);
    if (d->cd_off > d->cd_limit || d->cd_size > d->cd_limit - d->cd_off)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: zip central directory [%llu, +%llu) runs past its end record at %llu",
                          label, (unsigned long long)d->cd_off, (unsigned long long)d->cd_size,
                          (unsigned long long)d->cd_limit);
    if (d->n_entries > d->cd_size / ZIP_CENTRAL_LEN)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: zip directory claims %llu entries but is only %llu bytes", label,
                          (unsigned long long)d->n_entries, (unsigned long long)d->cd_size);
    return LTX2_OK;
}

/* Replaces saturated 32-bit fields with their values from the zip64 extra field. */
static bool apply_zip64_extra(const unsigned char *x, size_t xlen, uint64_t *usize,
                              uint64_t *csize, uint64_t *loc) {
    uint64_t *want[3] = {usize, csize, loc};
    size_t i = 0;
    while (i + 4 <= xlen) {
        uint16_t id = rd16(x + i), n = rd16(x + i + 2);
        if (i + 4 + n > xlen) return false;
        if (id == ZIP64_EXTRA_ID) {
            size_t k = i + 4;
            for (int f = 0; f < 3; f++) {
                if (*want[f] != ZIP_U32_MAX) continue;
                if (k + 8 > i + 4 + n) return false;
                *want[f] = rd64(x + k);
                k += 8;
            }
            return true;
        }
        i += 4 + (size_t)n;
    }
    return *usize != ZIP_U32_MAX && *csize != ZIP_U32_MAX && *loc != ZIP_U32_MAX;
}

#ifdef LTX2_HAVE_ZLIB
static ltx2_status inflate_member(ltx2_context *ctx, const char *label, const char *name,
                                  const unsigned char *src, uint64_t csize, unsigned char *dst,
                                  uint64_t usize) {
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: zlib inflateInit failed", label);
    uint64_t in_pos = 0, out_pos = 0;
    unsigned char probe; /* catches output beyond the declared size */
    bool probing = false;
    ltx2_status st = LTX2_OK;
    for (;;) {
        if (zs.avail_in == 0 && in_pos < csize) {
            uInt c = (uInt)(csize - in_pos < ZLIB_CHUNK ? csize - in_pos : ZLIB_CHUNK);
            zs.next_in = (Bytef *)(src + in_pos);
            zs.avail_in = c;
            in_pos += c;
        }
        if (zs.avail_out == 0) {
            if (probing) {
                st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                                "%s: member '%s' inflates to more than its declared %llu bytes",
                                label, name, (unsigned long long)usize);
                break;
            }
            if (out_pos < usize) {
                uInt c = (uInt)(usize - out_pos < ZLIB_CHUNK ? usize - out_pos : ZLIB_CHUNK);
                zs.next_out = dst + out_pos;
                zs.avail_out = c;
                out_pos += c;
            } else {
                zs.next_out = &probe;
                zs.avail_out = 1;
                probing = true;
            }
        }
        int zr = inflate(&zs, Z_NO_FLUSH);
        if (zr == Z_STREAM_END) break;
        if (zr == Z_BUF_ERROR && zs.avail_in == 0 && in_pos == csize) {
            st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: member '%s': deflate stream is truncated",
                            label, name);
            break;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: member '%s': corrupt deflate data (%s)",
                            label, name, zs.msg ? zs.msg : "zlib error");
            break;
        }
    }
    if (st == LTX2_OK && (uint64_t)zs.total_out != usize)
        st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                        "%s: member '%s' inflates to %llu bytes, directory says %llu", label, name,
                        (unsigned long long)zs.total_out, (unsigned long long)usize);
    inflateEnd(&zs);
    return st;
}
#endif

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Reads one central-directory entry at *pos and its member into z (slot z->n). */
static ltx2_status read_member(ltx2_context *ctx, const unsigned char *b, uint64_t size,
                               const char *label, const zip_dir *d, uint64_t *pos, ltx2_npz *z) {
    uint64_t cd_end = d->cd_off + d->cd_size;
    const unsigned char *c = b + *pos;
    if (cd_end - *pos < ZIP_CENTRAL_LEN || rd32(c) != ZIP_CENTRAL_SIG)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: bad zip central directory entry at offset %llu",
                          label, (unsigned long long)*pos);
    uint16_t flags = rd16(c + 8), method = rd16(c + 10);
    uint32_t crc = rd32(c + 16);
    uint64_t csize = rd32(c + 20), usize = rd32(c + 24), loc = rd32(c + 42);
    size_t nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
    if (cd_end - *pos - ZIP_CENTRAL_LEN < (uint64_t)nlen + xlen + clen)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: zip central directory entry at offset %llu runs past the directory",
                          label, (unsigned long long)*pos);
    const char *raw_name = (const char *)c + ZIP_CENTRAL_LEN;
    *pos += ZIP_CENTRAL_LEN + nlen + xlen + clen;
    if (memchr(raw_name, '\0', nlen) || nlen < 5 || memcmp(raw_name + nlen - 4, ".npy", 4) != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: member '%.*s' is not a .npy array (an .npz holds only name.npy "
                          "members)", label, (int)(nlen < 200 ? nlen : 200), raw_name);
    char *name = malloc(nlen - 3);
    if (!name) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", label);
    memcpy(name, raw_name, nlen - 4);
    name[nlen - 4] = '\0';
    z->names[z->n] = name; /* owned by z from here on, even on error */
    z->n++;
    ltx2_array *arr = &z->arrays[z->n - 1];

    if ((usize == ZIP_U32_MAX || csize == ZIP_U32_MAX || loc == ZIP_U32_MAX) &&
        !apply_zip64_extra(c + ZIP_CENTRAL_LEN + nlen, xlen, &usize, &csize, &loc))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: member '%s': bad zip64 extra field", label,
                          name);
    if (flags & 1)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: member '%s' is encrypted", label, name);
    if (loc > size || size - loc < ZIP_LOCAL_LEN || rd32(b + loc) != ZIP_LOCAL_SIG)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: member '%s': no local header at offset %llu", label, name,
                          (unsigned long long)loc);
    size_t lnlen = rd16(b + loc + 26), lxlen = rd16(b + loc + 28);
    if (size - loc - ZIP_LOCAL_LEN < (uint64_t)lnlen + lxlen || lnlen != nlen ||
        memcmp(b + loc + ZIP_LOCAL_LEN, raw_name, nlen) != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: member '%s': local header name differs from the directory's", label,
                          name);
    uint64_t data_off = loc + ZIP_LOCAL_LEN + lnlen + lxlen;
    if (csize > size - data_off)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: member '%s': %llu compressed bytes at offset %llu run past the end "
                          "of the file (%llu bytes; truncated?)", label, name,
                          (unsigned long long)csize, (unsigned long long)data_off,
                          (unsigned long long)size);
    const unsigned char *src = b + data_off;
    char mlabel[LTX2_ERROR_CAP / 2];
    snprintf(mlabel, sizeof(mlabel), "%s:%s.npy", label, name);

    if (method == 0) {
        if (csize != usize)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                              "%s: stored member '%s' has compressed size %llu != size %llu", label,
                              name, (unsigned long long)csize, (unsigned long long)usize);
        uint32_t got = crc32_update(0, src, usize);
        if (got != crc)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                              "%s: member '%s': CRC-32 mismatch (directory 0x%08x, data 0x%08x); "
                              "the file is corrupt", label, name, crc, got);
        return ltx2_npy_parse(ctx, src, (size_t)usize, mlabel, arr);
    }
    if (method != 8)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s: member '%s' uses zip compression method %u (only stored and deflate "
                          "are supported)", label, name, method);
#ifdef LTX2_HAVE_ZLIB
    if (usize / DEFLATE_MAX_RATIO > csize)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: member '%s' claims %llu bytes from %llu compressed, beyond deflate's "
                          "maximum ratio", label, name, (unsigned long long)usize,
                          (unsigned long long)csize);
    if (usize >= SIZE_MAX)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: member '%s' is too large", label, name);
    unsigned char *tmp = malloc(usize ? (size_t)usize : 1);
    if (!tmp)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: cannot allocate %llu bytes to inflate '%s'",
                          label, (unsigned long long)usize, name);
    ltx2_status st = inflate_member(ctx, label, name, src, csize, tmp, usize);
    if (st == LTX2_OK) {
        uint32_t got = crc32_update(0, tmp, usize);
        if (got != crc)
            st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                            "%s: member '%s': CRC-32 mismatch (directory 0x%08x, data 0x%08x); the "
                            "file is corrupt", label, name, crc, got);
    }
    if (st == LTX2_OK) st = ltx2_npy_parse(ctx, tmp, (size_t)usize, mlabel, arr);
    free(tmp);
    return st;
#else
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                      "%s: member '%s' is deflate-compressed (np.savez_compressed) but this build "
                      "has no zlib: install zlib1g-dev and rebuild, or save with np.savez", label,
                      name);
#endif
}

ltx2_status ltx2_npz_parse(ltx2_context *ctx, const void *buf, size_t size, const char *label,
                           ltx2_npz *out) {
    memset(out, 0, sizeof(*out));
    if (!label) label = "<memory>";
    if (!buf && size) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: NULL buffer", label);
    const unsigned char *b = buf;
    zip_dir d = {0};
    LTX2_TRY(find_directory(ctx, b, size, label, &d));
    size_t n = (size_t)d.n_entries;
    out->names = calloc(n ? n : 1, sizeof(*out->names));
    out->arrays = calloc(n ? n : 1, sizeof(*out->arrays));
    if (!out->names || !out->arrays) {
        ltx2_npz_free(out);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory for %zu members", label, n);
    }
    uint64_t pos = d.cd_off;
    ltx2_status st = LTX2_OK;
    for (size_t i = 0; i < n && st == LTX2_OK; i++) st = read_member(ctx, b, size, label, &d, &pos, out);
    if (st == LTX2_OK && n > 1) {
        char **sorted = malloc(n * sizeof(*sorted));
        if (!sorted) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", label);
        } else {
            memcpy(sorted, out->names, n * sizeof(*sorted));
            qsort(sorted, n, sizeof(*sorted), cmp_str);
            for (size_t i = 1; i < n && st == LTX2_OK; i++)
                if (strcmp(sorted[i - 1], sorted[i]) == 0)
                    st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: member '%.200s.npy' appears twice",
                                    label, sorted[i]);
            free(sorted);
        }
    }
    if (st != LTX2_OK) ltx2_npz_free(out);
    return st;
}

ltx2_status ltx2_npz_read(ltx2_context *ctx, const char *path, ltx2_npz *out) {
    memset(out, 0, sizeof(*out));
    ltx2_file_map m;
    LTX2_TRY(ltx2_file_map_open(ctx, path, &m));
    ltx2_status st = ltx2_npz_parse(ctx, m.data, m.size, path, out);
    ltx2_file_map_close(&m);
    return st;
}

typedef struct npz_out_entry {
    uint32_t crc, size, offset;
    size_t name_len;
} npz_out_entry;

ltx2_status ltx2_npz_write(ltx2_context *ctx, const char *path, size_t n, const char *const *names,
                           const ltx2_tensor *tensors) {
    if (!path || (n && (!names || !tensors)))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, ".npz writer: NULL argument");
    for (size_t i = 0; i < n; i++) {
        const ltx2_tensor *t = &tensors[i];
        if (!names[i] || !names[i][0] || strlen(names[i]) > ZIP_U16_MAX - 4)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: member %zu has an empty or too long "
                              "name", path, i);
        if (t->device != LTX2_DEVICE_CPU || !ltx2_tensor_is_contiguous(t) ||
            (!t->data && ltx2_tensor_nbytes(t)))
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                              "%s: member '%s' must be a contiguous CPU tensor with data", path,
                              names[i]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: member '%s' given twice", path,
                                  names[i]);
    }
    npz_out_entry *ents = calloc(n ? n : 1, sizeof(*ents));
    if (!ents) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", path);
    ltx2_file_writer w;
    ltx2_status st = ltx2_file_writer_open(ctx, path, &w);
    if (st != LTX2_OK) {
        free(ents);
        return st;
    }
    char head[LTX2_NPY_HEADER_MAX];
    unsigned char rec[ZIP_CENTRAL_LEN];
    for (size_t i = 0; i < n && st == LTX2_OK; i++) {
        const ltx2_tensor *t = &tensors[i];
        size_t hn;
        st = ltx2_npy_header(ctx, t, head, sizeof(head), &hn);
        if (st != LTX2_OK) {
            ltx2_error_prefix(ctx, "%s: member '%s'", path, names[i]);
            break;
        }
        uint64_t nb = ltx2_tensor_nbytes(t);
        size_t name_len = strlen(names[i]) + 4;
        uint64_t end = w.written + ZIP_LOCAL_LEN + name_len + hn + nb;
        if (hn + nb >= ZIP_U32_MAX || end >= ZIP_U32_MAX) {
            st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                            "%s: .npz archives over 4 GiB are not supported (member '%s'); use "
                            "safetensors", path, names[i]);
            break;
        }
        ents[i].crc = crc32_update(crc32_update(0, head, hn), t->data, nb);
        ents[i].size = (uint32_t)(hn + nb);
        ents[i].offset = (uint32_t)w.written;
        ents[i].name_len = name_len;
        memset(rec, 0, sizeof(rec));
        wr32(rec, ZIP_LOCAL_SIG);
        wr16(rec + 4, ZIP_VERSION_20);
        wr16(rec + 12, ZIP_DOS_DATE_1980);
        wr32(rec + 14, ents[i].crc);
        wr32(rec + 18, ents[i].size);
        wr32(rec + 22, ents[i].size);
        wr16(rec + 26, (uint32_t)name_len);
        st = ltx2_file_writer_write(ctx, &w, rec, ZIP_LOCAL_LEN);
        if (st == LTX2_OK) st = ltx2_file_writer_write(ctx, &w, names[i], name_len - 4);
        if (st == LTX2_OK) st = ltx2_file_writer_write(ctx, &w, ".npy", 4);
        if (st == LTX2_OK) st = ltx2_file_writer_write(ctx, &w, head, hn);
        if (st == LTX2_OK && nb) st = ltx2_file_writer_write(ctx, &w, t->data, (size_t)nb);
    }
    uint64_t cd_off = w.written;
    for (size_t i = 0; i < n && st == LTX2_OK; i++) {
        memset(rec, 0, sizeof(rec));
        wr32(rec, ZIP_CENTRAL_SIG);
        wr16(rec + 4, ZIP_VERSION_20);
        wr16(rec + 6, ZIP_VERSION_20);
        wr16(rec + 14, ZIP_DOS_DATE_1980);
        wr32(rec + 16, ents[i].crc);
        wr32(rec + 20, ents[i].size);
        wr32(rec + 24, ents[i].size);
        wr16(rec + 28, (uint32_t)ents[i].name_len);
        wr32(rec + 38, ZIP_EXTERNAL_ATTR);
        wr32(rec + 42, ents[i].offset);
        st = ltx2_file_writer_write(ctx, &w, rec, ZIP_CENTRAL_LEN);
        if (st == LTX2_OK) st = ltx2_file_writer_write(ctx, &w, names[i], ents[i].name_len - 4);
        if (st == LTX2_OK) st = ltx2_file_writer_write(ctx, &w, ".npy", 4);
    }
    if (st == LTX2_OK && (n >= ZIP_U16_MAX || w.written >= ZIP_U32_MAX))
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                        "%s: too many members or too large for a non-zip64 archive", path);
    if (st == LTX2_OK) {
        memset(rec, 0, sizeof(rec));
        wr32(rec, ZIP_EOCD_SIG);
        wr16(rec + 8, (uint32_t)n);
        wr16(rec + 10, (uint32_t)n);
        wr32(rec + 12, (uint32_t)(w.written - cd_off));
        wr32(rec + 16, (uint32_t)cd_off);
        st = ltx2_file_writer_write(ctx, &w, rec, ZIP_EOCD_LEN);
    }
    if (st == LTX2_OK) st = ltx2_file_writer_commit(ctx, &w);
    else if (w.fd >= 0 || w.tmp_path) ltx2_file_writer_abort(&w);
    free(ents);
    return st;
}
