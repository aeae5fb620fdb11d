/* The public multi-rank API (ltx2.h: ltx2_parallel_params, ltx2_generate_parallel,
 * ltx2_generate_rank, ltx2_model_load_parallel), used as an application would, through the public
 * header only. The tiny LTX-2.0 generation over 2 loopback ranks on context (the default mesh), a
 * data mesh taking its rank count from the mesh text, and FSDP (trillium) equals ltx2_generate bit
 * for bit on the CPU, and rank 0's log names the ranks, mesh and profile that ran (so equal outputs
 * cannot come from one rank alone); one rank is ltx2_generate itself; bad rank counts, meshes and
 * profiles are refused with a message naming the field, before any work (nothing in the result).
 * ltx2_generate_rank refuses a process that is not a rank of a job, a rank count other than the
 * job's and a cuda:N device before any rendezvous. A model handle over 2 ranks (context, and FSDP)
 * gives ltx2_generate's bits on every call; parameters it must refuse (a one-step schedule, a LoRA,
 * the one-rank tpu precision) are refused before its ranks are involved (no reload follows); a call
 * its ranks fail (an image file that does not exist) is reported with the rank's reason, and the
 * next call loads the ranks again and is exact. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ltx2/ltx2.h"
#include "test_util.h"
#include "tiny_gen_params.h"

static void base_params(ltx2_generate_params *p) {
    tiny_gen_params(p, LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-2.0.safetensors");
    p->device = "cpu";
    p->latent_bf16 = 0;
}

static bool bitwise(const ltx2_generate_result *a, const ltx2_generate_result *b) {
    int64_t nvl = 1, nal = 1;
    for (int i = 0; i < 5; i++) nvl *= b->video_latent_shape[i];
    for (int i = 0; i < 4; i++) nal *= b->audio_latent_shape[i];
    const int64_t nv = b->frames * b->height * b->width * 3, na = b->audio_channels * b->audio_samples;
    return a->video && a->audio && a->video_latent && a->audio_latent && a->frames == b->frames &&
           a->audio_samples == b->audio_samples && !memcmp(a->video, b->video, (size_t)nv * sizeof(float)) &&
           !memcmp(a->audio, b->audio, (size_t)na * sizeof(float)) &&
           !memcmp(a->video_latent, b->video_latent, (size_t)nvl * sizeof(float)) &&
           !memcmp(a->audio_latent, b->audio_latent, (size_t)nal * sizeof(float));
}

/* The INFO lines of the running call: rank 0's "generate: N ranks, mesh ..." says what ran. */
#define LOG_CAP 8192
typedef struct log_buf {
    pthread_mutex_t lock; /* every rank thread may warn through it */
    char text[LOG_CAP];
    size_t n;
} log_buf;

static void keep_log(ltx2_log_level level, const char *msg, void *user) {
    (void)level;
    log_buf *b = user;
    const size_t len = strlen(msg);
    pthread_mutex_lock(&b->lock);
    if (b->n + len + 2 <= LOG_CAP) {
        memcpy(b->text + b->n, msg, len);
        b->text[b->n + len] = '\n';
        b->n += len + 1;
        b->text[b->n] = 0;
    }
    pthread_mutex_unlock(&b->lock);
}

static bool empty(const ltx2_generate_result *r) {
    return !r->video && !r->audio && !r->video_latent && !r->audio_latent;
}

/* ranks/mesh/sharding through ltx2_generate_parallel give ref's bits; ran: the log line rank 0
 * writes for them (NULL: one rank, so no such line). */
static void check_equal(ltx2_context *ctx, log_buf *log, const ltx2_generate_params *p, const ltx2_generate_result *ref,
                        int ranks, const char *mesh, const char *sharding, const char *ran) {
    ltx2_parallel_params pp;
    ltx2_parallel_params_init(&pp);
    pp.ranks = ranks;
    pp.mesh = mesh;
    pp.sharding = sharding;
    ltx2_generate_result r;
    log->n = 0, log->text[0] = 0;
    const ltx2_status st = ltx2_generate_parallel(ctx, p, &pp, &r);
    CHECK(ran ? strstr(log->text, ran) != NULL : strstr(log->text, " ranks, mesh ") == NULL,
          "%d ranks, mesh %s: the log does not say '%s' ran:\n%s", ranks, mesh ? mesh : "(default)",
          ran ? ran : "one rank", log->text);
    CHECK(st == LTX2_OK, "%d ranks, mesh %s, sharding %s: %s", ranks, mesh ? mesh : "(default)",
          sharding ? sharding : "(default)", ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        CHECK(bitwise(&r, ref), "%d ranks, mesh %s, sharding %s: outputs differ from ltx2_generate's", ranks,
              mesh ? mesh : "(default)", sharding ? sharding : "(default)");
        printf("ltx2_generate_parallel: ranks %d, mesh %s, sharding %s: bitwise ltx2_generate's\n", ranks,
               mesh ? mesh : "(every rank on context)", sharding ? sharding : "(default)");
    }
    ltx2_generate_result_free(&r);
}

