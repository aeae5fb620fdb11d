/* The distributed DiT "on paper" (src/model/DIT_PARALLEL.md): per block and per denoising step, the bytes
 * each rank sends through the collectives src/model/dit_parallel.c issues, the time they take at
 * NVLink and InfiniBand bandwidths, the compute time, and the predicted scaling efficiency, for
 * LTX-2 19B (spec distributed_perf_anchors.md section 1.1) at 768x512x121 and 1920x1088x121 on 8
 * and 64 GPUs. Pure arithmetic: nothing is measured; the numbers are reproducible by rerunning.
 * --fsdp prints the FSDP table instead: the per-block weight all-gather of profile trillium.
 * Usage: bench_dist_model [--fsdp] (prints a markdown table). */
#include <stdio.h>
#include <string.h>

/* LTX-2 19B transformer (spec 1.1). */
#define L_LAYERS 48
#define H_HEADS 32
#define D_VIDEO 4096
#define D_AUDIO 2048
#define FFN_MULT 4
#define S_TEXT 1024
#define S_AUDIO 126
#define BF16_BYTES 2
/* Hardware (spec 1.6 / 3.1): measured dense bf16 GEMM on an H100 SXM, NVLink4 per direction per
 * GPU, and one NDR InfiniBand port (400 Gb/s) per GPU as on DGX H100 nodes of 8 GPUs. */
#define GEMM_FLOPS 798e12
#define NVLINK_BPS 450e9
#define IB_BPS 50e9
#define GPUS_PER_NODE 8

typedef struct res { const char *name; int w, h, frames; } res;
typedef struct mesh { int gpus, data, ctx, tp; } mesh;

static double video_tokens(const res *r) { return (double)((r->frames - 1) / 8 + 1) * (r->h / 32) * (r->w / 32); }

/* FLOPs of one block for one batch element with S video tokens (2 per multiply-add): the video
 * part scales with S (split over context x tensor), the audio part is replicated over context. */
static void block_flops(double S, double *video, double *audio) {
    const double D = D_VIDEO, Da = D_AUDIO, Sa = S_AUDIO, St = S_TEXT, F = FFN_MULT;
    *video = 4 * 2 * S * D * D          /* self-attention Q K V O */
             + 2 * 2 * S * S * D        /* QK^T and PV */
             + 2 * 2 * S * D * D        /* text cross-attention Q, O */
             + 2 * 2 * S * St * D       /* its core */
             + 2 * 2 * S * D * F * D    /* FFN */
             + 2 * 2 * S * D * Da       /* a2v Q, O */
             + 2 * 2 * S * Sa * Da      /* a2v core */
             + 2 * 2 * S * D * Da       /* v2a K, V from video */
             + 2 * 2 * Sa * S * Da;     /* v2a core */
    *audio = 2 * 2 * St * D * D         /* text K/V (cacheable) */
             + 4 * 2 * Sa * Da * Da + 2 * 2 * Sa * Sa * Da + 2 * 2 * Sa * Da * Da + 2 * 2 * St * Da * Da +
             2 * 2 * Sa * Da * F * Da + 2 * 2 * Sa * Da * Da + 2 * 2 * Sa * Da * Da;
}

/* Seconds to move `bytes` out of each rank of a group of g ranks laid out with stride s in the
 * rank order (tensor fastest): peers on the same node go over NVLink, the rest over InfiniBand,
 * both at once. */
static double link_time(double bytes, int g, int s) {
    if (g <= 1) return 0;
    int on_node = GPUS_PER_NODE / s;
    if (on_node < 1) on_node = 1;
    if (on_node > g) on_node = g;
    const double f_off = (double)(g - on_node) / (g - 1);
    const double t_nv = bytes * (1 - f_off) / NVLINK_BPS, t_ib = bytes * f_off / IB_BPS;
    return t_nv > t_ib ? t_nv : t_ib;
}

/* Block layer parameters of LTX-2.0 19B: `embed` carries the ones with a model-width dim (every
 * matrix, the to_out.0 and net.2 biases: FSDP-sharded under trillium), `other` the rest (Q/K/V
 * and net.0 biases, QK-norm scales: split by tensor only). a2v / v2a run at the audio width. */
static void block_weight_params(double *embed, double *other) {
    const double D = D_VIDEO, Da = D_AUDIO, F = FFN_MULT;
    /* attention with query width q, key/value source width kv, inner width i, output width q */
    #define ATTN(q, kv, i) (e += (q) * (i) + 2 * (kv) * (i) + (i) * (q) + (q), o += 3 * (i) + 2 * (i))
    double e = 0, o = 0;
    ATTN(D, D, D);    /* attn1: video self */
    ATTN(D, D, D);    /* attn2: video <- text (caption projected to D) */
    ATTN(Da, Da, Da); /* audio_attn1 */
    ATTN(Da, Da, Da); /* audio_attn2 */
    /* audio_to_video_attn: video queries (D -> Da), audio keys / values, out to D */
    e += D * Da + 2 * Da * Da + Da * D + D, o += 3 * Da + 2 * Da;
    /* video_to_audio_attn: audio queries, video keys / values (D -> Da), out to Da */
    e += Da * Da + 2 * D * Da + Da * Da + Da, o += 3 * Da + 2 * Da;
    #undef ATTN
    e += 2 * F * D * D + D + 2 * F * Da * Da + Da, o += F * D + F * Da; /* ff, audio_ff */
    *embed = e, *other = o;
}

