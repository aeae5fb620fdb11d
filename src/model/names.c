/* The diffusers <-> Lightricks key tables (tensor names and config keys) and the diffusers-directory
 * view built from them. Sources: diffusers 0.42.1 scripts/convert_ltx2_to_diffusers.py renames
 * (spec section 2.2-2.4, verified against weights/tiny/ltx2-tiny-diffusers-*.keys.txt, which list
 * the Lightricks source of every diffusers key) and the config table of spec section 1.1. */
#include "model/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/file.h"
#include "io/json.h"
#include "model/names_vae.h"

#define LT_DIT_PREFIX "model.diffusion_model."
#define LT_TEXT_PROJ_PREFIX "text_embedding_projection."
#define NAME_CAP 512

/* ---- tensor names ---- */

#define SCOPE_T (1u << LTX2_DF_TRANSFORMER)
#define SCOPE_C (1u << LTX2_DF_CONNECTORS)

/* PREFIX rows rename the start of a name (the first match wins); PART rows rename one whole
 * dot-separated component anywhere after it. MODULE rows name modules without weights (only their
 * activations have names, in dumps): ltx2_names_module_to_lt alone reads them. */
typedef enum rename_kind { RENAME_PREFIX, RENAME_PART, RENAME_MODULE } rename_kind;
typedef struct rename_row {
    unsigned scopes;
    rename_kind kind;
    const char *df, *lt;
} rename_row;

static const rename_row k_renames[] = {
    /* DiT top level (LT names relative to model.diffusion_model.) */
    {SCOPE_T, RENAME_PREFIX, "proj_in.", "patchify_proj."},
    {SCOPE_T, RENAME_PREFIX, "audio_proj_in.", "audio_patchify_proj."},
    {SCOPE_T, RENAME_PREFIX, "time_embed.", "adaln_single."},
    {SCOPE_T, RENAME_PREFIX, "audio_time_embed.", "audio_adaln_single."},
    {SCOPE_T, RENAME_PREFIX, "av_cross_attn_video_scale_shift.", "av_ca_video_scale_shift_adaln_single."},
    {SCOPE_T, RENAME_PREFIX, "av_cross_attn_audio_scale_shift.", "av_ca_audio_scale_shift_adaln_single."},
    {SCOPE_T, RENAME_PREFIX, "av_cross_attn_video_a2v_gate.", "av_ca_a2v_gate_adaln_single."},
    {SCOPE_T, RENAME_PREFIX, "av_cross_attn_audio_v2a_gate.", "av_ca_v2a_gate_adaln_single."},
    {SCOPE_T, RENAME_PREFIX, "prompt_adaln.", "prompt_adaln_single."},
    {SCOPE_T, RENAME_PREFIX, "audio_prompt_adaln.", "audio_prompt_adaln_single."},
    /* RoPE tables (MaxDiffusion's modules; our dumps name the per-stream args they fill) */
    {SCOPE_T, RENAME_MODULE, "rope.", "video_args.pe."},
    {SCOPE_T, RENAME_MODULE, "audio_rope.", "audio_args.pe."},
    {SCOPE_T, RENAME_MODULE, "cross_attn_rope.", "video_args.cross_pe."},
    {SCOPE_T, RENAME_MODULE, "cross_attn_audio_rope.", "audio_args.cross_pe."},
    /* per block */
    {SCOPE_T, RENAME_PART, "video_a2v_cross_attn_scale_shift_table", "scale_shift_table_a2v_ca_video"},
    {SCOPE_T, RENAME_PART, "audio_a2v_cross_attn_scale_shift_table", "scale_shift_table_a2v_ca_audio"},
    {SCOPE_T | SCOPE_C, RENAME_PART, "norm_q", "q_norm"},
    {SCOPE_T | SCOPE_C, RENAME_PART, "norm_k", "k_norm"},
    /* text projection and connectors (LT names are full) */
    {SCOPE_C, RENAME_PREFIX, "text_proj_in.", LT_TEXT_PROJ_PREFIX "aggregate_embed."},
    {SCOPE_C, RENAME_PREFIX, "video_text_proj_in.", LT_TEXT_PROJ_PREFIX "video_aggregate_embed."},
    {SCOPE_C, RENAME_PREFIX, "audio_text_proj_in.", LT_TEXT_PROJ_PREFIX "audio_aggregate_embed."},
    {SCOPE_C, RENAME_PREFIX, "video_connector.", LT_DIT_PREFIX "video_embeddings_connector."},
    {SCOPE_C, RENAME_PREFIX, "audio_connector.", LT_DIT_PREFIX "audio_embeddings_connector."},
    {SCOPE_C, RENAME_PART, "transformer_blocks", "transformer_1d_blocks"},
};
#define N_RENAMES (sizeof k_renames / sizeof k_renames[0])

