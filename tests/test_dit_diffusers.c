/* Diffusers-format loading: weights/tiny/ltx2-tiny-diffusers-<v>/ (transformer/ sharded + index,
 * connectors/) holds the same bf16 values as the single file, so the DiT and the connectors loaded
 * from either layout must give bitwise identical weights and forward outputs. Also: the rename
 * table reproduces every (diffusers key, Lightricks key) pair listed in the keys.txt files in both
 * directions (the VAE, audio VAE and vocoder pairs: their Lightricks names present in the view), the
 * translated config equals the single-file config, and diffusers options the Lightricks model cannot
 * express are refused naming the diffusers key. */
#define _DEFAULT_SOURCE /* mkdtemp, symlink */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/context.h"
#include "core/dtype.h"
#include "io/safetensors.h"
#include "model/connectors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "model/names.h"
#include "dit_inputs.h"
#include "io/json.h"
#include "io/file.h"
#include "test_util.h"

static ltx2_context *g_ctx;

static int mkdir_p(const char *p) { return mkdir(p, 0777) == 0 || access(p, F_OK) == 0 ? 0 : -1; }

/* Every "df_component/name dtype shape  <-  lt_name" line of keys.txt through both directions. */
static void check_key_table(const char *version) {
    char path[1024], line[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-diffusers-%s.keys.txt", LTX2_SOURCE_DIR, version);
    FILE *fp = fopen(path, "r");
    CHECK(fp != NULL, "cannot open %s", path);
    if (!fp) return;
    /* the VAE / audio VAE / vocoder renames need their configs (block positions): the view's names */
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/weights/tiny/ltx2-tiny-diffusers-%s", LTX2_SOURCE_DIR, version);
    ltx2_df_view *view = NULL;
    CHECK(ltx2_df_view_open(g_ctx, dir, &view) == LTX2_OK, "%s: %s", dir, ltx2_last_error(g_ctx));
    int n = 0, bad = 0, n_vae = 0, n_ups = 0;
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#') continue;
        char df[512], lt[512];
        const char *arrow = strstr(line, "<-");
        if (!arrow || sscanf(line, "%511s", df) != 1 || sscanf(arrow + 2, "%511s", lt) != 1) continue;
        if (!strncmp(df, "vae/", 4) || !strncmp(df, "audio_vae/", 10) || !strncmp(df, "vocoder/", 8)) {
            /* the same bytes under the Lightricks name in the view */
            const ltx2_st_tensor *t = view ? ltx2_st_find(ltx2_df_view_file(view), lt) : NULL;
            if (!t && bad++ < 5) CHECK(false, "%s: %s: no %s in the diffusers view", version, df, lt);
            n_vae++;
            continue;
        }
        if (!strncmp(df, "latent_upsampler/", 17)) {
            /* the upsampler keeps Lightricks' names ("<file>:<name>" on the right) */
            const char *colon = strchr(lt, ':');
            if ((!colon || strcmp(colon + 1, df + 17)) && bad++ < 5)
                CHECK(false, "%s: %s is not %s under its own name", version, df, lt);
            n_ups++;
            continue;
        }
        ltx2_df_component comp = strncmp(df, "connectors/", 11) == 0 ? LTX2_DF_CONNECTORS : LTX2_DF_TRANSFORMER;
        const char *name = strchr(df, '/') + 1;
        char got[512], back[512];
        ltx2_df_component bc = LTX2_DF_TRANSFORMER;
        bool ok = ltx2_names_df_to_lt(comp, name, got, sizeof got) && strcmp(got, lt) == 0;
        bool ok2 = ltx2_names_lt_to_df(lt, &bc, back, sizeof back) && bc == comp && strcmp(back, name) == 0;
        if ((!ok || !ok2) && bad++ < 5)
            CHECK(false, "%s: %s -> %s (want %s), back %s", version, df, ok ? "ok" : got, lt, ok2 ? "ok" : back);
        n++;
    }
    fclose(fp);
    ltx2_df_view_close(view);
    CHECK(n > 200 && n_vae > 100 && n_ups > 10 && bad == 0,
          "%s: %d DiT/connector keys, %d VAE/vocoder keys, %d upsampler keys, %d wrong", version, n, n_vae, n_ups, bad);
}

