/* The video VAE decoder's and encoder's and the audio VAE decoder's one forwards through the CUDA
 * kernels run by the CPU emulator (tests/emu/) against the CPU reference (vae_device_check.h,
 * vae_enc_check.h, audio_vae_check.h, upsampler_check.h, vocoder_check.h): what `--device cuda` decodes and encodes, without a GPU. The decoders on a 2 x 2 x 2 latent (9 frames
 * of 64 x 64 for the tiny checkpoints) rather than the golden one: the comparison is with the
 * reference on the same latent, and it keeps the emulated decode (and its ThreadSanitizer run in
 * CI) short. */
#include "backend_emu.h"
#include "audio_vae_check.h"
#include "upsampler_check.h"
#include "vae_enc_check.h"
#include "vocoder_check.h"

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    if (!g_ctx) return 1;
    dec_case cases[3];
    vae_cases_load(cases, true);
    ltx2_backend *emu = NULL;
    CHECK(ltx2_backend_emu_create(g_ctx, &emu) == LTX2_OK, "emu backend: %s", ltx2_last_error(g_ctx));
    if (emu) {
        const be_case bc = {.be = emu, .f32 = false};
        run_backend(&bc, cases, 3);
        enc_case ec[3];
        const int ne = enc_cases_load(ec, true);
        for (int k = 0; k < ne; k++) {
            enc_check(&bc, &ec[k]);
            enc_case_free(&ec[k]);
        }
        audio_case ac[2];
        audio_cases_load(ac);
        for (int k = 0; k < 2; k++) {
            audio_check(&bc, &ac[k]);
            audio_case_free(&ac[k]);
        }
        audio_enc_case aec[2];
        audio_enc_cases_load(aec);
        for (int k = 0; k < 2; k++) {
            audio_enc_check(&bc, &aec[k]);
            audio_enc_case_free(&aec[k]);
        }
        ups_case uc[UPS_KINDS];
        ups_cases_load(uc);
        for (int k = 0; k < UPS_KINDS; k++) {
            ups_check(&bc, &uc[k]);
            ups_case_free(&uc[k]);
        }
        voc_case vc[2];
        voc_cases_load(vc);
        for (int k = 0; k < 2; k++) {
            voc_check(&bc, &vc[k]);
            voc_case_free(&vc[k]);
        }
    }
    ltx2_backend_free(emu);
    for (int k = 0; k < 3; k++) dec_case_free(&cases[k]);
    ltx2_context_free(g_ctx);
    return test_finish();
}