static bool starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* Appends rest to out, renaming whole components per the PART rows of scope (df -> lt or back). */
static bool rename_parts(unsigned scope, bool to_lt, const char *rest, char *out, size_t cap, size_t len) {
    const char *p = rest;
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        const char *rep = NULL;
        for (size_t i = 0; i < N_RENAMES && !rep; i++) {
            const rename_row *r = &k_renames[i];
            if (r->kind != RENAME_PART || !(r->scopes & scope)) continue;
            const char *from = to_lt ? r->df : r->lt;
            if (strlen(from) == n && strncmp(p, from, n) == 0) rep = to_lt ? r->lt : r->df;
        }
        const char *src = rep ? rep : p;
        size_t m = rep ? strlen(rep) : n;
        if (len + m + 2 > cap) return false;
        memcpy(out + len, src, m);
        len += m;
        if (dot) out[len++] = '.';
        out[len] = '\0';
        p = dot ? dot + 1 : p + n;
    }
    return true;
}

bool ltx2_names_df_to_lt(ltx2_df_component comp, const char *df, char *out, size_t cap) {
    if (!df || !out || cap == 0) return false;
    const unsigned scope = 1u << comp;
    const char *head = comp == LTX2_DF_TRANSFORMER ? LT_DIT_PREFIX : LT_TEXT_PROJ_PREFIX;
    const char *mid = "", *rest = df;
    for (size_t i = 0; i < N_RENAMES; i++) {
        const rename_row *r = &k_renames[i];
        if (r->kind == RENAME_PREFIX && (r->scopes & scope) && starts_with(df, r->df)) {
            if (comp == LTX2_DF_CONNECTORS) head = "";
            mid = r->lt;
            rest = df + strlen(r->df);
            break;
        }
    }
    int n = snprintf(out, cap, "%s%s", head, mid);
    if (n < 0 || (size_t)n >= cap) return false;
    return rename_parts(scope, true, rest, out, cap, (size_t)n);
}

bool ltx2_names_lt_to_df(const char *lt, ltx2_df_component *comp, char *out, size_t cap) {
    if (!lt || !comp || !out || cap == 0) return false;
    /* connectors and projection first: their LT names also start with model.diffusion_model. */
    for (size_t i = 0; i < N_RENAMES; i++) {
        const rename_row *r = &k_renames[i];
        if (r->kind == RENAME_PREFIX && (r->scopes & SCOPE_C) && starts_with(lt, r->lt)) {
            *comp = LTX2_DF_CONNECTORS;
            int n = snprintf(out, cap, "%s", r->df);
            if (n < 0 || (size_t)n >= cap) return false;
            return rename_parts(SCOPE_C, false, lt + strlen(r->lt), out, cap, (size_t)n);
        }
    }
    if (!starts_with(lt, LT_DIT_PREFIX)) return false;
    const char *rest = lt + strlen(LT_DIT_PREFIX);
    const char *mid = "";
    for (size_t i = 0; i < N_RENAMES; i++) {
        const rename_row *r = &k_renames[i];
        if (r->kind == RENAME_PREFIX && (r->scopes & SCOPE_T) && starts_with(rest, r->lt)) {
            mid = r->df;
            rest += strlen(r->lt);
            break;
        }
    }
    *comp = LTX2_DF_TRANSFORMER;
    int n = snprintf(out, cap, "%s", mid);
    if (n < 0 || (size_t)n >= cap) return false;
    return rename_parts(SCOPE_T, false, rest, out, cap, (size_t)n);
}

/* A row's name as one component: PREFIX and MODULE names end in '.'. */
static size_t part_len(const char *name, rename_kind kind) {
    const size_t n = strlen(name);
    return kind == RENAME_PART ? n : n - 1;
}