static void check_dit(const char *version) {
    char single[1024], dir[1024], gpath[1024];
    snprintf(single, sizeof single, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(dir, sizeof dir, "%s/weights/tiny/ltx2-tiny-diffusers-%s", LTX2_SOURCE_DIR, version);
    snprintf(gpath, sizeof gpath, "%s/tests/golden/data/dit_blocks_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_dit_weights *a = NULL, *b = NULL;
    ltx2_status st = ltx2_dit_weights_load_file(g_ctx, single, &a);
    CHECK(st == LTX2_OK, "%s single file: %s", version, ltx2_last_error(g_ctx));
    st = ltx2_dit_weights_load_file(g_ctx, dir, &b);
    CHECK(st == LTX2_OK, "%s diffusers: %s", version, ltx2_last_error(g_ctx));
    if (!a || !b) goto out;
    CHECK(memcmp(&a->cfg, &b->cfg, sizeof a->cfg) == 0, "%s: translated config differs from the single file's",
          version);
    CHECK(a->store.n_elems == b->store.n_elems && a->store.n_tensors == b->store.n_tensors, "%s: %zu vs %zu floats",
          version, a->store.n_elems, b->store.n_elems);
    /* the same table in the same order: the stores (padding zeroed) are bytewise equal */
    if (a->store.n_bytes == b->store.n_bytes)
        CHECK(memcmp(a->store.mem, b->store.mem, a->store.n_bytes) == 0, "%s: weights differ", version);

    /* forward on the golden inputs: bitwise equal */
    ltx2_st_file *g = NULL;
    if (ltx2_st_open(g_ctx, gpath, &g) != LTX2_OK) {
        CHECK(false, "%s", ltx2_last_error(g_ctx));
        goto out;
    }
    dit_inputs in;
    const bool have = dit_inputs_load(g_ctx, g, DIT_INPUTS_UNMASKED, &in);
    CHECK(have, "%s: golden inputs", version);
    if (have) {
        const ltx2_dit_forward_params p = in.p;
        size_t nv = (size_t)(p.batch * p.video.T * a->cfg.out_channels);
        size_t na = (size_t)(p.batch * p.audio.T * a->cfg.audio_out_channels);
        float *va = malloc(nv * sizeof(float)), *vb = malloc(nv * sizeof(float));
        float *aa = malloc(na * sizeof(float)), *ab = malloc(na * sizeof(float));
        st = ltx2_dit_forward(g_ctx, a, &p, va, aa);
        CHECK(st == LTX2_OK, "%s forward (single): %s", version, ltx2_last_error(g_ctx));
        st = ltx2_dit_forward(g_ctx, b, &p, vb, ab);
        CHECK(st == LTX2_OK, "%s forward (diffusers): %s", version, ltx2_last_error(g_ctx));
        CHECK(memcmp(va, vb, nv * sizeof(float)) == 0 && memcmp(aa, ab, na * sizeof(float)) == 0,
              "%s: forward outputs differ between layouts", version);
        free(va), free(vb), free(aa), free(ab);
    }
    dit_inputs_free(&in);
    ltx2_st_close(g);
out:
    ltx2_dit_weights_free(a);
    ltx2_dit_weights_free(b);
}

static void check_connectors(const char *version) {
    char single[1024], dir[1024], gpath[1024];
    snprintf(single, sizeof single, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(dir, sizeof dir, "%s/weights/tiny/ltx2-tiny-diffusers-%s", LTX2_SOURCE_DIR, version);
    snprintf(gpath, sizeof gpath, "%s/tests/golden/data/connectors_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_connectors_weights *a = NULL, *b = NULL;
    ltx2_st_file *g = NULL;
    float *hidden = NULL, *mask_f = NULL, *buf = NULL;
    uint8_t *mask = NULL;
    ltx2_status st = ltx2_connectors_weights_load_file(g_ctx, single, &a);
    CHECK(st == LTX2_OK, "%s connectors single: %s", version, ltx2_last_error(g_ctx));
    st = ltx2_connectors_weights_load_file(g_ctx, dir, &b);
    CHECK(st == LTX2_OK, "%s connectors diffusers: %s", version, ltx2_last_error(g_ctx));
    if (!a || !b) goto out;
    CHECK(memcmp(&a->cfg, &b->cfg, sizeof a->cfg) == 0 && a->text_dim == b->text_dim,
          "%s: translated connectors config differs", version);
    if (ltx2_st_open(g_ctx, gpath, &g) != LTX2_OK) {
        CHECK(false, "%s", ltx2_last_error(g_ctx));
        goto out;
    }
    const ltx2_st_tensor *ht = ltx2_st_find(g, "input.hidden");
    int64_t nm = 0;
    hidden = ltx2_st_read_f32(g_ctx, g, "input.hidden", NULL);
    mask_f = ltx2_st_read_f32(g_ctx, g, "input.mask", &nm);
    CHECK(ht && ht->ndim == 4 && hidden && mask_f, "%s: connector golden inputs", version);
    if (!ht || !hidden || !mask_f) goto out;
    mask = malloc((size_t)nm);
    for (int64_t i = 0; i < nm; i++) mask[i] = mask_f[i] != 0.0f;
    ltx2_text_hidden in = {hidden, mask, ht->shape[0], ht->shape[1], ht->shape[2], ht->shape[3], false, NULL};
    const size_t nv = (size_t)(in.B * in.S * a->cfg.video.inner_dim), na = (size_t)(in.B * in.S * a->cfg.audio.inner_dim);
    const size_t per = nv + na;
    buf = malloc(2 * per * sizeof(float));
    uint8_t *mo = malloc((size_t)(2 * in.B * in.S));
    st = ltx2_connectors_forward(g_ctx, a, &in, NULL, NULL, buf, buf + nv, mo);
    CHECK(st == LTX2_OK, "%s connectors forward (single): %s", version, ltx2_last_error(g_ctx));
    st = ltx2_connectors_forward(g_ctx, b, &in, NULL, NULL, buf + per, buf + per + nv, mo + in.B * in.S);
    CHECK(st == LTX2_OK, "%s connectors forward (diffusers): %s", version, ltx2_last_error(g_ctx));
    CHECK(memcmp(buf, buf + per, per * sizeof(float)) == 0, "%s: connector outputs differ between layouts", version);
    free(mo);
out:
    free(hidden), free(mask_f), free(mask), free(buf);
    ltx2_st_close(g);
    ltx2_connectors_weights_free(a);
    ltx2_connectors_weights_free(b);
}

/* A copy of the 2.3 diffusers dir (shards symlinked) whose transformer config has `from` replaced
 * by `to`; returns the load status and leaves the message in g_ctx. */
static ltx2_status load_edited(const char *tmp, const char *component, const char *from, const char *to) {
    char src[1024], dst[1024], path[1200], text[8192];
    snprintf(src, sizeof src, "%s/weights/tiny/ltx2-tiny-diffusers-2.3", LTX2_SOURCE_DIR);
    snprintf(dst, sizeof dst, "%s/edited-%s-%u", tmp, component, (unsigned)(strlen(from) * 31 + strlen(to)));
    if (mkdir_p(dst) != 0) return LTX2_ERR_IO;
    const char *comps[2] = {"transformer", "connectors"};
    const char *files[7] = {"diffusion_pytorch_model.safetensors.index.json",
                            "diffusion_pytorch_model-00001-of-00005.safetensors",
                            "diffusion_pytorch_model-00002-of-00005.safetensors",
                            "diffusion_pytorch_model-00003-of-00005.safetensors",
                            "diffusion_pytorch_model-00004-of-00005.safetensors",
                            "diffusion_pytorch_model-00005-of-00005.safetensors",
                            "diffusion_pytorch_model.safetensors"};
    for (int c = 0; c < 2; c++) {
        snprintf(path, sizeof path, "%s/%s", dst, comps[c]);
        if (mkdir_p(path) != 0) return LTX2_ERR_IO;
        for (int i = 0; i < 7; i++) {
            char s[1300], d[1300];
            snprintf(s, sizeof s, "%s/%s/%s", src, comps[c], files[i]);
            snprintf(d, sizeof d, "%s/%s/%s", dst, comps[c], files[i]);
            if (access(s, F_OK) == 0 && access(d, F_OK) != 0 && symlink(s, d) != 0) return LTX2_ERR_IO;
        }
        char s[1300];
        snprintf(s, sizeof s, "%s/%s/config.json", src, comps[c]);
        FILE *fp = fopen(s, "r");
        if (!fp) return LTX2_ERR_IO;
        size_t n = fread(text, 1, sizeof text - 1, fp);
        fclose(fp);
        text[n] = '\0';
        char out[8400];
        const char *hit = strcmp(comps[c], component) == 0 ? strstr(text, from) : NULL;
        if (hit)
            snprintf(out, sizeof out, "%.*s%s%s", (int)(hit - text), text, to, hit + strlen(from));
        else
            snprintf(out, sizeof out, "%s", text);
        snprintf(s, sizeof s, "%s/%s/config.json", dst, comps[c]);
        fp = fopen(s, "w");
        if (!fp) return LTX2_ERR_IO;
        fputs(out, fp);
        fclose(fp);
    }
    if (strcmp(component, "connectors") == 0) {
        ltx2_connectors_weights *w = NULL;
        ltx2_status st = ltx2_connectors_weights_load_file(g_ctx, dst, &w);
        ltx2_connectors_weights_free(w);
        return st;
    }
    ltx2_dit_weights *w = NULL;
    ltx2_status st = ltx2_dit_weights_load_file(g_ctx, dst, &w);
    ltx2_dit_weights_free(w);
    return st;
}

static void check_errors(void) {
    char tmpl[] = "/tmp/ltx2_dit_diffusers_XXXXXX";
    char *tmp = mkdtemp(tmpl);
    CHECK(tmp != NULL, "mkdtemp");
    if (!tmp) return;
    ltx2_status st = load_edited(tmp, "transformer", "\"patch_size\": 1", "\"patch_size\": 2");
    CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "\"patch_size\""), "patch_size 2: %s",
          ltx2_last_error(g_ctx));
    st = load_edited(tmp, "transformer", "\"audio_gated_attn\": true", "\"audio_gated_attn\": false");
    CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "audio_gated_attn"), "gated mismatch: %s",
          ltx2_last_error(g_ctx));
    st = load_edited(tmp, "transformer", "\"rope_type\": \"split\",", "");
    CHECK(st == LTX2_ERR_NOT_FOUND && strstr(ltx2_last_error(g_ctx), "rope_type"), "no rope_type: %s",
          ltx2_last_error(g_ctx));
    st = load_edited(tmp, "connectors", "\"video_connector_num_learnable_registers\": 128",
                     "\"video_connector_num_learnable_registers\": 64");
    CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "video_connector_num_learnable_registers"),
          "registers 64: %s", ltx2_last_error(g_ctx));
    st = load_edited(tmp, "connectors", "\"per_modality_projections\": true", "\"per_modality_projections\": false");
    CHECK(st != LTX2_OK && strstr(ltx2_last_error(g_ctx), "per_modality_projections"), "V1/V2 mismatch: %s",
          ltx2_last_error(g_ctx));
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0, "cleanup");
}

