/* The video VAE decoder and encoder and the audio VAE decoder on the CPU backend (the video decoder
 * through the block-alone entry too), on a CPU backend that rounds every op output to bf16 (the
 * cosine floor without a GPU), and on CUDA (vae_device_check.h, vae_enc_check.h,
 * audio_vae_check.h, upsampler_check.h), and the vocoders (vocoder_check.h).
 * Without a CUDA build or device the CUDA run prints why and the test exits 77 once the CPU runs
 * have passed. */
#include "audio_vae_check.h"
#include "upsampler_check.h"
#include "vae_enc_check.h"
#include "vocoder_check.h"

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    if (!g_ctx) return 1;
    dec_case cases[3];
    vae_cases_load(cases, false);
    enc_case ec[3];
    const int ne = enc_cases_load(ec, true);
    audio_case ac[2];
    audio_cases_load(ac);
    ups_case uc[UPS_KINDS];
    ups_cases_load(uc);
    audio_enc_case aec[2];
    audio_enc_cases_load(aec);
    voc_case vc[2];
    voc_cases_load(vc);
    if (cases[0].dec && cases[0].ref_video) {
        bad_calls(&cases[0]);
        refused_op(&cases[0]);
    }

    const be_case cpu = {.be = ltx2_backend_cpu(), .f32 = true};
    run_backend(&cpu, cases, 3);
    for (int k = 0; k < ne; k++) enc_check(&cpu, &ec[k]);
    for (int k = 0; k < 2; k++) audio_check(&cpu, &ac[k]);
    for (int k = 0; k < UPS_KINDS; k++) ups_check(&cpu, &uc[k]);
    for (int k = 0; k < 2; k++) audio_enc_check(&cpu, &aec[k]);
    for (int k = 0; k < 2; k++) voc_check(&cpu, &vc[k]);
    const ltx2_backend em = bf16_backend();
    const be_case cpu_bf16 = {.be = &em, .emulate = true};
    run_backend(&cpu_bf16, cases, 3);
    for (int k = 0; k < ne; k++) enc_check(&cpu_bf16, &ec[k]);
    for (int k = 0; k < 2; k++) audio_check(&cpu_bf16, &ac[k]);
    for (int k = 0; k < UPS_KINDS; k++) ups_check(&cpu_bf16, &uc[k]);
    for (int k = 0; k < 2; k++) audio_enc_check(&cpu_bf16, &aec[k]);

    ltx2_backend *cuda = NULL;
    int rc;
    if (ltx2_backend_cuda_create(g_ctx, 0, &cuda) != LTX2_OK) {
        printf("CUDA half skipped: no CUDA backend (%s)\n", ltx2_last_error(g_ctx));
        rc = test_finish();
        if (rc == 0) rc = TEST_SKIP_CODE; /* the CPU-backend half passed; the device half did not run */
    } else {
        const be_case cu = {.be = cuda, .f32 = false};
        run_backend(&cu, cases, 3);
        for (int k = 0; k < ne; k++) enc_check(&cu, &ec[k]);
        for (int k = 0; k < 2; k++) audio_check(&cu, &ac[k]);
        for (int k = 0; k < UPS_KINDS; k++) ups_check(&cu, &uc[k]);
        for (int k = 0; k < 2; k++) audio_enc_check(&cu, &aec[k]);
        for (int k = 0; k < 2; k++) voc_check(&cu, &vc[k]);
        ltx2_backend_free(cuda);
        rc = test_finish();
    }
    for (int k = 0; k < 3; k++) dec_case_free(&cases[k]);
    for (int k = 0; k < ne; k++) enc_case_free(&ec[k]);
    for (int k = 0; k < 2; k++) audio_case_free(&ac[k]);
    for (int k = 0; k < UPS_KINDS; k++) ups_case_free(&uc[k]);
    for (int k = 0; k < 2; k++) audio_enc_case_free(&aec[k]);
    for (int k = 0; k < 2; k++) voc_case_free(&vc[k]);
    ltx2_context_free(g_ctx);
    return rc;
}