static void check_refused(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_parallel_params *pp,
                          const char *what, const char *needle) {
    ltx2_generate_result r;
    memset(&r, 0xA5, sizeof r); /* the call must clear it */
    const ltx2_status st = ltx2_generate_parallel(ctx, p, pp, &r);
    CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), needle) && empty(&r),
          "%s: status %d, message '%s' (want INVALID_ARG naming '%s', an empty result)", what, (int)st,
          ltx2_last_error(ctx), needle);
    ltx2_clear_error(ctx);
}

/* p: the tiny generation, ref: ltx2_generate's result of it. */
static void check_parallel(ltx2_context *ctx, log_buf *log, const ltx2_generate_params *p,
                           const ltx2_generate_result *ref) {
    check_equal(ctx, log, p, ref, 1, NULL, NULL, NULL);
    check_equal(ctx, log, p, ref, 2, NULL, NULL,
                "generate: 2 ranks, mesh 1,1,2,1 (data, fsdp, context, tensor), sharding gpu");
    check_equal(ctx, log, p, ref, 0, "2,1,1,1", "gpu", "generate: 2 ranks, mesh 2,1,1,1");
    check_equal(ctx, log, p, ref, 2, "1,2,1,1", "trillium",
                "generate: 2 ranks, mesh 1,2,1,1 (data, fsdp, context, tensor), sharding trillium");

    ltx2_parallel_params pp;
    ltx2_parallel_params_init(&pp);
    pp.ranks = 4, pp.mesh = "1,1,2,1";
    check_refused(ctx, p, &pp, "4 ranks on a 2-rank mesh", "has 2 ranks but 4");
    ltx2_parallel_params_init(&pp);
    pp.ranks = 2, pp.mesh = "1,2";
    check_refused(ctx, p, &pp, "a 2-axis mesh", "mesh 1,2");
    ltx2_parallel_params_init(&pp);
    pp.ranks = 2, pp.sharding = "bogus";
    check_refused(ctx, p, &pp, "an unknown profile", "sharding bogus");
    ltx2_parallel_params_init(&pp);
    pp.ranks = -1;
    check_refused(ctx, p, &pp, "-1 ranks", "-1 ranks");
    ltx2_parallel_params_init(&pp);
    pp.threads_per_rank = -2;
    check_refused(ctx, p, &pp, "-2 threads a rank", "-2 threads");
    check_refused(ctx, p, NULL, "NULL parameters", "NULL");
}

static void check_rank(ltx2_context *ctx) {
    ltx2_generate_params p;
    base_params(&p);
    ltx2_generate_result r;
    unsetenv("LTX2_RANK"), unsetenv("LTX2_WORLD_SIZE");
    ltx2_status st = ltx2_generate_rank(ctx, &p, NULL, &r);
    CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), "not a rank of a job") && empty(&r),
          "outside a job: status %d, '%s'", (int)st, ltx2_last_error(ctx));
    ltx2_clear_error(ctx);
    /* a job of 2 (never joined: each refusal comes before the rendezvous) */
    setenv("LTX2_RANK", "0", 1), setenv("LTX2_WORLD_SIZE", "2", 1), setenv("LTX2_LOCAL_RANK", "0", 1);
    setenv("LTX2_RENDEZVOUS", "127.0.0.1:1", 1);
    ltx2_parallel_params pp;
    ltx2_parallel_params_init(&pp);
    pp.ranks = 3;
    st = ltx2_generate_rank(ctx, &p, &pp, &r);
    CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), "3 ranks asked for, LTX2_WORLD_SIZE is 2") &&
          empty(&r), "3 ranks in a job of 2: status %d, '%s'", (int)st, ltx2_last_error(ctx));
    ltx2_clear_error(ctx);
    pp.ranks = 2, pp.mesh = "1,1,1,4";
    st = ltx2_generate_rank(ctx, &p, &pp, &r);
    CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), "has 4 ranks but 2") && empty(&r),
          "a 4-rank mesh in a job of 2: status %d, '%s'", (int)st, ltx2_last_error(ctx));
    ltx2_clear_error(ctx);
    p.device = "cuda:0";
    st = ltx2_generate_rank(ctx, &p, NULL, &r);
    CHECK(st != LTX2_OK && strstr(ltx2_last_error(ctx), "cuda:0") && empty(&r), "cuda:0 in a job: status %d, '%s'",
          (int)st, ltx2_last_error(ctx));
    ltx2_clear_error(ctx);
    unsetenv("LTX2_RANK"), unsetenv("LTX2_WORLD_SIZE"), unsetenv("LTX2_LOCAL_RANK"), unsetenv("LTX2_RENDEZVOUS");
}