bool ltx2_names_module_to_lt(const char *name, char *out, size_t cap) {
    if (!name || !out || cap == 0) return false;
    size_t len = 0;
    for (const char *p = name;;) {
        const char *dot = strchr(p, '.');
        const size_t n = dot ? (size_t)(dot - p) : strlen(p);
        const char *src = p;
        size_t m = n;
        for (size_t i = 0; i < N_RENAMES; i++) {
            const rename_row *r = &k_renames[i];
            if ((r->scopes & SCOPE_T) && part_len(r->df, r->kind) == n && strncmp(p, r->df, n) == 0) {
                src = r->lt;
                m = part_len(r->lt, r->kind);
                break;
            }
        }
        if (len + m + 2 > cap) return false;
        memcpy(out + len, src, m);
        len += m;
        if (!dot) break;
        out[len++] = '.';
        p = dot + 1;
    }
    out[len] = '\0';
    return true;
}

/* ---- config keys ---- */

typedef struct key_map {
    const char *df, *lt;
} key_map;

/* diffusers transformer config -> Lightricks "transformer" keys, value copied as is. */
static const key_map k_tr_keys[] = {
    {"num_layers", "num_layers"},
    {"num_attention_heads", "num_attention_heads"},
    {"attention_head_dim", "attention_head_dim"},
    {"audio_num_attention_heads", "audio_num_attention_heads"},
    {"audio_attention_head_dim", "audio_attention_head_dim"},
    {"in_channels", "in_channels"},
    {"out_channels", "out_channels"},
    {"audio_in_channels", "audio_in_channels"},
    {"audio_out_channels", "audio_out_channels"},
    {"cross_attention_dim", "cross_attention_dim"},
    {"audio_cross_attention_dim", "audio_cross_attention_dim"},
    {"caption_channels", "caption_channels"},
    {"norm_eps", "norm_eps"},
    {"timestep_scale_multiplier", "timestep_scale_multiplier"},
    {"cross_attn_timestep_scale_multiplier", "av_ca_timestep_scale_multiplier"},
    {"rope_theta", "positional_embedding_theta"},
    {"rope_type", "rope_type"},
    {"attention_bias", "attention_bias"},
    {"activation_fn", "activation_fn"},
    {"norm_elementwise_affine", "norm_elementwise_affine"},
    {"gated_attn", "apply_gated_attention"},
    {"cross_attn_mod", "cross_attention_adaln"},
};

/* diffusers connectors config -> Lightricks "transformer" keys. */
static const key_map k_conn_keys[] = {
    {"video_connector_num_attention_heads", "connector_num_attention_heads"},
    {"video_connector_attention_head_dim", "connector_attention_head_dim"},
    {"video_connector_num_layers", "connector_num_layers"},
    {"audio_connector_num_attention_heads", "audio_connector_num_attention_heads"},
    {"audio_connector_attention_head_dim", "audio_connector_attention_head_dim"},
    {"audio_connector_num_layers", "audio_connector_num_layers"},
    {"video_gated_attn", "connector_apply_gated_attention"},
};

/* Keys the single-file config has once but diffusers per modality: both must agree. */
static const key_map k_tr_equal[] = {
    {"gated_attn", "audio_gated_attn"},
    {"cross_attn_mod", "audio_cross_attn_mod"},
    {"cross_attn_mod", "use_prompt_adaln_single"},
};
static const key_map k_conn_equal[] = {
    {"video_gated_attn", "audio_gated_attn"},
    {"per_modality_projections", "proj_bias"},
};

/* diffusers options the Lightricks architecture fixes: when present they must have this value
 * (JSON text). Registers: ltx-core always uses 128 (PARITY C8), diffusers reads the config. */
static const key_map k_tr_required[] = {
    {"patch_size", "1"},          {"patch_size_t", "1"},      {"audio_patch_size", "1"},
    {"audio_patch_size_t", "1"},  {"attention_out_bias", "true"}, {"ff_bias", "true"},
    {"audio_ff_bias", "true"},    {"use_keyframes_abs_pos_embedding", "false"},
    {"qk_norm", "\"rms_norm_across_heads\""},
};
static const key_map k_conn_required[] = {
    {"video_connector_num_learnable_registers", "128"},
    {"audio_connector_num_learnable_registers", "128"},
};