/* The FSDP table: per-block all-gather of the embed-carrying weights over G = context x fsdp. */
static void fsdp_table(void) {
    double e, o;
    block_weight_params(&e, &o);
    printf("LTX-2 19B block layer parameters: %.1f M (%.1f M carry `embed`, %.1f M do not)\n\n", (e + o) / 1e6, e / 1e6,
           o / 1e6);
    printf("| mesh G (c x f), t | MiB per rank per block (bf16) | GiB per rank per step (%d blocks) | ms per block NVLink / IB "
           "| resident block weights per rank (GB) | without FSDP (GB) |\n|---|---|---|---|---|---|\n",
           L_LAYERS);
    const int gt[][2] = {{2, 1}, {4, 1}, {8, 1}, {4, 2}, {2, 4}, {8, 8}};
    for (size_t k = 0; k < sizeof gt / sizeof gt[0]; k++) {
        const int G = gt[k][0], t = gt[k][1];
        const double shard = e / t * BF16_BYTES, send = shard * (G - 1) / G;
        const double resident = (shard / G + o / t * BF16_BYTES) * L_LAYERS, full = (e + o) / t * BF16_BYTES * L_LAYERS;
        printf("| %d, %d | %.1f | %.1f | %.2f / %.1f | %.2f | %.2f |\n", G, t, send / 1048576.0,
               send * L_LAYERS / 1073741824.0, send / NVLINK_BPS * 1e3, send / IB_BPS * 1e3, resident / 1e9, full / 1e9);
    }
    printf("\nAn all-gather over G ranks moves (G - 1) / G of the gathered buffer out of each rank; the whole "
           "group inside one node (NVLink) or spread one rank per node (InfiniBand).\n");
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--fsdp")) {
        fsdp_table();
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: bench_dist_model [--fsdp]\n");
        return 2;
    }
    const res rs[2] = {{"768x512x121", 768, 512, 121}, {"1920x1088x121", 1920, 1088, 121}};
    const mesh ms[] = {{8, 1, 8, 1}, {8, 2, 4, 1}, {8, 2, 1, 4}, {64, 2, 32, 1}, {64, 2, 8, 4}, {64, 2, 4, 8}};
    const int B = 2; /* CFG: two branches per step */
    printf("| video | GPUs | mesh d,c,t | B/rank | S | MiB/rank/block (SP a2a + v2a gather + TP reduce) | comm ms/block "
           "| compute ms/block | step s (no overlap) | step s (1 GPU) | efficiency no overlap | with full overlap |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
            const mesh *m = &ms[k];
            const double S = video_tokens(&rs[i]);
            const int c = m->ctx, t = m->tp, bl = (B + m->data - 1) / m->data;
            const double Sl = S / c; /* padded tokens per context rank, ignoring the < c rounding */
            double fv, fa;
            block_flops(S, &fv, &fa);
            /* Ulysses: 4 all-to-alls of [S/c, D/t] per element, (c-1)/c of each leaves the rank */
            const double sp = c > 1 ? 4.0 * Sl * (D_VIDEO / t) * BF16_BYTES * (c - 1) / c : 0;
            /* v2a: all-gather video K and V [S/c, Da/t]: (c-1) chunks of each leave the rank */
            const double v2a = c > 1 ? 2.0 * Sl * (D_AUDIO / t) * BF16_BYTES * (c - 1) : 0;
            /* tensor: 4 row-parallel all-reduces of [S/c, D] (ring: 2(t-1)/t of the buffer) + audio's 4 of [Sa, Da] */
            const double tp = t > 1 ? (4.0 * Sl * D_VIDEO + 4.0 * S_AUDIO * D_AUDIO) * BF16_BYTES * 2.0 * (t - 1) / t : 0;
            const double bytes = bl * (sp + v2a + tp);
            const double t_comm = bl * (link_time(sp + v2a, c, t) + link_time(tp, t, 1));
            const double t_comp = bl * (fv / (c * t) + fa / t) / GEMM_FLOPS;
            const double step = L_LAYERS * (t_comm + t_comp), one = L_LAYERS * B * (fv + fa) / GEMM_FLOPS;
            const double ov = L_LAYERS * (t_comm > t_comp ? t_comm : t_comp);
            printf("| %s | %d | %d,%d,%d | %d | %.0f | %.1f | %.3f | %.3f | %.3f | %.2f | %.0f%% | %.0f%% |\n", rs[i].name,
                   m->gpus, m->data, c, t, bl, S, bytes / 1048576.0, t_comm * 1e3, t_comp * 1e3, step, one,
                   100.0 * one / (m->gpus * step), 100.0 * one / (m->gpus * ov));
        }
    printf("\nAssumptions: bf16 activations; %.0f TFLOP/s per GPU (measured H100 GEMM); NVLink %.0f GB/s and "
           "InfiniBand %.0f GB/s per direction per GPU; %d GPUs per node, tensor ranks fastest, then context; "
           "no compute/communication overlap unless stated; text K/V not cached.\n",
           GEMM_FLOPS / 1e12, NVLINK_BPS / 1e9, IB_BPS / 1e9, GPUS_PER_NODE);
    return 0;
}