/* Runs p on the handle; returns whether its result is ref's bits (false also when it failed). */
static bool handle_call(ltx2_context *ctx, ltx2_model *m, const ltx2_generate_params *p, const ltx2_generate_result *ref,
                        const char *what) {
    ltx2_generate_result r;
    const ltx2_status st = ltx2_generate_model(ctx, m, p, &r);
    CHECK(st == LTX2_OK, "%s: %s", what, ltx2_last_error(ctx));
    const bool same = st == LTX2_OK && bitwise(&r, ref);
    CHECK(st != LTX2_OK || same, "%s: outputs differ from ltx2_generate's", what);
    ltx2_generate_result_free(&r);
    return same;
}

static void check_handle(ltx2_context *ctx, log_buf *log, const ltx2_generate_params *ref_p,
                         const ltx2_generate_result *ref, const char *mesh, const char *sharding) {
    ltx2_generate_params p = *ref_p;
    ltx2_parallel_params pp;
    ltx2_parallel_params_init(&pp);
    pp.ranks = 2, pp.mesh = mesh, pp.sharding = sharding;
    const char *ck = p.checkpoint;
    ltx2_model *m = NULL;
    if (ltx2_model_load_parallel(ctx, &ck, 1, "cpu", NULL, &pp, &m) != LTX2_OK) {
        CHECK(0, "handle over mesh %s: %s", mesh, ltx2_last_error(ctx));
        return;
    }
    char what[96];
    snprintf(what, sizeof what, "handle over mesh %s %s", mesh, sharding);
    p.checkpoint = NULL; /* the handle's */
    log->n = 0, log->text[0] = 0;
    bool ok = handle_call(ctx, m, &p, ref, what) && handle_call(ctx, m, &p, ref, what);
    char ran[96];
    snprintf(ran, sizeof ran, "generate: 2 ranks, mesh %s", mesh);
    CHECK(strstr(log->text, ran) != NULL, "%s: the log does not say '%s' ran:\n%s", what, ran, log->text);

    /* refused before the ranks (no reload at the next call): a one-step schedule, a LoRA (fused at
     * load), MaxDiffusion's one-rank precision */
    const ltx2_lora_spec lora = {LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-lora-style-2.0.safetensors", 0.8};
    ltx2_generate_params bad[3] = {p, p, p};
    bad[0].steps = 1;
    bad[1].loras = &lora, bad[1].n_loras = 1;
    bad[2].precision = LTX2_GENERATE_PRECISION_TPU;
    static const ltx2_status want[3] = {LTX2_ERR_INVALID_ARG, LTX2_ERR_UNSUPPORTED, LTX2_ERR_UNSUPPORTED};
    static const char *const why[3] = {"steps 1", "a LoRA", "precision tpu"};
    ltx2_generate_result r;
    for (int i = 0; i < 3; i++) {
        const ltx2_status st = ltx2_generate_model(ctx, m, &bad[i], &r);
        CHECK(st == want[i] && empty(&r), "%s: %s: status %d, '%s'", what, why[i], (int)st, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }
    ok = handle_call(ctx, m, &p, ref, what) && ok;
    CHECK(!strstr(log->text, "loading its 2 ranks again"), "%s: reloaded after refused calls:\n%s", what, log->text);
    /* failed by the ranks (each opens the image): the rank's reason, then a reload and exact again */
    const ltx2_image_cond img = {LTX2_SOURCE_DIR "/tests/golden/data/no-such-image.png", 0, 1.0, 0};
    ltx2_generate_params missing = p;
    missing.images = &img, missing.n_images = 1;
    const ltx2_status st = ltx2_generate_model(ctx, m, &missing, &r);
    CHECK(st != LTX2_OK && strstr(ltx2_last_error(ctx), "no-such-image") && empty(&r),
          "%s: a missing image: status %d, '%s'", what, (int)st, ltx2_last_error(ctx));
    ltx2_clear_error(ctx);
    ok = handle_call(ctx, m, &p, ref, what) && ok;
    CHECK(strstr(log->text, "loading its 2 ranks again") != NULL, "%s: no reload after the ranks' failure", what);
    if (ok) printf("%s: 4 calls bitwise ltx2_generate's (the last after the ranks' reload)\n", what);
    ltx2_model_free(m);
}

int main(void) {
    static log_buf log = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ltx2_context_params cp;
    ltx2_context_params_init(&cp);
    cp.log_level = LTX2_LOG_INFO;
    cp.log_fn = keep_log;
    cp.log_user = &log;
    ltx2_context *ctx = ltx2_context_create(&cp);
    if (!ctx) return 1;
    ltx2_generate_params p;
    base_params(&p);
    ltx2_generate_result ref;
    if (ltx2_generate(ctx, &p, &ref) == LTX2_OK) {
        check_parallel(ctx, &log, &p, &ref);
        check_handle(ctx, &log, &p, &ref, "1,1,2,1", "gpu");
        check_handle(ctx, &log, &p, &ref, "1,2,1,1", "trillium");
        ltx2_generate_result_free(&ref);
    } else {
        CHECK(0, "ltx2_generate: %s", ltx2_last_error(ctx));
    }
    check_rank(ctx);
    ltx2_context_free(ctx);
    return test_finish();
}