/* Lightricks keys ltx-core checks (check_config_value) that diffusers hard-wires, written with the
 * value diffusers' LTX2VideoTransformer3DModel implements. */
static const key_map k_lt_fixed[] = {
    {"dropout", "0.0"},
    {"num_vector_embeds", "null"},
    {"num_embeds_ada_norm", "1000"},
    {"use_linear_projection", "false"},
    {"only_cross_attention", "false"},
    {"cross_attention_norm", "true"},
    {"double_self_attention", "false"},
    {"upcast_attention", "false"},
    {"standardization_norm", "\"rms_norm\""},
    {"qk_norm", "\"rms_norm\""},
    {"positional_embedding_type", "\"rope\""},
    {"use_audio_video_cross_attention", "true"},
    {"share_ff", "false"},
    {"av_cross_ada_norm", "true"},
    {"use_middle_indices_grid", "true"},
};

/* The V2 text projection's four keys (PARITY C1), written when diffusers has per-modality
 * projections / no prompt embeddings in the DiT. */
static const key_map k_v2_keys[] = {
    {"caption_proj_before_connector", "true"},
    {"caption_projection_first_linear", "false"},
    {"caption_proj_input_norm", "false"},
    {"caption_projection_second_linear", "false"},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

typedef struct cfg_out {
    ltx2_sbuf s;
    bool first;
} cfg_out;

static void put_key(cfg_out *o, const char *key) {
    ltx2_sbuf_append(&o->s, o->first ? "\n  " : ",\n  ", o->first ? 3 : 4);
    o->first = false;
    ltx2_sbuf_json_string(&o->s, key, strlen(key));
    ltx2_sbuf_append(&o->s, ": ", 2);
}
static void put_raw(cfg_out *o, const char *key, const char *json) {
    put_key(o, key);
    ltx2_sbuf_append(&o->s, json, strlen(json));
}
static void put_value(cfg_out *o, const char *key, const ltx2_json *v) {
    put_key(o, key);
    ltx2_sbuf_json_value(&o->s, v);
}

/* A JSON value as compact text (for comparisons). */
static void value_text(const ltx2_json *v, char *buf, size_t cap) {
    ltx2_sbuf s = {0};
    ltx2_sbuf_json_value(&s, v);
    snprintf(buf, cap, "%s", s.buf && !s.oom ? s.buf : "?");
    ltx2_sbuf_free(&s);
}

static ltx2_status check_equal(ltx2_context *ctx, const ltx2_json *o, const char *label, const key_map *t, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const ltx2_json *a = ltx2_json_get(o, t[i].df), *b = ltx2_json_get(o, t[i].lt);
        if (!a || !b) continue;
        char ta[64], tb[64];
        value_text(a, ta, sizeof ta);
        value_text(b, tb, sizeof tb);
        if (strcmp(ta, tb) != 0)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "%s: \"%s\" (%s) and \"%s\" (%s) differ; the LTX-2 single-file model has one setting "
                              "for both",
                              label, t[i].df, ta, t[i].lt, tb);
    }
    return LTX2_OK;
}

static ltx2_status check_required(ltx2_context *ctx, const ltx2_json *o, const char *label, const key_map *t,
                                  size_t n) {
    for (size_t i = 0; i < n; i++) {
        const ltx2_json *v = ltx2_json_get(o, t[i].df);
        if (!v) continue;
        char got[64];
        value_text(v, got, sizeof got);
        if (strcmp(got, t[i].lt) != 0)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: \"%s\" is %s; only %s exists in LTX-2", label, t[i].df,
                              got, t[i].lt);
    }
    return LTX2_OK;
}

static void copy_keys(cfg_out *out, const ltx2_json *o, const key_map *t, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const ltx2_json *v = ltx2_json_get(o, t[i].df);
        if (v) put_value(out, t[i].lt, v);
    }
}

static ltx2_status need_bool(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key, bool *out) {
    const ltx2_json *v = ltx2_json_get(o, key);
    if (!v || v->type != LTX2_JSON_BOOL)
        return LTX2_ERROR(ctx, v ? LTX2_ERR_FORMAT : LTX2_ERR_NOT_FOUND, "%s: \"%s\" must be true or false%s", label,
                          key, v ? "" : " (missing)");
    *out = v->boolean;
    return LTX2_OK;
}

