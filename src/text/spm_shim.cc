// The C++ side of spm.h: SentencePieceProcessor behind extern "C" functions. No exception
// crosses the seam (every entry catches), and no engine header is included, so this file depends
// on SentencePiece alone.
#include "text/spm.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sentencepiece_processor.h>

#include <string>
#include <vector>

struct ltx2_spm {
    sentencepiece::SentencePieceProcessor proc;
};

extern "C" int ltx2_spm_available(void) { return 1; }

extern "C" int ltx2_spm_open(const char *path, ltx2_spm **out, char *err, size_t cap) {
    *out = nullptr;
    ltx2_spm *sp = new (std::nothrow) ltx2_spm;
    if (!sp) {
        std::snprintf(err, cap, "out of memory loading the SentencePiece model %s", path);
        return -1;
    }
    try {
        const auto st = sp->proc.Load(path);
        if (!st.ok()) {
            std::snprintf(err, cap, "%s is not a SentencePiece model: %s", path, st.ToString().c_str());
            delete sp;
            return -1;
        }
    } catch (const std::exception &e) {
        std::snprintf(err, cap, "loading the SentencePiece model %s: %s", path, e.what());
        delete sp;
        return -1;
    }
    *out = sp;
    return 0;
}

extern "C" void ltx2_spm_close(ltx2_spm *sp) { delete sp; }

extern "C" int64_t ltx2_spm_piece_count(const ltx2_spm *sp) { return sp->proc.GetPieceSize(); }

extern "C" ltx2_spm_ids ltx2_spm_special_ids(const ltx2_spm *sp) {
    ltx2_spm_ids ids;
    ids.bos = sp->proc.bos_id();
    ids.eos = sp->proc.eos_id();
    ids.pad = sp->proc.pad_id();
    ids.unk = sp->proc.unk_id();
    return ids;
}

extern "C" int ltx2_spm_encode(const ltx2_spm *sp, const char *text, size_t len, int32_t **ids, size_t *n,
                               char *err, size_t cap) {
    *ids = nullptr;
    *n = 0;
    try {
        std::vector<int> v;
        const auto st = sp->proc.Encode(absl::string_view(text, len), &v);
        if (!st.ok()) {
            std::snprintf(err, cap, "SentencePiece could not encode the text: %s", st.ToString().c_str());
            return -1;
        }
        int32_t *a = static_cast<int32_t *>(std::malloc((v.empty() ? 1 : v.size()) * sizeof(int32_t)));
        if (!a) {
            std::snprintf(err, cap, "out of memory for %zu token ids", v.size());
            return -1;
        }
        for (size_t i = 0; i < v.size(); i++) a[i] = v[i];
        *ids = a;
        *n = v.size();
        return 0;
    } catch (const std::exception &e) {
        std::snprintf(err, cap, "SentencePiece could not encode the text: %s", e.what());
        return -1;
    }
}