/* The tiny connectors configs as MaxDiffusion reads them (text_encoders_ltx2.py sizes the video and
 * audio connectors by video_hidden_dim / audio_hidden_dim, for 2.0 too, where diffusers ignores
 * them): each must be its connector's width, heads x head_dim (issue #15: MaxDiffusion loads the
 * tiny folders as they are). */
static void check_connector_widths(const char *v) {
    char path[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-diffusers-%s/connectors/config.json", LTX2_SOURCE_DIR, v);
    char *text = NULL;
    size_t n = 0;
    ltx2_json_doc *doc = NULL;
    const bool ok = ltx2_file_read_all(g_ctx, path, &text, &n) == LTX2_OK &&
                    ltx2_json_parse(g_ctx, text, n, path, &doc) == LTX2_OK;
    CHECK(ok, "%s: %s", path, ltx2_last_error(g_ctx));
    if (ok) {
        const ltx2_json *root = ltx2_json_root(doc);
        const char *streams[2] = {"video", "audio"};
        for (int s = 0; s < 2; s++) {
            char kh[64], kd[64], kw[64];
            snprintf(kh, sizeof kh, "%s_connector_num_attention_heads", streams[s]);
            snprintf(kd, sizeof kd, "%s_connector_attention_head_dim", streams[s]);
            snprintf(kw, sizeof kw, "%s_hidden_dim", streams[s]);
            int64_t h = 0, d = 0, w = 0;
            CHECK(ltx2_json_get_int(root, kh, &h) && ltx2_json_get_int(root, kd, &d) && ltx2_json_get_int(root, kw, &w) &&
                      w == h * d,
                  "%s: %s %lld, but the connector is %lld x %lld wide", v, kw, (long long)w, (long long)h, (long long)d);
        }
    }
    ltx2_json_free(doc);
    free(text);
}

/* Activation names of MaxDiffusion's / diffusers' DiT modules in our spelling (ltx2 compare). */
static void check_module_names(void) {
    static const char *const cases[][2] = {
        {"proj_in.out", "patchify_proj.out"},
        {"audio_time_embed.emb.out", "audio_adaln_single.emb.out"},
        {"av_cross_attn_video_a2v_gate.out", "av_ca_a2v_gate_adaln_single.out"},
        {"transformer_blocks.attn1.norm_q.out", "transformer_blocks.attn1.q_norm.out"},
        {"dit.audio_rope.sin", "dit.audio_args.pe.sin"},
        {"transformer_blocks.3.ff.out", "transformer_blocks.3.ff.out"}, /* ours: unchanged */
        {"proj_inx.out", "proj_inx.out"},                             /* whole parts only */
    };
    char out[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool ok = ltx2_names_module_to_lt(cases[i][0], out, sizeof out);
        CHECK(ok && strcmp(out, cases[i][1]) == 0, "module name %s -> %s, want %s", cases[i][0], ok ? out : "(false)",
              cases[i][1]);
    }
    CHECK(!ltx2_names_module_to_lt("time_embed.out", out, 8), "module name: a short buffer must fail");
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    const char *versions[2] = {"2.0", "2.3"};
    for (int i = 0; i < 2; i++) {
        check_key_table(versions[i]);
        check_dit(versions[i]);
        check_connectors(versions[i]);
        check_connector_widths(versions[i]);
    }
    check_errors();
    check_module_names();
    ltx2_context_free(g_ctx);
    return test_finish();
}