static ltx2_status need_num(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key, double *out) {
    const ltx2_json *v = ltx2_json_get(o, key);
    if (!v || v->type != LTX2_JSON_NUMBER)
        return LTX2_ERROR(ctx, v ? LTX2_ERR_FORMAT : LTX2_ERR_NOT_FOUND, "%s: \"%s\" must be a number%s", label, key,
                          v ? "" : " (missing)");
    *out = v->number;
    return LTX2_OK;
}

/* Writes the Lightricks "transformer" section equivalent to the two diffusers configs (conn may be
 * NULL). Labels name the diffusers files. */
static ltx2_status translate_config(ltx2_context *ctx, const ltx2_json *tr, const char *tr_label,
                                    const ltx2_json *conn, const char *conn_label, cfg_out *out) {
    if (!tr || tr->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: must be a JSON object", tr_label);
    /* diffusers' LTX2VideoTransformer3DModel defaults rope_type to "interleaved" (and
     * rope_double_precision to True); every LTX-2 checkpoint is "split": never default it. */
    if (!ltx2_json_get_str(tr, "rope_type"))
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                          "%s: missing string \"rope_type\" (diffusers would silently use \"interleaved\"; LTX-2 "
                          "checkpoints are \"split\")",
                          tr_label);
    LTX2_TRY(check_required(ctx, tr, tr_label, k_tr_required, N_OF(k_tr_required)));
    LTX2_TRY(check_equal(ctx, tr, tr_label, k_tr_equal, N_OF(k_tr_equal)));
    copy_keys(out, tr, k_tr_keys, N_OF(k_tr_keys));
    for (size_t i = 0; i < N_OF(k_lt_fixed); i++) put_raw(out, k_lt_fixed[i].df, k_lt_fixed[i].lt);

    /* RoPE: rope_double_precision -> frequencies_precision; max positions as lists */
    bool dbl = false;
    LTX2_TRY(need_bool(ctx, tr, tr_label, "rope_double_precision", &dbl));
    put_raw(out, "frequencies_precision", dbl ? "\"float64\"" : "\"float32\"");
    double t = 0, h = 0, w = 0, at = 0;
    LTX2_TRY(need_num(ctx, tr, tr_label, "pos_embed_max_pos", &t));
    LTX2_TRY(need_num(ctx, tr, tr_label, "base_height", &h));
    LTX2_TRY(need_num(ctx, tr, tr_label, "base_width", &w));
    LTX2_TRY(need_num(ctx, tr, tr_label, "audio_pos_embed_max_pos", &at));
    char buf[160];
    snprintf(buf, sizeof buf, "[%.17g, %.17g, %.17g]", t, h, w);
    put_raw(out, "positional_embedding_max_pos", buf);
    snprintf(buf, sizeof buf, "[%.17g]", at);
    put_raw(out, "audio_positional_embedding_max_pos", buf);

    /* Where the caption projection lives: DiT (2.0, use_prompt_embeddings) or text encoder (2.3). */
    bool prompt_emb = true;
    LTX2_TRY(need_bool(ctx, tr, tr_label, "use_prompt_embeddings", &prompt_emb));
    bool v2 = !prompt_emb;
    if (conn) {
        if (conn->type != LTX2_JSON_OBJECT)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: must be a JSON object", conn_label);
        LTX2_TRY(check_required(ctx, conn, conn_label, k_conn_required, N_OF(k_conn_required)));
        LTX2_TRY(check_equal(ctx, conn, conn_label, k_conn_equal, N_OF(k_conn_equal)));
        bool per_mod = false;
        LTX2_TRY(need_bool(ctx, conn, conn_label, "per_modality_projections", &per_mod));
        if (per_mod != v2)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "%s: per_modality_projections is %s but %s has use_prompt_embeddings %s; LTX-2.0 "
                              "projects in the DiT, LTX-2.3 in the text encoder, never both",
                              conn_label, per_mod ? "true" : "false", tr_label, prompt_emb ? "true" : "false");
        /* one rope setting in the single file for the DiT and the connectors */
        const char *keys[2] = {"rope_type", "rope_double_precision"};
        for (int i = 0; i < 2; i++) {
            const ltx2_json *a = ltx2_json_get(tr, keys[i]), *b = ltx2_json_get(conn, keys[i]);
            char ta[64] = "absent", tb[64] = "absent";
            if (a) value_text(a, ta, sizeof ta);
            if (b) value_text(b, tb, sizeof tb);
            if (strcmp(ta, tb) != 0)
                return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                                  "%s: \"%s\" is %s but the transformer's is %s; the LTX-2 config has one value",
                                  conn_label, keys[i], tb, ta);
        }
        copy_keys(out, conn, k_conn_keys, N_OF(k_conn_keys));
        double seq = 0;
        LTX2_TRY(need_num(ctx, conn, conn_label, "connector_rope_base_seq_len", &seq));
        snprintf(buf, sizeof buf, "[%.17g]", seq);
        put_raw(out, "connector_positional_embedding_max_pos", buf);
    }
    if (v2)
        for (size_t i = 0; i < N_OF(k_v2_keys); i++) put_raw(out, k_v2_keys[i].df, k_v2_keys[i].lt);
    return LTX2_OK;
}

/* ---- the view ---- */

struct ltx2_df_view {
    ltx2_st_file file;
    ltx2_st_meta meta[1];
    ltx2_st_set *sets[LTX2_DF_COUNT];
    char *config;
};

const ltx2_st_file *ltx2_df_view_file(const ltx2_df_view *v) { return v ? &v->file : NULL; }
bool ltx2_df_view_has_connectors(const ltx2_df_view *v) { return v && v->sets[LTX2_DF_CONNECTORS]; }
bool ltx2_df_view_has(const ltx2_df_view *v, ltx2_df_component c) {
    return v && (unsigned)c < LTX2_DF_COUNT && v->sets[c];
}
const char *ltx2_df_folder(ltx2_df_component c) {
    static const char *const names[LTX2_DF_COUNT] = {"transformer", "connectors", "vae", "audio_vae", "vocoder"};
    return (unsigned)c < LTX2_DF_COUNT ? names[c] : "?";
}

void ltx2_df_view_close(ltx2_df_view *v) {
    if (!v) return;
    for (size_t i = 0; i < v->file.n_tensors; i++) free((char *)v->file.tensors[i].name);
    free(v->file.tensors);
    free(v->file.path);
    free(v->config);
    for (int c = 0; c < LTX2_DF_COUNT; c++) ltx2_st_set_close(v->sets[c]);
    free(v);
}

static int cmp_tensor(const void *a, const void *b) {
    return strcmp(((const ltx2_st_tensor *)a)->name, ((const ltx2_st_tensor *)b)->name);
}

static char *join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s/%s", a, b);
    return s;
}

bool ltx2_names_is_diffusers_dir(const char *path) {
    if (!path || !ltx2_path_is_dir(path)) return false;
    char *p = join(path, "transformer/config.json");
    bool ok = p && ltx2_path_is_file(p);
    free(p);
    return ok;
}

ltx2_status ltx2_df_view_open(ltx2_context *ctx, const char *dir, ltx2_df_view **out) {
    if (!dir || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "diffusers view: NULL argument");
    *out = NULL;
    if (!ltx2_names_is_diffusers_dir(dir))
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                          "%s: not a diffusers LTX-2 directory (no transformer/config.json)", dir);
    ltx2_df_view *v = calloc(1, sizeof *v);
    if (!v) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "diffusers view");
    ltx2_json_doc *docs[LTX2_DF_COUNT] = {NULL};
    char *labels[LTX2_DF_COUNT] = {NULL}, *sub[LTX2_DF_COUNT] = {NULL};
    cfg_out cfg = {.first = true};
    ltx2_status st = LTX2_OK;
    ltx2_df_vae_map vmap;
    memset(&vmap, 0, sizeof vmap);
    for (int c = 0; c < LTX2_DF_COUNT; c++) {
        const char *name = ltx2_df_folder((ltx2_df_component)c);
        sub[c] = join(dir, name);
        labels[c] = sub[c] ? join(sub[c], "config.json") : NULL;
        if (!sub[c] || !labels[c]) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "diffusers view: paths");
            goto done;
        }
        if (c != LTX2_DF_TRANSFORMER && !ltx2_path_is_file(labels[c])) continue;
        if ((st = ltx2_json_parse_file(ctx, labels[c], &docs[c])) != LTX2_OK) goto done;
        if ((st = ltx2_st_set_open(ctx, sub[c], &v->sets[c])) != LTX2_OK) goto done;
    }
    ltx2_sbuf_append(&cfg.s, "{\"transformer\": {", 17);
    st = translate_config(ctx, ltx2_json_root(docs[0]), labels[0], docs[1] ? ltx2_json_root(docs[1]) : NULL,
                          labels[1], &cfg);
    if (st != LTX2_OK) goto done;
    ltx2_sbuf_append(&cfg.s, "\n}", 2);
    for (int c = LTX2_DF_VAE; c < LTX2_DF_COUNT; c++) {
        if (!docs[c]) continue;
        int64_t conv_in = 0;
        const ltx2_st_tensor *ci = c == LTX2_DF_VAE ? ltx2_st_set_find(v->sets[c], "encoder.conv_in.conv.weight", NULL)
                                                    : NULL;
        if (ci && ci->ndim >= 1) conv_in = ci->shape[0];
        st = ltx2_names_df_section(ctx, (ltx2_df_component)c, ltx2_json_root(docs[c]), labels[c], conv_in, &cfg.s,
                                   c == LTX2_DF_VAE ? &vmap : NULL);
        if (st != LTX2_OK) goto done;
    }
    ltx2_sbuf_append(&cfg.s, "}\n", 2);
    if (cfg.s.oom) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "diffusers view: config");
        goto done;
    }
    v->config = cfg.s.buf;
    cfg.s.buf = NULL;
    v->meta[0].key = "config";
    v->meta[0].value = v->config;
    v->file.meta = v->meta;
    v->file.n_meta = 1;
    v->file.path = malloc(strlen(dir) + 1);
    size_t total = 0;
    for (int c = 0; c < LTX2_DF_COUNT; c++) total += v->sets[c] ? v->sets[c]->n_tensors : 0;
    v->file.tensors = calloc(total ? total : 1, sizeof *v->file.tensors);
    if (!v->file.path || !v->file.tensors) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "diffusers view: %zu tensors", total);
        goto done;
    }
    memcpy(v->file.path, dir, strlen(dir) + 1);
    for (int c = 0; c < LTX2_DF_COUNT; c++) {
        if (!v->sets[c]) continue;
        for (size_t i = 0; i < v->sets[c]->n_tensors; i++) {
            const ltx2_st_tensor *t = v->sets[c]->tensors[i];
            char lt[NAME_CAP];
            const bool ok = c <= LTX2_DF_CONNECTORS
                                ? ltx2_names_df_to_lt((ltx2_df_component)c, t->name, lt, sizeof lt)
                                : ltx2_names_df_vae_to_lt((ltx2_df_component)c, &vmap, t->name, lt, sizeof lt);
            if (!ok) {
                st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s/%s: tensor name %.200s too long", dir,
                                ltx2_df_folder((ltx2_df_component)c), t->name);
                goto done;
            }
            ltx2_st_tensor *d = &v->file.tensors[v->file.n_tensors];
            *d = *t;
            d->name = malloc(strlen(lt) + 1);
            if (!d->name) {
                st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "diffusers view: names");
                goto done;
            }
            memcpy((char *)d->name, lt, strlen(lt) + 1);
            v->file.n_tensors++;
        }
    }
    qsort(v->file.tensors, v->file.n_tensors, sizeof *v->file.tensors, cmp_tensor);
    for (size_t i = 1; i < v->file.n_tensors; i++)
        if (strcmp(v->file.tensors[i - 1].name, v->file.tensors[i].name) == 0) {
            st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: two diffusers tensors map to the same LTX-2 name %s", dir,
                            v->file.tensors[i].name);
            goto done;
        }
done:
    for (int c = 0; c < LTX2_DF_COUNT; c++) {
        ltx2_json_free(docs[c]);
        free(labels[c]);
        free(sub[c]);
    }
    ltx2_sbuf_free(&cfg.s);
    if (st != LTX2_OK) {
        ltx2_df_view_close(v);
        return st;
    }
    *out = v;
    return LTX2_OK;
}
